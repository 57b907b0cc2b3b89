// Tracing a module: leaves declared from the module's named parameters and buffers, the forward
// run under an ir::Tracer, the result wrapped in a TracedModule; saving through nn::save.
#include "weft/nn/trace.h"

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ir/execute.h"
#include "weft/ir/graph_json.h"
#include "weft/ir/tracer.h"
#include "weft/nn/checkpoint.h"

namespace weft::nn {

namespace {

constexpr const char* kFormatKey = "format";
constexpr const char* kFormatValue = "weft.trace";
constexpr const char* kGraphKey = "weft.graph";
constexpr const char* kBuffersKey = "weft.buffers";

std::string input_name(std::size_t index) {
  return "input" + std::to_string(index);
}

// The child of `parent` called `name`, created as a plain Module when absent.
Module& child_module(Module& parent, const std::string& name) {
  for (const auto& [child_name, child] : parent.named_children()) {
    if (child_name == name) return *child;
  }
  return *parent.register_module(name, std::make_shared<Module>());
}

}  // namespace

TracedModule::TracedModule(ir::Graph graph, const StateDict& weights,
                           const std::vector<std::string>& buffer_names)
    : graph_(std::move(graph)), buffer_names_(buffer_names) {
  const std::set<std::string> buffers(buffer_names.begin(), buffer_names.end());
  for (ir::ValueId id : graph_.parameters()) {
    const ir::Value& leaf = graph_.value(id);
    const Tensor* value = weights.find(leaf.name);
    if (value == nullptr) throw Error("TracedModule: no value for parameter '" + leaf.name + "'");
    if (value->sizes() != leaf.type.shape || value->dtype() != leaf.type.dtype) {
      throw Error("TracedModule: value of '" + leaf.name + "' is " + dtype_name(value->dtype()) +
                  shape_str(value->sizes()) + ", but the graph declares " +
                  ir::to_string(leaf.type));
    }
    // "layer1.0.weight" → module layer1 → module 0 → tensor weight.
    Module* owner = this;
    std::string rest = leaf.name;
    for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
      owner = &child_module(*owner, rest.substr(0, dot));
      rest = rest.substr(dot + 1);
    }
    const Tensor copy = value->detach().clone();
    Tensor& registered = buffers.count(leaf.name) != 0
                             ? owner->register_buffer(rest, copy)
                             : owner->register_parameter(rest, copy, copy.is_floating_point());
    leaves_.emplace_back(leaf.name, registered);
  }
}

std::vector<Tensor> TracedModule::forward(const std::vector<Tensor>& inputs) {
  const auto& input_ids = graph_.inputs();
  if (inputs.size() != input_ids.size()) {
    throw Error("TracedModule: forward expects " + std::to_string(input_ids.size()) +
                " inputs (as traced), got " + std::to_string(inputs.size()));
  }
  ir::TensorMap leaves;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    leaves.emplace(graph_.value(input_ids[i]).name, inputs[i]);
  }
  for (const auto& [name, tensor] : leaves_) leaves.emplace(name, tensor);
  return ir::execute(graph_, leaves).outputs;
}

Tensor TracedModule::forward(const Tensor& input) {
  if (graph_.outputs().size() != 1) {
    throw Error("TracedModule: the traced forward returns " +
                std::to_string(graph_.outputs().size()) +
                " outputs; call forward(std::vector<Tensor>) instead");
  }
  return forward(std::vector<Tensor>{input}).front();
}

std::shared_ptr<TracedModule> trace(Module& module, const std::vector<Tensor>& example_inputs) {
  if (example_inputs.size() != 1) {
    throw Error("trace: Module::forward takes one input, got " +
                std::to_string(example_inputs.size()) +
                " example inputs; pass a TraceFunction for other signatures");
  }
  return trace(module, example_inputs, [&module](const std::vector<Tensor>& inputs) {
    return std::vector<Tensor>{module.forward(inputs.front())};
  });
}

