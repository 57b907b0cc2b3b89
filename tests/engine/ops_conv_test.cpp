// conv1d / conv2d against a direct-loop reference in double precision.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "expect_error.h"
#include "gradcheck.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/parallel.h"

namespace weft {
namespace {

using testing::expect_error;

using testing::expect_gradients_match_finite_differences;
using testing::random_tensor;

struct Params {
  std::int64_t sh, sw, ph, pw, dh, dw, groups;
};

// out[n, o, y, x] = b[o] + Σ_{c in group, i, j} x[n, c, y*sh - ph + i*dh, x*sw - pw + j*dw] · w[o,
// c, i, j]
std::pair<std::vector<double>, Shape> ref_conv2d(const Tensor& x, const Tensor& w, const Tensor& b,
                                                 const Params& p) {
  const std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>();
  const std::vector<double> bv = b.defined() ? b.to_vector<double>() : std::vector<double>();
  const std::int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const std::int64_t O = w.size(0), Cg = w.size(1), kh = w.size(2), kw = w.size(3);
  const std::int64_t Ho = (H + 2 * p.ph - p.dh * (kh - 1) - 1) / p.sh + 1;
  const std::int64_t Wo = (W + 2 * p.pw - p.dw * (kw - 1) - 1) / p.sw + 1;
  const std::int64_t Og = O / p.groups;
  std::vector<double> out;
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t o = 0; o < O; ++o) {
      for (std::int64_t y = 0; y < Ho; ++y) {
        for (std::int64_t xo = 0; xo < Wo; ++xo) {
          double acc = bv.empty() ? 0.0 : bv[o];
          for (std::int64_t c = 0; c < Cg; ++c) {
            const std::int64_t ci = (o / Og) * Cg + c;
            for (std::int64_t i = 0; i < kh; ++i) {
              for (std::int64_t j = 0; j < kw; ++j) {
                const std::int64_t iy = y * p.sh - p.ph + i * p.dh,
                                   ix = xo * p.sw - p.pw + j * p.dw;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                acc += xv[((n * C + ci) * H + iy) * W + ix] * wv[((o * Cg + c) * kh + i) * kw + j];
              }
            }
          }
          out.push_back(acc);
        }
      }
    }
  }
  (void)C;
  return {out, {N, O, Ho, Wo}};
}

void expect_matches(const Tensor& got, const std::pair<std::vector<double>, Shape>& want,
                    double tol) {
  ASSERT_EQ(got.sizes(), want.second);
  const std::vector<double> g = got.to_vector<double>();
  for (std::size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], want.first[i], tol) << i;
}

TEST(Conv, Conv2dMatchesReferenceAcrossStridePaddingDilationGroups) {
  std::uint64_t seed = 0;
  for (std::int64_t groups : {1, 2}) {
    for (const Params& p0 :
         {Params{1, 1, 0, 0, 1, 1, 1}, Params{2, 1, 1, 0, 1, 1, 1}, Params{1, 2, 2, 1, 2, 1, 1},
          Params{3, 2, 1, 2, 1, 2, 1}, Params{2, 2, 0, 0, 2, 2, 1}}) {
      Params p = p0;
      p.groups = groups;
      const Tensor x = random_tensor({2, 4, 7, 6}, ++seed);
      const Tensor w = random_tensor({6, 4 / groups, 3, 2}, ++seed);
      const Tensor b = random_tensor({6}, ++seed);
      const Tensor got = conv2d(x, w, b, {p.sh, p.sw}, {p.ph, p.pw}, {p.dh, p.dw}, groups);
      expect_matches(got, ref_conv2d(x, w, b, p), 1e-12);
      expect_matches(conv2d(x.to(Dtype::Float32), w.to(Dtype::Float32), Tensor(), {p.sh, p.sw},
                            {p.ph, p.pw}, {p.dh, p.dw}, groups),
                     ref_conv2d(x, w, Tensor(), p), 1e-5);
    }
  }
}

