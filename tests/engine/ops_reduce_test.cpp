// Reductions (sum, mean, prod, max/min, argmax/argmin, var/std, logsumexp): values against
// naive loops along every dim of non-contiguous inputs, gradients against finite differences,
// and PyTorch's conventions for NaN, ties, empty and rank-0 inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "expect_error.h"
#include "expect_values.h"
#include "gradcheck.h"
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

// A non-contiguous float64 [3, 4, 5] tensor: a permuted view of a [5, 3, 4] one.
Tensor noncontiguous_input(std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  Tensor x = random_tensor({5, 3, 4}, seed, lo, hi).permute({1, 2, 0});
  EXPECT_FALSE(x.is_contiguous());
  return x;
}

// Applies f to each line of x (row-major values) along `dim`; returns the outputs in
// row-major order of the reduced shape.
std::vector<double> reduce_lines(const Tensor& x, std::int64_t dim,
                                 const std::function<double(const std::vector<double>&)>& f) {
  const std::vector<double> v = x.to_vector<double>();
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t d = 0; d < dim; ++d) outer *= x.size(d);
  for (std::int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  const std::int64_t size = x.dim() == 0 ? 1 : x.size(dim);
  std::vector<double> out;
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      std::vector<double> line;
      for (std::int64_t k = 0; k < size; ++k) line.push_back(v[(o * size + k) * inner + i]);
      out.push_back(f(line));
    }
  }
  return out;
}

Shape reduced_shape(const Tensor& x, std::int64_t dim, bool keepdim) {
  Shape s;
  for (std::int64_t d = 0; d < x.dim(); ++d) {
    if (d != dim)
      s.push_back(x.size(d));
    else if (keepdim)
      s.push_back(1);
  }
  return s;
}

std::vector<double> grad_of(const Tensor& input, const std::function<Tensor(const Tensor&)>& f) {
  Tensor x = input.detach().clone();
  x.requires_grad_(true);
  f(x).backward();
  return x.grad().to_vector<double>();
}

// ---- sum and mean ----

TEST(Reduce, SumAndMeanOfEmptyAreZeroAndNaN) {
  const Tensor e = zeros({0, 3});
  EXPECT_EQ(sum(e).item(), 0.0);
  EXPECT_TRUE(std::isnan(mean(e).item()));
  EXPECT_EQ(sum(e, {0}).sizes(), (Shape{3}));
  expect_values(sum(e, {0}), {0, 0, 0}, 0, "sum over empty dim");
  EXPECT_EQ(sum(e, {1}).sizes(), (Shape{0}));
}

TEST(Reduce, SumOfIntegersAndBoolIsInt64) {
  EXPECT_EQ(sum(tensor(std::vector<std::int32_t>{1, 2, 3})).dtype(), Dtype::Int64);
  const Tensor b = sum(tensor(std::vector<bool>{true, false, true}));
  EXPECT_EQ(b.dtype(), Dtype::Int64);
  EXPECT_EQ(b.item(), 2.0);
}

TEST(Reduce, SumAndMeanMatchNaiveOnNonContiguousInput) {
  const Tensor x = noncontiguous_input(1);
  for (std::int64_t dim = -3; dim < 3; ++dim) {
    const std::int64_t d = dim < 0 ? dim + 3 : dim;
    auto total = [](const std::vector<double>& l) {
      double s = 0;
      for (double v : l) s += v;
      return s;
    };
    expect_values(sum(x, {dim}), reduce_lines(x, d, total), 1e-12, "sum");
    expect_values(
        mean(x, {dim}, true),
        reduce_lines(x, d, [&](const std::vector<double>& l) { return total(l) / l.size(); }),
        1e-12, "mean");
    EXPECT_EQ(mean(x, {dim}, true).sizes(), reduced_shape(x, d, true));
  }
}

// ---- prod ----

