#pragma once
// The oracle's execution paths behind one interface (DESIGN.md "The oracle"): a backend
// prepares a graph with its leaf values, then is called several times; each call returns the
// outputs and, given cotangents, the gradients of sum_i <outputs[i], cotangents[i]> with
// respect to every floating input and parameter. Failures of the path are results, not
// errors: run_backend() turns them into a BackendResult with an Outcome.
//
// Backends are named by strings that say which PyTorch they run (registry.cpp lists them):
// weft's "engine" and "engine-f64"; LibTorch 1.13's C++ paths "torch", "torchscript*" and
// "torch-cuda"; Debian's Python "python"; PyTorch 2.x's Python paths "torch2-eager",
// "torch2-inductor", ... and its C++ paths "torch2-libtorch", "torch2-cuda", "torch2-aoti",
// ...; and "fault:<kind>@<op>" (weft/oracle/fault.h). A C++ path runs in a worker of a weft
// built against its LibTorch (worker.h routes it); the others run in any worker.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weft/error.h"
#include "weft/ir/execute.h"
#include "weft/ir/graph.h"
#include "weft/tensor.h"

namespace weft::oracle {

// How a run of one backend ended. Crash, Timeout and OutOfMemory come from the worker pool
// (the process died, hung or hit its memory cap); a backend in-process only ever reports Ok,
// Exception or Unavailable.
enum class Outcome { Ok, Exception, Crash, Timeout, OutOfMemory, Unavailable };

// Thrown by a backend whose own child process (the Python interpreter of the torch2 paths)
// died by a signal: the run's outcome is a Crash, as if the worker itself had died, not an
// Exception (a SIGSEGV of PyTorch is a crash whichever process it kills).
class ProcessCrashed : public Error {
 public:
  using Error::Error;
};

std::string_view outcome_name(Outcome outcome);    // "ok", "exception", "crash", ...
Outcome outcome_from_name(std::string_view name);  // throws weft::Error for unknown names

struct CallResult {
  std::vector<Tensor> outputs;  // in graph.outputs() order
  ir::TensorMap gradients;      // by leaf name; empty when the call had no cotangents
  // The case's shape set this call ran (weft/ir/shape_sets.h): 0, or a later one of a
  // dynamic-shape case.
  int shape_set = 0;
};

struct BackendResult {
  std::string backend;
  Outcome outcome = Outcome::Ok;
  // Exception: the path's message (first line, with the node label where the path names
  // one). Crash/Timeout/OutOfMemory: what happened and the tail of the worker's stderr.
  // Unavailable: why.
  std::string message;
  // Where it failed: "prepare", "call 0", "call 1", ..., "shape set 1", ...; empty when Ok.
  std::string phase;
  std::vector<CallResult> calls;  // every call that completed
  double seconds = 0;             // prepare + calls, wall time
  double compile_seconds = 0;     // the part of `seconds` spent compiling, where the path says
};

struct RunSpec {
  int calls = 3;  // compiled paths specialize after warm-up: compare every call
  // One per graph output; empty: forward only (no gradients).
  std::vector<Tensor> cotangents;
  // A dynamic-shape case's later shape sets: after the calls above, one call per later set
  // with its inputs (ir::at_shape_set), without preparing again; entry k - 1 holds set k's
  // cotangents (empty when forward only).
  std::vector<std::vector<Tensor>> shape_set_cotangents;

