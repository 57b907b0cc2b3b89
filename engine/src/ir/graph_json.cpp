#include "weft/ir/graph_json.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <utility>

#include "weft/error.h"
#include "weft/io/atomic_file.h"
#include "weft/ir/op_schema.h"
#include "weft/ir/validate.h"

namespace weft::ir {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Writing

namespace {

json encode_attr(const AttrValue& value) {
  struct Visitor {
    json operator()(std::int64_t x) const { return x; }
    json operator()(double x) const {
      if (std::isnan(x)) return "nan";
      if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
      return x;  // nlohmann writes 1.0 as "1.0": floats stay floats
    }
    json operator()(bool x) const { return x; }
    json operator()(const std::string& x) const { return x; }
    json operator()(const std::vector<std::int64_t>& xs) const { return xs; }
    json operator()(Dtype x) const { return dtype_name(x); }
  };
  return std::visit(Visitor{}, value);
}

json encode_type(const TensorType& type, json object) {
  object["dtype"] = dtype_name(type.dtype);
  object["shape"] = type.shape;
  return object;
}

}  // namespace

json graph_to_json(const Graph& graph) {
  validate(graph);
  // File ids: 0, 1, 2, … in order of appearance (see the header).
  std::vector<std::int64_t> file_id(graph.values().size(), -1);
  std::int64_t next_id = 0;
  auto define = [&](ValueId id) { return file_id[static_cast<std::size_t>(id)] = next_id++; };
  auto use = [&](ValueId id) { return file_id[static_cast<std::size_t>(id)]; };

  json document = json::object();
  // The lowest version that expresses the graph: files without program forms stay version 1.
  bool forms = !graph.requires_grad() || graph.nn_modules();
  for (ValueId id : graph.inputs()) {
    forms = forms || graph.value(id).has_layout() || !graph.value(id).shape_sets.empty();
  }
  document["weft"] = forms ? kGraphJsonVersion : 1;
  if (!graph.requires_grad()) document["requires_grad"] = false;
  if (graph.nn_modules()) document["nn_modules"] = true;
  for (LeafKind kind : {LeafKind::Input, LeafKind::Parameter}) {
    json leaves = json::array();
    for (ValueId id : graph.leaves(kind)) {
      const Value& value = graph.value(id);
      json leaf = json::object();
      leaf["name"] = value.name;
      leaf["id"] = define(id);
      leaf = encode_type(value.type, std::move(leaf));
      if (value.has_layout()) {
        leaf["strides"] = value.strides;
        if (value.storage_offset != 0) leaf["storage_offset"] = value.storage_offset;
      }
      if (!value.shape_sets.empty()) leaf["shape_sets"] = value.shape_sets;
      leaves.push_back(std::move(leaf));
    }
    document[kind == LeafKind::Input ? "inputs" : "parameters"] = std::move(leaves);
  }
  json nodes = json::array();
  for (const Node& node : graph.nodes()) {
    json entry = json::object();
    entry["op"] = std::string(op_name(node.op));
    if (!node.name.empty()) entry["name"] = node.name;
    json inputs = json::array();
    for (ValueId id : node.inputs) inputs.push_back(use(id));
    entry["inputs"] = std::move(inputs);
    json outputs = json::array();
    for (ValueId id : node.outputs) {
      const Value& value = graph.value(id);
      json output = json::object();
      output["id"] = define(id);
      if (!value.name.empty()) output["name"] = value.name;
      outputs.push_back(encode_type(value.type, std::move(output)));
    }
    entry["outputs"] = std::move(outputs);
    json attrs = json::object();
    for (const auto& [name, value] : node.attrs) attrs[name] = encode_attr(value);
    entry["attrs"] = std::move(attrs);
    nodes.push_back(std::move(entry));
  }
  document["nodes"] = std::move(nodes);
  json outputs = json::array();
  for (ValueId id : graph.outputs()) outputs.push_back(use(id));
  document["outputs"] = std::move(outputs);
  return document;
}

namespace {

// graph.json's layout: fields in a reading order (op, name, inputs, outputs, attrs), and
// anything that fits on one line (shapes, id lists, leaf and output records, short attribute
// sets) written on one line. Attribute names are written sorted.
constexpr int kLineWidth = 100;
constexpr std::array<const char*, 16> kKeyOrder{
    {"weft", "requires_grad", "nn_modules", "op", "name", "id", "dtype", "shape", "strides",
     "storage_offset", "shape_sets", "inputs", "parameters", "nodes", "outputs", "attrs"}};

std::vector<json::const_iterator> ordered_members(const json& object, bool sorted) {
  std::vector<json::const_iterator> members;
  if (!sorted) {
    for (const char* key : kKeyOrder) {
      if (auto it = object.find(key); it != object.end()) members.push_back(it);
    }
  }
  for (auto it = object.begin(); it != object.end(); ++it) {
    const bool placed =
        !sorted && std::find(kKeyOrder.begin(), kKeyOrder.end(), it.key()) != kKeyOrder.end();
    if (!placed) members.push_back(it);
  }
  return members;
}

std::string scalar_text(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

void write_compact(const json& value, bool sorted, std::string& out) {
  if (value.is_object()) {
    out += "{";
    bool first = true;
    for (const auto& it : ordered_members(value, sorted)) {
      out += first ? "" : ", ";
      first = false;
      out += scalar_text(it.key()) + ": ";
      write_compact(it.value(), it.key() == "attrs", out);
    }
    out += "}";
  } else if (value.is_array()) {
    out += "[";
    for (std::size_t i = 0; i < value.size(); ++i) {
      out += i == 0 ? "" : ", ";
      write_compact(value[i], false, out);
    }
    out += "]";
  } else {
    out += scalar_text(value);
  }
}

// `used`: the columns already taken on the current line (indentation and key).
void write_pretty(const json& value, bool sorted, int indent, int used, std::string& out) {
  std::string compact;
  write_compact(value, sorted, compact);
  const bool empty = (value.is_object() || value.is_array()) && value.empty();
  if (empty || !(value.is_object() || value.is_array()) ||
      used + static_cast<int>(compact.size()) + 1 <= kLineWidth) {
    out += compact;
    return;
  }
  const std::string inner(static_cast<std::size_t>(indent + 2), ' ');
  if (value.is_object()) {
    out += "{\n";
    const auto members = ordered_members(value, sorted);
    for (std::size_t i = 0; i < members.size(); ++i) {
      const std::string key = scalar_text(members[i].key()) + ": ";
      out += inner + key;
      write_pretty(members[i].value(), members[i].key() == "attrs", indent + 2,
                   indent + 2 + static_cast<int>(key.size()), out);
      out += i + 1 < members.size() ? ",\n" : "\n";
    }
    out += std::string(static_cast<std::size_t>(indent), ' ') + "}";
  } else {
    out += "[\n";
    for (std::size_t i = 0; i < value.size(); ++i) {
      out += inner;
      write_pretty(value[i], false, indent + 2, indent + 2, out);
      out += i + 1 < value.size() ? ",\n" : "\n";
    }
    out += std::string(static_cast<std::size_t>(indent), ' ') + "]";
  }
}

}  // namespace

std::string graph_to_json_text(const Graph& graph) {
  // The layout depends only on the document, so the same graph always gives the same bytes.
  std::string text;
  write_pretty(graph_to_json(graph), false, 0, 0, text);
  return text + "\n";
}

void save_graph(const Graph& graph, const std::filesystem::path& path) {
  io::write_file_atomically(path, graph_to_json_text(graph));
}

// ---------------------------------------------------------------------------------------------
// Reading

namespace {

std::string child(const std::string& pointer, std::string_view key) {
  return pointer + "/" + json_pointer_token(key);
}
std::string child(const std::string& pointer, std::size_t index) {
  return pointer + "/" + std::to_string(index);
}

// "a string (\"abc\")", "an object", … for messages.
std::string describe(const json& value) {
  std::string shown;
  switch (value.type()) {
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::null:
      return "null";
    case json::value_t::discarded:
      return "nothing";
    case json::value_t::binary:
      return "binary data";
    case json::value_t::string:
      shown = "a string";
      break;
    case json::value_t::boolean:
      shown = "a boolean";
      break;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      shown = "an integer";
      break;
    case json::value_t::number_float:
      shown = "a number";
      break;
  }
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return shown + " (" + text + ")";
}

class Reader {
 public:
  explicit Reader(const std::string& source) : source_(source) {}

