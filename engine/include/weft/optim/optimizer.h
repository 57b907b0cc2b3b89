#pragma once
// Optimizer: the base of weft's optimizers, shaped like torch.optim.Optimizer. Parameters sit
// in groups (param_groups), each with its own options (lr, momentum, …); per-parameter state
// (momentum buffers, moment estimates, step counts) is created on the first step.

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "weft/tensor.h"

namespace weft::optim {

// A group's options by name, as in a Python param_group dict ("lr", "momentum", …; booleans
// are 0 or 1, Adam's betas are "beta1" and "beta2").
using GroupOptions = std::map<std::string, double>;

// Parameters optimized with the same options. Options left out of `options` take the
// optimizer's defaults, like a Python dict {"params": [...], "lr": 0.1}.
struct ParamGroup {
  std::vector<Tensor> params;
  GroupOptions options;
};

// One parameter's state: its step count and named tensors ("momentum_buffer", "exp_avg", …).
struct ParamState {
  std::int64_t step = 0;
  std::map<std::string, Tensor> tensors;
};

// A snapshot of an optimizer (Python's optimizer.state_dict()). Parameters are referred to by
// their index in the concatenation of the groups' params lists.
struct OptimizerState {
  struct Group {
    GroupOptions options;
    std::vector<std::int64_t> params;
  };
  std::map<std::int64_t, ParamState> state;  // parameters that have state
  std::vector<Group> param_groups;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Updates every parameter that has a grad, in place, under no-grad.
  virtual void step() = 0;
  // Drops (set_to_none) or zeroes the grad of every parameter.
  void zero_grad(bool set_to_none = true);

  // Groups are mutable so that options (e.g. "lr") can be changed between steps.
  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  // Adds a group, filling its options from the defaults and validating them.
  void add_param_group(ParamGroup group);
  const GroupOptions& defaults() const { return defaults_; }

  // The state of `param`; null until a step has created it.
  const ParamState* state(const Tensor& param) const;

  // Copies (clones) of the state tensors, with every group's options.
  OptimizerState state_dict() const;
  // Restores state and group options; groups must have the same sizes as this optimizer's.
  // State tensors are cloned and converted to their parameter's dtype.
  void load_state_dict(const OptimizerState& state);

 protected:
  // `defaults` lists every option the optimizer knows; groups may not name others.
  explicit Optimizer(GroupOptions defaults) : defaults_(std::move(defaults)) {}
  // Validates the defaults and adds `groups` (not empty); derived constructors call this,
  // since validate() is virtual.
  void add_param_groups(std::vector<ParamGroup> groups);
  // Throws weft::Error with PyTorch's message for an invalid option value.
  virtual void validate(const GroupOptions& options) const = 0;
  // The state of `param`, created empty (step 0) when it has none.
  ParamState& state_for(const Tensor& param);
  // Called for every parameter when the optimizer is built (Adagrad's eager state).
  void init_all_state();
  virtual void init_state(const Tensor& /*param*/, const GroupOptions& /*options*/,
                          ParamState& /*state*/) {}

 private:
  GroupOptions defaults_;
  std::vector<ParamGroup> groups_;
  std::unordered_map<const TensorImpl*, ParamState> state_;
};

// Formats an option value in PyTorch's messages ("Invalid learning rate: -1").
std::string format_option(double value);

}  // namespace weft::optim
