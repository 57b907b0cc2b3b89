// Pooling against direct-loop references in double precision, PyTorch's window rules.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "expect_error.h"
#include "gradcheck.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {
namespace {

using testing::expect_error;

using testing::expect_gradients_match_finite_differences;
using testing::random_tensor;

struct P2 {
  std::int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool ceil;
};

// Output length: windows of effective size d(k-1)+1 at stride s over in + 2p; with ceil_mode
// a partial last window counts if it starts inside the input or the left padding.
std::int64_t out_len(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p,
                     std::int64_t d, bool ceil) {
  const double span = static_cast<double>(in + 2 * p - d * (k - 1) - 1) / static_cast<double>(s);
  std::int64_t n = static_cast<std::int64_t>(ceil ? std::ceil(span) : std::floor(span)) + 1;
  if (ceil && (n - 1) * s >= in + p) --n;
  return n;
}

using Ref = std::pair<std::vector<double>, Shape>;

Shape pooled_shape(const Tensor& x, std::int64_t ho, std::int64_t wo) {
  Shape s(x.sizes().begin(), x.sizes().end() - 2);
  s.push_back(ho);
  s.push_back(wo);
  return s;
}

Ref ref_max_pool2d(const Tensor& x, const P2& p) {
  const std::vector<double> xv = x.to_vector<double>();
  const std::int64_t H = x.size(-2), W = x.size(-1), planes = x.numel() / (H * W);
  const std::int64_t Ho = out_len(H, p.kh, p.sh, p.ph, p.dh, p.ceil);
  const std::int64_t Wo = out_len(W, p.kw, p.sw, p.pw, p.dw, p.ceil);
  std::vector<double> out;
  for (std::int64_t pl = 0; pl < planes; ++pl) {
    for (std::int64_t oh = 0; oh < Ho; ++oh) {
      for (std::int64_t ow = 0; ow < Wo; ++ow) {
        double best = -std::numeric_limits<double>::infinity();
        for (std::int64_t i = 0; i < p.kh; ++i) {
          for (std::int64_t j = 0; j < p.kw; ++j) {
            const std::int64_t ih = oh * p.sh - p.ph + i * p.dh, iw = ow * p.sw - p.pw + j * p.dw;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            const double v = xv[(pl * H + ih) * W + iw];
            if (std::isnan(v) || v > best) best = v;
            if (std::isnan(best)) break;
          }
          if (std::isnan(best)) break;
        }
        out.push_back(best);
      }
    }
  }
  return {out, pooled_shape(x, Ho, Wo)};
}

Ref ref_avg_pool2d(const Tensor& x, const P2& p, bool include_pad) {
  const std::vector<double> xv = x.to_vector<double>();
  const std::int64_t H = x.size(-2), W = x.size(-1), planes = x.numel() / (H * W);
  const std::int64_t Ho = out_len(H, p.kh, p.sh, p.ph, 1, p.ceil);
  const std::int64_t Wo = out_len(W, p.kw, p.sw, p.pw, 1, p.ceil);
  std::vector<double> out;
  for (std::int64_t pl = 0; pl < planes; ++pl) {
    for (std::int64_t oh = 0; oh < Ho; ++oh) {
      for (std::int64_t ow = 0; ow < Wo; ++ow) {
        double acc = 0;
        std::int64_t inside = 0, padded = 0;
        for (std::int64_t i = 0; i < p.kh; ++i) {
          for (std::int64_t j = 0; j < p.kw; ++j) {
            const std::int64_t ih = oh * p.sh - p.ph + i, iw = ow * p.sw - p.pw + j;
            // Positions past the right/bottom padding (ceil_mode overhang) never count.
            if (ih >= H + p.ph || iw >= W + p.pw) continue;
            ++padded;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            ++inside;
            acc += xv[(pl * H + ih) * W + iw];
          }
        }
        out.push_back(inside == 0 ? 0.0 : acc / static_cast<double>(include_pad ? padded : inside));
      }
    }
  }
  return {out, pooled_shape(x, Ho, Wo)};
}

Ref ref_adaptive(const Tensor& x, std::int64_t Ho, std::int64_t Wo) {
  const std::vector<double> xv = x.to_vector<double>();
  const std::int64_t H = x.size(-2), W = x.size(-1), planes = x.numel() / (H * W);
  std::vector<double> out;
  for (std::int64_t pl = 0; pl < planes; ++pl) {
    for (std::int64_t oh = 0; oh < Ho; ++oh) {
      for (std::int64_t ow = 0; ow < Wo; ++ow) {
        const auto h0 = static_cast<std::int64_t>(std::floor(double(oh * H) / double(Ho)));
        const auto h1 = static_cast<std::int64_t>(std::ceil(double((oh + 1) * H) / double(Ho)));
        const auto w0 = static_cast<std::int64_t>(std::floor(double(ow * W) / double(Wo)));
        const auto w1 = static_cast<std::int64_t>(std::ceil(double((ow + 1) * W) / double(Wo)));
        double acc = 0;
        for (std::int64_t i = h0; i < h1; ++i) {
          for (std::int64_t j = w0; j < w1; ++j) acc += xv[(pl * H + i) * W + j];
        }
        out.push_back(acc / double((h1 - h0) * (w1 - w0)));
      }
    }
  }
  return {out, pooled_shape(x, Ho, Wo)};
}

void expect_matches(const Tensor& got, const Ref& want, double tol) {
  ASSERT_EQ(got.sizes(), want.second);
  const std::vector<double> g = got.to_vector<double>();
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(want.first[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << i;
    } else {
      EXPECT_NEAR(g[i], want.first[i], tol) << i;
    }
  }
}

const std::vector<P2> kMaxCases = {{2, 2, 2, 2, 0, 0, 1, 1, false}, {3, 3, 2, 2, 1, 1, 1, 1, false},
                                   {3, 2, 2, 1, 1, 0, 1, 1, true},  {2, 3, 3, 2, 1, 1, 2, 1, true},
                                   {3, 3, 1, 1, 1, 1, 2, 2, false}, {2, 2, 3, 3, 0, 1, 1, 1, true}};

TEST(Pool, MaxPool2dMatchesReference) {
  std::uint64_t seed = 0;
  for (const P2& p : kMaxCases) {
    const Tensor x = random_tensor({2, 3, 7, 8}, ++seed);
    const Tensor got =
        max_pool2d(x, {p.kh, p.kw}, {p.sh, p.sw}, {p.ph, p.pw}, {p.dh, p.dw}, p.ceil);
    expect_matches(got, ref_max_pool2d(x, p), 0);
    expect_matches(max_pool2d(x.to(Dtype::Float32)[0], {p.kh, p.kw}, {p.sh, p.sw}, {p.ph, p.pw},
                              {p.dh, p.dw}, p.ceil),
                   ref_max_pool2d(x[0], p), 1e-7);
  }
  const Tensor xt = random_tensor({2, 3, 8, 7}, 9).transpose(2, 3);
  expect_matches(max_pool2d(xt, {2}),
                 ref_max_pool2d(xt.contiguous(), {2, 2, 2, 2, 0, 0, 1, 1, false}), 0);
  EXPECT_EQ(max_pool2d(zeros({0, 2, 4, 4}), {2}).sizes(), (Shape{0, 2, 2, 2}));
  const Tensor ints = arange(16.0).reshape({1, 4, 4});
  EXPECT_EQ(max_pool2d(ints, {2}).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{5, 7, 13, 15}));
}

