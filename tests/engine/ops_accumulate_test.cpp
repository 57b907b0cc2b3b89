// Index-driven accumulation and index_put (ops/scatter_reduce.cpp), masked_fill (ops/compare.cpp),
// and group_norm / instance_norm (ops/norm.cpp): values written out by hand, PyTorch's conventions
// (integer means round down, ties share amax's gradient, a lone zero gets the exclusive
// product), PyTorch's errors, and gradients against finite differences. The op sweep compares
// each with LibTorch besides.
#include <gtest/gtest.h>

#include <cmath>
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

Tensor longs(std::vector<std::int64_t> v, IntList shape) {
  return tensor(v).reshape(shape).clone();
}

TEST(AccumulateOps, ScatterReduceCombinesEverySourceIntoItsTarget) {
  const Tensor self = doubles({1, 2, 3}, {3});
  const Tensor index = longs({0, 0, 2, 0}, {4});
  const Tensor src = doubles({4, -1, 5, 2}, {4});
  EXPECT_EQ(values(scatter_add(self, 0, index, src)), (std::vector<double>{6, 2, 8}));
  EXPECT_EQ(values(scatter_reduce(self, 0, index, src, "sum")), (std::vector<double>{6, 2, 8}));
  EXPECT_EQ(values(scatter_reduce(self, 0, index, src, "sum", false)),
            (std::vector<double>{5, 2, 5}));
  EXPECT_EQ(values(scatter_reduce(self, 0, index, src, "prod")), (std::vector<double>{-8, 2, 15}));
  EXPECT_EQ(values(scatter_reduce(self, 0, index, src, "mean")), (std::vector<double>{1.5, 2, 4}));
  EXPECT_EQ(values(scatter_reduce(self, 0, index, src, "mean", false)),
            (std::vector<double>{5.0 / 3.0, 2, 5}));
  EXPECT_EQ(values(scatter_reduce(self, 0, index, src, "amax")), (std::vector<double>{4, 2, 5}));
  EXPECT_EQ(values(scatter_reduce(self, 0, index, src, "amin", false)),
            (std::vector<double>{-1, 2, 5}));
  // Along dim 1 of a matrix, each row on its own.
  const Tensor rows = scatter_add(zeros({2, 3}, dtype(Dtype::Float64)), 1,
                                  longs({2, 2, 0, 1}, {2, 2}), doubles({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(values(rows), (std::vector<double>{0, 0, 3, 3, 4, 0}));
}

TEST(AccumulateOps, IntegerScatterMeansRoundDownAndProductsWrap) {
  const Tensor self = longs({-5, 7, 8}, {3});
  const Tensor mean =
      scatter_reduce(self, 0, longs({0, 0, 1}, {3}), longs({2, -4, 3}, {3}), "mean");
  EXPECT_EQ(mean.dtype(), Dtype::Int64);
  EXPECT_EQ(values(mean), (std::vector<double>{-3, 5, 8}));  // -7/3 and 10/2
  const Tensor big = longs({std::int64_t{1} << 62}, {1});
  const Tensor wrapped = scatter_reduce(big, 0, longs({0}, {1}), longs({4}, {1}), "prod");
  EXPECT_EQ(wrapped.to_vector<std::int64_t>()[0], 0);  // 2^64 wraps to 0, as in LibTorch
}

TEST(AccumulateOps, ScatterRefusesWhatPyTorchRefuses) {
  const Tensor self = zeros({2, 3}, dtype(Dtype::Float64));
  expect_error(
      [&] {
        scatter_add(self, 0, longs({2}, {1, 1}), doubles({1}, {1, 1}));
      },
      "index 2 is out of bounds for dimension 0 with size 2");
  expect_error([&] { scatter_add(self, 0, longs({0}, {1}), doubles({1}, {1})); },
               "Index tensor must have the same number of dimensions as self tensor");
  expect_error(
      [&] {
        scatter_add(self, 1, longs({0, 0, 0}, {3, 1}), doubles({1, 1, 1}, {3, 1}));
      },
      "to be smaller than self");
  expect_error(
      [&] {
        scatter_add(self, 0, longs({0}, {1, 1}), tensor(std::vector<float>{1}).reshape({1, 1}));
      },
      "Expected self.dtype to be equal to src.dtype");
  expect_error(
      [&] {
        scatter_reduce(self, 0, longs({0}, {1, 1}), doubles({1}, {1, 1}), "max");
      },
      "reduce argument must be either sum, prod, mean, amax or amin");
}

TEST(AccumulateOps, ScatterReduceGradientsMatchFiniteDifferences) {
  const Tensor index = longs({0, 2, 0, 1, 0, 0, 2, 1}, {4, 2});
  for (const char* how : {"sum", "prod", "mean", "amax", "amin"}) {
    for (bool include_self : {true, false}) {
      SCOPED_TRACE(std::string(how) + (include_self ? "" : " without self"));
      expect_gradients_match_finite_differences(
          [&](const std::vector<Tensor>& in) {
            return std::vector<Tensor>{scatter_reduce(in[0], 0, index, in[1], how, include_self)};
          },
          {random_tensor({3, 2}, 11, 0.5, 1.5), random_tensor({4, 2}, 12, -1.5, -0.5)});
    }
  }
}

TEST(AccumulateOps, AmaxTiesShareTheGradientAndALoneZeroGetsTheExclusiveProduct) {
  Tensor self = doubles({3, 0}, {2});
  Tensor src = doubles({3, 1, 3}, {3});
  self.requires_grad_(true);
  src.requires_grad_(true);
  scatter_reduce(self, 0, longs({0, 1, 0}, {3}), src, "amax").sum().backward();
  // Target 0 holds 3 three times (self and two sources): a third each.
  EXPECT_EQ(values(self.grad()), (std::vector<double>{1.0 / 3.0, 0}));
  EXPECT_EQ(values(src.grad()), (std::vector<double>{1.0 / 3.0, 1, 1.0 / 3.0}));

  Tensor base = doubles({2}, {1});
  Tensor factors = doubles({0, 5, 3}, {3});
  base.requires_grad_(true);
  factors.requires_grad_(true);
  scatter_reduce(base, 0, longs({0, 0, 0}, {3}), factors, "prod").sum().backward();
  EXPECT_EQ(values(base.grad()), (std::vector<double>{0}));
  EXPECT_EQ(values(factors.grad()), (std::vector<double>{30, 0, 0}));
}

TEST(AccumulateOps, IndexAddAddsScaledSlices) {
  const Tensor self = zeros({3, 2}, dtype(Dtype::Float64));
  const Tensor out =
      index_add(self, 0, longs({2, 0, 2}, {3}), doubles({1, 2, 3, 4, 5, 6}, {3, 2}), 0.5);
  EXPECT_EQ(values(out), (std::vector<double>{1.5, 2, 0, 0, 3, 4}));
  expect_error(
      [&] {
        index_add(self, 0, longs({3}, {1}), doubles({1, 2}, {1, 2}));
      },
      "index out of range in self");
  expect_error([&] { index_add(longs({1}, {1}), 0, longs({0}, {1}), longs({1}, {1}), 0.5); },
               "alpha must not be a floating point number");
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{index_add(in[0], 1, longs({1, 1, 0}, {3}), in[1], -1.5)};
      },
      {random_tensor({2, 3}, 21), random_tensor({2, 3}, 22)});
}

TEST(AccumulateOps, IndexPutWritesOrAddsRows) {
  const Tensor self = doubles({1, 2, 3, 4, 5, 6}, {3, 2});
  // x[[2, 0]] = values; negative indices count from the end; one row broadcasts to all.
  EXPECT_EQ(values(index_put(self, longs({2, -3}, {2}), doubles({10, 20, 30, 40}, {2, 2}))),
            (std::vector<double>{30, 40, 3, 4, 10, 20}));
  EXPECT_EQ(values(index_put(self, longs({1}, {1}), doubles({-1, -2}, {2}))),
            (std::vector<double>{1, 2, -1, -2, 5, 6}));
  // accumulate adds every value to its row, a repeated row each time.
  EXPECT_EQ(values(index_put(self, longs({0, 2, 0}, {3}), doubles({0.5}, {}), true)),
            (std::vector<double>{2, 3, 3, 4, 5.5, 6.5}));
  expect_error([&] { index_put(self, longs({3}, {1}), doubles({0}, {})); },
               "index 3 is out of bounds for dimension 0 with size 3");
  expect_error(
      [&] {
        index_put(self, longs({0}, {1}), doubles({1, 2, 3}, {3}));
      },
      "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result "
      "of shape [1, 2]");
  expect_error([&] { index_put(self, longs({0}, {1}), longs({1}, {})); },
               "Index put requires the source and destination dtypes match");
  // Gradients: without accumulate the written rows pass nothing back to self.
  Tensor x = doubles({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor v = doubles({7, 8}, {2});
  x.requires_grad_(true);
  v.requires_grad_(true);
  mul(index_put(x, longs({2, 0}, {2}), v), doubles({1, 2, 3, 4, 5, 6}, {3, 2})).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 0, 3, 4, 0, 0}));
  EXPECT_EQ(values(v.grad()), (std::vector<double>{6, 8}));
  for (bool accumulate : {false, true}) {
    const Tensor index = accumulate ? longs({1, 1, 0}, {3}) : longs({1, 0}, {2});
    expect_gradients_match_finite_differences(
        [&](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{index_put(in[0], index, in[1], accumulate)};
        },
        {random_tensor({2, 3}, 23), random_tensor({index.numel(), 3}, 24)});
  }
}

