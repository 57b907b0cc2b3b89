// conv_transpose1d / conv_transpose2d against a direct scatter loop in double precision, their
// gradients (first and second order) against finite differences, and PyTorch's messages.
#include <gtest/gtest.h>

#include <vector>

#include "expect_error.h"
#include "gradcheck.h"
#include "weft/autograd.h"
#include "weft/ops.h"

namespace weft {
namespace {

using testing::expect_error;
using testing::expect_gradients_match_finite_differences;
using testing::random_tensor;

struct Params {
  std::int64_t sh, sw, ph, pw, oph, opw, dh, dw, groups;
};

// Each input element scatters into the output: x[n, ci, iy, ix] * w[ci, co, i, j] lands at
// [n, group(ci) * Cog + co, iy*sh - ph + i*dh, ix*sw - pw + j*dw] when that is inside.
std::vector<double> reference(const Tensor& x, const Tensor& w, const Tensor& b, const Params& p,
                              Shape& out_shape) {
  const std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>();
  const std::int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const std::int64_t Cog = w.size(1), kh = w.size(2), kw = w.size(3);
  const std::int64_t O = Cog * p.groups, Cg = C / p.groups;
  const std::int64_t Ho = (H - 1) * p.sh - 2 * p.ph + p.dh * (kh - 1) + p.oph + 1;
  const std::int64_t Wo = (W - 1) * p.sw - 2 * p.pw + p.dw * (kw - 1) + p.opw + 1;
  out_shape = {N, O, Ho, Wo};
  std::vector<double> out(static_cast<std::size_t>(N * O * Ho * Wo), 0.0);
  if (b.defined()) {
    const std::vector<double> bv = b.to_vector<double>();
    for (std::int64_t i = 0; i < N * O * Ho * Wo; ++i) {
      out[static_cast<std::size_t>(i)] = bv[static_cast<std::size_t>((i / (Ho * Wo)) % O)];
    }
  }
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t ci = 0; ci < C; ++ci) {
      for (std::int64_t iy = 0; iy < H; ++iy) {
        for (std::int64_t ix = 0; ix < W; ++ix) {
          const double xval = xv[static_cast<std::size_t>(((n * C + ci) * H + iy) * W + ix)];
          for (std::int64_t co = 0; co < Cog; ++co) {
            const std::int64_t o = (ci / Cg) * Cog + co;
            for (std::int64_t i = 0; i < kh; ++i) {
              for (std::int64_t j = 0; j < kw; ++j) {
                const std::int64_t oy = iy * p.sh - p.ph + i * p.dh;
                const std::int64_t ox = ix * p.sw - p.pw + j * p.dw;
                if (oy < 0 || oy >= Ho || ox < 0 || ox >= Wo) continue;
                out[static_cast<std::size_t>(((n * O + o) * Ho + oy) * Wo + ox)] +=
                    xval * wv[static_cast<std::size_t>(((ci * Cog + co) * kh + i) * kw + j)];
              }
            }
          }
        }
      }
    }
  }
  return out;
}

void expect_near_all(const Tensor& got, const std::vector<double>& expected, const Shape& shape) {
  ASSERT_EQ(got.sizes(), shape);
  const std::vector<double> g = got.to_vector<double>();
  ASSERT_EQ(g.size(), expected.size());
  for (std::size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], expected[i], 1e-12) << i;
}

TEST(ConvTranspose, Conv2dMatchesTheScatterLoop) {
  // output_padding below the stride, and at or past it where the dilation allows it (the extra
  // rows then still receive taps of the last input row).
  for (const Params& p : {Params{1, 1, 0, 0, 0, 0, 1, 1, 1}, Params{2, 3, 1, 0, 1, 2, 1, 1, 1},
                          Params{1, 2, 1, 1, 0, 1, 2, 1, 2}, Params{1, 1, 0, 0, 2, 1, 3, 2, 1},
                          Params{3, 1, 2, 0, 0, 0, 1, 1, 2}}) {
    const Tensor x = random_tensor({2, 4, 3, 4}, 1, -1, 1).to(Dtype::Float64);
    const Tensor w = random_tensor({4, 3, 3, 2}, 2).to(Dtype::Float64);
    const Tensor b = random_tensor({3 * p.groups}, 3).to(Dtype::Float64);
    Shape shape;
    const std::vector<double> expected = reference(x, w, b, p, shape);
    expect_near_all(conv_transpose2d(x, w, b, {p.sh, p.sw}, {p.ph, p.pw}, {p.oph, p.opw}, p.groups,
                                     {p.dh, p.dw}),
                    expected, shape);
  }
}

