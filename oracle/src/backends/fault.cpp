// The fault-injection backend: the engine in float32 with every node of one op kind made to
// misbehave (weft/oracle/fault.h). The fault fires in the engine's after-node hook, so the rest
// of the graph (and autograd through it) is the honest engine.
#include "weft/oracle/fault.h"

#include <array>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <limits>
#include <memory>
#include <thread>
#include <utility>

#include "backends/backends.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft::oracle {

namespace {

constexpr std::array<std::pair<FaultKind, std::string_view>, 9> kFaultNames{{
    {FaultKind::Crash, "crash"},
    {FaultKind::Abort, "abort"},
    {FaultKind::Hang, "hang"},
    {FaultKind::Throw, "throw"},
    {FaultKind::Nan, "nan"},
    {FaultKind::PerturbSmall, "perturb-small"},
    {FaultKind::PerturbLarge, "perturb-large"},
    {FaultKind::WrongGradient, "wrong-gradient"},
    {FaultKind::Recompile, "recompile"},
}};

constexpr std::string_view kPrefix = "fault:";

// The misbehaviour itself, applied to a node's floating outputs (integer and bool outputs
// stay exact: the value faults are about floating arithmetic).
void inject(FaultKind kind, const std::string& label, std::vector<Tensor>& outputs) {
  switch (kind) {
    case FaultKind::Crash:
      std::raise(SIGSEGV);
      break;
    case FaultKind::Abort:
      std::abort();
    case FaultKind::Hang:
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    case FaultKind::Throw:
      throw Error(label + ": injected fault");
    case FaultKind::Nan:
    case FaultKind::PerturbSmall:
    case FaultKind::PerturbLarge:
    case FaultKind::WrongGradient:
    case FaultKind::Recompile:
      break;
  }
  for (Tensor& out : outputs) {
    if (!out.is_floating_point() || out.numel() == 0) continue;
    switch (kind) {
      case FaultKind::Nan: {
        Tensor first = zeros(out.sizes(), dtype(Dtype::Bool));
        first.reshape({-1}).select(0, 0).fill_(1.0);
        out = where(first, full_like(out, std::numeric_limits<double>::quiet_NaN()), out);
        break;
      }
      case FaultKind::PerturbSmall:
        out = out * (1.0 + 1e-3) + 1e-3;
        break;
      case FaultKind::PerturbLarge:
        out = out * 1.5 + 1.0;
        break;
      case FaultKind::WrongGradient: {
        // Forward unchanged (a - a is exactly 0), backward through the op scaled by 1.5.
        const Tensor half = out * 0.5;
        out = out + (half - half.detach());
        break;
      }
      default:
        break;
    }
  }
}

class FaultBackend final : public Backend {
 public:
  explicit FaultBackend(FaultSpec spec) : spec_(spec) {}

  std::string name() const override { return fault_backend_name(spec_); }

  void prepare(const ir::Graph& graph, const ir::TensorMap& values) override {
    graph_ = graph;
    values_ = values;
    rebound_ = false;
  }

  bool rebind(const ir::Graph& graph, const ir::TensorMap& values) override {
    graph_ = graph;
    values_ = values;
    rebound_ = true;
    return true;
  }

  CallResult call(const std::vector<Tensor>& cotangents) override {
    ir::ExecutionOptions options;
    options.after_node = [this](std::size_t index, const std::vector<Tensor>&,
                                std::vector<Tensor>& outputs) {
      if (graph_.nodes()[index].op != spec_.op) return;
      if (spec_.kind == FaultKind::Recompile) {
        if (rebound_) inject(FaultKind::PerturbLarge, ir::node_label(graph_, index), outputs);
      } else {
        inject(spec_.kind, ir::node_label(graph_, index), outputs);
      }
    };
    return engine_call(graph_, values_, cotangents, options);
  }

 private:
  FaultSpec spec_;
  ir::Graph graph_;
  ir::TensorMap values_;
  bool rebound_ = false;  // called with a later shape set since prepare()
};

}  // namespace

std::string_view fault_kind_name(FaultKind kind) {
  for (const auto& [value, name] : kFaultNames) {
    if (value == kind) return name;
  }
  return "unknown";
}

std::string fault_backend_name(const FaultSpec& spec) {
  return std::string(kPrefix) + std::string(fault_kind_name(spec.kind)) + "@" +
         std::string(ir::op_name(spec.op));
}

FaultSpec parse_fault_backend_name(std::string_view name) {
  std::string kinds;
  for (const auto& entry : kFaultNames)
    kinds += (kinds.empty() ? "" : ", ") + std::string(entry.second);
  const std::string expected = "expected 'fault:<kind>@<op>' with <kind> one of " + kinds +
                               " and <op> an op name of `weft ops`";
  const auto at = name.find('@');
  if (name.substr(0, kPrefix.size()) != kPrefix || at == std::string_view::npos) {
    throw Error("backend '" + std::string(name) + "': " + expected);
  }
  const std::string_view kind_text = name.substr(kPrefix.size(), at - kPrefix.size());
  const std::string_view op_text = name.substr(at + 1);
  FaultSpec spec;
  bool known_kind = false;
  for (const auto& [value, kind_name] : kFaultNames) {
    if (kind_name == kind_text) {
      spec.kind = value;
      known_kind = true;
    }
  }
  if (!known_kind) {
    throw Error("backend '" + std::string(name) + "': unknown fault kind '" +
                std::string(kind_text) + "'; " + expected);
  }
  const std::optional<ir::OpKind> op = ir::op_from_name(op_text);
  if (!op) {
    throw Error("backend '" + std::string(name) + "': unknown op '" + std::string(op_text) + "'; " +
                expected);
  }
  spec.op = *op;
  return spec;
}

std::unique_ptr<Backend> make_fault_backend(const FaultSpec& spec) {
  return std::make_unique<FaultBackend>(spec);
}

}  // namespace weft::oracle
