// The special functions, paired reductions, adaptive max pools and losses of the nn.functional
// surface: lgamma, digamma (ops/unary.cpp), var_mean, std_mean (ops/reduce.cpp),
// adaptive_max_pool1d/2d (ops/pool.cpp), nll_loss, cross_entropy_loss,
// binary_cross_entropy_with_logits and kl_div (ops/loss.cpp): values against known or
// hand-derived results, PyTorch's conventions (poles, ignore_index, "batchmean") and messages,
// and gradients against finite differences. The op sweep compares each with LibTorch besides.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "expect_error.h"
#include "gradcheck.h"
#include "tensor_literals.h"
#include "weft/ops.h"

namespace weft {
namespace {

using testing::doubles;
using testing::expect_error;
using testing::expect_gradients_match_finite_differences;
using testing::int64s;
using testing::random_tensor;
using testing::values;

Tensor shaped(const Tensor& t, const Shape& shape) {
  return t.reshape(shape).clone();
}

constexpr double kEulerGamma = 0.57721566490153286061;
constexpr double kPi = 3.14159265358979323846;

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want,
                     double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tolerance * std::max(1.0, std::fabs(want[i]))) << "at " << i;
  }
}

TEST(GammaOps, KnownValuesAndPoles) {
  // lgamma(1) = lgamma(2) = 0, lgamma(1/2) = log(sqrt(pi)); lgamma(-1/2) = log(2 sqrt(pi)).
  expect_near_all(
      values(lgamma(doubles({1.0, 2.0, 0.5, -0.5, 10.0}))),
      {0.0, 0.0, 0.5 * std::log(kPi), std::log(2.0 * std::sqrt(kPi)), std::log(362880.0)}, 1e-14);
  // digamma(1) = -gamma, digamma(1/2) = -gamma - 2 ln 2, digamma(x + 1) = digamma(x) + 1/x,
  // and the reflection psi(1 - x) - psi(x) = pi cot(pi x), at x = 1/4: psi(3/4) - psi(1/4) = pi.
  const std::vector<double> psi = values(digamma(doubles({1.0, 0.5, 3.0, 0.25, 0.75, -0.75})));
  EXPECT_NEAR(psi[0], -kEulerGamma, 1e-14);
  EXPECT_NEAR(psi[1], -kEulerGamma - 2.0 * std::log(2.0), 1e-14);
  EXPECT_NEAR(psi[2], -kEulerGamma + 1.0 + 0.5, 1e-14);
  EXPECT_NEAR(psi[4] - psi[3], kPi, 1e-13);
  EXPECT_NEAR(psi[5], psi[3] + 4.0 / 3.0, 1e-13);  // psi(x) = psi(x + 1) - 1/x at x = -3/4
  // The poles: lgamma inf at 0 and the negative integers; digamma -inf at +0, inf at -0, NaN at
  // the negative integers.
  const std::vector<double> at_poles = values(lgamma(doubles({0.0, -1.0, -4.0})));
  for (double v : at_poles) EXPECT_EQ(v, std::numeric_limits<double>::infinity());
  const std::vector<double> psi_poles = values(digamma(doubles({0.0, -0.0, -2.0})));
  EXPECT_EQ(psi_poles[0], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(psi_poles[1], std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(psi_poles[2]));
  // Integers are taken as float32.
  EXPECT_EQ(lgamma(int64s({3})).dtype(), Dtype::Float32);
}

TEST(GammaOps, GradientsAreDigammaAndTrigamma) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{lgamma(in[0]), digamma(in[0])};
      },
      {doubles({0.3, 1.0, 2.5, 7.0, 12.5, -0.4, -2.6})});
  // trigamma(1) = pi^2 / 6, the gradient of digamma at 1.
  Tensor x = doubles({1.0});
  x.requires_grad_();
  digamma(x).sum().backward();
  EXPECT_NEAR(values(x.grad())[0], kPi * kPi / 6.0, 1e-12);
}

