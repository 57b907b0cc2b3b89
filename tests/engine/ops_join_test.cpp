// cat, stack, split, chunk and pad: values against hand-computed results and naive loops,
// gradients against finite differences, PyTorch's shape errors.
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
using I64 = std::vector<std::int64_t>;

Tensor iota(IntList shape) {
  return arange(static_cast<double>(numel_of(shape))).reshape(shape);
}

TEST(JoinTest, CatConcatenatesAlongAnyDim) {
  const Tensor a = iota({2, 2}), b = iota({2, 3}) + 10.0;
  const Tensor c1 = cat({a, b}, 1);
  EXPECT_EQ(c1.sizes(), (Shape{2, 5}));
  EXPECT_EQ(c1.to_vector<std::int64_t>(), (I64{0, 1, 10, 11, 12, 2, 3, 13, 14, 15}));
  EXPECT_EQ(cat({a, b.slice(1, 0, 2)}, -2).to_vector<std::int64_t>(),
            (I64{0, 1, 2, 3, 10, 11, 13, 14}));
  // Non-contiguous input, single input, empty pieces along the dim.
  EXPECT_EQ(cat({a.t(), zeros({0, 2}, dtype(Dtype::Int64))}).to_vector<std::int64_t>(),
            (I64{0, 2, 1, 3}));
  EXPECT_EQ(cat({a}).to_vector<std::int64_t>(), (I64{0, 1, 2, 3}));
}

TEST(JoinTest, CatPromotesTypesAndSkipsLegacyEmptyTensors) {
  const Tensor ints = tensor(I64{1, 2});
  const Tensor floats = tensor(std::vector<float>{0.5f});
  const Tensor bools = tensor(std::vector<bool>{true});
  const Tensor mixed = cat({ints, floats, bools});
  EXPECT_EQ(mixed.dtype(), Dtype::Float32);
  EXPECT_EQ(mixed.to_vector<double>(), (std::vector<double>{1, 2, 0.5, 1}));
  EXPECT_EQ(cat({bools, ints}).dtype(), Dtype::Int64);
  // A 1-d [0] tensor is skipped even when the others are 2-d.
  const Tensor skipped = cat({zeros({0}), iota({2, 2}).to(Dtype::Float32)}, 1);
  EXPECT_EQ(skipped.sizes(), (Shape{2, 2}));
  EXPECT_EQ(cat({zeros({0}), zeros({0})}).sizes(), (Shape{0}));
}

TEST(JoinTest, CatGradMatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{cat({in[0], in[1].t(), in[0]}, 1)};
      },
      {random_tensor({2, 3}, 1), random_tensor({1, 2}, 2)});
  // A float32 input gets its gradient back in float32; an int input gets none.
  Tensor f = tensor(std::vector<float>{1.f, 2.f}).requires_grad_();
  Tensor d = tensor(std::vector<double>{3.0}).requires_grad_();
  Tensor out = cat({f, tensor(I64{7}), d});
  EXPECT_EQ(out.dtype(), Dtype::Float64);
  sum(out * tensor(std::vector<double>{1, 2, 3, 4})).backward();
  EXPECT_EQ(f.grad().dtype(), Dtype::Float32);
  EXPECT_EQ(f.grad().to_vector<double>(), (std::vector<double>{1, 2}));
  EXPECT_EQ(d.grad().to_vector<double>(), (std::vector<double>{4}));
}

TEST(JoinTest, CatRejectsMismatchedShapes) {
  EXPECT_THROW(cat({zeros({2, 3}), zeros({4, 4})}, 0), Error);
  expect_error(
      [] {
        cat({zeros({2, 3}), zeros({2, 4})}, 0);
      },
      "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for "
      "tensor number 1 in the list.");
  expect_error(
      [] {
        cat({zeros({3, 2}), zeros({3, 1}), zeros({4, 2})}, 1);
      },
      "Sizes of tensors must match except in dimension 1. Expected size 3 but got size 4 for "
      "tensor number 2 in the list.");
  expect_error(
      [] {
        cat({zeros({2, 3}), zeros({2, 3, 1})});
      },
      "Tensors must have same number of dimensions: got 2 and 3");
  expect_error(
      [] {
        cat({zeros({2}), scalar_tensor(1.0)});
      },
      "zero-dimensional tensor (at position 1) cannot be concatenated");
  expect_error([] { cat({}); }, "torch.cat(): expected a non-empty list of Tensors");
  expect_error([] { cat({zeros({2})}, 1); }, "Dimension out of range");
}