TEST(AccumulateOps, MaskedFillBroadcastsAndCastsTheValue) {
  const Tensor mask = tensor(std::vector<bool>{true, false, true});
  const Tensor out = masked_fill(doubles({1, 2, 3, 4, 5, 6}, {2, 3}), mask, -1.5);
  EXPECT_EQ(values(out), (std::vector<double>{-1.5, 2, -1.5, -1.5, 5, -1.5}));
  const Tensor ints = masked_fill(longs({1, 2, 3}, {3}), mask, -2.75);
  EXPECT_EQ(ints.dtype(), Dtype::Int64);
  EXPECT_EQ(values(ints), (std::vector<double>{-2, 2, -2}));
  // The self broadcasts to the mask's shape too.
  EXPECT_EQ(masked_fill(doubles({1, 2, 3}, {3}), mask.reshape({1, 3}).expand({2, 3}), 0.0).sizes(),
            (Shape{2, 3}));
  expect_error([&] { masked_fill(doubles({1}, {1}), longs({1}, {1}), 0.0); },
               "masked_fill_ only supports boolean masks");
  Tensor x = random_tensor({2, 3}, 31);
  x.requires_grad_(true);
  masked_fill(x, mask, 7.0).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 1, 0, 0, 1, 0}));
}

TEST(AccumulateOps, GroupNormIsLayerNormPerGroupAndInstanceNormOneGroupPerChannel) {
  const Tensor x = random_tensor({2, 4, 3}, 41, -2.0, 2.0);
  // One group: a layer_norm over channels and positions.
  const std::vector<double> one = values(group_norm(x, 1));
  const std::vector<double> layer = values(layer_norm(x, {4, 3}));
  ASSERT_EQ(one.size(), layer.size());
  for (std::size_t i = 0; i < one.size(); ++i) EXPECT_NEAR(one[i], layer[i], 1e-12);
  // One group per channel is instance_norm.
  const std::vector<double> per_channel = values(group_norm(x, 4));
  const std::vector<double> instance = values(instance_norm(x));
  for (std::size_t i = 0; i < per_channel.size(); ++i) {
    EXPECT_NEAR(per_channel[i], instance[i], 1e-12);
  }
  // Two groups: each half of the channels of a sample has mean 0.
  const Tensor two = group_norm(x, 2).reshape({2, 2, 6});
  for (double m : values(mean(two, {2}))) EXPECT_NEAR(m, 0.0, 1e-12);
  expect_error([&] { group_norm(x, 3); }, "divisible by num_groups");
  expect_error(
      [&] {
        group_norm(zeros({2, 4, 0}, dtype(Dtype::Float64)), 2);
      },
      "Expected HxW to be greater than 0");
  expect_error(
      [&] {
        instance_norm(zeros({2, 3, 1}, dtype(Dtype::Float64)));
      },
      "Expected more than 1 spatial element when training");
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{group_norm(in[0], 2, in[1], in[2], 1e-3),
                                   instance_norm(in[0], in[1], in[2])};
      },
      {random_tensor({2, 4, 3}, 42), random_tensor({4}, 43, 0.5, 1.5), random_tensor({4}, 44)});
}