  Graph read(const json& document) {
    if (!document.is_object()) fail("", "expected a graph.json object, got " + describe(document));
    read_version(document);
    expect_keys(
        document, "",
        {"weft", "requires_grad", "nn_modules", "inputs", "parameters", "nodes", "outputs"});
    if (auto it = document.find("requires_grad"); it != document.end()) {
      if (!it->is_boolean()) fail("/requires_grad", "expected a bool, got " + describe(*it));
      graph_.set_requires_grad(it->get<bool>());
    }
    if (auto it = document.find("nn_modules"); it != document.end()) {
      if (!it->is_boolean()) fail("/nn_modules", "expected a bool, got " + describe(*it));
      graph_.set_nn_modules(it->get<bool>());
    }
    read_leaves(document, LeafKind::Input, "inputs");
    read_leaves(document, LeafKind::Parameter, "parameters");
    const json& nodes = array_member(document, "", "nodes");
    for (std::size_t i = 0; i < nodes.size(); ++i) read_node(nodes[i], child("/nodes", i));
    const json& outputs = array_member(document, "", "outputs");
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      graph_.mark_output(use(outputs[k], child("/outputs", k), "graph output"));
    }
    return std::move(graph_);
  }

 private:
  [[noreturn]] void fail(const std::string& pointer, const std::string& problem) const {
    throw FormatError(source_, pointer, problem);
  }

