// Sampling first, Z3 second; the Z3 model is read back and replayed through the sampler, so
// every accepted result has passed the concrete checks.
#include "spec/solve.h"

#include <algorithm>

namespace weft::gen {

namespace {

bool matches(const std::vector<std::vector<std::int64_t>>& got,
             const std::vector<std::vector<std::int64_t>>& target) {
  if (target.empty()) return true;
  if (got.size() < target.size()) return false;
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (got[i] != target[i]) return false;
  }
  return true;
}

}  // namespace

// The plain SMT kernel: push and assumptions run on it in any case, and the default solver
// also rebuilds a tactic pipeline on the first check after each reset (per model), which cost
// about six times the kernel's own start.
RuleSolver::RuleSolver(unsigned z3_rlimit, unsigned z3_timeout_ms) {
  reset(z3_rlimit, z3_timeout_ms);
}

void RuleSolver::reset(unsigned z3_rlimit, unsigned z3_timeout_ms) {
  solver_.reset();
  ctx_.reset();
  z3_rlimit_ = z3_rlimit;
  z3_timeout_ms_ = z3_timeout_ms;
  stats_ = SolveStats{};
}

// Made on the first solve after a reset: most models need no Z3, and a context costs about
// 2.5 ms to make (the generator's benchmark went from 240 to 142 five-node models a second
// when every reset made one).
void RuleSolver::start_z3() {
  if (solver_) return;
  ctx_ = std::make_unique<z3::context>();
  solver_ = std::make_unique<z3::solver>(*ctx_, z3::solver::simple());
  z3::params p(*ctx_);
  // Resources, not time, end a check (see GeneratorOptions::z3_rlimit).
  p.set("rlimit", z3_rlimit_);
  p.set("timeout", z3_timeout_ms_);
  p.set("random_seed", 7u);
  // Z3 otherwise swaps in its own SIGINT handler around every check; with several generating
  // threads the swaps race and a Ctrl-C of `weft fuzz` lands in a stale handler (a crash
  // instead of a graceful stop). The campaign handles SIGINT itself.
  p.set("ctrl_c", false);
  solver_->set(p);
}

std::optional<std::map<std::string, std::int64_t>> RuleSolver::solve(const Encoder& encoder) {
  ++stats_.z3_calls;
  solver_->push();
  for (const z3::expr& c : encoder.constraints()) solver_->add(c);
  // The draws as assumptions: drop the ones in an unsat core until the rest is satisfiable,
  // so the solution stays close to the random draws instead of Z3's smallest values.
  std::vector<z3::expr> wanted = encoder.preferences();
  std::optional<std::map<std::string, std::int64_t>> result;
  // Most calls come from insertions no shapes can satisfy (a backward op that cannot reach
  // its target): one check without the draws says so, where peeling unsat cores would take
  // several.
  const z3::check_result hard = solver_->check();
  if (hard != z3::sat) {
    ++(hard == z3::unsat ? stats_.z3_unsat : stats_.z3_unknown);
    solver_->pop();
    return result;
  }
  for (int round = 0; round < 8; ++round) {
    z3::expr_vector assumptions(*ctx_);
    for (const z3::expr& e : wanted) assumptions.push_back(e);
    const z3::check_result r = solver_->check(assumptions);
    if (r == z3::sat) {
      ++stats_.z3_sat;
      const z3::model model = solver_->get_model();
      std::map<std::string, std::int64_t> values;
      for (const auto& [name, var] : encoder.unknowns()) {
        std::int64_t v = 0;
        model.eval(var, true).is_numeral_i64(v);
        values.emplace(name, v);
      }
      result = std::move(values);
      break;
    }
    if (r == z3::unknown) {
      ++stats_.z3_unknown;
      break;
    }
    const z3::expr_vector core = solver_->unsat_core();
    if (core.empty()) {
      ++stats_.z3_unsat;
      break;
    }
    std::vector<z3::expr> kept;
    for (const z3::expr& e : wanted) {
      bool in_core = false;
      for (unsigned i = 0; i < core.size() && !in_core; ++i) in_core = z3::eq(core[i], e);
      if (!in_core) kept.push_back(e);
    }
    if (kept.size() == wanted.size()) {
      ++stats_.z3_unsat;
      break;
    }
    wanted = std::move(kept);
  }
  solver_->pop();
  return result;
}

std::optional<RuleResult> RuleSolver::run(const OpSpec& spec,
                                          const std::vector<InputBinding>& inputs,
                                          std::mt19937_64& rng, const Bounds& bounds, int samples,
                                          bool use_z3,
                                          const std::vector<std::vector<std::int64_t>>& target) {
  for (int attempt = 0; attempt < samples; ++attempt) {
    ++stats_.samples;
    Draws draws(rng);
    Sampler sampler(spec, inputs, draws, bounds, nullptr, target.empty() ? nullptr : &target[0]);
    try {
      spec.sample(sampler);
    } catch (const Rejected&) {
      // Rejected before any draw, with every input's shape given: every other draw and Z3
      // (whose constraints are then constants) would reject it too.
      if (draws.count() == 0 && target.empty() &&
          std::all_of(inputs.begin(), inputs.end(),
                      [](const InputBinding& b) { return !b.present || b.shape.has_value(); })) {
        return std::nullopt;
      }
      continue;
    }
    if (!matches(sampler.output_shapes(), target)) continue;
    return RuleResult{sampler.input_shapes(), sampler.output_shapes(), sampler.attrs(), false};
  }
  if (!use_z3) return std::nullopt;
  start_z3();
  Draws draws(rng);
  Encoder encoder(*ctx_, spec, inputs, draws, bounds, target);
  try {
    spec.encode(encoder);
  } catch (const Rejected&) {
    return std::nullopt;  // a concrete choice (rank, drawn option) cannot work
  }
  if (encoder.infeasible()) return std::nullopt;
  const auto model = solve(encoder);
  if (!model) return std::nullopt;
  Sampler pinned(spec, inputs, draws, bounds, &*model);
  try {
    spec.sample(pinned);
  } catch (const Rejected&) {
    ++stats_.disagreements;  // the integer and Z3 readings of the rule differ: a spec bug
    return std::nullopt;
  }
  if (!matches(pinned.output_shapes(), target)) return std::nullopt;
  return RuleResult{pinned.input_shapes(), pinned.output_shapes(), pinned.attrs(), true};
}

}  // namespace weft::gen
