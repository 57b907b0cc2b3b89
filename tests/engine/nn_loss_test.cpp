// Loss functions and modules: hand-computed values, finite-difference gradients (float64) and
// PyTorch-worded errors.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "expect_error.h"
#include "gradcheck.h"
#include "weft/nn/functional.h"
#include "weft/nn/loss.h"
#include "weft/ops.h"

namespace weft {
namespace {

namespace F = nn::functional;
using nn::Reduction;
using testing::expect_error;
using testing::expect_gradients_match_finite_differences;
using testing::random_tensor;

Tensor longs(const std::vector<std::int64_t>& v, IntList shape) {
  return tensor(v, shape).reshape(shape);
}

TEST(NnLoss, RegressionLossesMatchHandValues) {
  const Tensor x = tensor(std::vector<double>{0.0, 1.0, 3.0}, {3});
  const Tensor y = tensor(std::vector<double>{0.5, 1.0, 1.0}, {3});
  EXPECT_NEAR(F::mse_loss(x, y).item(), (0.25 + 0 + 4) / 3, 1e-12);
  EXPECT_NEAR(F::mse_loss(x, y, Reduction::Sum).item(), 4.25, 1e-12);
  EXPECT_NEAR(F::l1_loss(x, y).item(), 2.5 / 3, 1e-12);
  EXPECT_EQ(F::l1_loss(x, y, Reduction::None).to_vector<double>(),
            (std::vector<double>{0.5, 0.0, 2.0}));
  // |d| = 0.5 → 0.125; 0 → 0; 2 → 1.5.
  EXPECT_EQ(F::smooth_l1_loss(x, y, Reduction::None).to_vector<double>(),
            (std::vector<double>{0.125, 0.0, 1.5}));
  EXPECT_NEAR(nn::MSELoss({Reduction::Sum})(x, y).item(), 4.25, 1e-12);
}

TEST(NnLoss, NllLossWeightsAndIgnoreIndex) {
  const Tensor logp = tensor(std::vector<double>{-1, -2, -3, -4, -5, -6}, {2, 3});
  const Tensor target = longs({2, 0}, {2});
  EXPECT_NEAR(F::nll_loss(logp, target).item(), (3 + 4) / 2.0, 1e-12);
  const Tensor w = tensor(std::vector<double>{1, 2, 3}, {3});
  EXPECT_NEAR(F::nll_loss(logp, target, w).item(), (3 * 3 + 4 * 1) / 4.0, 1e-12);
  const Tensor ignored = longs({2, -100}, {2});
  EXPECT_NEAR(F::nll_loss(logp, ignored, w).item(), 3.0, 1e-12);
  EXPECT_EQ(F::nll_loss(logp, ignored, w, -100, Reduction::None).to_vector<double>(),
            (std::vector<double>{9.0, 0.0}));
  // No batch dim.
  EXPECT_NEAR(F::nll_loss(logp[0], longs({1}, {}), Tensor(), -100, Reduction::None).item(), 2.0,
              1e-12);
}

TEST(NnLoss, CrossEntropyMatchesHandValues) {
  // Uniform logits: every class has log-probability −log 3.
  const Tensor x = zeros({2, 3}, dtype(Dtype::Float64));
  EXPECT_NEAR(F::cross_entropy(x, longs({0, 2}, {2})).item(), std::log(3.0), 1e-12);
  const Tensor probs = tensor(std::vector<double>{1, 0, 0, 0.5, 0.5, 0}, {2, 3});
  EXPECT_NEAR(F::cross_entropy(x, probs).item(), std::log(3.0), 1e-12);
  EXPECT_NEAR(F::cross_entropy(x, longs({0, 2}, {2}), Tensor(), -100, Reduction::Mean, 0.1).item(),
              std::log(3.0), 1e-12);
  nn::CrossEntropyLoss module({Tensor(), -100, Reduction::Sum, 0.0});
  EXPECT_NEAR(module(x, longs({0, 1}, {2})).item(), 2 * std::log(3.0), 1e-12);
}

TEST(NnLoss, BinaryCrossEntropyMatchesHandValues) {
  const Tensor p = tensor(std::vector<double>{0.25, 0.5, 0.0}, {3});
  const Tensor t = tensor(std::vector<double>{1.0, 0.0, 1.0}, {3});
  const std::vector<double> got =
      F::binary_cross_entropy(p, t, Tensor(), Reduction::None).to_vector<double>();
  EXPECT_NEAR(got[0], -std::log(0.25), 1e-12);
  EXPECT_NEAR(got[1], -std::log(0.5), 1e-12);
  EXPECT_NEAR(got[2], 100.0, 1e-12);  // log 0 clamped at −100
  const Tensor logits = tensor(std::vector<double>{0.0, 800.0, -800.0}, {3});
  const std::vector<double> stable =
      F::binary_cross_entropy_with_logits(logits, t, Tensor(), Tensor(), Reduction::None)
          .to_vector<double>();
  EXPECT_NEAR(stable[0], std::log(2.0), 1e-12);
  EXPECT_NEAR(stable[1], 800.0, 1e-9);
  EXPECT_NEAR(stable[2], 800.0, 1e-9);
  const Tensor pw = tensor(std::vector<double>{3.0}, {1});
  EXPECT_NEAR(
      F::binary_cross_entropy_with_logits(logits.slice(0, 0, 1), t.slice(0, 0, 1), Tensor(), pw)
          .item(),
      3 * std::log(2.0), 1e-12);
}

TEST(NnLoss, RegressionLossGradsMatchFiniteDifferences) {
  const Tensor y = random_tensor({3, 4}, 2);
  for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    expect_gradients_match_finite_differences(
        [r](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{F::mse_loss(in[0], in[1], r), F::l1_loss(in[0], in[1], r),
                                     F::smooth_l1_loss(in[0], in[1], r, 0.7)};
        },
        {random_tensor({3, 4}, 1, -2, 2), y});
  }
}

TEST(NnLoss, CrossEntropyGradsMatchFiniteDifferences) {
  const Tensor w = random_tensor({3}, 5, 0.5, 2.0);
  const Tensor target = longs({0, 2, -100, 1, 2, 0}, {2, 3});
  for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    for (double ls : {0.0, 0.1}) {
      expect_gradients_match_finite_differences(
          [&](const std::vector<Tensor>& in) {
            return std::vector<Tensor>{F::cross_entropy(in[0], target, w, -100, r, ls),
                                       F::cross_entropy(in[0], target, Tensor(), -100, r, ls)};
          },
          {random_tensor({2, 3, 3}, 4, -2, 2)});
    }
  }
  const Tensor probs = softmax(random_tensor({4, 3}, 8), 1);
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{F::cross_entropy(in[0], in[1], w, -100, Reduction::Mean, 0.1)};
      },
      {random_tensor({4, 3}, 9), probs});
}

