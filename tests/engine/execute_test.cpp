// Running IR graphs on the engine: values, declared-type checks, fp64 shadow, gradients.
#include <gtest/gtest.h>

#include "gradcheck.h"
#include "weft/error.h"
#include "weft/ir/execute.h"
#include "weft/ops.h"

namespace weft::ir {
namespace {

// y = relu(x * w + b); z = sum(y, dim=1)
Graph small_graph(Dtype d = Dtype::Float32) {
  Graph g;
  const ValueId x = g.add_input("x", {d, {2, 3}});
  const ValueId w = g.add_parameter("w", {d, {3}});
  const ValueId b = g.add_parameter("b", {d, {}});
  const ValueId xw = g.add_node(OpKind::Mul, {x, w}, {}, {{d, {2, 3}}}, "scale")[0];
  const ValueId s = g.add_node(OpKind::Add, {xw, b}, {}, {{d, {2, 3}}})[0];
  const ValueId y = g.add_node(OpKind::Relu, {s}, {}, {{d, {2, 3}}})[0];
  Attributes sum_attrs;
  sum_attrs.set("dim", std::vector<std::int64_t>{1});
  const ValueId z = g.add_node(OpKind::Sum, {y}, sum_attrs, {{d, {2}}})[0];
  g.mark_output(z);
  g.mark_output(y);
  return g;
}

TensorMap small_values() {
  return {{"x", tensor(std::vector<float>{1, -2, 3, -4, 5, -6}, {2, 3})},
          {"w", tensor(std::vector<float>{1, 2, 3})},
          {"b", scalar_tensor(0.5)}};
}

TEST(Execute, ForwardMatchesDirectOps) {
  const Execution run = execute(small_graph(), small_values());
  ASSERT_EQ(run.outputs.size(), 2u);
  // rows: [1.5, 0, 9.5] and [0, 10.5, 0]
  EXPECT_EQ(run.outputs[0].to_vector<float>(), (std::vector<float>{11, 10.5}));
  EXPECT_EQ(run.outputs[1].sizes(), (Shape{2, 3}));
}

TEST(Execute, Float64ShadowRunsEveryFloatInDouble) {
  ExecutionOptions options;
  options.floating_dtype = Dtype::Float64;
  options.keep_values = true;
  const Execution run = execute(small_graph(), small_values(), options);
  EXPECT_EQ(run.outputs[0].dtype(), Dtype::Float64);
  EXPECT_EQ(run.values.size(), small_graph().values().size());
  EXPECT_EQ(run.outputs[0].to_vector<double>(), (std::vector<double>{11, 10.5}));
}

TEST(Execute, MissingOrMistypedLeafIsNamed) {
  TensorMap values = small_values();
  values.erase("w");
  try {
    execute(small_graph(), values);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("parameter 'w' has no value"), std::string::npos);
  }
  values = small_values();
  values["x"] = zeros({3, 2});
  try {
    execute(small_graph(), values);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
}

TEST(Execute, WrongDeclaredShapeNamesTheNode) {
  Graph g;
  const ValueId x = g.add_input("x", {Dtype::Float32, {2, 3}});
  const ValueId y = g.add_node(OpKind::Exp, {x}, {}, {{Dtype::Float32, {3, 2}}}, "bad_exp")[0];
  g.mark_output(y);
  try {
    execute(g, {{"x", zeros({2, 3})}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 0 'bad_exp' (exp)"), std::string::npos) << e.what();
  }
}

TEST(Execute, GradientsOfCotangentMatchFiniteDifferences) {
  const Graph g = small_graph(Dtype::Float64);
  const std::vector<Tensor> cotangents = {testing::random_tensor({2}, 1),
                                          testing::random_tensor({2, 3}, 2)};
  TensorMap values = {{"x", testing::random_tensor({2, 3}, 3)},
                      {"w", testing::random_tensor({3}, 4)},
                      {"b", testing::random_tensor({}, 5)}};
  const GradientExecution run = execute_with_gradients(g, values, cotangents);
  ASSERT_EQ(run.gradients.size(), 3u);
  // Central differences of <outputs, cotangents> for every element of every leaf.
  for (const auto& [name, value] : values) {
    Tensor perturbed = value.clone();
    TensorMap local = values;
    local[name] = perturbed;
    const std::vector<double> analytic = run.gradients.at(name).to_vector<double>();
    for (std::int64_t i = 0; i < perturbed.numel(); ++i) {
      double* p = perturbed.data<double>() + i;
      const double saved = *p;
      auto objective = [&] {
        const Execution e = execute(g, local);
        double total = 0;
        for (std::size_t k = 0; k < e.outputs.size(); ++k) {
          total += sum(mul(e.outputs[k], cotangents[k])).item();
        }
        return total;
      };
      *p = saved + 1e-6;
      const double plus = objective();
      *p = saved - 1e-6;
      const double minus = objective();
      *p = saved;
      EXPECT_NEAR(analytic[i], (plus - minus) / 2e-6, 1e-5) << name << "[" << i << "]";
    }
  }
  // The caller's leaves are untouched.
  EXPECT_FALSE(values.at("x").requires_grad());
}

}  // namespace
}  // namespace weft::ir
