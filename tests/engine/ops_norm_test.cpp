// batch_norm, layer_norm, dropout and embedding: values against naive loops, running-stat
// updates, gradients against finite differences, PyTorch's argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "expect_error.h"
#include "expect_values.h"
#include "gradcheck.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {
namespace {

using testing::expect_error;

using testing::expect_gradients_match_finite_differences;
using testing::random_tensor;

void expect_all_near(const std::vector<double>& a, const std::vector<double>& b,
                     double tol = 1e-12) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << "element " << i;
}

TEST(NormTest, BatchNormTrainingNormalizesWithBatchStatsAndUpdatesRunningStats) {
  const std::int64_t n = 3, c = 2, l = 4;
  const Tensor x = random_tensor({n, c, l}, 1, -2, 2);
  const Tensor w = tensor(std::vector<double>{1.5, -0.5});
  const Tensor b = tensor(std::vector<double>{0.25, 2.0});
  Tensor running_mean = tensor(std::vector<double>{0.5, -0.5});
  Tensor running_var = tensor(std::vector<double>{2.0, 1.0});
  const double eps = 1e-5, momentum = 0.2;
  const std::vector<double> out =
      batch_norm(x, running_mean, running_var, w, b, true, momentum, eps).to_vector<double>();
  const std::vector<double> v = x.to_vector<double>();
  const std::vector<double> wv{1.5, -0.5}, bv{0.25, 2.0}, rm0{0.5, -0.5}, rv0{2.0, 1.0};
  std::vector<double> expected(v.size()), rm(2), rv(2);
  for (std::int64_t ch = 0; ch < c; ++ch) {
    double mean = 0, sq = 0;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < l; ++j) mean += v[(i * c + ch) * l + j];
    mean /= n * l;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < l; ++j) sq += std::pow(v[(i * c + ch) * l + j] - mean, 2);
    const double var = sq / (n * l);
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < l; ++j) {
        const std::size_t k = static_cast<std::size_t>((i * c + ch) * l + j);
        expected[k] = (v[k] - mean) / std::sqrt(var + eps) * wv[ch] + bv[ch];
      }
    }
    rm[ch] = (1 - momentum) * rm0[ch] + momentum * mean;
    rv[ch] = (1 - momentum) * rv0[ch] + momentum * sq / (n * l - 1);  // unbiased
  }
  expect_all_near(out, expected);
  expect_all_near(running_mean.to_vector<double>(), rm);
  expect_all_near(running_var.to_vector<double>(), rv);
  EXPECT_FALSE(running_mean.requires_grad());

  // Without affine parameters or running stats, rank 2: zero mean and unit (biased) variance.
  const Tensor plain =
      batch_norm(random_tensor({4, 3}, 2), Tensor(), Tensor(), Tensor(), Tensor(), true);
  const std::vector<double> p = plain.to_vector<double>();
  for (std::int64_t ch = 0; ch < 3; ++ch) {
    double mean = 0, sq = 0;
    for (std::int64_t i = 0; i < 4; ++i) mean += p[i * 3 + ch] / 4;
    for (std::int64_t i = 0; i < 4; ++i) sq += p[i * 3 + ch] * p[i * 3 + ch] / 4;
    EXPECT_NEAR(mean, 0, 1e-12);
    EXPECT_NEAR(sq, 1, 1e-4);
  }
  // float32 input with float32 running stats.
  Tensor rm32 = zeros({3}), rv32 = ones({3});
  const Tensor out32 = batch_norm(random_tensor({4, 3, 2}, 3).to(Dtype::Float32), rm32, rv32,
                                  Tensor(), Tensor(), true);
  EXPECT_EQ(out32.dtype(), Dtype::Float32);
  EXPECT_EQ(rm32.dtype(), Dtype::Float32);
  EXPECT_NE(rm32.to_vector<double>()[0], 0.0);
}