TEST(Conv, Conv2dHandlesPointwiseUnbatchedNonContiguousAndEmptyBatch) {
  const Tensor x = random_tensor({2, 3, 4, 5}, 1), w1 = random_tensor({4, 3, 1, 1}, 2);
  expect_matches(conv2d(x, w1), ref_conv2d(x, w1, Tensor(), {1, 1, 0, 0, 1, 1, 1}), 1e-12);
  const Tensor w = random_tensor({2, 3, 3, 3}, 3);
  // One-element lists apply to both dims.
  expect_matches(conv2d(x, w, Tensor(), {2}, {1}, {1}),
                 ref_conv2d(x, w, Tensor(), {2, 2, 1, 1, 1, 1, 1}), 1e-12);
  const Tensor unbatched = conv2d(x[0], w, Tensor(), {1}, {1});
  EXPECT_EQ(unbatched.sizes(), (Shape{2, 4, 5}));
  auto want = ref_conv2d(x.slice(0, 0, 1), w, Tensor(), {1, 1, 1, 1, 1, 1, 1});
  want.second = {2, 4, 5};
  expect_matches(unbatched, want, 1e-12);
  const Tensor xt = random_tensor({2, 3, 5, 4}, 4).transpose(2, 3);  // [2, 3, 4, 5] strided
  expect_matches(conv2d(xt, w, Tensor(), {1}, {1}),
                 ref_conv2d(xt.contiguous(), w, Tensor(), {1, 1, 1, 1, 1, 1, 1}), 1e-12);
  EXPECT_EQ(conv2d(zeros({0, 3, 4, 5}), ones({2, 3, 3, 3})).sizes(), (Shape{0, 2, 2, 3}));
  // Depthwise.
  const Tensor wd = random_tensor({3, 1, 3, 3}, 5);
  expect_matches(conv2d(x, wd, Tensor(), {1}, {1}, {1}, 3),
                 ref_conv2d(x, wd, Tensor(), {1, 1, 1, 1, 1, 1, 3}), 1e-12);
}

TEST(Conv, Conv1dMatchesReference) {
  std::uint64_t seed = 50;
  for (const Params& p :
       {Params{1, 1, 0, 0, 1, 1, 1}, Params{1, 2, 0, 1, 1, 1, 1}, Params{1, 3, 0, 2, 1, 2, 2}}) {
    const Tensor x = random_tensor({2, 4, 9}, ++seed);
    const Tensor w = random_tensor({6, 4 / p.groups, 3}, ++seed), b = random_tensor({6}, ++seed);
    const Tensor got = conv1d(x, w, b, {p.sw}, {p.pw}, {p.dw}, p.groups);
    auto want = ref_conv2d(x.unsqueeze(2), w.unsqueeze(2), b, p);
    want.second = {want.second[0], want.second[1], want.second[3]};
    expect_matches(got, want, 1e-12);
    const Tensor single = conv1d(x[1], w, b, {p.sw}, {p.pw}, {p.dw}, p.groups);
    EXPECT_EQ(single.sizes(), (Shape{6, want.second[2]}));
  }
  const Tensor xt = random_tensor({2, 9, 4}, 9).transpose(1, 2);
  const Tensor w = random_tensor({2, 4, 2}, 10);
  auto want =
      ref_conv2d(xt.contiguous().unsqueeze(2), w.unsqueeze(2), Tensor(), {1, 1, 0, 0, 1, 1, 1});
  want.second = {2, 2, 8};
  expect_matches(conv1d(xt, w), want, 1e-12);
}

TEST(Conv, ManyThreadsGiveTheSameResultsAndGradients) {
  const Tensor x = random_tensor({5, 3, 9, 8}, 1).to(Dtype::Float32);
  const Tensor w = random_tensor({4, 3, 3, 3}, 2).to(Dtype::Float32);
  auto run = [&] {
    Tensor xx = x.detach().clone().requires_grad_(true);
    Tensor ww = w.detach().clone().requires_grad_(true);
    Tensor y = conv2d(xx, ww, Tensor(), {1}, {1});
    sum(y * y).backward();
    return std::vector<std::vector<float>>{y.to_vector<float>(), xx.grad().to_vector<float>(),
                                           ww.grad().to_vector<float>()};
  };
  const int before = get_num_threads();
  set_num_threads(1);
  const auto one = run();
  set_num_threads(3);
  const auto many = run();
  set_num_threads(before);
  for (std::size_t k = 0; k < one.size(); ++k) {
    for (std::size_t i = 0; i < one[k].size(); ++i) EXPECT_NEAR(one[k][i], many[k][i], 1e-3);
  }
}

