// Whole-graph shape shrinking with the specs: every proposal is a valid graph (the engine runs
// it with the solved shapes as declared types), its leaves are no larger than before, and the
// attributes that follow from shapes (a reshape's target) are derived again.
#include "weft/gen/shrink.h"

#include <gtest/gtest.h>

#include "weft/error.h"
#include "weft/gen/generator.h"
#include "weft/ir/execute.h"
#include "weft/ir/validate.h"
#include "weft/ops.h"

namespace weft::gen {
namespace {

using ir::OpKind;
using ir::TensorType;

// `graph` with a proposal's shapes and attributes.
ir::Graph apply(const ir::Graph& graph, const ShrunkGraph& proposal) {
  ir::Graph shrunk = graph;
  for (ir::Value& value : shrunk.mutable_values()) {
    value.type.shape = proposal.value_shapes.at(static_cast<std::size_t>(value.id));
  }
  for (std::size_t n = 0; n < shrunk.nodes().size(); ++n) {
    shrunk.mutable_nodes()[n].attrs = proposal.node_attributes.at(n);
  }
  return shrunk;
}

// Runs `graph` on the engine with plain leaves (ones; zeros for integer and bool leaves, which
// keeps indices in range): execute() throws when a node's result differs from its declared type.
void run(const ir::Graph& graph) {
  ir::TensorMap leaves;
  std::vector<ir::ValueId> ids = graph.inputs();
  ids.insert(ids.end(), graph.parameters().begin(), graph.parameters().end());
  for (ir::ValueId id : ids) {
    const TensorType& type = graph.type(id);
    TensorOptions options;
    options.dtype = type.dtype;
    leaves[graph.value(id).name] =
        is_floating(type.dtype) ? ones(type.shape, options) : zeros(type.shape, options);
  }
  ir::execute(graph, leaves);
}

std::int64_t leaf_elements(const ir::Graph& graph) {
  std::int64_t total = 0;
  for (ir::ValueId id : graph.inputs()) total += graph.num_elements(id);
  for (ir::ValueId id : graph.parameters()) total += graph.num_elements(id);
  return total;
}

TEST(ShrinkShapes, AReshapesTargetFollowsItsInput) {
  // x[4, 6] -> reshape [24] -> relu: the equal-size narrowing of leaves cannot shrink x, since
  // the target is tied to its element count.
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", TensorType{Dtype::Float32, {4, 6}});
  const ir::ValueId r = graph.add_node(OpKind::Reshape, {x}, ir::Attributes().set("shape", {24}),
                                       {TensorType{Dtype::Float32, {24}}})[0];
  graph.mark_output(graph.add_node(OpKind::Relu, {r}, {}, {TensorType{Dtype::Float32, {24}}})[0]);
  const ShrinkResult result = shrink_shapes(graph);
  EXPECT_TRUE(result.kept_nodes.empty());
  ASSERT_FALSE(result.proposals.empty());
  const ShrunkGraph& smallest = result.proposals[0];
  EXPECT_EQ(smallest.goal, "smallest");
  EXPECT_EQ(smallest.leaf_shapes.at(x), (ir::Shape{1, 1}));
  EXPECT_EQ(smallest.node_attributes[0].get_ints("shape"), (std::vector<std::int64_t>{1}));
  const ir::Graph shrunk = apply(graph, smallest);
  EXPECT_NO_THROW(run(shrunk));
}

TEST(ShrinkShapes, ConvolutionWeightsAndChannelsShrinkTogether) {
  // conv2d(x[2, 4, 9, 9], w[6, 2, 3, 3], groups 2): channels stay divisible by groups and the
  // kernel fits the (smaller) input.
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", TensorType{Dtype::Float32, {2, 4, 9, 9}});
  const ir::ValueId w = graph.add_parameter("w", TensorType{Dtype::Float32, {6, 2, 3, 3}});
  ir::Attributes attrs;
  attrs.set("stride", {1, 1}).set("padding", {0, 0}).set("dilation", {1, 1}).set("groups", 2);
  graph.mark_output(
      graph.add_node(OpKind::Conv2d, {x, w}, attrs, {TensorType{Dtype::Float32, {2, 6, 7, 7}}})[0]);
  const ShrinkResult result = shrink_shapes(graph);
  ASSERT_FALSE(result.proposals.empty());
  EXPECT_TRUE(result.kept_nodes.empty());
  for (const ShrunkGraph& proposal : result.proposals) {
    const ir::Graph shrunk = apply(graph, proposal);
    EXPECT_NO_THROW(run(shrunk)) << proposal.goal;
    EXPECT_LT(leaf_elements(shrunk), leaf_elements(graph));
    EXPECT_EQ(proposal.node_attributes[0].get_int("groups"), 2);
    EXPECT_EQ(shrunk.type(x).shape[1] % 2, 0);
  }
}

TEST(ShrinkShapes, EveryProposalForGeneratedModelsIsValidAndNoLarger) {
  Generator generator;
  std::size_t nodes = 0, kept = 0, proposals = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    GeneratorOptions options;
    options.seed = seed;
    options.nodes = 8;
    const ir::Graph graph = generator.generate(options).graph;
    ShrinkOptions shrink;
    shrink.recovery_attempts = 5000;
    const ShrinkResult result = shrink_shapes(graph, shrink);
    nodes += graph.nodes().size();
    kept += result.kept_nodes.size();
    for (const ShrunkGraph& proposal : result.proposals) {
      ++proposals;
      const ir::Graph shrunk = apply(graph, proposal);
      EXPECT_NO_THROW(ir::validate(shrunk)) << "seed " << seed << " " << proposal.goal;
      EXPECT_NO_THROW(run(shrunk)) << "seed " << seed << " " << proposal.goal;
      for (const auto& [id, shape] : proposal.leaf_shapes) {
        const ir::Shape& before = graph.type(id).shape;
        ASSERT_EQ(shape.size(), before.size());
        for (std::size_t d = 0; d < shape.size(); ++d) EXPECT_LE(shape[d], before[d]);
      }
    }
  }
  // Nearly every node's choices are found again (5 of 2400 were not over 200 12-node models),
  // so nearly every model shrinks.
  EXPECT_LT(kept * 10, nodes) << kept << " of " << nodes << " nodes kept their shapes";
  EXPECT_GE(proposals, 30u);
}

}  // namespace
}  // namespace weft::gen
