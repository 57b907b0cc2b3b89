// rms_norm and nn::RMSNorm: values against a naive loop, the default eps of each input type
// (also in a float64 run of a float32 graph, where it stays the program's float32 epsilon),
// float16 run in float32, gradients against finite differences, and layer_norm's argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "expect_error.h"
#include "gradcheck.h"
#include "weft/ir/execute.h"
#include "weft/nn/normalization.h"
#include "weft/ops.h"

namespace weft {
namespace {

using testing::expect_error;
using testing::expect_gradients_match_finite_differences;
using testing::random_tensor;

TEST(RmsNorm, MatchesANaiveLoop) {
  const Tensor x = random_tensor({2, 2, 3}, 1, -3, 3).to(Dtype::Float64);
  const Tensor w = random_tensor({2, 3}, 2).to(Dtype::Float64);
  const std::vector<double> v = x.to_vector<double>(), wv = w.to_vector<double>();
  const std::vector<double> got = rms_norm(x, {2, 3}, w, 1e-3).to_vector<double>();
  for (std::size_t batch = 0; batch < 2; ++batch) {
    double square = 0;
    for (std::size_t i = 0; i < 6; ++i) square += v[batch * 6 + i] * v[batch * 6 + i] / 6;
    for (std::size_t i = 0; i < 6; ++i) {
      EXPECT_NEAR(got[batch * 6 + i], v[batch * 6 + i] / std::sqrt(square + 1e-3) * wv[i], 1e-12);
    }
  }
  EXPECT_EQ(rms_norm(zeros({0, 4}), {4}).sizes(), (Shape{0, 4}));
}

TEST(RmsNorm, DefaultEpsIsTheInputTypesEpsilonAlsoInAFloat64Reference) {
  // Mean square 1e-8: float32's epsilon (1.19e-7) dominates it, float64's does not.
  const double float_eps = std::numeric_limits<float>::epsilon();
  const double value = static_cast<float>(1e-4);  // as float32 holds it
  const double with_float_eps = value / std::sqrt(value * value + float_eps);
  const Tensor x32 = full({1, 4}, value);
  EXPECT_NEAR(rms_norm(x32, {4}).to_vector<double>()[0], with_float_eps, 1e-6);
  // float64's epsilon shifts it by 1e-8 only.
  EXPECT_NEAR(rms_norm(x32.to(Dtype::Float64), {4}).to_vector<double>()[0], 1.0, 2e-8);
  // float16 runs in float32, with float32's epsilon, and stays float16.
  const Tensor half = rms_norm(x32.to(Dtype::Float16), {4});
  EXPECT_EQ(half.dtype(), Dtype::Float16);
  EXPECT_NEAR(half.to_vector<double>()[0], with_float_eps, 2e-3);

  ir::Graph graph;
  const ir::ValueId in = graph.add_input("x", {Dtype::Float32, {1, 4}});
  ir::Attributes attrs;
  attrs.set("normalized_shape", std::vector<std::int64_t>{4});
  graph.mark_output(
      graph.add_node(ir::OpKind::RmsNorm, {in}, attrs, {{Dtype::Float32, {1, 4}}})[0]);
  ir::ExecutionOptions reference;
  reference.floating_dtype = Dtype::Float64;
  const Tensor out = ir::execute(graph, {{"x", x32}}, reference).outputs.at(0);
  EXPECT_EQ(out.dtype(), Dtype::Float64);
  EXPECT_NEAR(out.to_vector<double>()[0], with_float_eps, 1e-12);
}

TEST(RmsNorm, GradientsMatchFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{rms_norm(in[0], {3}, in[1], 1e-5)};
      },
      {random_tensor({2, 3}, 3), random_tensor({3}, 4)});
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{rms_norm(in[0].t(), {2, 2})};
      },
      {random_tensor({2, 2}, 5)});
}

TEST(RmsNorm, TheLayerHoldsAWeightOfOnesAndCallsTheOp) {
  nn::RMSNorm layer({3, 4});
  EXPECT_EQ(layer.state_dict().keys(), (std::vector<std::string>{"weight"}));
  EXPECT_EQ(layer.weight.to_vector<double>(), std::vector<double>(12, 1.0));
  const Tensor x = random_tensor({2, 3, 4}, 6);
  EXPECT_EQ(layer(x).to_vector<double>(), rms_norm(x, {3, 4}, layer.weight).to_vector<double>());
  nn::RMSNorm plain({4}, 1e-2, false);
  EXPECT_FALSE(plain.weight.defined());
  EXPECT_TRUE(plain.state_dict().keys().empty());
  EXPECT_EQ(plain(x).to_vector<double>(), rms_norm(x, {4}, Tensor(), 1e-2).to_vector<double>());
}

TEST(RmsNorm, RejectsBadShapesAsLayerNormDoes) {
  expect_error(
      [] {
        rms_norm(zeros({2, 4}), {3});
      },
      "Given normalized_shape=[3], expected input with shape [*, 3], but got input of "
      "size[2, 4]");
  expect_error(
      [] {
        rms_norm(zeros({2, 3}), {3}, ones({4}));
      },
      "Expected weight to be of same shape as normalized_shape, but got weight of shape "
      "[4] and normalized_shape = [3]");
  expect_error(
      [] {
        rms_norm(zeros({2, 3}), {});
      },
      "Expected normalized_shape to be at least 1-dimensional");
  expect_error(
      [] {
        rms_norm(zeros({2, 3}, dtype(Dtype::Int64)), {3});
      },
      "\"rms_norm\" not implemented for");
}

}  // namespace
}  // namespace weft