TEST(NormTest, BatchNormEvalUsesRunningStats) {
  const Tensor x = random_tensor({2, 3, 2, 2}, 4);
  const Tensor rm = tensor(std::vector<double>{0.1, -0.2, 0.3});
  const Tensor rv = tensor(std::vector<double>{0.5, 1.5, 2.5});
  const Tensor w = tensor(std::vector<double>{1.0, 2.0, 3.0});
  const std::vector<double> out =
      batch_norm(x, rm, rv, w, Tensor(), false, 0.1, 1e-3).to_vector<double>();
  const std::vector<double> v = x.to_vector<double>();
  const std::vector<double> m{0.1, -0.2, 0.3}, var{0.5, 1.5, 2.5}, wv{1, 2, 3};
  std::vector<double> expected(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) {
    const std::size_t ch = (k / 4) % 3;
    expected[k] = (v[k] - m[ch]) / std::sqrt(var[ch] + 1e-3) * wv[ch];
  }
  expect_all_near(out, expected);
  EXPECT_EQ(rm.to_vector<double>(), (std::vector<double>{0.1, -0.2, 0.3}));  // untouched
  // One value per channel is fine outside training.
  EXPECT_EQ(batch_norm(zeros({1, 3}), zeros({3}), ones({3}), Tensor(), Tensor(), false).sizes(),
            (Shape{1, 3}));
}

TEST(NormTest, BatchNormGradsMatchFiniteDifferences) {
  // Training: running stats are float32 buffers made inside fn (not checked, updated each call).
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        Tensor rm = zeros({2}), rv = ones({2});
        return std::vector<Tensor>{batch_norm(in[0], rm, rv, in[1], in[2], true, 0.1, 1e-5)};
      },
      {random_tensor({3, 2, 2}, 5), random_tensor({2}, 6), random_tensor({2}, 7)});
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{batch_norm(in[0], Tensor(), Tensor(), Tensor(), Tensor(), true)};
      },
      {random_tensor({4, 2}, 8)});
  // Eval: the running stats are constants.
  const Tensor rm = tensor(std::vector<float>{0.2f, -0.1f}),
               rv = tensor(std::vector<float>{0.7f, 1.3f});
  expect_gradients_match_finite_differences(
      [rm, rv](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{batch_norm(in[0], rm, rv, in[1], in[2], false)};
      },
      {random_tensor({2, 2, 3}, 9), random_tensor({2}, 10), random_tensor({2}, 11)});
}

TEST(NormTest, BatchNormRejectsBadArguments) {
  EXPECT_THROW(batch_norm(zeros({1, 3}), Tensor(), Tensor(), Tensor(), Tensor(), true), Error);
  expect_error(
      [] {
        batch_norm(zeros({1, 3}), Tensor(), Tensor(), Tensor(), Tensor(), true);
      },
      "Expected more than 1 value per channel when training, got input size torch.Size([1, 3])");
  expect_error(
      [] {
        batch_norm(zeros({1, 3, 1}), Tensor(), Tensor(), Tensor(), Tensor(), true);
      },
      "Expected more than 1 value per channel when training");
  expect_error(
      [] {
        batch_norm(zeros({2, 3}), zeros({4}), ones({3}), Tensor(), Tensor(), true);
      },
      "running_mean should contain 3 elements not 4");
  expect_error(
      [] {
        batch_norm(zeros({2, 3}), Tensor(), Tensor(), ones({2}), Tensor(), true);
      },
      "weight should contain 3 elements not 2");
  expect_error(
      [] {
        batch_norm(zeros({2, 3}), Tensor(), Tensor(), Tensor(), Tensor(), false);
      },
      "running_mean must be defined in evaluation mode");
  expect_error(
      [] {
        batch_norm(zeros({2, 3}, dtype(Dtype::Int64)), Tensor(), Tensor(), Tensor(), Tensor(),
                   true);
      },
      "\"batch_norm\" not implemented for 'int64'");
  expect_error([] { batch_norm(zeros({3}), Tensor(), Tensor(), Tensor(), Tensor(), true); },
               "Dimension out of range");
}

