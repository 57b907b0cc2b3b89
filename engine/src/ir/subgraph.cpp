// Copying part of a graph with renumbered ids.
#include "weft/ir/subgraph.h"

#include <string>

#include "weft/error.h"

namespace weft::ir {

Subgraph copy_subgraph(const Graph& graph, const std::vector<bool>& keep_value,
                       const std::vector<bool>& keep_node) {
  Subgraph result;
  // The program forms travel with the copy: its leaves keep their layouts.
  result.graph.set_requires_grad(graph.requires_grad());
  result.graph.set_nn_modules(graph.nn_modules());
  for (LeafKind kind : {LeafKind::Input, LeafKind::Parameter}) {
    for (ValueId id : graph.leaves(kind)) {
      if (!keep_value.at(static_cast<std::size_t>(id))) continue;
      const Value& leaf = graph.value(id);
      const ValueId copy = result.graph.add_leaf(kind, leaf.name, leaf.type);
      Value& copied = result.graph.mutable_values()[static_cast<std::size_t>(copy)];
      copied.strides = leaf.strides;
      copied.storage_offset = leaf.storage_offset;
      copied.shape_sets = leaf.shape_sets;
      result.renamed[id] = copy;
    }
  }
  for (std::size_t n = 0; n < graph.nodes().size(); ++n) {
    if (!keep_node.at(n)) continue;
    const Node& node = graph.nodes()[n];
    std::vector<ValueId> inputs;
    for (ValueId id : node.inputs) {
      const auto found = result.renamed.find(id);
      if (found == result.renamed.end()) {
        throw Error("copy_subgraph: node " + std::to_string(n) + " reads value " +
                    std::to_string(id) + ", which the copy does not hold");
      }
      inputs.push_back(found->second);
    }
    std::vector<TensorType> types;
    for (ValueId id : node.outputs) types.push_back(graph.type(id));
    const std::vector<ValueId> outputs =
        result.graph.add_node(node.op, inputs, node.attrs, types, node.name);
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      result.renamed[node.outputs[k]] = outputs[k];
      result.graph.mutable_values()[static_cast<std::size_t>(outputs[k])].name =
          graph.value(node.outputs[k]).name;
    }
  }
  return result;
}

}  // namespace weft::ir
