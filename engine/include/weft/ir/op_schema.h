#pragma once
// The signature of every op: its tensor inputs, its attributes with their types and
// defaults, and how many outputs it has. PyTorch's functional names and semantics
// (torch.nn.functional / aten), one row per op of WEFT_OP_LIST.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/ir/attributes.h"
#include "weft/ir/op_kind.h"

namespace weft::ir {

struct AttrSpec {
  std::string name;
  AttrType type;
  // A required attribute must be present; an optional one without a default means "none"
  // when absent (clamp's min, div's rounding_mode, argmax's dim).
  bool required;
  std::optional<AttrValue> default_value;
  // For strings: the values allowed (empty: any).
  std::vector<std::string> allowed = {};
};

struct OpSchema {
  OpKind op;
  // The engine file that implements it: "unary", "activation", "binary", "compare",
  // "reduce", "softmax", "matmul", "conv", "pool", "norm", "shape", "join", "index",
  // "interpolate", "cast".
  std::string_view family;
  // PyTorch's argument names; a variadic op has one name ("tensors") for all its inputs.
  std::vector<std::string> input_names;
  int min_inputs;
  int max_inputs;  // -1 = variadic
  // -1: decided by the attributes and the input shape (split, chunk); at least one.
  int num_outputs;
  std::vector<AttrSpec> attrs;
  // When not every count in [min_inputs, max_inputs] is allowed (batch_norm takes 3 or 5
  // inputs): the allowed counts. Empty: the whole range.
  std::vector<int> input_counts = {};

  std::string_view name() const { return op_name(op); }
  const AttrSpec* find_attr(std::string_view attr_name) const;
  bool accepts_input_count(int count) const;
  // "2 or 3", "3 or 5", "at least 1", "1".
  std::string input_count_text() const;
};

// The row of `op`. Throws weft::Error for a value outside the enum.
const OpSchema& schema(OpKind op);

// `attrs` with every absent attribute that has a default filled in (optional attributes
// without a default stay absent). Convenient for kernels and emitters.
Attributes with_defaults(OpKind op, const Attributes& attrs);

}  // namespace weft::ir
