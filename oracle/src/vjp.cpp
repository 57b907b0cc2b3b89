// Gradient localization by vector-Jacobian products (vjp.h).
#include "vjp.h"

#include <cstdio>
#include <exception>
#include <regex>
#include <utility>

#include "weft/autograd.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft::oracle {

namespace {

std::string leaf_name(std::size_t node, std::size_t input) {
  char text[48];
  std::snprintf(text, sizeof text, "g%05zu_in%zu", 99999 - node, input);
  return text;
}

// Appends a copy of `node` (index n of `graph`) to `result`, its inputs as leaves holding the
// reference's values; returns the copy's outputs and their types.
std::pair<std::vector<ir::ValueId>, std::vector<ir::TensorType>> add_alone(
    VjpGraph& result, const ir::Graph& graph, std::size_t n, const std::vector<Tensor>& forward) {
  const ir::Node& node = graph.nodes()[n];
  std::vector<ir::ValueId> inputs;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    const ir::TensorType& type = graph.type(node.inputs[i]);
    const std::string name = leaf_name(n, i);
    inputs.push_back(result.graph.add_input(name, type));
    result.values.emplace(name, forward[static_cast<std::size_t>(node.inputs[i])].to(type.dtype));
    result.node_of_leaf.emplace(name, n);
  }
  std::vector<ir::TensorType> types;
  for (ir::ValueId id : node.outputs) types.push_back(graph.type(id));
  return {result.graph.add_node(node.op, inputs, node.attrs, types, node.name), types};
}

}  // namespace

std::optional<VjpGraph> vjp_graph(const ir::Graph& graph, const ir::TensorMap& values,
                                  const std::vector<Tensor>& cotangents) {
  if (graph.nodes().size() > 99999 || cotangents.size() != graph.outputs().size()) {
    return std::nullopt;
  }
  std::vector<Tensor> forward;
  std::vector<Tensor> gradient(graph.values().size());
  try {
    ir::TensorMap tracked;
    for (const auto& [name, value] : values) {
      Tensor leaf = value.detach();
      if (leaf.is_floating_point()) leaf.requires_grad_(true);
      tracked.emplace(name, leaf);
    }
    ir::ExecutionOptions options;
    options.floating_dtype = Dtype::Float64;
    options.keep_values = true;
    ir::Execution run = ir::execute(graph, tracked, options);
    Tensor objective;
    for (std::size_t i = 0; i < cotangents.size(); ++i) {
      const Tensor& out = run.outputs[i];
      if (!out.is_floating_point() || !out.requires_grad()) continue;
      const Tensor term = sum(mul(out, cotangents[i].to(out.dtype())));
      objective = objective.defined() ? add(objective, term) : term;
    }
    if (!objective.defined()) return std::nullopt;
    std::vector<Tensor> sources;
    std::vector<std::size_t> source_ids;
    for (const ir::Node& node : graph.nodes()) {
      for (ir::ValueId id : node.outputs) {
        const Tensor& v = run.values[static_cast<std::size_t>(id)];
        if (v.defined() && v.is_floating_point() && v.requires_grad()) {
          sources.push_back(v);
          source_ids.push_back(static_cast<std::size_t>(id));
        }
      }
    }
    if (sources.empty()) return std::nullopt;
    const std::vector<Tensor> grads =
        autograd::grad({objective}, sources, {}, false, false, /*allow_unused=*/true);
    for (std::size_t k = 0; k < grads.size(); ++k) {
      if (grads[k].defined()) gradient[source_ids[k]] = grads[k].detach();
    }
    for (Tensor& v : run.values) v = v.defined() ? v.detach() : v;
    forward = std::move(run.values);
  } catch (const std::exception&) {
    return std::nullopt;
  }

  VjpGraph result;
  for (std::size_t n = 0; n < graph.nodes().size(); ++n) {
    const ir::Node& node = graph.nodes()[n];
    bool floating_in = false;
    for (ir::ValueId id : node.inputs)
      floating_in = floating_in || is_floating(graph.type(id).dtype);
    bool gets_gradient = false;
    for (ir::ValueId id : node.outputs) {
      gets_gradient = gets_gradient || gradient[static_cast<std::size_t>(id)].defined();
    }
    if (!floating_in || !gets_gradient) continue;
    const auto [outputs, types] = add_alone(result, graph, n, forward);
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      result.graph.mark_output(outputs[k]);
      const ir::TensorType& type = types[k];
      const Tensor& g = gradient[static_cast<std::size_t>(node.outputs[k])];
      result.cotangents.push_back(g.defined() && is_floating(type.dtype)
                                      ? g.to(type.dtype)
                                      : zeros(type.shape, weft::dtype(type.dtype)));
    }
  }
  if (result.graph.nodes().empty()) return std::nullopt;
  return result;
}

std::optional<VjpGraph> producer_graph(const ir::Graph& graph, const ir::TensorMap& values,
                                       std::size_t producer, std::uint64_t seed) {
  if (producer >= graph.nodes().size()) return std::nullopt;
  const ir::Node& node = graph.nodes()[producer];
  std::vector<Tensor> forward;
  try {
    ir::ExecutionOptions options;
    options.floating_dtype = Dtype::Float64;
    options.keep_values = true;
    forward = ir::execute(graph, values, options).values;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  VjpGraph result;
  bool floating_in = false;
  for (ir::ValueId id : node.inputs) floating_in = floating_in || is_floating(graph.type(id).dtype);
  const auto [outputs, types] = add_alone(result, graph, producer, forward);
  Generator gen(seed);
  bool floating_out = false;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    if (!is_floating(types[k].dtype)) continue;
    floating_out = true;
    const std::string name = "consumer_weight" + std::to_string(k);
    const ir::ValueId w = result.graph.add_parameter(name, types[k]);
    std::vector<double> weights(graph.num_elements(node.outputs[k]));
    for (double& v : weights) v = static_cast<double>(static_cast<float>(0.5 + gen.uniform()));
    result.values.emplace(
        name, from_blob(weights.data(), types[k].shape, Dtype::Float64).to(types[k].dtype));
    result.graph.mark_output(
        result.graph.add_node(ir::OpKind::Mul, {outputs[k], w}, {}, {types[k]}, "consumer")[0]);
  }
  if (!floating_in || !floating_out) return std::nullopt;
  result.cotangents = ir::random_cotangents(result.graph, seed);
  return result;
}

std::string gradient_leaf_of(const std::string& message) {
  static const std::regex leaf(R"(gradient of '([^']+)')");
  std::smatch match;
  if (!std::regex_search(message, match, leaf)) return {};
  return match[1].str();
}

}  // namespace weft::oracle
