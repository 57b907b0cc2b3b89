// The standard layers (conv, normalization, dropout, embedding, pooling, shape, activations,
// ModuleList/ModuleDict) on their own: shapes, train/eval behaviour, PyTorch's state-dict keys,
// argument errors, and finite-difference gradients of every parametric layer in float64.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "expect_error.h"
#include "expect_values.h"
#include "gradcheck.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/nn/activation.h"
#include "weft/nn/container.h"
#include "weft/nn/conv.h"
#include "weft/nn/dropout.h"
#include "weft/nn/embedding.h"
#include "weft/nn/linear.h"
#include "weft/nn/normalization.h"
#include "weft/nn/pooling.h"
#include "weft/nn/shape.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft {
namespace {

using testing::expect_error;
using testing::expect_gradients_match_finite_differences;
using testing::random_tensor;

std::vector<std::string> state_keys(const nn::Module& m) {
  return m.state_dict().keys();
}

Shape shape_of(const Tensor& t) {
  return t.sizes();
}

// ---- Conv ----

TEST(NnLayers, ConvOutputShapesFollowStridePaddingDilationGroups) {
  nn::Conv2d plain(3, 8, 3);
  EXPECT_EQ(shape_of(plain(zeros({2, 3, 10, 12}))), (Shape{2, 8, 8, 10}));
  nn::Conv2d strided(
      nn::Conv2dOptions(4, 6, {3, 2}).stride(2).padding({1, 0}).dilation(2).groups(2));
  EXPECT_EQ(shape_of(strided.weight), (Shape{6, 2, 3, 2}));
  EXPECT_EQ(shape_of(strided(zeros({1, 4, 9, 9}))), (Shape{1, 6, 4, 4}));
  nn::Conv2d same(nn::Conv2dOptions(2, 2, 4).padding("same").dilation({1, 3}));
  EXPECT_EQ(shape_of(same(zeros({1, 2, 7, 8}))), (Shape{1, 2, 7, 8}));
  nn::Conv2d valid(nn::Conv2dOptions(2, 2, 3).padding("valid"));
  EXPECT_EQ(shape_of(valid(zeros({1, 2, 5, 5}))), (Shape{1, 2, 3, 3}));
  nn::Conv2d reflect(nn::Conv2dOptions(2, 2, 3).padding(1).padding_mode("reflect"));
  EXPECT_EQ(shape_of(reflect(zeros({1, 2, 5, 5}))), (Shape{1, 2, 5, 5}));
  nn::Conv1d conv1d(nn::Conv1dOptions(2, 5, 3).stride(2).bias(false));
  EXPECT_EQ(shape_of(conv1d(zeros({4, 2, 11}))), (Shape{4, 5, 5}));
}

TEST(NnLayers, ConvStateDictKeysMatchPyTorch) {
  nn::Conv2d conv(3, 4, 5);
  EXPECT_EQ(state_keys(conv), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(shape_of(conv.weight), (Shape{4, 3, 5, 5}));
  EXPECT_EQ(shape_of(conv.bias), (Shape{4}));
  nn::Conv1d no_bias(nn::Conv1dOptions(3, 4, 2).bias(false));
  EXPECT_EQ(state_keys(no_bias), std::vector<std::string>{"weight"});
  EXPECT_EQ(conv.name(), "Conv2d");
}

TEST(NnLayers, ConvRejectsBadArguments) {
  expect_error([] { nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(0)); },
               "groups must be a positive integer");
  expect_error([] { nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)); },
               "in_channels must be divisible by groups");
  expect_error([] { nn::Conv2d(nn::Conv2dOptions(4, 3, 3).groups(2)); },
               "out_channels must be divisible by groups");
  expect_error([] { nn::Conv2d(nn::Conv2dOptions(4, 4, 3).padding("full")); },
               "Invalid padding string 'full', should be one of {'valid', 'same'}");
  expect_error([] { nn::Conv2d(nn::Conv2dOptions(4, 4, 3).padding("same").stride(2)); },
               "padding='same' is not supported for strided convolutions");
  expect_error([] { nn::Conv2d(nn::Conv2dOptions(4, 4, 3).padding_mode("mirror")); },
               "padding_mode must be one of");
  expect_error(
      [] {
        nn::Conv2d(4, 4, std::vector<std::int64_t>{3, 3, 3});
      },
      "expected 2 values, but got 3");
}

