// The 3-D pools against a direct-loop reference in double precision (PyTorch's window rules),
// against the 2-D pools on volumes of depth 1, and their gradients against finite differences.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "expect_error.h"
#include "gradcheck.h"
#include "weft/ops.h"

namespace weft {
namespace {

using testing::expect_error;
using testing::expect_gradients_match_finite_differences;
using testing::random_tensor;
using Triple = std::array<std::int64_t, 3>;

struct P3 {
  Triple k, s, p, d;
  bool ceil;
};

std::int64_t out_len(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p,
                     std::int64_t d, bool ceil) {
  const double span = static_cast<double>(in + 2 * p - d * (k - 1) - 1) / static_cast<double>(s);
  std::int64_t n = static_cast<std::int64_t>(ceil ? std::ceil(span) : std::floor(span)) + 1;
  if (ceil && (n - 1) * s >= in + p) --n;
  return n;
}

enum class Kind { Max, Avg, AvgExcludingPad };

// Every output of a 3-D pool of x ([..., T, H, W]) by direct loops over each window.
std::vector<double> reference(const Tensor& x, const P3& p, Kind kind) {
  const std::vector<double> xv = x.contiguous().to_vector<double>();
  const Triple in{x.size(-3), x.size(-2), x.size(-1)};
  Triple out{};
  for (int i = 0; i < 3; ++i) out[i] = out_len(in[i], p.k[i], p.s[i], p.p[i], p.d[i], p.ceil);
  const std::int64_t volumes = x.numel() / (in[0] * in[1] * in[2]);
  std::vector<double> result;
  for (std::int64_t v = 0; v < volumes; ++v) {
    for (std::int64_t a = 0; a < out[0]; ++a) {
      for (std::int64_t b = 0; b < out[1]; ++b) {
        for (std::int64_t c = 0; c < out[2]; ++c) {
          const Triple o{a, b, c};
          double best = -std::numeric_limits<double>::infinity(), sum = 0.0;
          std::int64_t inside = 0, padded = 1;
          for (int i = 0; i < 3; ++i) {
            // The padded window of an average pool ends at most at the right padding.
            const std::int64_t start = o[i] * p.s[i] - p.p[i];
            padded *= std::min(start + p.k[i], in[i] + p.p[i]) - start;
          }
          for (std::int64_t i = 0; i < p.k[0]; ++i) {
            for (std::int64_t j = 0; j < p.k[1]; ++j) {
              for (std::int64_t l = 0; l < p.k[2]; ++l) {
                const Triple at{a * p.s[0] - p.p[0] + i * p.d[0], b * p.s[1] - p.p[1] + j * p.d[1],
                                c * p.s[2] - p.p[2] + l * p.d[2]};
                bool out_of_input = false;
                for (int q = 0; q < 3; ++q) out_of_input |= at[q] < 0 || at[q] >= in[q];
                if (out_of_input) continue;
                const double value = xv[static_cast<std::size_t>(
                    ((v * in[0] + at[0]) * in[1] + at[1]) * in[2] + at[2])];
                best = std::max(best, value);
                sum += value;
                ++inside;
              }
            }
          }
          if (kind == Kind::Max) {
            result.push_back(best);
          } else {
            result.push_back(sum / static_cast<double>(kind == Kind::Avg ? padded : inside));
          }
        }
      }
    }
  }
  return result;
}

void expect_near_all(const Tensor& got, const std::vector<double>& want, double tol) {
  const std::vector<double> g = got.contiguous().to_vector<double>();
  ASSERT_EQ(g.size(), want.size());
  for (std::size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], want[i], tol) << "at " << i;
}

TEST(Pool3d, MaxAndAverageMatchDirectLoops) {
  const Tensor x = random_tensor({2, 2, 5, 6, 7}, 1);
  const std::vector<P3> params{
      {{2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, false},
      {{3, 2, 3}, {2, 1, 2}, {1, 1, 1}, {1, 1, 1}, false},
      {{2, 3, 2}, {2, 2, 3}, {1, 0, 1}, {1, 1, 1}, true},
      {{3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, true},
  };
  for (const P3& p : params) {
    const std::vector<std::int64_t> k(p.k.begin(), p.k.end()), s(p.s.begin(), p.s.end()),
        pad(p.p.begin(), p.p.end());
    expect_near_all(max_pool3d(x, k, s, pad, {1}, p.ceil), reference(x, p, Kind::Max), 1e-12);
    expect_near_all(avg_pool3d(x, k, s, pad, p.ceil, true), reference(x, p, Kind::Avg), 1e-12);
    expect_near_all(avg_pool3d(x, k, s, pad, p.ceil, false), reference(x, p, Kind::AvgExcludingPad),
                    1e-12);
  }
  // Dilation (max pooling only), an empty stride (= the kernel), an unbatched input.
  const P3 dilated{{2, 2, 3}, {1, 2, 1}, {1, 0, 1}, {2, 3, 1}, false};
  expect_near_all(max_pool3d(x, {2, 2, 3}, {1, 2, 1}, {1, 0, 1}, {2, 3, 1}),
                  reference(x, dilated, Kind::Max), 1e-12);
  const P3 by_kernel{{2, 3, 2}, {2, 3, 2}, {0, 0, 0}, {1, 1, 1}, false};
  expect_near_all(max_pool3d(x[0], {2, 3, 2}), reference(x[0], by_kernel, Kind::Max), 1e-12);
  EXPECT_EQ(avg_pool3d(x[0], {2, 3, 2}).sizes(), (Shape{2, 2, 2, 3}));
}

TEST(Pool3d, DepthOneVolumesPoolAsPlanes) {
  const Tensor x = random_tensor({2, 3, 1, 6, 5}, 2);
  const Tensor planes = x.squeeze({2});
  expect_near_all(max_pool3d(x, {1, 3, 2}, {1, 2, 1}, {0, 1, 1}, {1, 1, 2}, true).squeeze({2}),
                  max_pool2d(planes, {3, 2}, {2, 1}, {1, 1}, {1, 2}, true).to_vector<double>(),
                  0.0);
  expect_near_all(avg_pool3d(x, {1, 3, 3}, {1, 2, 2}, {0, 1, 1}, false, false).squeeze({2}),
                  avg_pool2d(planes, {3, 3}, {2, 2}, {1, 1}, false, false).to_vector<double>(),
                  1e-15);
  expect_near_all(adaptive_avg_pool3d(x, {1, 4, 3}).squeeze({2}),
                  adaptive_avg_pool2d(planes, {4, 3}).to_vector<double>(), 1e-15);
}

TEST(Pool3d, AdaptiveAverageUsesFloorCeilWindows) {
  const Tensor x = random_tensor({1, 2, 5, 7, 4}, 3);
  const std::vector<double> v = x.to_vector<double>();
  const Tensor y = adaptive_avg_pool3d(x, {3, 3, 3});
  ASSERT_EQ(y.sizes(), (Shape{1, 2, 3, 3, 3}));
  // Output (c=1, 2, 1, 0): windows [3, 5) x [2, 5) x [0, 2).
  double sum = 0.0;
  for (int t = 3; t < 5; ++t)
    for (int h = 2; h < 5; ++h)
      for (int w = 0; w < 2; ++w) sum += v[static_cast<std::size_t>(((5 + t) * 7 + h) * 4 + w)];
  EXPECT_NEAR(y.to_vector<double>()[27 + 2 * 9 + 1 * 3 + 0], sum / 12.0, 1e-12);
  EXPECT_EQ(adaptive_avg_pool3d(x, {0, 2, 2}).sizes(), (Shape{1, 2, 0, 2, 2}));
  EXPECT_EQ(adaptive_avg_pool3d(x[0], {2}).sizes(), (Shape{2, 2, 2, 2}));
}

TEST(Pool3d, MaxKeepsTheFirstMaximumAndNaNWins) {
  // All equal: the gradient goes to the first element of each window in scan order.
  Tensor x = ones({1, 1, 2, 2, 2});
  x.requires_grad_();
  max_pool3d(x, {2}).sum().backward();
  const std::vector<double> g = x.grad().to_vector<double>();
  EXPECT_EQ(g[0], 1.0);
  for (std::size_t i = 1; i < g.size(); ++i) EXPECT_EQ(g[i], 0.0);
  const Tensor with_nan = where(ne(arange(8.0).reshape({1, 1, 2, 2, 2}), full({}, 5.0)),
                                random_tensor({1, 1, 2, 2, 2}, 4), full({}, std::nan("")));
  EXPECT_TRUE(std::isnan(max_pool3d(with_nan, {2}).item()));
}

TEST(Pool3d, GradientsMatchFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{max_pool3d(in[0], {2, 3, 2}, {1, 2, 2}, {1, 1, 0}, {1, 1, 2}),
                                   avg_pool3d(in[0], {3, 2, 2}, {2, 1, 2}, {1, 1, 1}, true, true),
                                   avg_pool3d(in[0], {3}, {2}, {1}, false, false),
                                   adaptive_avg_pool3d(in[0], {2, 3, 2})};
      },
      {random_tensor({1, 2, 4, 5, 5}, 5)});
}

TEST(Pool3d, SecondDerivativeMatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        autograd::EnableGradGuard grad_mode;
        const Tensor y = max_pool3d(in[0], {2}, {1}).pow(2.0).sum() +
                         avg_pool3d(in[0], {3}, {2}, {1}).pow(2.0).sum() +
                         adaptive_avg_pool3d(in[0], {2, 1, 3}).pow(2.0).sum();
        return autograd::grad({y}, {in[0]}, {}, true, true);
      },
      {random_tensor({1, 1, 3, 4, 4}, 6)});
}

