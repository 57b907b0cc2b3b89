// Tensor basics: creation, views sharing storage, contiguity, promotion, printing, errors.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <vector>

#include "weft/error.h"
#include "weft/memory.h"
#include "weft/ops.h"

namespace weft {
namespace {

TEST(Tensor, CreationFunctionsFillExpectedValues) {
  EXPECT_EQ(zeros({2, 3}).to_vector<float>(), std::vector<float>(6, 0.0f));
  EXPECT_EQ(ones({2}, dtype(Dtype::Int64)).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{1, 1}));
  EXPECT_EQ(full({3}, 2.5).to_vector<float>(), (std::vector<float>{2.5f, 2.5f, 2.5f}));
  EXPECT_EQ(arange(4).dtype(), Dtype::Int64);
  EXPECT_EQ(arange(0.0, 1.0, 0.25).dtype(), Dtype::Float32);
  EXPECT_EQ(arange(0.0, 1.0, 0.25).to_vector<float>(), (std::vector<float>{0, 0.25f, 0.5f, 0.75f}));
  EXPECT_EQ(linspace(0, 1, 5).to_vector<float>(),
            (std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1.0f}));
  EXPECT_EQ(eye(2, 3).to_vector<float>(), (std::vector<float>{1, 0, 0, 0, 1, 0}));
  const Tensor scalar = scalar_tensor(3.0);
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_DOUBLE_EQ(scalar.item(), 3.0);
  EXPECT_EQ(zeros({0, 4}).numel(), 0);
}

TEST(Tensor, NegativeDimensionIsRejected) {
  EXPECT_THROW(zeros({2, -1}), Error);
}

TEST(Tensor, ViewsShareStorageAndSeeWrites) {
  Tensor x = arange(6.0, Dtype::Float32).reshape({2, 3});
  Tensor t = x.t();
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.sizes(), (Shape{3, 2}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  x.select(0, 1).fill_(9.0);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 9, 1, 9, 2, 9}));
  EXPECT_EQ(t.contiguous().strides(), (Shape{2, 1}));
}

TEST(Tensor, SliceWithStepAndNegativeBounds) {
  Tensor x = arange(10);
  EXPECT_EQ(x.slice(0, 1, 8, 3).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 4, 7}));
  EXPECT_EQ(x.slice(0, -3, 100).to_vector<std::int64_t>(), (std::vector<std::int64_t>{7, 8, 9}));
  EXPECT_EQ(x.slice(0, 5, 2).numel(), 0);
  EXPECT_EQ(x.narrow(0, 2, 2).to_vector<std::int64_t>(), (std::vector<std::int64_t>{2, 3}));
}

TEST(Tensor, ReshapeInfersAndCopiesOnlyWhenNeeded) {
  Tensor x = arange(12).reshape({3, 4});
  EXPECT_EQ(x.reshape({-1, 6}).sizes(), (Shape{2, 6}));
  EXPECT_EQ(x.reshape({2, 6}).storage(), x.storage());
  Tensor t = x.t();
  EXPECT_THROW(t.view({12}), Error);
  Tensor flat = t.reshape({12});
  EXPECT_NE(flat.storage(), x.storage());
  EXPECT_EQ(flat.to_vector<std::int64_t>()[1], 4);
  try {
    x.reshape({5, -1});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "shape '[5, -1]' is invalid for input of size 12");
  }
}

TEST(Tensor, ExpandBroadcastsWithZeroStride) {
  Tensor x = tensor(std::vector<float>{1, 2, 3}).reshape({3, 1});
  Tensor e = x.expand({3, 4});
  EXPECT_EQ(e.strides()[1], 0);
  EXPECT_EQ(e.sum().item(), 24.0);
  EXPECT_THROW(x.expand({2, 4}), Error);
}

TEST(Tensor, SqueezeUnsqueezePermute) {
  Tensor x = zeros({2, 1, 3, 1});
  EXPECT_EQ(x.squeeze().sizes(), (Shape{2, 3}));
  EXPECT_EQ(x.squeeze({1}).sizes(), (Shape{2, 3, 1}));
  EXPECT_EQ(x.unsqueeze(-1).sizes(), (Shape{2, 1, 3, 1, 1}));
  EXPECT_EQ(x.permute({3, 2, 1, 0}).sizes(), (Shape{1, 3, 1, 2}));
  EXPECT_THROW(x.permute({0, 0, 1, 2}), Error);
  EXPECT_THROW(x.unsqueeze(6), Error);
}

TEST(Tensor, DimOutOfRangeMessageMatchesPyTorch) {
  try {
    zeros({2, 3}).sum({2});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  }
}

TEST(Tensor, BroadcastMismatchMessageMatchesPyTorch) {
  try {
    add(zeros({2, 3}), zeros({2, 4}));
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
                 "dimension 1");
  }
}

// The reducer's shape pass once shrank a copy's destination to 0-dim while its source stayed
// [n]: copy_ wrote past the destination (a segfault). The source must broadcast to the
// destination's shape, as in PyTorch.
TEST(Tensor, CopySourceMustBroadcastToTheDestinationsShape) {
  Tensor scalar = zeros({});
  try {
    scalar.copy_(ones({3}));
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "output with shape [] doesn't match the broadcast shape [3]");
  }
  Tensor row = zeros({1, 3});
  EXPECT_THROW(row.copy_(ones({2, 3})), Error);
  EXPECT_THROW(copy(zeros({2}), ones({2, 2})), Error);
  Tensor grid = zeros({2, 3});
  grid.copy_(full({3}, 2.0));  // broadcasts to [2, 3]
  EXPECT_EQ(grid.to_vector<double>(), std::vector<double>(6, 2.0));
}

