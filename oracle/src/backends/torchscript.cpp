// The TorchScript backends ("torchscript", "-frozen", "-ofi", "-nnc", "-legacy"): the graph
// emitted as TorchScript source (source.cpp), defined on a torch::jit::Module built in C++ with
// one registered parameter per graph parameter, and run through one of LibTorch's compiled
// paths. Every variant is built in prepare() from a fresh clone of a module that has never run:
// a method that has run keeps its execution plan, so freezing or optimizing a module that ran
// would still execute the old plan (TOOLCHAIN.md).
//
// The executor and fuser switches are process-global; each backend sets the ones its path
// needs for the duration of its prepare() and call() and restores the previous values after,
// so that the variants can share a process.
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <c10/util/Logging.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/passes/graph_fuser.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>
#include <torch/script.h>

#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/backends.h"
#include "backends/torch_tensors.h"
#include "weft/error.h"
#include "weft/ir/leaf_values.h"
#include "weft/oracle/source.h"
#include "weft/shape.h"

// Exported by libtorch_cpu, declared in torch/csrc/jit/codegen/fuser/interface.h, which Debian's
// LibTorch does not ship.
namespace torch::jit {
TORCH_API bool canFuseOnCPU();
TORCH_API void overrideCanFuseOnCPU(bool value);
}  // namespace torch::jit

namespace weft::oracle {

namespace {

// The process-global switches that decide which executor and fuser a TorchScript call takes.
struct JitSettings {
  bool executor = true;   // getExecutorMode(): the new (profiling or simple) executor
  bool profiling = true;  // getProfilingMode(): the profiling executor
  bool tensorexpr = true;
  bool te_must_use_llvm = true;
  bool fuse_cpu = false;  // TensorExpr fusion on the CPU
  bool fuse_cpu_legacy = false;

  static JitSettings current() {
    JitSettings s;
    s.executor = torch::jit::getExecutorMode().load();
    s.profiling = torch::jit::getProfilingMode().load();
    s.tensorexpr = torch::jit::tensorExprFuserEnabled();
    s.te_must_use_llvm = torch::jit::tensorexpr::getTEMustUseLLVMOnCPU();
    s.fuse_cpu = torch::jit::canFuseOnCPU();
    s.fuse_cpu_legacy = torch::jit::canFuseOnCPULegacy();
    return s;
  }

  void apply() const {
    torch::jit::getExecutorMode() = executor;
    torch::jit::getProfilingMode() = profiling;
    torch::jit::setTensorExprFuserEnabled(tensorexpr);
    torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = te_must_use_llvm;
    torch::jit::overrideCanFuseOnCPU(fuse_cpu);
    torch::jit::overrideCanFuseOnCPULegacy(fuse_cpu_legacy);
  }
};

JitSettings settings_for(ScriptVariant variant) {
  JitSettings s = JitSettings::current();
  switch (variant) {
    case ScriptVariant::Script:
    case ScriptVariant::Frozen:
    case ScriptVariant::OptimizeForInference:
      // The profiling executor with no CPU fusion: LibTorch's defaults on a CPU build.
      s.executor = true;
      s.profiling = true;
      s.fuse_cpu = false;
      s.fuse_cpu_legacy = false;
      break;
    case ScriptVariant::Nnc:
      // This build has no LLVM: fusion groups run through NNC's IR interpreter.
      s.executor = true;
      s.profiling = true;
      s.tensorexpr = true;
      s.te_must_use_llvm = false;
      s.fuse_cpu = true;
      s.fuse_cpu_legacy = false;
      break;
    case ScriptVariant::Legacy:
      // The legacy executor and fuser (prim::FusionGroup, compiled with $CXX at run time).
      s.executor = false;
      s.profiling = false;
      s.tensorexpr = false;
      s.fuse_cpu = false;
      s.fuse_cpu_legacy = true;
      break;
  }
  return s;
}

// Applies a variant's settings for its lifetime, then restores what was there before.
class ScopedJitSettings {
 public:
  explicit ScopedJitSettings(const JitSettings& settings) : saved_(JitSettings::current()) {
    settings.apply();
  }
  ~ScopedJitSettings() { saved_.apply(); }
  ScopedJitSettings(const ScopedJitSettings&) = delete;
  ScopedJitSettings& operator=(const ScopedJitSettings&) = delete;

 private:
  JitSettings saved_;
};

// The first non-blank line (some LibTorch messages start with a newline).
std::string first_line(const std::string& text) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (text.find_first_not_of(" \t\r", start) < end) return text.substr(start, end - start);
    start = end + 1;
  }
  return text;
}