TEST(JoinTest, StackAddsANewDim) {
  const Tensor a = iota({2, 2}), b = iota({2, 2}) + 4.0;
  EXPECT_EQ(stack({a, b}).sizes(), (Shape{2, 2, 2}));
  EXPECT_EQ(stack({a, b}).to_vector<std::int64_t>(), (I64{0, 1, 2, 3, 4, 5, 6, 7}));
  const Tensor last = stack({a, b}, -1);
  EXPECT_EQ(last.sizes(), (Shape{2, 2, 2}));
  EXPECT_EQ(last.to_vector<std::int64_t>(), (I64{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(stack({a, b}, 1).to_vector<std::int64_t>(), (I64{0, 1, 4, 5, 2, 3, 6, 7}));
  const Tensor scalars = stack({scalar_tensor(1.0), scalar_tensor(2.0)});
  EXPECT_EQ(scalars.sizes(), (Shape{2}));
  EXPECT_EQ(stack({zeros({0}), zeros({0})}).sizes(), (Shape{2, 0}));
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{stack({in[0], in[1], in[0]}, 1)};
      },
      {random_tensor({2, 3}, 3), random_tensor({2, 3}, 4)});
}

TEST(JoinTest, StackRejectsUnequalShapes) {
  expect_error(
      [] {
        stack({zeros({2, 3}), zeros({2, 4})});
      },
      "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [2, 4] at entry "
      "1");
  expect_error([] { stack({}); }, "stack expects a non-empty TensorList");
  expect_error([] { stack({zeros({2})}, 2); }, "Dimension out of range");
}

TEST(JoinTest, SplitReturnsViews) {
  const Tensor x = iota({5, 2}).to(Dtype::Float32);
  const std::vector<Tensor> parts = split(x, 2);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].sizes(), (Shape{2, 2}));
  EXPECT_EQ(parts[2].sizes(), (Shape{1, 2}));
  EXPECT_EQ(parts[2].to_vector<double>(), (std::vector<double>{8, 9}));
  EXPECT_EQ(parts[1].storage(), x.storage());  // a view
  const std::vector<Tensor> cols = split(x, 1, -1);
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_EQ(cols[1].to_vector<double>(), (std::vector<double>{1, 3, 5, 7, 9}));
  EXPECT_EQ(split(x, 10).size(), 1u);
  const std::vector<Tensor> sections = split(x, I64{1, 0, 4});
  ASSERT_EQ(sections.size(), 3u);
  EXPECT_EQ(sections[1].sizes(), (Shape{0, 2}));
  EXPECT_EQ(sections[2].to_vector<double>(), (std::vector<double>{2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(split(zeros({0, 3}), 0).size(), 1u);
}

TEST(JoinTest, SplitGradFillsUnusedPiecesWithZeros) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        const std::vector<Tensor> p = split(in[0], 2, 1);
        return std::vector<Tensor>{p[0] * p[1], p[2]};
      },
      {random_tensor({2, 5}, 5)});
  Tensor x = random_tensor({6}, 6).requires_grad_();
  const std::vector<Tensor> p = split(x, I64{2, 3, 1});
  sum(p[1]).backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0, 0, 1, 1, 1, 0}));
}

TEST(JoinTest, SplitRejectsBadSizes) {
  expect_error([] { split(zeros({4}), -1); },
               "split expects split_size be non-negative, but got split_size=-1");
  expect_error([] { split(zeros({4}), 0); },
               "split_size can only be 0 if dimension size is 0, but got dimension size of 4");
  expect_error([] { split(scalar_tensor(1.0), 1); },
               "split expects at least a 1-dimensional tensor");
  expect_error(
      [] {
        split(zeros({4, 3}), I64{1, 2}, 0);
      },
      "split_with_sizes expects split_sizes to sum exactly to 4 (input tensor's size at dimension "
      "0), "
      "but got split_sizes=[1, 2]");
  expect_error(
      [] {
        split(zeros({4}), I64{5, -1});
      },
      "split_with_sizes expects split_sizes have only non-negative entries, but got "
      "split_sizes=[5, -1]");
}