TEST(Reduce, ProdMatchesNaiveAlongEveryDimOnNonContiguousInput) {
  const Tensor x = noncontiguous_input(2, 0.5, 1.5);
  for (std::int64_t dim = -3; dim < 3; ++dim) {
    const std::int64_t d = dim < 0 ? dim + 3 : dim;
    for (bool keepdim : {false, true}) {
      const Tensor y = prod(x, dim, keepdim);
      EXPECT_EQ(y.sizes(), reduced_shape(x, d, keepdim));
      expect_values(y,
                    reduce_lines(x, d,
                                 [](const std::vector<double>& l) {
                                   double p = 1;
                                   for (double v : l) p *= v;
                                   return p;
                                 }),
                    1e-12, "prod dim " + std::to_string(dim));
    }
  }
  double all = 1;
  for (double v : x.to_vector<double>()) all *= v;
  EXPECT_NEAR(prod(x).item(), all, 1e-12 * std::fabs(all));
  EXPECT_EQ(prod(x, std::nullopt, true).sizes(), (Shape{1, 1, 1}));
}

TEST(Reduce, ProdOfIntegersAndBoolIsInt64) {
  const Tensor i = prod(tensor(std::vector<std::int32_t>{2, -3, 4}), 0);
  EXPECT_EQ(i.dtype(), Dtype::Int64);
  EXPECT_EQ(i.item(), -24.0);
  const Tensor b = prod(tensor(std::vector<bool>{true, false}));
  EXPECT_EQ(b.dtype(), Dtype::Int64);
  EXPECT_EQ(b.item(), 0.0);
  // Wraps around like LibTorch's int64 arithmetic.
  const std::int64_t big = std::int64_t(1) << 40;
  EXPECT_EQ(prod(tensor(std::vector<std::int64_t>{big, big})).item<std::int64_t>(), 0);
}

TEST(Reduce, ProdOfEmptyIsOneAndRankZeroAcceptsDimZero) {
  expect_values(prod(zeros({0, 3}), 0), {1, 1, 1}, 0, "prod over empty dim");
  EXPECT_EQ(prod(zeros({0, 3})).item(), 1.0);
  EXPECT_EQ(prod(zeros({0, 3}), 1).sizes(), (Shape{0}));
  const Tensor s = scalar_tensor(3.0);
  EXPECT_EQ(prod(s, 0).item(), 3.0);
  EXPECT_EQ(prod(s, -1, true).sizes(), Shape{});
  EXPECT_THROW(prod(tensor(std::vector<float>{1, 2}), 2), Error);
}

TEST(Reduce, ProdGradientWithZerosIsTheProductOfTheOthers) {
  const Tensor x = tensor(std::vector<double>{2, 0, 3, 0, 0, 1}, {2, 3});
  expect_values(tensor(grad_of(x, [](const Tensor& t) { return sum(prod(t, 1)); })),
                {0, 6, 0, 0, 0, 0}, 0, "one zero per row");
  expect_values(tensor(grad_of(x, [](const Tensor& t) { return prod(t); })), {0, 0, 0, 0, 0, 0}, 0,
                "several zeros");
  const Tensor one_zero = tensor(std::vector<double>{2, 1, 3, 5, 0, 1}, {2, 3});
  expect_values(tensor(grad_of(one_zero, [](const Tensor& t) { return prod(t); })),
                {0, 0, 0, 0, 30, 0}, 0, "a single zero");
  const Tensor no_zero = tensor(std::vector<double>{2, 1, 3, 5, 4, 1}, {2, 3});
  expect_values(tensor(grad_of(no_zero, [](const Tensor& t) { return prod(t); })),
                {60, 120, 40, 24, 30, 120}, 0, "no zero");
}

TEST(Reduce, ProdGradMatchesFiniteDifferences) {
  for (std::int64_t dim : {0, 1, -1}) {
    for (bool keepdim : {false, true}) {
      expect_gradients_match_finite_differences(
          [dim, keepdim](const std::vector<Tensor>& in) {
            return std::vector<Tensor>{prod(in[0].permute({1, 0, 2}), dim, keepdim)};
          },
          {random_tensor({3, 4, 2}, 3, 0.5, 1.5)});
    }
  }
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{prod(in[0])}; },
      {random_tensor({2, 3}, 4, 0.5, 1.5)});
}

// ---- max / min ----

