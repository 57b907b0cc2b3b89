// nn::Linear. Initialisation matches torch.nn.Linear.reset_parameters: kaiming_uniform_ with
// a = sqrt(5) gives bound = gain·sqrt(3 / fan_in) = sqrt(2 / 6)·sqrt(3 / fan_in) = 1/sqrt(fan_in).
#include "weft/nn/linear.h"

#include <cmath>
#include <string>

#include "weft/error.h"
#include "weft/nn/init.h"
#include "weft/ops.h"

namespace weft::nn {

Linear::Linear(std::int64_t in, std::int64_t out, bool with_bias)
    : in_features(in), out_features(out) {
  if (in < 0 || out < 0) {
    throw Error("Linear: in_features and out_features must be non-negative, got in_features=" +
                std::to_string(in) + ", out_features=" + std::to_string(out));
  }
  weight = register_parameter("weight", empty({out, in}));
  if (with_bias) bias = register_parameter("bias", empty({out}));
  reset_parameters();
}

void Linear::reset_parameters() {
  // Weight first, then bias: the same draw order as PyTorch.
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  const double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
  if (bias.defined()) init::uniform_(bias, -bound, bound);
}

Tensor Linear::forward(const Tensor& input) {
  return linear(input, weight, bias);
}

}  // namespace weft::nn
