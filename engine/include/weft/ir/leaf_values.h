#pragma once
// The value of a graph leaf, checked against its declaration: one rule and one message for
// every part that runs graphs (the engine, the LibTorch backends).
#include "weft/ir/execute.h"
#include "weft/ir/graph.h"

namespace weft::ir {

// The value of input or parameter `id` in `leaves`. Throws weft::Error naming the leaf when
// it is missing ("input 'x' has no value") or its dtype or shape differs from the graph's
// declaration ("value of 'x' is float64[2, 3], but the graph declares float32[2, 3]").
const Tensor& leaf_value(const Graph& graph, const TensorMap& leaves, ValueId id);

}  // namespace weft::ir
