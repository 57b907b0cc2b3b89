#pragma once
// Structural checks of a graph against the op schemas: ids, definition order, arity,
// attributes, names and outputs. Shapes are not inferred here; the engine checks them when
// it runs the graph.

#include <string>
#include <string_view>

#include "weft/error.h"
#include "weft/ir/graph.h"

namespace weft::ir {

// what(): where the problem is and what it is, e.g.
//   "node 3 'conv' (conv2d): attribute 'stride': expected an int list, got a float".
class ValidationError : public Error {
 public:
  ValidationError(int node_index, std::string field, const std::string& message)
      : Error(message), node_index_(node_index), field_(std::move(field)) {}
  // The node at fault, -1 when the problem is not in a node (inputs, parameters, outputs).
  int node_index() const { return node_index_; }
  // The field at fault as a JSON pointer into graph.json: "/nodes/3/attrs/stride",
  // "/inputs/0/name", "/outputs/1".
  const std::string& field() const { return field_; }

 private:
  int node_index_;
  std::string field_;
};

// Throws ValidationError on the first problem found.
void validate(const Graph& graph);

// Whether `name` is a valid input, parameter, node or value name: non-empty, only
// [A-Za-z0-9_.] (PyTorch's state_dict keys).
bool is_valid_name(const std::string& name);

// One JSON pointer token (RFC 6901: '~' → "~0", '/' → "~1"), for the field names of errors.
std::string json_pointer_token(std::string_view token);

}  // namespace weft::ir