TEST(NormTest, LayerNormMatchesNaiveLoop) {
  const Tensor x = random_tensor({2, 2, 3}, 12, -3, 3);
  const Tensor w = random_tensor({2, 3}, 13);
  const Tensor b = random_tensor({2, 3}, 14);
  const std::vector<double> v = x.to_vector<double>(), wv = w.to_vector<double>(),
                            bv = b.to_vector<double>();
  const std::vector<double> out = layer_norm(x, {2, 3}, w, b, 1e-5).to_vector<double>();
  const std::vector<double> out_last = layer_norm(x, {3}).to_vector<double>();
  std::vector<double> expected(12), expected_last(12);
  for (std::size_t batch = 0; batch < 2; ++batch) {
    double mean = 0, var = 0;
    for (std::size_t i = 0; i < 6; ++i) mean += v[batch * 6 + i] / 6;
    for (std::size_t i = 0; i < 6; ++i) var += std::pow(v[batch * 6 + i] - mean, 2) / 6;
    for (std::size_t i = 0; i < 6; ++i) {
      expected[batch * 6 + i] = (v[batch * 6 + i] - mean) / std::sqrt(var + 1e-5) * wv[i] + bv[i];
    }
  }
  for (std::size_t row = 0; row < 4; ++row) {
    double mean = 0, var = 0;
    for (std::size_t i = 0; i < 3; ++i) mean += v[row * 3 + i] / 3;
    for (std::size_t i = 0; i < 3; ++i) var += std::pow(v[row * 3 + i] - mean, 2) / 3;
    for (std::size_t i = 0; i < 3; ++i)
      expected_last[row * 3 + i] = (v[row * 3 + i] - mean) / std::sqrt(var + 1e-5);
  }
  expect_all_near(out, expected);
  expect_all_near(out_last, expected_last);
  EXPECT_EQ(layer_norm(zeros({0, 4}), {4}).sizes(), (Shape{0, 4}));
}

TEST(NormTest, LayerNormGradMatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{layer_norm(in[0], {3}, in[1], in[2], 1e-5)};
      },
      {random_tensor({2, 3}, 15), random_tensor({3}, 16), random_tensor({3}, 17)});
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{layer_norm(in[0].t(), {2, 2})};
      },
      {random_tensor({2, 2}, 18)});
}

TEST(NormTest, LayerNormRejectsBadShapes) {
  expect_error(
      [] {
        layer_norm(zeros({2, 4}), {3});
      },
      "Given normalized_shape=[3], expected input with shape [*, 3], but got input of size[2, 4]");
  expect_error(
      [] {
        layer_norm(zeros({2, 3}), {3}, ones({4}));
      },
      "Expected weight to be of same shape as normalized_shape, but got weight of shape [4] and "
      "normalized_shape = [3]");
  expect_error(
      [] {
        layer_norm(zeros({2, 3}), {3}, Tensor(), ones({2}));
      },
      "Expected bias to be of same shape as normalized_shape");
  expect_error(
      [] {
        layer_norm(zeros({2, 3}), {});
      },
      "Expected normalized_shape to be at least 1-dimensional");
  expect_error([] { layer_norm(zeros({3}), {2, 3}); }, "expected input with shape [*, 2, 3]");
}

TEST(NormTest, DropoutIsDeterministicAndScalesKeptElements) {
  const Tensor x = random_tensor({50, 40}, 19, 0.5, 1.5);
  const double p = 0.3;
  const Tensor a = dropout(x, p, true, 42);
  const Tensor b = dropout(x, p, true, 42);
  const Tensor c = dropout(x, p, true, 43);
  EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>());
  EXPECT_NE(a.to_vector<double>(), c.to_vector<double>());
  const std::vector<double> v = x.to_vector<double>(), av = a.to_vector<double>();
  std::size_t dropped = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (av[i] == 0.0) {
      ++dropped;
    } else {
      EXPECT_NEAR(av[i], v[i] / (1 - p), 1e-12);
    }
  }
  EXPECT_NEAR(static_cast<double>(dropped) / v.size(), p, 0.05);
  EXPECT_EQ(dropout(x.to(Dtype::Float32), p, true, 7).dtype(), Dtype::Float32);
}

