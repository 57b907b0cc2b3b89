// Activation modules: each forwards to the op of the same name in ops/activation.cpp.
#include "weft/nn/activation.h"

#include <utility>

#include "weft/error.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft::nn {

namespace {
// torch.nn.functional._get_softmax_dim: the legacy choice when no dim is given.
std::int64_t softmax_dim(std::optional<std::int64_t> dim, const Tensor& input) {
  if (dim) return *dim;
  const std::int64_t rank = input.dim();
  return (rank == 0 || rank == 1 || rank == 3) ? 0 : 1;
}
}  // namespace

Tensor ReLU::forward(const Tensor& input) {
  return relu(input);
}

Tensor Sigmoid::forward(const Tensor& input) {
  return sigmoid(input);
}

Tensor Tanh::forward(const Tensor& input) {
  return tanh(input);
}

Tensor LeakyReLU::forward(const Tensor& input) {
  return leaky_relu(input, negative_slope);
}

Tensor RReLU::forward(const Tensor& input) {
  return rrelu(input, lower, upper, is_training(),
               is_training() ? default_generator().engine()() : 0);
}

GELU::GELU(std::string approximate_) : approximate(std::move(approximate_)) {
  if (approximate != "none" && approximate != "tanh") {
    throw Error("approximate argument must be either none or tanh, got '" + approximate + "'");
  }
}

Tensor GELU::forward(const Tensor& input) {
  return gelu(input, approximate);
}

Tensor SiLU::forward(const Tensor& input) {
  return silu(input);
}

Tensor ELU::forward(const Tensor& input) {
  return elu(input, alpha);
}

Tensor Softplus::forward(const Tensor& input) {
  return softplus(input, beta, threshold);
}

Tensor Softmax::forward(const Tensor& input) {
  return softmax(input, softmax_dim(dim, input));
}

Tensor LogSoftmax::forward(const Tensor& input) {
  return log_softmax(input, softmax_dim(dim, input));
}

Tensor Identity::forward(const Tensor& input) {
  return input;
}

}  // namespace weft::nn
