// The reducer's driver: confirm the finding on the original case, run the passes to a
// fixpoint, judge the result once more.
#include "weft/reduce/reducer.h"

#include <fmt/format.h>

#include <chrono>

#include "evaluator.h"
#include "passes.h"

namespace weft::reduce {

const char* reduce_status_name(ReduceStatus status) {
  switch (status) {
    case ReduceStatus::Reduced:
      return "reduced";
    case ReduceStatus::Flaky:
      return "flaky";
    case ReduceStatus::Unstable:
      return "unstable";
  }
  return "?";
}

std::size_t leaf_elements(const ir::Graph& graph) {
  std::size_t total = 0;
  for (ir::LeafKind kind : {ir::LeafKind::Input, ir::LeafKind::Parameter}) {
    for (ir::ValueId id : graph.leaves(kind)) total += graph.num_elements(id);
  }
  return total;
}

void accept(State& state, Evaluator& evaluator, Candidate candidate, Accepted accepted) {
  state.current = std::move(candidate.edited);
  evaluator.visited(state.current);
  state.finding = std::move(accepted.finding);
  state.verdict = std::move(accepted.report.verdict);
  ReduceStep step{candidate.pass, candidate.description, state.current.graph.nodes().size(),
                  leaf_elements(state.current.graph)};
  if (state.progress) {
    state.progress(fmt::format("{}: {} ({} nodes, {} elements)", step.pass, step.description,
                               step.nodes, step.elements));
  }
  state.steps.push_back(std::move(step));
}

bool accept_greedily(State& state, Evaluator& evaluator,
                     const std::function<std::vector<Candidate>(const State&)>& make) {
  bool changed = false;
  std::size_t position = 0;
  while (!evaluator.exhausted()) {
    std::vector<Candidate> candidates = make(state);
    if (position >= candidates.size()) break;
    std::optional<Accepted> accepted = evaluator.first_showing(candidates, position);
    if (!accepted) break;
    position = accepted->index;
    accept(state, evaluator, std::move(candidates[position]), std::move(*accepted));
    changed = true;
  }
  return changed;
}

ReduceResult reduce_case(const ir::Graph& graph, const ir::TensorMap& values,
                         const oracle::Finding& target, const ReduceOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  Evaluator evaluator(target, options);
  ReduceResult result;
  result.graph = graph;
  result.values = values;
  result.nodes_before = graph.nodes().size();
  result.elements_before = leaf_elements(graph);
  const auto finish = [&](ReduceResult& r) {
    r.nodes_after = r.graph.nodes().size();
    r.elements_after = leaf_elements(r.graph);
    r.oracle_checks = evaluator.checks();
    r.backend_runs = evaluator.backend_runs();
    r.rejected_locally = evaluator.rejected_locally();
    r.cache_hits = evaluator.cache_hits();
    r.budget_exhausted = evaluator.exhausted();
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  };

  // The finding must show on the original case before anything is edited.
  State state;
  state.current = Case{graph, values};
  state.progress = options.progress;
  std::optional<Accepted> confirmed;
  for (int run = 0; run < std::max(1, options.confirm_runs) && !confirmed; ++run) {
    confirmed = evaluator.judge(state.current);
  }
  if (!confirmed) {
    result.status = ReduceStatus::Flaky;
    result.finding = target;
    return finish(result);
  }
  state.finding = confirmed->finding;
  state.verdict = confirmed->report.verdict;
  evaluator.visited(state.current);
  evaluator.set_reference_finite(state.verdict.reference_finite);

  using Pass = bool (*)(State&, Evaluator&);
  const Pass passes[] = {remove_nodes_pass, bypass_pass, cut_outputs_pass,
                         parameters_pass,   dtypes_pass, attributes_pass,
                         shapes_pass,       values_pass, forms_pass};
  bool progress = true;
  while (progress && !evaluator.exhausted()) {
    progress = false;
    for (Pass pass : passes) {
      if (evaluator.exhausted()) break;
      progress = pass(state, evaluator) || progress;
    }
  }

  result.graph = state.current.graph;
  result.values = state.current.values;
  result.steps = state.steps;
  result.verdict = state.verdict;
  result.finding = state.finding;
  result.status = ReduceStatus::Reduced;
  if (!state.steps.empty()) {
    // Every step showed the finding once; the result must show it again.
    std::optional<Accepted> again = evaluator.judge(state.current);
    if (!again) again = evaluator.judge(state.current);
    if (again) {
      result.verdict = again->report.verdict;
      result.finding = again->finding;
    } else {
      result.status = ReduceStatus::Unstable;
    }
  }
  return finish(result);
}

}  // namespace weft::reduce
