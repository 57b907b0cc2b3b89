// nn::init: gains, fan computation, bounds and empirical moments of every initialiser on a large
// tensor, PyTorch's error messages, and that the default layers draw in PyTorch's order.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "expect_error.h"
#include "weft/autograd.h"
#include "weft/nn/conv.h"
#include "weft/nn/init.h"
#include "weft/nn/linear.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft {
namespace {

namespace init = nn::init;
using Fans = std::pair<std::int64_t, std::int64_t>;
using testing::expect_error;

struct Moments {
  double mean = 0;
  double std = 0;
  double min = 0;
  double max = 0;
};

Moments moments_of(const Tensor& t) {
  const std::vector<double> v = t.to_vector<double>();
  Moments m{0, 0, v.at(0), v.at(0)};
  for (double x : v) {
    m.mean += x;
    m.min = std::min(m.min, x);
    m.max = std::max(m.max, x);
  }
  m.mean /= static_cast<double>(v.size());
  for (double x : v) m.std += (x - m.mean) * (x - m.mean);
  m.std = std::sqrt(m.std / static_cast<double>(v.size() - 1));
  return m;
}

// 40000 draws: the sample mean is within 0.02·std and the sample std within 2% (> 4 sigma).
constexpr double kMomentTol = 0.02;

TEST(NnInit, CalculateGainMatchesPyTorchTable) {
  for (const char* linear : {"linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                             "conv_transpose2d", "conv_transpose3d", "sigmoid"}) {
    EXPECT_EQ(init::calculate_gain(linear), 1.0) << linear;
  }
  EXPECT_DOUBLE_EQ(init::calculate_gain("tanh"), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain("relu"), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu"), std::sqrt(2.0 / (1 + 0.01 * 0.01)));
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu", 0.2), std::sqrt(2.0 / 1.04));
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu", std::sqrt(5.0)), std::sqrt(1.0 / 3.0));
  EXPECT_DOUBLE_EQ(init::calculate_gain("selu"), 0.75);
  expect_error([] { init::calculate_gain("swish"); }, "Unsupported nonlinearity swish");
}

TEST(NnInit, FansCountTheReceptiveField) {
  EXPECT_EQ(init::calculate_fan_in_and_fan_out(zeros({5, 3})), Fans(3, 5));
  EXPECT_EQ(init::calculate_fan_in_and_fan_out(zeros({8, 4, 3, 2})), Fans(24, 48));
  EXPECT_EQ(init::calculate_fan_in_and_fan_out(zeros({6, 2, 5})), Fans(10, 30));
  for (const auto& shape : {Shape{}, Shape{7}}) {
    expect_error([&] { init::calculate_fan_in_and_fan_out(zeros(shape)); },
                 "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
    expect_error([&] { init::kaiming_uniform_(zeros(shape)); }, "fewer than 2 dimensions");
    expect_error([&] { init::xavier_normal_(zeros(shape)); }, "fewer than 2 dimensions");
  }
}

TEST(NnInit, UniformAndNormalHaveTheirMoments) {
  manual_seed(1);
  Tensor t = empty({200, 200});
  init::uniform_(t, -1.0, 3.0);
  Moments m = moments_of(t);
  EXPECT_GE(m.min, -1.0);
  EXPECT_LT(m.max, 3.0);
  EXPECT_NEAR(m.mean, 1.0, kMomentTol * 4 / std::sqrt(12.0));
  EXPECT_NEAR(m.std, 4 / std::sqrt(12.0), kMomentTol * 4 / std::sqrt(12.0));
  init::normal_(t, 2.0, 0.5);
  m = moments_of(t);
  EXPECT_NEAR(m.mean, 2.0, kMomentTol * 0.5);
  EXPECT_NEAR(m.std, 0.5, kMomentTol * 0.5);
}

TEST(NnInit, TruncNormalStaysInBoundsWithTruncatedMoments) {
  manual_seed(2);
  Tensor t = empty({200, 200}, dtype(Dtype::Float64));
  init::trunc_normal_(t);
  Moments m = moments_of(t);
  EXPECT_GE(m.min, -2.0);
  EXPECT_LE(m.max, 2.0);
  // N(0, 1) truncated to [-2, 2]: std = sqrt(1 - 2·2·φ(2) / (Φ(2) − Φ(−2))) ≈ 0.8796.
  EXPECT_NEAR(m.mean, 0.0, kMomentTol);
  EXPECT_NEAR(m.std, 0.8796, kMomentTol * 0.88);
  init::trunc_normal_(t, 1.0, 2.0, 0.0, 10.0);
  m = moments_of(t);
  EXPECT_GE(m.min, 0.0);
  EXPECT_LE(m.max, 10.0);
  // Lower-truncated at one std below the mean: mean = 1 + 2·φ(−0.5) / (1 − Φ(−0.5)) ≈ 2.0197.
  EXPECT_NEAR(m.mean, 2.0197, 0.03);
}

TEST(NnInit, ConstantOnesZerosEyeFillExactly) {
  Tensor t = empty({3, 4});
  init::constant_(t, 2.5);
  EXPECT_EQ(t.to_vector<double>(), std::vector<double>(12, 2.5));
  init::ones_(t);
  EXPECT_EQ(t.to_vector<double>(), std::vector<double>(12, 1.0));
  init::zeros_(t);
  EXPECT_EQ(t.to_vector<double>(), std::vector<double>(12, 0.0));
  init::eye_(t);
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}));
  expect_error(
      [] {
        init::eye_(zeros({2, 2, 2}));
      },
      "Only tensors with 2 dimensions are supported");
}

TEST(NnInit, XavierUsesFanInPlusFanOut) {
  manual_seed(3);
  Tensor t = empty({100, 40, 2, 5});  // fan_in 400, fan_out 1000
  const double std = 1.5 * std::sqrt(2.0 / 1400.0);
  init::xavier_uniform_(t, 1.5);
  Moments m = moments_of(t);
  EXPECT_LE(std::max(-m.min, m.max), std::sqrt(3.0) * std);
  EXPECT_GT(std::max(-m.min, m.max), 0.99 * std::sqrt(3.0) * std);
  EXPECT_NEAR(m.std, std, kMomentTol * std);
  init::xavier_normal_(t, 1.5);
  m = moments_of(t);
  EXPECT_NEAR(m.mean, 0.0, kMomentTol * std);
  EXPECT_NEAR(m.std, std, kMomentTol * std);
}

TEST(NnInit, KaimingUsesGainOverSqrtFan) {
  manual_seed(4);
  Tensor t = empty({250, 160});  // fan_in 160, fan_out 250
  init::kaiming_uniform_(t);     // leaky_relu with a = 0: gain √2
  double std = std::sqrt(2.0) / std::sqrt(160.0);
  Moments m = moments_of(t);
  EXPECT_LE(std::max(-m.min, m.max), std::sqrt(3.0) * std);
  EXPECT_GT(std::max(-m.min, m.max), 0.99 * std::sqrt(3.0) * std);
  EXPECT_NEAR(m.std, std, kMomentTol * std);
  init::kaiming_uniform_(t, std::sqrt(5.0));  // Linear's default: U(±1/√fan_in)
  m = moments_of(t);
  EXPECT_LE(std::max(-m.min, m.max), 1.0 / std::sqrt(160.0));
  init::kaiming_normal_(t, 0.0, "fan_out", "relu");
  std = std::sqrt(2.0) / std::sqrt(250.0);
  m = moments_of(t);
  EXPECT_NEAR(m.mean, 0.0, kMomentTol * std);
  EXPECT_NEAR(m.std, std, kMomentTol * std);
  init::kaiming_normal_(t, 0.0, "fan_in", "tanh");
  std = 5.0 / 3.0 / std::sqrt(160.0);
  EXPECT_NEAR(moments_of(t).std, std, kMomentTol * std);
  expect_error([&] { init::kaiming_uniform_(t, 0.0, "fan_avg"); },
               "Mode fan_avg not supported, please use one of fan_in, fan_out");
  expect_error([&] { init::kaiming_normal_(t, 0.0, "fan_in", "gelu"); },
               "Unsupported nonlinearity gelu");
}

TEST(NnInit, KaimingOnZeroElementTensorIsANoOp) {
  Tensor t = empty({0, 3});
  init::kaiming_uniform_(t);
  init::kaiming_normal_(t);
  EXPECT_EQ(t.numel(), 0);
}

TEST(NnInit, OrthogonalGivesOrthonormalRowsOrColumns) {
  manual_seed(5);
  for (const Shape& shape : {Shape{6, 4}, Shape{3, 7}, Shape{4, 2, 3}}) {
    Tensor t = empty(shape, dtype(Dtype::Float64));
    init::orthogonal_(t, 2.0);
    const Tensor w = t.reshape({shape[0], -1});
    const bool tall = w.size(0) >= w.size(1);
    const Tensor gram = tall ? matmul(w.t(), w) : matmul(w, w.t());
    const std::int64_t n = gram.size(0);
    const std::vector<double> g = gram.to_vector<double>();
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        EXPECT_NEAR(g[static_cast<std::size_t>(i * n + j)], i == j ? 4.0 : 0.0, 1e-10);
      }
    }
  }
  expect_error([] { init::orthogonal_(zeros({3})); },
               "Only tensors with 2 or more dimensions are supported");
}

