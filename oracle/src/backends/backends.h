#pragma once
// Constructors of the oracle's backends, one file each under oracle/src/backends/; the
// registry (registry.cpp) maps backend names to them. Private to the oracle library.

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>

#include "weft/oracle/backend.h"
#include "weft/oracle/fault.h"

namespace weft::oracle {

// "engine" (float32) and "engine-f64" (every floating value in float64: the reference).
std::unique_ptr<Backend> make_engine_backend(bool float64);
// One engine call of the engine-based backends: forward, and gradients when given cotangents.
CallResult engine_call(const ir::Graph& graph, const ir::TensorMap& values,
                       const std::vector<Tensor>& cotangents, const ir::ExecutionOptions& options);
// LibTorch eager through torch_eager.cpp's lowering, on the CPU ("torch", "torch2-libtorch")
// or on a CUDA device ("torch-cuda", "torch2-cuda"; unavailable without one).
std::unique_ptr<Backend> make_torch_eager_backend(std::string_view name, bool cuda);

// "torch2-aoti" and "torch2-aoti-cuda" (aoti.cpp, LibTorch >= 2.6; aoti_absent.cpp before):
// the AOTInductor package that the PyTorch 2.x interpreter compiles (make_aoti_packager),
// loaded and run from C++ with torch::inductor::AOTIModelPackageLoader.
std::unique_ptr<Backend> make_aoti_backend(std::string_view name, bool cuda);

// torch.export + torch._inductor.aoti_compile_and_package of a graph, in a runner of the
// PyTorch 2.x interpreter (python.cpp). The package's parameters are constants.
class AotiPackager {
 public:
  virtual ~AotiPackager() = default;
  virtual std::string unavailable_reason() const = 0;
  // The .pt2 package's path, valid until the next call; throws the runner's error.
  virtual std::string package(const ir::Graph& graph, const ir::TensorMap& values) = 0;
  virtual double compile_seconds() const = 0;  // of the last package()
  // Dynamic shapes: whether the last package takes later shape set `set` (its export kept the
  // dims that change dynamic).
  virtual bool runs_shape_set(std::size_t set) const = 0;
};
std::unique_ptr<AotiPackager> make_aoti_packager(bool cuda);

// The TorchScript paths (torchscript.cpp). Each variant is built from a fresh clone of a
// module that has never run (TOOLCHAIN.md), so the variant's own plan is what executes.
enum class ScriptVariant {
  Script,                // "torchscript": the profiling executor
  Frozen,                // "torchscript-frozen": after torch::jit::freeze
  OptimizeForInference,  // "torchscript-ofi": freeze + optimize_for_inference
  Nnc,                   // "torchscript-nnc": TensorExpr fuser on (NNC's interpreter, no LLVM)
  Legacy,                // "torchscript-legacy": legacy fuser + executor (opt-in)
};
std::unique_ptr<Backend> make_torchscript_backend(ScriptVariant variant);

// "python" and "torch2-*" (python.cpp): the emitted PyTorch program in a Python interpreter
// subprocess, eager or compiled; nullptr for another name.
std::unique_ptr<Backend> make_python_backend(std::string_view name);
// Whether the PyTorch 2.x interpreter is installed ($WEFT_TORCH2_PYTHON, or .venv's that
// scripts/setup-torch2 did not mark unavailable): files only, no interpreter is started.
bool torch2_interpreter_present();
// Removes the runner directories (Inductor caches: MBs each) of the worker process `worker`,
// which has exited: a worker killed by its parent never runs the destructors that would.
void remove_runner_directories_of(pid_t worker);
// The interpreter of the Python paths (Debian's PyTorch 1.13, or 2.x with `torch2`) and its
// torch's version, read from package metadata (fast: torch is not imported); `why_not` when
// it has none.
struct InterpreterFacts {
  std::string path;
  std::string version;
  std::string why_not;
};
InterpreterFacts python_interpreter_facts(bool torch2);

// "fault:<kind>@<op>" (fault.cpp): the engine in float32 with one op made faulty.
std::unique_ptr<Backend> make_fault_backend(const FaultSpec& spec);

}  // namespace weft::oracle
