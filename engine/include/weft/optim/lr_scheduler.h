#pragma once
// Learning-rate schedulers, shaped like torch.optim.lr_scheduler (PyTorch 1.13): each one
// rewrites the "lr" of every param group of an optimizer when step() is called. Construction
// performs the first step (epoch 0) and records "initial_lr" in each group, as in Python.
//
// Resuming (PyTorch's recipe): build the model, optimizer and scheduler afresh, load the
// optimizer's state_dict, then the scheduler's; stepping on gives the lrs of the uninterrupted
// run. The optimizer's groups carry "initial_lr" (and OneCycleLR's "max_lr", …), the
// scheduler's state its own attributes.

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "weft/optim/optimizer.h"

namespace weft::optim {

// A scheduler's state_dict(): a JSON object of its attributes under their Python names
// ("last_epoch", "_step_count", "base_lrs", "_last_lr", "gamma", …), as Python's holds every
// attribute but the optimizer, plus "type" ("StepLR", …) so that a state is only loaded into
// a scheduler of the same kind. SequentialLR's "_schedulers" lists its children's states.
using SchedulerState = nlohmann::json;

// What saving and resuming need of any scheduler, LRScheduler or ReduceLROnPlateau.
class CheckpointableScheduler {
 public:
  virtual ~CheckpointableScheduler() = default;
  virtual SchedulerState state_dict() const = 0;
  // Restores every attribute (hyperparameters included, like Python's __dict__.update). Throws
  // weft::Error for a state of another scheduler type, for another number of param groups, or
  // with a missing or ill-typed field, and then leaves the scheduler unchanged.
  virtual void load_state_dict(const SchedulerState& state) = 0;
  virtual Optimizer& optimizer() const = 0;
};

// The base of the epoch-driven schedulers (Python's _LRScheduler). step() uses the
// chainable form get_lr(), which reads the groups' current lrs.
class LRScheduler : public CheckpointableScheduler {
 public:
  ~LRScheduler() override = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  // Advances one epoch and writes the new lr into every param group.
  virtual void step();
  // Jumps to `epoch` (deprecated in PyTorch): the closed form when the scheduler has one,
  // otherwise get_lr() at that epoch.
  void step(std::int64_t epoch);

  // The lr of each param group after the last step.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  std::int64_t last_epoch() const { return last_epoch_; }
  Optimizer& optimizer() const override { return optimizer_; }

  SchedulerState state_dict() const override;
  void load_state_dict(const SchedulerState& state) override;
  // The class name ("StepLR"), stored as the state's "type".
  virtual const char* type_name() const = 0;

 protected:
  // Sets each group's "initial_lr" (when not set) and base_lrs from it; does not step:
  // the most derived constructor calls initial_step(), since get_lr() is virtual.
  explicit LRScheduler(Optimizer& optimizer);
  // Resets the step count and performs the step to epoch 0.
  void initial_step();
  // The chainable form: the lrs for last_epoch() from the groups' current lrs.
  virtual std::vector<double> get_lr() = 0;
  // The lrs for last_epoch() from base_lrs alone, for step(epoch); none by default.
  virtual std::optional<std::vector<double>> closed_form_lr() const { return std::nullopt; }
  // The current lr of every group.
  std::vector<double> group_lrs() const;
  void set_lrs(const std::vector<double>& lrs);
  // Adds the derived class's attributes to `state`.
  virtual void save_fields(SchedulerState& state) const = 0;
  // Reads and checks every derived attribute, then sets them; throws before changing any.
  virtual void load_fields(const SchedulerState& state) = 0;

  std::int64_t last_epoch_ = -1;
  std::int64_t step_count_ = 0;
  std::vector<double> base_lrs_;

 private:
  friend class SequentialLR;
  Optimizer& optimizer_;
  std::vector<double> last_lr_;
};

// lr *= gamma every step_size epochs.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, std::int64_t step_size, double gamma = 0.1);

  const char* type_name() const override { return "StepLR"; }

 protected:
  void save_fields(SchedulerState& state) const override;
  void load_fields(const SchedulerState& state) override;
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() const override;

 private:
  std::int64_t step_size_;
  double gamma_;
};

// lr *= gamma at each milestone (a milestone listed k times multiplies by gamma^k).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<std::int64_t> milestones, double gamma = 0.1);

  const char* type_name() const override { return "MultiStepLR"; }

 protected:
  void save_fields(SchedulerState& state) const override;
  void load_fields(const SchedulerState& state) override;
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() const override;

 private:
  std::vector<std::int64_t> milestones_;  // sorted, with repeats
  double gamma_;
};

// lr *= gamma every epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

  const char* type_name() const override { return "ExponentialLR"; }

 protected:
  void save_fields(SchedulerState& state) const override;
  void load_fields(const SchedulerState& state) override;
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() const override;

 private:
  double gamma_;
};