// Values from a small set, so that ties are common.
Tensor tie_heavy_input(std::uint64_t seed) {
  return floor(random_tensor({5, 3, 4}, seed, 0.0, 3.0)).permute({1, 2, 0});
}

TEST(Reduce, MaxMinAlongDimMatchNaiveAndPickTheFirstTie) {
  for (Dtype type : {Dtype::Float64, Dtype::Float32, Dtype::Int64, Dtype::Int32}) {
    const Tensor x = tie_heavy_input(5).to(type);
    for (std::int64_t d = 0; d < 3; ++d) {
      for (bool is_max : {true, false}) {
        auto [values, indices] = is_max ? max(x, d) : min(x, d);
        EXPECT_EQ(values.dtype(), type);
        EXPECT_EQ(indices.dtype(), Dtype::Int64);
        auto best = [is_max](const std::vector<double>& l) {
          std::size_t at = 0;
          for (std::size_t k = 1; k < l.size(); ++k) {
            if (is_max ? l[k] > l[at] : l[k] < l[at]) at = k;
          }
          return static_cast<double>(at);
        };
        expect_values(indices, reduce_lines(x, d, best), 0, "indices");
        expect_values(values,
                      reduce_lines(x, d,
                                   [&](const std::vector<double>& l) {
                                     return l[static_cast<std::size_t>(best(l))];
                                   }),
                      0, "values");
        const Tensor a = is_max ? argmax(x, d) : argmin(x, d);
        expect_values(a, indices.to_vector<double>(), 0, "argmax/argmin");
      }
    }
  }
}

TEST(Reduce, MaxMinKeepdimAndNegativeDim) {
  const Tensor x = tie_heavy_input(6);
  auto [v, i] = max(x, -2, true);
  EXPECT_EQ(v.sizes(), (Shape{3, 1, 5}));
  EXPECT_EQ(i.sizes(), (Shape{3, 1, 5}));
  auto [v2, i2] = min(x, 0);
  EXPECT_EQ(v2.sizes(), (Shape{4, 5}));
  EXPECT_EQ(argmin(x, -1, true).sizes(), (Shape{3, 4, 1}));
}

TEST(Reduce, MaxAndMinPropagateNaNAtItsFirstIndex) {
  const Tensor x = tensor(std::vector<double>{1, kNaN, 3, kNaN});
  auto [v, i] = max(x, 0);
  EXPECT_TRUE(std::isnan(v.item()));
  EXPECT_EQ(i.item(), 1.0);
  auto [v2, i2] = min(tensor(std::vector<float>{1, 0, kNaN, 2}), 0);
  EXPECT_TRUE(std::isnan(v2.item()));
  EXPECT_EQ(i2.item(), 2.0);
  EXPECT_TRUE(std::isnan(max(x).item()));
  EXPECT_TRUE(std::isnan(min(x).item()));
  // NaN is the extreme for both argmax and argmin.
  EXPECT_EQ(argmax(x).item(), 1.0);
  EXPECT_EQ(argmin(tensor(std::vector<double>{1, kNaN, -3, kNaN})).item(), 1.0);
  // Columns: NaN in the middle of a non-last dim.
  const Tensor cols = tensor(std::vector<double>{1, 5, kNaN, 2, 0, kNaN}, {3, 2});
  expect_values(std::get<1>(max(cols, 0)), {1, 2}, 0, "column NaN index");
  expect_values(argmin(cols, 0), {1, 2}, 0, "column argmin NaN");
}

TEST(Reduce, MaxAlongContiguousRowsKeepsTheFirstTieAndSignedZero) {
  // The last dim of a contiguous tensor takes the vectorized path.
  const Tensor z = tensor(std::vector<double>{-0.0, 0.0, -1.0, 0.0, -0.0, 1.0}, {2, 3});
  auto [v, i] = max(z, 1);
  expect_values(i, {0, 2}, 0, "max indices");
  EXPECT_TRUE(std::signbit(v.to_vector<double>()[0]));
  auto [v2, i2] = min(z, 1);
  expect_values(i2, {2, 0}, 0, "min indices");
  EXPECT_FALSE(std::signbit(v2.to_vector<double>()[1]));  // 0.0 came first, -0.0 ties it
  const Tensor ints = tensor(std::vector<std::int32_t>{4, 9, 9, 1, 9, 1, 1, 4}, {2, 4});
  expect_values(argmax(ints, 1), {1, 0}, 0, "int argmax");
  expect_values(argmin(ints, 1), {3, 1}, 0, "int argmin");
  expect_values(argmax(tensor(std::vector<float>{kNaN, 2, kNaN})), {0}, 0, "NaN first");
}