TEST(NnLayers, ConvDefaultInitIsWithinOneOverSqrtFanIn) {
  manual_seed(0);
  nn::Conv2d conv(4, 16, 3);  // fan_in = 36
  const double bound = 1.0 / 6.0;
  for (double v : conv.weight.to_vector<double>()) EXPECT_LE(std::fabs(v), bound);
  for (double v : conv.bias.to_vector<double>()) EXPECT_LE(std::fabs(v), bound);
  EXPECT_GT(max(abs(conv.weight)).item(), 0.9 * bound);
}

TEST(NnLayers, ConvGradientsMatchFiniteDifferences) {
  manual_seed(1);
  nn::Conv2d conv(
      nn::Conv2dOptions(4, 2, {2, 3}).stride({2, 1}).padding(1).dilation({1, 2}).groups(2));
  conv.to(Dtype::Float64);
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& in) {
        conv.weight = in[1];
        conv.bias = in[2];
        return std::vector<Tensor>{conv(in[0])};
      },
      {random_tensor({1, 4, 5, 6}, 1), conv.weight, conv.bias});

  nn::Conv2d same(nn::Conv2dOptions(1, 2, 2).padding("same").padding_mode("replicate"));
  same.to(Dtype::Float64);
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& in) {
        same.weight = in[1];
        same.bias = in[2];
        return std::vector<Tensor>{same(in[0])};
      },
      {random_tensor({2, 1, 4, 3}, 2), same.weight, same.bias});

  nn::Conv1d conv1d(nn::Conv1dOptions(2, 3, 3).padding(1).padding_mode("circular"));
  conv1d.to(Dtype::Float64);
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& in) {
        conv1d.weight = in[1];
        conv1d.bias = in[2];
        return std::vector<Tensor>{conv1d(in[0])};
      },
      {random_tensor({2, 2, 5}, 3), conv1d.weight, conv1d.bias});
}

// ---- Dropout ----

TEST(NnLayers, DropoutIsIdentityInEval) {
  nn::Dropout dropout(0.7);
  dropout.eval();
  const Tensor x = random_tensor({4, 5}, 4);
  EXPECT_EQ(dropout(x).to_vector<double>(), x.to_vector<double>());
  nn::Dropout none(0.0);
  EXPECT_EQ(none(x).to_vector<double>(), x.to_vector<double>());  // p = 0 in training too
}

TEST(NnLayers, DropoutZeroesAboutPAndScalesTheRest) {
  nn::Dropout dropout(0.3);
  const Tensor y = dropout(ones({200, 100}));
  std::int64_t zeroed = 0;
  for (double v : y.to_vector<double>()) {
    if (v == 0.0) {
      ++zeroed;
    } else {
      EXPECT_NEAR(v, 1.0 / 0.7, 1e-6);
    }
  }
  // 20000 Bernoulli(0.3) draws: the standard deviation of the fraction is ≈ 0.0032.
  EXPECT_NEAR(static_cast<double>(zeroed) / 20000.0, 0.3, 0.02);
}

TEST(NnLayers, DropoutIsReproducibleAfterManualSeedAndFreshPerCall) {
  nn::Dropout dropout(0.5);
  manual_seed(42);
  const auto first = dropout(ones({64})).to_vector<double>();
  const auto second = dropout(ones({64})).to_vector<double>();
  EXPECT_NE(first, second);
  manual_seed(42);
  EXPECT_EQ(dropout(ones({64})).to_vector<double>(), first);
  EXPECT_EQ(dropout(ones({64})).to_vector<double>(), second);
}

TEST(NnLayers, DropoutRejectsProbabilitiesOutsideZeroOne) {
  expect_error([] { nn::Dropout(1.5); },
               "dropout probability has to be between 0 and 1, but got 1.5");
  expect_error([] { nn::Dropout(-0.1); }, "dropout probability has to be between 0 and 1");
  EXPECT_TRUE(nn::Dropout().state_dict().empty());
  EXPECT_EQ(nn::Dropout().p, 0.5);
}

// ---- BatchNorm ----

