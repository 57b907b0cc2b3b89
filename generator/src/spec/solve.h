#pragma once
// Running a spec's rule: the sampler first (cheap), then Z3 on the encoded rule when sampling
// keeps failing. One context and one solver serve every attempt (push/pop), with a time budget
// per check so that generation never hangs.
#include <z3++.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "spec/builder.h"

namespace weft::gen {

// The concrete outcome of a rule: every input's shape, the attributes, the output shapes.
struct RuleResult {
  std::vector<std::vector<std::int64_t>> input_shapes;
  std::vector<std::vector<std::int64_t>> output_shapes;
  ir::Attributes attrs;
  bool solved_by_z3 = false;
};

struct SolveStats {
  std::int64_t samples = 0;
  std::int64_t z3_calls = 0;
  std::int64_t z3_sat = 0;
  std::int64_t z3_unsat = 0;
  std::int64_t z3_unknown = 0;  // timeouts
  // Z3 models the sampler then rejected: the two readings of a rule disagree (a spec bug).
  std::int64_t disagreements = 0;
};

class RuleSolver {
 public:
  explicit RuleSolver(unsigned z3_rlimit = 100000, unsigned z3_timeout_ms = 10000);
  // Forgets everything Z3 learned and zeroes the stats: what follows depends only on its inputs.
  // A fresh context too: Z3's models depend on the ids of the terms its context created before
  // (a reused context gave a max_pool3d of another kernel to the same seed after other models).
  void reset(unsigned z3_rlimit, unsigned z3_timeout_ms);

  // Tries `samples` random draws, then (when `use_z3`) one Z3 solve. `target`: required output
  // shapes (backward insertion). nullopt when nothing satisfies the rule within the budgets.
  std::optional<RuleResult> run(const OpSpec& spec, const std::vector<InputBinding>& inputs,
                                std::mt19937_64& rng, const Bounds& bounds, int samples,
                                bool use_z3,
                                const std::vector<std::vector<std::int64_t>>& target = {});

  const SolveStats& stats() const { return stats_; }

 private:
  std::optional<std::map<std::string, std::int64_t>> solve(const Encoder& encoder);
  void start_z3();

  unsigned z3_rlimit_ = 0;
  unsigned z3_timeout_ms_ = 0;

  // Declared in this order so that the solver goes before its context.
  std::unique_ptr<z3::context> ctx_;
  std::unique_ptr<z3::solver> solver_;
  SolveStats stats_;
};

}  // namespace weft::gen
