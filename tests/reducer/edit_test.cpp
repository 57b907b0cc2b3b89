// The reducer's graph edits: removed nodes leave their computed values behind as inputs,
// dead code and unused leaves go, types follow attribute and shape changes.
#include "edit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "weft/error.h"
#include "weft/ir/shape_sets.h"
#include "weft/ir/validate.h"
#include "weft/ops.h"

namespace weft::reduce {
namespace {

using ir::OpKind;
using ir::TensorType;

// x[2, 3] -> relu -> neg -> exp (output); w[2, 3] feeds mul(relu, w) (output).
Case chain() {
  Case c;
  const TensorType type{Dtype::Float32, {2, 3}};
  const ir::ValueId x = c.graph.add_input("x", type);
  const ir::ValueId w = c.graph.add_parameter("w", type);
  const ir::ValueId r = c.graph.add_node(OpKind::Relu, {x}, {}, {type}, "r")[0];
  const ir::ValueId n = c.graph.add_node(OpKind::Neg, {r}, {}, {type}, "n")[0];
  const ir::ValueId e = c.graph.add_node(OpKind::Exp, {n}, {}, {type}, "e")[0];
  const ir::ValueId m = c.graph.add_node(OpKind::Mul, {r, w}, {}, {type}, "m")[0];
  c.graph.mark_output(e);
  c.graph.mark_output(m);
  c.values["x"] = tensor(std::vector<float>{-1, 2, -3, 4, -5, 6}, {2, 3});
  c.values["w"] = tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  return c;
}

std::vector<Tensor> computed(const Case& c) {
  ir::ExecutionOptions options;
  options.keep_values = true;
  return ir::execute(c.graph, c.values, options).values;
}

TEST(ReducerEdits, RemovedNodesLeaveTheirValuesAsInputs) {
  const Case c = chain();
  const std::vector<Tensor> before = computed(c);
  // Remove relu and neg: exp reads neg's value, mul reads relu's, both as new inputs.
  const Case edited = remove_nodes(c, before, {0, 1});
  ir::validate(edited.graph);
  ASSERT_EQ(edited.graph.nodes().size(), 2u);
  EXPECT_EQ(edited.graph.nodes()[0].op, OpKind::Exp);
  EXPECT_EQ(edited.graph.inputs().size(), 2u);  // x is unused and dropped; r and n come in
  EXPECT_FALSE(edited.graph.find_leaf(ir::LeafKind::Input, "x").has_value());
  const ir::Execution after = ir::execute(edited.graph, edited.values);
  const ir::Execution original = ir::execute(c.graph, c.values);
  ASSERT_EQ(after.outputs.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(after.outputs[k].to_vector<float>(), original.outputs[k].to_vector<float>());
  }
}

TEST(ReducerEdits, ValuesOnlyRemovedNodesReadBecomeOutputs) {
  const Case c = chain();
  // Remove exp: neg's value loses its only reader and becomes an output.
  const Case edited = remove_nodes(c, computed(c), {2});
  ASSERT_EQ(edited.graph.nodes().size(), 3u);
  ASSERT_EQ(edited.graph.outputs().size(), 2u);
  EXPECT_EQ(edited.graph.producer(edited.graph.outputs()[0]), std::optional<std::size_t>(2));
  EXPECT_EQ(edited.graph.producer(edited.graph.outputs()[1]), std::optional<std::size_t>(1));
}

TEST(ReducerEdits, CutOutputsDropDeadNodesAndLeaves) {
  const Case c = chain();
  const Case edited = keep_outputs(c, {c.graph.outputs()[0]});
  ir::validate(edited.graph);
  EXPECT_EQ(edited.graph.nodes().size(), 3u);  // mul is dead
  EXPECT_TRUE(edited.graph.parameters().empty());
  EXPECT_EQ(edited.values.count("w"), 0u);
}

TEST(ReducerEdits, SubstituteFeedsConsumersTheNodesInput) {
  const Case c = chain();
  // neg's consumers read relu's value: neg is dead.
  const Case edited = substitute(c, c.graph.nodes()[1].outputs[0], c.graph.nodes()[1].inputs[0]);
  ir::validate(edited.graph);
  ASSERT_EQ(edited.graph.nodes().size(), 3u);
  EXPECT_EQ(edited.graph.nodes()[1].op, OpKind::Exp);
}

TEST(ReducerEdits, ParametersBecomeInputs) {
  const Case c = chain();
  const Case edited = parameters_to_inputs(c, c.graph.parameters());
  EXPECT_TRUE(edited.graph.parameters().empty());
  EXPECT_TRUE(edited.graph.find_leaf(ir::LeafKind::Input, "w").has_value());
  EXPECT_EQ(ir::execute(edited.graph, edited.values).outputs[1].to_vector<float>(),
            ir::execute(c.graph, c.values).outputs[1].to_vector<float>());
}

TEST(ReducerEdits, RetypeFollowsAttributesAndShapes) {
  Case c;
  const ir::ValueId x = c.graph.add_input("x", TensorType{Dtype::Float32, {1, 2, 8}});
  const ir::ValueId y = c.graph.add_node(
      OpKind::MaxPool1d, {x}, ir::Attributes().set("kernel_size", {2}).set("stride", {2}),
      {TensorType{Dtype::Float32, {1, 2, 4}}})[0];
  c.graph.mark_output(y);
  c.values["x"] = ones({1, 2, 8});
  c.graph.mutable_nodes()[0].attrs.set("stride", {1});
  ir::retype(c.graph, c.values);
  EXPECT_EQ(c.graph.type(y).shape, (ir::Shape{1, 2, 7}));
  c.values["x"] = ones({1, 2, 3});
  ir::retype(c.graph, c.values);
  EXPECT_EQ(c.graph.type(x).shape, (ir::Shape{1, 2, 3}));
  EXPECT_EQ(c.graph.type(y).shape, (ir::Shape{1, 2, 2}));
  c.values["x"] = ones({1, 2, 1});  // shorter than the kernel: the engine refuses it
  EXPECT_ANY_THROW(ir::retype(c.graph, c.values));
}

TEST(ReducerEdits, NewInputNamesAreValidAndUnused) {
  const Case c = chain();
  EXPECT_EQ(unique_name(c.graph, "r"), "r_1");
  EXPECT_EQ(unique_name(c.graph, "fresh"), "fresh");
  EXPECT_EQ(unique_name(c.graph, "a.b-c"), "a_b_c");
  EXPECT_EQ(unique_name(c.graph, "3d"), "v3d");
}

TEST(ReducerEdits, FewerDistinctValuesKeepTheExtremesAndMapToTheNearestKeptValue) {
  // Sorted different values -1, 0.5, 2, 3, 5: those at even ranks (-1, 2, 5) stay; 3 becomes 2
  // (nearer), 0.5 becomes -1 (a tie goes to the smaller).
  const Tensor floats = tensor(std::vector<float>{5, -1, 3, 3, 0.5f, 2}, {2, 3});
  const Tensor fewer = with_fewer_distinct_values(floats);
  EXPECT_EQ(fewer.dtype(), Dtype::Float32);
  EXPECT_EQ(fewer.sizes(), floats.sizes());
  EXPECT_EQ(fewer.to_vector<double>(), (std::vector<double>{5, -1, 2, 2, -1, 2}));
  EXPECT_EQ(distinct_values(floats), 5u);
  EXPECT_EQ(distinct_values(fewer), 3u);
  // The largest stays even at an odd rank: 1, 2, 3, 4 keeps 1, 3 and 4.
  const Tensor ints = tensor(std::vector<std::int64_t>{4, 1, 3, 2});
  const Tensor fewer_ints = with_fewer_distinct_values(ints);
  EXPECT_EQ(fewer_ints.dtype(), Dtype::Int64);
  EXPECT_EQ(fewer_ints.to_vector<double>(), (std::vector<double>{4, 1, 3, 1}));
}

TEST(ReducerEdits, RepeatedlyFewerDistinctValuesEndsAtTwoWithinLogSteps) {
  std::vector<double> values;
  for (int i = 0; i < 100; ++i) values.push_back(std::sin(i * 1.7) * 10);
  Tensor value = tensor(values, {10, 10});
  const double lowest = *std::min_element(values.begin(), values.end());
  const double highest = *std::max_element(values.begin(), values.end());
  int steps = 0;
  for (; distinct_values(value) > 2; ++steps) {
    const std::size_t before = distinct_values(value);
    value = with_fewer_distinct_values(value);
    ASSERT_LT(distinct_values(value), before);
  }
  EXPECT_LE(steps, 8);
  const std::vector<double> last = value.to_vector<double>();
  EXPECT_EQ(*std::min_element(last.begin(), last.end()), lowest);
  EXPECT_EQ(*std::max_element(last.begin(), last.end()), highest);
}

}  // namespace
}  // namespace weft::reduce