TEST(Tensor, TypePromotionFollowsPyTorch) {
  const Tensor i32 = ones({2}, dtype(Dtype::Int32));
  const Tensor i64 = ones({2}, dtype(Dtype::Int64));
  const Tensor f32 = ones({2});
  const Tensor f64 = ones({2}, dtype(Dtype::Float64));
  const Tensor b = ones({2}, dtype(Dtype::Bool));
  EXPECT_EQ((i32 + i64).dtype(), Dtype::Int64);
  EXPECT_EQ((i64 + f32).dtype(), Dtype::Float32);
  EXPECT_EQ((f32 + f64).dtype(), Dtype::Float64);
  EXPECT_EQ((b + i32).dtype(), Dtype::Int32);
  EXPECT_EQ((i32 + 2.5).dtype(), Dtype::Float32);
  EXPECT_EQ((i32 + 2.0).dtype(), Dtype::Float32);  // a C++ double is a Python float
  EXPECT_EQ(add(i32, wrapped_scalar(std::int64_t{2})).dtype(), Dtype::Int32);
  EXPECT_EQ(clamp(i64, std::nullopt, 2.0).dtype(), Dtype::Float32);
  EXPECT_EQ((f32 * 2.0).dtype(), Dtype::Float32);
  // A zero-dim tensor of a higher category wins; of the same category it does not.
  EXPECT_EQ((i32 + scalar_tensor(1.0, dtype(Dtype::Float64))).dtype(), Dtype::Float64);
  EXPECT_EQ((f32 + scalar_tensor(1.0, dtype(Dtype::Float64))).dtype(), Dtype::Float32);
  EXPECT_EQ((i32 / i32).dtype(), Dtype::Float32);
  EXPECT_EQ(eq(f32, i64).dtype(), Dtype::Bool);
}

TEST(Tensor, IntegerDivisionByZeroIsAnErrorNotACrash) {
  const Tensor a = tensor(std::vector<std::int64_t>{1, 2});
  const Tensor z = zeros({2}, dtype(Dtype::Int64));
  EXPECT_THROW(div(a, z, "floor"), Error);
  const Tensor m = tensor(std::vector<std::int64_t>{INT64_MIN});
  EXPECT_EQ(div(m, tensor(std::vector<std::int64_t>{-1}), "trunc").item<std::int64_t>(), INT64_MIN);
}

TEST(Tensor, FloorDivisionMatchesPython) {
  const Tensor a = tensor(std::vector<float>{7, -7, 7, -7});
  const Tensor b = tensor(std::vector<float>{2, 2, -2, -2});
  EXPECT_EQ(div(a, b, "floor").to_vector<float>(), (std::vector<float>{3, -4, -4, 3}));
  EXPECT_EQ(div(a, b, "trunc").to_vector<float>(), (std::vector<float>{3, -3, -3, 3}));
  const Tensor ai = tensor(std::vector<std::int64_t>{7, -7, 7, -7});
  const Tensor bi = tensor(std::vector<std::int64_t>{2, 2, -2, -2});
  EXPECT_EQ(div(ai, bi, "floor").to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{3, -4, -4, 3}));
}

TEST(Tensor, CastConvertsLikeX86ForOutOfRange) {
  const Tensor f = tensor(std::vector<float>{1.9f, -1.9f, 1e20f, std::nanf("")});
  EXPECT_EQ(f.to(Dtype::Int32).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{1, -1, INT32_MIN, INT32_MIN}));
  EXPECT_EQ(f.to(Dtype::Bool).to_vector<bool>(), (std::vector<bool>{true, true, true, true}));
}

TEST(Tensor, StrIsReadable) {
  const std::string s = tensor(std::vector<float>{1, 2}).str();
  EXPECT_NE(s.find("tensor([1, 2]"), std::string::npos) << s;
  EXPECT_NE(s.find("dtype=float32"), std::string::npos) << s;
}

TEST(Tensor, UndefinedTensorGivesClearError) {
  Tensor t;
  EXPECT_FALSE(t.defined());
  EXPECT_THROW(t.sizes(), Error);
}

}  // namespace
}  // namespace weft

namespace weft {
namespace {

TEST(Memory, FreedStorageIsReusedAndTheCacheEmpties) {
  empty_cache();
  EXPECT_EQ(cached_bytes(), 0u);
  const void* first = nullptr;
  {
    Tensor big = zeros({256, 256});  // 256 KiB: cached when freed
    first = big.raw_data();
  }
  EXPECT_GE(cached_bytes(), 256u * 256u * 4u);
  Tensor again = ones({256, 256});  // the same size comes back from the cache, initialised
  EXPECT_EQ(again.raw_data(), first);
  EXPECT_EQ(again.sum().item<double>(), 256.0 * 256.0);
  EXPECT_EQ(cached_bytes(), 0u);
  {
    Tensor small = zeros({16});  // small blocks are left to malloc
  }
  EXPECT_EQ(cached_bytes(), 0u);
  { Tensor big = zeros({512, 512}); }
  EXPECT_GT(cached_bytes(), 0u);
  empty_cache();
  EXPECT_EQ(cached_bytes(), 0u);
}

}  // namespace
}  // namespace weft
