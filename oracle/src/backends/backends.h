#pragma once
// Constructors of the oracle's backends, one file each under oracle/src/backends/; the
// registry (registry.cpp) maps backend names to them. Private to the oracle library.

#include <memory>
#include <string_view>

#include "weft/oracle/backend.h"
#include "weft/oracle/fault.h"

namespace weft::oracle {

// "engine" (float32) and "engine-f64" (every floating value in float64: the reference).
std::unique_ptr<Backend> make_engine_backend(bool float64);
// One engine call of the engine-based backends: forward, and gradients when given cotangents.
CallResult engine_call(const ir::Graph& graph, const ir::TensorMap& values,
                       const std::vector<Tensor>& cotangents, const ir::ExecutionOptions& options);
// "torch": LibTorch eager on the CPU (torch_eager.cpp's lowering).
std::unique_ptr<Backend> make_torch_eager_backend();

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

// "fault:<kind>@<op>" (fault.cpp): the engine in float32 with one op made faulty.
std::unique_ptr<Backend> make_fault_backend(const FaultSpec& spec);

}  // namespace weft::oracle
