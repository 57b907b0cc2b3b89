// Graphviz text for a graph. Labels are escaped for dot's double-quoted strings.
#include "weft/ir/graph_dot.h"

#include <map>

namespace weft::ir {

namespace {

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string graph_to_dot(const Graph& graph) {
  std::string dot = "digraph weft {\n  rankdir=TB;\n  node [fontname=\"monospace\"];\n";
  // Where each value comes from: a leaf's own vertex, or the node that produces it.
  std::map<ValueId, std::string> source;
  for (LeafKind kind : {LeafKind::Input, LeafKind::Parameter}) {
    for (ValueId id : graph.leaves(kind)) {
      const Value& v = graph.value(id);
      const std::string vertex = "v" + std::to_string(id);
      dot += "  " + vertex + " [shape=" + (kind == LeafKind::Input ? "ellipse" : "box") +
             ", label=\"" + escape(v.name + "\n" + to_string(v.type)) + "\"];\n";
      source[id] = vertex;
    }
  }
  for (std::size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& node = graph.nodes()[n];
    std::string label = std::string(op_name(node.op));
    for (const auto& [name, value] : node.attrs) {
      label += "\n" + name + "=" + attr_value_to_string(value);
    }
    const std::string vertex = "n" + std::to_string(n);
    dot += "  " + vertex + " [shape=box, style=rounded, label=\"" + escape(label) + "\"];\n";
    for (ValueId in : node.inputs) {
      const auto found = source.find(in);
      if (found == source.end()) continue;
      dot += "  " + found->second + " -> " + vertex + " [label=\"" +
             escape(to_string(graph.type(in))) + "\"];\n";
    }
    for (ValueId out : node.outputs) source[out] = vertex;
  }
  for (std::size_t i = 0; i < graph.outputs().size(); ++i) {
    const ValueId id = graph.outputs()[i];
    const std::string vertex = "out" + std::to_string(i);
    dot += "  " + vertex + " [shape=plaintext, label=\"output " + std::to_string(i) + "\"];\n";
    dot += "  " + source[id] + " -> " + vertex + " [label=\"" + escape(to_string(graph.type(id))) +
           "\"];\n";
  }
  return dot + "}\n";
}

}  // namespace weft::ir