TEST(Conv, LargeImagesAreTiledWithoutChangingResultsOrGradients) {
  // 64 channels x 3x3 make im2col rows long enough that each image is split into row tiles.
  const Params p{2, 1, 1, 1, 1, 2, 1};
  const Tensor x = random_tensor({2, 64, 21, 40}, 1), w = random_tensor({3, 64, 3, 3}, 2);
  const Tensor xx = x.detach().clone().requires_grad_(true);
  const Tensor ww = w.detach().clone().requires_grad_(true);
  const Tensor y = conv2d(xx, ww, Tensor(), {p.sh, p.sw}, {p.ph, p.pw}, {p.dh, p.dw});
  expect_matches(y, ref_conv2d(x, w, Tensor(), p), 1e-10);
  const Tensor r = random_tensor(y.sizes(), 3);
  sum(y * r).backward();
  // d/dx and d/dw of Σ r·y, accumulated directly from the definition.
  const std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>();
  const std::vector<double> rv = r.to_vector<double>();
  std::vector<double> dx(xv.size(), 0.0), dw(wv.size(), 0.0);
  const std::int64_t C = 64, H = 21, W = 40, O = 3, Ho = y.size(2), Wo = y.size(3);
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t o = 0; o < O; ++o)
      for (std::int64_t oy = 0; oy < Ho; ++oy)
        for (std::int64_t ox = 0; ox < Wo; ++ox)
          for (std::int64_t c = 0; c < C; ++c)
            for (std::int64_t i = 0; i < 3; ++i)
              for (std::int64_t j = 0; j < 3; ++j) {
                const std::int64_t iy = oy * p.sh - p.ph + i * p.dh,
                                   ix = ox * p.sw - p.pw + j * p.dw;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                const double g = rv[((n * O + o) * Ho + oy) * Wo + ox];
                const std::size_t xi = ((n * C + c) * H + iy) * W + ix;
                const std::size_t wi = ((o * C + c) * 3 + i) * 3 + j;
                dx[xi] += g * wv[wi];
                dw[wi] += g * xv[xi];
              }
  expect_matches(xx.grad(), {dx, x.sizes()}, 1e-10);
  expect_matches(ww.grad(), {dw, w.sizes()}, 1e-10);
}

TEST(Conv, Conv2dGradMatchesFiniteDifferences) {
  for (const Params& p :
       {Params{1, 1, 1, 1, 1, 1, 1}, Params{2, 1, 1, 0, 2, 1, 2}, Params{1, 1, 0, 0, 1, 1, 1}}) {
    const std::int64_t kh = p.ph == 0 && p.sh == 1 ? 1 : 3;
    expect_gradients_match_finite_differences(
        [p](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{
              conv2d(in[0], in[1], in[2], {p.sh, p.sw}, {p.ph, p.pw}, {p.dh, p.dw}, p.groups)};
        },
        {random_tensor({2, 4, 6, 5}, 1), random_tensor({4, 4 / p.groups, kh, 2}, 2),
         random_tensor({4}, 3)});
  }
  // Unbatched, no bias, transposed input.
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{conv2d(in[0].transpose(1, 2), in[1], Tensor(), {1}, {1})};
      },
      {random_tensor({2, 4, 3}, 4), random_tensor({3, 2, 2, 2}, 5)});
}

TEST(Conv, Conv1dGradMatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{conv1d(in[0], in[1], in[2], {2}, {1}, {2}, 2)};
      },
      {random_tensor({2, 4, 8}, 1), random_tensor({2, 2, 3}, 2), random_tensor({2}, 3)});
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{conv1d(in[0], in[1], Tensor(), {1}, {0})};
      },
      {random_tensor({3, 6}, 4), random_tensor({2, 3, 2}, 5)});
}

