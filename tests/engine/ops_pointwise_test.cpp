// The pointwise ops and products added for the nn.functional surface: logaddexp2, xlogy,
// copysign, fmax/fmin (ops/binary_math.cpp), lerp/addcmul/addcdiv (ops/pointwise3.cpp),
// logit and nan_to_num (ops/unary.cpp), glu and prelu (ops/activation.cpp), dot, mv, outer,
// trace and baddbmm (ops/vector_products.cpp): values against hand-derived results, PyTorch's
// conventions and messages, and gradients against finite differences. The op sweep compares
// each with LibTorch besides.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "expect_error.h"
#include "gradcheck.h"
#include "tensor_literals.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {
namespace {

using testing::doubles;
using testing::expect_error;
using testing::expect_gradients_match_finite_differences;
using testing::int64s;
using testing::random_tensor;
using testing::values;

std::vector<double> gradient_of(const Tensor& x) {
  return values(x.grad());
}

TEST(PointwiseOps, FmaxAndFminPreferNumbersToNaNAndSplitATiesGradient) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor a = doubles({1.0, 2.0, nan, 3.0, nan});
  Tensor b = doubles({1.0, 3.0, 1.0, nan, nan});
  a.requires_grad_();
  b.requires_grad_();
  const std::vector<double> out = values(fmax(a, b));
  EXPECT_EQ(out[0], 1.0);
  EXPECT_EQ(out[1], 3.0);
  EXPECT_EQ(out[2], 1.0);
  EXPECT_EQ(out[3], 3.0);
  EXPECT_TRUE(std::isnan(out[4]));
  fmax(a, b).sum().backward();
  // PyTorch 2.x: a tie splits g; a NaN other gives all of g to self, a NaN self to other.
  EXPECT_EQ(gradient_of(a), (std::vector<double>{0.5, 0.0, 0.0, 1.0, 1.0}));
  EXPECT_EQ(gradient_of(b), (std::vector<double>{0.5, 1.0, 1.0, 0.0, 0.0}));
  EXPECT_EQ(values(fmin(doubles({1.0, 2.0, nan}), doubles({0.5, 3.0, 4.0}))),
            (std::vector<double>{0.5, 2.0, 4.0}));
  EXPECT_EQ(fmax(int64s({1, -4}), int64s({-2, 3})).dtype(), Dtype::Int64);
}

TEST(PointwiseOps, XlogyIsZeroWhereXIsZeroAndCopysignTakesTheSignBit) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = doubles({0.0, 0.0, 2.0, -1.0});
  Tensor y = doubles({0.0, inf, 3.0, 2.0});
  x.requires_grad_();
  const std::vector<double> out = values(xlogy(x, y));
  EXPECT_EQ(out[0], 0.0);
  EXPECT_EQ(out[1], 0.0);
  EXPECT_DOUBLE_EQ(out[2], 2.0 * std::log(3.0));
  EXPECT_DOUBLE_EQ(out[3], -std::log(2.0));
  EXPECT_TRUE(std::isnan(values(xlogy(doubles({0.0}), doubles({std::nan("")})))[0]));
  xlogy(x, y).sum().backward();
  EXPECT_EQ(gradient_of(x)[0], 0.0);  // x = 0, y <= 0: no log(0)
  EXPECT_EQ(xlogy(int64s({1}), int64s({2})).dtype(), Dtype::Float32);

  Tensor a = doubles({0.0, -0.0, 1.5, -2.0});
  a.requires_grad_();
  const Tensor signs = doubles({-0.0, 0.0, -0.0, 3.0});
  const std::vector<double> c = values(copysign(a, signs));
  EXPECT_TRUE(std::signbit(c[0]));
  EXPECT_FALSE(std::signbit(c[1]));
  EXPECT_EQ(c[2], -1.5);
  EXPECT_EQ(c[3], 2.0);
  copysign(a, signs).sum().backward();
  EXPECT_EQ(gradient_of(a), (std::vector<double>{0.0, 0.0, -1.0, -1.0}));
  EXPECT_NEAR(values(logaddexp2(doubles({3.0}), doubles({3.0})))[0], 4.0, 1e-15);
  expect_error([] { logaddexp2(int64s({1}), int64s({2})); }, "\"logaddexp2_cpu\" not implemented");
}