TEST(PairedReductions, VarMeanIsVarAndMeanOfTheSameDims) {
  const Tensor x = random_tensor({3, 4, 2}, 7, -2.0, 2.0);
  const auto [v, m] = var_mean(x, {0, 2}, 0, true);
  EXPECT_EQ(values(v), values(var(x, {0, 2}, 0, true)));
  EXPECT_EQ(values(m), values(mean(x, {0, 2}, true)));
  const auto [s, all_mean] = std_mean(x);
  EXPECT_EQ(values(s), values(weft::std(x)));
  EXPECT_EQ(values(all_mean), values(mean(x)));
  expect_error([] { var_mean(int64s({1, 2})); }, "std and var only support floating point");
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        const auto [v1, m1] = var_mean(in[0], {1}, 1, false);
        const auto [s2, m2] = std_mean(in[0], {0}, 0, true);
        return std::vector<Tensor>{v1, m1, s2, m2};
      },
      {random_tensor({3, 4}, 8, -1.0, 1.0)});
}

TEST(AdaptiveMaxPool, WindowsAndTheFirstMaximum) {
  // Length 5 into 3: windows [0, 2), [1, 4), [3, 5).
  const Tensor x = shaped(doubles({1.0, 5.0, 2.0, 5.0, 0.0}), {1, 1, 5});
  EXPECT_EQ(values(adaptive_max_pool1d(x, {3})), (std::vector<double>{5.0, 5.0, 5.0}));
  Tensor leaf = shaped(doubles({1.0, 5.0, 2.0, 5.0, 0.0}), {1, 1, 5});
  leaf.requires_grad_();
  adaptive_max_pool1d(leaf, {3}).sum().backward();
  // The first maximum of each window takes its gradient: index 1 (twice), then index 3.
  EXPECT_EQ(values(leaf.grad()), (std::vector<double>{0.0, 2.0, 0.0, 1.0, 0.0}));
  // 2-D: a 4x4 plane into 2x2 is max_pool2d with kernel 2.
  const Tensor plane = random_tensor({2, 4, 4}, 9, -1.0, 1.0);
  EXPECT_EQ(values(adaptive_max_pool2d(plane, {2, 2})), values(max_pool2d(plane, {2, 2})));
  expect_error(
      [] {
        adaptive_max_pool2d(shaped(doubles({1.0}), {1, 1}), {1, 1});
      },
      "Expected 3D or 4D tensor");
  expect_error(
      [] {
        adaptive_max_pool1d(random_tensor({1, 0, 3}, 1, 0.0, 1.0), {2});
      },
      "non-zero size for non-batch dimensions");
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{adaptive_max_pool2d(in[0], {2, 3}),
                                   adaptive_max_pool1d(in[0].flatten(2), {4})};
      },
      {random_tensor({1, 2, 5, 4}, 10, -1.0, 1.0)});
}

TEST(ClassificationLosses, PickTheTargetsScoresAndSkipTheIgnoredClass) {
  const Tensor scores = shaped(doubles({-1.0, -2.0, -3.0, -0.5, -1.5, -2.5}), {2, 3});
  EXPECT_EQ(values(nll_loss(scores, int64s({2, 0}), "none")), (std::vector<double>{3.0, 0.5}));
  EXPECT_EQ(values(nll_loss(scores, int64s({2, 0}), "sum")), (std::vector<double>{3.5}));
  // An ignored target adds nothing and is not counted by "mean".
  EXPECT_EQ(values(nll_loss(scores, int64s({2, 1}), "mean", 1)), (std::vector<double>{3.0}));
  // Every target ignored: 0 / 0, and no gradient.
  Tensor leaf = scores.clone();
  leaf.requires_grad_();
  const Tensor nothing = nll_loss(leaf, int64s({1, 1}), "mean", 1);
  EXPECT_TRUE(std::isnan(values(nothing)[0]));
  nothing.backward();
  EXPECT_EQ(values(leaf.grad()), std::vector<double>(6, 0.0));
  // [C] with a 0-d target, and [N, C, d] with [N, d].
  EXPECT_EQ(values(nll_loss(doubles({-1.0, -4.0}), shaped(int64s({1}), {}))),
            (std::vector<double>{4.0}));
  EXPECT_EQ(values(nll_loss(shaped(doubles({1.0, 2.0, 3.0, 4.0}), {1, 2, 2}),
                            shaped(int64s({1, 0}), {1, 2}), "none")),
            (std::vector<double>{-3.0, -2.0}));
  expect_error([&] { nll_loss(scores, int64s({3, 0})); }, "Target 3 is out of bounds.");
  expect_error(
      [&] {
        nll_loss(scores, int64s({0, 0, 0}));
      },
      "Expected input batch_size (2) to match target batch_size (3).");
  expect_error(
      [&] {
        nll_loss(scores, doubles({0.0, 1.0}));
      },
      "expected scalar type Long but found Double");
}