TEST(NnLoss, BinaryCrossEntropyGradsMatchFiniteDifferences) {
  const Tensor t = random_tensor({2, 3}, 11, 0, 1);
  const Tensor w = random_tensor({3}, 12, 0.5, 1.5);
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{F::binary_cross_entropy(in[0], t, w, Reduction::Mean)};
      },
      {random_tensor({2, 3}, 13, 0.1, 0.9)});
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{
            F::binary_cross_entropy_with_logits(in[0], in[1], w, in[2], Reduction::Sum)};
      },
      {random_tensor({2, 3}, 14, -3, 3), t, random_tensor({3}, 15, 0.5, 2)});
}

TEST(NnLoss, ErrorsReadLikePyTorch) {
  const Tensor x = zeros({2, 3}, dtype(Dtype::Float64));
  expect_error([&] { F::cross_entropy(x, longs({5, 0}, {2})); }, "Target 5 is out of bounds.");
  expect_error(
      [&] {
        F::nll_loss(x, longs({0, 0, 0}, {3}));
      },
      "Expected input batch_size (2) to match target batch_size (3).");
  expect_error([&] { F::nll_loss(x, zeros({2}, dtype(Dtype::Float64))); },
               "expected scalar type Long but found Double");
  expect_error(
      [&] {
        F::nll_loss(x, longs({0, 0}, {2}), ones({2}, dtype(Dtype::Float64)));
      },
      "weight tensor should be defined either for all 3 classes");
  expect_error(
      [&] {
        F::cross_entropy(zeros({2, 3, 4}, dtype(Dtype::Float64)), longs({0, 0}, {2, 1}));
      },
      "Expected target size [2, 4], got [2, 1]");
  expect_error(
      [&] {
        F::cross_entropy(x, longs({0, 0}, {2}), Tensor(), -100, Reduction::Mean, 1.5);
      },
      "label_smoothing must be between 0.0 and 1.0");
  expect_error([&] { F::binary_cross_entropy(x, zeros({3}, dtype(Dtype::Float64))); },
               "Using a target size ([3]) that is different to the input size ([2, 3])");
  expect_error([&] { F::binary_cross_entropy(full({1}, 2.0), zeros({1})); },
               "all elements of input should be between 0 and 1");
  expect_error([&] { F::binary_cross_entropy_with_logits(x, zeros({3})); },
               "Target size ([3]) must be the same as input size ([2, 3])");
  expect_error([&] { F::reduction_from_string("avg"); }, "avg is not a valid value for reduction");
  nn::NLLLoss module({ones({3}, dtype(Dtype::Float64))});
  EXPECT_TRUE(module.named_buffers().size() == 1);
  expect_error([&] { module.forward(x); }, "has no single-tensor forward");
}

}  // namespace
}  // namespace weft
