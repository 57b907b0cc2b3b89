#pragma once
// nn::Dropout (torch.nn.Dropout): zeroes each element with probability p in training and scales
// the rest by 1/(1-p); the identity in eval. Each training call draws a fresh seed from the
// default generator, so results are reproducible after weft::manual_seed.

#include "weft/nn/module.h"

namespace weft::nn {

class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);

  Tensor forward(const Tensor& input) override;

  double p;
};

}  // namespace weft::nn