TEST(Reduce, MaxOfBoolWorksAndArgmaxOfBoolThrows) {
  const Tensor b = tensor(std::vector<bool>{false, true, true});
  auto [v, i] = max(b, 0);
  EXPECT_EQ(v.dtype(), Dtype::Bool);
  EXPECT_EQ(v.item(), 1.0);
  EXPECT_EQ(i.item(), 1.0);
  EXPECT_EQ(min(b).item(), 0.0);
  expect_error([&] { argmax(b); }, "\"argmax_cpu\" not implemented for 'Bool'");
}

TEST(Reduce, MaxOverEmptyInputsFailsLikePyTorch) {
  const Tensor e = zeros({3, 0});
  expect_error([&] { max(e, -1); }, "max(): Expected reduction dim 1 to have non-zero size.");
  expect_error([&] { min(e, 1); }, "min(): Expected reduction dim 1 to have non-zero size.");
  expect_error([&] { argmax(e, 1); }, "argmax(): Expected reduction dim 1 to have non-zero size.");
  expect_error([&] { max(e); },
               "max(): Expected reduction dim to be specified for input.numel() == 0.");
  expect_error([&] { min(zeros({0})); },
               "min(): Expected reduction dim to be specified for input.numel() == 0.");
  expect_error([&] { argmin(e); },
               "argmin(): Expected reduction dim to be specified for input.numel() == 0.");
  // Reducing a non-empty dim of an empty tensor is fine.
  auto [v, i] = max(e, 0);
  EXPECT_EQ(v.sizes(), (Shape{0}));
  EXPECT_EQ(argmax(e, 0).sizes(), (Shape{0}));
}

TEST(Reduce, ArgmaxWithoutDimFlattensAndKeepdimGivesOnes) {
  const Tensor x = tensor(std::vector<double>{1, 2, 3, 0}, {2, 2});
  EXPECT_EQ(argmax(x).item(), 2.0);
  EXPECT_EQ(argmax(x).sizes(), Shape{});
  EXPECT_EQ(argmax(x, std::nullopt, true).sizes(), (Shape{1, 1}));
  EXPECT_EQ(argmin(x.t()).item(), 3.0);  // flattened in logical (row-major) order
  EXPECT_EQ(argmax(tensor(std::vector<std::int64_t>{3, 1, 3})).item(), 0.0);
}

TEST(Reduce, RankZeroInputsAcceptDimZeroAndMinusOne) {
  const Tensor s = scalar_tensor(5.0, dtype(Dtype::Float64));
  for (std::int64_t d : {0, -1}) {
    auto [v, i] = max(s, d, true);
    EXPECT_EQ(v.sizes(), Shape{});
    EXPECT_EQ(v.item(), 5.0);
    EXPECT_EQ(i.item(), 0.0);
    EXPECT_EQ(std::get<0>(min(s, d)).item(), 5.0);
    EXPECT_EQ(argmax(s, d).item(), 0.0);
    EXPECT_EQ(argmin(s, d, true).sizes(), Shape{});
    EXPECT_EQ(sum(s, {d}).item(), 5.0);
    EXPECT_EQ(mean(s, {d}).item(), 5.0);
    EXPECT_EQ(logsumexp(s, {d}).item(), 5.0);
    EXPECT_TRUE(std::isnan(var(s, {d}).item()));
    EXPECT_EQ(var(s, {d}, 0).item(), 0.0);
  }
  EXPECT_EQ(max(s).item(), 5.0);
  EXPECT_EQ(argmax(s).item(), 0.0);
  EXPECT_THROW(max(s, 1), Error);
}

