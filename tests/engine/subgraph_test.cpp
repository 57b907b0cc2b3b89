// Copying part of a graph: the chosen leaves and nodes in order, ids renumbered, names kept.
#include "weft/ir/subgraph.h"

#include <gtest/gtest.h>

#include "weft/error.h"

namespace weft::ir {
namespace {

TensorType f32(Shape shape) {
  return TensorType{Dtype::Float32, std::move(shape)};
}

TEST(Subgraph, KeepsTheChosenLeavesAndNodesRenumbered) {
  // x, unused u, w; relu(x) "r" -> mul(r, w) "m": keep x, w and mul's producer chain.
  Graph g;
  const ValueId x = g.add_input("x", f32({2}));
  const ValueId u = g.add_input("u", f32({3}));
  const ValueId w = g.add_parameter("w", f32({2}));
  const ValueId r = g.add_node(OpKind::Relu, {x}, {}, {f32({2})}, "r")[0];
  const ValueId m = g.add_node(OpKind::Mul, {r, w}, {}, {f32({2})}, "m")[0];
  g.mutable_values()[static_cast<std::size_t>(r)].name = "relu_out";
  std::vector<bool> keep_value(g.values().size(), true);
  keep_value[static_cast<std::size_t>(u)] = false;
  const Subgraph copy = copy_subgraph(g, keep_value, {true, true});
  ASSERT_EQ(copy.graph.inputs().size(), 1u);
  ASSERT_EQ(copy.graph.parameters().size(), 1u);
  EXPECT_EQ(copy.graph.value(copy.renamed.at(x)).name, "x");
  EXPECT_EQ(copy.graph.value(copy.renamed.at(w)).name, "w");
  EXPECT_EQ(copy.renamed.count(u), 0u);
  ASSERT_EQ(copy.graph.nodes().size(), 2u);
  EXPECT_EQ(copy.graph.nodes()[1].name, "m");
  EXPECT_EQ(copy.graph.value(copy.renamed.at(r)).name, "relu_out");
  EXPECT_EQ(copy.graph.nodes()[1].inputs,
            (std::vector<ValueId>{copy.renamed.at(r), copy.renamed.at(w)}));
  EXPECT_EQ(copy.graph.type(copy.renamed.at(m)), f32({2}));
  EXPECT_TRUE(copy.graph.outputs().empty());
}

TEST(Subgraph, ANodeReadingAValueLeftOutIsAnError) {
  Graph g;
  const ValueId x = g.add_input("x", f32({2}));
  g.add_node(OpKind::Relu, {x}, {}, {f32({2})});
  EXPECT_THROW(copy_subgraph(g, std::vector<bool>(g.values().size(), false), {true}), Error);
}

}  // namespace
}  // namespace weft::ir
