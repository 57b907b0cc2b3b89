#pragma once
// Adam and AdamW (torch.optim.Adam / AdamW, PyTorch 1.13's single-tensor formulas): bias-
// corrected moment estimates, optional AMSGrad; AdamW decays weights before the update.

#include <vector>

#include "weft/optim/optimizer.h"

namespace weft::optim {

struct AdamOptions {
  explicit AdamOptions(double lr = 1e-3) : lr(lr) {}
  double lr;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;  // AdamW's default is 1e-2
  bool amsgrad = false;
  bool maximize = false;

  GroupOptions to_group() const;
  static AdamOptions from_group(const GroupOptions& options);
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& defaults = AdamOptions());
  Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults = AdamOptions());
  void step() override;

 protected:
  Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults, bool decoupled);
  void validate(const GroupOptions& options) const override;

 private:
  bool decoupled_ = false;  // AdamW: p *= 1 − lr·wd instead of g += wd·p
};

// The AdamW defaults: AdamOptions with weight_decay = 1e-2.
AdamOptions adamw_options(double lr = 1e-3);

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, const AdamOptions& defaults = adamw_options());
  AdamW(std::vector<ParamGroup> groups, const AdamOptions& defaults = adamw_options());
};

}  // namespace weft::optim
