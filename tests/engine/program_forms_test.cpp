// The program forms in the IR and the engine: forward-only and module-form flags, input
// layouts (validation, graph.json, execution, projection of expanded inputs), Python scalars
// with PyTorch's wrapped-number promotion, and contiguous / channels_last.
#include <gtest/gtest.h>

#include <string>

#include "expect_error.h"
#include "weft/error.h"
#include "weft/ir/execute.h"
#include "weft/ir/graph.h"
#include "weft/ir/graph_json.h"
#include "weft/ir/validate.h"
#include "weft/ops.h"

namespace weft {
namespace {

using ir::Graph;
using ir::OpKind;
using ir::Shape;

// Same shape and the same values (compared as doubles).
bool same(const Tensor& a, const Tensor& b) {
  return a.sizes() == b.sizes() && a.to_vector<double>() == b.to_vector<double>();
}

ir::TensorType f32(Shape shape) {
  return {Dtype::Float32, std::move(shape)};
}

// x [2, 3] laid out as the transpose of a [3, 2] buffer, then relu; one output.
Graph transposed_input_graph() {
  Graph g;
  const ir::ValueId x = g.add_input("x", f32({2, 3}));
  g.mutable_values()[static_cast<std::size_t>(x)].strides = {1, 2};
  g.mark_output(g.add_node(OpKind::Relu, {x}, {}, {f32({2, 3})})[0]);
  return g;
}

TEST(ProgramForms, LayoutRules) {
  EXPECT_EQ(ir::contiguous_strides({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(ir::channels_last_strides({2, 3, 4, 5}), (Shape{60, 1, 15, 3}));
  EXPECT_EQ(ir::storage_extent({2, 3}, {1, 2}, 0), 6);
  EXPECT_EQ(ir::storage_extent({2, 3}, {6, 2}, 1), 12);
  EXPECT_EQ(ir::storage_extent({0, 3}, {3, 1}, 2), 2);
  EXPECT_EQ(ir::layout_problem({2, 3}, {1, 2}, 0), "");
  EXPECT_EQ(ir::layout_problem({2, 3}, {0, 1}, 0), "");  // expanded
  EXPECT_EQ(ir::layout_problem({2, 3}, {6, 2}, 1), "");  // a step of 2
  EXPECT_NE(ir::layout_problem({2, 3}, {1, 1}, 0).find("overlaps"), std::string::npos);
  EXPECT_NE(ir::layout_problem({2, 3}, {3}, 0).find("1 entries"), std::string::npos);
  EXPECT_NE(ir::layout_problem({2, 3}, {-3, 1}, 0).find("negative"), std::string::npos);
}

TEST(ProgramForms, RelayoutKeepsTheKindOfLayout) {
  // channels_last stays channels_last, a transpose a transpose, a step a step, 0 stays 0.
  EXPECT_EQ(ir::relayout({2, 3, 4, 5}, ir::channels_last_strides({2, 3, 4, 5}), {1, 2, 2, 3}),
            ir::channels_last_strides({1, 2, 2, 3}));
  EXPECT_EQ(ir::relayout({2, 3}, {1, 2}, {4, 5}), (Shape{1, 4}));
  EXPECT_EQ(ir::relayout({2, 3}, {6, 2}, {2, 2}), (Shape{4, 2}));
  EXPECT_EQ(ir::relayout({2, 3}, {0, 1}, {4, 2}), (Shape{0, 1}));
  EXPECT_EQ(ir::relayout({2, 3}, {3, 1}, {2, 3, 1}), Shape{});
}

TEST(ProgramForms, ValidationNamesTheField) {
  Graph g = transposed_input_graph();
  g.mutable_values()[0].strides = {1, 1};
  try {
    ir::validate(g);
    FAIL() << "overlapping strides accepted";
  } catch (const ir::ValidationError& e) {
    EXPECT_EQ(e.field(), "/inputs/0/strides");
    EXPECT_NE(std::string(e.what()).find("overlaps"), std::string::npos) << e.what();
  }
  Graph p;
  const ir::ValueId w = p.add_parameter("w", f32({2}));
  p.mutable_values()[static_cast<std::size_t>(w)].strides = {1};
  p.mark_output(w);
  EXPECT_THROW(ir::validate(p), ir::ValidationError);  // parameters are contiguous
}

TEST(ProgramForms, GraphJsonKeepsFormsAndStaysVersion1Without) {
  Graph plain = transposed_input_graph();
  plain.mutable_values()[0].strides.clear();
  EXPECT_EQ(ir::graph_to_json(plain)["weft"], 1);

  Graph g = transposed_input_graph();
  g.mutable_values()[0].storage_offset = 1;
  g.set_requires_grad(false);
  g.set_nn_modules(true);
  const nlohmann::json document = ir::graph_to_json(g);
  EXPECT_EQ(document["weft"], 2);
  EXPECT_EQ(document["requires_grad"], false);
  EXPECT_EQ(document["inputs"][0]["strides"], nlohmann::json::parse("[1, 2]"));
  const Graph back = ir::graph_from_json(document, "graph.json");
  EXPECT_EQ(back, g);
  EXPECT_EQ(ir::graph_to_json_text(back), ir::graph_to_json_text(g));

  nlohmann::json bad = document;
  bad["inputs"][0]["strides"] = nlohmann::json::parse("[1, 1]");
  testing::expect_error([&] { (void)ir::graph_from_json(bad, "case/graph.json"); },
                        "case/graph.json");
  bad = document;
  bad["requires_grad"] = "no";
  testing::expect_error([&] { (void)ir::graph_from_json(bad, "case/graph.json"); },
                        "/requires_grad");
}

TEST(ProgramForms, ProgramFormNames) {
  Graph g = transposed_input_graph();
  g.set_requires_grad(false);
  const ir::ValueId y = g.add_node(OpKind::MulScalar, {g.outputs()[0]},
                                   ir::Attributes().set("other", 2.5), {f32({2, 3})})[0];
  g.mark_output(g.add_node(OpKind::Contiguous, {y}, {}, {f32({2, 3})})[0]);
  EXPECT_EQ(ir::program_forms(g),
            (std::vector<std::string>{"forward-only", "memory-format", "non-contiguous-input",
                                      "python-scalar"}));
}

TEST(ProgramForms, LaidOutInputsComputeTheSameValuesAndGradients) {
  const Graph laid_out = transposed_input_graph();
  Graph plain = laid_out;
  plain.mutable_values()[0].strides.clear();
  ir::TensorMap values{{"x", tensor(std::vector<float>{-1, 2, -3, 4, -5, 6}, {2, 3})}};
  const std::vector<Tensor> cotangents = ir::random_cotangents(plain, 7);
  const auto a = ir::execute_with_gradients(laid_out, values, cotangents);
  const auto b = ir::execute_with_gradients(plain, values, cotangents);
  EXPECT_TRUE(same(a.forward.outputs[0], b.forward.outputs[0]));
  EXPECT_TRUE(same(a.gradients.at("x"), b.gradients.at("x")));
}

TEST(ProgramForms, ExpandedInputsRepeatIndexZero) {
  Graph g = transposed_input_graph();
  g.mutable_values()[0].strides = {0, 1};  // rows repeat row 0
  const ir::TensorMap projected =
      ir::project_to_layouts(g, {{"x", tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3})}});
  EXPECT_TRUE(same(projected.at("x"), tensor(std::vector<float>{1, 2, 3, 1, 2, 3}, {2, 3})));
  // Each element of an expanded leaf has its own gradient, as a PyTorch leaf of stride 0 does.
  const std::vector<Tensor> ones{full({2, 3}, 1.0)};
  const auto run = ir::execute_with_gradients(g, projected, ones);
  EXPECT_TRUE(same(run.gradients.at("x"), full({2, 3}, 1.0)));
}

TEST(ProgramForms, ScalarPromotionFollowsWrappedNumbers) {
  const Tensor i32 = tensor(std::vector<std::int32_t>{1, 2});
  const Tensor f64 = tensor(std::vector<double>{1, 2});
  const Tensor mask = tensor(std::vector<bool>{true, false});
  EXPECT_EQ(mul_scalar(i32, 2.5).dtype(), Dtype::Float32);
  EXPECT_EQ(mul_scalar(i32, std::int64_t{3}).dtype(), Dtype::Int32);
  EXPECT_EQ(mul_scalar(f64, 2.5).dtype(), Dtype::Float64);
  EXPECT_EQ(add_scalar(mask, true).dtype(), Dtype::Bool);
  EXPECT_TRUE(same(add_scalar(mask, true), tensor(std::vector<bool>{true, true})));
  EXPECT_EQ(add_scalar(mask, std::int64_t{2}).dtype(), Dtype::Int64);
  EXPECT_EQ(add_scalar(i32, true).dtype(), Dtype::Int32);
  EXPECT_EQ(div_scalar(i32, std::int64_t{2}).dtype(), Dtype::Float32);
  EXPECT_TRUE(same(rsub_scalar(f64, std::int64_t{2}), tensor(std::vector<double>{1, 0})));
  EXPECT_TRUE(same(rpow_scalar(f64, 2.0), tensor(std::vector<double>{2, 4})));
  testing::expect_error([&] { (void)sub_scalar(mask, std::int64_t{1}); }, "with a bool tensor");
  testing::expect_error([&] { (void)sub_scalar(f64, true); }, "with a bool tensor");
  // float32 math: the scalar is rounded to float32 first, as ATen's CPU kernels do.
  const Tensor tenth = mul_scalar(tensor(std::vector<float>{3}), 0.1);
  EXPECT_EQ(tenth.dtype(), Dtype::Float32);
  EXPECT_EQ(tenth.data<float>()[0], 3.0f * 0.1f);
}

TEST(ProgramForms, ScalarOpsRecordTheirGradient) {
  Tensor x = tensor(std::vector<double>{0.5, 2.0}).requires_grad_();
  pow_scalar(x, 3.0).sum().backward();
  EXPECT_NEAR(x.grad().data<double>()[0], 3 * 0.25, 1e-12);
  EXPECT_NEAR(x.grad().data<double>()[1], 3 * 4.0, 1e-12);
  Tensor y = tensor(std::vector<double>{1.0}).requires_grad_();
  rsub_scalar(y, std::int64_t{5}).sum().backward();
  EXPECT_EQ(y.grad().data<double>()[0], -1.0);
}

TEST(ProgramForms, ChannelsLastKeepsValuesAndSetsStrides) {
  const Tensor x = arange(24.0, Dtype::Float32).reshape({1, 2, 3, 4});
  const Tensor y = contiguous(x, "channels_last");
  EXPECT_EQ(y.strides(), (Shape{24, 1, 8, 2}));
  EXPECT_TRUE(same(y, x));
  testing::expect_error([&] { (void)contiguous(arange(3.0), "channels_last"); }, "rank 4");
}

}  // namespace
}  // namespace weft