// LibTorch's message for a failure of a compiled path, as one line. The interpreter wraps the
// op's error in a TorchScript traceback ("The following operation failed in the TorchScript
// interpreter. ... RuntimeError: <message>"): the op's message is taken from there. When the
// text quotes the emitted source with a "<--- HERE" marker under a statement, the statement's
// "# node N:" tag names the node, and the message is prefixed with its label.
std::string script_error_message(const std::string& text, const ir::Graph& graph) {
  const bool traceback =
      text.find("The following operation failed in the TorchScript interpreter") !=
      std::string::npos;
  std::string message = first_line(text);
  std::optional<std::size_t> node;
  std::string previous;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    const std::size_t tag = previous.find("# node ");
    if (line.find("<--- HERE") != std::string::npos && tag != std::string::npos) {
      const std::size_t n = std::strtoul(previous.c_str() + tag + 7, nullptr, 10);
      if (n < graph.nodes().size()) node = n;
    }
    const std::size_t colon = line.find("Error: ");
    if (traceback && colon != std::string::npos && !line.empty() && line[0] != ' ' &&
        line.find(' ') > colon) {
      // "RuntimeError: ...": the op's own message (its first line). Nested interpreters
      // (a fusion group's fallback) wrap it again: the last such line is the innermost.
      const std::string candidate = line.substr(colon + 7);
      if (candidate.rfind("The following operation failed", 0) != 0) message = candidate;
    }
    previous = line;
    start = end + 1;
  }
  return node ? ir::node_label(graph, *node) + ": " + message : message;
}

// Runs `body`, turning LibTorch's exceptions into weft::Error("<phase>: <first line>").
template <typename Body>
auto guarded(const std::string& phase, const ir::Graph& graph, Body&& body) -> decltype(body()) {
  const std::string prefix = phase.empty() ? std::string() : phase + ": ";
  try {
    return body();
  } catch (const c10::Error& e) {
    // The interpreter keeps the op's own error in the "backtrace" part of the c10::Error
    // (after "Traceback of TorchScript"): parse the whole text then.
    const std::string brief = e.what_without_backtrace();
    const bool traceback = brief.find(
                               "The following operation failed in the TorchScript "
                               "interpreter") != std::string::npos;
    throw Error(prefix + script_error_message(traceback ? e.what() : brief, graph));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(prefix + script_error_message(e.what(), graph));
  }
}

class TorchScriptBackend final : public Backend {
 public:
  explicit TorchScriptBackend(ScriptVariant variant) : variant_(variant) {}

  std::string name() const override {
    switch (variant_) {
      case ScriptVariant::Script:
        return "torchscript";
      case ScriptVariant::Frozen:
        return "torchscript-frozen";
      case ScriptVariant::OptimizeForInference:
        return "torchscript-ofi";
      case ScriptVariant::Nnc:
        return "torchscript-nnc";
      case ScriptVariant::Legacy:
        return "torchscript-legacy";
    }
    return "torchscript";
  }

  // Freezing inlines the parameters into the graph as constants: they are no longer leaves, so
  // the frozen paths cannot give parameter gradients; they run forward only (inference is what
  // freeze and optimize_for_inference are for, and oneDNN's rewritten ops have no autograd).
  bool has_gradients() const override { return !frozen(); }

  void prepare(const ir::Graph& graph, const ir::TensorMap& values) override {
    init_torch_once();
    module_.reset();
    graph_ = graph;
    values_.clear();
    for (ir::LeafKind kind : {ir::LeafKind::Input, ir::LeafKind::Parameter}) {
      for (ir::ValueId id : graph.leaves(kind)) {
        const Tensor& t = ir::leaf_value(graph, values, id);
        values_[graph.value(id).name] = t.contiguous().clone();
      }
    }
    forward_ = emit_forward(graph, SourceDialect::TorchScript);

    const ScopedJitSettings settings(settings_for(variant_));
    // The never-run module: parameters registered, forward defined.
    torch::jit::Module base = guarded("compile", graph_, [&] {
      torch::jit::Module m(c10::QualifiedName("__torch__.weft.Graph"));
      for (std::size_t i = 0; i < graph_.parameters().size(); ++i) {
        const ir::Value& leaf = graph_.value(graph_.parameters()[i]);
        m.register_parameter(forward_.parameters[i], to_torch(values_.at(leaf.name)),
                             /*is_buffer=*/false);
      }
      m.define(forward_.method());
      return m;
    });
    torch::jit::Module compiled = guarded("compile", graph_, [&] { return base.clone(); });
    if (frozen()) {
      compiled = guarded("freeze", graph_, [&] { return torch::jit::freeze(compiled); });
    }
    if (variant_ == ScriptVariant::OptimizeForInference) {
      compiled = guarded("optimize_for_inference", graph_,
                         [&] { return torch::jit::optimize_for_inference(compiled); });
    }
    module_ = std::move(compiled);
  }

