// The random draws (ops/random.cpp): the dropouts, rrelu and the samplers draw from their seed
// alone (the same numbers twice, others for another seed), with the distribution PyTorch's ops
// have (checked on many draws: fractions, means and variances), PyTorch's semantics where nothing
// is drawn (evaluation mode, p = 0 and p = 1), its messages, and gradients against finite
// differences with the draws fixed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
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
using testing::random_tensor;
using testing::values;

double mean_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double variance_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double total = 0;
  for (double x : v) total += (x - m) * (x - m);
  return total / static_cast<double>(v.size());
}

TEST(RandomOps, DropoutKeepsOneMinusPScaledAndRepeatsUnderItsSeed) {
  const Tensor x = ones({100, 100}, dtype(Dtype::Float64));
  const std::vector<double> out = values(dropout(x, 0.3, true, 42));
  const double kept = static_cast<double>(std::count(out.begin(), out.end(), 1.0 / 0.7));
  EXPECT_EQ(kept + static_cast<double>(std::count(out.begin(), out.end(), 0.0)), 10000.0);
  EXPECT_NEAR(kept / 10000.0, 0.7, 0.02);
  EXPECT_EQ(values(dropout(x, 0.3, true, 42)), out);
  EXPECT_NE(values(dropout(x, 0.3, true, 43)), out);
  // No draw: evaluation mode and p = 0 return the input itself, p = 1 zeros (NaN stays NaN).
  EXPECT_TRUE(dropout(x, 0.3, false, 42).is_same(x));
  EXPECT_TRUE(dropout(x, 0.0, true, 42).is_same(x));
  EXPECT_TRUE(std::isnan(values(dropout(doubles({NAN, 1.0}), 1.0, true, 1))[0]));
  expect_error([&] { dropout(x, 1.5, true, 1); },
               "dropout probability has to be between 0 and 1, but got 1.5");
}

TEST(RandomOps, FeatureDropoutDropsWholeChannels) {
  const Tensor x = random_tensor({8, 16, 3, 2}, 1, 0.5, 1.5);
  const std::vector<double> in = values(x);
  const std::vector<double> out = values(feature_dropout(x, 0.5, true, 9));
  int dropped = 0;
  for (std::size_t channel = 0; channel < 8 * 16; ++channel) {
    const bool zero = out[channel * 6] == 0.0;
    dropped += zero ? 1 : 0;
    for (std::size_t k = channel * 6; k < channel * 6 + 6; ++k) {
      EXPECT_NEAR(out[k], zero ? 0.0 : in[k] * 2.0, 1e-12) << k;
    }
  }
  EXPECT_GT(dropped, 40);
  EXPECT_LT(dropped, 88);
  expect_error(
      [&] {
        feature_dropout(doubles({1.0, 2.0}), 0.5, true, 1);
      },
      "Feature dropout requires at least 2 dimensions in the input");
}

TEST(RandomOps, AlphaDropoutKeepsMeanAndVarianceOfANormalInput) {
  const Tensor x = randn_like(zeros({200, 100}, dtype(Dtype::Float64)), 5);
  const std::vector<double> out = values(alpha_dropout(x, 0.2, true, 6));
  EXPECT_NEAR(mean_of(out), 0.0, 0.05);
  EXPECT_NEAR(variance_of(out), 1.0, 0.08);
  // Dropped elements all take one value: SELU's saturation through the affine map.
  const double alpha = 1.7580993408473766;
  const double a = 1.0 / std::sqrt((alpha * alpha * 0.2 + 1.0) * 0.8);
  const double dropped_value = alpha * a * (0.2 - 1.0);
  const auto dropped = std::count_if(out.begin(), out.end(),
                                     [&](double v) { return std::abs(v - dropped_value) < 1e-12; });
  EXPECT_NEAR(static_cast<double>(dropped) / 20000.0, 0.2, 0.02);
  const Tensor y = random_tensor({4, 3, 2}, 3);
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{alpha_dropout(in[0], 0.3, true, 4),
                                   feature_alpha_dropout(in[0], 0.4, true, 5)};
      },
      {y});
}

TEST(RandomOps, RreluDrawsSlopesBelowZeroAndTheirGradient) {
  const Tensor x = random_tensor({50, 40}, 7);
  const std::vector<double> in = values(x);
  const std::vector<double> out = values(rrelu(x, 0.1, 0.3, true, 8));
  std::vector<double> slopes;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] > 0) {
      EXPECT_EQ(out[i], in[i]);
    } else if (in[i] < 0) {
      slopes.push_back(out[i] / in[i]);
    }
  }
  ASSERT_GT(slopes.size(), 500u);
  EXPECT_GE(*std::min_element(slopes.begin(), slopes.end()), 0.1 - 1e-12);
  EXPECT_LE(*std::max_element(slopes.begin(), slopes.end()), 0.3 + 1e-12);
  EXPECT_NEAR(mean_of(slopes), 0.2, 0.01);
  // Evaluation: leaky_relu with the mean slope.
  EXPECT_EQ(values(rrelu(doubles({-2.0, 3.0}), 0.1, 0.3, false, 8)),
            (std::vector<double>{-0.4, 3.0}));
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& v) {
        return std::vector<Tensor>{rrelu(v[0], 0.1, 0.3, true, 2)};
      },
      {doubles({-0.9, 0.4, -0.3, 0.8, -0.6})});
  expect_error([&] { rrelu(x, 0.4, 0.3, true, 1); },
               "Lower bound should be less than or equal to the upper bound");
}