TEST(JoinTest, ChunkUsesCeilSizedPieces) {
  auto sizes_of = [](const std::vector<Tensor>& parts, std::int64_t d) {
    I64 s;
    for (const Tensor& p : parts) s.push_back(p.size(d));
    return s;
  };
  EXPECT_EQ(sizes_of(chunk(zeros({5}), 3), 0), (I64{2, 2, 1}));
  EXPECT_EQ(sizes_of(chunk(zeros({6}), 4), 0), (I64{2, 2, 2}));  // fewer chunks than asked
  EXPECT_EQ(sizes_of(chunk(zeros({2, 7}), 2, -1), 1), (I64{4, 3}));
  EXPECT_EQ(sizes_of(chunk(zeros({2}), 5), 0), (I64{1, 1}));
  EXPECT_EQ(sizes_of(chunk(zeros({0, 2}), 3), 0), (I64{0, 0, 0}));
  const std::vector<Tensor> parts = chunk(iota({2, 3}), 2, 1);
  EXPECT_EQ(parts[1].to_vector<std::int64_t>(), (I64{2, 5}));
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{chunk(in[0], 3, 0)[1]}; },
      {random_tensor({5, 2}, 7)});
  expect_error([] { chunk(zeros({3}), 0); }, "chunk expects `chunks` to be greater than 0, got: 0");
  expect_error([] { chunk(scalar_tensor(0.0), 1); },
               "chunk expects at least a 1-dimensional tensor");
}

TEST(JoinTest, PadConstantPadsAndCrops) {
  const Tensor x = iota({2, 3});
  const Tensor padded = pad(x, I64{1, 0, 0, 1}, "constant", 9);
  EXPECT_EQ(padded.sizes(), (Shape{3, 4}));
  EXPECT_EQ(padded.dtype(), Dtype::Int64);
  EXPECT_EQ(padded.to_vector<std::int64_t>(), (I64{9, 0, 1, 2, 9, 3, 4, 5, 9, 9, 9, 9}));
  // Negative pads crop; mixing is allowed.
  EXPECT_EQ(pad(x, I64{-1, 1}).to_vector<std::int64_t>(), (I64{1, 2, 0, 4, 5, 0}));
  EXPECT_EQ(pad(x, I64{0, 0, -2, 0}).sizes(), (Shape{0, 3}));
  EXPECT_EQ(pad(x, I64{}).to_vector<std::int64_t>(), x.to_vector<std::int64_t>());
  EXPECT_EQ(pad(tensor(std::vector<bool>{true}), I64{1, 1}).to_vector<bool>(),
            (std::vector<bool>{false, true, false}));
  EXPECT_EQ(pad(tensor(std::vector<float>{1.f}), I64{1, 0}, "constant", 0.5).to_vector<double>(),
            (std::vector<double>{0.5, 1}));
  EXPECT_EQ(pad(x.t(), I64{0, 1}).to_vector<std::int64_t>(), (I64{0, 3, 0, 1, 4, 0, 2, 5, 0}));
}

TEST(JoinTest, PadReflectReplicateCircularMatchHandComputedValues) {
  const Tensor row = iota({1, 4}).to(Dtype::Float64);  // [C, W]
  EXPECT_EQ(pad(row, I64{2, 3}, "reflect").to_vector<double>(),
            (std::vector<double>{2, 1, 0, 1, 2, 3, 2, 1, 0}));
  EXPECT_EQ(pad(row, I64{2, 1}, "replicate").to_vector<double>(),
            (std::vector<double>{0, 0, 0, 1, 2, 3, 3}));
  EXPECT_EQ(pad(row, I64{1, 2}, "circular").to_vector<double>(),
            (std::vector<double>{3, 0, 1, 2, 3, 0, 1}));
  EXPECT_EQ(pad(row, I64{-1, 1}, "reflect").to_vector<double>(), (std::vector<double>{1, 2, 3, 2}));
  EXPECT_EQ(pad(row, I64{1, -2}, "replicate").to_vector<double>(), (std::vector<double>{0, 0, 1}));
  // 2-d reflect on [N, C, H, W] against a naive mirror.
  const Tensor img = random_tensor({2, 1, 3, 4}, 8);
  const std::vector<double> v = img.to_vector<double>();
  const Tensor out = pad(img, I64{3, 1, 2, 2}, "reflect");
  ASSERT_EQ(out.sizes(), (Shape{2, 1, 7, 8}));
  const std::vector<double> o = out.to_vector<double>();
  auto mirror = [](std::int64_t i, std::int64_t n) {
    return i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i;
  };
  auto clampi = [](std::int64_t i, std::int64_t n) {
    return std::min<std::int64_t>(std::max<std::int64_t>(i, 0), n - 1);
  };
  const std::vector<double> rep = pad(img, I64{3, 1, 2, 2}, "replicate").to_vector<double>();
  for (std::int64_t b = 0; b < 2; ++b) {
    for (std::int64_t h = 0; h < 7; ++h) {
      for (std::int64_t w = 0; w < 8; ++w) {
        const std::size_t k = static_cast<std::size_t>((b * 7 + h) * 8 + w);
        EXPECT_EQ(o[k], v[(b * 3 + mirror(h - 2, 3)) * 4 + mirror(w - 3, 4)]);
        EXPECT_EQ(rep[k], v[(b * 3 + clampi(h - 2, 3)) * 4 + clampi(w - 3, 4)]);
      }
    }
  }
  EXPECT_EQ(pad(iota({1, 2, 2}), I64{1, 1, 1, 1}, "replicate").sizes(), (Shape{1, 4, 4}));
  EXPECT_EQ(pad(zeros({0, 2, 3}), I64{1, 1}, "reflect").sizes(), (Shape{0, 2, 5}));  // empty batch
}