TEST(ConvTranspose, Conv1dIsConv2dOverAUnitHeightAndUnbatchedInputWorks) {
  const Tensor x = random_tensor({2, 4, 5}, 4).to(Dtype::Float64);
  const Tensor w = random_tensor({4, 2, 3}, 5).to(Dtype::Float64);
  Shape shape;
  const std::vector<double> expected =
      reference(x.unsqueeze(2), w.unsqueeze(2), Tensor(), Params{1, 2, 0, 1, 0, 1, 1, 2, 2}, shape);
  const Tensor got = conv_transpose1d(x, w, Tensor(), {2}, {1}, {1}, 2, {2});
  expect_near_all(got, expected, {shape[0], shape[1], shape[3]});
  const Tensor one = conv_transpose1d(x.select(0, 1), w, Tensor(), {2}, {1}, {1}, 2, {2});
  EXPECT_EQ(one.to_vector<double>(), got.select(0, 1).to_vector<double>());
  EXPECT_EQ(conv_transpose2d(zeros({0, 4, 3, 3}), ones({4, 2, 2, 2})).sizes(), (Shape{0, 2, 4, 4}));
}

TEST(ConvTranspose, GradientsMatchFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{
            conv_transpose2d(in[0], in[1], in[2], {2, 1}, {1, 0}, {1, 0}, 2, {1, 2})};
      },
      {random_tensor({2, 4, 3, 3}, 1), random_tensor({4, 2, 2, 3}, 2), random_tensor({4}, 3)});
  // output_padding past the stride: the zero rows the input gains carry no gradient back.
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{conv_transpose1d(in[0], in[1], Tensor(), {1}, {0}, {2}, 1, {3})};
      },
      {random_tensor({1, 2, 4}, 4), random_tensor({2, 3, 2}, 5)});
}

TEST(ConvTranspose, SecondDerivativeMatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        autograd::EnableGradGuard grad_mode;
        const Tensor y = conv_transpose2d(in[0], in[1], in[2], {2}, {1}, {1});
        return autograd::grad({sum(y * y)}, {in[0], in[1], in[2]}, {}, true, true);
      },
      {random_tensor({1, 2, 3, 3}, 1), random_tensor({2, 2, 3, 3}, 2), random_tensor({2}, 3)});
}

TEST(ConvTranspose, InvalidArgumentsGivePyTorchMessages) {
  expect_error(
      [] {
        conv_transpose2d(ones({1, 5, 4, 4}), ones({4, 3, 3, 3}));
      },
      "Given transposed=1, weight of size [4, 3, 3, 3], expected input[1, 5, 4, 4] to "
      "have 4 channels, but got 5 channels instead");
  expect_error(
      [] {
        conv_transpose2d(ones({1, 4, 4, 4}), ones({4, 3, 3, 3}), Tensor(), {2}, {0}, {2});
      },
      "output padding must be smaller than either stride or dilation");
  expect_error(
      [] {
        conv_transpose2d(ones({1, 4, 4, 4}), ones({4, 3, 3, 3}), ones({4}));
      },
      "Given transposed=1, weight of size [4, 3, 3, 3], expected bias to be 1-dimensional with "
      "3 elements, but got bias of size [4] instead");
  expect_error(
      [] {
        conv_transpose2d(ones({1, 6, 4, 4}), ones({6, 3, 3, 3}), Tensor(), {1}, {0}, {0}, 4);
      },
      "Given groups=4, expected weight to be divisible by 4 at dimension 0");
  expect_error(
      [] {
        conv_transpose1d(ones({1, 2, 1}), ones({2, 1, 1}), Tensor(), {1}, {1});
      },
      "Output size is too small");
  expect_error(
      [] {
        conv_transpose1d(ones({5}), ones({2, 1, 1}));
      },
      "Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d");
}

}  // namespace
}  // namespace weft