TEST(RandomOps, UniformAndNormalDrawsHaveTheirMoments) {
  for (Dtype type : {Dtype::Float64, Dtype::Float32, Dtype::Float16, Dtype::BFloat16}) {
    const Tensor like = zeros({100, 100}, dtype(type));
    const Tensor u = rand_like(like, 11);
    EXPECT_EQ(u.dtype(), type);
    const std::vector<double> uv = values(u);
    EXPECT_LT(*std::max_element(uv.begin(), uv.end()), 1.0) << dtype_name(type);
    EXPECT_GE(*std::min_element(uv.begin(), uv.end()), 0.0) << dtype_name(type);
    EXPECT_NEAR(mean_of(uv), 0.5, 0.01) << dtype_name(type);
    EXPECT_NEAR(variance_of(uv), 1.0 / 12, 0.005) << dtype_name(type);
    const std::vector<double> nv = values(randn_like(like, 12));
    EXPECT_NEAR(mean_of(nv), 0.0, 0.03) << dtype_name(type);
    EXPECT_NEAR(variance_of(nv), 1.0, 0.05) << dtype_name(type);
  }
  // The factory forms draw the same numbers; the seed decides them.
  const Tensor like = zeros({3, 4});
  EXPECT_EQ(values(rand(like, 3)), values(rand_like(like, 3)));
  EXPECT_EQ(values(randn(like, 3)), values(randn_like(like, 3)));
  EXPECT_NE(values(rand(like, 3)), values(rand(like, 4)));
  expect_error([] { rand_like(zeros({2}, dtype(Dtype::Int64)), 1); },
               "\"check_uniform_bounds\" not implemented for 'Long'");
}

TEST(RandomOps, RandintBernoulliAndRandpermDrawWhatTheyMay) {
  const std::vector<double> ints =
      values(randint_like(zeros({1000}, dtype(Dtype::Int64)), 2, 6, 13));
  for (double v : ints) EXPECT_TRUE(v >= 2 && v < 6 && v == std::floor(v)) << v;
  for (int k = 2; k < 6; ++k) EXPECT_GT(std::count(ints.begin(), ints.end(), k), 180) << k;
  expect_error([] { randint_like(zeros({2}), 3, 3, 1); },
               "random_ expects 'from' to be less than 'to', but got from=3 >= to=3");

  const std::vector<double> coin = values(bernoulli(full({10000}, 0.25), 14));
  EXPECT_EQ(std::count(coin.begin(), coin.end(), 0.0) + std::count(coin.begin(), coin.end(), 1.0),
            10000);
  EXPECT_NEAR(mean_of(coin), 0.25, 0.015);
  EXPECT_EQ(values(bernoulli(doubles({0.0, 1.0, 1.0, 0.0}), 15)),
            (std::vector<double>{0.0, 1.0, 1.0, 0.0}));
  EXPECT_NEAR(mean_of(values(bernoulli(zeros({10000}), 0.6, 16))), 0.6, 0.015);
  expect_error(
      [] {
        bernoulli(doubles({0.5, 1.5}), 1);
      },
      "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
  expect_error([] { bernoulli(zeros({2}), 1.5, 1); }, "bernoulli_ expects p to be in [0, 1]");
  // The derivative of bernoulli's probabilities is zero.
  Tensor p = full({3}, 0.5, dtype(Dtype::Float64));
  p.requires_grad_(true);
  sum(bernoulli(p, 2)).backward();
  EXPECT_EQ(values(p.grad()), (std::vector<double>{0.0, 0.0, 0.0}));

  std::vector<double> perm = values(randperm(50, 17));
  EXPECT_NE(perm, values(randperm(50, 18)));
  std::sort(perm.begin(), perm.end());
  for (std::size_t i = 0; i < perm.size(); ++i) EXPECT_EQ(perm[i], static_cast<double>(i));
  EXPECT_EQ(randperm(zeros({3, 0}), 1, 1).sizes(), (Shape{0}));
  EXPECT_EQ(randperm(zeros({3, 5}), -1, 1).dtype(), Dtype::Int64);
  expect_error([] { randperm(-1, 1); }, "n must be non-negative");
}

}  // namespace
}  // namespace weft
