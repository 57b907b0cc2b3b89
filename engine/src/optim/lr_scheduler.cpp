// Learning-rate schedulers, following torch/optim/lr_scheduler.py (1.13) line by line: the
// chainable get_lr() forms multiply the groups' current lrs, so the sequences match Python's
// to the last bit only when the arithmetic is done in the same order, which it is here.
#include "weft/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "weft/error.h"

// Python rounds every operation; fusing a*b+c into one FMA (which -march=native allows)
// would change the last bit of the lrs, so contraction is off in this file.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace weft::optim {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Python's a % b for b > 0 (the result has b's sign).
std::int64_t floor_mod(std::int64_t a, std::int64_t b) {
  const std::int64_t r = a % b;
  return r < 0 ? r + b : r;
}

// Python's a // b for b > 0.
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return (a - floor_mod(a, b)) / b;
}

// One value per group from a single value or a per-group list (OneCycleLR._format_param).
std::vector<double> per_group(const std::string& name, const Optimizer& optimizer,
                              const std::vector<double>& values, const std::string& what) {
  const std::size_t groups = optimizer.param_groups().size();
  if (values.size() == 1) return std::vector<double>(groups, values[0]);
  if (values.size() != groups) {
    throw Error("expected " + std::to_string(groups) + " " + what + name + ", got " +
                std::to_string(values.size()));
  }
  return values;
}

// OneCycleLR's phase end float(factor * total) - k, rounded in two steps as Python does.
// The volatile keeps GCC from fusing it into an FMA: its optimize pragma skips constructors.
double phase_end(double factor, double total, double k) {
  volatile double scaled = factor * total;
  return scaled - k;
}

}  // namespace

// ----- LRScheduler -----

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (ParamGroup& group : optimizer_.param_groups()) {
    group.options.emplace("initial_lr", group.options.at("lr"));  // Python's setdefault
    base_lrs_.push_back(group.options.at("initial_lr"));
  }
}

void LRScheduler::initial_step() {
  step_count_ = 0;
  step();
}

void LRScheduler::step() {
  ++step_count_;
  ++last_epoch_;
  set_lrs(get_lr());
}

void LRScheduler::step(std::int64_t epoch) {
  ++step_count_;
  last_epoch_ = epoch;
  std::optional<std::vector<double>> values = closed_form_lr();
  set_lrs(values ? *values : get_lr());
}

std::vector<double> LRScheduler::group_lrs() const {
  std::vector<double> lrs;
  for (const ParamGroup& group : optimizer_.param_groups()) lrs.push_back(group.options.at("lr"));
  return lrs;
}

void LRScheduler::set_lrs(const std::vector<double>& lrs) {
  auto& groups = optimizer_.param_groups();
  for (std::size_t i = 0; i < groups.size() && i < lrs.size(); ++i) {
    groups[i].options["lr"] = lrs[i];
  }
  last_lr_ = group_lrs();
}

// ----- StepLR -----

StepLR::StepLR(Optimizer& optimizer, std::int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  // Python fails on the first decay with ZeroDivisionError; weft says so up front.
  if (step_size <= 0) {
    throw Error("Expected positive integer step_size, but got " + std::to_string(step_size));
  }
  initial_step();
}

std::vector<double> StepLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0 || floor_mod(last_epoch_, step_size_) != 0) return lrs;
  for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

std::optional<std::vector<double>> StepLR::closed_form_lr() const {
  std::vector<double> lrs;
  const double k = static_cast<double>(floor_div(last_epoch_, step_size_));
  for (double base : base_lrs_) lrs.push_back(base * std::pow(gamma_, k));
  return lrs;
}

// ----- MultiStepLR -----

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<std::int64_t> milestones, double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  initial_step();
}

std::vector<double> MultiStepLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  const auto count = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  if (count == 0) return lrs;
  const double factor = std::pow(gamma_, static_cast<double>(count));
  for (double& lr : lrs) lr *= factor;
  return lrs;
}

std::optional<std::vector<double>> MultiStepLR::closed_form_lr() const {
  // bisect_right: the number of milestones <= last_epoch.
  const auto passed =
      std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(base * std::pow(gamma_, static_cast<double>(passed)));
  return lrs;
}