  void read_version(const json& document) {
    const json& version = member(document, "", "weft");
    if (!version.is_number_integer()) {
      fail("/weft", "expected the schema version (an integer), got " + describe(version));
    }
    if (version.is_number_unsigned() ? version.get<std::uint64_t>() > kGraphJsonVersion
                                     : version.get<std::int64_t>() > kGraphJsonVersion) {
      fail("/weft", "graph.json schema version " +
                        version.dump(-1, ' ', false, json::error_handler_t::replace) +
                        " is newer than this build of weft reads (version " +
                        std::to_string(kGraphJsonVersion) + "); update weft to read it");
    }
    if (version.get<std::int64_t>() < 1) {
      fail("/weft", "unsupported schema version " + version.dump() + " (expected " +
                        std::to_string(kGraphJsonVersion) + ")");
    }
  }

  const json& member(const json& object, const std::string& pointer, const char* key) const {
    auto it = object.find(key);
    if (it == object.end()) fail(child(pointer, key), "missing");
    return *it;
  }
  const json& array_member(const json& object, const std::string& pointer, const char* key) const {
    const json& value = member(object, pointer, key);
    if (!value.is_array()) fail(child(pointer, key), "expected an array, got " + describe(value));
    return value;
  }
  const json& object_at(const json& value, const std::string& pointer, const char* what) const {
    if (!value.is_object())
      fail(pointer, std::string("expected ") + what + ", got " + describe(value));
    return value;
  }

  void expect_keys(const json& object, const std::string& pointer,
                   std::initializer_list<const char*> keys) const {
    for (auto it = object.begin(); it != object.end(); ++it) {
      bool known = false;
      for (const char* key : keys) known = known || it.key() == key;
      if (!known) {
        std::string list;
        for (const char* key : keys) list += std::string(list.empty() ? "" : ", ") + key;
        fail(child(pointer, it.key()), "unknown field (expected: " + list + ")");
      }
    }
  }

  std::int64_t integer(const json& value, const std::string& pointer) const {
    if (value.is_number_unsigned()) {
      const auto u = value.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        fail(pointer, "integer " + std::to_string(u) + " is out of range (int64)");
      }
      return static_cast<std::int64_t>(u);
    }
    if (value.is_number_integer()) return value.get<std::int64_t>();
    fail(pointer, "expected an integer, got " + describe(value));
  }

  std::vector<std::int64_t> integers(const json& value, const std::string& pointer) const {
    if (!value.is_array()) fail(pointer, "expected an array of integers, got " + describe(value));
    std::vector<std::int64_t> result;
    result.reserve(value.size());
    for (std::size_t i = 0; i < value.size(); ++i)
      result.push_back(integer(value[i], child(pointer, i)));
    return result;
  }

  const std::string& string(const json& value, const std::string& pointer) const {
    if (!value.is_string()) fail(pointer, "expected a string, got " + describe(value));
    return value.get_ref<const std::string&>();
  }

  Dtype dtype(const json& value, const std::string& pointer) const {
    const std::string& name = string(value, pointer);
    if (auto d = dtype_from_name(name)) return *d;
    std::string known;
    for (int i = 0; i < kNumDtypes; ++i) {
      known += std::string(i == 0 ? "" : ", ") + dtype_name(static_cast<Dtype>(i));
    }
    fail(pointer, "unknown dtype '" + name + "' (expected one of " + known + ")");
  }

