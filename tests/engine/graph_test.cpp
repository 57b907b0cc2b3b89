#include "weft/ir/graph.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include "weft/ir/validate.h"

namespace weft::ir {
namespace {

using Ints = std::vector<std::int64_t>;

TensorType f32(Shape shape) {
  return TensorType{Dtype::Float32, std::move(shape)};
}

// input x → conv2d "conv" (x, conv.weight, conv.bias) → relu "act" → output.
Graph small_graph() {
  Graph g;
  const ValueId x = g.add_input("x", f32({1, 3, 8, 8}));
  const ValueId w = g.add_parameter("conv.weight", f32({4, 3, 3, 3}));
  const ValueId b = g.add_parameter("conv.bias", f32({4}));
  const ValueId y = g.add_node(OpKind::Conv2d, {x, w, b}, Attributes().set("padding", {1}),
                               {f32({1, 4, 8, 8})}, "conv")[0];
  const ValueId z = g.add_node(OpKind::Relu, {y}, {}, {f32({1, 4, 8, 8})}, "act")[0];
  g.mark_output(z);
  return g;
}

// Runs validate() and returns the error it must throw.
ValidationError validation_error(const Graph& g) {
  try {
    validate(g);
  } catch (const ValidationError& e) {
    return e;
  }
  ADD_FAILURE() << "validate() accepted the graph";
  return ValidationError(-2, "", "");
}

// ---------------------------------------------------------------------------------------------
// Attributes

TEST(GraphAttributes, TypedGettersReturnValuesAndDefaults) {
  Attributes a;
  a.set("dim", 1).set("eps", 1e-5).set("keepdim", true).set("mode", "tanh");
  a.set("stride", {2, 1}).set("dtype", Dtype::Int64);
  EXPECT_EQ(a.get_int("dim"), 1);
  EXPECT_DOUBLE_EQ(a.get_float("eps"), 1e-5);
  EXPECT_TRUE(a.get_bool("keepdim"));
  EXPECT_EQ(a.get_string("mode"), "tanh");
  EXPECT_EQ(a.get_ints("stride"), (Ints{2, 1}));
  EXPECT_EQ(a.get_dtype("dtype"), Dtype::Int64);
  EXPECT_EQ(attr_type(*a.find("dim")), AttrType::Int);
  EXPECT_EQ(attr_type(*a.find("mode")), AttrType::String);

  EXPECT_EQ(a.get_int("groups", 1), 1);
  EXPECT_DOUBLE_EQ(a.get_float("momentum", 0.1), 0.1);
  EXPECT_FALSE(a.get_bool("training", false));
  EXPECT_EQ(a.get_string("approximate", "none"), "none");
  EXPECT_EQ(a.get_ints("padding", {0}), (Ints{0}));
  EXPECT_EQ(a.get_dtype("other", Dtype::Bool), Dtype::Bool);
}

TEST(GraphAttributes, GetFloatAcceptsAnInt) {
  Attributes a;
  a.set("alpha", 2);
  EXPECT_DOUBLE_EQ(a.get_float("alpha"), 2.0);
  EXPECT_DOUBLE_EQ(a.get_float("alpha", 7.0), 2.0);
}

TEST(GraphAttributes, WrongTypeErrorNamesAttributeOwnerAndTypes) {
  Attributes a;
  a.set("stride", 1.5);
  a.set_owner("conv2d");
  try {
    a.get_ints("stride");
    FAIL() << "expected weft::Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "attribute 'stride' of conv2d: expected an int list, got a float");
  }
  // A default does not hide a present value of the wrong type.
  EXPECT_THROW(a.get_ints("stride", {1}), Error);
  EXPECT_THROW(a.get_int("stride"), Error);
  try {
    a.get_int("groups");
    FAIL() << "expected weft::Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "attribute 'groups' of conv2d: missing (expected an int)");
  }
}

TEST(GraphAttributes, SortedEqualityIgnoresOwner) {
  Attributes a{{"b", AttrValue(std::int64_t{2})}, {"a", AttrValue(1.0)}};
  Attributes b;
  b.set("a", 1.0).set("b", 2);
  b.set_owner("mul");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.begin()->first, "a");
  b.set("a", 1);  // an int is not a float
  EXPECT_NE(a, b);
  EXPECT_TRUE(b.erase("a"));
  EXPECT_FALSE(b.erase("a"));
  EXPECT_EQ(attr_value_to_string(AttrValue(1.0)), "1.0");
  EXPECT_EQ(attr_value_to_string(AttrValue(Ints{1, 2})), "[1, 2]");
}

// ---------------------------------------------------------------------------------------------
// Builder

TEST(GraphBuilder, AssignsIdsInOrderAndRecordsStructure) {
  const Graph g = small_graph();
  EXPECT_NO_THROW(validate(g));
  ASSERT_EQ(g.values().size(), 5u);
  for (std::size_t i = 0; i < g.values().size(); ++i) EXPECT_EQ(g.values()[i].id, ValueId(i));
  EXPECT_EQ(g.inputs(), (std::vector<ValueId>{0}));
  EXPECT_EQ(g.parameters(), (std::vector<ValueId>{1, 2}));
  EXPECT_EQ(g.outputs(), (std::vector<ValueId>{4}));
  ASSERT_EQ(g.nodes().size(), 2u);
  EXPECT_EQ(g.nodes()[0].op, OpKind::Conv2d);
  EXPECT_EQ(g.nodes()[0].inputs, (std::vector<ValueId>{0, 1, 2}));
  EXPECT_EQ(g.nodes()[0].outputs, (std::vector<ValueId>{3}));
  EXPECT_EQ(g.nodes()[0].name, "conv");
  EXPECT_EQ(g.nodes()[0].attrs.owner(), "conv2d");
  EXPECT_EQ(g.value(1).name, "conv.weight");
  EXPECT_EQ(g.type(3), f32({1, 4, 8, 8}));
  EXPECT_EQ(to_string(g.type(2)), "float32[4]");

  EXPECT_EQ(g.num_elements(0), 3u * 8 * 8);
  EXPECT_EQ(g.num_elements(2), 4u);
  EXPECT_EQ(g.find_leaf(LeafKind::Parameter, "conv.bias"), ValueId{2});
  EXPECT_FALSE(g.find_leaf(LeafKind::Input, "conv.bias").has_value());
  EXPECT_EQ(g.leaf_kind(0), LeafKind::Input);
  EXPECT_EQ(g.leaf_kind(1), LeafKind::Parameter);
  EXPECT_FALSE(g.leaf_kind(3).has_value());
  EXPECT_EQ(g.producer(4), std::size_t{1});
  EXPECT_FALSE(g.producer(0).has_value());
}

TEST(GraphBuilder, ScalarHasOneElementAndMultiOutputNodesGetOneValueEach) {
  Graph g;
  const ValueId x = g.add_input("x", f32({}));
  EXPECT_EQ(g.num_elements(x), 1u);
  const ValueId m = g.add_input("m", f32({2, 5}));
  const auto outs = g.add_node(OpKind::Max, {m}, Attributes().set("dim", 1),
                               {f32({2}), TensorType{Dtype::Int64, {2}}});
  EXPECT_EQ(outs, (std::vector<ValueId>{2, 3}));
  EXPECT_EQ(g.type(3).dtype, Dtype::Int64);
}

TEST(GraphBuilder, RejectsUnknownIds) {
  Graph g;
  g.add_input("x", f32({2}));
  EXPECT_THROW(g.add_node(OpKind::Relu, {5}, {}, {f32({2})}), Error);
  EXPECT_THROW(g.mark_output(1), Error);
  EXPECT_THROW(g.value(-1), Error);
  EXPECT_THROW(g.num_elements(9), Error);
}

TEST(GraphBuilder, NumElementsOverflowIsAnError) {
  Graph g;
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  const ValueId x = g.add_input("x", f32({big, big}));
  EXPECT_THROW(g.num_elements(x), Error);
}

TEST(GraphBuilder, CopiesAreIndependentValues) {
  const Graph g = small_graph();
  Graph copy = g;
  EXPECT_EQ(copy, g);
  copy.mutable_nodes()[1].op = OpKind::Sigmoid;
  EXPECT_NE(copy, g);
  EXPECT_EQ(g.nodes()[1].op, OpKind::Relu);
  EXPECT_NO_THROW(validate(copy));
}

// ---------------------------------------------------------------------------------------------
// Validation: one test per rule; each error names the node (index, name, op) and the field.

void expect_node_error(const Graph& g, int node, const std::string& node_text,
                       const std::string& field, const std::string& problem) {
  const ValidationError e = validation_error(g);
  const std::string message = e.what();
  EXPECT_EQ(e.node_index(), node) << message;
  EXPECT_EQ(e.field(), field) << message;
  EXPECT_NE(message.find(node_text), std::string::npos) << message;
  EXPECT_NE(message.find(problem), std::string::npos) << message;
}

TEST(GraphValidate, AcceptsWellFormedGraphs) {
  EXPECT_NO_THROW(validate(small_graph()));
  Graph g;
  const ValueId a = g.add_input("a", f32({2, 3}));
  const ValueId b = g.add_input("b", f32({2, 3}));
  const auto parts = g.add_node(OpKind::Split, {a}, Attributes().set("split_size", {1}),
                                {f32({1, 3}), f32({1, 3})});
  const ValueId c = g.add_node(OpKind::Cat, {parts[0], parts[1], b}, {}, {f32({4, 3})})[0];
  const ValueId d = g.add_node(OpKind::Clamp, {c}, Attributes().set("max", 6.0), {f32({4, 3})})[0];
  g.mark_output(d);
  g.mark_output(parts[0]);
  EXPECT_NO_THROW(validate(g));
}

TEST(GraphValidate, RejectsUnknownInputId) {
  Graph g = small_graph();
  g.mutable_nodes()[1].inputs[0] = 42;
  expect_node_error(g, 1, "node 1 'act' (relu)", "/nodes/1/inputs/0",
                    "input 0 (self): value 42 does not exist");
}

TEST(GraphValidate, RejectsUnknownOutputId) {
  Graph g = small_graph();
  g.mutable_nodes()[0].outputs[0] = -3;
  expect_node_error(g, 0, "node 0 'conv' (conv2d)", "/nodes/0/outputs/0/id",
                    "value -3 does not exist");
}

TEST(GraphValidate, RejectsValueDefinedTwice) {
  Graph g = small_graph();
  g.mutable_nodes()[1].outputs[0] = 3;  // already conv's output
  expect_node_error(g, 1, "node 1 'act' (relu)", "/nodes/1/outputs/0/id",
                    "value 3 is defined twice (first by node 0 'conv' (conv2d) output 0)");

  Graph leaves = small_graph();
  leaves.mutable_leaves(LeafKind::Parameter)[1] = 0;  // the input again
  const ValidationError e = validation_error(leaves);
  EXPECT_EQ(e.field(), "/parameters/1/id");
  EXPECT_NE(std::string(e.what()).find("defined twice"), std::string::npos) << e.what();
}

TEST(GraphValidate, RejectsUseBeforeDefinition) {
  Graph g = small_graph();
  std::swap(g.mutable_nodes()[0], g.mutable_nodes()[1]);
  expect_node_error(g, 0, "node 0 'act' (relu)", "/nodes/0/inputs/0",
                    "value 3 is used before it is defined (by node 1)");

  Graph self = small_graph();
  self.mutable_nodes()[1].inputs[0] = 4;
  expect_node_error(self, 1, "node 1 'act' (relu)", "/nodes/1/inputs/0",
                    "is an output of this same node");

  Graph orphan = small_graph();
  orphan.mutable_values().push_back(Value{5, f32({2}), "", {}, 0, {}});
  orphan.mutable_nodes()[1].inputs[0] = 5;
  expect_node_error(orphan, 1, "node 1 'act' (relu)", "/nodes/1/inputs/0",
                    "not defined by any input, parameter or node");
}

TEST(GraphValidate, RejectsArityOutsideTheSchema) {
  Graph g = small_graph();
  g.mutable_nodes()[0].inputs.resize(1);
  expect_node_error(g, 0, "node 0 'conv' (conv2d)", "/nodes/0/inputs",
                    "expected 2 or 3 inputs (input, weight, bias), got 1");

  Graph bn;
  const ValueId x = bn.add_input("x", f32({2, 3}));
  const ValueId p = bn.add_parameter("p", f32({3}));
  const ValueId y = bn.add_node(OpKind::BatchNorm, {x, p, p, p}, {}, {f32({2, 3})}, "bn")[0];
  bn.mark_output(y);
  expect_node_error(bn, 0, "node 0 'bn' (batch_norm)", "/nodes/0/inputs", "expected 3 or 5 inputs");

  Graph cat;
  cat.mark_output(cat.add_node(OpKind::Cat, {}, {}, {f32({0})})[0]);
  expect_node_error(cat, 0, "node 0 (cat)", "/nodes/0/inputs",
                    "expected at least 1 input (tensors), got 0");
}

TEST(GraphValidate, RejectsWrongNumberOfOutputs) {
  Graph g;
  const ValueId m = g.add_input("m", f32({2, 5}));
  const ValueId v = g.add_node(OpKind::Max, {m}, Attributes().set("dim", 1), {f32({2})}, "mx")[0];
  g.mark_output(v);
  expect_node_error(g, 0, "node 0 'mx' (max)", "/nodes/0/outputs", "expected 2 outputs, got 1");

  Graph split;
  const ValueId a = split.add_input("a", f32({2}));
  split.add_node(OpKind::Split, {a}, Attributes().set("split_size", {1}), {});
  split.mark_output(a);
  expect_node_error(split, 0, "node 0 (split)", "/nodes/0/outputs",
                    "expected at least 1 output, got 0");
}

TEST(GraphValidate, RejectsUnknownAttribute) {
  Graph g = small_graph();
  g.mutable_nodes()[0].attrs.set("strides", {2});
  expect_node_error(
      g, 0, "node 0 'conv' (conv2d)", "/nodes/0/attrs/strides",
      "unknown attribute 'strides' (conv2d takes: stride, padding, dilation, groups)");
  Graph relu = small_graph();
  relu.mutable_nodes()[1].attrs.set("in_place", true);  // a misspelled "inplace"
  expect_node_error(relu, 1, "node 1 'act' (relu)", "/nodes/1/attrs/in_place",
                    "unknown attribute 'in_place' (relu takes: inplace)");
}

TEST(GraphValidate, RejectsMissingRequiredAttribute) {
  Graph g;
  const ValueId x = g.add_input("x", f32({1, 1, 4, 4}));
  g.mark_output(g.add_node(OpKind::MaxPool2d, {x}, {}, {f32({1, 1, 2, 2})}, "pool")[0]);
  expect_node_error(g, 0, "node 0 'pool' (max_pool2d)", "/nodes/0/attrs/kernel_size",
                    "missing required attribute 'kernel_size' (an int list)");
}

TEST(GraphValidate, RejectsWrongAttributeType) {
  Graph g = small_graph();
  g.mutable_nodes()[0].attrs.set("stride", 2.0);
  expect_node_error(g, 0, "node 0 'conv' (conv2d)", "/nodes/0/attrs/stride",
                    "attribute 'stride': expected an int list, got a float");
  // Floats must be floats, so that they serialize as floats.
  Graph leaky;
  const ValueId x = leaky.add_input("x", f32({2}));
  leaky.mark_output(
      leaky.add_node(OpKind::LeakyRelu, {x}, Attributes().set("negative_slope", 1), {f32({2})})[0]);
  expect_node_error(leaky, 0, "node 0 (leaky_relu)", "/nodes/0/attrs/negative_slope",
                    "expected a float, got an int");
}

TEST(GraphValidate, RejectsStringOutsideItsAllowedSet) {
  Graph g;
  const ValueId x = g.add_input("x", f32({2}));
  g.mark_output(
      g.add_node(OpKind::Gelu, {x}, Attributes().set("approximate", "exact"), {f32({2})}, "g")[0]);
  expect_node_error(g, 0, "node 0 'g' (gelu)", "/nodes/0/attrs/approximate",
                    "expected one of \"none\", \"tanh\", got \"exact\"");
}

TEST(GraphValidate, RejectsOpSpecificAttributeRules) {
  Graph clamp;
  const ValueId x = clamp.add_input("x", f32({2}));
  clamp.mark_output(clamp.add_node(OpKind::Clamp, {x}, {}, {f32({2})}, "c")[0]);
  expect_node_error(clamp, 0, "node 0 'c' (clamp)", "/nodes/0/attrs",
                    "at least one of 'min' and 'max'");

  Graph reshape;
  const ValueId y = reshape.add_input("y", f32({2, 3}));
  reshape.mark_output(
      reshape.add_node(OpKind::Reshape, {y}, Attributes().set("shape", {-1, -1}), {f32({6})})[0]);
  expect_node_error(reshape, 0, "node 0 (reshape)", "/nodes/0/attrs/shape",
                    "only one dimension can be inferred");

  Graph pad;
  const ValueId z = pad.add_input("z", f32({2, 3}));
  pad.mark_output(
      pad.add_node(OpKind::Pad, {z}, Attributes().set("pad", {1, 1, 1}), {f32({4, 5})})[0]);
  expect_node_error(pad, 0, "node 0 (pad)", "/nodes/0/attrs/pad", "divisible by 2");
}

TEST(GraphValidate, RejectsNegativeDimensions) {
  Graph g = small_graph();
  g.mutable_values()[0].type.shape[2] = -8;
  const ValidationError e = validation_error(g);
  EXPECT_EQ(e.node_index(), -1);
  EXPECT_EQ(e.field(), "/inputs/0/shape/2");
  EXPECT_NE(std::string(e.what()).find("input 0 'x'"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("negative size at dim 2"), std::string::npos) << e.what();

  Graph out = small_graph();
  out.mutable_values()[4].type.shape[0] = -1;
  expect_node_error(out, 1, "node 1 'act' (relu)", "/nodes/1/outputs/0/shape/0",
                    "float32[-1, 4, 8, 8] has a negative size at dim 0");
}

TEST(GraphValidate, RejectsDuplicateLeafNames) {
  Graph g = small_graph();
  g.mutable_values()[2].name = "x";
  const ValidationError e = validation_error(g);
  EXPECT_EQ(e.field(), "/parameters/1/name");
  EXPECT_NE(std::string(e.what()).find("parameter 1 'x': name 'x' is already used by input 0 'x'"),
            std::string::npos)
      << e.what();
}

TEST(GraphValidate, RejectsBadNames) {
  Graph g = small_graph();
  g.mutable_values()[1].name = "conv-weight";
  ValidationError e = validation_error(g);
  EXPECT_EQ(e.field(), "/parameters/0/name");
  EXPECT_NE(std::string(e.what()).find("contains '-'"), std::string::npos) << e.what();

  Graph empty = small_graph();
  empty.mutable_values()[0].name = "";
  e = validation_error(empty);
  EXPECT_EQ(e.field(), "/inputs/0/name");
  EXPECT_NE(std::string(e.what()).find("name is empty"), std::string::npos) << e.what();

  Graph node = small_graph();
  node.mutable_nodes()[1].name = "my act";
  expect_node_error(node, 1, "node 1 'my act' (relu)", "/nodes/1/name", "contains ' '");

  Graph value = small_graph();
  value.mutable_values()[3].name = "y/1";
  expect_node_error(value, 0, "node 0 'conv' (conv2d)", "/nodes/0/outputs/0/name", "contains '/'");
  EXPECT_TRUE(is_valid_name("layer1.0.weight"));
  EXPECT_FALSE(is_valid_name("é"));
}

TEST(GraphValidate, RejectsGraphWithoutOutputs) {
  Graph g = small_graph();
  g.mutable_outputs().clear();
  const ValidationError e = validation_error(g);
  EXPECT_EQ(e.field(), "/outputs");
  EXPECT_NE(std::string(e.what()).find("graph has no outputs"), std::string::npos);
}

TEST(GraphValidate, RejectsUndefinedOutputs) {
  Graph g = small_graph();
  g.mutable_outputs().push_back(17);
  ValidationError e = validation_error(g);
  EXPECT_EQ(e.field(), "/outputs/1");
  EXPECT_NE(std::string(e.what()).find("graph output 1: value 17 does not exist"),
            std::string::npos)
      << e.what();

  Graph orphan = small_graph();
  orphan.mutable_values().push_back(Value{5, f32({2}), "", {}, 0, {}});
  orphan.mutable_outputs()[0] = 5;
  e = validation_error(orphan);
  EXPECT_EQ(e.field(), "/outputs/0");
  EXPECT_NE(std::string(e.what()).find("not defined"), std::string::npos) << e.what();
}

TEST(GraphValidate, RejectsInconsistentValueTable) {
  Graph g = small_graph();
  g.mutable_values()[2].id = 7;
  const ValidationError e = validation_error(g);
  EXPECT_NE(std::string(e.what()).find("values()[2] has id 7"), std::string::npos) << e.what();
}

TEST(GraphValidate, RejectsUnknownOp) {
  Graph g = small_graph();
  g.mutable_nodes()[1].op = static_cast<OpKind>(kNumOps + 3);
  const ValidationError e = validation_error(g);
  EXPECT_EQ(e.field(), "/nodes/1/op");
  EXPECT_NE(std::string(e.what()).find("node 1 'act': unknown op"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace weft::ir