// ----- ExponentialLR -----

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma)
    : LRScheduler(optimizer), gamma_(gamma) {
  initial_step();
}

std::vector<double> ExponentialLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) return lrs;
  for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

std::optional<std::vector<double>> ExponentialLR::closed_form_lr() const {
  std::vector<double> lrs;
  for (double base : base_lrs_) {
    lrs.push_back(base * std::pow(gamma_, static_cast<double>(last_epoch_)));
  }
  return lrs;
}

// ----- LinearLR -----

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor,
                   std::int64_t total_iters)
    : LRScheduler(optimizer),
      start_factor_(start_factor),
      end_factor_(end_factor),
      total_iters_(total_iters) {
  if (start_factor > 1.0 || start_factor < 0.0) {
    throw Error("Starting multiplicative factor expected to be between 0 and 1.");
  }
  if (end_factor > 1.0 || end_factor < 0.0) {
    throw Error("Ending multiplicative factor expected to be between 0 and 1.");
  }
  initial_step();
}

std::vector<double> LinearLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) {
    for (double& lr : lrs) lr *= start_factor_;
    return lrs;
  }
  if (last_epoch_ > total_iters_) return lrs;
  // lr_t = lr_{t-1} · factor_t / factor_{t-1}, written as PyTorch does.
  const double delta = end_factor_ - start_factor_;
  const double factor = 1.0 + delta / (static_cast<double>(total_iters_) * start_factor_ +
                                       static_cast<double>(last_epoch_ - 1) * delta);
  for (double& lr : lrs) lr = lr * factor;
  return lrs;
}

std::optional<std::vector<double>> LinearLR::closed_form_lr() const {
  std::vector<double> lrs;
  const double done = static_cast<double>(std::min(total_iters_, last_epoch_));
  for (double base : base_lrs_) {
    lrs.push_back(base * (start_factor_ + (end_factor_ - start_factor_) * done /
                                              static_cast<double>(total_iters_)));
  }
  return lrs;
}

// ----- CosineAnnealingLR -----

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, std::int64_t T_max, double eta_min)
    : LRScheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
  // Python divides by T_max (ZeroDivisionError); weft says so up front.
  if (T_max <= 0) throw Error("Expected positive integer T_max, but got " + std::to_string(T_max));
  initial_step();
}

std::vector<double> CosineAnnealingLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  const double t_max = static_cast<double>(T_max_);
  const double epoch = static_cast<double>(last_epoch_);
  if (last_epoch_ == 0) return lrs;
  if (step_count_ == 1 && last_epoch_ > 0) {
    for (std::size_t i = 0; i < lrs.size(); ++i) {
      lrs[i] = eta_min_ + (base_lrs_[i] - eta_min_) * (1.0 + std::cos(epoch * kPi / t_max)) / 2.0;
    }
    return lrs;
  }
  if (floor_mod(last_epoch_ - 1 - T_max_, 2 * T_max_) == 0) {
    // The bottom of a period: step back up by the first decrement.
    for (std::size_t i = 0; i < lrs.size(); ++i) {
      lrs[i] = lrs[i] + (base_lrs_[i] - eta_min_) * (1.0 - std::cos(kPi / t_max)) / 2.0;
    }
    return lrs;
  }
  const double ratio =
      (1.0 + std::cos(kPi * epoch / t_max)) / (1.0 + std::cos(kPi * (epoch - 1.0) / t_max));
  for (double& lr : lrs) lr = ratio * (lr - eta_min_) + eta_min_;
  return lrs;
}

std::optional<std::vector<double>> CosineAnnealingLR::closed_form_lr() const {
  std::vector<double> lrs;
  const double t_max = static_cast<double>(T_max_);
  const double epoch = static_cast<double>(last_epoch_);
  for (double base : base_lrs_) {
    lrs.push_back(eta_min_ + (base - eta_min_) * (1.0 + std::cos(kPi * epoch / t_max)) / 2.0);
  }
  return lrs;
}

// ----- OneCycleLR -----

