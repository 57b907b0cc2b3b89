// matmul / mm / bmm / linear / addmm against a naive double-precision reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "expect_error.h"
#include "gradcheck.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/parallel.h"

namespace weft {
namespace {

using testing::expect_error;

using testing::expect_gradients_match_finite_differences;
using testing::random_tensor;

// Expects `fn` to throw weft::Error whose message contains `needle`.
// torch.matmul semantics, written from the definition: promote 1-D operands, broadcast batch
// dims, multiply with three loops, drop the promoted dims.
std::pair<std::vector<double>, Shape> ref_matmul(const Tensor& a0, const Tensor& b0) {
  const std::vector<double> av = a0.to_vector<double>(), bv = b0.to_vector<double>();
  Shape as = a0.sizes(), bs = b0.sizes();
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const std::int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const Shape ba(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  const std::size_t nb = std::max(ba.size(), bb.size());
  Shape batch(nb);
  for (std::size_t d = 0; d < nb; ++d) {
    const std::int64_t x = d + ba.size() >= nb ? ba[d + ba.size() - nb] : 1;
    const std::int64_t y = d + bb.size() >= nb ? bb[d + bb.size() - nb] : 1;
    batch[d] = std::max(x, y);
  }
  const std::int64_t batches = numel_of(batch);
  std::vector<double> out(static_cast<std::size_t>(batches * m * n), 0.0);
  for (std::int64_t i = 0; i < batches; ++i) {
    std::int64_t rest = i, ia = 0, ib = 0, sa = 1, sb = 1;
    for (std::size_t d = nb; d-- > 0;) {
      const std::int64_t idx = rest % batch[d];
      rest /= batch[d];
      if (d + ba.size() >= nb) {
        const std::int64_t size = ba[d + ba.size() - nb];
        ia += (size == 1 ? 0 : idx) * sa;
        sa *= size;
      }
      if (d + bb.size() >= nb) {
        const std::int64_t size = bb[d + bb.size() - nb];
        ib += (size == 1 ? 0 : idx) * sb;
        sb *= size;
      }
    }
    for (std::int64_t r = 0; r < m; ++r) {
      for (std::int64_t c = 0; c < n; ++c) {
        double acc = 0;
        for (std::int64_t j = 0; j < k; ++j) {
          acc += av[(ia * m + r) * k + j] * bv[(ib * k + j) * n + c];
        }
        out[(i * m + r) * n + c] = acc;
      }
    }
  }
  Shape shape = batch;
  if (!a_vec) shape.push_back(m);
  if (!b_vec) shape.push_back(n);
  return {out, shape};
}

void expect_matches(const Tensor& got, const std::pair<std::vector<double>, Shape>& want,
                    double tol) {
  ASSERT_EQ(got.sizes(), want.second);
  const std::vector<double> g = got.to_vector<double>();
  ASSERT_EQ(g.size(), want.first.size());
  for (std::size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], want.first[i], tol) << i;
}

const std::vector<std::pair<Shape, Shape>> kShapePairs = {{{3}, {3}},
                                                          {{2, 3}, {3}},
                                                          {{3}, {3, 4}},
                                                          {{2, 3}, {3, 4}},
                                                          {{4, 2, 3}, {3, 5}},
                                                          {{3}, {2, 3, 4}},
                                                          {{2, 3, 4}, {4}},
                                                          {{2, 1, 2, 3}, {3, 3, 4}},
                                                          {{1, 2, 3}, {4, 3, 2}},
                                                          {{3, 2, 3}, {3, 3, 2}},
                                                          {{2, 3}, {2, 3, 4}},
                                                          {{5, 1, 1}, {1, 1, 3}}};

TEST(Matmul, ValuesMatchReferenceForEveryRankCombination) {
  std::uint64_t seed = 1;
  for (const auto& [sa, sb] : kShapePairs) {
    const Tensor a = random_tensor(sa, ++seed), b = random_tensor(sb, ++seed);
    expect_matches(matmul(a, b), ref_matmul(a, b), 1e-12);
    expect_matches(matmul(a.to(Dtype::Float32), b.to(Dtype::Float32)), ref_matmul(a, b), 1e-5);
    EXPECT_EQ(matmul(a.to(Dtype::Float32), b.to(Dtype::Float32)).dtype(), Dtype::Float32);
  }
  EXPECT_EQ(matmul(ones({3}), ones({3})).dim(), 0);
}

TEST(Matmul, NonContiguousOperandsAreReadThroughTheirStrides) {
  const Tensor a = random_tensor({4, 3}, 3).t();  // [3, 4], column-major
  const Tensor b = random_tensor({5, 4}, 4).t();  // [4, 5]
  expect_matches(matmul(a, b), ref_matmul(a.contiguous(), b.contiguous()), 1e-12);
  const Tensor sliced = random_tensor({3, 8}, 5).slice(1, 0, 8, 2);  // strides (8, 2)
  expect_matches(matmul(sliced, b), ref_matmul(sliced.contiguous(), b.contiguous()), 1e-12);
  const Tensor batched = random_tensor({2, 4, 3}, 6).transpose(1, 2);  // [2, 3, 4]
  expect_matches(matmul(batched, b), ref_matmul(batched.contiguous(), b.contiguous()), 1e-12);
  expect_matches(matmul(batched, b.expand({2, 4, 5})),
                 ref_matmul(batched.contiguous(), b.contiguous()), 1e-12);
  const Tensor perm = random_tensor({3, 2, 4}, 7).permute({1, 0, 2});  // [2, 3, 4] odd strides
  expect_matches(bmm(perm, random_tensor({2, 4, 2}, 8)),
                 ref_matmul(perm.contiguous(), random_tensor({2, 4, 2}, 8)), 1e-12);
}

TEST(Matmul, IntegerAndEmptyOperands) {
  const Tensor a = tensor(std::vector<std::int64_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = tensor(std::vector<std::int64_t>{1, 0, -1, 2, 3, 1}, {3, 2});
  const Tensor c = matmul(a, b);
  EXPECT_EQ(c.dtype(), Dtype::Int64);
  EXPECT_EQ(c.to_vector<std::int64_t>(), (std::vector<std::int64_t>{8, 7, 17, 16}));
  EXPECT_EQ(matmul(ones({0, 3}), ones({3, 4})).sizes(), (Shape{0, 4}));
  const Tensor z = matmul(ones({2, 0}), ones({0, 3}));
  EXPECT_EQ(z.sizes(), (Shape{2, 3}));
  EXPECT_EQ(z.to_vector<double>(), std::vector<double>(6, 0.0));
  EXPECT_EQ(matmul(ones({0}), ones({0})).item(), 0.0);
  EXPECT_EQ(bmm(ones({0, 2, 3}), ones({0, 3, 4})).sizes(), (Shape{0, 2, 4}));
}

TEST(Matmul, LargeProductIsTheSameOnOneAndManyThreads) {
  const Tensor a = random_tensor({67, 130}, 11).to(Dtype::Float32);
  const Tensor b = random_tensor({130, 71}, 12).to(Dtype::Float32);
  const int before = get_num_threads();
  set_num_threads(1);
  const std::vector<float> one = matmul(a, b).to_vector<float>();
  const std::vector<float> wide = matmul(b.t(), a.t()).to_vector<float>();  // m < n split
  set_num_threads(3);
  const std::vector<float> many = matmul(a, b).to_vector<float>();
  const std::vector<float> wide_many = matmul(b.t(), a.t()).to_vector<float>();
  set_num_threads(before);
  ASSERT_EQ(one.size(), many.size());
  for (std::size_t i = 0; i < one.size(); ++i) EXPECT_NEAR(one[i], many[i], 1e-4);
  for (std::size_t i = 0; i < wide.size(); ++i) EXPECT_NEAR(wide[i], wide_many[i], 1e-4);
  expect_matches(matmul(a, b), ref_matmul(a, b), 1e-3);
}

TEST(Matmul, GradientsMatchFiniteDifferencesWithBroadcasting) {
  std::uint64_t seed = 100;
  for (const auto& [sa, sb] : kShapePairs) {
    expect_gradients_match_finite_differences(
        [](const std::vector<Tensor>& in) { return std::vector<Tensor>{matmul(in[0], in[1])}; },
        {random_tensor(sa, ++seed), random_tensor(sb, ++seed)});
  }
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{matmul(in[0].transpose(0, 1), in[1])};
      },
      {random_tensor({3, 2}, 1), random_tensor({3, 4}, 2)});
}

TEST(Matmul, SecondDerivativeMatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        autograd::EnableGradGuard grad_mode;  // the finite differences run without grad
        const Tensor y = sum(matmul(in[0], in[1]).pow(2.0));
        return autograd::grad({y}, {in[0], in[1]}, {}, true, true);
      },
      {random_tensor({2, 3}, 1), random_tensor({2, 3, 2}, 2)});
}