TEST(PointwiseOps, LerpIsExactAtItsEndsAndWantsOneDtype) {
  const std::vector<double> out =
      values(lerp(doubles({1.5, -2.0, 3.0}), doubles({-0.5, 4.0, 1.0}), doubles({0.0, 1.0, 0.25})));
  EXPECT_EQ(out[0], 1.5);
  EXPECT_EQ(out[1], 4.0);
  EXPECT_EQ(out[2], 2.5);
  expect_error([] { lerp(doubles({1.0}), doubles({1.0}).to(Dtype::Float32), doubles({0.5})); },
               "expected dtype double for `end` but got dtype float");
  expect_error([] { lerp(int64s({1}), int64s({2}), int64s({0})); },
               "\"lerp_kernel_tensor\" not implemented for");
  EXPECT_EQ(values(addcmul(doubles({1.0, 1.0}), doubles({1.0, 2.0}), doubles({3.0, 4.0}), 0.5)),
            (std::vector<double>{2.5, 5.0}));
  EXPECT_EQ(values(addcdiv(doubles({1.0}), doubles({3.0}), doubles({2.0}), 2.0)),
            (std::vector<double>{4.0}));
  EXPECT_EQ(values(addcmul(int64s({1, 1}), int64s({1, 2}), int64s({3, 4}), 2.0)),
            (std::vector<double>{7.0, 17.0}));
  expect_error([] { addcdiv(int64s({1}), int64s({3}), int64s({2})); },
               "Integer division with addcdiv is no longer supported");
}