OneCycleLR::OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& o)
    : LRScheduler(optimizer), cycle_momentum_(o.cycle_momentum) {
  if (o.total_steps) {
    if (*o.total_steps <= 0) {
      throw Error("Expected positive integer total_steps, but got " +
                  std::to_string(*o.total_steps));
    }
    total_steps_ = *o.total_steps;
  } else if (o.epochs && o.steps_per_epoch) {
    if (*o.epochs <= 0) {
      throw Error("Expected positive integer epochs, but got " + std::to_string(*o.epochs));
    }
    if (*o.steps_per_epoch <= 0) {
      throw Error("Expected positive integer steps_per_epoch, but got " +
                  std::to_string(*o.steps_per_epoch));
    }
    total_steps_ = *o.epochs * *o.steps_per_epoch;
  } else {
    throw Error("You must define either total_steps OR (epochs AND steps_per_epoch)");
  }
  const double total = static_cast<double>(total_steps_);
  if (o.three_phase) {
    phases_ = {{phase_end(o.pct_start, total, 1.0), "initial_lr", "max_lr", "max_momentum",
                "base_momentum"},
               {phase_end(2.0 * o.pct_start, total, 2.0), "max_lr", "initial_lr", "base_momentum",
                "max_momentum"},
               {total - 1.0, "initial_lr", "min_lr", "max_momentum", "max_momentum"}};
  } else {
    phases_ = {{phase_end(o.pct_start, total, 1.0), "initial_lr", "max_lr", "max_momentum",
                "base_momentum"},
               {total - 1.0, "max_lr", "min_lr", "base_momentum", "max_momentum"}};
  }
  if (o.pct_start < 0.0 || o.pct_start > 1.0) {
    throw Error("Expected float between 0 and 1 pct_start, but got " + format_option(o.pct_start));
  }
  if (o.anneal_strategy != "cos" && o.anneal_strategy != "linear") {
    throw Error("anneal_strategy must by one of 'cos' or 'linear', instead got " +
                o.anneal_strategy);
  }
  cosine_ = o.anneal_strategy == "cos";

  const std::vector<double> max_lrs = per_group("max_lr", optimizer, o.max_lr, "values for ");
  std::vector<double> max_momentums;
  std::vector<double> base_momentums;
  if (cycle_momentum_) {
    const GroupOptions& defaults = optimizer.defaults();
    if (defaults.count("momentum") == 0 && defaults.count("beta1") == 0) {
      throw Error("optimizer must support momentum with `cycle_momentum` option enabled");
    }
    momentum_key_ = defaults.count("beta1") != 0 ? "beta1" : "momentum";
    max_momentums = per_group("max_momentum", optimizer, o.max_momentum, "values for ");
    base_momentums = per_group("base_momentum", optimizer, o.base_momentum, "values for ");
  }
  // Python sets these before the base constructor reads initial_lr; here base_lrs follow.
  auto& groups = optimizer.param_groups();
  for (std::size_t i = 0; i < groups.size(); ++i) {
    GroupOptions& g = groups[i].options;
    g["initial_lr"] = max_lrs[i] / o.div_factor;
    g["max_lr"] = max_lrs[i];
    g["min_lr"] = g["initial_lr"] / o.final_div_factor;
    base_lrs_[i] = g["initial_lr"];
    if (cycle_momentum_) {
      g[momentum_key_] = max_momentums[i];
      g["max_momentum"] = max_momentums[i];
      g["base_momentum"] = base_momentums[i];
    }
  }
  initial_step();
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (cosine_) {
    const double cos_out = std::cos(kPi * pct) + 1.0;
    return end + (start - end) / 2.0 * cos_out;
  }
  return (end - start) * pct + start;
}

