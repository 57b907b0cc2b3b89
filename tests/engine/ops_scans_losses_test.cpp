// The scans, writes, pixel reorderings and losses added for the Core ATen opset: cummax,
// cummin, logcumsumexp (ops/scan.cpp), scatter (ops/scatter_reduce.cpp), pixel_shuffle and
// pixel_unshuffle (ops/reorder.cpp), mse_loss, l1_loss, smooth_l1_loss and huber_loss
// (ops/loss.cpp): values against hand-derived results, PyTorch's conventions (the last index
// of a tie, a NaN that stays, the reductions) and messages, and gradients against finite
// differences. The op sweep compares each with LibTorch besides.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
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

std::vector<std::int64_t> indices(const Tensor& t) {
  return t.to_vector<std::int64_t>();
}

TEST(ScanOps, CummaxNamesTheLastOfATieAndKeepsANaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto [v, i] = cummax(doubles({1.0, 3.0, 3.0, 2.0, nan, 5.0}), 0);
  const std::vector<double> got = values(v);
  EXPECT_EQ(std::vector<double>(got.begin(), got.begin() + 4),
            (std::vector<double>{1.0, 3.0, 3.0, 3.0}));
  EXPECT_TRUE(std::isnan(got[4]) && std::isnan(got[5]));
  EXPECT_EQ(indices(i), (std::vector<std::int64_t>{0, 1, 2, 2, 4, 4}));
  const auto [mv, mi] = cummin(int64s({4, 2, 5, 2, 1}), 0);
  EXPECT_EQ(mv.dtype(), Dtype::Int64);
  EXPECT_EQ(indices(mv), (std::vector<std::int64_t>{4, 2, 2, 2, 1}));
  EXPECT_EQ(indices(mi), (std::vector<std::int64_t>{0, 1, 1, 3, 4}));
}

TEST(ScanOps, CummaxGradientGoesToTheElementsItsIndicesName) {
  Tensor x = doubles({1.0, 3.0, 2.0, 4.0, 0.0}).reshape({1, 5});
  x.requires_grad_();
  std::get<0>(cummax(x, 1)).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{1.0, 2.0, 0.0, 2.0, 0.0}));
  for (bool largest : {true, false}) {
    SCOPED_TRACE(largest ? "cummax" : "cummin");
    expect_gradients_match_finite_differences(
        [largest](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{std::get<0>(largest ? cummax(in[0], -2) : cummin(in[0], 0))};
        },
        {random_tensor({4, 3}, 31)});
  }
}

TEST(ScanOps, LogcumsumexpIsStableForLargeValuesAndDifferentiable) {
  const std::vector<double> big = values(logcumsumexp(doubles({1000.0, 1000.0, 998.0}), 0));
  EXPECT_DOUBLE_EQ(big[0], 1000.0);
  EXPECT_DOUBLE_EQ(big[1], 1000.0 + std::log(2.0));
  EXPECT_NEAR(big[2], 1000.0 + std::log(2.0 + std::exp(-2.0)), 1e-10);
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> with_inf = values(logcumsumexp(doubles({-inf, -inf, 0.0}), 0));
  EXPECT_EQ(with_inf[0], -inf);
  EXPECT_EQ(with_inf[1], -inf);
  EXPECT_EQ(with_inf[2], 0.0);
  Tensor x = doubles({0.0, 0.0});
  x.requires_grad_();
  logcumsumexp(x, 0).sum().backward();
  // out = [0, log 2]: d out0/dx0 = 1, d out1/dx_k = 1/2.
  EXPECT_NEAR(values(x.grad())[0], 1.5, 1e-15);
  EXPECT_NEAR(values(x.grad())[1], 0.5, 1e-15);
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{logcumsumexp(in[0], 1)}; },
      {random_tensor({2, 4}, 32, -3.0, 3.0)});
  expect_error([] { logcumsumexp(int64s({1, 2}), 0); }, "not implemented for 'Long'");
}

TEST(ScatterOps, ScatterWritesSrcAndItsGradientSkipsTheOverwrittenSelf) {
  Tensor self = doubles({1, 2, 3, 4, 5, 6}).reshape({2, 3});
  Tensor src = doubles({10, 20, 30}).reshape({1, 3});
  self.requires_grad_();
  src.requires_grad_();
  const Tensor index = int64s({1, 0, 1}).reshape({1, 3});
  const Tensor out = scatter(self, 0, index, src);
  EXPECT_EQ(values(out), (std::vector<double>{1, 20, 3, 10, 5, 30}));
  mul(out, doubles({1, 2, 3, 4, 5, 6}).reshape({2, 3})).sum().backward();
  EXPECT_EQ(values(self.grad()), (std::vector<double>{1, 0, 3, 0, 5, 0}));
  EXPECT_EQ(values(src.grad()), (std::vector<double>{4, 2, 6}));
  expect_error(
      [&] {
        scatter(self, 0, int64s({2, 0, 0}).reshape({1, 3}), src);
      },
      "index 2 is out of bounds for dimension 0 with size 2");
  expect_gradients_match_finite_differences(
      [index](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{scatter(in[0], 0, index, in[1])};
      },
      {random_tensor({2, 3}, 33), random_tensor({1, 3}, 34)});
}

