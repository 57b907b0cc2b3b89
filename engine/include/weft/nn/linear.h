#pragma once
// nn::Linear: y = x·Wᵀ + b (torch.nn.Linear), with PyTorch's default initialisation.

#include <cstdint>

#include "weft/nn/module.h"

namespace weft::nn {

class Linear : public Module {
 public:
  // weight [out_features, in_features] and bias [out_features] drawn from
  // U(-1/sqrt(in_features), 1/sqrt(in_features)) with the default generator.
  Linear(std::int64_t in_features, std::int64_t out_features, bool bias = true);

  Tensor forward(const Tensor& input) override;
  // Redraws weight (kaiming_uniform_ with a = sqrt(5)) and bias, as PyTorch does.
  void reset_parameters();

  std::int64_t in_features;
  std::int64_t out_features;
  Tensor weight;
  Tensor bias;  // undefined when constructed with bias = false
};

}  // namespace weft::nn