std::shared_ptr<TracedModule> trace(Module& module, const std::vector<Tensor>& example_inputs,
                                    const TraceFunction& forward) {
  // Gradients on: values computed by ops the tracer does not record then carry history, which
  // the tracer reports instead of freezing them as constants.
  autograd::EnableGradGuard grad_on(true);
  StateDict weights;
  std::vector<std::string> buffer_names;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  ir::Graph graph;
  {
    ir::Tracer tracer;
    for (std::size_t i = 0; i < example_inputs.size(); ++i) {
      Tensor x = example_inputs[i].detach();
      if (x.is_floating_point()) x.requires_grad_(true);
      tracer.add_input(input_name(i), x);
      inputs.push_back(x);
    }
    for (const auto& [name, p] : module.named_parameters()) {
      tracer.add_parameter(name, p);
      weights.insert(name, p);
    }
    for (const auto& [name, b] : module.named_buffers()) {
      tracer.add_parameter(name, b);
      weights.insert(name, b);
      buffer_names.push_back(name);
    }
    outputs = forward(inputs);
    graph = tracer.finish(outputs);
    for (const auto& [name, value] : tracer.constants()) {
      weights.insert(name, value);
      buffer_names.push_back(name);
    }
  }
  return std::make_shared<TracedModule>(std::move(graph), weights, buffer_names);
}

void save_trace(const TracedModule& traced, const std::filesystem::path& path) {
  StateDict weights;
  for (const auto& [name, value] : traced.state_dict()) weights.insert(name, value);
  save(weights, path,
       {{kFormatKey, kFormatValue},
        {kGraphKey, ir::graph_to_json_text(traced.graph())},
        {kBuffersKey, nlohmann::json(traced.buffer_names()).dump()}});
}

std::shared_ptr<TracedModule> load_trace(const std::filesystem::path& path) {
  const std::string source = path.string();
  const Checkpoint checkpoint = load(path);
  const auto field = [&](const char* key) -> const std::string& {
    const auto found = checkpoint.metadata.find(key);
    if (found == checkpoint.metadata.end()) {
      throw FormatError(source, std::string("__metadata__/") + key,
                        "missing; this is not a trace written by weft's save_trace");
    }
    return found->second;
  };
  if (field(kFormatKey) != kFormatValue) {
    throw FormatError(
        source, std::string("__metadata__/") + kFormatKey,
        "expected \"" + std::string(kFormatValue) + "\", got \"" + field(kFormatKey) + "\"");
  }
  const nlohmann::json graph_document =
      nlohmann::json::parse(field(kGraphKey), nullptr, /*allow_exceptions=*/false);
  if (graph_document.is_discarded()) {
    throw FormatError(source, std::string("__metadata__/") + kGraphKey, "is not valid JSON");
  }
  ir::Graph graph = ir::graph_from_json(graph_document, source + " (" + kGraphKey + ")");
  const nlohmann::json buffers_document =
      nlohmann::json::parse(field(kBuffersKey), nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> buffer_names;
  if (!buffers_document.is_array()) {
    throw FormatError(source, std::string("__metadata__/") + kBuffersKey,
                      "expected a JSON array of names");
  }
  for (const auto& name : buffers_document) {
    if (!name.is_string()) {
      throw FormatError(source, std::string("__metadata__/") + kBuffersKey,
                        "expected a JSON array of names");
    }
    buffer_names.push_back(name.get<std::string>());
  }
  for (ir::ValueId id : graph.parameters()) {
    const ir::Value& leaf = graph.value(id);
    const Tensor* value = checkpoint.state.find(leaf.name);
    if (value == nullptr) throw FormatError(source, leaf.name, "the graph's parameter is missing");
    if (value->sizes() != leaf.type.shape || value->dtype() != leaf.type.dtype) {
      throw FormatError(source, leaf.name,
                        "is " + std::string(dtype_name(value->dtype())) +
                            shape_str(value->sizes()) + ", but the graph declares " +
                            ir::to_string(leaf.type));
    }
  }
  return std::make_shared<TracedModule>(std::move(graph), checkpoint.state, buffer_names);
}

}  // namespace weft::nn