TEST(Reduce, MaxAlongDimGradientGoesToTheChosenIndex) {
  const Tensor x = tensor(std::vector<double>{1, 3, 3, 2});
  expect_values(tensor(grad_of(x, [](const Tensor& t) { return std::get<0>(max(t, 0)); })),
                {0, 1, 0, 0}, 0, "max dim");
  expect_values(tensor(grad_of(x, [](const Tensor& t) { return std::get<0>(min(t, 0)); })),
                {1, 0, 0, 0}, 0, "min dim");
  const Tensor m = tensor(std::vector<double>{1, 5, 3, 2}, {2, 2});
  expect_values(
      tensor(grad_of(m, [](const Tensor& t) { return sum(std::get<0>(max(t, 0, true))); })),
      {0, 1, 1, 0}, 0, "max dim 0 keepdim");
}

TEST(Reduce, MaxOfAllGradientIsSharedEvenlyAmongTies) {
  expect_values(tensor(grad_of(tensor(std::vector<double>{1, 3, 3, 2}),
                               [](const Tensor& t) { return max(t); })),
                {0, 0.5, 0.5, 0}, 0, "max ties");
  expect_values(tensor(grad_of(tensor(std::vector<double>{1, kNaN, 3, kNaN}),
                               [](const Tensor& t) { return max(t); })),
                {0, 0.5, 0, 0.5}, 0, "max NaN");
  expect_values(tensor(grad_of(tensor(std::vector<double>{0, 0, 0, 2}),
                               [](const Tensor& t) { return min(t) * 3.0; })),
                {1, 1, 1, 0}, 0, "min ties");
}

TEST(Reduce, MaxMinGradMatchesFiniteDifferences) {
  for (std::int64_t dim : {0, 1, 2, -1}) {
    expect_gradients_match_finite_differences(
        [dim](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{std::get<0>(max(in[0].transpose(0, 2), dim)),
                                     std::get<0>(min(in[0], dim, true))};
        },
        {random_tensor({3, 4, 2}, 7)});
  }
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{max(in[0]), min(in[0])};
      },
      {random_tensor({3, 4}, 8)});
}

// ---- var / std ----

double naive_var(const std::vector<double>& l, std::int64_t correction) {
  double m = 0;
  for (double v : l) m += v;
  m /= static_cast<double>(l.size());
  double m2 = 0;
  for (double v : l) m2 += (v - m) * (v - m);
  return m2 / std::max<double>(0, static_cast<double>(l.size()) - correction);
}

TEST(Reduce, VarAndStdMatchNaiveAlongEveryDim) {
  const Tensor x = noncontiguous_input(9);
  for (std::int64_t correction : {0, 1, 2}) {
    for (std::int64_t dim = -3; dim < 3; ++dim) {
      const std::int64_t d = dim < 0 ? dim + 3 : dim;
      const std::vector<double> expected = reduce_lines(
          x, d, [correction](const std::vector<double>& l) { return naive_var(l, correction); });
      for (bool keepdim : {false, true}) {
        const Tensor v = var(x, {dim}, correction, keepdim);
        EXPECT_EQ(v.sizes(), reduced_shape(x, d, keepdim));
        expect_values(v, expected, 1e-12, "var");
        std::vector<double> roots;
        for (double e : expected) roots.push_back(std::sqrt(e));
        expect_values(weft::std(x, {dim}, correction, keepdim), roots, 1e-12, "std");
      }
    }
    const std::vector<double> all = x.to_vector<double>();
    EXPECT_NEAR(var(x, {}, correction).item(), naive_var(all, correction), 1e-12);
  }
}

TEST(Reduce, VarOverSeveralDimsOfFloat32) {
  const Tensor x = noncontiguous_input(10).to(Dtype::Float32);
  const Tensor v = var(x, {0, 2}, 1, true);
  EXPECT_EQ(v.sizes(), (Shape{1, 4, 1}));
  EXPECT_EQ(v.dtype(), Dtype::Float32);
  const Tensor x64 = x.to(Dtype::Float64);
  const std::vector<double> got = v.to_vector<double>();
  for (std::int64_t j = 0; j < 4; ++j) {
    const std::vector<double> line = x64.select(1, j).contiguous().to_vector<double>();
    EXPECT_NEAR(got[static_cast<std::size_t>(j)], naive_var(line, 1), 1e-6);
  }
  EXPECT_EQ(var(x, {-1, 0}).sizes(), (Shape{4}));
  expect_error([&] { var(x, {0, -3}); }, "dim 0 appears multiple times in the list of dims");
}