TEST(Pool3d, InvalidArgumentsGivePyTorchMessages) {
  expect_error(
      [] {
        max_pool3d(ones({1, 1, 4, 4, 4}), {3}, {1}, {2});
      },
      "pad should be smaller than or equal to half of kernel size, but got kT: 3 kW: 3 "
      "kH: 3 padT: 2 padW: 2 padH: 2");
  expect_error(
      [] {
        avg_pool3d(ones({1, 1, 4, 4, 4}), {2, 2});
      },
      "avg_pool3d: kernel_size must be a single int, or a tuple of three ints");
  expect_error([] { max_pool3d(ones({1, 4, 4}), {2}); }, "Expected 4D or 5D tensor");
  expect_error([] { max_pool3d(ones({1, 1, 1, 4, 4}), {2}); }, "Output size is too small");
  expect_error(
      [] {
        max_pool3d(ones({1, 1, 2, 4, 4}), {0});
      },
      "kernel size should be greater than zero, but got kT: 0 kH: 0 kW: 0");
  expect_error(
      [] {
        adaptive_avg_pool3d(ones({1, 1, 4, 4, 4}), {2, 2});
      },
      "adaptive_avg_pool3d: output_size must be 3");
  expect_error(
      [] {
        adaptive_avg_pool3d(ones({1, 0, 4, 4, 4}), {2});
      },
      "Expected input to have non-zero size for non-batch dimensions");
  expect_error(
      [] {
        avg_pool3d(ones({1, 1, 2, 2, 2}).to(Dtype::Bool), {2});
      },
      "\"avg_pool3d_out_frame\" not implemented for 'Bool'");
  // avg_pool3d alone wants the unpadded input to hold a kernel (max_pool3d does not).
  expect_error(
      [] {
        avg_pool3d(ones({1, 1, 3, 4, 3}), {4, 2, 1}, {1}, {2, 1, 0});
      },
      "input image (T: 3 H: 4 W: 3) smaller than kernel size (kT: 4 kH: 2 kW: 1)");
  EXPECT_NO_THROW(max_pool3d(ones({1, 1, 3, 4, 3}), {4, 2, 1}, {1}, {2, 1, 0}));
}