  TensorType tensor_type(const json& object, const std::string& pointer) const {
    return TensorType{dtype(member(object, pointer, "dtype"), child(pointer, "dtype")),
                      integers(member(object, pointer, "shape"), child(pointer, "shape"))};
  }

  // A value id in the file that a new graph value `id` defines.
  void define(const json& file_id, const std::string& pointer, ValueId id) {
    const std::int64_t key = integer(file_id, pointer);
    auto [it, inserted] = ids_.emplace(key, std::make_pair(id, pointer));
    if (!inserted) {
      fail(pointer,
           "value id " + std::to_string(key) + " is already defined at " + it->second.second);
    }
  }

  ValueId use(const json& file_id, const std::string& pointer, const std::string& user) const {
    const std::int64_t key = integer(file_id, pointer);
    auto it = ids_.find(key);
    if (it == ids_.end()) {
      fail(pointer, "value id " + std::to_string(key) + " used by " + user +
                        " is not defined before (by an input, a parameter or an earlier node)");
    }
    return it->second.first;
  }

  void read_leaves(const json& document, LeafKind kind, const char* key) {
    const json& leaves = array_member(document, "", key);
    for (std::size_t k = 0; k < leaves.size(); ++k) {
      const std::string pointer = child(std::string("/") + key, k);
      const json& leaf = object_at(leaves[k], pointer, "an object {name, id, dtype, shape}");
      expect_keys(leaf, pointer,
                  {"name", "id", "dtype", "shape", "strides", "storage_offset", "shape_sets"});
      std::string name = string(member(leaf, pointer, "name"), child(pointer, "name"));
      TensorType type = tensor_type(leaf, pointer);
      const json& file_id = member(leaf, pointer, "id");
      integer(file_id, child(pointer, "id"));  // report a bad id before adding the leaf
      const ValueId id = graph_.add_leaf(kind, std::move(name), std::move(type));
      define(file_id, child(pointer, "id"), id);
      Value& value = graph_.mutable_values()[static_cast<std::size_t>(id)];
      if (auto it = leaf.find("strides"); it != leaf.end()) {
        value.strides = integers(*it, child(pointer, "strides"));
      }
      if (auto it = leaf.find("storage_offset"); it != leaf.end()) {
        value.storage_offset = integer(*it, child(pointer, "storage_offset"));
      }
      if (auto it = leaf.find("shape_sets"); it != leaf.end()) {
        const std::string sets_pointer = child(pointer, "shape_sets");
        if (!it->is_array()) fail(sets_pointer, "expected a list of shapes, got " + describe(*it));
        for (std::size_t k = 0; k < it->size(); ++k) {
          value.shape_sets.push_back(integers((*it)[k], child(sets_pointer, k)));
        }
      }
    }
  }

