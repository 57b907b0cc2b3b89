#include "weft/ir/validate.h"

#include <algorithm>
#include <cstddef>
#include <map>

#include "weft/ir/inplace.h"
#include "weft/ir/op_schema.h"

namespace weft::ir {

namespace {

std::string quoted(const std::string& text) {
  return "'" + text + "'";
}

std::string join_names(const std::vector<std::string>& names, const char* separator = ", ") {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += separator;
    text += names[i];
  }
  return text;
}

// Explains why a name is invalid, or returns "".
std::string name_problem(const std::string& name) {
  if (name.empty()) return "name is empty";
  for (char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.';
    if (!ok) {
      std::string shown = (c >= 0x20 && c < 0x7f)
                              ? std::string("'") + c + "'"
                              : "byte " + std::to_string(static_cast<unsigned char>(c));
      return "name " + quoted(name) + " contains " + shown +
             "; names may contain only A-Z a-z 0-9 _ .";
    }
  }
  return "";
}

class Validator {
 public:
  explicit Validator(const Graph& graph)
      : graph_(graph), definer_(graph.values().size()), producer_(graph.values().size(), -1) {}

  void run() {
    check_value_table();
    for (std::size_t i = 0; i < graph_.nodes().size(); ++i) {
      for (ValueId id : graph_.nodes()[i].outputs) {
        if (known(id) && producer_[index(id)] < 0) producer_[index(id)] = static_cast<int>(i);
      }
    }
    check_leaves(LeafKind::Input);
    check_leaves(LeafKind::Parameter);
    for (std::size_t i = 0; i < graph_.nodes().size(); ++i) check_node(i);
    check_outputs();
    check_in_place();
  }

 private:
  // In-place writes keep the graph's meaning (weft/ir/inplace.h).
  void check_in_place() {
    for (std::size_t n = 0; n < graph_.nodes().size(); ++n) {
      const Node& node = graph_.nodes()[n];
      if (node.op == OpKind::Div && is_in_place(node) && node.attrs.has("rounding_mode")) {
        fail(static_cast<int>(n), "/nodes/" + std::to_string(n) + "/attrs/inplace",
             node_label(graph_, n), "div with a rounding mode has no in-place form here");
      }
    }
    if (const auto problem = in_place_problem(graph_)) {
      const auto n = static_cast<int>(problem->node);
      fail(n, "/nodes/" + std::to_string(n), node_label(graph_, problem->node), problem->message);
    }
  }

  [[noreturn]] void fail(int node, const std::string& field, const std::string& where,
                         const std::string& problem) {
    throw ValidationError(node, field, where + ": " + problem);
  }

  bool known(ValueId id) const { return graph_.has_value(id); }
  static std::size_t index(ValueId id) { return static_cast<std::size_t>(id); }

  std::string unknown_id_problem(ValueId id) const {
    return "value " + std::to_string(id) + " does not exist (the graph has " +
           std::to_string(graph_.values().size()) + " values)";
  }

