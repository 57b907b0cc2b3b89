#pragma once
// Parameter initialisation (torch.nn.init): in-place fills under no-grad that draw from weft's
// default generator, with PyTorch's gains, fan computation, defaults and error messages.
// Each takes the tensor by handle (it shares storage) and returns it, as LibTorch's do.

#include <optional>
#include <string>
#include <utility>

#include "weft/tensor.h"

namespace weft::nn::init {

// The recommended gain for a nonlinearity: "linear", "conv1d"…, "sigmoid" → 1, "tanh" → 5/3,
// "relu" → √2, "leaky_relu" → √(2 / (1 + slope²)) with slope = param or 0.01, "selu" → 3/4.
double calculate_gain(const std::string& nonlinearity, std::optional<double> param = std::nullopt);
// {fan_in, fan_out} = {size(1), size(0)} × the receptive field (product of dims 2…).
std::pair<std::int64_t, std::int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);

Tensor uniform_(Tensor tensor, double a = 0.0, double b = 1.0);
Tensor normal_(Tensor tensor, double mean = 0.0, double std = 1.0);
// N(mean, std²) conditioned on [a, b] (by inverse CDF, as PyTorch).
Tensor trunc_normal_(Tensor tensor, double mean = 0.0, double std = 1.0, double a = -2.0,
                     double b = 2.0);
Tensor constant_(Tensor tensor, double val);
Tensor ones_(Tensor tensor);
Tensor zeros_(Tensor tensor);
Tensor eye_(Tensor tensor);  // 2-D only
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
Tensor xavier_normal_(Tensor tensor, double gain = 1.0);
// U(-bound, bound) with bound = gain·√(3 / fan); `a` is the leaky_relu slope.
Tensor kaiming_uniform_(Tensor tensor, double a = 0.0, const std::string& mode = "fan_in",
                        const std::string& nonlinearity = "leaky_relu");
Tensor kaiming_normal_(Tensor tensor, double a = 0.0, const std::string& mode = "fan_in",
                       const std::string& nonlinearity = "leaky_relu");
// A (semi-)orthogonal matrix from the QR decomposition of a normal sample, scaled by gain;
// tensors with more than 2 dims are treated as [size(0), numel / size(0)].
Tensor orthogonal_(Tensor tensor, double gain = 1.0);

}  // namespace weft::nn::init
