#pragma once
// Stochastic gradient descent with momentum, dampening, weight decay and Nesterov momentum
// (torch.optim.SGD, same update and the same first-step momentum buffer).

#include <vector>

#include "weft/optim/optimizer.h"

namespace weft::optim {

struct SGDOptions {
  explicit SGDOptions(double lr) : lr(lr) {}
  double lr;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  bool maximize = false;

  GroupOptions to_group() const;
  static SGDOptions from_group(const GroupOptions& options);
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& defaults);
  SGD(std::vector<ParamGroup> groups, const SGDOptions& defaults);
  void step() override;

 protected:
  void validate(const GroupOptions& options) const override;
};

}  // namespace weft::optim
