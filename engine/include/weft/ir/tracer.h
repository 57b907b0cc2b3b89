#pragma once
// Tracing: while a Tracer is alive on a thread, every engine op that thread runs is appended to
// a Graph (torch.jit.trace's recorder). Each public op starts with
//
//   if (auto* tracer = ir::active_tracer()) return tracer->record(OpKind::X, inputs, attrs, rerun);
//
// where `rerun` calls the op again; record() suspends tracing around it, so only the outermost
// op is recorded and the ops it is built from are not.
//
// A tensor the tracer has not seen becomes a constant leaf (a parameter named "constant<N>"
// whose value is saved with the trace). One that carries autograd history was computed by an
// operation the tracer does not record, and is an error rather than a silently frozen value;
// that is why the values being traced should require grad (trace() arranges it).

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "weft/ir/execute.h"
#include "weft/ir/graph.h"
#include "weft/tensor.h"

namespace weft::ir {

class Tracer;

namespace detail {
struct TracerSlot {
  Tracer* tracer = nullptr;
  bool suspended = false;
};
inline TracerSlot& tracer_slot() {
  static thread_local TracerSlot slot;
  return slot;
}
}  // namespace detail

// The tracer recording this thread's ops, or null (none, or inside an op being recorded).
inline Tracer* active_tracer() {
  const detail::TracerSlot& slot = detail::tracer_slot();
  return slot.suspended ? nullptr : slot.tracer;
}

class Tracer {
 public:
  // Starts recording on this thread. Throws weft::Error when a trace is already running here.
  Tracer();
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // Declares the leaves before running: `tensor` (and every alias of it) is the graph input or
  // parameter `name`. A tensor declared twice keeps its first name.
  void add_input(const std::string& name, const Tensor& tensor);
  void add_parameter(const std::string& name, const Tensor& tensor);

  // Stops recording and returns the validated graph whose outputs are `outputs`.
  Graph finish(const std::vector<Tensor>& outputs);
  // The values of the constant leaves met while recording, by name.
  const TensorMap& constants() const { return constants_; }

  // Runs `rerun` (the op itself) untraced and appends a node for it. `inputs` are the op's
  // tensor arguments in the IR's order; undefined ones are skipped (optional inputs).
  template <typename Rerun>
  auto record(OpKind op, const std::vector<Tensor>& inputs, Attributes attrs, Rerun&& rerun) {
    std::vector<ValueId> ids = input_ids(op, inputs);
    auto result = run_suspended(std::forward<Rerun>(rerun));
    add_node(op, std::move(ids), std::move(attrs), outputs_of(result));
    return result;
  }

  // `alias` holds the same value as `original` (clone, contiguous, detach, to(same dtype)).
  void add_alias(const Tensor& original, const Tensor& alias);
  // Refuses an in-place change of a recorded value, which a graph cannot express.
  void check_not_traced(const Tensor& tensor, const char* method) const;

 private:
  template <typename Rerun>
  auto run_suspended(Rerun&& rerun) {
    struct Suspend {
      Suspend() { detail::tracer_slot().suspended = true; }
      ~Suspend() { detail::tracer_slot().suspended = false; }
    } suspend;
    return rerun();
  }
  static std::vector<Tensor> outputs_of(const Tensor& t) { return {t}; }
  static std::vector<Tensor> outputs_of(const std::vector<Tensor>& ts) { return ts; }
  static std::vector<Tensor> outputs_of(const std::tuple<Tensor, Tensor>& ts) {
    return {std::get<0>(ts), std::get<1>(ts)};
  }

  std::vector<ValueId> input_ids(OpKind op, const std::vector<Tensor>& inputs);
  ValueId value_of(const Tensor& tensor, OpKind consumer);
  void add_node(OpKind op, std::vector<ValueId> inputs, Attributes attrs,
                const std::vector<Tensor>& outputs);
  void remember(const Tensor& tensor, ValueId id);

  Graph graph_;
  TensorMap constants_;
  // Keyed by TensorImpl; `alive_` keeps every recorded tensor alive so that no address is
  // reused for another tensor while recording.
  std::unordered_map<const TensorImpl*, ValueId> ids_;
  std::vector<Tensor> alive_;
  bool finished_ = false;
};

}  // namespace weft::ir
