// LibTorch eager through torch_eager.cpp's lowering (this file needs no torch headers): "torch"
// and "torch2-libtorch" on the CPU, "torch-cuda" and "torch2-cuda" on a CUDA device.
#include <memory>

#include "backends/backends.h"
#include "weft/oracle/torch_eager.h"
#include "weft/oracle/torch_info.h"

namespace weft::oracle {

namespace {

class TorchEagerBackend final : public Backend {
 public:
  TorchEagerBackend(std::string_view name, bool cuda) : name_(name), cuda_(cuda) {}

  std::string name() const override { return name_; }
  std::string unavailable_reason() const override {
    return cuda_ ? torch_cuda_unavailable_reason() : std::string();
  }

  void prepare(const ir::Graph& graph, const ir::TensorMap& values) override {
    graph_ = graph;
    values_ = values;
  }

  bool rebind(const ir::Graph& graph, const ir::TensorMap& values) override {
    prepare(graph, values);
    return true;
  }

  CallResult call(const std::vector<Tensor>& cotangents) override {
    TorchExecution run = run_torch_eager(graph_, values_, cotangents, cuda_);
    return CallResult{std::move(run.outputs), std::move(run.gradients)};
  }

 private:
  std::string name_;
  bool cuda_;
  ir::Graph graph_;
  ir::TensorMap values_;
};

}  // namespace

std::unique_ptr<Backend> make_torch_eager_backend(std::string_view name, bool cuda) {
  return std::make_unique<TorchEagerBackend>(name, cuda);
}

}  // namespace weft::oracle