TEST(NnLayers, BatchNormStateDictKeysMatchPyTorch) {
  const std::vector<std::string> all{"weight", "bias", "running_mean", "running_var",
                                     "num_batches_tracked"};
  EXPECT_EQ(state_keys(nn::BatchNorm2d(3)), all);
  EXPECT_EQ(state_keys(nn::BatchNorm1d(3)), all);
  EXPECT_EQ(state_keys(nn::BatchNorm2d(3, 1e-5, 0.1, /*affine=*/false)),
            (std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"}));
  EXPECT_EQ(state_keys(nn::BatchNorm1d(3, 1e-5, 0.1, true, /*track_running_stats=*/false)),
            (std::vector<std::string>{"weight", "bias"}));
  nn::BatchNorm2d bn(5);
  EXPECT_EQ(bn.num_batches_tracked.dtype(), Dtype::Int64);
  EXPECT_EQ(bn.num_batches_tracked.dim(), 0);
  EXPECT_EQ(bn.running_var.to_vector<double>(), std::vector<double>(5, 1.0));
  EXPECT_EQ(bn.weight.to_vector<double>(), std::vector<double>(5, 1.0));
  EXPECT_EQ(bn.bias.to_vector<double>(), std::vector<double>(5, 0.0));
}

TEST(NnLayers, BatchNormUpdatesRunningStatsOnlyInTraining) {
  nn::BatchNorm1d bn(2);
  // Channel 0: {1, 3, 5} (mean 3, unbiased var 4); channel 1: {0, 0, 6} (mean 2, var 12).
  const Tensor x = tensor(std::vector<double>{1, 0, 3, 0, 5, 6}, {3, 2}).to(Dtype::Float32);
  const Tensor y = bn(x);
  EXPECT_EQ(bn.num_batches_tracked.item<std::int64_t>(), 1);
  testing::expect_values(bn.running_mean, {0.3, 0.2}, 1e-6, "running_mean");
  testing::expect_values(bn.running_var, {0.9 + 0.4, 0.9 + 1.2}, 1e-6, "running_var");
  // Training output uses the batch statistics (biased variance 8/3 for channel 0).
  EXPECT_NEAR(y.to_vector<double>()[0], (1 - 3) / std::sqrt(8.0 / 3 + 1e-5), 1e-5);
  bn(x);
  EXPECT_EQ(bn.num_batches_tracked.item<std::int64_t>(), 2);

  bn.eval();
  const auto mean_before = bn.running_mean.to_vector<double>();
  const auto var_before = bn.running_var.to_vector<double>();
  const Tensor z = bn(x);
  EXPECT_EQ(bn.num_batches_tracked.item<std::int64_t>(), 2);
  EXPECT_EQ(bn.running_mean.to_vector<double>(), mean_before);
  // Eval normalizes with the running statistics.
  EXPECT_NEAR(z.to_vector<double>()[0], (1 - mean_before[0]) / std::sqrt(var_before[0] + 1e-5),
              1e-5);
}

TEST(NnLayers, BatchNormWithoutMomentumKeepsACumulativeAverage) {
  nn::BatchNorm1d bn(1, 1e-5, std::nullopt);
  bn(tensor(std::vector<float>{1, 3}, {2, 1}));  // mean 2
  bn(tensor(std::vector<float>{5, 7}, {2, 1}));  // mean 6
  testing::expect_values(bn.running_mean, {4.0}, 1e-6, "running_mean");
  EXPECT_EQ(bn.num_batches_tracked.item<std::int64_t>(), 2);
}

TEST(NnLayers, BatchNormWithoutRunningStatsUsesBatchStatsInEval) {
  nn::BatchNorm2d bn(2, 1e-5, 0.1, true, /*track_running_stats=*/false);
  bn.eval();
  const Tensor y = bn(random_tensor({3, 2, 2, 2}, 5).to(Dtype::Float32));
  testing::expect_values(mean(y, {0, 2, 3}), {0.0, 0.0}, 1e-5, "per-channel mean");
}

TEST(NnLayers, BatchNormRejectsWrongRank) {
  expect_error(
      [] {
        nn::BatchNorm1d(3)(zeros({2, 3, 4, 5}));
      },
      "expected 2D or 3D input (got 4D input)");
  expect_error([] { nn::BatchNorm2d(3)(zeros({2, 3, 4})); }, "expected 4D input (got 3D input)");
  EXPECT_EQ(shape_of(nn::BatchNorm1d(3)(random_tensor({2, 3, 4}, 6).to(Dtype::Float32))),
            (Shape{2, 3, 4}));
}

TEST(NnLayers, BatchNormGradientsMatchFiniteDifferences) {
  for (const bool training : {true, false}) {
    nn::BatchNorm2d bn(3);
    bn.to(Dtype::Float64);
    bn.running_mean.copy_(random_tensor({3}, 7));
    bn.running_var.copy_(random_tensor({3}, 8, 0.5, 2.0));
    bn.train(training);
    expect_gradients_match_finite_differences(
        [&](const std::vector<Tensor>& in) {
          bn.weight = in[1];
          bn.bias = in[2];
          return std::vector<Tensor>{bn(in[0])};
        },
        {random_tensor({2, 3, 2, 2}, 9), random_tensor({3}, 10), random_tensor({3}, 11)});
  }
  nn::BatchNorm1d bn1d(2);
  bn1d.to(Dtype::Float64);
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& in) {
        bn1d.weight = in[1];
        bn1d.bias = in[2];
        return std::vector<Tensor>{bn1d(in[0])};
      },
      {random_tensor({4, 2}, 12), random_tensor({2}, 13), random_tensor({2}, 14)});
}