TEST(NormTest, DropoutEdgeProbabilitiesAndEvalMode) {
  const Tensor x = random_tensor({3, 4}, 20);
  EXPECT_TRUE(dropout(x, 0.5, false, 1).is_same(x));
  EXPECT_TRUE(dropout(x, 0.0, true, 1).is_same(x));
  const Tensor all = dropout(x, 1.0, true, 1);
  EXPECT_EQ(all.to_vector<double>(), std::vector<double>(12, 0.0));
  EXPECT_EQ(all.sizes(), x.sizes());
  EXPECT_EQ(dropout(zeros({0, 2}), 0.5, true, 1).sizes(), (Shape{0, 2}));
}

TEST(NormTest, DropoutGradMatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{dropout(in[0], 0.4, true, 99)};
      },
      {random_tensor({4, 5}, 21)});
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{dropout(in[0], 1.0, true, 99)};
      },
      {random_tensor({3}, 22)});
}

TEST(NormTest, DropoutRejectsProbabilitiesOutsideUnitInterval) {
  EXPECT_THROW(dropout(zeros({2}), 1.5, true, 0), Error);
  expect_error([] { dropout(zeros({2}), 1.5, true, 0); },
               "dropout probability has to be between 0 and 1, but got 1.5");
  expect_error([] { dropout(zeros({2}), -0.1, false, 0); },
               "dropout probability has to be between 0 and 1");
}

TEST(NormTest, EmbeddingLooksUpRowsForAnyIndexShape) {
  const Tensor weight = random_tensor({5, 3}, 23);
  const std::vector<double> w = weight.to_vector<double>();
  const std::vector<std::int64_t> ids{4, 0, 4, 2, 1, 3};
  const Tensor out = embedding(tensor(ids, {2, 3}), weight);
  EXPECT_EQ(out.sizes(), (Shape{2, 3, 3}));
  const std::vector<double> o = out.to_vector<double>();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    for (std::size_t j = 0; j < 3; ++j) EXPECT_EQ(o[i * 3 + j], w[ids[i] * 3 + j]);
  }
  const Tensor out32 = embedding(tensor(std::vector<std::int32_t>{2}).reshape({}), weight);
  EXPECT_EQ(out32.sizes(), (Shape{3}));
  EXPECT_EQ(out32.to_vector<double>()[0], w[6]);
  // The padding row is still looked up in the forward.
  EXPECT_EQ(embedding(tensor(std::vector<std::int64_t>{1}), weight, 1).to_vector<double>()[0],
            w[3]);
  EXPECT_EQ(embedding(zeros({0}, dtype(Dtype::Int64)), weight).sizes(), (Shape{0, 3}));
}

TEST(NormTest, EmbeddingPaddingRowGetsNoGradient) {
  for (std::int64_t padding : {2, -3}) {
    Tensor weight = random_tensor({5, 2}, 24).requires_grad_();
    sum(embedding(tensor(std::vector<std::int64_t>{2, 0, 2, 4, 0}), weight, padding)).backward();
    EXPECT_EQ(weight.grad().to_vector<double>(),
              (std::vector<double>{2, 2, 0, 0, 0, 0, 0, 0, 1, 1}));
  }
  const Tensor ids = tensor(std::vector<std::int64_t>{1, 3, 1, 0}, {2, 2});
  expect_gradients_match_finite_differences(
      [ids](const std::vector<Tensor>& in) { return std::vector<Tensor>{embedding(ids, in[0])}; },
      {random_tensor({4, 3}, 25)});
  // A padding row that is never looked up leaves the other rows' gradients intact (a looked-up
  // padding row deliberately disagrees with finite differences: its gradient is zero).
  expect_gradients_match_finite_differences(
      [ids](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{embedding(ids, in[0], 2)};
      },
      {random_tensor({4, 3}, 26)});
}

