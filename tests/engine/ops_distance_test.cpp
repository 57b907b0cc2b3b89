// cdist and pdist against direct double-precision loops, PyTorch's conventions at zero
// distance, and their gradients (first and second order) against finite differences.
#include <gtest/gtest.h>

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

double norm_of_difference(const std::vector<double>& a, const std::vector<double>& b, double p) {
  double total = 0.0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const double d = std::abs(a[k] - b[k]);
    if (p == 0.0) {
      total += d != 0.0 ? 1.0 : 0.0;
    } else if (std::isinf(p)) {
      total = std::max(total, d);
    } else {
      total += std::pow(d, p);
    }
  }
  return p == 0.0 || std::isinf(p) ? total : std::pow(total, 1.0 / p);
}

std::vector<double> row(const std::vector<double>& v, std::int64_t r, std::int64_t m) {
  return std::vector<double>(v.begin() + r * m, v.begin() + (r + 1) * m);
}

TEST(Distance, CdistMatchesDirectLoopsForEveryP) {
  const Tensor x1 = random_tensor({2, 4, 3}, 1), x2 = random_tensor({2, 5, 3}, 2);
  const std::vector<double> a = x1.to_vector<double>(), b = x2.to_vector<double>();
  for (double p : {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, std::numeric_limits<double>::infinity()}) {
    const std::vector<double> got = cdist(x1, x2, p).to_vector<double>();
    ASSERT_EQ(got.size(), 40u);
    for (std::int64_t n = 0; n < 2; ++n) {
      for (std::int64_t i = 0; i < 4; ++i) {
        for (std::int64_t j = 0; j < 5; ++j) {
          EXPECT_NEAR(got[static_cast<std::size_t>((n * 4 + i) * 5 + j)],
                      norm_of_difference(row(a, n * 4 + i, 3), row(b, n * 5 + j, 3), p), 1e-12)
              << "p=" << p;
        }
      }
    }
  }
}

TEST(Distance, CdistBroadcastsBatchDimsAndKeepsEmptySides) {
  const Tensor x1 = random_tensor({2, 1, 3, 2}, 3), x2 = random_tensor({4, 5, 2}, 4);
  const Tensor d = cdist(x1, x2);
  ASSERT_EQ(d.sizes(), (Shape{2, 4, 3, 5}));
  // Batch (1, 2) pairs x1[1, 0] with x2[2].
  EXPECT_NEAR(d.to_vector<double>()[((1 * 4 + 2) * 3 + 1) * 5 + 4],
              norm_of_difference(row(x1.to_vector<double>(), 3 + 1, 2),
                                 row(x2.to_vector<double>(), 2 * 5 + 4, 2), 2.0),
              1e-12);
  EXPECT_EQ(cdist(random_tensor({0, 3}, 5), random_tensor({4, 3}, 6)).sizes(), (Shape{0, 4}));
  const Tensor no_columns = cdist(zeros({3, 0}), zeros({2, 0}));
  EXPECT_EQ(no_columns.sizes(), (Shape{3, 2}));
  for (double v : no_columns.to_vector<double>()) EXPECT_EQ(v, 0.0);
}

TEST(Distance, PdistIsTheUpperTriangleOfCdist) {
  const Tensor x = random_tensor({5, 3}, 7);
  for (double p : {0.5, 1.0, 2.0, 3.0, std::numeric_limits<double>::infinity()}) {
    const std::vector<double> all = cdist(x, x, p).to_vector<double>();
    std::vector<double> upper;
    for (int i = 0; i < 5; ++i) {
      for (int j = i + 1; j < 5; ++j) upper.push_back(all[static_cast<std::size_t>(i * 5 + j)]);
    }
    const std::vector<double> got = pdist(x, p).to_vector<double>();
    ASSERT_EQ(got.size(), upper.size());
    for (std::size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k], upper[k]) << "p=" << p;
  }
  EXPECT_EQ(pdist(random_tensor({1, 3}, 8)).sizes(), (Shape{0}));
}

TEST(Distance, ZeroDistancePassesNoGradient) {
  // Rows 0 and 2 are equal: their distance is 0, and PyTorch's backward gives it no gradient
  // (d sqrt at 0 would be infinite).
  Tensor x = tensor(std::vector<double>{0.5, -1.0, 2.0, 0.25, 0.5, -1.0}, {3, 2});
  x.requires_grad_();
  index_select(pdist(x), 0, tensor(std::vector<std::int64_t>{1}, {1})).sum().backward();
  for (double g : x.grad().to_vector<double>()) EXPECT_EQ(g, 0.0);
  Tensor y = random_tensor({3, 2}, 9);
  y.requires_grad_();
  cdist(y, y).sum().backward();
  for (double g : y.grad().to_vector<double>()) EXPECT_TRUE(std::isfinite(g));
}

TEST(Distance, GradientsMatchFiniteDifferences) {
  for (double p : {1.0, 1.5, 2.0, 3.0, std::numeric_limits<double>::infinity()}) {
    SCOPED_TRACE(p);
    expect_gradients_match_finite_differences(
        [p](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{cdist(in[0], in[1], p), pdist(in[2], p)};
        },
        {random_tensor({2, 3, 4}, 10), random_tensor({1, 2, 4}, 11), random_tensor({4, 3}, 12)});
  }
}

TEST(Distance, SecondDerivativeMatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        autograd::EnableGradGuard grad_mode;
        const Tensor y = cdist(in[0], in[1], 3.0).pow(2.0).sum() + pdist(in[0]).pow(3.0).sum();
        return autograd::grad({y}, {in[0], in[1]}, {}, true, true);
      },
      {random_tensor({3, 2}, 13), random_tensor({2, 2}, 14)});
}

TEST(Distance, InvalidArgumentsGivePyTorchMessages) {
  expect_error(
      [] {
        cdist(ones({3, 2}), ones({3, 4}));
      },
      "X1 and X2 must have the same number of columns. X1: 2 X2: 4");
  expect_error(
      [] {
        cdist(ones({3}), ones({3, 4}));
      },
      "cdist only supports at least 2D tensors, X1 got: 1D");
  expect_error(
      [] {
        cdist(ones({3, 2}), ones({3, 2}), -1.0);
      },
      "cdist only supports non-negative p values");
  expect_error(
      [] {
        cdist(ones({3, 2}).to(Dtype::Int64), ones({3, 2}));
      },
      "cdist only supports floating-point dtypes, X1 got: Long");
  expect_error([] { pdist(ones({2, 3, 2})); }, "pdist only supports 2D tensors, got: 3D");
  expect_error([] { pdist(ones({3, 2}), -0.5); }, "pdist only supports non-negative p values");
}

}  // namespace
}  // namespace weft