// The lr factor goes linearly from start_factor to end_factor over total_iters epochs.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0,
           std::int64_t total_iters = 5);

  const char* type_name() const override { return "LinearLR"; }

 protected:
  void save_fields(SchedulerState& state) const override;
  void load_fields(const SchedulerState& state) override;
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() const override;

 private:
  double start_factor_;
  double end_factor_;
  std::int64_t total_iters_;
};

// Cosine annealing from base lr to eta_min over T_max epochs (and back up, periodically);
// step() uses PyTorch's recursive form.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, std::int64_t T_max, double eta_min = 0.0);

  const char* type_name() const override { return "CosineAnnealingLR"; }

 protected:
  void save_fields(SchedulerState& state) const override;
  void load_fields(const SchedulerState& state) override;
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() const override;

 private:
  std::int64_t T_max_;
  double eta_min_;
};

struct OneCycleLROptions {
  // One value for every group, or one per group (as are the momenta).
  explicit OneCycleLROptions(std::vector<double> max_lr) : max_lr(std::move(max_lr)) {}
  std::vector<double> max_lr;
  // Either total_steps, or epochs and steps_per_epoch.
  std::optional<std::int64_t> total_steps;
  std::optional<std::int64_t> epochs;
  std::optional<std::int64_t> steps_per_epoch;
  double pct_start = 0.3;
  std::string anneal_strategy = "cos";  // "cos" or "linear"
  // Cycles "momentum" (or Adam's "beta1") inversely to the lr.
  bool cycle_momentum = true;
  std::vector<double> base_momentum{0.85};
  std::vector<double> max_momentum{0.95};
  double div_factor = 25.0;
  double final_div_factor = 1e4;
  bool three_phase = false;
};

// The 1cycle policy: lr rises from max_lr/div_factor to max_lr, then anneals to
// initial_lr/final_div_factor. Sets the groups' "initial_lr", "max_lr", "min_lr" (and
// "max_momentum", "base_momentum") like Python.
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options);
  std::int64_t total_steps() const { return total_steps_; }
  const char* type_name() const override { return "OneCycleLR"; }

 protected:
  void save_fields(SchedulerState& state) const override;
  void load_fields(const SchedulerState& state) override;
  std::vector<double> get_lr() override;

 private:
  struct Phase {
    double end_step;
    const char* start_lr;
    const char* end_lr;
    const char* start_momentum;
    const char* end_momentum;
  };
  double anneal(double start, double end, double pct) const;

  std::int64_t total_steps_ = 0;
  std::vector<Phase> phases_;
  bool cosine_ = true;
  bool cycle_momentum_ = true;
  const char* momentum_key_ = "momentum";
};

// Runs schedulers one after another: schedulers[i] from milestones[i-1] on (warm-up, then
// decay). All of them must drive `optimizer`.
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<std::int64_t> milestones);
  void step() override;
  const char* type_name() const override { return "SequentialLR"; }

 protected:
  void save_fields(SchedulerState& state) const override;
  void load_fields(const SchedulerState& state) override;
  std::vector<double> get_lr() override { return group_lrs(); }

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<std::int64_t> milestones_;
};

struct ReduceLROnPlateauOptions {
  std::string mode = "min";  // "min" or "max"
  double factor = 0.1;
  std::int64_t patience = 10;
  double threshold = 1e-4;
  std::string threshold_mode = "rel";  // "rel" or "abs"
  std::int64_t cooldown = 0;
  std::vector<double> min_lr{0.0};  // one value for every group, or one per group
  double eps = 1e-8;
};

// Multiplies the lr by factor once a metric has stopped improving for patience epochs.
// Not an LRScheduler (as in PyTorch 1.13): step takes the metric.
class ReduceLROnPlateau : public CheckpointableScheduler {
 public:
  explicit ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions options = {});
  ReduceLROnPlateau(const ReduceLROnPlateau&) = delete;
  ReduceLROnPlateau& operator=(const ReduceLROnPlateau&) = delete;
  void step(double metric);
  Optimizer& optimizer() const override { return optimizer_; }
  // type "ReduceLROnPlateau": factor, min_lrs, patience, cooldown, cooldown_counter, mode,
  // threshold, threshold_mode, best, num_bad_epochs, mode_worse, eps, last_epoch, _last_lr.
  SchedulerState state_dict() const override;
  void load_state_dict(const SchedulerState& state) override;
  // The lr of each group after the last step (the current lrs before any step).
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  std::int64_t last_epoch() const { return last_epoch_; }
  std::int64_t num_bad_epochs() const { return num_bad_epochs_; }
  double best() const { return best_; }

 private:
  bool is_better(double a, double best) const;

  Optimizer& optimizer_;
  ReduceLROnPlateauOptions options_;
  std::vector<double> min_lrs_;
  double best_;
  std::int64_t num_bad_epochs_ = 0;
  std::int64_t cooldown_counter_ = 0;
  std::int64_t last_epoch_ = 0;
  std::vector<double> last_lr_;
};

}  // namespace weft::optim