std::vector<double> OneCycleLR::get_lr() {
  const std::int64_t step_num = last_epoch_;
  if (step_num > total_steps_) {
    throw Error("Tried to step " + std::to_string(step_num + 1) +
                " times. The specified number of total steps is " + std::to_string(total_steps_));
  }
  std::vector<double> lrs;
  for (ParamGroup& group : optimizer().param_groups()) {
    GroupOptions& g = group.options;
    double start_step = 0.0;
    double lr = 0.0;
    double momentum = 0.0;
    for (std::size_t i = 0; i < phases_.size(); ++i) {
      const Phase& phase = phases_[i];
      if (static_cast<double>(step_num) <= phase.end_step || i + 1 == phases_.size()) {
        const double pct =
            (static_cast<double>(step_num) - start_step) / (phase.end_step - start_step);
        lr = anneal(g.at(phase.start_lr), g.at(phase.end_lr), pct);
        if (cycle_momentum_) {
          momentum = anneal(g.at(phase.start_momentum), g.at(phase.end_momentum), pct);
        }
        break;
      }
      start_step = phase.end_step;
    }
    lrs.push_back(lr);
    if (cycle_momentum_) g[momentum_key_] = momentum;
  }
  return lrs;
}

// ----- SequentialLR -----

SequentialLR::SequentialLR(Optimizer& optimizer,
                           std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<std::int64_t> milestones)
    : LRScheduler(optimizer),
      schedulers_(std::move(schedulers)),
      milestones_(std::move(milestones)) {
  for (std::size_t i = 0; i < schedulers_.size(); ++i) {
    if (!schedulers_[i] || &schedulers_[i]->optimizer() != &optimizer) {
      throw Error(
          "Sequential Schedulers expects all schedulers to belong to the same optimizer, but got "
          "schedulers at index " +
          std::to_string(i) + " to be different than the optimizer passed in.");
    }
  }
  if (milestones_.size() + 1 != schedulers_.size()) {
    throw Error(
        "Sequential Schedulers expects number of schedulers provided to be one more than the "
        "number of milestone points, but got number of schedulers " +
        std::to_string(schedulers_.size()) + " and the number of milestones to be equal to " +
        std::to_string(milestones_.size()));
  }
  last_epoch_ = 0;
  // Back to the initial lrs, undo the schedulers' construction steps, and redo the first's.
  for (ParamGroup& group : optimizer.param_groups()) {
    group.options["lr"] = group.options.at("initial_lr");
  }
  for (const auto& scheduler : schedulers_) scheduler->last_epoch_ -= 1;
  schedulers_[0]->initial_step();
  last_lr_ = schedulers_[0]->get_last_lr();
}

void SequentialLR::step() {
  ++last_epoch_;
  const std::size_t idx = static_cast<std::size_t>(
      std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin());
  LRScheduler& scheduler = *schedulers_[idx];
  if (idx > 0 && milestones_[idx - 1] == last_epoch_) {
    scheduler.step(std::int64_t{0});
  } else {
    scheduler.step();
  }
  last_lr_ = scheduler.get_last_lr();
}

// ----- ReduceLROnPlateau -----

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions options)
    : optimizer_(optimizer), options_(std::move(options)) {
  if (options_.factor >= 1.0) throw Error("Factor should be < 1.0.");
  const std::size_t groups = optimizer_.param_groups().size();
  if (options_.min_lr.size() == 1) {
    min_lrs_.assign(groups, options_.min_lr[0]);
  } else if (options_.min_lr.size() == groups) {
    min_lrs_ = options_.min_lr;
  } else {
    throw Error("expected " + std::to_string(groups) + " min_lrs, got " +
                std::to_string(options_.min_lr.size()));
  }
  if (options_.mode != "min" && options_.mode != "max") {
    throw Error("mode " + options_.mode + " is unknown!");
  }
  if (options_.threshold_mode != "rel" && options_.threshold_mode != "abs") {
    throw Error("threshold mode " + options_.threshold_mode + " is unknown!");
  }
  const double inf = std::numeric_limits<double>::infinity();
  best_ = options_.mode == "min" ? inf : -inf;
  for (const ParamGroup& group : optimizer_.param_groups()) {
    last_lr_.push_back(group.options.at("lr"));
  }
}

bool ReduceLROnPlateau::is_better(double a, double best) const {
  const bool rel = options_.threshold_mode == "rel";
  if (options_.mode == "min") {
    return rel ? a < best * (1.0 - options_.threshold) : a < best - options_.threshold;
  }
  return rel ? a > best * (options_.threshold + 1.0) : a > best + options_.threshold;
}