// ---- LayerNorm ----

TEST(NnLayers, LayerNormParametersFollowNormalizedShape) {
  nn::LayerNorm ln({3, 4});
  EXPECT_EQ(state_keys(ln), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(shape_of(ln.weight), (Shape{3, 4}));
  EXPECT_TRUE(nn::LayerNorm({4}, 1e-5, false).state_dict().empty());
  const Tensor y = ln(random_tensor({2, 3, 4}, 15).to(Dtype::Float32));
  testing::expect_values(mean(y, {1, 2}), {0.0, 0.0}, 1e-5, "mean over normalized dims");
  expect_error(
      [&] {
        ln(zeros({2, 4, 3}));
      },
      "Given normalized_shape=[3, 4], expected input with shape [*, 3, 4], but got "
      "input of size[2, 4, 3]");
}

TEST(NnLayers, LayerNormGradientsMatchFiniteDifferences) {
  nn::LayerNorm ln({2, 3}, 1e-3);
  ln.to(Dtype::Float64);
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& in) {
        ln.weight = in[1];
        ln.bias = in[2];
        return std::vector<Tensor>{ln(in[0])};
      },
      {random_tensor({2, 2, 3}, 16), random_tensor({2, 3}, 17), random_tensor({2, 3}, 18)});
}

// ---- Embedding ----

TEST(NnLayers, EmbeddingLooksUpRowsAndZeroesThePaddingRow) {
  manual_seed(3);
  nn::Embedding emb(10, 4, /*padding_idx=*/-1);
  EXPECT_EQ(state_keys(emb), std::vector<std::string>{"weight"});
  EXPECT_EQ(emb.padding_idx, 9);
  EXPECT_EQ(emb.weight.select(0, 9).to_vector<double>(), std::vector<double>(4, 0.0));
  const Tensor idx = tensor(std::vector<std::int64_t>{1, 9, 1, 0, 2, 3}, {2, 3});
  const Tensor y = emb(idx);
  EXPECT_EQ(shape_of(y), (Shape{2, 3, 4}));
  EXPECT_EQ(y.select(0, 0).select(0, 0).to_vector<double>(),
            emb.weight.select(0, 1).to_vector<double>());
  expect_error([] { nn::Embedding(5, 2, 5); }, "Padding_idx must be within num_embeddings");
  expect_error([] { nn::Embedding(5, 2, -6); }, "Padding_idx must be within num_embeddings");
}

TEST(NnLayers, EmbeddingFromPretrainedSharesDataAndFreezes) {
  const Tensor table = random_tensor({3, 2}, 19);
  auto frozen = nn::Embedding::from_pretrained(table);
  EXPECT_FALSE(frozen->weight.requires_grad());
  EXPECT_EQ(frozen->weight.raw_data(), table.raw_data());
  EXPECT_EQ(frozen->num_embeddings, 3);
  auto trainable = nn::Embedding::from_pretrained(table, /*freeze=*/false);
  EXPECT_TRUE(trainable->weight.requires_grad());
  expect_error([] { nn::Embedding::from_pretrained(zeros({3})); },
               "Embeddings parameter is expected to be 2-dimensional");
}

