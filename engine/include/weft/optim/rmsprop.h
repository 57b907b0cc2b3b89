#pragma once
// RMSprop (torch.optim.RMSprop): a running average of squared gradients scales each step;
// optional momentum and centering (subtracting the squared running mean of gradients).

#include <vector>

#include "weft/optim/optimizer.h"

namespace weft::optim {

struct RMSpropOptions {
  explicit RMSpropOptions(double lr = 1e-2) : lr(lr) {}
  double lr;
  double alpha = 0.99;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double momentum = 0.0;
  bool centered = false;
  bool maximize = false;

  GroupOptions to_group() const;
  static RMSpropOptions from_group(const GroupOptions& options);
};

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, const RMSpropOptions& defaults = RMSpropOptions());
  RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& defaults = RMSpropOptions());
  void step() override;

 protected:
  void validate(const GroupOptions& options) const override;
};

}  // namespace weft::optim
