// Backend names → constructors, the list `weft backends` prints, and run_backend(), which
// turns every failure of a path into a result.
#include <array>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <new>
#include <string>

#include "backends/backends.h"
#include "weft/error.h"
#include "weft/oracle/torch_info.h"

namespace weft::oracle {

namespace {

struct Entry {
  const char* name;
  const char* description;
  const char* eager;  // PathTraits::eager
  // PathTraits::bases, nearest first: optimize_for_inference runs on the frozen module;
  // freezing, fusers and the legacy executor start from the scripted module and its
  // profiling executor.
  std::array<const char*, 2> bases;
  bool warm_up;  // TorchScript's profiling run, compilers that specialize after warm-up
  const char* timeout_gap;
};

// NNC's fused groups run in its IR interpreter here (no LLVM in this LibTorch): slow enough on
// large tensors that a hang cannot be told from its speed.
constexpr const char* kNncInterpreter = "timed out in NNC's IR interpreter";

const Entry kBackends[] = {
    {"engine-f64", "weft's engine in float64: the reference", "", {}, false, ""},
    {"engine", "weft's engine in float32: the honest float32 execution", "", {}, false, ""},
    {"torch", "LibTorch eager on the CPU", "torch", {}, false, ""},
    {"torchscript",
     "TorchScript compiled from emitted source, profiling executor",
     "torch",
     {},
     true,
     ""},
    {"torchscript-frozen",
     "TorchScript after torch::jit::freeze (forward only)",
     "torch",
     {"torchscript"},
     true,
     ""},
    {"torchscript-ofi",
     "TorchScript after freeze + optimize_for_inference (forward only)",
     "torch",
     {"torchscript-frozen", "torchscript"},
     true,
     ""},
    {"torchscript-nnc",
     "TorchScript with the TensorExpr fuser (NNC interpreter, no LLVM)",
     "torch",
     {"torchscript"},
     true,
     kNncInterpreter},
    {"torchscript-legacy",
     "TorchScript legacy fuser, compiles C++ at run time (opt-in)",
     "torch",
     {"torchscript"},
     true,
     ""},
    {"python",
     "the emitted PyTorch program in a Python interpreter ($WEFT_PYTHON)",
     "torch",
     {},
     false,
     ""},
    {"torch2-eager",
     "PyTorch 2.x eager: the emitted program in .venv's Python",
     "torch2-eager",
     {},
     false,
     ""},
    {"torch2-inductor",
     "PyTorch 2.x torch.compile with Inductor",
     "torch2-eager",
     {"torch2-aot-eager"},
     true,
     ""},
    {"torch2-dynamic",
     "PyTorch 2.x torch.compile(dynamic=True) with Inductor",
     "torch2-eager",
     {"torch2-inductor", "torch2-aot-eager"},
     true,
     ""},
    {"torch2-aot-eager",
     "PyTorch 2.x torch.compile with aot_eager (Dynamo + AOTAutograd)",
     "torch2-eager",
     {},
     true,
     ""},
    {"torch2-export", "PyTorch 2.x torch.export's ExportedProgram", "torch2-eager", {}, false, ""},
    {"torch2-aoti-python",
     "PyTorch 2.x AOTInductor package, loaded in Python (forward only)",
     "torch2-eager",
     {"torch2-export"},
     false,
     ""},
    {"torch-cuda", "LibTorch eager on a CUDA device", "torch", {}, false, ""},
};

std::string first_line(std::string text) {
  const auto end = text.find('\n');
  if (end != std::string::npos) text.resize(end);
  return text;
}

class UnavailableBackend final : public Backend {
 public:
  UnavailableBackend(std::string name, std::string reason)
      : name_(std::move(name)), reason_(std::move(reason)) {}
  std::string name() const override { return name_; }
  std::string unavailable_reason() const override { return reason_; }
  void prepare(const ir::Graph&, const ir::TensorMap&) override { throw Error(reason_); }
  CallResult call(const std::vector<Tensor>&) override { throw Error(reason_); }

