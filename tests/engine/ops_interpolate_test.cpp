// interpolate: nearest / linear / bilinear against PyTorch's known outputs and a naive
// reference, gradients against finite differences, PyTorch's argument errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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
using D = std::vector<double>;

Tensor line(std::int64_t n) {
  return arange(static_cast<double>(n), Dtype::Float64).reshape({1, 1, n});
}

// Independent reference for (bi)linear: source position and the two neighbours in double.
struct Taps {
  std::int64_t i0, i1;
  double l0, l1;
};
Taps taps(std::int64_t j, std::int64_t in, std::int64_t out, bool align_corners) {
  if (in == out) return {j, j, 1.0, 0.0};
  double src;
  if (align_corners) {
    src = out > 1 ? j * static_cast<double>(in - 1) / (out - 1) : 0.0;
  } else {
    src = std::max((j + 0.5) * static_cast<double>(in) / out - 0.5, 0.0);
  }
  const std::int64_t i0 = std::min<std::int64_t>(static_cast<std::int64_t>(src), in - 1);
  const std::int64_t i1 = std::min<std::int64_t>(i0 + 1, in - 1);
  const double l1 = std::min(src - i0, 1.0);
  return {i0, i1, 1.0 - l1, l1};
}

TEST(InterpolateTest, NearestMatchesPyTorchLegacyIndices) {
  // Known outputs of torch.nn.functional.interpolate(mode="nearest").
  EXPECT_EQ(interpolate(line(5), {3}).to_vector<double>(), (D{0, 1, 3}));
  EXPECT_EQ(interpolate(line(3), {7}).to_vector<double>(), (D{0, 0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(interpolate(line(2), {4}).to_vector<double>(), (D{0, 0, 1, 1}));
  EXPECT_EQ(interpolate(line(4), {3}).to_vector<double>(), (D{0, 1, 2}));
  EXPECT_EQ(interpolate(line(4), {4}).to_vector<double>(), (D{0, 1, 2, 3}));
  // 2-d: rows and columns independently; float32 stays float32.
  const Tensor img = arange(6.0, Dtype::Float32).reshape({1, 1, 2, 3});
  const Tensor up = interpolate(img, {3, 2});
  EXPECT_EQ(up.dtype(), Dtype::Float32);
  EXPECT_EQ(up.sizes(), (Shape{1, 1, 3, 2}));
  // rows: 2->3 gives [0, 0, 1]; cols: 3->2 gives [0, 1].
  EXPECT_EQ(up.to_vector<double>(), (D{0, 1, 0, 1, 3, 4}));
  // Batches and channels are independent; non-contiguous input.
  const Tensor x = random_tensor({2, 3, 4}, 1);
  const Tensor y = interpolate(x.transpose(0, 1).contiguous().transpose(0, 1), {6});
  const D v = x.to_vector<double>(), o = y.to_vector<double>();
  for (std::int64_t r = 0; r < 6; ++r) {
    for (std::int64_t j = 0; j < 6; ++j) {
      const std::int64_t src = static_cast<std::int64_t>(std::floor(j * (4.0f / 6.0f)));
      EXPECT_EQ(o[r * 6 + j], v[r * 4 + std::min<std::int64_t>(src, 3)]);
    }
  }
}

TEST(InterpolateTest, LinearMatchesPyTorchOutputs) {
  EXPECT_EQ(interpolate(line(4), {8}, "linear").to_vector<double>(),
            (D{0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3}));
  EXPECT_EQ(interpolate(line(4), {7}, "linear", true).to_vector<double>(),
            (D{0, 0.5, 1, 1.5, 2, 2.5, 3}));
  EXPECT_EQ(interpolate(line(4), {2}, "linear").to_vector<double>(), (D{0.5, 2.5}));
  EXPECT_EQ(interpolate(line(4), {2}, "linear", true).to_vector<double>(), (D{0, 3}));
  EXPECT_EQ(interpolate(line(4), {1}, "linear", true).to_vector<double>(), (D{0}));
  EXPECT_EQ(interpolate(line(1), {3}, "linear").to_vector<double>(), (D{0, 0, 0}));
  const std::vector<float> f =
      interpolate(line(3).to(Dtype::Float32), {5}, "linear").to_vector<float>();
  // float32 computes the source position in float, like ATen's opmath for float.
  const float scale = 3.0f / 5.0f;
  const float lambda = scale * (1.0f + 0.5f) - 0.5f;
  EXPECT_EQ(f[1], lambda);
}

TEST(InterpolateTest, LinearAndBilinearMatchNaiveReference) {
  for (bool align : {false, true}) {
    SCOPED_TRACE(align);
    const Tensor x = random_tensor({2, 2, 5}, 2);
    const D v = x.to_vector<double>();
    for (std::int64_t out : {1, 3, 5, 9}) {
      const D o = interpolate(x, {out}, "linear", align).to_vector<double>();
      for (std::int64_t r = 0; r < 4; ++r) {
        for (std::int64_t j = 0; j < out; ++j) {
          const Taps t = taps(j, 5, out, align);
          EXPECT_NEAR(o[r * out + j], t.l0 * v[r * 5 + t.i0] + t.l1 * v[r * 5 + t.i1], 1e-12);
        }
      }
    }
    const Tensor img = random_tensor({1, 2, 3, 4}, 3);
    const D iv = img.to_vector<double>();
    const std::int64_t oh = 5, ow = 3;
    const D o = interpolate(img, {oh, ow}, "bilinear", align).to_vector<double>();
    for (std::int64_t c = 0; c < 2; ++c) {
      for (std::int64_t h = 0; h < oh; ++h) {
        for (std::int64_t w = 0; w < ow; ++w) {
          const Taps th = taps(h, 3, oh, align), tw = taps(w, 4, ow, align);
          auto at = [&](std::int64_t y, std::int64_t x) { return iv[(c * 3 + y) * 4 + x]; };
          const double expected = th.l0 * (tw.l0 * at(th.i0, tw.i0) + tw.l1 * at(th.i0, tw.i1)) +
                                  th.l1 * (tw.l0 * at(th.i1, tw.i0) + tw.l1 * at(th.i1, tw.i1));
          EXPECT_NEAR(o[(c * oh + h) * ow + w], expected, 1e-12);
        }
      }
    }
  }
}

TEST(InterpolateTest, GradsMatchFiniteDifferences) {
  for (std::int64_t out : {2, 7}) {
    expect_gradients_match_finite_differences(
        [out](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{interpolate(in[0], {out})};
        },
        {random_tensor({1, 2, 5}, 4)});
    for (bool align : {false, true}) {
      expect_gradients_match_finite_differences(
          [out, align](const std::vector<Tensor>& in) {
            return std::vector<Tensor>{interpolate(in[0], {out}, "linear", align)};
          },
          {random_tensor({2, 1, 4}, 5)});
      expect_gradients_match_finite_differences(
          [out, align](const std::vector<Tensor>& in) {
            return std::vector<Tensor>{interpolate(in[0], {out, 3}, "bilinear", align)};
          },
          {random_tensor({1, 2, 3, 2}, 6)});
    }
  }
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{interpolate(in[0], {5, 2})};
      },
      {random_tensor({1, 1, 2, 3}, 7)});
}

TEST(InterpolateTest, DoubleBackwardMatchesFiniteDifferences) {
  // The gradient (a scatter-add) is itself differentiable: check d/dx of d(sum(y²))/dx.
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        autograd::EnableGradGuard enable;
        const Tensor y = interpolate(in[0], {5, 3}, "bilinear");
        return autograd::grad({sum(y * y)}, {in[0]}, {}, /*retain_graph=*/true,
                              /*create_graph=*/true);
      },
      {random_tensor({1, 1, 2, 2}, 8)});
}

