// torch.nn.init, following torch/nn/init.py (1.13) function by function. The random fills
// delegate to weft::uniform_ / weft::normal_ so every draw comes from the default generator.
#include "weft/nn/init.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft::nn::init {

namespace {

std::int64_t correct_fan(const Tensor& tensor, const std::string& mode) {
  if (mode != "fan_in" && mode != "fan_out") {
    throw Error("Mode " + mode + " not supported, please use one of fan_in, fan_out");
  }
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return mode == "fan_in" ? fan_in : fan_out;
}

double kaiming_std(const Tensor& tensor, double a, const std::string& mode,
                   const std::string& nonlinearity) {
  const std::int64_t fan = correct_fan(tensor, mode);
  return calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan));
}

double xavier_std(const Tensor& tensor, double gain) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
}

// Inverse of erf on (-1, 1): Winitzki's closed-form guess (error ~1e-3) refined by Newton
// steps on std::erf.
double erfinv(double y) {
  if (y <= -1.0) return -HUGE_VAL;
  if (y >= 1.0) return HUGE_VAL;
  const double a = 0.147;
  const double ln = std::log((1.0 - y) * (1.0 + y));
  const double t = 2.0 / (M_PI * a) + ln / 2.0;
  double x = std::copysign(std::sqrt(std::sqrt(t * t - ln / a) - t), y);
  for (int i = 0; i < 8; ++i) {
    x -= (std::erf(x) - y) / (2.0 / std::sqrt(M_PI) * std::exp(-x * x));
  }
  return x;
}

// Overwrites `tensor` with `values` (row-major), converting to its dtype.
void assign(Tensor& tensor, const std::vector<double>& values) {
  tensor.copy_(
      weft::tensor(values, {static_cast<std::int64_t>(values.size())}).reshape(tensor.sizes()));
}

}  // namespace

double calculate_gain(const std::string& nonlinearity, std::optional<double> param) {
  static const char* const kLinear[] = {"linear",          "conv1d",           "conv2d",
                                        "conv3d",          "conv_transpose1d", "conv_transpose2d",
                                        "conv_transpose3d"};
  for (const char* name : kLinear) {
    if (nonlinearity == name) return 1.0;
  }
  if (nonlinearity == "sigmoid") return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") {
    const double slope = param.value_or(0.01);
    return std::sqrt(2.0 / (1.0 + slope * slope));
  }
  if (nonlinearity == "selu") return 3.0 / 4.0;
  throw Error("Unsupported nonlinearity " + nonlinearity);
}

