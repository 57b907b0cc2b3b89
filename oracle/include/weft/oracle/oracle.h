#pragma once
// The oracle's driver: runs one case on every chosen backend in an isolated worker, judges
// the results (weft/oracle/judge.h) and localizes each finding to the first node that shows
// it. What `weft replay`, campaigns and the reducer call.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "weft/ir/execute.h"
#include "weft/ir/graph.h"
#include "weft/oracle/backend.h"
#include "weft/oracle/judge.h"
#include "weft/oracle/worker.h"

namespace weft::oracle {

struct VjpGraph;  // oracle/src/vjp.h

// The available backends run by default: the engine pair, LibTorch 1.13's eager and TorchScript
// paths (the legacy fuser only when asked for, CUDA when present); with `torch2` (campaigns and
// replay), also PyTorch 2.x's where its interpreter is installed: eager, torch.compile
// (Inductor, dynamic=True, aot_eager), torch.export and AOTInductor (from C++ where a LibTorch
// 2.x weft exists, else from Python), and their CUDA versions in a LibTorch 2.x weft that sees
// a device. Judged by files, without starting an interpreter.
std::vector<std::string> default_backends(bool torch2 = false);

// Splits "torch,torchscript-ofi" and checks every name (weft::Error naming the unknown one).
// The reference and the float32 engine are added when missing: the judge needs them.
std::vector<std::string> parse_backend_list(const std::string& text);

// `options` with JudgeOptions::accept_tie set for this case: an argmax/argmin index (or max/min
// index output) is accepted where the float64 reference's input holds the same extreme value.
// The rule refers to `graph` and `values`, which must outlive its use.
JudgeOptions with_tie_rule(JudgeOptions options, const ir::Graph& graph,
                           const ir::TensorMap& values);

// `options` with the tie rule and the case's rounding model (weft/oracle/rounding.h, for the
// same cotangents the paths ran with): what the oracle judges every case with.
JudgeOptions with_case_rules(JudgeOptions options, const ir::Graph& graph,
                             const ir::TensorMap& values, const std::vector<Tensor>& cotangents);

// What every path of a case runs: `calls` calls and, with `gradients`, random cotangents (of
// `cotangent_seed`; seed + k for later shape set k of a dynamic-shape case).
RunSpec make_run_spec(const ir::Graph& graph, const ir::TensorMap& values, int calls,
                      bool gradients, std::uint64_t cotangent_seed);

// The verdict on every path's run of a case (run_backend with `spec`): judge() with the case's
// rules, the reference blamed where finite differences side with eager, and a dynamic-shape
// case's sets each judged at their own shapes and merged (a later set adds only the paths not
// yet at fault, as dynamic-shape findings).
Verdict judge_run(const ir::Graph& graph, const ir::TensorMap& values,
                  const std::vector<BackendResult>& results, const RunSpec& spec,
                  const JudgeOptions& options);

struct OracleOptions {
  std::vector<std::string> backends = default_backends();
  WorkerOptions worker;
  int calls = 3;
  bool gradients = true;
  std::uint64_t cotangent_seed = 0x5eed;
  bool localize = true;
  JudgeOptions judge;
};

struct CaseReport {
  Verdict verdict;
  std::vector<BackendResult> results;  // in options.backends order
  int backend_runs = 0;                // worker runs, localization included
  // Wall time of the three phases: running the backends (worker round trips included),
  // judging, and localizing the findings.
  double run_seconds = 0;
  double judge_seconds = 0;
  double localize_seconds = 0;
};

class Oracle {
 public:
  explicit Oracle(OracleOptions options = {});

  // A forward-only case (graph.requires_grad() false) runs without gradients on every path.
  CaseReport check(const ir::Graph& graph, const ir::TensorMap& values);

  // Starts the worker process ahead of the first check (Worker::warm_up).
  void warm_up() { worker_.warm_up(); }

  const OracleOptions& options() const { return options_; }
  int worker_starts() const { return worker_.starts(); }

 private:
  // Runs the reference, the float32 engine and `backend` on `graph` and judges them: does
  // `finding`'s symptom show on that backend?
  bool shows(const ir::Graph& graph, const ir::TensorMap& values, const Finding& finding,
             int& runs);
  // `slowest_ok` is the longest successful run of the case: a hang is bisected under a limit
  // of a few times that instead of the full time limit.
  void localize(const ir::Graph& graph, const ir::TensorMap& values, Finding& finding,
                double slowest_ok, int& runs);
  // The node whose vector-Jacobian product the path gets wrong when each node runs alone on
  // the reference's inputs and incoming gradient; nullopt when no node alone shows it.
  std::optional<std::size_t> localize_gradient(const ir::Graph& graph, const ir::TensorMap& values,
                                               const Finding& finding, int& runs);
  // After bisection stopped at `node`: the producer of one of its inputs whose derivative
  // breaks next to a stand-in consumer too (compilers differentiate groups of nodes).
  std::optional<std::size_t> blame_a_producer(const ir::Graph& graph, const ir::TensorMap& values,
                                              const Finding& finding, std::size_t node, int& runs);
  bool is_gradient_finding(const Finding& finding) const;
  // Whether the case's runs compute gradients: asked for, and the case is not forward-only.
  bool gradients(const ir::Graph& graph) const {
    return options_.gradients && graph.requires_grad();
  }
  // The cotangents of every shape set (none for a forward-only case) and the call count.
  RunSpec run_spec(const ir::Graph& graph, const ir::TensorMap& values) const;
  // The verdict on the results of every path: a dynamic-shape case's sets are judged each at
  // its own shapes and merged (a later set adds only paths not yet at fault).
  Verdict judge_case(const ir::Graph& graph, const ir::TensorMap& values,
                     const std::vector<BackendResult>& results, const RunSpec& spec) const;
  // Runs a node-alone graph (VjpGraph, oracle/src/vjp.h) on the reference, the float32 engine
  // and `backend`, and judges it; nullopt when no worker could run it.
  std::optional<Verdict> judge_alone(const VjpGraph& problem, const std::string& backend,
                                     int& runs);

  OracleOptions options_;
  Worker worker_;
};

// The graph cut after node `last` (inclusive): nodes 0..last; their values that no node of the
// cut reads, that a node after the cut reads, or that are outputs of `graph` become its
// outputs; leaves no node of the cut uses are dropped. Used by localization.
ir::Graph prefix_graph(const ir::Graph& graph, std::size_t last);

}  // namespace weft::oracle
