#include "weft/ir/graph.h"

#include <algorithm>
#include <limits>
#include <set>

#include "weft/error.h"
#include "weft/ir/inplace.h"
#include "weft/ir/op_schema.h"

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
  values_.push_back(Value{id, std::move(type), std::move(name), {}, 0, {}});
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

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  std::int64_t step = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    strides[d] = step;
    step *= std::max<std::int64_t>(shape[d], 1);
  }
  return strides;
}

Shape channels_last_strides(const Shape& shape) {
  if (shape.size() != 4)
    throw Error("channels_last needs a rank-4 shape, got rank " + std::to_string(shape.size()));
  const auto at_least_one = [&](std::size_t d) { return std::max<std::int64_t>(shape[d], 1); };
  Shape strides(4);
  strides[1] = 1;
  strides[3] = at_least_one(1);
  strides[2] = strides[3] * at_least_one(3);
  strides[0] = strides[2] * at_least_one(2);
  return strides;
}

std::int64_t storage_extent(const Shape& shape, const Shape& strides, std::int64_t offset) {
  std::int64_t extent = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return offset;
    extent += (shape[d] - 1) * strides.at(d);
  }
  return offset + extent;
}

std::string layout_problem(const Shape& shape, const Shape& strides, std::int64_t offset) {
  if (strides.size() != shape.size()) {
    return "strides have " + std::to_string(strides.size()) + " entries for a rank-" +
           std::to_string(shape.size()) + " shape";
  }
  if (offset < 0) return "storage_offset " + std::to_string(offset) + " is negative";
  for (std::size_t d = 0; d < strides.size(); ++d) {
    if (strides[d] < 0)
      return "stride " + std::to_string(strides[d]) + " of dim " + std::to_string(d) +
             " is negative";
  }
  // Dims that move through memory, from the innermost out: each must step past everything
  // the dims inside it reach, or two indices would share an element.
  std::vector<std::size_t> moving;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] > 1 && strides[d] > 0) moving.push_back(d);
  }
  std::sort(moving.begin(), moving.end(), [&](std::size_t a, std::size_t b) {
    return strides[a] != strides[b] ? strides[a] < strides[b] : a > b;
  });
  std::int64_t reach = 1;
  for (std::size_t d : moving) {
    if (strides[d] < reach) {
      return "dim " + std::to_string(d) + " (stride " + std::to_string(strides[d]) +
             ") overlaps the dims inside it, which reach " + std::to_string(reach) +
             " elements; only a stride of 0 may repeat elements";
    }
    reach = strides[d] * shape[d];
  }
  return "";
}

namespace {
// The dims with a non-zero stride, innermost first (layout_problem's order).
std::vector<std::size_t> memory_order(const Shape& strides) {
  std::vector<std::size_t> order;
  for (std::size_t d = 0; d < strides.size(); ++d) {
    if (strides[d] > 0) order.push_back(d);
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return strides[a] != strides[b] ? strides[a] < strides[b] : a > b;
  });
  return order;
}
}  // namespace

Shape relayout(const Shape& old_shape, const Shape& strides, const Shape& new_shape) {
  if (old_shape.size() != new_shape.size() || strides.size() != old_shape.size()) return {};
  if (old_shape == new_shape) return strides;
  Shape result(strides.size(), 0);
  std::int64_t old_reach = 1;
  std::int64_t new_reach = 1;
  for (std::size_t d : memory_order(strides)) {
    const std::int64_t step = std::max<std::int64_t>(strides[d] / old_reach, 1);
    result[d] = new_reach * step;
    old_reach = strides[d] * std::max<std::int64_t>(old_shape[d], 1);
    new_reach = result[d] * std::max<std::int64_t>(new_shape[d], 1);
  }
  return result;
}

std::size_t Graph::shape_set_count() const {
  std::size_t count = 1;
  for (ValueId id : inputs_) {
    count = std::max(count, 1 + values_[static_cast<std::size_t>(id)].shape_sets.size());
  }
  return count;
}

void Graph::clear_shape_sets() {
  for (ValueId id : inputs_) values_[static_cast<std::size_t>(id)].shape_sets.clear();
}

std::string shape_set_key(const std::string& name, std::size_t set) {
  return set == 0 ? name : name + "@" + std::to_string(set);
}

std::vector<std::string> program_forms(const Graph& graph) {
  std::set<std::string> forms;
  if (!graph.requires_grad()) forms.insert("forward-only");
  if (graph.nn_modules()) forms.insert("nn-modules");
  if (graph.shape_set_count() > 1) forms.insert("dynamic-shapes");
  for (LeafKind kind : {LeafKind::Input, LeafKind::Parameter}) {
    for (ValueId id : graph.leaves(kind)) {
      const Value& leaf = graph.value(id);
      if (leaf.has_layout() && leaf.strides != contiguous_strides(leaf.type.shape)) {
        forms.insert("non-contiguous-input");
      }
      if (!is_floating(leaf.type.dtype)) forms.insert("int-or-bool-input");
    }
  }
  for (const Value& value : graph.values()) {
    if (is_reduced_floating(value.type.dtype)) forms.insert("half-precision");
  }
  for (const Node& node : graph.nodes()) {
    if (schema(node.op).family == "scalar") forms.insert("python-scalar");
    if (node.op == OpKind::Contiguous) forms.insert("memory-format");
    if (node.op == OpKind::Cast) forms.insert("cast");
    if (is_in_place(node) || is_writeback(node)) forms.insert("in-place");
  }
  return {forms.begin(), forms.end()};
}

}  // namespace weft::ir
