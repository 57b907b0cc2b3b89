#include "weft/ir/graph.h"

#include <limits>

#include "weft/error.h"

namespace weft::ir {

std::string to_string(const TensorType& type) {
  std::string text = dtype_name(type.dtype);
  text += "[";
  for (std::size_t i = 0; i < type.shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(type.shape[i]);
  }
  return text + "]";
}

ValueId Graph::new_value(TensorType type, std::string name) {
  if (values_.size() >= static_cast<std::size_t>(std::numeric_limits<ValueId>::max())) {
    throw Error("graph: too many values");
  }
  const auto id = static_cast<ValueId>(values_.size());
  values_.push_back(Value{id, std::move(type), std::move(name)});
  return id;
}

ValueId Graph::add_leaf(LeafKind kind, std::string name, TensorType type) {
  const ValueId id = new_value(std::move(type), std::move(name));
  mutable_leaves(kind).push_back(id);
  return id;
}

ValueId Graph::add_input(std::string name, TensorType type) {
  return add_leaf(LeafKind::Input, std::move(name), std::move(type));
}

ValueId Graph::add_parameter(std::string name, TensorType type) {
  return add_leaf(LeafKind::Parameter, std::move(name), std::move(type));
}

std::vector<ValueId> Graph::add_node(OpKind op, std::vector<ValueId> inputs, Attributes attrs,
                                     std::vector<TensorType> output_types, std::string name) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!has_value(inputs[i])) {
      throw Error("add_node(" + std::string(op_name(op)) + "): input " + std::to_string(i) +
                  " is value " + std::to_string(inputs[i]) +
                  ", which does not exist (the graph has " + std::to_string(values_.size()) +
                  " values)");
    }
  }
  std::vector<ValueId> outputs;
  outputs.reserve(output_types.size());
  for (TensorType& type : output_types) outputs.push_back(new_value(std::move(type), ""));
  attrs.set_owner(std::string(op_name(op)));
  nodes_.push_back(Node{op, std::move(inputs), outputs, std::move(attrs), std::move(name)});
  return outputs;
}

void Graph::mark_output(ValueId id) {
  if (!has_value(id)) {
    throw Error("mark_output: value " + std::to_string(id) + " does not exist (the graph has " +
                std::to_string(values_.size()) + " values)");
  }
  outputs_.push_back(id);
}

const Value& Graph::value(ValueId id) const {
  if (!has_value(id)) {
    throw Error("graph: value " + std::to_string(id) + " does not exist (the graph has " +
                std::to_string(values_.size()) + " values)");
  }
  return values_[static_cast<std::size_t>(id)];
}

std::size_t Graph::num_elements(ValueId id) const {
  const Shape& shape = value(id).type.shape;
  std::size_t count = 1;
  for (std::int64_t dim : shape) {
    if (dim < 0) {
      throw Error("graph: value " + std::to_string(id) +
                  " has a negative dimension: " + to_string(value(id).type));
    }
    if (__builtin_mul_overflow(count, static_cast<std::size_t>(dim), &count)) {
      throw Error("graph: value " + std::to_string(id) +
                  " has too many elements: " + to_string(value(id).type));
    }
  }
  return count;
}

std::optional<ValueId> Graph::find_leaf(LeafKind kind, const std::string& name) const {
  for (ValueId id : leaves(kind)) {
    if (has_value(id) && values_[static_cast<std::size_t>(id)].name == name) return id;
  }
  return std::nullopt;
}

std::optional<LeafKind> Graph::leaf_kind(ValueId id) const {
  for (LeafKind kind : {LeafKind::Input, LeafKind::Parameter}) {
    for (ValueId leaf : leaves(kind)) {
      if (leaf == id) return kind;
    }
  }
  return std::nullopt;
}

std::optional<std::size_t> Graph::producer(ValueId id) const {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    for (ValueId output : nodes_[i].outputs) {
      if (output == id) return i;
    }
  }
  return std::nullopt;
}

std::string node_label(const Graph& graph, std::size_t index) {
  const Node& node = graph.nodes().at(index);
  std::string label = "node " + std::to_string(index);
  if (!node.name.empty()) label += " '" + node.name + "'";
  return label + " (" + std::string(op_name(node.op)) + ")";
}

}  // namespace weft::ir
