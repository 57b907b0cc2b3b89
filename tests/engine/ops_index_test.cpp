// tril/triu, gather and index_select: values against naive loops, gradients against finite
// differences, PyTorch's errors for bad indices.
#include <gtest/gtest.h>

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

TEST(IndexTest, TrilTriuMatchNaiveLoopsOnBatchedMatrices) {
  const Tensor x = random_tensor({2, 3, 4}, 1);
  const std::vector<double> v = x.to_vector<double>();
  for (std::int64_t diagonal : {-2, -1, 0, 1, 3, 5}) {
    const std::vector<double> lower = tril(x, diagonal).to_vector<double>();
    const std::vector<double> upper = triu(x, diagonal).to_vector<double>();
    for (std::int64_t b = 0; b < 2; ++b) {
      for (std::int64_t r = 0; r < 3; ++r) {
        for (std::int64_t c = 0; c < 4; ++c) {
          const std::size_t i = static_cast<std::size_t>((b * 3 + r) * 4 + c);
          EXPECT_EQ(lower[i], c - r <= diagonal ? v[i] : 0.0) << diagonal;
          EXPECT_EQ(upper[i], c - r >= diagonal ? v[i] : 0.0) << diagonal;
        }
      }
    }
  }
}

TEST(IndexTest, TrilWorksOnIntegersBoolsAndNonContiguousInputs) {
  const Tensor ints = arange(9.0).reshape({3, 3});
  EXPECT_EQ(tril(ints).dtype(), Dtype::Int64);
  EXPECT_EQ(tril(ints).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{0, 0, 0, 3, 4, 0, 6, 7, 8}));
  EXPECT_EQ(triu(ints, 1).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{0, 1, 2, 0, 0, 5, 0, 0, 0}));
  const Tensor flags = ones({2, 2}, dtype(Dtype::Bool));
  EXPECT_EQ(tril(flags).to_vector<bool>(), (std::vector<bool>{true, false, true, true}));
  // Transposed view: tril of the transpose is the transpose of triu.
  const Tensor t = ints.t();
  EXPECT_EQ(tril(t).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{0, 0, 0, 1, 4, 0, 2, 5, 8}));
  EXPECT_EQ(tril(zeros({0, 3})).sizes(), (Shape{0, 3}));
}

TEST(IndexTest, TrilTriuGradsMatchFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{tril(in[0], -1)}; },
      {random_tensor({2, 3, 3}, 2)});
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{triu(in[0].t(), 1)}; },
      {random_tensor({3, 4}, 3)});
}

TEST(IndexTest, TrilRejectsInputsWithFewerThanTwoDims) {
  EXPECT_THROW(tril(zeros({3})), Error);
  expect_error([] { tril(zeros({3})); }, "tril: input tensor must have at least 2 dimensions");
  expect_error([] { triu(scalar_tensor(1.0)); },
               "triu: input tensor must have at least 2 dimensions");
}

TEST(IndexTest, GatherMatchesNaiveLoop) {
  const Tensor x = random_tensor({3, 4}, 4);
  const std::vector<double> v = x.to_vector<double>();
  // dim 1, index smaller than x in dim 0.
  const Tensor index1 = tensor(std::vector<std::int64_t>{3, 0, 0, 1, 2, 2}, {2, 3});
  const std::vector<double> out1 = gather(x, 1, index1).to_vector<double>();
  const std::vector<std::int64_t> i1 = index1.to_vector<std::int64_t>();
  for (std::int64_t r = 0; r < 2; ++r) {
    for (std::int64_t c = 0; c < 3; ++c) {
      EXPECT_EQ(out1[r * 3 + c], v[r * 4 + i1[r * 3 + c]]);
    }
  }
  // dim 0 through a negative dim.
  const Tensor index0 = tensor(std::vector<std::int64_t>{2, 1, 0, 0}, {1, 4});
  const Tensor out0 = gather(x, -2, index0);
  EXPECT_EQ(out0.sizes(), (Shape{1, 4}));
  const std::vector<double> o0 = out0.to_vector<double>();
  for (std::int64_t c = 0; c < 4; ++c) EXPECT_EQ(o0[c], v[(c == 0 ? 2 : c == 1 ? 1 : 0) * 4 + c]);
  // Integer input, non-contiguous input.
  const Tensor ints = arange(12.0).reshape({3, 4}).t();  // [4, 3]
  EXPECT_EQ(
      gather(ints, 1, tensor(std::vector<std::int64_t>{2, 0}, {2, 1})).to_vector<std::int64_t>(),
      (std::vector<std::int64_t>{8, 1}));
  // 0-dim input and index.
  EXPECT_EQ(gather(scalar_tensor(7.0), 0, tensor(std::vector<std::int64_t>{0}).reshape({})).item(),
            7.0);
  EXPECT_EQ(gather(x, 1, zeros({3, 0}, dtype(Dtype::Int64))).sizes(), (Shape{3, 0}));
}

