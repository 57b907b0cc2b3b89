// Activation modules: each forwards to the op of the same name in ops/activation.cpp.
#include "weft/nn/activation.h"

#include "weft/ops.h"

namespace weft::nn {

Tensor ReLU::forward(const Tensor& input) {
  return relu(input);
}

Tensor Sigmoid::forward(const Tensor& input) {
  return sigmoid(input);
}

Tensor Tanh::forward(const Tensor& input) {
  return tanh(input);
}

}  // namespace weft::nn
