#pragma once
// Adagrad (torch.optim.Adagrad): steps scaled by the root of the sum of all squared gradients,
// with a learning rate decayed as lr / (1 + (t−1)·lr_decay).

#include <vector>

#include "weft/optim/optimizer.h"

namespace weft::optim {

struct AdagradOptions {
  explicit AdagradOptions(double lr = 1e-2) : lr(lr) {}
  double lr;
  double lr_decay = 0.0;
  double weight_decay = 0.0;
  double initial_accumulator_value = 0.0;
  double eps = 1e-10;
  bool maximize = false;

  GroupOptions to_group() const;
  static AdagradOptions from_group(const GroupOptions& options);
};

// Like PyTorch's, its state ("sum", step 0) exists for every parameter from construction.
class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, const AdagradOptions& defaults = AdagradOptions());
  Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& defaults = AdagradOptions());
  void step() override;

 protected:
  void validate(const GroupOptions& options) const override;
  void init_state(const Tensor& param, const GroupOptions& options, ParamState& state) override;
};

}  // namespace weft::optim