TEST(ReorderOps, PixelShuffleMovesChannelsIntoBlocksAndUnshuffleUndoesIt) {
  Tensor x = doubles({0, 1, 2, 3, 4, 5, 6, 7}).reshape({1, 8, 1, 1});
  const Tensor up = pixel_shuffle(x, 2);
  EXPECT_EQ(up.sizes(), (Shape{1, 2, 2, 2}));
  // Channel c * 4 + i * 2 + j goes to pixel (i, j) of channel c.
  EXPECT_EQ(values(up), (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7}));
  const Tensor y = random_tensor({2, 3, 18, 4, 6}, 35);
  EXPECT_EQ(values(pixel_shuffle(pixel_unshuffle(y, 2), 2)), values(y));
  EXPECT_EQ(pixel_unshuffle(y, 2).sizes(), (Shape{2, 3, 72, 2, 3}));
  const Tensor wide = random_tensor({1, 1, 2, 4}, 36);
  const std::vector<double> w = values(wide), down = values(pixel_unshuffle(wide, 2));
  // Output channel i * 2 + j holds the pixels at (2h + i, 2w + j).
  EXPECT_EQ(down, (std::vector<double>{w[0], w[2], w[1], w[3], w[4], w[6], w[5], w[7]}));
  expect_error(
      [] {
        pixel_shuffle(random_tensor({1, 6, 2, 2}, 37), 2);
      },
      "input.size(-3)=6 is not divisible by 4");
  expect_error(
      [] {
        pixel_unshuffle(random_tensor({1, 1, 3, 2}, 38), 2);
      },
      "input.size(-2)=3 is not divisible by 2");
  expect_error([] { pixel_shuffle(random_tensor({4, 2}, 39), 2); }, "at least 3 dimensions");
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{pixel_shuffle(in[0], 2), pixel_unshuffle(in[0], 2)};
      },
      {random_tensor({1, 4, 2, 2}, 40)});
}

TEST(LossOps, ReductionsAndThePiecewiseBranches) {
  const Tensor x = doubles({0.0, 1.0, -2.0, 3.0});
  const Tensor t = doubles({0.5, 1.0, 1.0, 0.0});  // d = -0.5, 0, -3, 3
  EXPECT_EQ(values(mse_loss(x, t, "none")), (std::vector<double>{0.25, 0, 9, 9}));
  EXPECT_EQ(values(mse_loss(x, t)), (std::vector<double>{18.25 / 4}));
  EXPECT_EQ(values(l1_loss(x, t, "sum")), (std::vector<double>{6.5}));
  // smooth_l1 with beta 1: 0.5 d^2 inside, |d| - 0.5 outside; huber with delta 1 the same.
  EXPECT_EQ(values(smooth_l1_loss(x, t, "none", 1.0)), (std::vector<double>{0.125, 0, 2.5, 2.5}));
  EXPECT_EQ(values(huber_loss(x, t, "none", 2.0)), (std::vector<double>{0.125, 0, 4.0, 4.0}));
  EXPECT_EQ(values(smooth_l1_loss(x, t, "none", 2.0)), (std::vector<double>{0.0625, 0, 2.0, 2.0}));
  EXPECT_EQ(values(smooth_l1_loss(x, t, "sum", 0.0)), values(l1_loss(x, t, "sum")));
  EXPECT_TRUE(std::isnan(values(mse_loss(doubles({}), doubles({})))[0]));
  expect_error([&] { huber_loss(x, t, "mean", 0.0); }, "non-positive values for delta");
  expect_error([&] { smooth_l1_loss(x, t, "mean", -1.0); }, "negative values for beta");
  expect_error([&] { mse_loss(x, t, "average"); }, "average is not a valid value for reduction");
  expect_error([] { l1_loss(int64s({1}), int64s({2})); }, "not implemented for 'Long'");
}

TEST(LossOps, GradientsReachSelfAndTarget) {
  Tensor x = doubles({0.0, -2.0, 3.0});
  Tensor t = doubles({0.5, 1.0, 0.0});
  x.requires_grad_();
  t.requires_grad_();
  l1_loss(x, t, "sum").backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{-1, -1, 1}));
  EXPECT_EQ(values(t.grad()), (std::vector<double>{1, 1, -1}));
  using Loss = Tensor (*)(const Tensor&, const Tensor&, std::string_view, double);
  const std::vector<std::pair<const char*, Loss>> piecewise = {{"smooth_l1", smooth_l1_loss},
                                                               {"huber", huber_loss}};
  for (const auto& [name, loss] : piecewise) {
    SCOPED_TRACE(name);
    // |d| mostly away from 0.8 (the bound) and from 0.
    expect_gradients_match_finite_differences(
        [loss = loss](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{loss(in[0], in[1], "none", 0.8),
                                     loss(in[0], in[1], "mean", 0.8)};
        },
        {doubles({0.1, -0.5, 2.0, -1.5}), doubles({-0.2, 0.1, 0.3, 1.0})});
  }
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{mse_loss(in[0], in[1], "sum"), l1_loss(in[0], in[1], "mean")};
      },
      {random_tensor({2, 3}, 41, 0.5, 1.0), random_tensor({2, 3}, 42, -1.0, 0.0)});
}

}  // namespace
}  // namespace weft