TEST(JoinTest, PadGradsMatchFiniteDifferences) {
  for (const char* mode : {"constant", "reflect", "replicate", "circular"}) {
    SCOPED_TRACE(mode);
    expect_gradients_match_finite_differences(
        [mode](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{pad(in[0], I64{2, 1}, mode)};
        },
        {random_tensor({2, 3}, 9)});
    expect_gradients_match_finite_differences(
        [mode](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{pad(in[0], I64{1, 2, 2, -1}, mode)};
        },
        {random_tensor({1, 3, 3}, 10)});
  }
  // Reflection accumulates into the mirrored source positions.
  Tensor x = tensor(std::vector<double>{1, 2, 3}, {1, 3}).requires_grad_();
  sum(pad(x, I64{2, 2}, "reflect")).backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{2, 3, 2}));
}

TEST(JoinTest, PadRejectsBadArguments) {
  expect_error([] { pad(zeros({2, 3}), I64{1}); }, "Padding length must be divisible by 2");
  expect_error(
      [] {
        pad(zeros({2}), I64{1, 1, 1, 1});
      },
      "Padding length should be less than or equal to two times the input dimension but got "
      "padding "
      "length 4 and input of dimension 1");
  expect_error(
      [] {
        pad(zeros({2, 3}), I64{-2, -2});
      },
      "The input size 3, plus negative padding -2 and -2 resulted in a negative output size, which "
      "is "
      "invalid. Check dimension 1 of your input.");
  expect_error(
      [] {
        pad(zeros({1, 3}), I64{3, 0}, "reflect");
      },
      "Argument #4: Padding size should be less than the corresponding input dimension, but got: "
      "padding (3, 0) at dimension 1 of input [1, 3]");
  expect_error(
      [] {
        pad(zeros({1, 1, 2, 5}), I64{1, 1, 0, 2}, "reflect");
      },
      "Argument #6: Padding size should be less than the corresponding input dimension, but got: "
      "padding (0, 2) at dimension 2 of input [1, 1, 2, 5]");
  expect_error(
      [] {
        pad(zeros({3}), I64{1, 1}, "reflect");
      },
      "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
  expect_error(
      [] {
        pad(zeros({2, 3}), I64{1, 1}, "replicate", 1.0);
      },
      "Padding mode \"replicate\" doesn't take in value argument");
  expect_error(
      [] {
        pad(zeros({2, 0}), I64{1, 1}, "replicate");
      },
      "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and other non-zero "
      "dimensions "
      "for input, but got: [2, 0]");
  expect_error(
      [] {
        pad(zeros({1, 3}), I64{-2, -1}, "replicate");
      },
      "input (W: 3) is too small. Calculated output W: 0");
  expect_error(
      [] {
        pad(zeros({1, 2}), I64{3, 0}, "circular");
      },
      "Padding value causes wrapping around more than once.");
  expect_error([] { pad(zeros({1, 2}), I64{1, 1}, "wrap"); }, "Unrecognised padding mode wrap");
}

}  // namespace
}  // namespace weft
