#pragma once
// The reducer: graph-level delta debugging that keeps a finding's signature. From a failing
// case and the finding to keep (symptom, faulty path, localized op kind), passes edit the
// graph and its values — remove nodes (their consumers read the values they computed as new
// inputs), feed a node's consumers its own input, cut outputs, turn parameters into inputs and
// float64 into float32, simplify attributes, shrink shapes and simplify values — and keep an
// edit only when the oracle, in its isolated workers, still shows the same finding. Passes
// repeat until none makes progress. Every candidate is a valid graph: it is checked on the
// engine before any worker sees it.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "weft/ir/execute.h"
#include "weft/ir/graph.h"
#include "weft/oracle/judge.h"
#include "weft/oracle/worker.h"

namespace weft::reduce {

struct ReduceOptions {
  // Parallel oracles (one worker process each) that judge candidates side by side.
  int jobs = 1;
  oracle::WorkerOptions worker;
  int calls = 3;  // calls per path, as in a campaign (nondeterminism needs several)
  // Wall-clock budget of the whole reduction in seconds (0: none). When it runs out the
  // reducer stops with the smallest case that still showed the finding.
  double budget_seconds = 0;
  // Asked between candidates: true stops the reduction as the budget does (a campaign that is
  // told to stop). Empty: never.
  std::function<bool()> should_stop;
  // How many times the original case is judged before it is called flaky.
  int confirm_runs = 2;
  // A hang is judged under this per-run limit (if lower than the worker's): every candidate
  // that still hangs costs the whole limit.
  double hang_time_limit_seconds = 5;
  // Progress lines ("nodes: removed 9 nodes (20 -> 11 nodes)"), called from the reducing
  // thread; empty: silent.
  std::function<void(const std::string&)> progress;
};

// One accepted edit.
struct ReduceStep {
  std::string pass;          // "nodes", "bypass", "outputs", "leaves", "dtypes", "attributes",
                             // "shapes", "values"
  std::string description;   // what the edit did
  std::size_t nodes = 0;     // after the edit
  std::size_t elements = 0;  // elements of every input and parameter, after the edit
};

enum class ReduceStatus {
  Reduced,   // the result shows the finding (it may be the original when nothing was removable)
  Flaky,     // the original case never showed the finding: nothing was reduced
  Unstable,  // the result showed the finding when accepted but not when judged again at the end
};

const char* reduce_status_name(ReduceStatus status);

struct ReduceResult {
  ReduceStatus status = ReduceStatus::Flaky;
  ir::Graph graph;  // the original case unless Reduced/Unstable
  ir::TensorMap values;
  // The verdict of the last judgement of `graph` (its findings include the kept one).
  oracle::Verdict verdict;
  oracle::Finding finding;  // the kept finding as the final judgement reports it
  std::vector<ReduceStep> steps;
  std::size_t nodes_before = 0, nodes_after = 0;
  std::size_t elements_before = 0, elements_after = 0;
  int oracle_checks = 0;     // candidates (and confirmations) judged by the oracle
  int backend_runs = 0;      // worker runs, localization included
  int rejected_locally = 0;  // candidates the engine refused before any worker saw them
  int cache_hits = 0;        // candidates judged before
  double seconds = 0;
  bool budget_exhausted = false;  // the budget ran out or should_stop said stop
};

// Whether `candidate` is the same bug as `target`: same symptom, same path, and (when the
// target was localized) the same op kind.
bool same_finding(const oracle::Finding& candidate, const oracle::Finding& target);

// Reduces the case while it keeps showing `target`. Throws weft::Error only when no worker
// can be started; a path that crashes or hangs is a result like any other.
ReduceResult reduce_case(const ir::Graph& graph, const ir::TensorMap& values,
                         const oracle::Finding& target, const ReduceOptions& options = {});

// Total elements of the graph's inputs and parameters (the "elements" of the log).
std::size_t leaf_elements(const ir::Graph& graph);

}  // namespace weft::reduce