  void read_node(const json& value, const std::string& pointer) {
    const json& node =
        object_at(value, pointer, "a node object {op, name, inputs, outputs, attrs}");
    expect_keys(node, pointer, {"op", "name", "inputs", "outputs", "attrs"});
    const std::string& op_text = string(member(node, pointer, "op"), child(pointer, "op"));
    const std::optional<OpKind> op = op_from_name(op_text);
    if (!op) fail(child(pointer, "op"), "unknown op '" + op_text + "'");
    const OpSchema& s = schema(*op);
    std::string name;
    if (auto it = node.find("name"); it != node.end()) name = string(*it, child(pointer, "name"));
    const std::string user =
        "node " + pointer.substr(pointer.rfind('/') + 1) + " (" + op_text + ")";

    std::vector<ValueId> inputs;
    const json& input_ids = array_member(node, pointer, "inputs");
    for (std::size_t k = 0; k < input_ids.size(); ++k) {
      inputs.push_back(use(input_ids[k], child(child(pointer, "inputs"), k), user));
    }

    Attributes attrs;
    if (auto it = node.find("attrs"); it != node.end()) {
      const std::string attrs_pointer = child(pointer, "attrs");
      object_at(*it, attrs_pointer, "an object of attributes");
      for (auto a = it->begin(); a != it->end(); ++a) {
        attrs.set(a.key(), attribute(s, a.key(), a.value(), child(attrs_pointer, a.key())));
      }
    }

    const json& outputs = array_member(node, pointer, "outputs");
    std::vector<TensorType> types;
    std::vector<std::string> names;
    const std::string outputs_pointer = child(pointer, "outputs");
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const std::string output_pointer = child(outputs_pointer, k);
      const json& output = object_at(outputs[k], output_pointer, "an object {id, dtype, shape}");
      expect_keys(output, output_pointer, {"id", "name", "dtype", "shape"});
      integer(member(output, output_pointer, "id"), child(output_pointer, "id"));
      types.push_back(tensor_type(output, output_pointer));
      names.emplace_back();
      if (auto it = output.find("name"); it != output.end()) {
        names.back() = string(*it, child(output_pointer, "name"));
      }
    }
    const std::vector<ValueId> ids = graph_.add_node(*op, std::move(inputs), std::move(attrs),
                                                     std::move(types), std::move(name));
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const std::string output_pointer = child(outputs_pointer, k);
      define(outputs[k]["id"], child(output_pointer, "id"), ids[k]);
      graph_.mutable_values()[static_cast<std::size_t>(ids[k])].name = std::move(names[k]);
    }
  }

  // Decodes by the type the schema declares, so that 1 and 1.0 both read as a float
  // where the attribute is a float.
  AttrValue attribute(const OpSchema& s, const std::string& name, const json& value,
                      const std::string& pointer) const {
    const AttrSpec* spec = s.find_attr(name);
    if (spec == nullptr) {
      std::string known;
      for (const AttrSpec& a : s.attrs) known += (known.empty() ? "" : ", ") + a.name;
      fail(pointer,
           "unknown attribute '" + name + "' of " + std::string(s.name()) +
               (known.empty() ? " (it takes no attributes)" : " (it takes: " + known + ")"));
    }
    switch (spec->type) {
      case AttrType::Int:
        return integer(value, pointer);
      case AttrType::Float:
        return floating(value, pointer);
      case AttrType::Bool:
        if (!value.is_boolean()) fail(pointer, "expected a bool, got " + describe(value));
        return value.get<bool>();
      case AttrType::String:
        return string(value, pointer);
      case AttrType::IntList:
        return integers(value, pointer);
      case AttrType::Dtype:
        return dtype(value, pointer);
      case AttrType::Scalar:
        // The literal's own type: true/false a bool, 2 an int, 2.5 (or "inf") a float.
        if (value.is_boolean()) return value.get<bool>();
        if (value.is_number_integer()) return integer(value, pointer);
        if (value.is_number() || value.is_string()) return floating(value, pointer);
        fail(pointer, "expected a scalar (a number or a bool), got " + describe(value));
    }
    fail(pointer, "attribute of unknown type");
  }

  double floating(const json& value, const std::string& pointer) const {
    if (value.is_number()) return value.get<double>();
    if (value.is_string()) {
      const auto& text = value.get_ref<const std::string&>();
      if (text == "inf") return std::numeric_limits<double>::infinity();
      if (text == "-inf") return -std::numeric_limits<double>::infinity();
      if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
    }
    fail(pointer,
         "expected a float (a number, or \"inf\", \"-inf\", \"nan\"), got " + describe(value));
  }

  const std::string& source_;
  Graph graph_;
  // File id → (graph id, pointer where it is defined).
  std::unordered_map<std::int64_t, std::pair<ValueId, std::string>> ids_;
};

}  // namespace

Graph graph_from_json(const json& document, const std::string& source) {
  Graph graph;
  try {
    graph = Reader(source).read(document);
    validate(graph);
  } catch (const FormatError&) {
    throw;
  } catch (const ValidationError& e) {
    throw FormatError(source, e.field(), e.what());
  } catch (const Error& e) {
    throw FormatError(source, "", e.what());
  } catch (const json::exception& e) {
    // Not expected: every access above checks types first.
    throw FormatError(source, "", std::string("malformed document: ") + e.what());
  }
  return graph;
}

Graph load_graph(const std::filesystem::path& path) {
  const std::string source = path.string();
  const std::string text = io::read_file(path);
  json document;
  try {
    document = json::parse(text);
  } catch (const json::exception& e) {
    throw FormatError(source, "", std::string("not valid JSON: ") + e.what());
  }
  return graph_from_json(document, source);
}

}  // namespace weft::ir
