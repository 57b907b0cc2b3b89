#pragma once
// The graph IR, the one language every part of weft speaks: typed values, nodes in
// topological order, named inputs and parameters (their names are the safetensors keys of
// their values) and ordered outputs. A plain value type: copy it to edit it (the reducer
// does), and call validate() (weft/ir/validate.h) on the result.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weft/dtype.h"
#include "weft/ir/attributes.h"
#include "weft/ir/op_kind.h"

namespace weft::ir {

using Shape = std::vector<std::int64_t>;

struct TensorType {
  Dtype dtype;
  Shape shape;

  friend bool operator==(const TensorType& a, const TensorType& b) {
    return a.dtype == b.dtype && a.shape == b.shape;
  }
  friend bool operator!=(const TensorType& a, const TensorType& b) { return !(a == b); }
};

// "float32[2, 3]".
std::string to_string(const TensorType& type);

// Index into Graph::values().
using ValueId = std::int32_t;

struct Value {
  ValueId id;
  TensorType type;
  // Inputs and parameters: their (safetensors) name; node outputs: optional.
  std::string name;
  // Inputs only: how every path lays the input out in memory (a transpose, a slice with steps,
  // an expand, channels_last), as strides in elements and an offset into the buffer that holds
  // it. Empty strides: contiguous. A stride of 0 repeats the values at index 0 of that dim (see
  // project_to_layouts).
  Shape strides;
  std::int64_t storage_offset = 0;
  // Inputs only, dynamic shapes: the input's shape in the case's later shape sets (sets 1, 2,
  // ...: every path is called with set 0, then with each of these, without being rebuilt).
  // Empty: the same shape in every set. Values of set k are stored as "name@k".
  std::vector<Shape> shape_sets;

  bool has_layout() const { return !strides.empty(); }

  friend bool operator==(const Value& a, const Value& b) {
    return a.id == b.id && a.type == b.type && a.name == b.name && a.strides == b.strides &&
           a.storage_offset == b.storage_offset && a.shape_sets == b.shape_sets;
  }
  friend bool operator!=(const Value& a, const Value& b) { return !(a == b); }
};

struct Node {
  OpKind op;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  Attributes attrs;
  std::string name;

  friend bool operator==(const Node& a, const Node& b) {
    return a.op == b.op && a.inputs == b.inputs && a.outputs == b.outputs && a.attrs == b.attrs &&
           a.name == b.name;
  }
  friend bool operator!=(const Node& a, const Node& b) { return !(a == b); }
};

// The two kinds of leaves: graph inputs (data fed per run) and parameters (trainable
// weights). Both get their values from values.safetensors, keyed by name.
enum class LeafKind { Input, Parameter };

class Graph {
 public:
  // Builders. Each new value gets the next id. They check only that ids exist; the full
  // rules are checked by validate().
  ValueId add_input(std::string name, TensorType type);
  ValueId add_parameter(std::string name, TensorType type);
  ValueId add_leaf(LeafKind kind, std::string name, TensorType type);
  // Appends a node and one new value per output type; returns the new values' ids.
  std::vector<ValueId> add_node(OpKind op, std::vector<ValueId> inputs, Attributes attrs,
                                std::vector<TensorType> output_types, std::string name = "");
  void mark_output(ValueId id);

  // Accessors.
  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& parameters() const { return parameters_; }
  const std::vector<ValueId>& leaves(LeafKind kind) const {
    return kind == LeafKind::Input ? inputs_ : parameters_;
  }
  const std::vector<ValueId>& outputs() const { return outputs_; }

  bool has_value(ValueId id) const {
    return id >= 0 && static_cast<std::size_t>(id) < values_.size();
  }
  // Throws weft::Error for an unknown id.
  const Value& value(ValueId id) const;
  const TensorType& type(ValueId id) const { return value(id).type; }
  // The product of the value's shape (1 for a scalar). Throws weft::Error on overflow.
  std::size_t num_elements(ValueId id) const;

