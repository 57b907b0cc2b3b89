// The engine's two paths: "engine" (float32, the honest float32 execution the judge measures
// tolerances with) and "engine-f64" (every floating value in float64: the reference).
#include <memory>
#include <optional>

#include "backends/backends.h"

namespace weft::oracle {

namespace {

class EngineBackend final : public Backend {
 public:
  explicit EngineBackend(bool float64) : float64_(float64) {}

  std::string name() const override { return float64_ ? kReferenceBackend : kEngineBackend; }

  void prepare(const ir::Graph& graph, const ir::TensorMap& values) override {
    graph_ = graph;
    values_ = values;
  }

  bool rebind(const ir::Graph& graph, const ir::TensorMap& values) override {
    prepare(graph, values);
    return true;
  }

  CallResult call(const std::vector<Tensor>& cotangents) override {
    ir::ExecutionOptions options;
    // The reference runs in-place writes as dataflow; the float32 path runs them as the
    // programs do (weft/ir/inplace.h), through the engine's own in-place ops and views.
    if (float64_) options.floating_dtype = Dtype::Float64;
    options.as_written = !float64_;
    return engine_call(graph_, values_, cotangents, options);
  }

 private:
  bool float64_;
  ir::Graph graph_;
  ir::TensorMap values_;
};

}  // namespace

CallResult engine_call(const ir::Graph& graph, const ir::TensorMap& values,
                       const std::vector<Tensor>& cotangents, const ir::ExecutionOptions& options) {
  CallResult result;
  if (cotangents.empty()) {
    result.outputs = ir::execute(graph, values, options).outputs;
    return result;
  }
  ir::GradientExecution run = ir::execute_with_gradients(graph, values, cotangents, options);
  result.outputs = std::move(run.forward.outputs);
  result.gradients = std::move(run.gradients);
  return result;
}

std::unique_ptr<Backend> make_engine_backend(bool float64) {
  return std::make_unique<EngineBackend>(float64);
}

}  // namespace weft::oracle