TEST(InterpolateTest, RejectsBadArguments) {
  EXPECT_THROW(interpolate(zeros({1, 1, 4}), {2, 2}), Error);
  expect_error(
      [] {
        interpolate(zeros({1, 1, 4}), {2, 2});
      },
      "Input and output must have the same number of spatial dimensions, but got input with "
      "spatial "
      "dimensions of [4] and output size of [2, 2]. Please provide input tensor in (N, C, d1, d2, "
      "...,dK) format and output size in (o1, o2, ...,oK) format.");
  expect_error(
      [] {
        interpolate(zeros({1, 1, 4, 4}), {2, 2}, "linear");
      },
      "Got 4D input, but linear mode needs 3D input");
  expect_error(
      [] {
        interpolate(zeros({1, 1, 4}), {2}, "bilinear");
      },
      "Got 3D input, but bilinear mode needs 4D input");
  expect_error(
      [] {
        interpolate(zeros({1, 1, 4}), {2}, "nearest", true);
      },
      "align_corners option can only be set with the interpolating modes: linear | bilinear | "
      "bicubic | "
      "trilinear");
  expect_error(
      [] {
        interpolate(zeros({1, 4}), {2});
      },
      "Input Error: Only 3D, 4D and 5D input Tensors supported (got 2D) for the modes: nearest | "
      "linear | "
      "bilinear | bicubic | trilinear | area | nearest-exact (got nearest)");
  expect_error([] { interpolate(zeros({1, 1, 4}), {2}, "cubic"); }, "(got cubic)");
  expect_error(
      [] {
        interpolate(zeros({1, 1, 4}), {0});
      },
      "Input and output sizes should be greater than 0, but got input (W: 4) and output (W: 0)");
  expect_error(
      [] {
        interpolate(zeros({1, 1, 0, 2}), {2, 2}, "bilinear");
      },
      "Input and output sizes should be greater than 0, but got input (H: 0, W: 2) and output (H: "
      "2, W: 2)");
  expect_error(
      [] {
        interpolate(zeros({1, 1, 4}, dtype(Dtype::Int64)), {2});
      },
      "not implemented for 'int64'");
}

}  // namespace
}  // namespace weft
