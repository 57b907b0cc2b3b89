// "torch2-aoti" and "torch2-aoti-cuda": the deployment path that C++ users of PyTorch 2.x have.
// The PyTorch 2.x interpreter exports the emitted module and compiles it with AOTInductor into
// a .pt2 package (python.cpp's packager); this file loads the package with LibTorch's
// torch::inductor::AOTIModelPackageLoader and runs it. Built only against LibTorch >= 2.6
// (oracle/CMakeLists.txt; aoti_absent.cpp otherwise). Forward only: a package has no backward.
#include <ATen/Context.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/backends.h"
#include "backends/torch_tensors.h"
#include "weft/error.h"
#include "weft/ir/leaf_values.h"
#include "weft/oracle/torch_info.h"

namespace weft::oracle {

namespace {

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

class AotiBackend final : public Backend {
 public:
  AotiBackend(std::string_view name, bool cuda)
      : name_(name), cuda_(cuda), packager_(make_aoti_packager(cuda)) {}

  std::string name() const override { return name_; }
  std::string unavailable_reason() const override {
    if (std::string why = packager_->unavailable_reason(); !why.empty()) return why;
    return cuda_ ? torch_cuda_unavailable_reason() : std::string();
  }
  bool has_gradients() const override { return false; }
  double compile_seconds() const override { return compile_seconds_; }

  void prepare(const ir::Graph& graph, const ir::TensorMap& values) override {
    init_torch_once();
    loader_.reset();
    inputs_.clear();
    const std::string package = packager_->package(graph, values);
    const auto start = std::chrono::steady_clock::now();
    try {
      loader_ = std::make_unique<torch::inductor::AOTIModelPackageLoader>(package);
    } catch (const c10::Error& e) {
      throw Error("AOTIModelPackageLoader: " + first_line(e.what_without_backtrace()));
    }
    // Loading the package (unzip, dlopen of its shared object) counts as compiling too.
    compile_seconds_ =
        packager_->compile_seconds() +
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (ir::ValueId id : graph.inputs()) {
      inputs_.emplace_back(graph.value(id), ir::leaf_value(graph, values, id));
    }
    outputs_ = graph.outputs().size();
    rebinds_ = 0;
  }

  // Dynamic shapes: the package runs later sets where its export kept the changing dims dynamic.
  bool rebind(const ir::Graph& graph, const ir::TensorMap& values) override {
    if (!packager_->runs_shape_set(++rebinds_)) return false;
    inputs_.clear();
    for (ir::ValueId id : graph.inputs()) {
      inputs_.emplace_back(graph.value(id), ir::leaf_value(graph, values, id));
    }
    return true;
  }

  CallResult call(const std::vector<Tensor>&) override {
    if (!loader_) throw Error("torch2-aoti: call before a successful prepare");
    std::vector<at::Tensor> inputs;
    for (const auto& [leaf, value] : inputs_) inputs.push_back(leaf_to_torch(leaf, value, cuda_));
    std::vector<at::Tensor> outputs;
    at::manual_seed(kTorchSeed);  // random ops draw the same numbers on every call
    try {
      outputs = loader_->run(inputs);
    } catch (const c10::Error& e) {
      throw Error(first_line(e.what_without_backtrace()));
    }
    if (outputs.size() != outputs_) {
      throw Error("the package returned " + std::to_string(outputs.size()) +
                  " outputs, the graph has " + std::to_string(outputs_));
    }
    CallResult call;
    for (const at::Tensor& output : outputs) call.outputs.push_back(from_torch(output));
    return call;
  }

 private:
  std::string name_;
  bool cuda_;
  std::unique_ptr<AotiPackager> packager_;
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader_;
  // The graph's inputs with their values, in order; parameters are in the package.
  std::vector<std::pair<ir::Value, Tensor>> inputs_;
  std::size_t outputs_ = 0;
  std::size_t rebinds_ = 0;  // later shape sets called since prepare()
  double compile_seconds_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_aoti_backend(std::string_view name, bool cuda) {
  return std::make_unique<AotiBackend>(name, cuda);
}

}  // namespace weft::oracle
