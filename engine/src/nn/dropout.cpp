// The dropout modules: the ops are deterministic given a seed, so each module supplies a fresh
// one from the default generator on every training call.
#include "weft/nn/dropout.h"

#include <sstream>
#include <string>

#include "weft/error.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft::nn {

namespace {

double checked_probability(double p) {
  if (!(p >= 0.0 && p <= 1.0)) {
    std::ostringstream message;
    message << "dropout probability has to be between 0 and 1, but got " << p;
    throw Error(message.str());
  }
  return p;
}

std::uint64_t fresh_seed() {
  return default_generator().engine()();
}

}  // namespace

Dropout::Dropout(double p_) : p(checked_probability(p_)) {}

Tensor Dropout::forward(const Tensor& input) {
  if (!is_training()) return dropout(input, p, false, 0);
  return dropout(input, p, true, fresh_seed());
}

FeatureDropout::FeatureDropout(double p_, int rank, const char* name)
    : p(checked_probability(p_)), rank_(rank), name_(name) {}

Tensor FeatureDropout::forward(const Tensor& input) {
  const std::int64_t rank = input.dim();
  if (rank != rank_ && rank != rank_ - 1) {
    std::ostringstream message;
    message << name_ << ": Expected " << rank_ - 1 << "D or " << rank_ << "D input, but received a "
            << rank << "D input";
    throw Error(message.str());
  }
  if (!is_training()) return input;
  // An unbatched input (C, *) drops per channel: as a batch of one.
  if (rank == rank_ - 1) {
    return feature_dropout(input.unsqueeze(0), p, true, fresh_seed()).squeeze({0});
  }
  return feature_dropout(input, p, true, fresh_seed());
}

AlphaDropout::AlphaDropout(double p_) : p(checked_probability(p_)) {}

Tensor AlphaDropout::forward(const Tensor& input) {
  return alpha_dropout(input, p, is_training(), is_training() ? fresh_seed() : 0);
}

FeatureAlphaDropout::FeatureAlphaDropout(double p_) : p(checked_probability(p_)) {}

Tensor FeatureAlphaDropout::forward(const Tensor& input) {
  return feature_alpha_dropout(input, p, is_training(), is_training() ? fresh_seed() : 0);
}

}  // namespace weft::nn
