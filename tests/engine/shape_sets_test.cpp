// Dynamic shapes in the IR: later input shape sets (validation naming the field, graph.json
// version 2), the plain case of each set with every type re-derived and layouts kept in kind,
// and the values a case keeps.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "expect_error.h"
#include "weft/error.h"
#include "weft/ir/execute.h"
#include "weft/ir/graph.h"
#include "weft/ir/graph_json.h"
#include "weft/ir/shape_sets.h"
#include "weft/ir/validate.h"
#include "weft/ops.h"

namespace weft {
namespace {

using ir::Graph;
using ir::OpKind;
using ir::Shape;

ir::TensorType f32(Shape shape) {
  return {Dtype::Float32, std::move(shape)};
}

// x [2, 3] (later [4, 3], [1, 3]) and y [3] (static) -> x + y -> sum over dim 1.
Graph dynamic_graph() {
  Graph g;
  const ir::ValueId x = g.add_input("x", f32({2, 3}));
  g.mutable_values()[static_cast<std::size_t>(x)].shape_sets = {{4, 3}, {1, 3}};
  const ir::ValueId y = g.add_input("y", f32({3}));
  const ir::ValueId sum = g.add_node(OpKind::Add, {x, y}, {}, {f32({2, 3})})[0];
  g.mark_output(
      g.add_node(OpKind::Sum, {sum}, ir::Attributes().set("dim", Shape{1}), {f32({2})})[0]);
  return g;
}

ir::TensorMap dynamic_values() {
  return {{"x", arange(0, 6, 1, Dtype::Float32).reshape({2, 3})},
          {"x@1", arange(0, 12, 1, Dtype::Float32).reshape({4, 3})},
          {"x@2", full({1, 3}, 2.0)},
          {"y", full({3}, 1.0)},
          {"unrelated", full({1}, 0.0)}};
}

TEST(ShapeSets, CountKeysAndForms) {
  Graph g = dynamic_graph();
  EXPECT_EQ(g.shape_set_count(), 3u);
  EXPECT_EQ(ir::shape_set_key("x", 0), "x");
  EXPECT_EQ(ir::shape_set_key("x", 2), "x@2");
  EXPECT_FALSE(ir::is_valid_name("x@2"));  // keys of later sets never collide with a name
  const std::vector<std::string> forms = ir::program_forms(g);
  EXPECT_NE(std::find(forms.begin(), forms.end(), "dynamic-shapes"), forms.end());
  g.clear_shape_sets();
  EXPECT_EQ(g.shape_set_count(), 1u);
}

TEST(ShapeSets, EachSetIsAPlainCaseWithItsOwnTypes) {
  const Graph g = dynamic_graph();
  const ir::TensorMap values = dynamic_values();
  const ir::ShapeSetCase first = ir::at_shape_set(g, values, 0);
  EXPECT_EQ(first.graph.shape_set_count(), 1u);
  EXPECT_EQ(first.graph.type(first.graph.outputs()[0]).shape, (Shape{2}));
  EXPECT_EQ(first.values.size(), 2u);  // x and y; later sets and strangers stay behind
  const ir::ShapeSetCase second = ir::at_shape_set(g, values, 1);
  EXPECT_EQ(second.graph.type(second.graph.inputs()[0]).shape, (Shape{4, 3}));
  EXPECT_EQ(second.graph.type(second.graph.nodes()[0].outputs[0]).shape, (Shape{4, 3}));
  EXPECT_EQ(second.graph.type(second.graph.outputs()[0]).shape, (Shape{4}));
  EXPECT_EQ(second.values.at("y").sizes(), (Shape{3}));  // a static input keeps its value
  // The set's plain case runs on the engine as any case does.
  const ir::Execution run = ir::execute(second.graph, second.values);
  EXPECT_EQ(run.outputs[0].to_vector<double>(), (std::vector<double>{6, 15, 24, 33}));
  testing::expect_error([&] { (void)ir::at_shape_set(g, values, 3); }, "3 shape sets");
}

TEST(ShapeSets, LaterSetsKeepTheLayoutKindAndProjectExpandedInputs) {
  Graph g = dynamic_graph();
  ir::Value& x = g.mutable_values()[0];
  x.strides = {0, 1};  // expanded along dim 0
  const ir::ShapeSetCase second = ir::at_shape_set(g, dynamic_values(), 1);
  EXPECT_EQ(second.graph.value(second.graph.inputs()[0]).strides, (Shape{0, 1}));
  // Every row holds row 0's values, as every path's buffer does.
  EXPECT_EQ(second.values.at("x").to_vector<double>(),
            (std::vector<double>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}));
  x.strides = {1, 2};  // transposed
  EXPECT_EQ(ir::at_shape_set(g, dynamic_values(), 1).graph.value(0).strides, (Shape{1, 4}));
}

TEST(ShapeSets, ARefusedSetNamesTheNodeAndAMissingValueTheKey) {
  Graph g = dynamic_graph();
  g.mutable_values()[0].shape_sets[0] = {4, 5};  // x + y no longer broadcasts
  ir::TensorMap values = dynamic_values();
  testing::expect_error([&] { (void)ir::at_shape_set(g, values, 1); },
                        "shape set 1: value 'x@1' is float32[4, 3], but the set declares "
                        "float32[4, 5]");
  values.erase("x@1");
  values.emplace("x@1", full({4, 5}, 1.0));
  testing::expect_error([&] { (void)ir::at_shape_set(g, values, 1); }, "shape set 1: node 0");
  values = dynamic_values();
  values.erase("x@2");
  testing::expect_error([&] { (void)ir::at_shape_set(dynamic_graph(), values, 2); },
                        "shape set 2: input 'x' has no value 'x@2'");
}

TEST(ShapeSets, CaseValuesKeepEveryLeafAndItsLaterSets) {
  const ir::TensorMap kept = ir::case_values(dynamic_graph(), dynamic_values());
  EXPECT_EQ(kept.size(), 4u);
  EXPECT_EQ(kept.count("x@2"), 1u);
  EXPECT_EQ(kept.count("unrelated"), 0u);
}

// validate() refuses `g` at `field`, saying `fragment`.
void expect_invalid(const Graph& g, const std::string& field, const std::string& fragment) {
  try {
    ir::validate(g);
    ADD_FAILURE() << "accepted; expected a problem at " << field;
  } catch (const ir::ValidationError& e) {
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(ShapeSets, ValidationNamesTheField) {
  Graph g = dynamic_graph();
  g.mutable_values()[0].shape_sets[1] = {1, 3, 1};
  expect_invalid(g, "/inputs/0/shape_sets/1", "shape set 2 has rank 3");
  g = dynamic_graph();
  g.mutable_values()[1].shape_sets = {{3}};  // y has 1 later shape, x has 2
  expect_invalid(g, "/inputs/1/shape_sets", "expected 2 shapes");
  g = dynamic_graph();
  g.mutable_values()[0].shape_sets[0] = {-1, 3};
  expect_invalid(g, "/inputs/0/shape_sets/0", "negative dim");
  Graph with_parameter;
  const ir::ValueId w = with_parameter.add_parameter("w", f32({2}));
  with_parameter.mutable_values()[static_cast<std::size_t>(w)].shape_sets = {{3}};
  with_parameter.mark_output(with_parameter.add_node(OpKind::Relu, {w}, {}, {f32({2})})[0]);
  expect_invalid(with_parameter, "/parameters/0/shape_sets", "parameters keep their shape");
}

TEST(ShapeSets, GraphJsonKeepsTheSets) {
  const Graph g = dynamic_graph();
  const nlohmann::json document = ir::graph_to_json(g);
  EXPECT_EQ(document["weft"], 2);
  EXPECT_EQ(document["inputs"][0]["shape_sets"], nlohmann::json::parse("[[4, 3], [1, 3]]"));
  EXPECT_FALSE(document["inputs"][1].contains("shape_sets"));
  const Graph back = ir::graph_from_json(document, "graph.json");
  EXPECT_EQ(back, g);
  EXPECT_NE(ir::graph_to_json_text(g).find("\"shape_sets\": [[4, 3], [1, 3]]"), std::string::npos)
      << ir::graph_to_json_text(g);
  nlohmann::json bad = document;
  bad["inputs"][0]["shape_sets"] = nlohmann::json::parse("[[4, 3], \"wide\"]");
  testing::expect_error([&] { (void)ir::graph_from_json(bad, "case/graph.json"); },
                        "/inputs/0/shape_sets/1");
  bad["inputs"][0]["shape_sets"] = 3;
  testing::expect_error([&] { (void)ir::graph_from_json(bad, "case/graph.json"); },
                        "expected a list of shapes");
}

}  // namespace
}  // namespace weft
