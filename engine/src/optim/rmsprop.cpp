// RMSprop, as torch.optim.RMSprop (PyTorch 1.13):
//   g = ±grad + wd·p;  v = α·v + (1−α)·g²;  a = √(v − ḡ²) with ḡ = α·ḡ + (1−α)·g (centered)
//   or √v, then a += ε;  b = μ·b + g/a, p -= lr·b (momentum) or p -= lr·g/a
#include "weft/optim/rmsprop.h"

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft::optim {

GroupOptions RMSpropOptions::to_group() const {
  return {{"lr", lr},
          {"alpha", alpha},
          {"eps", eps},
          {"weight_decay", weight_decay},
          {"momentum", momentum},
          {"centered", centered ? 1.0 : 0.0},
          {"maximize", maximize ? 1.0 : 0.0}};
}

RMSpropOptions RMSpropOptions::from_group(const GroupOptions& options) {
  RMSpropOptions o(options.at("lr"));
  o.alpha = options.at("alpha");
  o.eps = options.at("eps");
  o.weight_decay = options.at("weight_decay");
  o.momentum = options.at("momentum");
  o.centered = options.at("centered") != 0.0;
  o.maximize = options.at("maximize") != 0.0;
  return o;
}

RMSprop::RMSprop(std::vector<Tensor> params, const RMSpropOptions& defaults)
    : RMSprop(std::vector<ParamGroup>{ParamGroup{std::move(params), {}}}, defaults) {}
RMSprop::RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& defaults)
    : Optimizer(defaults.to_group()) {
  add_param_groups(std::move(groups));
}

void RMSprop::validate(const GroupOptions& options) const {
  const RMSpropOptions o = RMSpropOptions::from_group(options);
  if (o.lr < 0.0) throw Error("Invalid learning rate: " + format_option(o.lr));
  if (o.eps < 0.0) throw Error("Invalid epsilon value: " + format_option(o.eps));
  if (o.momentum < 0.0) throw Error("Invalid momentum value: " + format_option(o.momentum));
  if (o.weight_decay < 0.0) {
    throw Error("Invalid weight_decay value: " + format_option(o.weight_decay));
  }
  if (o.alpha < 0.0) throw Error("Invalid alpha value: " + format_option(o.alpha));
}

void RMSprop::step() {
  autograd::NoGradGuard no_grad;
  for (ParamGroup& group : param_groups()) {
    const RMSpropOptions o = RMSpropOptions::from_group(group.options);
    for (Tensor& p : group.params) {
      if (!p.grad().defined()) continue;
      Tensor grad = o.maximize ? neg(p.grad()) : p.grad();
      ParamState& state = state_for(p);
      auto& tensors = state.tensors;
      if (tensors.count("square_avg") == 0) tensors["square_avg"] = zeros_like(p);
      if (o.momentum > 0.0 && tensors.count("momentum_buffer") == 0) {
        tensors["momentum_buffer"] = zeros_like(p);
      }
      if (o.centered && tensors.count("grad_avg") == 0) tensors["grad_avg"] = zeros_like(p);
      state.step += 1;

      if (o.weight_decay != 0.0) grad = add(grad, p, o.weight_decay);
      Tensor& square_avg = tensors.at("square_avg");
      square_avg.mul_(o.alpha).add_(grad * (1.0 - o.alpha) * grad);
      Tensor avg;
      if (o.centered) {
        Tensor& grad_avg = tensors.at("grad_avg");
        grad_avg.mul_(o.alpha).add_(grad, 1.0 - o.alpha);
        avg = sqrt(square_avg - grad_avg * grad_avg);
      } else {
        avg = square_avg.sqrt();
      }
      avg = avg + o.eps;
      if (o.momentum > 0.0) {
        Tensor& buf = tensors.at("momentum_buffer");
        buf.mul_(o.momentum).add_(grad / avg);
        p.add_(buf, -o.lr);
      } else {
        p.add_(grad / avg, -o.lr);
      }
    }
  }
}

}  // namespace weft::optim