std::pair<std::int64_t, std::int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  if (tensor.dim() < 2) {
    throw Error("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  }
  std::int64_t receptive_field = 1;
  for (std::int64_t d = 2; d < tensor.dim(); ++d) receptive_field *= tensor.size(d);
  return {tensor.size(1) * receptive_field, tensor.size(0) * receptive_field};
}

Tensor uniform_(Tensor tensor, double a, double b) {
  autograd::NoGradGuard no_grad;
  weft::uniform_(tensor, a, b);
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std) {
  autograd::NoGradGuard no_grad;
  weft::normal_(tensor, mean, std);
  return tensor;
}

Tensor trunc_normal_(Tensor tensor, double mean, double std, double a, double b) {
  autograd::NoGradGuard no_grad;
  // Uniform on [2l-1, 2u-1] pushed through the inverse normal CDF (torch's method).
  const auto norm_cdf = [](double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; };
  const double l = norm_cdf((a - mean) / std);
  const double u = norm_cdf((b - mean) / std);
  Tensor draws = weft::empty(tensor.sizes(), dtype(Dtype::Float64));
  weft::uniform_(draws, 2 * l - 1, 2 * u - 1);
  std::vector<double> values = draws.to_vector<double>();
  for (double& v : values) {
    v = std::clamp(erfinv(v) * std * std::sqrt(2.0) + mean, a, b);
  }
  assign(tensor, values);
  return tensor;
}

Tensor constant_(Tensor tensor, double val) {
  autograd::NoGradGuard no_grad;
  tensor.fill_(val);
  return tensor;
}

Tensor ones_(Tensor tensor) {
  return constant_(std::move(tensor), 1.0);
}

Tensor zeros_(Tensor tensor) {
  autograd::NoGradGuard no_grad;
  tensor.zero_();
  return tensor;
}

Tensor eye_(Tensor tensor) {
  if (tensor.dim() != 2) throw Error("Only tensors with 2 dimensions are supported");
  autograd::NoGradGuard no_grad;
  tensor.copy_(eye(tensor.size(0), tensor.size(1), dtype(Dtype::Float64)));
  return tensor;
}

Tensor xavier_uniform_(Tensor tensor, double gain) {
  const double a = std::sqrt(3.0) * xavier_std(tensor, gain);
  return uniform_(std::move(tensor), -a, a);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  const double std = xavier_std(tensor, gain);
  return normal_(std::move(tensor), 0.0, std);
}

Tensor kaiming_uniform_(Tensor tensor, double a, const std::string& mode,
                        const std::string& nonlinearity) {
  // PyTorch only warns here: "Initializing zero-element tensors is a no-op".
  if (tensor.numel() == 0) return tensor;
  const double bound = std::sqrt(3.0) * kaiming_std(tensor, a, mode, nonlinearity);
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, const std::string& mode,
                       const std::string& nonlinearity) {
  if (tensor.numel() == 0) return tensor;
  const double std = kaiming_std(tensor, a, mode, nonlinearity);
  return normal_(std::move(tensor), 0.0, std);
}

Tensor orthogonal_(Tensor tensor, double gain) {
  if (tensor.dim() < 2) throw Error("Only tensors with 2 or more dimensions are supported");
  if (tensor.numel() == 0) return tensor;
  autograd::NoGradGuard no_grad;
  const std::int64_t rows = tensor.size(0);
  const std::int64_t cols = tensor.numel() / rows;
  Tensor sample = weft::empty({rows, cols}, dtype(Dtype::Float64));
  weft::normal_(sample, 0.0, 1.0);
  std::vector<double> flat = sample.to_vector<double>();
  // Work on the tall orientation m×n (m ≥ n), column-major in `q`.
  const bool transposed = rows < cols;
  const std::int64_t m = transposed ? cols : rows;
  const std::int64_t n = transposed ? rows : cols;
  std::vector<double> q(static_cast<std::size_t>(m * n));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      const double v = flat[static_cast<std::size_t>(r * cols + c)];
      const std::int64_t i = transposed ? c : r, j = transposed ? r : c;
      q[static_cast<std::size_t>(j * m + i)] = v;
    }
  }
  // Modified Gram–Schmidt, twice for stability. Its R has a positive diagonal, which is what
  // PyTorch's sign correction q·sign(diag(r)) produces from Householder QR.
  const auto col = [&](std::int64_t j) { return q.data() + j * m; };
  for (std::int64_t j = 0; j < n; ++j) {
    for (int pass = 0; pass < 2; ++pass) {
      for (std::int64_t k = 0; k < j; ++k) {
        double dot = 0;
        for (std::int64_t i = 0; i < m; ++i) dot += col(k)[i] * col(j)[i];
        for (std::int64_t i = 0; i < m; ++i) col(j)[i] -= dot * col(k)[i];
      }
    }
    double norm = 0;
    for (std::int64_t i = 0; i < m; ++i) norm += col(j)[i] * col(j)[i];
    norm = std::sqrt(norm);
    for (std::int64_t i = 0; i < m; ++i) col(j)[i] /= norm;
  }
  std::vector<double> out(flat.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::int64_t i = transposed ? c : r, j = transposed ? r : c;
      out[static_cast<std::size_t>(r * cols + c)] = gain * q[static_cast<std::size_t>(j * m + i)];
    }
  }
  assign(tensor, out);
  return tensor;
}

}  // namespace weft::nn::init
