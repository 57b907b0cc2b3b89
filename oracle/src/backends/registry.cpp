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
#include "weft/ir/shape_sets.h"
#include "weft/oracle/torch_info.h"
#include "weft/oracle/worker.h"

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
  int libtorch;           // PathTraits::libtorch: the LibTorch a C++ path links; 0: any worker
  bool compiles = false;  // PathTraits::compiles
};

// NNC's fused groups run in its IR interpreter here (no LLVM in this LibTorch): slow enough on
// large tensors that a hang cannot be told from its speed.
constexpr const char* kNncInterpreter = "timed out in NNC's IR interpreter";

const Entry kBackends[] = {
    {"engine-f64", "weft's engine in float64: the reference", "", {}, false, "", 0},
    {"engine", "weft's engine in float32: the honest float32 execution", "", {}, false, "", 0},
    {"torch", "LibTorch 1.x eager on the CPU", "torch", {}, false, "", 1},
    {"torchscript",
     "LibTorch 1.x TorchScript compiled from emitted source, profiling executor",
     "torch",
     {},
     true,
     "",
     1},
    {"torchscript-frozen",
     "LibTorch 1.x TorchScript after torch::jit::freeze (forward only)",
     "torch",
     {"torchscript"},
     true,
     "",
     1},
    {"torchscript-ofi",
     "LibTorch 1.x TorchScript after freeze + optimize_for_inference (forward only)",
     "torch",
     {"torchscript-frozen", "torchscript"},
     true,
     "",
     1},
    {"torchscript-nnc",
     "LibTorch 1.x TorchScript with the TensorExpr fuser (NNC interpreter, no LLVM)",
     "torch",
     {"torchscript"},
     true,
     kNncInterpreter,
     1},
    {"torchscript-legacy",
     "LibTorch 1.x TorchScript legacy fuser, compiles C++ at run time (opt-in)",
     "torch",
     {"torchscript"},
     true,
     "",
     1},
    {"torch-cuda", "LibTorch 1.x eager on a CUDA device", "torch-cuda", {}, false, "", 1},
    {"python",
     "the emitted PyTorch program in Debian's Python, PyTorch 1.13 ($WEFT_PYTHON)",
     "torch",
     {},
     false,
     "",
     0},
    {"torch2-eager",
     "PyTorch 2.x eager: the emitted program in .venv's Python ($WEFT_TORCH2_PYTHON)",
     "torch2-eager",
     {},
     false,
     "",
     0},
    {"torch2-inductor",
     "PyTorch 2.x torch.compile with Inductor",
     "torch2-eager",
     {"torch2-aot-eager"},
     true,
     "",
     0,
     true},
    {"torch2-dynamic",
     "PyTorch 2.x torch.compile(dynamic=True) with Inductor",
     "torch2-eager",
     {"torch2-inductor", "torch2-aot-eager"},
     true,
     "",
     0,
     true},
    {"torch2-aot-eager",
     "PyTorch 2.x torch.compile with aot_eager (Dynamo + AOTAutograd)",
     "torch2-eager",
     {},
     true,
     "",
     0,
     true},
    {"torch2-export",
     "PyTorch 2.x torch.export's ExportedProgram",
     "torch2-eager",
     {},
     false,
     "",
     0,
     true},
    {"torch2-aoti-python",
     "PyTorch 2.x AOTInductor package, loaded in Python (forward only)",
     "torch2-eager",
     {"torch2-export"},
     false,
     "",
     0,
     true},
    {"torch2-libtorch", "LibTorch 2.x eager from C++ on the CPU", "torch2-eager", {}, false, "", 2},
    {"torch2-aoti",
     "PyTorch 2.x AOTInductor package loaded and run from C++ (AOTIModelPackageLoader, "
     "forward only)",
     "torch2-eager",
     {"torch2-aoti-python", "torch2-export"},
     false,
     "",
     2,
     true},
    {"torch2-cuda",
     "LibTorch 2.x eager from C++ on a CUDA device",
     "torch2-eager-cuda",
     {},
     false,
     "",
     2},
    {"torch2-eager-cuda",
     "PyTorch 2.x eager on a CUDA device, in .venv's Python",
     "torch2-eager-cuda",
     {},
     false,
     "",
     0},
    {"torch2-inductor-cuda",
     "PyTorch 2.x torch.compile with Inductor on a CUDA device (Triton kernels)",
     "torch2-eager-cuda",
     {},
     true,
     "",
     0,
     true},
    {"torch2-aoti-cuda",
     "PyTorch 2.x AOTInductor package for a CUDA device, run from C++ (forward only)",
     "torch2-eager-cuda",
     {},
     false,
     "",
     2,
     true},
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

const Entry* find_entry(std::string_view name) {
  for (const Entry& entry : kBackends) {
    if (name == entry.name) return &entry;
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<Backend> make_backend(std::string_view name) {
  if (name.substr(0, 6) == "fault:") return make_fault_backend(parse_fault_backend_name(name));
  const Entry* entry = find_entry(name);
  if (entry == nullptr) {
    std::string known;
    for (const Entry& each : kBackends) known += std::string(known.empty() ? "" : ", ") + each.name;
    throw Error("unknown backend '" + std::string(name) + "' (known: " + known +
                ", fault:<kind>@<op>)");
  }
  if (entry->libtorch != 0 && entry->libtorch != torch_major()) {
    return std::make_unique<UnavailableBackend>(
        entry->name, "a path of LibTorch " + std::to_string(entry->libtorch) +
                         ".x: it runs in a worker of weft built against it (this weft links "
                         "LibTorch " +
                         torch_version() + ")");
  }
  if (name == "engine-f64") return make_engine_backend(true);
  if (name == "engine") return make_engine_backend(false);
  if (name == "torch" || name == "torch2-libtorch") return make_torch_eager_backend(name, false);
  if (name == "torch-cuda" || name == "torch2-cuda") return make_torch_eager_backend(name, true);
  if (name == "torch2-aoti") return make_aoti_backend(name, false);
  if (name == "torch2-aoti-cuda") return make_aoti_backend(name, true);
  if (name == "torchscript") return make_torchscript_backend(ScriptVariant::Script);
  if (name == "torchscript-frozen") return make_torchscript_backend(ScriptVariant::Frozen);
  if (name == "torchscript-ofi") {
    return make_torchscript_backend(ScriptVariant::OptimizeForInference);
  }
  if (name == "torchscript-nnc") return make_torchscript_backend(ScriptVariant::Nnc);
  if (name == "torchscript-legacy") return make_torchscript_backend(ScriptVariant::Legacy);
  if (auto python = make_python_backend(name)) return python;
  throw Error("backend '" + std::string(name) + "' has no constructor (registry.cpp)");
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const Entry& entry : kBackends) names.emplace_back(entry.name);
  return names;
}

std::vector<BackendInfo> list_local_backends() {
  std::vector<BackendInfo> result;
  for (const Entry& entry : kBackends) {
    result.push_back(
        {entry.name, make_backend(entry.name)->unavailable_reason(), entry.description});
  }
  result.push_back(
      {"fault:<kind>@<op>", "", "the float32 engine with one op made faulty (testing the oracle)"});
  return result;
}

std::vector<BackendInfo> list_backends() {
  std::vector<BackendInfo> result = list_local_backends();
  std::map<int, std::map<std::string, std::string>> asked;  // by LibTorch: name -> reason
  for (BackendInfo& info : result) {
    const Entry* entry = find_entry(info.name);
    if (entry == nullptr || entry->libtorch == 0 || entry->libtorch == torch_major()) continue;
    if (asked.count(entry->libtorch) == 0) {
      asked[entry->libtorch] = sibling_availability(entry->libtorch);
    }
    const auto& answers = asked[entry->libtorch];
    const auto found = answers.find(info.name);
    if (found != answers.end()) info.unavailable_reason = found->second;
  }
  return result;
}

const PathTraits& path_traits(std::string_view backend) {
  // Built once: the judge asks for every result and finding of every case.
  static const std::map<std::string, PathTraits, std::less<>> table = [] {
    std::map<std::string, PathTraits, std::less<>> traits;
    for (const Entry& entry : kBackends) {
      PathTraits& path = traits[entry.name];
      path = {entry.eager, {}, entry.warm_up, entry.timeout_gap, entry.libtorch, entry.compiles};
      for (const char* base : entry.bases) {
        if (base) path.bases.emplace_back(base);
      }
    }
    return traits;
  }();
  static const PathTraits fault{};
  static const PathTraits unknown{"torch", {}, true, "", 0, false};
  if (backend.substr(0, 6) == "fault:") return fault;
  const auto found = table.find(backend);
  return found == table.end() ? unknown : found->second;
}

int shape_set_of_phase(const std::string& phase) {
  const std::string prefix = "shape set ";
  if (phase.rfind(prefix, 0) != 0) return 0;
  return std::atoi(phase.c_str() + prefix.size());
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
    // A dynamic-shape case is prepared with its later sets in view (an export marks the dims
    // that change dynamic) and called at the first shapes, with the first set's values.
    if (graph.shape_set_count() > 1) {
      backend.prepare(graph, ir::at_shape_set(graph, values, 0).values);
    } else {
      backend.prepare(graph, values);
    }
    for (int i = 0; i < spec.calls; ++i) {
      result.phase = "call " + std::to_string(i);
      result.calls.push_back(backend.call(cotangents));
    }
    for (std::size_t set = 1; set < graph.shape_set_count(); ++set) {
      // A set the engine cannot derive is no case at all: no path runs it, none is judged.
      ir::ShapeSetCase at;
      try {
        at = ir::at_shape_set(graph, values, set);
      } catch (const Error&) {
        break;
      }
      result.phase = "shape set " + std::to_string(set);
      if (!backend.rebind(at.graph, at.values)) break;
      result.calls.push_back(
          backend.call(cotangents.empty() ? no_cotangents : spec.cotangents_at(set)));
      result.calls.back().shape_set = static_cast<int>(set);
    }
    result.phase.clear();
  } catch (const ProcessCrashed& e) {
    result.outcome = Outcome::Crash;
    result.message = first_line(e.what());
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
