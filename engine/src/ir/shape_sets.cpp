// The plain case of one shape set of a dynamic-shape case.
#include "weft/ir/shape_sets.h"

#include <string>
#include <vector>

#include "weft/error.h"
#include "weft/ir/leaf_values.h"

namespace weft::ir {

ShapeSetCase at_shape_set(const Graph& graph, const TensorMap& values, std::size_t set) {
  if (set >= graph.shape_set_count()) {
    throw Error("shape set " + std::to_string(set) + " of a case with " +
                std::to_string(graph.shape_set_count()) + " shape sets");
  }
  ShapeSetCase result{graph, {}};
  Graph& plain = result.graph;
  for (ValueId id : plain.inputs()) {
    Value& input = plain.mutable_values()[static_cast<std::size_t>(id)];
    if (set > 0 && !input.shape_sets.empty()) {
      const Shape& shape = input.shape_sets.at(set - 1);
      if (input.has_layout()) input.strides = relayout(input.type.shape, input.strides, shape);
      input.type.shape = shape;
    }
    const std::string key = shape_set_key(input.name, input.shape_sets.empty() ? 0 : set);
    const auto found = values.find(key);
    if (found != values.end()) {
      const Tensor& value = found->second;
      if (set > 0 && (value.sizes() != input.type.shape || value.dtype() != input.type.dtype)) {
        throw Error("shape set " + std::to_string(set) + ": value '" + key + "' is " +
                    dtype_name(value.dtype()) + shape_str(value.sizes()) +
                    ", but the set declares " + to_string(input.type));
      }
      result.values[input.name] = value;
    } else if (set > 0) {
      throw Error("shape set " + std::to_string(set) + ": input '" + input.name +
                  "' has no value '" + key + "'");
    }
  }
  plain.clear_shape_sets();
  for (ValueId id : plain.parameters()) {
    const std::string& name = plain.value(id).name;
    if (const auto found = values.find(name); found != values.end()) {
      result.values[name] = found->second;
    }
  }
  result.values = project_to_layouts(plain, std::move(result.values));
  if (set == 0) return result;

  // Every value's type at these shapes: the nodes run on the set's values.
  std::vector<Tensor> computed(plain.values().size());
  for (LeafKind kind : {LeafKind::Input, LeafKind::Parameter}) {
    for (ValueId id : plain.leaves(kind)) {
      try {
        computed[static_cast<std::size_t>(id)] = leaf_value(plain, result.values, id);
      } catch (const Error& e) {
        throw Error("shape set " + std::to_string(set) + ": " + e.what());
      }
    }
  }
  for (std::size_t n = 0; n < plain.nodes().size(); ++n) {
    const Node& node = plain.nodes()[n];
    std::vector<Tensor> inputs;
    for (ValueId id : node.inputs) inputs.push_back(computed[static_cast<std::size_t>(id)]);
    std::vector<Tensor> outputs;
    try {
      outputs = run_node(node, inputs);
    } catch (const Error& e) {
      throw Error("shape set " + std::to_string(set) + ": " + node_label(plain, n) + ": " +
                  e.what());
    }
    if (outputs.size() != node.outputs.size()) {
      throw Error("shape set " + std::to_string(set) + ": " + node_label(plain, n) + ": produced " +
                  std::to_string(outputs.size()) + " outputs");
    }
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const auto out = static_cast<std::size_t>(node.outputs[k]);
      plain.mutable_values()[out].type.shape = outputs[k].sizes();
      computed[out] = outputs[k];
    }
  }
  return result;
}

TensorMap case_values(const Graph& graph, const TensorMap& values) {
  TensorMap kept;
  const auto keep = [&](const std::string& key) {
    if (const auto found = values.find(key); found != values.end())
      kept.emplace(key, found->second);
  };
  for (ValueId id : graph.inputs()) {
    const Value& input = graph.value(id);
    keep(input.name);
    for (std::size_t k = 1; k <= input.shape_sets.size(); ++k) keep(shape_set_key(input.name, k));
  }
  for (ValueId id : graph.parameters()) keep(graph.value(id).name);
  return kept;
}

}  // namespace weft::ir
