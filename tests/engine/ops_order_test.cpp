// Reductions without indices (ops/reduce_any.cpp), scans (ops/scan.cpp) and reordering
// (ops/reorder.cpp), sorting (ops/sort.cpp): values written out by hand, PyTorch's conventions
// (ties share amax's gradient, NaN is "true", integer scans are int64), PyTorch's errors, and every
// gradient against finite differences. The op sweep compares each with LibTorch besides.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <tuple>
#include <vector>

#include "expect_error.h"
#include "gradcheck.h"
#include "weft/ops.h"

namespace weft {
namespace {

using testing::expect_error;
using testing::expect_gradients_match_finite_differences;
using testing::random_tensor;

std::vector<double> values(const Tensor& t) {
  return t.to_vector<double>();
}

Tensor doubles(std::vector<double> v, IntList shape) {
  return tensor(v).reshape(shape).clone();
}

TEST(OrderOps, AmaxAndAminReduceTheListedDims) {
  const Tensor x = doubles({1, 5, -2, 4, 0, 7}, {2, 3});
  EXPECT_EQ(values(amax(x, {1})), (std::vector<double>{5, 7}));
  EXPECT_EQ(values(amin(x, {0})), (std::vector<double>{1, 0, -2}));
  EXPECT_EQ(values(amax(x)), (std::vector<double>{7}));
  EXPECT_EQ(amax(x, {0, 1}, true).sizes(), (Shape{1, 1}));
  EXPECT_EQ(amin(x, {-1}, true).sizes(), (Shape{2, 1}));
  expect_error([&] { amax(zeros({0, 3}), {0}); }, "Expected reduction dim 0 to have non-zero size");
  expect_error([&] { amax(x, {1, -1}); }, "appears multiple times");
}

TEST(OrderOps, AmaxSharesTheGradientAmongTies) {
  Tensor x = doubles({3, 1, 3, 2}, {4});
  x.requires_grad_(true);
  amax(x).backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0.5, 0, 0.5, 0}));
}

TEST(OrderOps, AmaxAndAminGradientsMatchFiniteDifferences) {
  for (auto op : {&amax, &amin}) {
    expect_gradients_match_finite_differences(
        [op](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{op(in[0], {1}, false), op(in[0], {0, 2}, true),
                                     op(in[0], {}, false)};
        },
        {random_tensor({2, 3, 4}, 7)});
  }
}