TEST(Matmul, InvalidShapesGivePyTorchMessages) {
  expect_error(
      [] {
        matmul(ones({2, 3}), ones({4, 5}));
      },
      "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  expect_error(
      [] {
        matmul(ones({2, 2, 3}), ones({4, 5}));
      },
      "mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)");
  expect_error([] { matmul(ones({3}), ones({4})); },
               "inconsistent tensor size, expected tensor [3] and src [4]");
  expect_error(
      [] {
        matmul(ones({2, 3}), ones({4}));
      },
      "size mismatch, got input (2), mat (2x3), vec (4)");
  expect_error(
      [] {
        matmul(ones({2, 2, 3}), ones({2, 4, 5}));
      },
      "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].");
  expect_error([] { matmul(ones({2, 2, 3}), ones({3, 3, 5})); }, "must match");
  expect_error([] { matmul(scalar_tensor(1.0), ones({3})); },
               "both arguments to matmul need to be at least 1D, but they are 0D and 1D");
  expect_error(
      [] {
        matmul(ones({2, 3}), ones({3, 2}, dtype(Dtype::Float64)));
      },
      "expected m1 and m2 to have the same dtype, but got: float != double");
  EXPECT_THROW(matmul(ones({2, 2}, dtype(Dtype::Bool)), ones({2, 2}, dtype(Dtype::Bool))), Error);
}