TEST(AccumulateOps, MaskedScatterReadsSourceInOrder) {
  const Tensor mask = tensor(std::vector<bool>{true, false, true, false, true, true}, {2, 3});
  // The masked elements, row-major, take source's leading elements; self broadcasts to mask.
  EXPECT_EQ(
      values(masked_scatter(doubles({1, 2, 3}, {3}), mask, doubles({10, 20, 30, 40, 50}, {5}))),
      (std::vector<double>{10, 2, 20, 1, 30, 40}));
  expect_error(
      [&] {
        masked_scatter(doubles({1, 2, 3}, {3}), mask, doubles({10, 20, 30}, {3}));
      },
      "Number of elements of source < number of ones in mask");
  expect_error(
      [&] {
        masked_scatter(doubles({1, 2, 3}, {3}), mask, longs({1, 2, 3, 4}, {4}));
      },
      "masked_scatter: expected self and source to have same dtypes");
  // Gradients: self's broadcast dims sum its unmasked elements; source gets g where it was read.
  Tensor x = doubles({0, 0, 0}, {3});
  Tensor source = doubles({0, 1, 2, 3, 4, 5}, {2, 3});
  x.requires_grad_(true);
  source.requires_grad_(true);
  mul(masked_scatter(x, mask, source), doubles({1, 2, 3, 4, 5, 6}, {2, 3})).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{4, 2, 0}));
  EXPECT_EQ(values(source.grad()), (std::vector<double>{1, 3, 5, 6, 0, 0}));
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{masked_scatter(in[0], mask, in[1])};
      },
      {random_tensor({2, 3}, 51), random_tensor({7}, 52)});
}

TEST(AccumulateOps, CopyBroadcastsSourceIntoSelf) {
  // self's values never reach the result; an integer self truncates a float source.
  EXPECT_EQ(values(copy(doubles({1, 2, 3, 4}, {2, 2}), doubles({7, 8}, {2}))),
            (std::vector<double>{7, 8, 7, 8}));
  EXPECT_EQ(copy(longs({1, 2}, {2}), doubles({1.7, -1.7}, {2})).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{1, -1}));
  EXPECT_THROW(copy(doubles({1, 2, 3, 4, 5, 6}, {2, 3}), doubles({1, 2}, {2})), Error);
  Tensor self = doubles({1, 2, 3, 4}, {2, 2});
  Tensor src = doubles({5}, {1});
  self.requires_grad_(true);
  src.requires_grad_(true);
  copy(self, src).sum().backward();
  EXPECT_EQ(values(self.grad()), (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(values(src.grad()), (std::vector<double>{4}));
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{copy(in[0], in[1])}; },
      {random_tensor({2, 3}, 53), random_tensor({3}, 54)});
}

}  // namespace
}  // namespace weft