TEST(IndexTest, GatherGradAccumulatesRepeatedIndices) {
  const Tensor index = tensor(std::vector<std::int64_t>{1, 1, 0, 2, 2, 2}, {3, 2});
  expect_gradients_match_finite_differences(
      [index](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{gather(in[0], 1, index)};
      },
      {random_tensor({3, 3}, 5)});
  Tensor x = random_tensor({2, 3}, 6).requires_grad_();
  sum(gather(x, 1, tensor(std::vector<std::int64_t>{0, 0, 0, 2}, {2, 2}))).backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{2, 0, 0, 1, 0, 1}));
}

TEST(IndexTest, GatherRejectsBadIndices) {
  const Tensor x = zeros({3, 4});
  expect_error(
      [&] {
        gather(x, 1, zeros({3, 4}, dtype(Dtype::Int32)));
      },
      "gather(): Expected dtype int64 for index");
  expect_error([&] { gather(x, 1, zeros({3}, dtype(Dtype::Int64))); },
               "Index tensor must have the same number of dimensions as input tensor");
  expect_error(
      [&] {
        gather(x, 1, zeros({4, 2}, dtype(Dtype::Int64)));
      },
      "Size does not match at dimension 0 expected index [4, 2] to be smaller than self "
      "[3, 4] apart from dimension 1");
  expect_error(
      [&] {
        gather(x, 0, tensor(std::vector<std::int64_t>{3}, {1, 1}));
      },
      "index 3 is out of bounds for dimension 0 with size 3");
  expect_error(
      [&] {
        gather(x, 1, tensor(std::vector<std::int64_t>{-1}, {1, 1}));
      },
      "index -1 is out of bounds for dimension 1 with size 4");
  EXPECT_THROW(gather(x, 2, zeros({3, 4}, dtype(Dtype::Int64))), Error);
}

TEST(IndexTest, IndexSelectMatchesNaiveLoop) {
  const Tensor x = random_tensor({2, 3, 4}, 7);
  const std::vector<double> v = x.to_vector<double>();
  const std::vector<std::int64_t> picks{2, 0, 2};
  const Tensor out = index_select(x, 1, tensor(picks));
  EXPECT_EQ(out.sizes(), (Shape{2, 3, 4}));
  const std::vector<double> o = out.to_vector<double>();
  for (std::int64_t a = 0; a < 2; ++a) {
    for (std::int64_t j = 0; j < 3; ++j) {
      for (std::int64_t b = 0; b < 4; ++b) {
        EXPECT_EQ(o[(a * 3 + j) * 4 + b], v[(a * 3 + picks[j]) * 4 + b]);
      }
    }
  }
  // int32 index, negative dim, 0-dim index (the dim is kept with size 1).
  const Tensor last = index_select(x, -1, tensor(std::vector<std::int32_t>{3, 1}));
  EXPECT_EQ(last.sizes(), (Shape{2, 3, 2}));
  EXPECT_EQ(last.to_vector<double>()[1], v[1]);
  const Tensor one = index_select(x, 0, tensor(std::vector<std::int64_t>{1}).reshape({}));
  EXPECT_EQ(one.sizes(), (Shape{1, 3, 4}));
  EXPECT_EQ(one.to_vector<double>()[0], v[12]);
  // Empty index, integer input, 0-dim input.
  EXPECT_EQ(index_select(x, 2, zeros({0}, dtype(Dtype::Int64))).sizes(), (Shape{2, 3, 0}));
  EXPECT_EQ(index_select(arange(5.0), 0, tensor(std::vector<std::int64_t>{4, 4}))
                .to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{4, 4}));
  const Tensor s = index_select(scalar_tensor(3.0), 0, tensor(std::vector<std::int64_t>{0}));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item(), 3.0);
}

TEST(IndexTest, IndexSelectGradMatchesFiniteDifferences) {
  const Tensor index = tensor(std::vector<std::int64_t>{1, 0, 1, 1});
  expect_gradients_match_finite_differences(
      [index](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{index_select(in[0].transpose(0, 1), 1, index)};
      },
      {random_tensor({2, 3}, 8)});
  Tensor x = random_tensor({3}, 9).requires_grad_();
  sum(index_select(x, 0, tensor(std::vector<std::int64_t>{2, 2, 0}))).backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{1, 0, 2}));
}

TEST(IndexTest, IndexSelectRejectsBadIndices) {
  const Tensor x = zeros({3, 4});
  expect_error(
      [&] {
        index_select(x, 0, zeros({2, 2}, dtype(Dtype::Int64)));
      },
      "index_select(): Index is supposed to be a vector");
  expect_error([&] { index_select(x, 0, zeros({2})); },
               "index_select(): Expected dtype int32 or int64 for index");
  expect_error([&] { index_select(x, 0, tensor(std::vector<std::int64_t>{3})); },
               "index out of range in self");
  expect_error([&] { index_select(x, 1, tensor(std::vector<std::int64_t>{-1})); },
               "index out of range in self");
  expect_error(
      [&] {
        index_select(scalar_tensor(1.0), 0, tensor(std::vector<std::int64_t>{0, 0}));
      },
      "index_select(): Index to scalar can have only 1 value, got 2 value(s)");
  expect_error([&] { index_select(x, 2, tensor(std::vector<std::int64_t>{0})); },
               "Dimension out of range");
}

}  // namespace
}  // namespace weft
