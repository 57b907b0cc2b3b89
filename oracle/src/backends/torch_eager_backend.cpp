// "torch": LibTorch eager on the CPU, through torch_eager.cpp's lowering (this file needs no
// torch headers).
#include <memory>

#include "backends/backends.h"
#include "weft/oracle/torch_eager.h"

namespace weft::oracle {

namespace {

class TorchEagerBackend final : public Backend {
 public:
  std::string name() const override { return "torch"; }

  void prepare(const ir::Graph& graph, const ir::TensorMap& values) override {
    graph_ = graph;
    values_ = values;
  }

  CallResult call(const std::vector<Tensor>& cotangents) override {
    TorchExecution run = run_torch_eager(graph_, values_, cotangents);
    return CallResult{std::move(run.outputs), std::move(run.gradients)};
  }

 private:
  ir::Graph graph_;
  ir::TensorMap values_;
};

}  // namespace

std::unique_ptr<Backend> make_torch_eager_backend() {
  return std::make_unique<TorchEagerBackend>();
}

}  // namespace weft::oracle