TEST(NnLayers, EmbeddingGradientsMatchFiniteDifferencesAndSkipPadding) {
  // Without padding: the gradient is the true derivative. (The padding row's gradient is zero by
  // design, although the output depends on it, so finite differences cannot check it.)
  nn::Embedding plain(4, 3);
  plain.to(Dtype::Float64);
  const Tensor idx = tensor(std::vector<std::int64_t>{0, 2, 3, 0, 2}, {5});
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& in) {
        plain.weight = in[0];
        return std::vector<Tensor>{plain(idx)};
      },
      {random_tensor({4, 3}, 20)});
  nn::Embedding emb(4, 3, 2);
  emb.to(Dtype::Float64);
  Tensor w = random_tensor({4, 3}, 21);
  w.requires_grad_(true);
  emb.weight = w;
  emb(idx).sum().backward();
  EXPECT_EQ(w.grad().select(0, 2).to_vector<double>(), std::vector<double>(3, 0.0));
  EXPECT_EQ(w.grad().select(0, 0).to_vector<double>(), std::vector<double>(3, 2.0));
}

// ---- Linear (its init now goes through nn::init) ----

TEST(NnLayers, LinearGradientsMatchFiniteDifferences) {
  nn::Linear lin(3, 2);
  lin.to(Dtype::Float64);
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& in) {
        lin.weight = in[1];
        lin.bias = in[2];
        return std::vector<Tensor>{lin(in[0])};
      },
      {random_tensor({4, 3}, 22), lin.weight, lin.bias});
}

// ---- Pooling and shape ----

TEST(NnLayers, PoolingOutputShapes) {
  const Tensor x = random_tensor({2, 3, 9, 8}, 23).to(Dtype::Float32);
  EXPECT_EQ(shape_of(nn::MaxPool2d(2)(x)), (Shape{2, 3, 4, 4}));
  EXPECT_EQ(
      shape_of(nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1).ceil_mode(true))(x)),
      (Shape{2, 3, 5, 5}));
  EXPECT_EQ(shape_of(nn::MaxPool2d(nn::MaxPool2dOptions({2, 3}).dilation(2))(x)),
            (Shape{2, 3, 4, 2}));
  EXPECT_EQ(shape_of(nn::AvgPool2d(nn::AvgPool2dOptions(3).stride({1, 2}))(x)),
            (Shape{2, 3, 7, 3}));
  EXPECT_EQ(shape_of(nn::AdaptiveAvgPool2d(1)(x)), (Shape{2, 3, 1, 1}));
  EXPECT_EQ(shape_of(nn::AdaptiveAvgPool2d({3, 5})(x)), (Shape{2, 3, 3, 5}));
  EXPECT_EQ(shape_of(nn::AdaptiveMaxPool2d(2)(x)), (Shape{2, 3, 2, 2}));
  EXPECT_EQ(nn::AdaptiveMaxPool2d({4, 4})(x).to_vector<double>(),
            adaptive_max_pool2d(x, {4, 4}).to_vector<double>());
  const Tensor volume = random_tensor({2, 3, 4, 6, 5}, 25).to(Dtype::Float32);
  EXPECT_EQ(shape_of(nn::MaxPool3d(2)(volume)), (Shape{2, 3, 2, 3, 2}));
  EXPECT_EQ(
      shape_of(nn::AvgPool3d(nn::AvgPool3dOptions({1, 3, 2}).stride(1).padding({0, 1, 1}))(volume)),
      (Shape{2, 3, 4, 6, 6}));
  EXPECT_EQ(shape_of(nn::AdaptiveAvgPool3d({1, 2, 3})(volume)), (Shape{2, 3, 1, 2, 3}));
  const Tensor seq = random_tensor({2, 3, 10}, 24).to(Dtype::Float32);
  EXPECT_EQ(shape_of(nn::MaxPool1d(3)(seq)), (Shape{2, 3, 3}));
  EXPECT_EQ(shape_of(nn::AdaptiveMaxPool1d(4)(seq)), (Shape{2, 3, 4}));
  EXPECT_EQ(shape_of(nn::AvgPool1d(nn::AvgPool1dOptions(4).stride(2).padding(2))(seq)),
            (Shape{2, 3, 6}));
  EXPECT_TRUE(nn::MaxPool2d(2).state_dict().empty());
}

