// The optimizer base: groups with defaults, per-parameter state, zero_grad, state dicts.
#include "weft/optim/optimizer.h"

#include <sstream>

#include "weft/autograd.h"
#include "weft/error.h"

namespace weft::optim {

std::string format_option(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

void Optimizer::add_param_groups(std::vector<ParamGroup> groups) {
  std::size_t count = 0;
  for (const ParamGroup& group : groups) count += group.params.size();
  if (count == 0) throw Error("optimizer got an empty parameter list");
  validate(defaults_);
  for (ParamGroup& group : groups) add_param_group(std::move(group));
}

void Optimizer::add_param_group(ParamGroup group) {
  for (const auto& option : group.options) {
    if (defaults_.count(option.first) == 0) {
      std::string known;
      for (const auto& d : defaults_) known += (known.empty() ? "" : ", ") + d.first;
      throw Error("parameter group has an unknown option '" + option.first + "' (expected one of " +
                  known + ")");
    }
  }
  for (const auto& [name, value] : defaults_) group.options.emplace(name, value);
  validate(group.options);
  for (const Tensor& p : group.params) {
    if (!p.defined()) throw Error("optimizer can only optimize Tensors, but one is undefined");
    if (!p.is_leaf()) throw Error("can't optimize a non-leaf Tensor");
    for (const ParamGroup& other : groups_) {
      for (const Tensor& q : other.params) {
        if (q.is_same(p)) throw Error("some parameters appear in more than one parameter group");
      }
    }
  }
  groups_.push_back(std::move(group));
}

void Optimizer::zero_grad(bool set_to_none) {
  for (const ParamGroup& group : groups_) {
    for (const Tensor& p : group.params) {
      autograd::clear_grad(p, set_to_none);
    }
  }
}

const ParamState* Optimizer::state(const Tensor& param) const {
  auto it = state_.find(param.impl());
  return it == state_.end() ? nullptr : &it->second;
}

ParamState& Optimizer::state_for(const Tensor& param) {
  return state_[param.impl()];
}

void Optimizer::init_all_state() {
  autograd::NoGradGuard no_grad;
  for (const ParamGroup& group : groups_) {
    for (const Tensor& p : group.params) init_state(p, group.options, state_for(p));
  }
}

OptimizerState Optimizer::state_dict() const {
  OptimizerState out;
  std::int64_t index = 0;
  for (const ParamGroup& group : groups_) {
    OptimizerState::Group g{group.options, {}};
    for (const Tensor& p : group.params) {
      g.params.push_back(index);
      if (const ParamState* s = state(p)) {
        ParamState copy{s->step, {}};
        for (const auto& [name, t] : s->tensors) {
          copy.tensors.emplace(name, t.defined() ? t.detach().clone() : Tensor());
        }
        out.state.emplace(index, std::move(copy));
      }
      ++index;
    }
    out.param_groups.push_back(std::move(g));
  }
  return out;
}

void Optimizer::load_state_dict(const OptimizerState& state) {
  if (state.param_groups.size() != groups_.size()) {
    throw Error("loaded state dict has a different number of parameter groups (expected " +
                std::to_string(groups_.size()) + ", got " +
                std::to_string(state.param_groups.size()) + ")");
  }
  // Validate everything before changing anything.
  std::map<std::int64_t, Tensor> by_index;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const auto& saved = state.param_groups[g];
    if (saved.params.size() != groups_[g].params.size()) {
      throw Error(
          "loaded state dict contains a parameter group that doesn't match the size of "
          "optimizer's group");
    }
    GroupOptions options = saved.options;
    for (const auto& [name, value] : defaults_) options.emplace(name, value);
    validate(options);
    for (std::size_t i = 0; i < saved.params.size(); ++i) {
      by_index[saved.params[i]] = groups_[g].params[i];
    }
  }
  for (const auto& [index, s] : state.state) {
    if (by_index.count(index) == 0) {
      throw Error("loaded state dict has state for unknown parameter " + std::to_string(index));
    }
  }
  autograd::NoGradGuard no_grad;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    GroupOptions options = state.param_groups[g].options;
    for (const auto& [name, value] : defaults_) options.emplace(name, value);
    groups_[g].options = std::move(options);
  }
  state_.clear();
  for (const auto& [index, s] : state.state) {
    const Tensor& p = by_index.at(index);
    ParamState copy{s.step, {}};
    for (const auto& [name, t] : s.tensors) {
      Tensor value;
      if (t.defined()) {
        value = t.detach().clone();
        if (value.is_floating_point() && value.dtype() != p.dtype()) value = value.to(p.dtype());
      }
      copy.tensors.emplace(name, value);
    }
    state_[p.impl()] = std::move(copy);
  }
}

}  // namespace weft::optim
