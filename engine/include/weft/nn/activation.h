#pragma once
// Activation modules (torch.nn.ReLU, Sigmoid, Tanh, LeakyReLU, GELU, SiLU, ELU, Softplus,
// Softmax, LogSoftmax, Identity): stateless wrappers around the ops, with Python's defaults.

#include <cstdint>
#include <optional>
#include <string>

#include "weft/nn/module.h"

namespace weft::nn {

class ReLU : public Module {
 public:
  Tensor forward(const Tensor& input) override;
};

class Sigmoid : public Module {
 public:
  Tensor forward(const Tensor& input) override;
};

class Tanh : public Module {
 public:
  Tensor forward(const Tensor& input) override;
};

class LeakyReLU : public Module {
 public:
  explicit LeakyReLU(double negative_slope = 0.01) : negative_slope(negative_slope) {}
  Tensor forward(const Tensor& input) override;
  double negative_slope;
};

// Randomized leaky ReLU: in training a slope drawn from U(lower, upper) per element below zero
// (a fresh seed from the default generator per call), in eval the mean slope.
class RReLU : public Module {
 public:
  explicit RReLU(double lower = 1.0 / 8, double upper = 1.0 / 3) : lower(lower), upper(upper) {}
  Tensor forward(const Tensor& input) override;
  double lower;
  double upper;
};

// approximate: "none" (exact, with erf) or "tanh".
class GELU : public Module {
 public:
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor& input) override;
  std::string approximate;
};

class SiLU : public Module {
 public:
  Tensor forward(const Tensor& input) override;
};

class ELU : public Module {
 public:
  explicit ELU(double alpha = 1.0) : alpha(alpha) {}
  Tensor forward(const Tensor& input) override;
  double alpha;
};

// log(1 + exp(beta·x)) / beta, linear where beta·x > threshold.
class Softplus : public Module {
 public:
  explicit Softplus(double beta = 1.0, double threshold = 20.0)
      : beta(beta), threshold(threshold) {}
  Tensor forward(const Tensor& input) override;
  double beta;
  double threshold;
};

// dim = nullopt picks Python's legacy implicit dim: 0 for 0-, 1- and 3-d inputs, else 1.
class Softmax : public Module {
 public:
  explicit Softmax(std::optional<std::int64_t> dim = std::nullopt) : dim(dim) {}
  Tensor forward(const Tensor& input) override;
  std::optional<std::int64_t> dim;
};

class LogSoftmax : public Module {
 public:
  explicit LogSoftmax(std::optional<std::int64_t> dim = std::nullopt) : dim(dim) {}
  Tensor forward(const Tensor& input) override;
  std::optional<std::int64_t> dim;
};

// Returns its input unchanged (a placeholder layer).
class Identity : public Module {
 public:
  Tensor forward(const Tensor& input) override;
};

}  // namespace weft::nn
