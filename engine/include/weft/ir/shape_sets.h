#pragma once
// Dynamic shapes: a case may carry later sets of input shapes (Value::shape_sets) with their
// values ("x@1", "x@2", ...). Every path is prepared once and called with set 0, then with each
// later set; each call is judged against the reference at its own shapes. These helpers give
// the plain case of one set.
#include <cstddef>

#include "weft/ir/execute.h"
#include "weft/ir/graph.h"

namespace weft::ir {

struct ShapeSetCase {
  Graph graph;       // no shape sets; inputs at the set's shapes, every value's type re-derived
  TensorMap values;  // the set's leaves by their plain names (parameters are shared)
};

// Shape set `set` of the case (0: the first; the graph as it is, without its later sets). Each
// input's layout is kept in kind (ir::relayout) and expanded inputs are projected
// (project_to_layouts). Every other value's type comes from running the nodes on the set's
// values in float32. Throws weft::Error naming the key of a missing or mistyped value, or the
// node that refuses the set's shapes.
ShapeSetCase at_shape_set(const Graph& graph, const TensorMap& values, std::size_t set);

// Sets every leaf's declared type from its value in `values` (a laid-out input keeps its kind
// of layout at a new shape, ir::relayout) and every node output's from what the engine
// computes on them in float32: after an edit of shapes, dtypes or attributes (the reducer), or
// at another shape set. Throws weft::Error naming a leaf without a value, or the node that
// refuses its new inputs.
void retype(Graph& graph, const TensorMap& values);

// The values a case keeps: every leaf's, and each input's later sets' ("x@1"); others dropped.
TensorMap case_values(const Graph& graph, const TensorMap& values);

}  // namespace weft::ir
