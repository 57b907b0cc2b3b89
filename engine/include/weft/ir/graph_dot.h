#pragma once
// A Graphviz rendering of a graph (`dot -Tsvg graph.dot`): leaves as ellipses (inputs) and
// boxes (parameters), nodes with their op and attributes, edges labelled with tensor types.
#include <string>

#include "weft/ir/graph.h"

namespace weft::ir {

std::string graph_to_dot(const Graph& graph);

}  // namespace weft::ir
