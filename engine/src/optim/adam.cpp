// Adam / AdamW, as torch.optim (PyTorch 1.13, single tensor):
//   t += 1;  g = ±grad (+ wd·p for Adam);  p *= 1 − lr·wd (AdamW)
//   m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²;  v̂ = max(v̂, v) with AMSGrad
//   p -= lr/(1−β1ᵗ) · m / (√v / √(1−β2ᵗ) + ε)
#include "weft/optim/adam.h"

#include <cmath>

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft::optim {

GroupOptions AdamOptions::to_group() const {
  return {{"lr", lr},
          {"beta1", beta1},
          {"beta2", beta2},
          {"eps", eps},
          {"weight_decay", weight_decay},
          {"amsgrad", amsgrad ? 1.0 : 0.0},
          {"maximize", maximize ? 1.0 : 0.0}};
}

AdamOptions AdamOptions::from_group(const GroupOptions& options) {
  AdamOptions o(options.at("lr"));
  o.beta1 = options.at("beta1");
  o.beta2 = options.at("beta2");
  o.eps = options.at("eps");
  o.weight_decay = options.at("weight_decay");
  o.amsgrad = options.at("amsgrad") != 0.0;
  o.maximize = options.at("maximize") != 0.0;
  return o;
}

AdamOptions adamw_options(double lr) {
  AdamOptions o(lr);
  o.weight_decay = 1e-2;
  return o;
}

Adam::Adam(std::vector<Tensor> params, const AdamOptions& defaults)
    : Adam(std::vector<ParamGroup>{ParamGroup{std::move(params), {}}}, defaults, false) {}
Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults)
    : Adam(std::move(groups), defaults, false) {}
Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults, bool decoupled)
    : Optimizer(defaults.to_group()), decoupled_(decoupled) {
  add_param_groups(std::move(groups));
}

AdamW::AdamW(std::vector<Tensor> params, const AdamOptions& defaults)
    : Adam(std::vector<ParamGroup>{ParamGroup{std::move(params), {}}}, defaults, true) {}
AdamW::AdamW(std::vector<ParamGroup> groups, const AdamOptions& defaults)
    : Adam(std::move(groups), defaults, true) {}

void Adam::validate(const GroupOptions& options) const {
  const AdamOptions o = AdamOptions::from_group(options);
  if (o.lr < 0.0) throw Error("Invalid learning rate: " + format_option(o.lr));
  if (o.eps < 0.0) throw Error("Invalid epsilon value: " + format_option(o.eps));
  if (o.beta1 < 0.0 || o.beta1 >= 1.0) {
    throw Error("Invalid beta parameter at index 0: " + format_option(o.beta1));
  }
  if (o.beta2 < 0.0 || o.beta2 >= 1.0) {
    throw Error("Invalid beta parameter at index 1: " + format_option(o.beta2));
  }
  if (o.weight_decay < 0.0) {
    throw Error("Invalid weight_decay value: " + format_option(o.weight_decay));
  }
}

void Adam::step() {
  autograd::NoGradGuard no_grad;
  for (ParamGroup& group : param_groups()) {
    const AdamOptions o = AdamOptions::from_group(group.options);
    for (Tensor& p : group.params) {
      if (!p.grad().defined()) continue;
      Tensor grad = o.maximize ? neg(p.grad()) : p.grad();
      ParamState& state = state_for(p);
      if (state.tensors.count("exp_avg") == 0) {
        state.tensors["exp_avg"] = zeros_like(p);
        state.tensors["exp_avg_sq"] = zeros_like(p);
      }
      if (o.amsgrad && state.tensors.count("max_exp_avg_sq") == 0) {
        state.tensors["max_exp_avg_sq"] = zeros_like(p);
      }
      Tensor& exp_avg = state.tensors.at("exp_avg");
      Tensor& exp_avg_sq = state.tensors.at("exp_avg_sq");
      state.step += 1;
      const auto t = static_cast<double>(state.step);

      if (decoupled_) {
        p.mul_(1.0 - o.lr * o.weight_decay);
      } else if (o.weight_decay != 0.0) {
        grad = add(grad, p, o.weight_decay);
      }
      exp_avg.mul_(o.beta1).add_(grad, 1.0 - o.beta1);
      // addcmul_(grad, grad, value) computes (value·grad)·grad.
      exp_avg_sq.mul_(o.beta2).add_(grad * (1.0 - o.beta2) * grad);

      const double bias_correction1 = 1.0 - std::pow(o.beta1, t);
      const double bias_correction2 = 1.0 - std::pow(o.beta2, t);
      const double step_size = o.lr / bias_correction1;
      const double bias_correction2_sqrt = std::sqrt(bias_correction2);
      Tensor second = exp_avg_sq;
      if (o.amsgrad) {
        Tensor& max_sq = state.tensors.at("max_exp_avg_sq");
        max_sq.copy_(maximum(max_sq, exp_avg_sq));
        second = max_sq;
      }
      const Tensor denom = second.sqrt() / bias_correction2_sqrt + o.eps;
      p.add_(exp_avg / denom, -step_size);
    }
  }
}

}  // namespace weft::optim
