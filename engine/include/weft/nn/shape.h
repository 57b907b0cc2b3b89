#pragma once
// Shape layers (torch.nn.Flatten, Unflatten): reshape without parameters.

#include <cstdint>
#include <vector>

#include "weft/nn/module.h"

namespace weft::nn {

// Flattens dims start_dim…end_dim into one (the batch dim is kept by default).
class Flatten : public Module {
 public:
  explicit Flatten(std::int64_t start_dim = 1, std::int64_t end_dim = -1)
      : start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor& input) override;

  std::int64_t start_dim;
  std::int64_t end_dim;
};

// Splits dim `dim` into unflattened_size (one entry may be -1).
class Unflatten : public Module {
 public:
  Unflatten(std::int64_t dim, std::vector<std::int64_t> unflattened_size);
  Tensor forward(const Tensor& input) override;

  std::int64_t dim;
  std::vector<std::int64_t> unflattened_size;
};

}  // namespace weft::nn
