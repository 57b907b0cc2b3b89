// Adagrad, as torch.optim.Adagrad (PyTorch 1.13):
//   t += 1;  g = ±grad + wd·p;  clr = lr / (1 + (t−1)·lr_decay);  s += g²;  p -= clr·g/(√s + ε)
#include "weft/optim/adagrad.h"

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft::optim {

GroupOptions AdagradOptions::to_group() const {
  return {{"lr", lr},
          {"lr_decay", lr_decay},
          {"weight_decay", weight_decay},
          {"initial_accumulator_value", initial_accumulator_value},
          {"eps", eps},
          {"maximize", maximize ? 1.0 : 0.0}};
}

AdagradOptions AdagradOptions::from_group(const GroupOptions& options) {
  AdagradOptions o(options.at("lr"));
  o.lr_decay = options.at("lr_decay");
  o.weight_decay = options.at("weight_decay");
  o.initial_accumulator_value = options.at("initial_accumulator_value");
  o.eps = options.at("eps");
  o.maximize = options.at("maximize") != 0.0;
  return o;
}

Adagrad::Adagrad(std::vector<Tensor> params, const AdagradOptions& defaults)
    : Adagrad(std::vector<ParamGroup>{ParamGroup{std::move(params), {}}}, defaults) {}
Adagrad::Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& defaults)
    : Optimizer(defaults.to_group()) {
  add_param_groups(std::move(groups));
  init_all_state();
}

void Adagrad::validate(const GroupOptions& options) const {
  const AdagradOptions o = AdagradOptions::from_group(options);
  if (o.lr < 0.0) throw Error("Invalid learning rate: " + format_option(o.lr));
  if (o.lr_decay < 0.0) throw Error("Invalid lr_decay value: " + format_option(o.lr_decay));
  if (o.weight_decay < 0.0) {
    throw Error("Invalid weight_decay value: " + format_option(o.weight_decay));
  }
  if (o.initial_accumulator_value < 0.0) {
    throw Error("Invalid initial_accumulator_value value: " +
                format_option(o.initial_accumulator_value));
  }
  if (o.eps < 0.0) throw Error("Invalid epsilon value: " + format_option(o.eps));
}

void Adagrad::init_state(const Tensor& param, const GroupOptions& options, ParamState& state) {
  state.step = 0;
  state.tensors["sum"] = full_like(param, options.at("initial_accumulator_value"));
}

void Adagrad::step() {
  autograd::NoGradGuard no_grad;
  for (ParamGroup& group : param_groups()) {
    const AdagradOptions o = AdagradOptions::from_group(group.options);
    for (Tensor& p : group.params) {
      if (!p.grad().defined()) continue;
      Tensor grad = o.maximize ? neg(p.grad()) : p.grad();
      ParamState& state = state_for(p);
      // A loaded state dict may lack this parameter's state.
      if (state.tensors.count("sum") == 0) init_state(p, group.options, state);
      state.step += 1;
      if (o.weight_decay != 0.0) grad = add(grad, p, o.weight_decay);
      const double clr = o.lr / (1.0 + static_cast<double>(state.step - 1) * o.lr_decay);
      Tensor& sum = state.tensors.at("sum");
      sum.add_(grad * grad);
      const Tensor std = sum.sqrt() + o.eps;
      p.add_(grad / std, -clr);
    }
  }
}

}  // namespace weft::optim
