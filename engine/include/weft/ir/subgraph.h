#pragma once
// A copy of part of a graph: the leaves and nodes chosen, in their order, with ids renumbered
// (the reducer's compaction and the oracle's prefix graphs for localization).
#include <map>
#include <vector>

#include "weft/ir/graph.h"

namespace weft::ir {

struct Subgraph {
  Graph graph;                         // no outputs marked: the caller chooses them
  std::map<ValueId, ValueId> renamed;  // ids of the original graph -> ids in `graph`
};

// The leaves whose `keep_value[id]` is set (inputs, then parameters) and the nodes whose
// `keep_node[n]` is set, with their names, attributes and declared types. Every input of a
// kept node must be a kept leaf or an output of a kept node before it (weft::Error otherwise).
Subgraph copy_subgraph(const Graph& graph, const std::vector<bool>& keep_value,
                       const std::vector<bool>& keep_node);

}  // namespace weft::ir
