// softmax and log_softmax: values against a naive double-precision reference along every dim
// (contiguous, non-contiguous, odd row lengths that leave vector tails), stability on large
// inputs, PyTorch's results on infinite rows, and gradients (fused and create_graph paths).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "expect_error.h"
#include "expect_values.h"
#include "gradcheck.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {
namespace {

using testing::expect_error;
using testing::expect_values;

using testing::expect_gradients_match_finite_differences;
using testing::random_tensor;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Naive softmax (or log_softmax) of x along dim, in double, row-major result.
std::vector<double> reference(const Tensor& x, std::int64_t dim, bool log) {
  const std::vector<double> v = x.to_vector<double>();
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t d = 0; d < dim; ++d) outer *= x.size(d);
  for (std::int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  const std::int64_t size = x.dim() == 0 ? 1 : x.size(dim);
  std::vector<double> out(v.size());
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      auto at = [&](std::int64_t k) {
        return static_cast<std::size_t>((o * size + k) * inner + i);
      };
      double m = -kInf;
      for (std::int64_t k = 0; k < size; ++k) m = std::max(m, v[at(k)]);
      double s = 0;
      for (std::int64_t k = 0; k < size; ++k) s += std::exp(v[at(k)] - m);
      for (std::int64_t k = 0; k < size; ++k) {
        out[at(k)] = log ? v[at(k)] - m - std::log(s) : std::exp(v[at(k)] - m) / s;
      }
    }
  }
  return out;
}

TEST(Softmax, MatchesNaiveAlongEveryDimOfNonContiguousInputs) {
  const Tensor base = random_tensor({5, 3, 4}, 1, -4, 4);
  for (const Tensor& x : {base, base.permute({1, 2, 0}), base.transpose(0, 2)}) {
    for (Dtype type : {Dtype::Float64, Dtype::Float32}) {
      const Tensor xt = x.to(type);
      const double tol = type == Dtype::Float64 ? 1e-13 : 2e-6;
      for (std::int64_t dim = -3; dim < 3; ++dim) {
        const std::int64_t d = dim < 0 ? dim + 3 : dim;
        const Tensor y = softmax(xt, dim);
        EXPECT_EQ(y.sizes(), xt.sizes());
        EXPECT_EQ(y.dtype(), type);
        expect_values(y, reference(xt, d, false), tol, "softmax dim " + std::to_string(dim));
        expect_values(log_softmax(xt, dim), reference(xt, d, true), tol,
                      "log_softmax dim " + std::to_string(dim));
      }
    }
  }
}

TEST(Softmax, LastDimRowsOfEveryLengthMatchNaive) {
  // Lengths around vector widths leave every kind of tail.
  for (std::int64_t n : {1, 2, 3, 7, 8, 9, 15, 16, 17, 33, 1000}) {
    for (Dtype type : {Dtype::Float32, Dtype::Float64}) {
      const Tensor x = random_tensor({3, n}, static_cast<std::uint64_t>(n), -10, 10).to(type);
      const double tol = type == Dtype::Float64 ? 1e-13 : 2e-6;
      expect_values(softmax(x, -1), reference(x, 1, false), tol, "softmax n=" + std::to_string(n));
      expect_values(log_softmax(x, 1), reference(x, 1, true), tol * 10,
                    "log_softmax n=" + std::to_string(n));
      expect_values(softmax(x, 0), reference(x, 0, false), tol, "softmax dim 0");
    }
  }
}

TEST(Softmax, SoftmaxRowsSumToOne) {
  const Tensor x = random_tensor({64, 1024}, 2, -20, 20).to(Dtype::Float32);
  const std::vector<double> sums = sum(softmax(x, 1), {1}).to_vector<double>();
  for (double s : sums) EXPECT_NEAR(s, 1.0, 1e-5);
}

TEST(Softmax, IsStableOnLargeInputs) {
  const Tensor x = tensor(std::vector<float>{1000, 1001, -1000, 999}, {1, 4});
  expect_values(softmax(x, 1), reference(x, 1, false), 1e-6, "softmax");
  expect_values(log_softmax(x, 1), reference(x, 1, true), 1e-6, "log_softmax");
  const Tensor cols = x.t();
  expect_values(softmax(cols, 0), reference(cols, 0, false), 1e-6, "softmax columns");
}

TEST(Softmax, InfiniteAndNaNRowsMatchPyTorch) {
  const Tensor x = tensor(std::vector<double>{-kInf, -kInf, kInf, 1, -kInf, 1, kNaN, 1}, {4, 2});
  expect_values(softmax(x, 1), {kNaN, kNaN, kNaN, kNaN, 0, 1, kNaN, kNaN}, 0, "softmax");
  expect_values(log_softmax(x, 1), {kNaN, kNaN, kNaN, kNaN, -kInf, 0, kNaN, kNaN}, 0,
                "log_softmax");
  // The same rows as columns (the non-last-dim kernel).
  const Tensor c = x.t().contiguous();
  expect_values(softmax(c, 0).t(), {kNaN, kNaN, kNaN, kNaN, 0, 1, kNaN, kNaN}, 0, "columns");
  expect_values(log_softmax(c, 0).t(), {kNaN, kNaN, kNaN, kNaN, -kInf, 0, kNaN, kNaN}, 0,
                "log columns");
}