TEST(Matmul, MmAndBmmAreStrict) {
  const Tensor a = random_tensor({2, 3}, 1), b = random_tensor({3, 4}, 2);
  expect_matches(mm(a, b), ref_matmul(a, b), 1e-12);
  const Tensor x = random_tensor({2, 2, 3}, 3), y = random_tensor({2, 3, 4}, 4);
  expect_matches(bmm(x, y), ref_matmul(x, y), 1e-12);
  expect_error([] { mm(ones({3}), ones({3, 4})); }, "self must be a matrix");
  expect_error([] { mm(ones({2, 3}), ones({3})); }, "mat2 must be a matrix");
  expect_error(
      [] {
        mm(ones({2, 3}), ones({4, 5}));
      },
      "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  expect_error([] { bmm(ones({2, 3}), ones({2, 3, 4})); }, "batch1 must be a 3D tensor");
  expect_error([] { bmm(ones({2, 2, 3}), ones({3, 4})); }, "batch2 must be a 3D tensor");
  expect_error(
      [] {
        bmm(ones({2, 2, 3}), ones({3, 3, 4}));
      },
      "batch1 and batch2 must have same number of batches, got 2 and 3");
  expect_error(
      [] {
        bmm(ones({2, 2, 3}), ones({2, 4, 4}));
      },
      "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].");
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{mm(in[0], in[1])}; }, {a, b});
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{bmm(in[0], in[1])}; }, {x, y});
}

TEST(Matmul, LinearMatchesReferenceForAnyInputRank) {
  const Tensor w = random_tensor({4, 3}, 1), bias = random_tensor({4}, 2);
  for (const Shape& xs : {Shape{3}, Shape{2, 3}, Shape{2, 2, 3}, Shape{0, 3}}) {
    const Tensor x = random_tensor(xs, 3);
    auto want = ref_matmul(x, w.t().contiguous());
    expect_matches(linear(x, w), want, 1e-12);
    const std::vector<double> bv = bias.to_vector<double>();
    for (std::size_t i = 0; i < want.first.size(); ++i) want.first[i] += bv[i % 4];
    expect_matches(linear(x, w, bias), want, 1e-12);
    expect_gradients_match_finite_differences(
        [](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{linear(in[0], in[1], in[2])};
        },
        {x, w, bias});
  }
  expect_error(
      [] {
        linear(ones({2, 3}), ones({5, 4}));
      },
      "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  expect_error([] { linear(ones({2, 3}), ones({5, 3}), ones({4})); }, "must match");
}

TEST(Matmul, AddmmScalesBroadcastsAndIgnoresSelfWhenBetaIsZero) {
  const Tensor m1 = random_tensor({2, 3}, 1), m2 = random_tensor({3, 4}, 2);
  const Tensor self = random_tensor({4}, 3);
  auto want = ref_matmul(m1, m2);
  const std::vector<double> sv = self.to_vector<double>();
  std::vector<double> expected(8);
  for (std::size_t i = 0; i < 8; ++i) expected[i] = 0.5 * sv[i % 4] + 2.0 * want.first[i];
  expect_matches(addmm(self, m1, m2, 0.5, 2.0), {expected, {2, 4}}, 1e-12);
  const Tensor nan_self =
      full({2, 4}, std::numeric_limits<double>::quiet_NaN(), dtype(Dtype::Float64));
  expect_matches(addmm(nan_self, m1, m2, 0.0, 1.0), want, 1e-12);
  expect_matches(addmm(self.to(Dtype::Float32), m1.to(Dtype::Float32), m2.to(Dtype::Float32)),
                 {[&] {
                    std::vector<double> v(8);
                    for (std::size_t i = 0; i < 8; ++i) v[i] = sv[i % 4] + want.first[i];
                    return v;
                  }(),
                  {2, 4}},
                 1e-5);
  for (const Shape& ss : {Shape{4}, Shape{2, 1}, Shape{2, 4}, Shape{}}) {
    expect_gradients_match_finite_differences(
        [](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{addmm(in[0], in[1], in[2], 0.7, -1.3)};
        },
        {random_tensor(ss, 9), m1, m2});
  }
  expect_error(
      [] {
        addmm(ones({2, 4}), ones({3}), ones({3, 4}));
      },
      "mat1 must be a matrix, got 1-D tensor");
  expect_error(
      [] {
        addmm(ones({2, 4}), ones({2, 3}), ones({3}));
      },
      "mat2 must be a matrix, got 1-D tensor");
  expect_error(
      [] {
        addmm(ones({2, 4}), ones({2, 3}), ones({2, 4}));
      },
      "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x4)");
  EXPECT_THROW(addmm(ones({3}), ones({2, 3}), ones({3, 4})), Error);
}

}  // namespace
}  // namespace weft