TEST(Pool, MaxPoolPropagatesNanAndRoutesTiesToTheFirstIndex) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = tensor(std::vector<double>{1, nan, 3, 2, 5, 5, 5, 0}, {1, 2, 4});
  const Tensor y = max_pool2d(x, {2});
  EXPECT_TRUE(std::isnan(y.to_vector<double>()[0]));
  EXPECT_EQ(y.to_vector<double>()[1], 5.0);
  const Tensor ties = tensor(std::vector<double>{5, 5, 5, 5}, {1, 1, 4}).requires_grad_(true);
  max_pool1d(ties, {4}).sum().backward();
  EXPECT_EQ(ties.grad().to_vector<double>(), (std::vector<double>{1, 0, 0, 0}));
  const Tensor x1 = tensor(std::vector<double>{1, nan, 3}, {1, 3});
  EXPECT_TRUE(std::isnan(max_pool1d(x1, {3}).item()));
}

TEST(Pool, MaxPool1dMatchesReference) {
  std::uint64_t seed = 20;
  for (const P2& p : {P2{1, 3, 1, 2, 0, 1, 1, 1, false}, P2{1, 2, 1, 3, 0, 1, 1, 2, true},
                      P2{1, 4, 1, 1, 0, 2, 1, 1, true}}) {
    const Tensor x = random_tensor({2, 3, 9}, ++seed);
    auto want = ref_max_pool2d(x.unsqueeze(2), p);
    want.second = {2, 3, want.second[3]};
    expect_matches(max_pool1d(x, {p.kw}, {p.sw}, {p.pw}, {p.dw}, p.ceil), want, 0);
    EXPECT_EQ(max_pool1d(x[0], {p.kw}, {p.sw}, {p.pw}, {p.dw}, p.ceil).sizes(),
              (Shape{3, want.second[2]}));
  }
  EXPECT_EQ(max_pool1d(ones({2, 3, 7}), {2}).sizes(), (Shape{2, 3, 3}));
}