TEST(Reduce, VarWithTooFewElementsIsNaNOrInfLikePyTorch) {
  EXPECT_TRUE(std::isnan(var(tensor(std::vector<double>{1})).item()));
  EXPECT_EQ(var(tensor(std::vector<double>{1, 2}), {}, 2).item(), kInf);
  EXPECT_EQ(var(tensor(std::vector<double>{1, 2}), {0}, 3).item(), kInf);
  EXPECT_TRUE(std::isnan(var(tensor(std::vector<double>{1, 1}), {0}, 3).item()));
  EXPECT_TRUE(std::isnan(var(zeros({0})).item()));
  EXPECT_TRUE(std::isnan(var(zeros({0}), {}, 0).item()));
  expect_values(var(zeros({0, 3}), {0}), {kNaN, kNaN, kNaN}, 0, "var over empty dim");
  EXPECT_EQ(var(zeros({0, 3}), {1}).sizes(), (Shape{0}));
  EXPECT_TRUE(std::isnan(weft::std(tensor(std::vector<double>{1})).item()));
  EXPECT_TRUE(std::isnan(var(tensor(std::vector<double>{kInf, 1})).item()));
}

TEST(Reduce, VarOfIntegersThrows) {
  expect_error(
      [] {
        var(tensor(std::vector<std::int64_t>{1, 2}));
      },
      "std and var only support floating point and complex dtypes");
  expect_error([] { weft::std(tensor(std::vector<bool>{true})); },
               "std and var only support floating point");
}

TEST(Reduce, VarAndStdGradMatchFiniteDifferences) {
  for (std::int64_t correction : {0, 1}) {
    expect_gradients_match_finite_differences(
        [correction](const std::vector<Tensor>& in) {
          const Tensor x = in[0].permute({2, 0, 1});
          return std::vector<Tensor>{var(x, {0, 2}, correction), var(x, {-1}, correction, true),
                                     weft::std(x, {1}, correction), weft::std(x, {}, correction),
                                     var(x, {}, correction, true)};
        },
        {random_tensor({3, 4, 2}, 11)});
  }
}

TEST(Reduce, VarGradientWithTooFewElementsFollowsPyTorch) {
  // Explicit dims with n == correction: 2/0 * (x - mean) is ±inf, NaN where x is the mean.
  expect_values(tensor(grad_of(tensor(std::vector<double>{1, 2}),
                               [](const Tensor& t) { return var(t, {0}, 2); })),
                {-kInf, kInf}, 0, "dims, n == correction");
  // Explicit dims with n < correction: the formula with a negative divisor.
  expect_values(tensor(grad_of(tensor(std::vector<double>{1, 2}),
                               [](const Tensor& t) { return var(t, {0}, 3); })),
                {1, -1}, 0, "dims, n < correction");
  // Every dim: NaN where x equals the mean, inf elsewhere.
  expect_values(tensor(grad_of(tensor(std::vector<double>{1, 2}),
                               [](const Tensor& t) { return var(t, {}, 2); })),
                {kInf, kInf}, 0, "all dims");
  expect_values(tensor(grad_of(scalar_tensor(1.0, dtype(Dtype::Float64)),
                               [](const Tensor& t) { return var(t, {0}); })),
                {kNaN}, 0, "rank 0");
}

TEST(Reduce, StdGradientIsZeroWhereStdIsZero) {
  expect_values(tensor(grad_of(tensor(std::vector<double>{1, 1}),
                               [](const Tensor& t) { return weft::std(t, {0}); })),
                {0, 0}, 0, "constant input");
  expect_values(tensor(grad_of(tensor(std::vector<double>{1, 1, 2, 2}, {2, 2}),
                               [](const Tensor& t) { return sum(weft::std(t, {0})); })),
                {-std::sqrt(0.5), -std::sqrt(0.5), std::sqrt(0.5), std::sqrt(0.5)}, 1e-12, "std");
}