TEST(NnLayers, AvgPoolAveragesWindows) {
  const Tensor x = tensor(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4});
  testing::expect_values(nn::AvgPool2d(2)(x), {3.5, 5.5}, 1e-6, "avg_pool2d");
  testing::expect_values(nn::MaxPool2d(2)(x), {6, 8}, 1e-6, "max_pool2d");
}

TEST(NnLayers, FlattenAndUnflattenReshape) {
  const Tensor x = zeros({2, 3, 4, 5});
  EXPECT_EQ(shape_of(nn::Flatten()(x)), (Shape{2, 60}));
  EXPECT_EQ(shape_of(nn::Flatten(0, 2)(x)), (Shape{24, 5}));
  EXPECT_EQ(shape_of(nn::Unflatten(1, {3, 20})(zeros({2, 60}))), (Shape{2, 3, 20}));
  EXPECT_EQ(shape_of(nn::Unflatten(-1, {-1, 5})(zeros({2, 60}))), (Shape{2, 12, 5}));
  expect_error(
      [] {
        nn::Unflatten(1, {7, 8})(zeros({2, 60}));
      },
      "unflatten: Provided sizes [7, 8] don't multiply up to the size of dim 1 (60)");
}

// ---- Activations ----

TEST(NnLayers, ActivationsComputeTheirFunctions) {
  const Tensor x = tensor(std::vector<double>{-2.0, -0.5, 0.0, 1.5}, {4});
  testing::expect_values(nn::LeakyReLU()(x), {-0.02, -0.005, 0.0, 1.5}, 1e-12, "LeakyReLU");
  testing::expect_values(nn::LeakyReLU(0.2)(x), {-0.4, -0.1, 0.0, 1.5}, 1e-12, "LeakyReLU(0.2)");
  testing::expect_values(nn::ELU()(x), {std::exp(-2.0) - 1, std::exp(-0.5) - 1, 0.0, 1.5}, 1e-12,
                         "ELU");
  testing::expect_values(
      nn::SiLU()(x),
      {-2 / (1 + std::exp(2.0)), -0.5 / (1 + std::exp(0.5)), 0, 1.5 / (1 + std::exp(-1.5))}, 1e-12,
      "SiLU");
  testing::expect_values(nn::GELU()(x),
                         {-2 * 0.5 * (1 + std::erf(-2 / std::sqrt(2.0))),
                          -0.5 * 0.5 * (1 + std::erf(-0.5 / std::sqrt(2.0))), 0,
                          1.5 * 0.5 * (1 + std::erf(1.5 / std::sqrt(2.0)))},
                         1e-12, "GELU");
  testing::expect_values(nn::Softplus()(x),
                         {std::log1p(std::exp(-2.0)), std::log1p(std::exp(-0.5)), std::log(2.0),
                          std::log1p(std::exp(1.5))},
                         1e-12, "Softplus");
  EXPECT_EQ(nn::Identity()(x).to_vector<double>(), x.to_vector<double>());
  expect_error([] { nn::GELU("fast"); }, "approximate argument must be either none or tanh");
}

TEST(NnLayers, SoftmaxUsesTheGivenOrLegacyImplicitDim) {
  const Tensor x = random_tensor({2, 3}, 25);
  testing::expect_values(sum(nn::Softmax(1)(x), {1}), {1.0, 1.0}, 1e-12, "Softmax(1)");
  testing::expect_values(sum(nn::Softmax()(x), {1}), {1.0, 1.0}, 1e-12, "implicit dim 1 for 2-d");
  const Tensor x3 = random_tensor({2, 3, 4}, 26);
  testing::expect_values(sum(nn::Softmax()(x3), {0}), std::vector<double>(12, 1.0), 1e-12,
                         "implicit dim 0 for 3-d");
  testing::expect_values(exp(nn::LogSoftmax(-1)(x)).sum({-1}), {1.0, 1.0}, 1e-12, "LogSoftmax");
}

// ---- Containers ----

