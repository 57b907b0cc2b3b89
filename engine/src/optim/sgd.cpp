// SGD, as torch.optim.SGD:
//   g = ±grad + wd·p;  b = g (first step) or μ·b + (1−τ)·g;  g = g + μ·b (Nesterov) or b;
//   p -= lr·g
#include "weft/optim/sgd.h"

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft::optim {

GroupOptions SGDOptions::to_group() const {
  return {{"lr", lr},
          {"momentum", momentum},
          {"dampening", dampening},
          {"weight_decay", weight_decay},
          {"nesterov", nesterov ? 1.0 : 0.0},
          {"maximize", maximize ? 1.0 : 0.0}};
}

SGDOptions SGDOptions::from_group(const GroupOptions& options) {
  SGDOptions o(options.at("lr"));
  o.momentum = options.at("momentum");
  o.dampening = options.at("dampening");
  o.weight_decay = options.at("weight_decay");
  o.nesterov = options.at("nesterov") != 0.0;
  o.maximize = options.at("maximize") != 0.0;
  return o;
}

SGD::SGD(std::vector<Tensor> params, const SGDOptions& defaults)
    : SGD(std::vector<ParamGroup>{ParamGroup{std::move(params), {}}}, defaults) {}

SGD::SGD(std::vector<ParamGroup> groups, const SGDOptions& defaults)
    : Optimizer(defaults.to_group()) {
  add_param_groups(std::move(groups));
}

void SGD::validate(const GroupOptions& options) const {
  const SGDOptions o = SGDOptions::from_group(options);
  if (o.lr < 0.0) throw Error("Invalid learning rate: " + format_option(o.lr));
  if (o.momentum < 0.0) throw Error("Invalid momentum value: " + format_option(o.momentum));
  if (o.weight_decay < 0.0) {
    throw Error("Invalid weight_decay value: " + format_option(o.weight_decay));
  }
  if (o.nesterov && (o.momentum <= 0.0 || o.dampening != 0.0)) {
    throw Error("Nesterov momentum requires a momentum and zero dampening");
  }
}

void SGD::step() {
  autograd::NoGradGuard no_grad;
  for (ParamGroup& group : param_groups()) {
    const SGDOptions o = SGDOptions::from_group(group.options);
    for (Tensor& p : group.params) {
      if (!p.grad().defined()) continue;
      Tensor d_p = o.maximize ? neg(p.grad()) : p.grad();
      if (o.weight_decay != 0.0) d_p = add(d_p, p, o.weight_decay);
      if (o.momentum != 0.0) {
        ParamState& state = state_for(p);
        auto it = state.tensors.find("momentum_buffer");
        if (it == state.tensors.end() || !it->second.defined()) {
          state.tensors["momentum_buffer"] = d_p.clone();
          it = state.tensors.find("momentum_buffer");
        } else {
          it->second.mul_(o.momentum).add_(d_p, 1.0 - o.dampening);
        }
        const Tensor& buf = it->second;
        d_p = o.nesterov ? add(d_p, buf, o.momentum) : buf;
      }
      p.add_(d_p, -o.lr);
    }
  }
}

}  // namespace weft::optim