TEST(NnInit, InitialisersWorkOnParametersWithoutRecordingHistory) {
  Tensor p = empty({4, 4});
  p.requires_grad_(true);
  init::xavier_uniform_(p);
  init::normal_(p);
  init::zeros_(p);
  init::orthogonal_(p);
  EXPECT_TRUE(p.is_leaf());
  EXPECT_EQ(p.grad_fn(), nullptr);
  EXPECT_TRUE(autograd::grad_enabled());
}

TEST(NnInit, DrawsAreReproducibleAfterManualSeed) {
  Tensor a = empty({5, 5}), b = empty({5, 5});
  manual_seed(9);
  init::kaiming_normal_(a);
  manual_seed(9);
  init::kaiming_normal_(b);
  EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>());
}

TEST(NnInit, LinearAndConvDrawWeightThenBiasLikePyTorch) {
  manual_seed(11);
  nn::Linear lin(6, 3);
  manual_seed(11);
  Tensor w = empty({3, 6}), b = empty({3});
  init::kaiming_uniform_(w, std::sqrt(5.0));
  init::uniform_(b, -1 / std::sqrt(6.0), 1 / std::sqrt(6.0));
  EXPECT_EQ(lin.weight.to_vector<double>(), w.to_vector<double>());
  EXPECT_EQ(lin.bias.to_vector<double>(), b.to_vector<double>());

  manual_seed(12);
  nn::Conv2d conv(2, 4, 3);
  manual_seed(12);
  Tensor cw = empty({4, 2, 3, 3}), cb = empty({4});
  init::kaiming_uniform_(cw, std::sqrt(5.0));
  init::uniform_(cb, -1 / std::sqrt(18.0), 1 / std::sqrt(18.0));
  EXPECT_EQ(conv.weight.to_vector<double>(), cw.to_vector<double>());
  EXPECT_EQ(conv.bias.to_vector<double>(), cb.to_vector<double>());
}

}  // namespace
}  // namespace weft