TEST(Softmax, FarBelowTheMaxGivesExactTinyValuesAndZeros) {
  // Eigen's vectorized exp clamps its argument; the kernels must still return exp(-100) and 0.
  for (Dtype type : {Dtype::Float32, Dtype::Float64}) {
    const double lowest = type == Dtype::Float32 ? -100.0 : -740.0;
    std::vector<double> row(19, 0.0);
    row[3] = -kInf;
    row[5] = lowest;
    row[17] = -2000.0;
    const Tensor x = tensor(row, {1, 19}).to(type);
    const std::vector<double> y = softmax(x, 1).to_vector<double>();
    const std::vector<double> yc = softmax(x.t().contiguous(), 0).to_vector<double>();
    // exp(lowest) / 17 is a denormal a few ulps above 0; the clamped exp would give
    // exp(-88.7) / 17 (float) or exp(-709.8) / 17 (double), far larger.
    const double bound = type == Dtype::Float32 ? 1e-43 : 1e-320;
    for (const std::vector<double>* v : {&y, &yc}) {
      EXPECT_EQ((*v)[3], 0.0);
      EXPECT_EQ((*v)[17], 0.0);
      EXPECT_GT((*v)[5], 0.0);
      EXPECT_LT((*v)[5], bound);
    }
    // log_softmax's backward uses exp(y) too: at y = -inf it must be exactly g.
    Tensor xg = x.detach().clone();
    xg.requires_grad_(true);
    const Tensor w = random_tensor({1, 19}, 9).to(type);
    sum(mul(log_softmax(xg, 1), w)).backward();
    const double total = sum(w).item();
    EXPECT_NEAR(xg.grad().to_vector<double>()[3], w.to_vector<double>()[3], 1e-6);
    EXPECT_NEAR(xg.grad().to_vector<double>()[0], w.to_vector<double>()[0] - y[0] * total, 1e-5);
  }
}

TEST(Softmax, IntegerInputsThrowLikePyTorch) {
  expect_error(
      [] {
        softmax(tensor(std::vector<std::int64_t>{1, 2}), 0);
      },
      "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'");
  expect_error(
      [] {
        log_softmax(tensor(std::vector<std::int64_t>{1, 2}), -1);
      },
      "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'");
  expect_error(
      [] {
        softmax(tensor(std::vector<std::int32_t>{1, 2}, {2, 1}), 0);
      },
      "\"softmax_kernel_impl\" not implemented for 'Int'");
  expect_error([] { softmax(tensor(std::vector<bool>{true}), 0); }, "'Bool'");
  // An empty integer tensor passes, as in PyTorch.
  const Tensor empty_int = softmax(zeros({0, 3}, dtype(Dtype::Int64)), 1);
  EXPECT_EQ(empty_int.dtype(), Dtype::Int64);
  EXPECT_EQ(empty_int.sizes(), (Shape{0, 3}));
}

TEST(Softmax, RankZeroAndEmptyInputs) {
  const Tensor s = scalar_tensor(3.0);
  EXPECT_EQ(softmax(s, 0).item(), 1.0);
  EXPECT_EQ(softmax(s, -1).sizes(), Shape{});
  EXPECT_EQ(log_softmax(s, 0).item(), 0.0);
  EXPECT_EQ(softmax(zeros({0, 3}), 0).sizes(), (Shape{0, 3}));
  EXPECT_EQ(log_softmax(zeros({2, 0}), 1).sizes(), (Shape{2, 0}));
  EXPECT_THROW(softmax(zeros({2, 3}), 2), Error);
  EXPECT_THROW(log_softmax(s, 1), Error);
}

TEST(Softmax, GradMatchesFiniteDifferencesAlongEveryDim) {
  for (std::int64_t dim : {0, 1, 2, -1}) {
    expect_gradients_match_finite_differences(
        [dim](const std::vector<Tensor>& in) {
          const Tensor x = in[0].permute({2, 0, 1});
          return std::vector<Tensor>{softmax(x, dim), log_softmax(x, dim)};
        },
        {random_tensor({3, 4, 5}, 3, -2, 2)});
  }
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{softmax(in[0], 0), log_softmax(in[0], -1)};
      },
      {scalar_tensor(0.7, dtype(Dtype::Float64))});
}

TEST(Softmax, CreateGraphGradientMatchesTheFusedKernel) {
  for (std::int64_t dim : {0, 1}) {
    for (bool log : {false, true}) {
      Tensor x = random_tensor({4, 6}, 4, -2, 2);
      x.requires_grad_(true);
      const Tensor w = random_tensor({4, 6}, 5);
      auto loss = [&] { return sum(mul(log ? log_softmax(x, dim) : softmax(x, dim), w)); };
      const Tensor fused = autograd::grad({loss()}, {x})[0];
      const Tensor composite = autograd::grad({loss()}, {x}, {}, false, /*create_graph=*/true)[0];
      expect_values(composite, fused.to_vector<double>(), 1e-13, "create_graph");
    }
  }
}

TEST(Softmax, BackwardAcceptsAnExpandedUpstreamGradient) {
  // sum() sends back an expanded (stride 0) gradient; softmax rows sum to one, so the
  // gradient of sum(softmax(x)) is zero, and that of sum(log_softmax) is 1 - n * softmax.
  Tensor x = random_tensor({3, 5}, 6);
  x.requires_grad_(true);
  sum(softmax(x, 1)).backward();
  for (double g : x.grad().to_vector<double>()) EXPECT_NEAR(g, 0.0, 1e-15);
  Tensor x2 = x.detach().clone();
  x2.requires_grad_(true);
  sum(log_softmax(x2, 1)).backward();
  const std::vector<double> p = reference(x2.detach(), 1, false);
  const std::vector<double> g = x2.grad().to_vector<double>();
  for (std::size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], 1 - 5 * p[i], 1e-13);
}

}  // namespace
}  // namespace weft