  // The cotangents of shape set `set` (0: `cotangents`); empty when it has none.
  const std::vector<Tensor>& cotangents_at(std::size_t set) const {
    static const std::vector<Tensor> none;
    if (set == 0) return cotangents;
    return set - 1 < shape_set_cotangents.size() ? shape_set_cotangents[set - 1] : none;
  }
};

// The shape set a failed phase ran ("shape set 2" -> 2; "prepare", "call 1" -> 0).
int shape_set_of_phase(const std::string& phase);

class Backend {
 public:
  virtual ~Backend() = default;
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  virtual std::string name() const = 0;
  // Empty when the path can run here; otherwise why not ("no CUDA device: ...").
  virtual std::string unavailable_reason() const { return {}; }
  // Whether call() computes gradients when given cotangents.
  virtual bool has_gradients() const { return true; }
  // Seconds of the last prepare + calls spent compiling (torch.compile's Dynamo + Inductor).
  virtual double compile_seconds() const { return 0; }
  // Builds what the path needs for `graph` (a compiled module, ...) and keeps `values`.
  // A dynamic-shape case comes with its later shape sets (Value::shape_sets) and the first
  // set's values: the calls run the first set, rebind() moves to the others. Throws (any
  // std::exception) when the path refuses the graph.
  virtual void prepare(const ir::Graph& graph, const ir::TensorMap& values) = 0;
  // One call on the prepared graph with fresh copies of the values. Throws on failure.
  virtual CallResult call(const std::vector<Tensor>& cotangents) = 0;
  // Dynamic shapes: the next calls take these inputs (of other shapes; `graph` is the case at
  // them, parameters unchanged), and the path is not prepared again. False: the path runs the
  // first shape set only (an export whose program specialized a changing dim); throws when it
  // refuses them.
  virtual bool rebind(const ir::Graph& graph, const ir::TensorMap& values) {
    (void)graph;
    (void)values;
    return false;
  }
};

// prepare + spec.calls calls, then one call per later shape set of a dynamic-shape case,
// timing them and catching every exception into the result. An unavailable backend is not run
// (Outcome::Unavailable with its reason).
BackendResult run_backend(Backend& backend, const ir::Graph& graph, const ir::TensorMap& values,
                          const RunSpec& spec);

// The backend called `name` (see above). Throws weft::Error naming the known backends for an
// unknown name, and for a malformed fault spec.
std::unique_ptr<Backend> make_backend(std::string_view name);

struct BackendInfo {
  std::string name;
  std::string unavailable_reason;  // empty when available
  std::string description;         // one line for `weft backends` / `weft replay --help`
};
// Every backend name (fault backends as "fault:<kind>@<op>"), in order. A C++ path of another
// LibTorch is asked of the weft built against it (worker.h's sibling_worker), which starts it.
std::vector<BackendInfo> list_backends();
// The same for the paths this process can run itself (what a sibling answers when asked).
std::vector<BackendInfo> list_local_backends();
// The names alone, in order, without asking any path whether it can run (which starts
// interpreters); fault backends are not among them.
std::vector<std::string> backend_names();

// How a path relates to the others, kept in one table with the names (registry.cpp): the
// judge and the oracle ask this instead of matching names.
struct PathTraits {
  std::string eager;               // the eager path it starts from; empty for engine and faults
  std::vector<std::string> bases;  // the paths it builds on, nearest first
  bool warm_up = false;            // its first call may run another graph than the later ones
  std::string timeout_gap;         // non-empty: a timeout is a capability gap, and why
  // The LibTorch major version a C++ path links (the build of the worker that runs it);
  // 0: any worker runs it (the engine, Python paths, faults).
  int libtorch = 0;
  // It compiles at run time (torch.compile, export, AOTInductor): its runs get the worker's
  // compile allowance on top of the time limit.
  bool compiles = false;
};
// An unknown name gets a compiled path's traits: starts from "torch", has a warm-up.
const PathTraits& path_traits(std::string_view backend);

// The seed every PyTorch path sets (torch.manual_seed) before each call: a path's random ops
// (weft/ir/random.h) draw the same numbers on every call, which the judge checks.
inline constexpr std::uint64_t kTorchSeed = 0;

// The reference and the honest float32 execution the judge measures others against.
inline constexpr const char* kReferenceBackend = "engine-f64";
inline constexpr const char* kEngineBackend = "engine";

}  // namespace weft::oracle
