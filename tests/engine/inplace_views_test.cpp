// In-place ops through views, with autograd as PyTorch's: a write into a slice, select or
// transpose of a non-leaf is seen by the base and by every other view of it, the base's
// gradient reaches both its old values and what was written (CopySlices), a saved value
// overwritten is refused at backward, and PyTorch's refusals (a view of a leaf that requires
// grad, an expanded view, a float result into an integer tensor) are the engine's.
#include <gtest/gtest.h>

#include <vector>

#include "expect_error.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {
namespace {

Tensor leaf(std::vector<double> values, Shape shape) {
  Tensor t = tensor(values, shape);
  t.requires_grad_();
  return t;
}

std::vector<double> values(const Tensor& t) {
  return t.to_vector<double>();
}

// x [3, 4] -> b = x * 2 -> b[1:3, :].relu_() -> loss = sum(b * w): the same gradient as the
// out-of-place program b' = where(rows 1..2, relu(b), b).
TEST(InplaceViews, WriteIntoASliceReachesTheBaseAndItsGradient) {
  const std::vector<double> xs{0.5, -1, 2, -0.25, 1.5, -2, 0.75, -0.5, -3, 1, 0.25, -1.25};
  const std::vector<double> ws{1, 2, 3, 4, -1, -2, -3, -4, 0.5, 0.25, 2, -0.5};
  Tensor x = leaf(xs, {3, 4});
  const Tensor w = tensor(ws, {3, 4});
  Tensor b = mul(x, wrapped_scalar(2.0));
  Tensor rows = slice(b, 0, 1, 3);
  rows.relu_();
  EXPECT_EQ(std::string(b.grad_fn()->name()), "CopySlices");
  const std::vector<double> got = values(b);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double twice = 2 * xs[i];
    EXPECT_EQ(got[i], i >= 4 && twice < 0 ? 0.0 : twice) << i;
  }
  sum(mul(b, w)).backward();

  Tensor x2 = leaf(xs, {3, 4});
  const Tensor b2 = mul(x2, wrapped_scalar(2.0));
  const Tensor in_rows = tensor(
      std::vector<bool>{false, false, false, false, true, true, true, true, true, true, true, true},
      {3, 4});
  sum(mul(where(in_rows, relu(b2), b2), w)).backward();
  EXPECT_EQ(values(x.grad()), values(x2.grad()));
}

// A view taken before the write sees the new values, and its gradient goes through them.
TEST(InplaceViews, AnEarlierViewOfTheBaseTakesTheNewHistory) {
  Tensor x = leaf({1, -2, 3, -4, 5, -6}, {2, 3});
  Tensor b = mul(x, wrapped_scalar(1.0));
  const Tensor column = select(b, 1, 1);  // [-2, 5], taken before the write
  Tensor row = select(b, 0, 0);           // [1, -2, 3]
  row.mul_(tensor(std::vector<double>{10, 10, 10}));
  EXPECT_EQ(values(column), (std::vector<double>{-20, 5}));
  sum(column).backward();
  // column[0] = 10 * x[0, 1]; column[1] = x[1, 1].
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 10, 0, 0, 1, 0}));
}

// A transposed view written with a tensor that requires grad: both get their gradient.
TEST(InplaceViews, WriteIntoATransposeGivesTheSourceItsGradient) {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = leaf({10, 20}, {2});
  Tensor b = add(x, wrapped_scalar(0.0));
  Tensor t = b.transpose(0, 1);     // [3, 2]
  Tensor column = select(t, 0, 2);  // b[:, 2]
  column.copy_(mul(y, y));
  EXPECT_EQ(values(b), (std::vector<double>{1, 2, 100, 4, 5, 400}));
  sum(mul(b, tensor(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3}))).backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{1, 2, 0, 4, 5, 0}));
  EXPECT_EQ(values(y.grad()), (std::vector<double>{2 * 10 * 3, 2 * 20 * 6}));
}

// A plain tensor (no history) written with a value that requires grad becomes part of the graph.
TEST(InplaceViews, APlainBaseJoinsTheGraphThroughItsView) {
  Tensor y = leaf({2, 3}, {2});
  Tensor buffer = zeros({2, 2}, dtype(Dtype::Float64));
  Tensor first = select(buffer, 0, 0);
  first.copy_(y);
  EXPECT_TRUE(buffer.requires_grad());
  EXPECT_FALSE(buffer.is_leaf());
  sum(mul(buffer, buffer)).backward();
  EXPECT_EQ(values(y.grad()), (std::vector<double>{4, 6}));
}

TEST(InplaceViews, PyTorchsRefusalsAreTheEngines) {
  Tensor x = leaf({1, 2, 3, 4}, {2, 2});
  testing::expect_error(
      [&] { select(x, 0, 0).relu_(); },
      "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  Tensor b = mul(x, wrapped_scalar(1.0));
  Tensor wide = slice(b, 0, 0, 1).expand({3, 2});
  testing::expect_error(
      [&] {
        wide.add_(ones({3, 2}, dtype(Dtype::Float64)));
      },
      "more than one element of the written-to tensor refers to a single "
      "memory location");
  Tensor counts = zeros({2}, dtype(Dtype::Int64));
  testing::expect_error(
      [&] {
        counts.add_(tensor(std::vector<double>{0.5, 1.5}));
      },
      "result type Double can't be cast to the desired output type Long");
}

// sigmoid saves its output: writing into a view of it makes the backward refuse, as PyTorch's.
TEST(InplaceViews, OverwritingASavedValueThroughAViewFailsAtBackward) {
  Tensor x = leaf({0.1, 0.2, 0.3, 0.4}, {4});
  Tensor s = sigmoid(x);
  slice(s, 0, 0, 2).mul_(2.0);
  testing::expect_error([&] { sum(s).backward(); },
                        "one of the variables needed for gradient computation has been modified "
                        "by an inplace operation");
}

TEST(InplaceViews, MoreInPlaceOpsMatchTheirOutOfPlaceForms) {
  const Tensor x = tensor(std::vector<double>{-1.5, 0.25, 2, -0.5}, {4});
  auto apply = [&](auto op) {
    Tensor t = x.clone();
    op(t);
    return values(t);
  };
  EXPECT_EQ(apply([](Tensor& t) { t.sigmoid_(); }), values(sigmoid(x)));
  EXPECT_EQ(apply([](Tensor& t) { t.tanh_(); }), values(tanh(x)));
  EXPECT_EQ(apply([](Tensor& t) { t.exp_(); }), values(exp(x)));
  EXPECT_EQ(apply([](Tensor& t) { t.neg_(); }), values(neg(x)));
  EXPECT_EQ(apply([&](Tensor& t) { t.sub_(x, 0.5); }), values(sub(x, x, 0.5)));
  EXPECT_EQ(apply([&](Tensor& t) { t.div_(wrapped_scalar(4.0)); }),
            values(div(x, wrapped_scalar(4.0))));
  EXPECT_EQ(apply([](Tensor& t) {
              t.masked_fill_(tensor(std::vector<bool>{true, false, false, true}), 9.0);
            }),
            (std::vector<double>{9, 0.25, 2, 9}));
}

}  // namespace
}  // namespace weft