// Dilation lets a window start in the padding and end past the input with no tap inside it
// (T = 1, kernel 2, dilation 2, padding 1: taps at -1 and 1). PyTorch gives -inf there and an
// index past the plane, and its backward writes the gradient there: into the next plane, or
// past the buffer (heap corruption in 1.13 and 2.15, max_pool2d and max_pool3d alike; corpus
// bug-eager-max-pool-window-in-padding-backward). The engine reads nothing and passes nothing.
TEST(Pool3d, AWindowWhollyInThePaddingIsMinusInfinityWithNoGradient) {
  Tensor x = random_tensor({3, 1, 1, 2, 2}, 7);
  x.requires_grad_();
  const Tensor y = max_pool3d(x, {2, 1, 1}, {1}, {1, 0, 0}, {2, 1, 1});
  ASSERT_EQ(y.sizes(), (Shape{3, 1, 1, 2, 2}));
  for (double v : y.to_vector<double>()) EXPECT_EQ(v, -std::numeric_limits<double>::infinity());
  sum(y).backward();
  for (double g : x.grad().to_vector<double>()) EXPECT_EQ(g, 0.0);

  Tensor x2 = random_tensor({3, 1, 1, 2}, 8);
  x2.requires_grad_();
  const Tensor y2 = max_pool2d(x2, {2, 1}, {1}, {1, 0}, {2, 1});
  for (double v : y2.to_vector<double>()) EXPECT_EQ(v, -std::numeric_limits<double>::infinity());
  sum(y2).backward();
  for (double g : x2.grad().to_vector<double>()) EXPECT_EQ(g, 0.0);
}

}  // namespace
}  // namespace weft