TEST(OrderOps, AnyAndAllAreBoolAndCountNanAsTrue) {
  const Tensor x = doubles({0, 0, 1, 0, std::nan(""), 2}, {2, 3});
  const Tensor some = any(x, 1);
  EXPECT_EQ(some.dtype(), Dtype::Bool);
  EXPECT_EQ(values(some), (std::vector<double>{1, 1}));
  EXPECT_EQ(values(all(x, 0)), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(values(any(x)), (std::vector<double>{1}));
  EXPECT_EQ(values(all(x)), (std::vector<double>{0}));
  EXPECT_EQ(all(x, std::nullopt, true).sizes(), (Shape{1, 1}));
  EXPECT_EQ(values(any(zeros({0, 2}), 0)), (std::vector<double>{0, 0}));  // empty: False
  EXPECT_EQ(values(all(zeros({0, 2}), 0)), (std::vector<double>{1, 1}));  // empty: True
  EXPECT_EQ(values(any(tensor(std::vector<std::int64_t>{0, 3}))), (std::vector<double>{1}));
}

TEST(OrderOps, CumsumAndCumprodScanInOrder) {
  const Tensor x = doubles({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(values(cumsum(x, 1)), (std::vector<double>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(values(cumsum(x, 0)), (std::vector<double>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(values(cumprod(x, -1)), (std::vector<double>{1, 2, 6, 4, 20, 120}));
  const Tensor ints = cumsum(tensor(std::vector<bool>{true, false, true}), 0);
  EXPECT_EQ(ints.dtype(), Dtype::Int64);
  EXPECT_EQ(values(ints), (std::vector<double>{1, 1, 2}));
  EXPECT_EQ(cumprod(tensor(std::vector<std::int32_t>{2, 3}), 0).dtype(), Dtype::Int64);
  EXPECT_EQ(cumsum(zeros({0, 3}), 0).sizes(), (Shape{0, 3}));
  expect_error([&] { cumsum(x, 2); }, "Dimension out of range");
}

TEST(OrderOps, ScanGradientsMatchFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{cumsum(in[0], 1), cumsum(in[0], -1), cumprod(in[0], 0),
                                   cumprod(in[0], 2)};
      },
      {random_tensor({3, 2, 4}, 11, 0.5, 1.5)});
}

TEST(OrderOps, CumprodGradientIsExactWhereTheLineHoldsZeros) {
  // d/dx_k sum_j cumprod(x)_j: with x = [2, 0, 3, 0]: cumprod = [2, 0, 0, 0];
  // d/dx0 = 1 + x1 + x1 x2 + x1 x2 x3 = 1; d/dx1 = x0 + x0 x2 + x0 x2 x3 = 2 + 6 + 0 = 8;
  // d/dx2 = x0 x1 (1 + x3) = 0; d/dx3 = x0 x1 x2 = 0.
  Tensor x = doubles({2, 0, 3, 0}, {4});
  x.requires_grad_(true);
  sum(cumprod(x, 0)).backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{1, 8, 0, 0}));
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{cumprod(in[0], 1)}; },
      {doubles({1.5, 0, 2, 0.5, 0, 0, 1.2, 0.8}, {2, 4})});
}

TEST(OrderOps, FlipAndRollMoveElements) {
  const Tensor x = doubles({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(values(flip(x, {1})), (std::vector<double>{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(values(flip(x, {0, 1})), (std::vector<double>{6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(values(roll(x, {1}, {1})), (std::vector<double>{3, 1, 2, 6, 4, 5}));
  EXPECT_EQ(values(roll(x, {-1, 4}, {0, 1})), (std::vector<double>{6, 4, 5, 3, 1, 2}));
  EXPECT_EQ(values(roll(x, {2})), (std::vector<double>{5, 6, 1, 2, 3, 4}));  // flattened
  EXPECT_EQ(roll(x, {2}).sizes(), (Shape{2, 3}));
  expect_error([&] { flip(x, {0, -2}); }, "appears multiple times");
  expect_error([&] { roll(x, {1, 2}, {0}); }, "shifts and dimensions must align");
}

TEST(OrderOps, RepeatTilesAndAddsLeadingDims) {
  const Tensor x = doubles({1, 2}, {2});
  EXPECT_EQ(values(repeat(x, {2})), (std::vector<double>{1, 2, 1, 2}));
  const Tensor y = repeat(x, {2, 2});
  EXPECT_EQ(y.sizes(), (Shape{2, 4}));
  EXPECT_EQ(values(y), (std::vector<double>{1, 2, 1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(repeat(x, {0}).sizes(), (Shape{0}));
  expect_error(
      [&] {
        repeat(doubles({1, 2, 3, 4}, {2, 2}), {2});
      },
      "can not be smaller than number of dimensions");
}

TEST(OrderOps, DiagonalTakesTheOtherDimsThenTheDiagonal) {
  const Tensor x = doubles({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  EXPECT_EQ(values(diagonal(x)), (std::vector<double>{0, 5, 10}));
  EXPECT_EQ(values(diagonal(x, 1)), (std::vector<double>{1, 6, 11}));
  EXPECT_EQ(values(diagonal(x, -1)), (std::vector<double>{4, 9}));
  EXPECT_EQ(diagonal(x, 4).sizes(), (Shape{0}));
  const Tensor b = arange(0, 12, 1, Dtype::Float64).reshape({2, 3, 2});
  // dims 2 and 0: out[j, i] = b[i, j, i] for i < 2.
  EXPECT_EQ(values(diagonal(b, 0, 2, 0)), (std::vector<double>{0, 7, 2, 9, 4, 11}));
  expect_error([&] { diagonal(x, 0, 1, -1); }, "diagonal dimensions cannot be identical");
}

TEST(OrderOps, ReorderGradientsMatchFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        const Tensor& x = in[0];
        return std::vector<Tensor>{flip(x, {0, 2}), roll(x, {1, -3}, {1, 2}),
                                   repeat(x, {2, 1, 2, 1}), diagonal(x, 1, 2, 1),
                                   diagonal(x, -1, 0, 2)};
      },
      {random_tensor({2, 3, 4}, 5)});
}

TEST(OrderOps, SortOrdersEachLineAndPutsNanLast) {
  const Tensor x = doubles({3, std::nan(""), -1, 2, 0, 5, 4, 1}, {2, 4});
  const auto [ascending, order] = sort(x, 1, false, true);
  const std::vector<double> a = values(ascending);
  EXPECT_EQ(std::vector<double>(a.begin(), a.begin() + 3), (std::vector<double>{-1, 2, 3}));
  EXPECT_TRUE(std::isnan(a[3]));
  EXPECT_EQ(std::vector<double>(a.begin() + 4, a.end()), (std::vector<double>{0, 1, 4, 5}));
  EXPECT_EQ(order.dtype(), Dtype::Int64);
  EXPECT_EQ(order.to_vector<std::int64_t>(), (std::vector<std::int64_t>{2, 3, 0, 1, 0, 3, 2, 1}));
  const auto [descending, down] = sort(x, 0, true, false);
  EXPECT_EQ(down.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 0, 1, 0, 1, 1, 0, 1}));
  EXPECT_EQ(values(descending)[0], 3);
  EXPECT_EQ(argsort(x, -1, true, true).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{1, 0, 3, 2, 1, 2, 3, 0}));
}

TEST(OrderOps, StableSortKeepsTiesInTheirOrder) {
  const Tensor x = doubles({1, 0, 1, 0, 1}, {5});
  EXPECT_EQ(argsort(x, 0, false, true).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{1, 3, 0, 2, 4}));
  EXPECT_EQ(argsort(x, 0, true, true).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{0, 2, 4, 1, 3}));
  const Tensor ints = tensor(std::vector<std::int64_t>{7, -3, 7, 0}).clone();
  const auto [sorted, order] = sort(ints, 0, false, true);
  EXPECT_EQ(sorted.dtype(), Dtype::Int64);
  EXPECT_EQ(sorted.to_vector<std::int64_t>(), (std::vector<std::int64_t>{-3, 0, 7, 7}));
  EXPECT_EQ(order.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 3, 0, 2}));
}

TEST(OrderOps, TopkSelectsKOfTheLineInOrder) {
  const Tensor x = doubles({3, 9, -1, 2, 0, 5, 4, 1}, {2, 4});
  const auto [largest, where] = topk(x, 2, 1, true);
  EXPECT_EQ(largest.sizes(), (Shape{2, 2}));
  EXPECT_EQ(values(largest), (std::vector<double>{9, 3, 5, 4}));
  EXPECT_EQ(where.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 0, 1, 2}));
  const auto [smallest, at] = topk(x, 1, 0, false);
  EXPECT_EQ(values(smallest), (std::vector<double>{0, 5, -1, 1}));
  EXPECT_EQ(std::get<0>(topk(x, 0, 1, true)).sizes(), (Shape{2, 0}));
  // A 0-d input is a line of one; its result stays 0-d even for k = 0, as in PyTorch.
  const auto [scalar, index] = topk(scalar_tensor(2.5), 0, 0, true);
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(values(scalar), (std::vector<double>{2.5}));
  EXPECT_EQ(index.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0}));
  // Lines of no elements each (a size-0 dim after `dim`): nothing to order.
  EXPECT_EQ(std::get<1>(topk(zeros({3, 0}), 2, 0, true)).sizes(), (Shape{2, 0}));
  EXPECT_EQ(argsort(zeros({3, 0}), 0, false, false).sizes(), (Shape{3, 0}));
  expect_error([&] { topk(x, 5, 1, true); }, "selected index k out of range");
  expect_error([&] { topk(x, -1, 1, true); }, "selected index k out of range");
}

TEST(OrderOps, SortAndTopkGradientsGoBackToWhereEachValueCameFrom) {
  Tensor x = doubles({3, 9, -1, 2}, {4});
  x.requires_grad_(true);
  const auto [top, where] = topk(x, 2, 0, true);
  (top * doubles({10, 1}, {2})).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{1, 10, 0, 0}));
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{std::get<0>(sort(in[0], 1, false, false)),
                                   std::get<0>(sort(in[0], 0, true, true)),
                                   std::get<0>(topk(in[0], 2, -1, false))};
      },
      {random_tensor({3, 4}, 11)});
}

}  // namespace
}  // namespace weft