TEST(ClassificationLosses, CrossEntropyIsNllOfLogSoftmaxWithLabelSmoothing) {
  const Tensor logits = random_tensor({3, 4}, 11, -2.0, 2.0);
  const Tensor target = int64s({3, 0, 2});
  EXPECT_EQ(values(cross_entropy_loss(logits, target)),
            values(nll_loss(log_softmax(logits, 1), target)));
  // eps = 0.2 over 4 classes: 0.8 nll + 0.05 * (-sum of each row's log-probabilities), here with
  // "sum" and the target 0 ignored.
  const Tensor log_p = log_softmax(logits, 1);
  const std::vector<double> lp = values(log_p);
  const double nll = -lp[0 * 4 + 3] - lp[2 * 4 + 2];
  double smooth = 0;
  for (int row : {0, 2}) {
    for (int c = 0; c < 4; ++c) smooth -= lp[static_cast<std::size_t>(row * 4 + c)];
  }
  EXPECT_NEAR(values(cross_entropy_loss(logits, target, "sum", 0, 0.2))[0],
              0.8 * nll + 0.05 * smooth, 1e-12);
  expect_error([&] { cross_entropy_loss(logits, target, "mean", -100, 1.5); },
               "label_smoothing must be between 0.0 and 1.0");
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{
            cross_entropy_loss(in[0], shaped(int64s({1, 0, 2, 1}), {2, 2}), "mean", 2, 0.3),
            nll_loss(in[0], shaped(int64s({0, 2, 1, 1}), {2, 2}), "none")};
      },
      {random_tensor({2, 3, 2}, 12, -1.0, 1.0)});
}

TEST(Divergences, BinaryCrossEntropyWithLogitsAndKlDiv) {
  // x = 0: log 2 whatever the target; large logits stay finite.
  expect_near_all(values(binary_cross_entropy_with_logits(doubles({0.0, 100.0, -100.0}),
                                                          doubles({0.3, 1.0, 1.0}), "none")),
                  {std::log(2.0), 0.0, 100.0}, 1e-12);
  // kl_div: t (log t - x); with log_target exp(t) (t - x); batchmean divides the sum by N.
  const Tensor x = shaped(doubles({-1.0, -2.0, -0.5, -1.5}), {2, 2});
  const Tensor t = shaped(doubles({0.5, 0.25, 1.0, 0.1}), {2, 2});
  std::vector<double> want;
  for (std::size_t i = 0; i < 4; ++i) {
    want.push_back(values(t)[i] * (std::log(values(t)[i]) - values(x)[i]));
  }
  expect_near_all(values(kl_div(x, t, "none")), want, 1e-14);
  EXPECT_NEAR(values(kl_div(x, t, "batchmean"))[0], (want[0] + want[1] + want[2] + want[3]) / 2,
              1e-14);
  expect_near_all(
      values(kl_div(x, t, "none", true)),
      {std::exp(0.5) * 1.5, std::exp(0.25) * 2.25, std::exp(1.0) * 1.5, std::exp(0.1) * 1.6},
      1e-14);
  expect_error([] { kl_div(int64s({1}), doubles({1.0})); }, "not implemented for 'Long'");
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{binary_cross_entropy_with_logits(in[0], in[1], "mean"),
                                   kl_div(in[0], in[1], "sum"),
                                   kl_div(in[0], in[1], "batchmean", true)};
      },
      {random_tensor({2, 3}, 13, -2.0, 2.0), random_tensor({2, 3}, 14, 0.2, 0.9)});
}

}  // namespace
}  // namespace weft