TEST(Pool, AvgPoolMatchesReferenceWithPaddingRules) {
  std::uint64_t seed = 40;
  for (bool include_pad : {true, false}) {
    for (const P2& p : {P2{2, 2, 2, 2, 0, 0, 1, 1, false}, P2{3, 3, 2, 2, 1, 1, 1, 1, false},
                        P2{3, 3, 2, 2, 1, 1, 1, 1, true}, P2{2, 3, 3, 2, 1, 1, 1, 1, true},
                        P2{3, 2, 2, 3, 1, 0, 1, 1, true}}) {
      const Tensor x = random_tensor({2, 2, 7, 6}, ++seed);
      expect_matches(avg_pool2d(x, {p.kh, p.kw}, {p.sh, p.sw}, {p.ph, p.pw}, p.ceil, include_pad),
                     ref_avg_pool2d(x, p, include_pad), 1e-12);
      expect_matches(avg_pool2d(x.to(Dtype::Float32)[1], {p.kh, p.kw}, {p.sh, p.sw}, {p.ph, p.pw},
                                p.ceil, include_pad),
                     ref_avg_pool2d(x[1], p, include_pad), 1e-6);
      const Tensor x1 = random_tensor({2, 3, 9}, ++seed);
      auto want =
          ref_avg_pool2d(x1.unsqueeze(2), {1, p.kw, 1, p.sw, 0, p.pw, 1, 1, p.ceil}, include_pad);
      want.second = {2, 3, want.second[3]};
      expect_matches(avg_pool1d(x1, {p.kw}, {p.sw}, {p.pw}, p.ceil, include_pad), want, 1e-12);
    }
  }
  const Tensor xt = random_tensor({1, 2, 6, 5}, 7).transpose(2, 3);
  expect_matches(avg_pool2d(xt, {2}),
                 ref_avg_pool2d(xt.contiguous(), {2, 2, 2, 2, 0, 0, 1, 1, false}, true), 1e-12);
  // Integer input: integer division of the window sum.
  const Tensor ints = tensor(std::vector<std::int64_t>{1, 2, 3, 5}, {1, 1, 4});
  EXPECT_EQ(avg_pool1d(ints, {2}).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 4}));
}

TEST(Pool, AdaptiveAvgPool2dUsesFloorCeilWindows) {
  std::uint64_t seed = 60;
  for (const auto& [oh, ow] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {3, 2}, {1, 1}, {7, 6}, {4, 5}, {10, 3}}) {
    const Tensor x = random_tensor({2, 3, 7, 6}, ++seed);
    expect_matches(adaptive_avg_pool2d(x, {oh, ow}), ref_adaptive(x, oh, ow), 1e-12);
    expect_matches(adaptive_avg_pool2d(x[0].to(Dtype::Float32), {oh, ow}),
                   ref_adaptive(x[0], oh, ow), 1e-6);
  }
  const Tensor xt = random_tensor({1, 2, 6, 5}, 7).transpose(2, 3);
  expect_matches(adaptive_avg_pool2d(xt, {2}), ref_adaptive(xt.contiguous(), 2, 2), 1e-12);
  EXPECT_EQ(adaptive_avg_pool2d(ones({2, 3, 4, 4}), {0, 2}).sizes(), (Shape{2, 3, 0, 2}));
}

TEST(Pool, GradientsMatchFiniteDifferences) {
  for (const P2& p : kMaxCases) {
    expect_gradients_match_finite_differences(
        [p](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{
              max_pool2d(in[0], {p.kh, p.kw}, {p.sh, p.sw}, {p.ph, p.pw}, {p.dh, p.dw}, p.ceil)};
        },
        {random_tensor({1, 2, 7, 6}, 3)});
  }
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{max_pool1d(in[0], {3}, {2}, {1}, {2}, true)};
      },
      {random_tensor({2, 9}, 4)});
  for (bool include_pad : {true, false}) {
    expect_gradients_match_finite_differences(
        [include_pad](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{avg_pool2d(in[0], {3, 2}, {2, 2}, {1, 1}, true, include_pad),
                                     avg_pool1d(in[1], {3}, {2}, {1}, true, include_pad)};
        },
        {random_tensor({2, 6, 5}, 5), random_tensor({2, 2, 8}, 6)});
  }
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{adaptive_avg_pool2d(in[0], {4, 3})};
      },
      {random_tensor({1, 2, 7, 5}, 7)});
}