  void check_value_table() {
    const auto& values = graph_.values();
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i].id != static_cast<ValueId>(i)) {
        fail(-1, "", "graph",
             "values()[" + std::to_string(i) + "] has id " + std::to_string(values[i].id) +
                 "; ids must equal their index");
      }
    }
  }

  void check_shape(int node, const std::string& field, const std::string& where, ValueId id) {
    const TensorType& type = graph_.type(id);
    for (std::size_t d = 0; d < type.shape.size(); ++d) {
      if (type.shape[d] < 0) {
        fail(node, field + "/shape/" + std::to_string(d), where,
             "shape " + to_string(type) + " has a negative size at dim " + std::to_string(d));
      }
    }
  }

  // Records that `id` is defined by `definer`, or fails if it already was.
  void define(int node, const std::string& field, const std::string& where, ValueId id,
              const std::string& definer) {
    std::string& first = definer_[index(id)];
    if (!first.empty()) {
      fail(node, field, where,
           "value " + std::to_string(id) + " is defined twice (first by " + first + ")");
    }
    first = definer;
  }

  void check_leaves(LeafKind kind) {
    const bool input = kind == LeafKind::Input;
    const std::string section = input ? "/inputs/" : "/parameters/";
    const auto& ids = graph_.leaves(kind);
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const ValueId id = ids[k];
      const std::string field = section + std::to_string(k);
      std::string where = std::string(input ? "input " : "parameter ") + std::to_string(k);
      if (!known(id)) fail(-1, field + "/id", where, unknown_id_problem(id));
      const std::string& name = graph_.value(id).name;
      where += " " + quoted(name);
      define(-1, field + "/id", where, id, where);
      if (std::string problem = name_problem(name); !problem.empty()) {
        fail(-1, field + "/name", where, problem);
      }
      if (auto it = leaf_names_.find(name); it != leaf_names_.end()) {
        fail(-1, field + "/name", where,
             "name " + quoted(name) + " is already used by " + it->second +
                 "; input and parameter names must be unique");
      }
      leaf_names_.emplace(name, where);
      check_shape(-1, field, where, id);
      const Value& value = graph_.value(id);
      if (!input && (value.has_layout() || value.storage_offset != 0)) {
        fail(-1, field + "/strides", where,
             "parameters are contiguous; a layout (strides, storage_offset) is for inputs");
      }
      if (!value.has_layout() && value.storage_offset != 0) {
        fail(-1, field + "/storage_offset", where, "a storage_offset needs strides");
      }
      if (value.has_layout()) {
        if (std::string problem =
                layout_problem(value.type.shape, value.strides, value.storage_offset);
            !problem.empty()) {
          fail(-1, field + "/strides", where, problem);
        }
      }
      check_shape_sets(field, where, value, input);
    }
  }

  // Dynamic shapes: every later shape of an input has its rank, no negative dim, and every
  // input that changes has one shape per later set.
  void check_shape_sets(const std::string& field, const std::string& where, const Value& value,
                        bool input) {
    if (value.shape_sets.empty()) return;
    if (!input) {
      fail(-1, field + "/shape_sets", where,
           "parameters keep their shape; shape sets (dynamic shapes) are for inputs");
    }
    const std::size_t later = graph_.shape_set_count() - 1;
    if (value.shape_sets.size() != later) {
      fail(-1, field + "/shape_sets", where,
           "expected " + std::to_string(later) + " shapes (one per later shape set, as other " +
               "inputs have), got " + std::to_string(value.shape_sets.size()));
    }
    for (std::size_t k = 0; k < value.shape_sets.size(); ++k) {
      const Shape& shape = value.shape_sets[k];
      const std::string at = field + "/shape_sets/" + std::to_string(k);
      if (shape.size() != value.type.shape.size()) {
        fail(-1, at, where,
             "shape set " + std::to_string(k + 1) + " has rank " + std::to_string(shape.size()) +
                 ", the input has rank " + std::to_string(value.type.shape.size()));
      }
      for (std::int64_t d : shape) {
        if (d < 0) fail(-1, at, where, "negative dim " + std::to_string(d));
      }
    }
  }

  void check_node(std::size_t i) {
    const Node& node = graph_.nodes()[i];
    const int n = static_cast<int>(i);
    const std::string field = "/nodes/" + std::to_string(i);
    std::string where = "node " + std::to_string(i);
    if (!node.name.empty()) where += " " + quoted(node.name);
    if (static_cast<std::size_t>(node.op) >= kNumOps) {
      fail(n, field + "/op", where,
           "unknown op #" + std::to_string(static_cast<unsigned>(node.op)));
    }
    const OpSchema& s = schema(node.op);
    where += " (" + std::string(s.name()) + ")";

    if (!node.name.empty()) {
      if (std::string problem = name_problem(node.name); !problem.empty()) {
        fail(n, field + "/name", where, problem);
      }
    }

    // Inputs: arity, then each one defined earlier.
    const int num_inputs = static_cast<int>(node.inputs.size());
    if (!s.accepts_input_count(num_inputs)) {
      const std::string count = s.input_count_text();
      fail(n, field + "/inputs", where,
           "expected " + count +
               (count == "1" || count == "at least 1" ? " input (" : " inputs (") +
               join_names(s.input_names) + "), got " + std::to_string(num_inputs));
    }
    for (std::size_t k = 0; k < node.inputs.size(); ++k) {
      const ValueId id = node.inputs[k];
      const std::string input_field = field + "/inputs/" + std::to_string(k);
      const std::string what = "input " + std::to_string(k) + " (" + input_name(s, k) + ")";
      if (!known(id)) fail(n, input_field, where, what + ": " + unknown_id_problem(id));
      if (definer_[index(id)].empty()) {
        const int later = producer_[index(id)];
        if (later == n) {
          fail(n, input_field, where,
               what + ": value " + std::to_string(id) + " is an output of this same node");
        }
        if (later > n) {
          fail(n, input_field, where,
               what + ": value " + std::to_string(id) + " is used before it is defined (by node " +
                   std::to_string(later) + "); nodes must be in topological order");
        }
        fail(n, input_field, where,
             what + ": value " + std::to_string(id) +
                 " is not defined by any input, parameter or node");
      }
    }

    // Outputs: count, then each one a fresh value.
    const int num_outputs = static_cast<int>(node.outputs.size());
    if (s.num_outputs >= 0 && num_outputs != s.num_outputs) {
      fail(n, field + "/outputs", where,
           "expected " + std::to_string(s.num_outputs) + " output" +
               (s.num_outputs == 1 ? "" : "s") + ", got " + std::to_string(num_outputs));
    }
    if (s.num_outputs < 0 && num_outputs < 1) {
      fail(n, field + "/outputs", where, "expected at least 1 output, got 0");
    }
    for (std::size_t k = 0; k < node.outputs.size(); ++k) {
      const ValueId id = node.outputs[k];
      const std::string output_field = field + "/outputs/" + std::to_string(k);
      if (!known(id)) {
        fail(n, output_field + "/id", where,
             "output " + std::to_string(k) + ": " + unknown_id_problem(id));
      }
      define(n, output_field + "/id", where, id, where + " output " + std::to_string(k));
      const std::string& value_name = graph_.value(id).name;
      if (!value_name.empty()) {
        if (std::string problem = name_problem(value_name); !problem.empty()) {
          fail(n, output_field + "/name", where, "output " + std::to_string(k) + ": " + problem);
        }
      }
      check_shape(n, output_field, where, id);
    }

    check_attributes(n, field, where, s, node.attrs);
  }

  static std::string input_name(const OpSchema& s, std::size_t k) {
    if (s.max_inputs == -1) return s.input_names.front() + "[" + std::to_string(k) + "]";
    return k < s.input_names.size() ? s.input_names[k] : "extra";
  }

  void check_attributes(int n, const std::string& field, const std::string& where,
                        const OpSchema& s, const Attributes& attrs) {
    for (const auto& [name, value] : attrs) {
      const std::string attr_field = field + "/attrs/" + json_pointer_token(name);
      const AttrSpec* spec = s.find_attr(name);
      if (spec == nullptr) {
        std::vector<std::string> known_names;
        for (const AttrSpec& a : s.attrs) known_names.push_back(a.name);
        fail(n, attr_field, where,
             "unknown attribute " + quoted(name) + " (" + std::string(s.name()) +
                 (known_names.empty() ? " takes no attributes)"
                                      : " takes: " + join_names(known_names) + ")"));
      }
      if (!attr_type_accepts(spec->type, attr_type(value))) {
        fail(n, attr_field, where,
             "attribute " + quoted(name) + ": expected " + attr_type_phrase(spec->type) + ", got " +
                 attr_type_phrase(attr_type(value)) + " (" + attr_value_to_string(value) + ")");
      }
      if (!spec->allowed.empty()) {
        const auto& text = std::get<std::string>(value);
        if (std::find(spec->allowed.begin(), spec->allowed.end(), text) == spec->allowed.end()) {
          std::vector<std::string> shown;
          for (const std::string& a : spec->allowed) shown.push_back("\"" + a + "\"");
          fail(n, attr_field, where,
               "attribute " + quoted(name) + ": expected one of " + join_names(shown) + ", got \"" +
                   text + "\"");
        }
      }
    }
    for (const AttrSpec& spec : s.attrs) {
      if (spec.required && !attrs.has(spec.name)) {
        fail(n, field + "/attrs/" + json_pointer_token(spec.name), where,
             "missing required attribute " + quoted(spec.name) + " (" +
                 attr_type_phrase(spec.type) + ")");
      }
    }
    check_op_rules(n, field, where, s.op, attrs);
  }

  // Rules of single ops that need no shapes (the types are already checked).
  void check_op_rules(int n, const std::string& field, const std::string& where, OpKind op,
                      const Attributes& attrs) {
    const std::string attrs_field = field + "/attrs";
    switch (op) {
      case OpKind::Clamp:
        if (!attrs.has("min") && !attrs.has("max")) {
          fail(n, attrs_field, where, "at least one of 'min' and 'max' must be given");
        }
        break;
      case OpKind::Reshape: {
        const auto& shape = attrs.get_ints("shape");
        if (std::count(shape.begin(), shape.end(), -1) > 1) {
          fail(n, attrs_field + "/shape", where,
               "attribute 'shape': only one dimension can be inferred (-1), got " +
                   attr_value_to_string(shape));
        }
        for (std::int64_t size : shape) {
          if (size < -1) {
            fail(n, attrs_field + "/shape", where,
                 "attribute 'shape': invalid size " + std::to_string(size) + " in " +
                     attr_value_to_string(shape));
          }
        }
        break;
      }
      case OpKind::Pad: {
        const auto& pad = attrs.get_ints("pad");
        if (pad.size() % 2 != 0) {
          fail(n, attrs_field + "/pad", where,
               "attribute 'pad': padding length must be divisible by 2, got " +
                   attr_value_to_string(pad));
        }
        break;
      }
      case OpKind::AdaptiveAvgPool2d:
      case OpKind::AdaptiveAvgPool3d:
      case OpKind::AdaptiveMaxPool1d:
      case OpKind::AdaptiveMaxPool2d: {
        const auto& size = attrs.get_ints("output_size");
        const std::size_t want = op == OpKind::AdaptiveMaxPool1d   ? 1
                                 : op == OpKind::AdaptiveAvgPool3d ? 3
                                                                   : 2;
        if (size.size() != want) {
          fail(n, attrs_field + "/output_size", where,
               "attribute 'output_size': expected " + std::to_string(want) + " sizes, got " +
                   attr_value_to_string(size));
        }
        break;
      }
      default:
        break;
    }
  }

  void check_outputs() {
    const auto& outputs = graph_.outputs();
    if (outputs.empty()) fail(-1, "/outputs", "graph", "graph has no outputs");
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const ValueId id = outputs[k];
      const std::string where = "graph output " + std::to_string(k);
      const std::string field = "/outputs/" + std::to_string(k);
      if (!known(id)) fail(-1, field, where, unknown_id_problem(id));
      if (definer_[index(id)].empty()) {
        fail(-1, field, where,
             "value " + std::to_string(id) + " is not defined by any input, parameter or node");
      }
    }
  }

  const Graph& graph_;
  std::vector<std::string> definer_;  // per value: who defines it ("" = not yet)
  std::vector<int> producer_;         // per value: the first node that lists it as an output
  std::map<std::string, std::string> leaf_names_;  // name → the leaf that has it
};

}  // namespace

bool is_valid_name(const std::string& name) {
  return name_problem(name).empty();
}

void validate(const Graph& graph) {
  Validator(graph).run();
}

std::string json_pointer_token(std::string_view token) {
  std::string escaped;
  for (char c : token) {
    if (c == '~') {
      escaped += "~0";
    } else if (c == '/') {
      escaped += "~1";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

}  // namespace weft::ir