TEST(Conv, SecondDerivativeMatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        autograd::EnableGradGuard grad_mode;
        const Tensor y = conv2d(in[0], in[1], in[2], {2}, {1});
        return autograd::grad({sum(y * y)}, {in[0], in[1], in[2]}, {}, true, true);
      },
      {random_tensor({1, 2, 4, 4}, 1), random_tensor({2, 2, 3, 3}, 2), random_tensor({2}, 3)});
}

TEST(Conv, InvalidArgumentsGivePyTorchMessages) {
  expect_error(
      [] {
        conv2d(ones({1, 4, 5, 5}), ones({8, 3, 3, 3}));
      },
      "Given groups=1, weight of size [8, 3, 3, 3], expected input[1, 4, 5, 5] to have 3 "
      "channels, but got 4 channels instead");
  expect_error([] { conv2d(ones({4, 5, 5}), ones({8, 3, 3, 3})); }, "expected input[1, 4, 5, 5]");
  expect_error(
      [] {
        conv2d(ones({1, 3, 2, 2}), ones({8, 3, 3, 3}));
      },
      "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel "
      "size can't be greater than actual input size");
  expect_error(
      [] {
        conv2d(ones({1, 3, 3, 3}), ones({8, 3, 2, 2}), Tensor(), {1}, {0}, {3});
      },
      "Kernel size: (4 x 4)");
  expect_error(
      [] {
        conv1d(ones({1, 3, 2}), ones({8, 3, 3}));
      },
      "Calculated padded input size per channel: (2). Kernel size: (3).");
  expect_error(
      [] {
        conv2d(ones({1, 4, 5, 5}), ones({3, 2, 3, 3}), Tensor(), {1}, {0}, {1}, 2);
      },
      "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight "
      "of size [3, 2, 3, 3] instead");
  expect_error(
      [] {
        conv2d(ones({1, 3, 5, 5}), ones({8, 3, 3, 3}), ones({4}));
      },
      "Given weight of size [8, 3, 3, 3], expected bias to be 1-dimensional with 8 "
      "elements, but got bias of size [4] instead");
  expect_error(
      [] {
        conv2d(ones({5}), ones({8, 3, 3, 3}));
      },
      "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [5]");
  expect_error(
      [] {
        conv1d(ones({1, 2, 3, 5}), ones({8, 3, 3}));
      },
      "Expected 2D (unbatched) or 3D (batched) input to conv1d");
  expect_error(
      [] {
        conv2d(ones({1, 3, 5, 5}), ones({8, 3, 3}));
      },
      "Expected 3-dimensional input for 3-dimensional weight [8, 3, 3], but got 4-dimensional "
      "input of size [1, 3, 5, 5] instead");
  expect_error(
      [] {
        conv2d(ones({1, 3, 5, 5}), ones({8, 3, 3, 3}), Tensor(), {0});
      },
      "non-positive stride is not supported");
  expect_error(
      [] {
        conv2d(ones({1, 3, 5, 5}), ones({8, 3, 3, 3}), Tensor(), {1}, {-1});
      },
      "negative padding is not supported");
  expect_error(
      [] {
        conv2d(ones({1, 3, 5, 5}), ones({8, 3, 3, 3}), Tensor(), {1}, {0}, {0});
      },
      "dilation should be greater than zero");
  expect_error(
      [] {
        conv2d(ones({1, 3, 5, 5}), ones({8, 3, 3, 3}), Tensor(), {1}, {0}, {1}, 0);
      },
      "non-positive groups is not supported");
  expect_error(
      [] {
        conv2d(ones({1, 3, 5, 5}), ones({8, 3, 3, 3}), Tensor(), {1, 1, 1});
      },
      "expected stride to be a single integer value or a list of 2 values to match the "
      "convolution dimensions, but got stride=[1, 1, 1]");
  expect_error(
      [] {
        conv2d(ones({1, 3, 5, 5}), ones({8, 3, 3, 3}, dtype(Dtype::Float64)));
      },
      "expected scalar type Float but found Double");
  expect_error(
      [] {
        conv2d(ones({1, 3, 5, 5}, dtype(Dtype::Int64)), ones({8, 3, 3, 3}, dtype(Dtype::Int64)));
      },
      "not implemented for 'Long'");
}

}  // namespace
}  // namespace weft