// ---- logsumexp ----

TEST(Reduce, LogsumexpMatchesNaiveAndIsStable) {
  const Tensor x = noncontiguous_input(12, -3, 3);
  for (std::int64_t dim = -3; dim < 3; ++dim) {
    const std::int64_t d = dim < 0 ? dim + 3 : dim;
    const Tensor y = logsumexp(x, {dim}, true);
    EXPECT_EQ(y.sizes(), reduced_shape(x, d, true));
    expect_values(y,
                  reduce_lines(x, d,
                               [](const std::vector<double>& l) {
                                 double s = 0;
                                 for (double v : l) s += std::exp(v);
                                 return std::log(s);
                               }),
                  1e-12, "logsumexp");
  }
  EXPECT_EQ(logsumexp(x, {0, 2}).sizes(), (Shape{4}));
  EXPECT_EQ(logsumexp(x, {}).sizes(), Shape{});
  // exp(1000) overflows; the shifted form does not.
  const Tensor big = tensor(std::vector<float>{1000, 1000});
  EXPECT_NEAR(logsumexp(big, {0}).item(), 1000 + std::log(2.0), 1e-3);
  const Tensor small = tensor(std::vector<double>{-1000, -1000});
  EXPECT_NEAR(logsumexp(small, {0}).item(), -1000 + std::log(2.0), 1e-9);
}

TEST(Reduce, LogsumexpOfInfiniteAndEmptyRows) {
  expect_values(
      logsumexp(tensor(std::vector<double>{-kInf, -kInf, kInf, 1, kInf, -kInf, kNaN, 1}, {4, 2}),
                {1}),
      {-kInf, kInf, kInf, kNaN}, 0, "special rows");
  EXPECT_EQ(logsumexp(zeros({0}), {0}).item(), -kInf);
  expect_values(logsumexp(zeros({0, 2}), {0}), {-kInf, -kInf}, 0, "empty dim");
}

TEST(Reduce, LogsumexpOfIntegersIsFloat32) {
  const Tensor y = logsumexp(tensor(std::vector<std::int64_t>{1, 2}), {0});
  EXPECT_EQ(y.dtype(), Dtype::Float32);
  EXPECT_NEAR(y.item(), std::log(std::exp(1.0) + std::exp(2.0)), 1e-6);
  EXPECT_NEAR(logsumexp(tensor(std::vector<bool>{true}), {0}).item(), 1.0, 1e-7);
}

TEST(Reduce, LogsumexpGradMatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        const Tensor x = in[0].transpose(0, 1);
        return std::vector<Tensor>{logsumexp(x, {0}), logsumexp(x, {-1, 0}, true),
                                   logsumexp(x, {2})};
      },
      {random_tensor({3, 4, 2}, 13, -2, 2)});
}

TEST(Reduce, LogsumexpGradientOfInfiniteRowsFollowsPyTorch) {
  expect_values(tensor(grad_of(tensor(std::vector<double>{-kInf, -kInf}),
                               [](const Tensor& t) { return logsumexp(t, {0}); })),
                {kNaN, kNaN}, 0, "all -inf");
  expect_values(tensor(grad_of(tensor(std::vector<double>{kInf, 1}),
                               [](const Tensor& t) { return logsumexp(t, {0}); })),
                {kNaN, 0}, 0, "+inf");
}

TEST(Reduce, DimOutOfRangeThrows) {
  const Tensor x = zeros({2, 3});
  expect_error([&] { max(x, 2); }, "Dimension out of range");
  expect_error([&] { argmax(x, -3); }, "Dimension out of range");
  expect_error([&] { prod(x, 5); }, "Dimension out of range");
  expect_error([&] { var(x, {2}); }, "Dimension out of range");
  expect_error([&] { logsumexp(x, {-3}); }, "Dimension out of range");
}

}  // namespace
}  // namespace weft