TEST(NormTest, EmbeddingRejectsBadArguments) {
  const Tensor weight = zeros({4, 2});
  EXPECT_THROW(embedding(tensor(std::vector<std::int64_t>{4}), weight), Error);
  expect_error([&] { embedding(tensor(std::vector<std::int64_t>{4}), weight); },
               "index out of range in self");
  expect_error([&] { embedding(tensor(std::vector<std::int64_t>{-1}), weight); },
               "index out of range in self");
  expect_error([&] { embedding(tensor(std::vector<std::int64_t>{0}), zeros({4})); },
               "'weight' must be 2-D");
  expect_error(
      [&] { embedding(zeros({2}), weight); },
      "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
      "Long, Int; but got torch.FloatTensor instead (while checking arguments for embedding)");
  expect_error([&] { embedding(tensor(std::vector<std::int64_t>{0}), weight, 4); },
               "Padding_idx must be within num_embeddings");
  expect_error([&] { embedding(tensor(std::vector<std::int64_t>{0}), weight, -5); },
               "Padding_idx must be within num_embeddings");
}

}  // namespace
}  // namespace weft

namespace weft {
namespace {

// The fused kernels and the op-composed backward (taken when create_graph records a double
// backward) give the same first derivatives, in training and in eval.
TEST(BatchNorm, CreateGraphGradientMatchesTheFusedKernel) {
  for (bool training : {true, false}) {
    Tensor x = testing::random_tensor({3, 4, 5}, 11, -2, 2);
    Tensor w = testing::random_tensor({4}, 12, 0.5, 1.5);
    Tensor b = testing::random_tensor({4}, 13);
    for (Tensor* t : {&x, &w, &b}) t->requires_grad_(true);
    const Tensor rm = testing::random_tensor({4}, 14), rv = testing::random_tensor({4}, 15, 0.5, 2);
    const Tensor cotangent = testing::random_tensor({3, 4, 5}, 16);
    auto loss = [&] {
      return sum(mul(batch_norm(x, rm.clone(), rv.clone(), w, b, training, 0.1, 1e-5), cotangent));
    };
    const auto fused = autograd::grad({loss()}, {x, w, b});
    const auto composite = autograd::grad({loss()}, {x, w, b}, {}, false, /*create_graph=*/true);
    for (std::size_t i = 0; i < 3; ++i) {
      testing::expect_values(composite[i], fused[i].to_vector<double>(), 1e-12, "create_graph");
    }
  }
}

// Second derivatives through batch_norm: d/dx of sum(grad_x ⊙ v) against central differences.
TEST(BatchNorm, DoubleBackwardMatchesFiniteDifferences) {
  const Tensor x0 = testing::random_tensor({2, 3, 4}, 21, -2, 2);
  const Tensor w = testing::random_tensor({3}, 22, 0.5, 1.5);
  const Tensor cotangent = testing::random_tensor({2, 3, 4}, 23);
  const Tensor v = testing::random_tensor({2, 3, 4}, 24);
  auto first_order = [&](const Tensor& x) {
    Tensor xi = x.detach().clone();
    xi.requires_grad_(true);
    const Tensor y = batch_norm(xi, Tensor(), Tensor(), w, Tensor(), true, 0.1, 1e-5);
    const Tensor gx = autograd::grad({sum(mul(y, cotangent))}, {xi}, {}, true, true)[0];
    return std::make_pair(xi, sum(mul(gx, v)));
  };
  auto [x, s] = first_order(x0);
  const auto analytic = autograd::grad({s}, {x})[0].to_vector<double>();
  const double eps = 1e-6;
  auto flat = x0.to_vector<double>();
  for (std::size_t i = 0; i < flat.size(); ++i) {
    auto plus = flat, minus = flat;
    plus[i] += eps;
    minus[i] -= eps;
    const double fp = first_order(tensor(plus, x0.sizes())).second.item<double>();
    const double fm = first_order(tensor(minus, x0.sizes())).second.item<double>();
    EXPECT_NEAR(analytic[i], (fp - fm) / (2 * eps), 1e-5) << "element " << i;
  }
}

}  // namespace
}  // namespace weft