  // The compiled module stays: TorchScript's profiling executor specializes to the shapes it
  // saw and must take the new ones (re-specialization, or its fallback graph).
  bool rebind(const ir::Graph& graph, const ir::TensorMap& values) override {
    graph_ = graph;
    for (ir::ValueId id : graph.inputs()) {
      values_[graph.value(id).name] = ir::leaf_value(graph, values, id).contiguous().clone();
    }
    return true;
  }

  CallResult call(const std::vector<Tensor>& cotangents) override {
    if (!module_) throw Error(name() + ": call() before a successful prepare()");
    const bool with_gradients = has_gradients() && !cotangents.empty();
    if (with_gradients && cotangents.size() != graph_.outputs().size()) {
      throw Error(name() + ": " + std::to_string(cotangents.size()) + " cotangents for " +
                  std::to_string(graph_.outputs().size()) + " outputs");
    }
    const ScopedJitSettings settings(settings_for(variant_));
    const at::AutoGradMode grad_mode(with_gradients);
    at::manual_seed(kTorchSeed);  // random ops draw the same numbers on every call

    // Fresh leaves on every call: bodies may mutate their inputs, and each call's gradients
    // must be its own. Frozen modules hold their parameters as constants.
    std::map<std::string, at::Tensor> sources;  // floating leaves that require grad, by name
    auto fresh = [&](ir::ValueId id) {
      const std::string& name = graph_.value(id).name;
      at::Tensor value = leaf_to_torch(graph_.value(id), values_.at(name));
      if (with_gradients && value.is_floating_point()) {
        value.requires_grad_(true);
        sources.emplace(name, value);
      }
      return value;
    };
    std::vector<c10::IValue> inputs;
    for (ir::ValueId id : graph_.inputs()) inputs.emplace_back(fresh(id));
    if (!frozen()) {
      for (std::size_t i = 0; i < graph_.parameters().size(); ++i) {
        module_->setattr(forward_.parameters[i], fresh(graph_.parameters()[i]));
      }
    }

    // freeze and optimize_for_inference rewrite the graph, and the source ranges of the ops
    // they insert can point at another statement (an ofi conv error quoted a ceil's line):
    // their errors carry no node label, so that localization bisects instead.
    const ir::Graph no_labels;
    const std::vector<at::Tensor> outputs = guarded("", frozen() ? no_labels : graph_, [&] {
      const c10::IValue result = module_->forward(std::move(inputs));
      std::vector<at::Tensor> tensors;
      for (const c10::IValue& element : result.toTupleRef().elements()) {
        tensors.push_back(element.toTensor());
      }
      return tensors;
    });
    if (outputs.size() != graph_.outputs().size()) {
      throw Error(name() + ": forward returned " + std::to_string(outputs.size()) +
                  " outputs, the graph declares " + std::to_string(graph_.outputs().size()));
    }
    CallResult result;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      try {
        result.outputs.push_back(from_torch(outputs[i]));
      } catch (const Error& e) {
        throw Error("output " + std::to_string(i) + ": " + e.what());
      }
    }
    if (!with_gradients) return result;

    // Backward of sum_i <outputs[i], cotangents[i]> over floating outputs that require grad;
    // a leaf the objective does not reach reports zeros, as run_torch_eager does.
    guarded("backward", graph_, [&] {
      at::Tensor objective;
      for (std::size_t i = 0; i < outputs.size(); ++i) {
        const at::Tensor& out = outputs[i];
        if (!out.is_floating_point() || !out.requires_grad()) continue;
        const at::Tensor term = at::sum(out * to_torch(cotangents[i]).to(out.scalar_type()));
        objective = objective.defined() ? objective + term : term;
      }
      if (objective.defined()) objective.backward();
      return 0;
    });
    for (const auto& [leaf_name, value] : values_) {
      if (!value.is_floating_point()) continue;
      const auto it = sources.find(leaf_name);
      const at::Tensor grad = it != sources.end() ? it->second.grad() : at::Tensor();
      result.gradients[leaf_name] = grad.defined() ? from_torch(grad) : zeros_like(value);
    }
    return result;
  }

 private:
  bool frozen() const {
    return variant_ == ScriptVariant::Frozen || variant_ == ScriptVariant::OptimizeForInference;
  }

  ScriptVariant variant_;
  ir::Graph graph_;
  ir::TensorMap values_;  // private copies of the leaves, by name
  EmittedForward forward_;
  std::optional<torch::jit::Module> module_;  // the compiled variant
};

}  // namespace

std::unique_ptr<Backend> make_torchscript_backend(ScriptVariant variant) {
  return std::make_unique<TorchScriptBackend>(variant);
}

}  // namespace weft::oracle
