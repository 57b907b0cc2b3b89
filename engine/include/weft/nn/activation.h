#pragma once
// Activation modules (torch.nn.ReLU, Sigmoid, Tanh): stateless wrappers around the ops.

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

}  // namespace weft::nn