TEST(PointwiseOps, LogitClampsWithEpsAndNanToNumUsesTheDtypesExtremes) {
  const std::vector<double> edges = values(logit(doubles({0.0, 1.0, 0.5, 2.0})));
  EXPECT_EQ(edges[0], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(edges[1], std::numeric_limits<double>::infinity());
  EXPECT_EQ(edges[2], 0.0);
  EXPECT_TRUE(std::isnan(edges[3]));
  Tensor x = doubles({0.05, 0.5, 2.0});
  x.requires_grad_();
  logit(x, 0.1).sum().backward();
  EXPECT_EQ(gradient_of(x), (std::vector<double>{0.0, 4.0, 0.0}));  // clamped: 0
  EXPECT_NEAR(values(logit(doubles({0.05}), 0.1))[0], std::log(0.1 / 0.9), 1e-15);

  const double inf = std::numeric_limits<double>::infinity();
  const Tensor specials = doubles({std::nan(""), inf, -inf, 1.5});
  EXPECT_EQ(values(nan_to_num(specials)),
            (std::vector<double>{0.0, dtype_max(Dtype::Float64), -dtype_max(Dtype::Float64), 1.5}));
  // float16 computes in float32, and still replaces inf by float16's own largest value.
  EXPECT_EQ(values(nan_to_num(specials.to(Dtype::Float16))),
            (std::vector<double>{0.0, 65504.0, -65504.0, 1.5}));
  EXPECT_EQ(values(nan_to_num(specials, 2.0, 10.0, -3.0)),
            (std::vector<double>{2.0, 10.0, -3.0, 1.5}));
  Tensor y = doubles({1.0, inf, std::nan("")});
  y.requires_grad_();
  nan_to_num(y).sum().backward();
  EXPECT_EQ(gradient_of(y), (std::vector<double>{1.0, 0.0, 0.0}));
}

TEST(PointwiseOps, GluHalvesADimAndPreluTakesOneSlopeOrOnePerChannel) {
  const Tensor x = doubles({1.0, 2.0, 0.0, -1.0}).reshape({1, 4});
  const std::vector<double> g = values(glu(x));
  EXPECT_DOUBLE_EQ(g[0], 1.0 * 0.5);
  EXPECT_DOUBLE_EQ(g[1], 2.0 / (1.0 + std::exp(1.0)));
  EXPECT_EQ(glu(random_tensor({2, 6, 3}, 1), 1).sizes(), (Shape{2, 3, 3}));
  expect_error(
      [] {
        glu(random_tensor({2, 3}, 2), 1);
      },
      "Halving dimension must be even, but dimension 1 is size 3");
  expect_error([] { glu(doubles({1.0}).reshape({})); }, "glu does not support scalars");

  const Tensor input = doubles({0.0, -1.0, 2.0, -4.0, 1.0, -2.0}).reshape({1, 2, 3});
  EXPECT_EQ(values(prelu(input, doubles({0.25}))),
            (std::vector<double>{0.0, -0.25, 2.0, -1.0, 1.0, -0.5}));
  EXPECT_EQ(values(prelu(input, doubles({0.5, 0.25}))),
            (std::vector<double>{0.0, -0.5, 2.0, -1.0, 1.0, -0.5}));
  expect_error(
      [&] {
        prelu(input, doubles({0.5, 0.25, 1.0}));
      },
      "Found parameter numbers = 3 and channel size = 2.");
  expect_error(
      [] {
        prelu(doubles({1.0, 2.0}), doubles({0.5, 0.25}));
      },
      "Found parameter numbers = 2 and channel size = 1.");
  Tensor v = doubles({0.0, -1.0, 2.0});
  Tensor w = doubles({0.25});
  v.requires_grad_();
  w.requires_grad_();
  prelu(v, w).sum().backward();
  EXPECT_EQ(gradient_of(v), (std::vector<double>{0.25, 0.25, 1.0}));  // at 0: the slope
  EXPECT_EQ(gradient_of(w), (std::vector<double>{-1.0}));
}

TEST(VectorProducts, ShapesValuesAndPyTorchsMessages) {
  EXPECT_EQ(values(dot(doubles({1.0, 2.0, 3.0}), doubles({4.0, 5.0, 6.0})))[0], 32.0);
  EXPECT_EQ(dot(doubles({}), doubles({})).sizes(), Shape{});
  expect_error(
      [] {
        dot(random_tensor({2, 2}, 1), doubles({1.0, 2.0}));
      },
      "1D tensors expected, but got 2D and 1D tensors");
  expect_error([] { dot(doubles({1.0}), doubles({1.0, 2.0})); }, "inconsistent tensor size");
  const Tensor m = doubles({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}).reshape({2, 3});
  EXPECT_EQ(values(mv(m, doubles({1.0, 0.0, -1.0}))), (std::vector<double>{-2.0, -2.0}));
  expect_error([&] { mv(m, m); }, "vector + matrix @ vector expected, got 1, 2, 2");
  EXPECT_EQ(values(outer(doubles({1.0, 2.0}), doubles({3.0, 4.0, 5.0}))),
            (std::vector<double>{3.0, 4.0, 5.0, 6.0, 8.0, 10.0}));
  EXPECT_EQ(outer(int64s({1, 2}), doubles({1.0}).to(Dtype::Float32)).dtype(), Dtype::Float32);
  expect_error([&] { outer(m, doubles({1.0})); }, "outer: Expected 1-D argument self, but got 2-D");
  EXPECT_EQ(values(trace(m))[0], 6.0);
  EXPECT_EQ(trace(int64s({1, 2, 3, 4}).reshape({2, 2}).to(Dtype::Int32)).dtype(), Dtype::Int64);
  expect_error(
      [] {
        trace(random_tensor({2, 2, 2}, 3));
      },
      "trace: expected a matrix, but got tensor with dim 3");

  const Tensor b1 = random_tensor({2, 3, 4}, 4), b2 = random_tensor({2, 4, 5}, 5);
  const Tensor self = random_tensor({5}, 6);
  const std::vector<double> got = values(baddbmm(self, b1, b2, 0.5, 2.0));
  const std::vector<double> want = values(self * 0.5 + bmm(b1, b2) * 2.0);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-14) << i;
  // beta = 0 ignores self: its NaN does not reach the result.
  const Tensor nan_self = doubles({std::nan(""), 1.0, 2.0, 3.0, 4.0});
  for (double e : values(baddbmm(nan_self, b1, b2, 0.0, 1.0))) EXPECT_FALSE(std::isnan(e));
  expect_error(
      [&] {
        baddbmm(self, b1, random_tensor({3, 4, 5}, 7));
      },
      "batch1 and batch2 must have same number of batches, got 2 and 3");
}