  // Lookups (linear scans; graphs are small).
  std::optional<ValueId> find_leaf(LeafKind kind, const std::string& name) const;
  // Input or Parameter when `id` is a leaf.
  std::optional<LeafKind> leaf_kind(ValueId id) const;
  // The index of the node that defines `id`, if a node does.
  std::optional<std::size_t> producer(ValueId id) const;

  // Direct access for editing (the reducer); keep values()[i].id == i.
  std::vector<Value>& mutable_values() { return values_; }
  std::vector<Node>& mutable_nodes() { return nodes_; }
  std::vector<ValueId>& mutable_leaves(LeafKind kind) {
    return kind == LeafKind::Input ? inputs_ : parameters_;
  }
  std::vector<ValueId>& mutable_outputs() { return outputs_; }

  // How the program is run and written, beyond its dataflow (the program forms).
  // requires_grad false: a forward-only case: no leaf requires a gradient on any path, and only
  // outputs are judged (TorchScript's fusers and torch.compile take other code paths then).
  bool requires_grad() const { return requires_grad_; }
  void set_requires_grad(bool value) { requires_grad_ = value; }
  // The emitted programs hold conv, linear, norm and embedding layers as nn submodules whose
  // parameters are set from the case (`self.conv = nn.Conv2d(...)`), instead of calling F.*.
  bool nn_modules() const { return nn_modules_; }
  void set_nn_modules(bool value) { nn_modules_ = value; }
  // Dynamic shapes: 1 + the most later shapes any input has (Value::shape_sets).
  std::size_t shape_set_count() const;
  // Every input back to its one shape (Value::shape_sets emptied).
  void clear_shape_sets();

  friend bool operator==(const Graph& a, const Graph& b) {
    return a.values_ == b.values_ && a.nodes_ == b.nodes_ && a.inputs_ == b.inputs_ &&
           a.parameters_ == b.parameters_ && a.outputs_ == b.outputs_ &&
           a.requires_grad_ == b.requires_grad_ && a.nn_modules_ == b.nn_modules_;
  }
  friend bool operator!=(const Graph& a, const Graph& b) { return !(a == b); }

 private:
  ValueId new_value(TensorType type, std::string name);

  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> parameters_;
  std::vector<ValueId> outputs_;
  bool requires_grad_ = true;
  bool nn_modules_ = false;
};

// "node 3 'conv' (conv2d)": how errors from every part name a node of `graph`.
std::string node_label(const Graph& graph, std::size_t index);

// The strides of a contiguous tensor of `shape`.
Shape contiguous_strides(const Shape& shape);
// The strides of a rank-4 tensor of `shape` in channels_last (NHWC) order.
Shape channels_last_strides(const Shape& shape);
// Elements of the buffer a layout reaches: offset + 1 + sum((size - 1) * stride); offset for
// a tensor without elements.
std::int64_t storage_extent(const Shape& shape, const Shape& strides, std::int64_t offset);
// Why `strides`/`offset` cannot lay out `shape` ("" when they can): one stride per dim, none
// negative, and the dims with a non-zero stride never reach one element twice.
std::string layout_problem(const Shape& shape, const Shape& strides, std::int64_t offset);

// The strides of the same layout kind for a tensor of `new_shape`: the dims kept in the same
// memory order with the same steps between them, stride-0 dims kept at 0 (a transpose stays a
// transpose, channels_last stays channels_last). Empty when the ranks differ.
Shape relayout(const Shape& old_shape, const Shape& strides, const Shape& new_shape);

// The key of input `name`'s value in shape set `set` of a dynamic-shape case: `name` for set
// 0, "name@1", "name@2", ... after ('@' is not allowed in names, so keys never collide).
std::string shape_set_key(const std::string& name, std::size_t set);

// The program forms a case uses, by name, for campaign statistics and reports:
// "forward-only", "nn-modules", "non-contiguous-input", "python-scalar", "memory-format",
// "int-or-bool-input" (a leaf that is not floating), "cast", "dynamic-shapes",
// "half-precision" (a float16 or bfloat16 value anywhere), "in-place" (a node that writes into
// its input, or a write into a slot: weft/ir/inplace.h). Sorted, no repeats.
std::vector<std::string> program_forms(const Graph& graph);

}  // namespace weft::ir