 private:
  std::string name_;
  std::string reason_;
};

}  // namespace

std::unique_ptr<Backend> make_backend(std::string_view name) {
  if (name == "engine-f64") return make_engine_backend(true);
  if (name == "engine") return make_engine_backend(false);
  if (name == "torch") return make_torch_eager_backend();
  if (name == "torchscript") return make_torchscript_backend(ScriptVariant::Script);
  if (name == "torchscript-frozen") return make_torchscript_backend(ScriptVariant::Frozen);
  if (name == "torchscript-ofi") {
    return make_torchscript_backend(ScriptVariant::OptimizeForInference);
  }
  if (name == "torchscript-nnc") return make_torchscript_backend(ScriptVariant::Nnc);
  if (name == "torchscript-legacy") return make_torchscript_backend(ScriptVariant::Legacy);
  if (auto python = make_python_backend(name)) return python;
  if (name == "torch-cuda") {
    return std::make_unique<UnavailableBackend>("torch-cuda", torch_cuda_unavailable_reason());
  }
  if (name.substr(0, 6) == "fault:") return make_fault_backend(parse_fault_backend_name(name));
  std::string known;
  for (const Entry& entry : kBackends) known += std::string(known.empty() ? "" : ", ") + entry.name;
  throw Error("unknown backend '" + std::string(name) + "' (known: " + known +
              ", fault:<kind>@<op>)");
}

std::vector<BackendInfo> list_backends() {
  std::vector<BackendInfo> result;
  for (const Entry& entry : kBackends) {
    result.push_back(
        {entry.name, make_backend(entry.name)->unavailable_reason(), entry.description});
  }
  result.push_back(
      {"fault:<kind>@<op>", "", "the float32 engine with one op made faulty (testing the oracle)"});
  return result;
}

const PathTraits& path_traits(std::string_view backend) {
  // Built once: the judge asks for every result and finding of every case.
  static const std::map<std::string, PathTraits, std::less<>> table = [] {
    std::map<std::string, PathTraits, std::less<>> traits;
    for (const Entry& entry : kBackends) {
      PathTraits& path = traits[entry.name];
      path = {entry.eager, {}, entry.warm_up, entry.timeout_gap};
      for (const char* base : entry.bases) {
        if (base) path.bases.emplace_back(base);
      }
    }
    return traits;
  }();
  static const PathTraits fault{};
  static const PathTraits unknown{"torch", {}, true, ""};
  if (backend.substr(0, 6) == "fault:") return fault;
  const auto found = table.find(backend);
  return found == table.end() ? unknown : found->second;
}

BackendResult run_backend(Backend& backend, const ir::Graph& graph, const ir::TensorMap& values,
                          const RunSpec& spec) {
  BackendResult result;
  result.backend = backend.name();
  if (std::string reason = backend.unavailable_reason(); !reason.empty()) {
    result.outcome = Outcome::Unavailable;
    result.message = std::move(reason);
    return result;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Tensor> no_cotangents;
  const std::vector<Tensor>& cotangents = backend.has_gradients() ? spec.cotangents : no_cotangents;
  result.phase = "prepare";
  try {
    backend.prepare(graph, values);
    for (int i = 0; i < spec.calls; ++i) {
      result.phase = "call " + std::to_string(i);
      result.calls.push_back(backend.call(cotangents));
    }
    result.phase.clear();
  } catch (const std::bad_alloc&) {
    result.outcome = Outcome::OutOfMemory;
    result.message = "out of memory (std::bad_alloc)";
  } catch (const std::exception& e) {
    result.message = first_line(e.what());
    // Allocation failures under the worker's memory cap, as the engine and LibTorch word them.
    const bool memory = result.message.find("out of memory") != std::string::npos ||
                        result.message.find("can't allocate memory") != std::string::npos;
    result.outcome = memory ? Outcome::OutOfMemory : Outcome::Exception;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.compile_seconds = backend.compile_seconds();
  return result;
}

}  // namespace weft::oracle
