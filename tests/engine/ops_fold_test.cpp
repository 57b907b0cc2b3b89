// im2col (F.unfold) and col2im (F.fold): blocks laid out as PyTorch lays them, fold summing
// overlaps, each the other's adjoint, unbatched forms, PyTorch's errors, and gradients against
// finite differences (first and second order: each backward is the other op).
#include <gtest/gtest.h>

#include <vector>

#include "gradcheck.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {
namespace {

using testing::expect_gradients_match_finite_differences;
using testing::random_tensor;
using Ints = std::vector<std::int64_t>;

std::vector<double> values(const Tensor& t) {
  return t.to(Dtype::Float64).to_vector<double>();
}

TEST(FoldOps, UnfoldLaysEachBlockOutAsAColumn) {
  // x = [[0, 1, 2], [3, 4, 5], [6, 7, 8]], 2x2 blocks: rows are the kernel positions, columns
  // the blocks in row-major order.
  const Tensor x = tensor(std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 3, 3});
  const Tensor col = im2col(x, {2, 2}, {1, 1}, {0, 0}, {1, 1});
  EXPECT_EQ(col.sizes(), (Shape{1, 4, 4}));
  EXPECT_EQ(values(col), (std::vector<double>{0, 1, 3, 4, 1, 2, 4, 5, 3, 4, 6, 7, 4, 5, 7, 8}));
  // Padding reads zeros; an unbatched input gives unbatched columns.
  const Tensor padded = im2col(x.reshape({1, 3, 3}), {3, 3}, {1, 1}, {1, 1}, {3, 3});
  EXPECT_EQ(padded.sizes(), (Shape{9, 1}));
  EXPECT_EQ(values(padded), (std::vector<double>{0, 0, 0, 0, 0, 1, 0, 3, 4}));
}

TEST(FoldOps, FoldSumsOverlappingBlocks) {
  const Tensor ones = tensor(std::vector<double>(16, 1.0), {1, 4, 4});
  // Each output element counts the 2x2 blocks that cover it.
  EXPECT_EQ(values(col2im(ones, {3, 3}, {2, 2}, {1, 1}, {0, 0}, {1, 1})),
            (std::vector<double>{1, 2, 1, 2, 4, 2, 1, 2, 1}));
  // fold(unfold(x)) multiplies each element by its block count.
  const Tensor x = random_tensor({2, 3, 4, 5}, 7);
  const Tensor round_trip =
      col2im(im2col(x, {2, 3}, {1, 1}, {1, 0}, {1, 2}), {4, 5}, {2, 3}, {1, 1}, {1, 0}, {1, 2});
  const Tensor counts = col2im(
      im2col(tensor(std::vector<double>(20, 1.0), {1, 1, 4, 5}), {2, 3}, {1, 1}, {1, 0}, {1, 2}),
      {4, 5}, {2, 3}, {1, 1}, {1, 0}, {1, 2});
  const std::vector<double> got = values(round_trip), in = values(x), n = values(counts);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_DOUBLE_EQ(got[i], in[i] * n[i % 20]);
}

TEST(FoldOps, RefusesWhatPyTorchRefuses) {
  const Tensor x = random_tensor({1, 1, 2, 2}, 3);
  EXPECT_THROW(im2col(x, {3, 3}, {1, 1}, {0, 0}, {1, 1}), Error);
  EXPECT_THROW(im2col(random_tensor({1, 0, 2, 2}, 3), {1, 1}, {1, 1}, {0, 0}, {1, 1}), Error);
  EXPECT_THROW(col2im(random_tensor({1, 4, 3}, 4), {3, 3}, {2, 2}, {1, 1}, {0, 0}, {1, 1}), Error);
  EXPECT_THROW(col2im(random_tensor({1, 5, 4}, 4), {3, 3}, {2, 2}, {1, 1}, {0, 0}, {1, 1}), Error);
  EXPECT_THROW(im2col(x.to(Dtype::Int64), {1, 1}, {1, 1}, {0, 0}, {1, 1}), Error);
}

TEST(FoldOps, GradientsMatchFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{im2col(in[0], {2, 2}, {2, 1}, {1, 0}, {1, 2})};
      },
      {random_tensor({2, 2, 4, 5}, 11)});
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{col2im(in[0], {5, 4}, {3, 3}, {1, 1}, {1, 1}, {2, 2})};
      },
      {random_tensor({1, 18, 6}, 12)});
}

}  // namespace
}  // namespace weft
