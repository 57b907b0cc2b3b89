// nn::Dropout: the op is deterministic given a seed, so the module supplies a fresh one from the
// default generator on every training call.
#include "weft/nn/dropout.h"

#include <sstream>

#include "weft/error.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft::nn {

Dropout::Dropout(double p_) : p(p_) {
  if (!(p >= 0.0 && p <= 1.0)) {
    std::ostringstream message;
    message << "dropout probability has to be between 0 and 1, but got " << p;
    throw Error(message.str());
  }
}

Tensor Dropout::forward(const Tensor& input) {
  if (!is_training()) return dropout(input, p, false, 0);
  return dropout(input, p, true, default_generator().engine()());
}

}  // namespace weft::nn