void ReduceLROnPlateau::step(double metric) {
  ++last_epoch_;
  if (is_better(metric, best_)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;  // bad epochs in cooldown do not count
  }
  auto& groups = optimizer_.param_groups();
  if (num_bad_epochs_ > options_.patience) {
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const double old_lr = groups[i].options.at("lr");
      const double new_lr = std::max(old_lr * options_.factor, min_lrs_[i]);
      if (old_lr - new_lr > options_.eps) groups[i].options["lr"] = new_lr;
    }
    cooldown_counter_ = options_.cooldown;
    num_bad_epochs_ = 0;
  }
  last_lr_.clear();
  for (const ParamGroup& group : groups) last_lr_.push_back(group.options.at("lr"));
}

}  // namespace weft::optim

// ----- State dicts -----

namespace weft::optim {
namespace {

using Json = nlohmann::json;

// Non-finite values are stored as Python's json module spells them, since JSON has no
// numbers for them (nlohmann would write null): ReduceLROnPlateau's best starts at ±inf.
Json number_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return value;
}

Json number_list(const std::vector<double>& values) {
  Json out = Json::array();
  for (double v : values) out.push_back(number_value(v));
  return out;
}

std::string shown(const Json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

[[noreturn]] void bad_field(const std::string& owner, const std::string& field,
                            const std::string& problem) {
  throw Error(owner + ".load_state_dict: field '" + field + "': " + problem);
}

// The field name is a string_view: GCC 13's -Wdangling-reference takes a std::string temporary
// made from a literal at the call for one the returned reference might point into.
const Json& member(const Json& object, const std::string& owner, std::string_view field) {
  const auto it = object.find(std::string(field));
  if (it == object.end()) bad_field(owner, std::string(field), "missing");
  return *it;
}

double as_number(const Json& value, const std::string& owner, const std::string& field) {
  if (value.is_number()) return value.get<double>();
  if (value == "Infinity") return std::numeric_limits<double>::infinity();
  if (value == "-Infinity") return -std::numeric_limits<double>::infinity();
  if (value == "NaN") return std::numeric_limits<double>::quiet_NaN();
  bad_field(owner, field, "expected a number, got " + shown(value));
}

std::int64_t as_integer(const Json& value, const std::string& owner, const std::string& field) {
  if (value.is_number_unsigned()) {
    if (value.get<std::uint64_t>() <=
        static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return static_cast<std::int64_t>(value.get<std::uint64_t>());
    }
  } else if (value.is_number_integer()) {
    return value.get<std::int64_t>();
  }
  bad_field(owner, field, "expected an integer, got " + shown(value));
}

double number_field(const Json& state, const std::string& owner, const std::string& field) {
  return as_number(member(state, owner, field), owner, field);
}

std::int64_t integer_field(const Json& state, const std::string& owner, const std::string& field) {
  return as_integer(member(state, owner, field), owner, field);
}

std::int64_t positive_field(const Json& state, const std::string& owner, const std::string& field) {
  const std::int64_t value = integer_field(state, owner, field);
  if (value <= 0) bad_field(owner, field, "expected a positive integer, got " + shown(value));
  return value;
}

bool bool_field(const Json& state, const std::string& owner, const std::string& field) {
  const Json& value = member(state, owner, field);
  if (!value.is_boolean()) bad_field(owner, field, "expected true or false, got " + shown(value));
  return value.get<bool>();
}

std::string choice_field(const Json& state, const std::string& owner, const std::string& field,
                         const std::vector<std::string>& choices) {
  const Json& value = member(state, owner, field);
  if (value.is_string()) {
    for (const std::string& choice : choices) {
      if (value.get<std::string>() == choice) return choice;
    }
  }
  std::string expected;
  for (const std::string& choice : choices) expected += (expected.empty() ? "" : " or ") + choice;
  bad_field(owner, field, "expected " + expected + ", got " + shown(value));
}

const Json& array_field(const Json& state, const std::string& owner, std::string_view field) {
  const Json& value = member(state, owner, field);
  if (!value.is_array()) {
    bad_field(owner, std::string(field), "expected a list, got " + shown(value));
  }
  return value;
}

std::vector<std::int64_t> integer_list(const Json& state, const std::string& owner,
                                       const std::string& field) {
  std::vector<std::int64_t> out;
  for (const Json& item : array_field(state, owner, field)) {
    out.push_back(as_integer(item, owner, field + "[" + std::to_string(out.size()) + "]"));
  }
  return out;
}

// A list with one value per param group of `optimizer`.
std::vector<double> group_list(const Json& state, const std::string& owner,
                               const std::string& field, const Optimizer& optimizer) {
  std::vector<double> out;
  const Json& values = array_field(state, owner, field);
  const std::size_t groups = optimizer.param_groups().size();
  if (values.size() != groups) {
    bad_field(owner, field,
              "has " + std::to_string(values.size()) +
                  " values, one per param group, but the "
                  "optimizer has " +
                  std::to_string(groups) + " param groups");
  }
  for (const Json& item : values) {
    out.push_back(as_number(item, owner, field + "[" + std::to_string(out.size()) + "]"));
  }
  return out;
}

// Checks that `state` is a state dict of a `owner` scheduler.
void check_type(const Json& state, const std::string& owner) {
  if (!state.is_object()) {
    throw Error(owner + ".load_state_dict: expected a state dict (a JSON object), got " +
                shown(state));
  }
  const Json& type = member(state, owner, "type");
  if (type != owner) {
    throw Error(owner + ".load_state_dict: the state dict is of type " +
                (type.is_string() ? type.get<std::string>() : shown(type)) + ", expected " + owner);
  }
}

// OneCycleLR's phases name group options; the names are kept as these literals.
const char* option_name(const Json& phase, const std::string& owner, const std::string& where,
                        const char* key) {
  static const char* const kNames[] = {"initial_lr", "max_lr", "min_lr", "max_momentum",
                                       "base_momentum"};
  const std::string field = where + "." + key;
  const auto it = phase.find(key);
  if (it == phase.end()) bad_field(owner, field, "missing");
  for (const char* name : kNames) {
    if (*it == name) return name;
  }
  bad_field(
      owner, field,
      "expected initial_lr, max_lr, min_lr, max_momentum or base_momentum, got " + shown(*it));
}

}  // namespace

SchedulerState LRScheduler::state_dict() const {
  SchedulerState state = {{"type", type_name()},
                          {"base_lrs", number_list(base_lrs_)},
                          {"last_epoch", last_epoch_},
                          {"_step_count", step_count_},
                          {"_last_lr", number_list(last_lr_)}};
  save_fields(state);
  return state;
}

void LRScheduler::load_state_dict(const SchedulerState& state) {
  const std::string owner = type_name();
  check_type(state, owner);
  const std::int64_t last_epoch = integer_field(state, owner, "last_epoch");
  const std::int64_t step_count = integer_field(state, owner, "_step_count");
  std::vector<double> base_lrs = group_list(state, owner, "base_lrs", optimizer_);
  std::vector<double> last_lr = group_list(state, owner, "_last_lr", optimizer_);
  load_fields(state);  // checks all its fields before setting any
  last_epoch_ = last_epoch;
  step_count_ = step_count;
  base_lrs_ = std::move(base_lrs);
  last_lr_ = std::move(last_lr);
}

void StepLR::save_fields(SchedulerState& state) const {
  state["step_size"] = step_size_;
  state["gamma"] = number_value(gamma_);
}

void StepLR::load_fields(const SchedulerState& state) {
  const std::int64_t step_size = positive_field(state, type_name(), "step_size");
  gamma_ = number_field(state, type_name(), "gamma");
  step_size_ = step_size;
}

void MultiStepLR::save_fields(SchedulerState& state) const {
  state["milestones"] = milestones_;
  state["gamma"] = number_value(gamma_);
}

void MultiStepLR::load_fields(const SchedulerState& state) {
  std::vector<std::int64_t> milestones = integer_list(state, type_name(), "milestones");
  gamma_ = number_field(state, type_name(), "gamma");
  std::sort(milestones.begin(), milestones.end());
  milestones_ = std::move(milestones);
}

void ExponentialLR::save_fields(SchedulerState& state) const {
  state["gamma"] = number_value(gamma_);
}

void ExponentialLR::load_fields(const SchedulerState& state) {
  gamma_ = number_field(state, type_name(), "gamma");
}

void LinearLR::save_fields(SchedulerState& state) const {
  state["start_factor"] = number_value(start_factor_);
  state["end_factor"] = number_value(end_factor_);
  state["total_iters"] = total_iters_;
}

void LinearLR::load_fields(const SchedulerState& state) {
  const double start_factor = number_field(state, type_name(), "start_factor");
  const double end_factor = number_field(state, type_name(), "end_factor");
  const std::int64_t total_iters = integer_field(state, type_name(), "total_iters");
  for (const auto& [field, factor] :
       {std::pair("start_factor", start_factor), std::pair("end_factor", end_factor)}) {
    if (!(factor >= 0.0 && factor <= 1.0)) {
      bad_field(type_name(), field,
                "expected a factor between 0 and 1, got " + format_option(factor));
    }
  }
  start_factor_ = start_factor;
  end_factor_ = end_factor;
  total_iters_ = total_iters;
}

void CosineAnnealingLR::save_fields(SchedulerState& state) const {
  state["T_max"] = T_max_;
  state["eta_min"] = number_value(eta_min_);
}

void CosineAnnealingLR::load_fields(const SchedulerState& state) {
  const std::int64_t T_max = positive_field(state, type_name(), "T_max");
  eta_min_ = number_field(state, type_name(), "eta_min");
  T_max_ = T_max;
}

void OneCycleLR::save_fields(SchedulerState& state) const {
  state["total_steps"] = total_steps_;
  Json phases = Json::array();
  for (const Phase& p : phases_) {
    phases.push_back({{"end_step", number_value(p.end_step)},
                      {"start_lr", p.start_lr},
                      {"end_lr", p.end_lr},
                      {"start_momentum", p.start_momentum},
                      {"end_momentum", p.end_momentum}});
  }
  state["_schedule_phases"] = std::move(phases);
  // PyTorch ≥ 2.2's name; 1.13 kept the bound method itself.
  state["_anneal_func_type"] = cosine_ ? "cos" : "linear";
  state["cycle_momentum"] = cycle_momentum_;
  state["use_beta1"] = std::string(momentum_key_) == "beta1";
}

void OneCycleLR::load_fields(const SchedulerState& state) {
  const std::string owner = type_name();
  const std::int64_t total_steps = positive_field(state, owner, "total_steps");
  std::vector<Phase> phases;
  const Json& saved = array_field(state, owner, "_schedule_phases");
  if (saved.empty()) bad_field(owner, "_schedule_phases", "expected at least one phase, got []");
  for (const Json& item : saved) {
    const std::string field = "_schedule_phases[" + std::to_string(phases.size()) + "]";
    if (!item.is_object()) bad_field(owner, field, "expected a JSON object, got " + shown(item));
    const auto end_step = item.find("end_step");
    if (end_step == item.end()) bad_field(owner, field + ".end_step", "missing");
    phases.push_back(Phase{as_number(*end_step, owner, field + ".end_step"),
                           option_name(item, owner, field, "start_lr"),
                           option_name(item, owner, field, "end_lr"),
                           option_name(item, owner, field, "start_momentum"),
                           option_name(item, owner, field, "end_momentum")});
  }
  const bool cosine = choice_field(state, owner, "_anneal_func_type", {"cos", "linear"}) == "cos";
  const bool cycle_momentum = bool_field(state, owner, "cycle_momentum");
  const char* momentum_key = bool_field(state, owner, "use_beta1") ? "beta1" : "momentum";
  if (cycle_momentum && optimizer().defaults().count(momentum_key) == 0) {
    bad_field(owner, "use_beta1",
              std::string("the state cycles '") + momentum_key + "', which the optimizer lacks");
  }
  total_steps_ = total_steps;
  phases_ = std::move(phases);
  cosine_ = cosine;
  cycle_momentum_ = cycle_momentum;
  momentum_key_ = momentum_key;
}

void SequentialLR::save_fields(SchedulerState& state) const {
  state["_milestones"] = milestones_;
  Json children = Json::array();
  for (const auto& scheduler : schedulers_) children.push_back(scheduler->state_dict());
  state["_schedulers"] = std::move(children);
}

void SequentialLR::load_fields(const SchedulerState& state) {
  const std::string owner = type_name();
  std::vector<std::int64_t> milestones = integer_list(state, owner, "_milestones");
  if (milestones.size() + 1 != schedulers_.size()) {
    bad_field(owner, "_milestones",
              "expected " + std::to_string(schedulers_.size() - 1) + " milestones, got " +
                  std::to_string(milestones.size()));
  }
  const Json& children = array_field(state, owner, "_schedulers");
  if (children.size() != schedulers_.size()) {
    bad_field(owner, "_schedulers",
              "expected the states of " + std::to_string(schedulers_.size()) + " schedulers, got " +
                  std::to_string(children.size()));
  }
  // Each child checks its own state; a later child failing rolls the earlier ones back.
  std::vector<SchedulerState> backups;
  for (const auto& scheduler : schedulers_) backups.push_back(scheduler->state_dict());
  for (std::size_t i = 0; i < schedulers_.size(); ++i) {
    try {
      schedulers_[i]->load_state_dict(children[i]);
    } catch (const Error& e) {
      for (std::size_t j = 0; j < i; ++j) schedulers_[j]->load_state_dict(backups[j]);
      bad_field(owner, "_schedulers[" + std::to_string(i) + "]", e.what());
    }
  }
  milestones_ = std::move(milestones);
}

SchedulerState ReduceLROnPlateau::state_dict() const {
  const double inf = std::numeric_limits<double>::infinity();
  return {{"type", "ReduceLROnPlateau"},
          {"factor", number_value(options_.factor)},
          {"min_lrs", number_list(min_lrs_)},
          {"patience", options_.patience},
          {"cooldown", options_.cooldown},
          {"cooldown_counter", cooldown_counter_},
          {"mode", options_.mode},
          {"threshold", number_value(options_.threshold)},
          {"threshold_mode", options_.threshold_mode},
          {"best", number_value(best_)},
          {"num_bad_epochs", num_bad_epochs_},
          {"mode_worse", number_value(options_.mode == "min" ? inf : -inf)},
          {"eps", number_value(options_.eps)},
          {"last_epoch", last_epoch_},
          {"_last_lr", number_list(last_lr_)}};
}

void ReduceLROnPlateau::load_state_dict(const SchedulerState& state) {
  const std::string owner = "ReduceLROnPlateau";
  check_type(state, owner);
  ReduceLROnPlateauOptions options;
  options.factor = number_field(state, owner, "factor");
  if (!(options.factor < 1.0)) {
    bad_field(owner, "factor", "expected a factor < 1.0, got " + format_option(options.factor));
  }
  options.min_lr = group_list(state, owner, "min_lrs", optimizer_);
  options.patience = integer_field(state, owner, "patience");
  options.cooldown = integer_field(state, owner, "cooldown");
  options.mode = choice_field(state, owner, "mode", {"min", "max"});
  options.threshold = number_field(state, owner, "threshold");
  options.threshold_mode = choice_field(state, owner, "threshold_mode", {"rel", "abs"});
  options.eps = number_field(state, owner, "eps");
  const std::int64_t cooldown_counter = integer_field(state, owner, "cooldown_counter");
  const double best = number_field(state, owner, "best");
  const std::int64_t num_bad_epochs = integer_field(state, owner, "num_bad_epochs");
  const std::int64_t last_epoch = integer_field(state, owner, "last_epoch");
  std::vector<double> last_lr = group_list(state, owner, "_last_lr", optimizer_);
  // mode_worse follows from mode.
  min_lrs_ = options.min_lr;
  options_ = std::move(options);
  cooldown_counter_ = cooldown_counter;
  best_ = best;
  num_bad_epochs_ = num_bad_epochs;
  last_epoch_ = last_epoch;
  last_lr_ = std::move(last_lr);
}

}  // namespace weft::optim
