// The plain case of one shape set of a dynamic-shape case.
#include "weft/ir/shape_sets.h"

#include <string>
#include <vector>

#include "weft/error.h"

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
  try {
    retype(plain, result.values);
  } catch (const Error& e) {
    throw Error("shape set " + std::to_string(set) + ": " + e.what());
  }
  return result;
}

void retype(Graph& graph, const TensorMap& values) {
  std::vector<Tensor> computed(graph.values().size());
  for (LeafKind kind : {LeafKind::Input, LeafKind::Parameter}) {
    for (ValueId id : graph.leaves(kind)) {
      Value& leaf = graph.mutable_values()[static_cast<std::size_t>(id)];
      const auto it = values.find(leaf.name);
      if (it == values.end()) throw Error("no value for leaf '" + leaf.name + "'");
      const Shape old_shape = leaf.type.shape;
      leaf.type = TensorType{it->second.dtype(), it->second.sizes()};
      if (leaf.has_layout() && old_shape != leaf.type.shape) {
        leaf.strides = relayout(old_shape, leaf.strides, leaf.type.shape);
        if (!leaf.has_layout()) leaf.storage_offset = 0;
      }
      computed[static_cast<std::size_t>(id)] = it->second;
    }
  }
  for (std::size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& node = graph.nodes()[n];
    std::vector<Tensor> inputs;
    for (ValueId id : node.inputs) inputs.push_back(computed[static_cast<std::size_t>(id)]);
    std::vector<Tensor> outputs;
    try {
      outputs = run_node(node, inputs);
    } catch (const Error& e) {
      throw Error(node_label(graph, n) + ": " + e.what());
    }
    if (outputs.size() != node.outputs.size()) {
      throw Error(node_label(graph, n) + ": now has " + std::to_string(outputs.size()) +
                  " outputs");
    }
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const auto index = static_cast<std::size_t>(node.outputs[k]);
      graph.mutable_values()[index].type = TensorType{outputs[k].dtype(), outputs[k].sizes()};
      computed[index] = outputs[k];
    }
  }
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