TEST(PointwiseOps, GradientsMatchFiniteDifferences) {
  using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
  const std::vector<std::pair<const char*, Fn>> binary_ops = {
      {"logaddexp2",
       [](const std::vector<Tensor>& in) { return std::vector<Tensor>{logaddexp2(in[0], in[1])}; }},
      {"xlogy",
       [](const std::vector<Tensor>& in) { return std::vector<Tensor>{xlogy(in[0], in[1])}; }},
      {"copysign",
       [](const std::vector<Tensor>& in) { return std::vector<Tensor>{copysign(in[0], in[1])}; }},
      {"fmax",
       [](const std::vector<Tensor>& in) { return std::vector<Tensor>{fmax(in[0], in[1])}; }},
      {"fmin",
       [](const std::vector<Tensor>& in) { return std::vector<Tensor>{fmin(in[0], in[1])}; }},
      {"outer",
       [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{outer(in[0].reshape({-1}), in[1])};
       }},
      {"dot",
       [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{dot(in[0].reshape({-1}), repeat(in[1], {2}))};
       }},
  };
  for (const auto& [name, fn] : binary_ops) {
    SCOPED_TRACE(name);
    // y in [0.5, 2] (xlogy's log, copysign's sign away from 0); x in [-2, -0.5] never ties y.
    expect_gradients_match_finite_differences(
        fn, {random_tensor({2, 3}, 11, -2.0, -0.5), random_tensor({3}, 12, 0.5, 2.0)});
  }
  const std::vector<std::pair<const char*, Fn>> others = {
      {"lerp",
       [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{lerp(in[0], in[1], in[2])};
       }},
      {"addcmul",
       [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{addcmul(in[0], in[1], in[2], -0.75)};
       }},
      {"addcdiv",
       [](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{addcdiv(in[0], in[1], in[2], 1.5)};
       }},
  };
  for (const auto& [name, fn] : others) {
    SCOPED_TRACE(name);
    expect_gradients_match_finite_differences(
        fn,
        {random_tensor({2, 3}, 13), random_tensor({3}, 14), random_tensor({2, 1}, 15, 0.5, 2.0)});
  }
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{logit(in[0])}; },
      {random_tensor({2, 3}, 16, 0.1, 0.9)});
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{glu(in[0], 1)}; },
      {random_tensor({2, 4, 3}, 17)});
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{prelu(in[0], in[1])}; },
      {random_tensor({2, 3, 2}, 18, 0.2, 1.0) * doubles({1.0, -1.0}), random_tensor({3}, 19)});
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{mv(in[0], in[1]), trace(in[0].reshape({3, 2}))};
      },
      {random_tensor({2, 3}, 20), random_tensor({3}, 21)});
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{baddbmm(in[0], in[1], in[2], 0.5, -2.0)};
      },
      {random_tensor({3, 1}, 22), random_tensor({2, 3, 4}, 23), random_tensor({2, 4, 2}, 24)});
}

}  // namespace
}  // namespace weft