TEST(Pool, SecondDerivativeMatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        autograd::EnableGradGuard grad_mode;
        const Tensor y = max_pool2d(in[0], {2}, {1}).pow(2.0).sum() +
                         avg_pool2d(in[0], {3}, {2}, {1}).pow(2.0).sum() +
                         adaptive_avg_pool2d(in[0], {2, 3}).pow(2.0).sum();
        return autograd::grad({y}, {in[0]}, {}, true, true);
      },
      {random_tensor({1, 1, 5, 5}, 8)});
}

TEST(Pool, InvalidArgumentsGivePyTorchMessages) {
  expect_error(
      [] {
        max_pool2d(ones({1, 1, 5, 5}), {3}, {1}, {2});
      },
      "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 "
      "and dilation=1");
  EXPECT_NO_THROW(max_pool2d(ones({1, 1, 9, 9}), {3}, {1}, {2}, {2}));
  expect_error(
      [] {
        max_pool2d(ones({1, 1, 5, 5}), {0});
      },
      "kernel size should be greater than zero, but got kH: 0 kW: 0");
  expect_error(
      [] {
        max_pool2d(ones({1, 1, 5, 5}), {2}, {0});
      },
      "stride should be greater than zero, but got dH: 0 dW: 0");
  expect_error(
      [] {
        max_pool2d(ones({1, 1, 5, 5}), {2}, {}, {0}, {0});
      },
      "dilation should be greater than zero");
  expect_error(
      [] {
        max_pool2d(ones({1, 1, 5, 5}), {2, 2, 2});
      },
      "max_pool2d: kernel_size must either be a single int, or a tuple of two ints");
  expect_error(
      [] {
        max_pool2d(ones({5, 5}), {2});
      },
      "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:[5, "
      "5]");
  expect_error(
      [] {
        max_pool2d(ones({1, 3, 2, 2}), {3});
      },
      "Given input size: (3x2x2). Calculated output size: (3x0x0). Output size is too small");
  expect_error([] { max_pool1d(ones({5}), {2}); },
               "max_pool1d() Expected 2D or 3D input tensor, but got [5]");
  expect_error(
      [] {
        max_pool1d(ones({1, 5}), {3}, {1}, {2});
      },
      "max_pool1d() padding should be at most half of kernel size, but got padding=2 and "
      "kernel_size=3");
  expect_error(
      [] {
        max_pool1d(ones({1, 2}), {3});
      },
      "max_pool1d() Invalid computed output size: 0");
  expect_error(
      [] {
        max_pool1d(ones({1, 5}), {2, 2});
      },
      "max_pool1d() argument 'kernel_size' should contain one int (got 2)");
  EXPECT_THROW(max_pool2d(ones({1, 1, 4, 4}, dtype(Dtype::Bool)), {2}), Error);
  expect_error(
      [] {
        avg_pool2d(ones({1, 1, 5, 5}), {2}, {}, {2});
      },
      "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2");
  expect_error(
      [] {
        avg_pool2d(ones({1, 1, 5, 5}, dtype(Dtype::Int32)), {2});
      },
      "\"avg_pool2d\" not implemented for 'Int'");
  expect_error(
      [] {
        avg_pool1d(ones({1, 1, 1, 5}), {2});
      },
      "avg_pool1d() Expected 2D or 3D input tensor");
  expect_error(
      [] {
        adaptive_avg_pool2d(ones({5, 5}), {2, 2});
      },
      "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [5, 5]");
  expect_error(
      [] {
        adaptive_avg_pool2d(ones({1, 0, 4, 4}), {2, 2});
      },
      "Expected input to have non-zero size for non-batch dimensions, but input has sizes "
      "[1, 0, 4, 4] with dimension 1 being empty");
  expect_error(
      [] {
        adaptive_avg_pool2d(ones({1, 4, 4}), {2, 2, 2});
      },
      "adaptive_avg_pool2d: output_size must be 2");
  expect_error(
      [] {
        adaptive_avg_pool2d(ones({1, 4, 4}), {-1, 2});
      },
      "elements of output_size must be greater than or equal to 0");
}

}  // namespace
}  // namespace weft