class Tower : public nn::Module {
 public:
  Tower() {
    blocks = register_module("blocks", std::make_shared<nn::ModuleList>());
    blocks->append(std::make_shared<nn::Linear>(2, 2));
    blocks->append(std::make_shared<nn::ReLU>());
    blocks->append(std::make_shared<nn::BatchNorm1d>(2));
    heads =
        register_module("heads", std::make_shared<nn::ModuleDict>(std::vector<nn::ModuleDict::Item>{
                                     {"cls", std::make_shared<nn::Linear>(2, 3)},
                                     {"box", std::make_shared<nn::Linear>(2, 4, false)}}));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = x;
    for (const auto& block : *blocks) h = (*block)(h);
    return (*heads->at("cls"))(h);
  }
  std::shared_ptr<nn::ModuleList> blocks;
  std::shared_ptr<nn::ModuleDict> heads;
};

TEST(NnLayers, ModuleListIndexesIteratesAndNamesChildrenByPosition) {
  auto a = std::make_shared<nn::Linear>(1, 1);
  auto b = std::make_shared<nn::ReLU>();
  nn::ModuleList list(a, b);
  list.push_back(std::make_shared<nn::Tanh>());
  EXPECT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0], a);
  EXPECT_EQ(list[-2], b);
  EXPECT_EQ(list[-1]->name(), "Tanh");
  std::vector<std::string> names;
  for (const auto& m : list) names.push_back(m->name());
  EXPECT_EQ(names, (std::vector<std::string>{"Linear", "ReLU", "Tanh"}));
  std::vector<std::string> child_names;
  for (const auto& [name, m] : list.named_children()) child_names.push_back(name);
  EXPECT_EQ(child_names, (std::vector<std::string>{"0", "1", "2"}));
  expect_error([&] { list[3]; }, "index 3 is out of range for ModuleList of size 3");
  expect_error([&] { list[-4]; }, "index -4 is out of range");
  expect_error([&] { list(zeros({1})); },
               "Module [ModuleList] is missing the required \"forward\" function");
}

TEST(NnLayers, ModuleDictKeepsInsertionOrderAndLooksUpByKey) {
  nn::ModuleDict dict;
  dict.insert("zeta", std::make_shared<nn::ReLU>());
  dict.insert("alpha", std::make_shared<nn::Tanh>());
  dict.update({{"mid", std::make_shared<nn::Sigmoid>()}});
  EXPECT_EQ(dict.keys(), (std::vector<std::string>{"zeta", "alpha", "mid"}));
  EXPECT_EQ(dict.size(), 3u);
  EXPECT_TRUE(dict.contains("alpha"));
  EXPECT_FALSE(dict.contains("beta"));
  EXPECT_EQ(dict["alpha"]->name(), "Tanh");
  EXPECT_EQ(dict.values()[2]->name(), "Sigmoid");
  std::vector<std::string> keys;
  for (const auto& [key, module] : dict) keys.push_back(key + ":" + module->name());
  EXPECT_EQ(keys, (std::vector<std::string>{"zeta:ReLU", "alpha:Tanh", "mid:Sigmoid"}));
  expect_error([&] { dict.at("beta"); }, "ModuleDict has no key 'beta'");
  expect_error([&] { dict.insert("a.b", std::make_shared<nn::ReLU>()); },
               "module name can't contain \".\", got: a.b");
  expect_error([&] { dict(zeros({1})); },
               "Module [ModuleDict] is missing the required \"forward\" function");
}

TEST(NnLayers, ContainersNestedInAModuleGivePyTorchStateDictKeys) {
  auto tower = std::make_shared<Tower>();
  EXPECT_EQ(state_keys(*tower),
            (std::vector<std::string>{"blocks.0.weight", "blocks.0.bias", "blocks.2.weight",
                                      "blocks.2.bias", "blocks.2.running_mean",
                                      "blocks.2.running_var", "blocks.2.num_batches_tracked",
                                      "heads.cls.weight", "heads.cls.bias", "heads.box.weight"}));
  EXPECT_EQ(shape_of((*tower)(zeros({4, 2}))), (Shape{4, 3}));
  tower->eval();
  EXPECT_FALSE((*tower->blocks)[2]->is_training());
  EXPECT_FALSE(tower->heads->at("box")->is_training());
}

}  // namespace
}  // namespace weft
