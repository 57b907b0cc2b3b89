// weft's standard layers against torch::nn's (LibTorch 1.13): for each layer and a few option
// combinations, weft's weights are copied into the torch module by state-dict key (which also
// checks that the keys and shapes agree), then the forward output and the gradients w.r.t. the
// input and every parameter are compared (float64: 1e-10; float32: 1e-5). BatchNorm's running
// statistics are compared after a training forward. Default initialisation is checked
// statistically, since the two RNGs differ.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "module_vs_torch.h"
#include "weft/nn/activation.h"
#include "weft/nn/container.h"
#include "weft/nn/conv.h"
#include "weft/nn/conv_transpose.h"
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

namespace tnn = torch::nn;
using testing::pattern_tensor;

constexpr double kTol64 = 1e-10;

// Converts both modules to `dt`, copies weft's state into torch, sets both to train/eval, and
// compares forward and gradients on `input`.
template <typename Holder>
void expect_matches(nn::Module& weft_module, Holder& torch_module, const Tensor& input,
                    bool training = true, Dtype dt = Dtype::Float64) {
  weft_module.to(dt);
  torch_module->to(dt == Dtype::Float64 ? torch::kFloat64 : torch::kFloat32);
  testing::copy_weights(weft_module, *torch_module);
  weft_module.train(training);
  torch_module->train(training);
  const double tol = dt == Dtype::Float64 ? kTol64 : 1e-5;
  testing::expect_module_matches_torch(
      weft_module, *torch_module, input.is_floating_point() ? input.to(dt) : input,
      [&](const Tensor& x) { return weft_module(x); },
      [&](const torch::Tensor& x) { return torch_module->forward(x); }, tol, tol);
}

Tensor input_of(std::vector<std::int64_t> shape, double seed = 0.3) {
  return pattern_tensor(std::move(shape), seed, -2.0, 2.0, Dtype::Float64);
}

// ---- Conv ----

TEST(NnLayersVsTorch, Conv2dMatchesTorchModule) {
  {
    nn::Conv2d conv(3, 4, 3);
    tnn::Conv2d ref(3, 4, 3);
    expect_matches(conv, ref, input_of({2, 3, 6, 7}));
  }
  {
    nn::Conv2d conv(
        nn::Conv2dOptions(4, 6, {3, 2}).stride({2, 1}).padding({1, 2}).dilation(2).groups(2));
    tnn::Conv2d ref(
        tnn::Conv2dOptions(4, 6, {3, 2}).stride({2, 1}).padding({1, 2}).dilation(2).groups(2));
    expect_matches(conv, ref, input_of({2, 4, 9, 8}));
  }
  {
    nn::Conv2d conv(nn::Conv2dOptions(2, 3, {4, 3}).padding("same").dilation({1, 2}).bias(false));
    tnn::Conv2d ref(
        tnn::Conv2dOptions(2, 3, {4, 3}).padding(torch::kSame).dilation({1, 2}).bias(false));
    expect_matches(conv, ref, input_of({1, 2, 7, 6}));
  }
  {
    nn::Conv2d conv(nn::Conv2dOptions(2, 2, 3).padding("valid"));
    tnn::Conv2d ref(tnn::Conv2dOptions(2, 2, 3).padding(torch::kValid));
    expect_matches(conv, ref, input_of({1, 2, 5, 5}));
  }
  {
    nn::Conv2d conv(3, 5, {2, 3});
    tnn::Conv2d ref(tnn::Conv2dOptions(3, 5, {2, 3}));
    expect_matches(conv, ref, input_of({2, 3, 5, 6}), true, Dtype::Float32);
  }
}

TEST(NnLayersVsTorch, ConvTransposeMatchesTorchModule) {
  {
    nn::ConvTranspose2d conv(3, 4, 3);
    tnn::ConvTranspose2d ref(3, 4, 3);
    expect_matches(conv, ref, input_of({2, 3, 4, 5}));
  }
  {
    nn::ConvTranspose2d conv(nn::ConvTranspose2dOptions(4, 6, {3, 2})
                                 .stride({2, 1})
                                 .padding({1, 0})
                                 .output_padding({1, 0})
                                 .groups(2)
                                 .dilation({1, 2}));
    tnn::ConvTranspose2d ref(tnn::ConvTranspose2dOptions(4, 6, {3, 2})
                                 .stride({2, 1})
                                 .padding({1, 0})
                                 .output_padding({1, 0})
                                 .groups(2)
                                 .dilation({1, 2}));
    expect_matches(conv, ref, input_of({2, 4, 3, 4}));
  }
  {
    nn::ConvTranspose1d conv(nn::ConvTranspose1dOptions(2, 3, 4).stride(3).bias(false));
    tnn::ConvTranspose1d ref(tnn::ConvTranspose1dOptions(2, 3, 4).stride(3).bias(false));
    expect_matches(conv, ref, input_of({2, 2, 5}), true, Dtype::Float32);
  }
}

TEST(NnLayersVsTorch, Conv2dPaddingModesMatchTorchModule) {
  {
    nn::Conv2d conv(nn::Conv2dOptions(2, 3, 3).padding({1, 2}).padding_mode("reflect"));
    tnn::Conv2d ref(tnn::Conv2dOptions(2, 3, 3).padding({1, 2}).padding_mode(torch::kReflect));
    expect_matches(conv, ref, input_of({2, 2, 5, 6}));
  }
  {
    nn::Conv2d conv(nn::Conv2dOptions(2, 2, 3).padding(1).stride(2).padding_mode("replicate"));
    tnn::Conv2d ref(
        tnn::Conv2dOptions(2, 2, 3).padding(1).stride(2).padding_mode(torch::kReplicate));
    expect_matches(conv, ref, input_of({1, 2, 6, 5}));
  }
  {
    nn::Conv2d conv(nn::Conv2dOptions(2, 2, 2).padding("same").padding_mode("circular"));
    tnn::Conv2d ref(
        tnn::Conv2dOptions(2, 2, 2).padding(torch::kSame).padding_mode(torch::kCircular));
    expect_matches(conv, ref, input_of({1, 2, 4, 5}));
  }
}

TEST(NnLayersVsTorch, Conv1dMatchesTorchModule) {
  {
    nn::Conv1d conv(3, 4, 3);
    tnn::Conv1d ref(3, 4, 3);
    expect_matches(conv, ref, input_of({2, 3, 8}));
  }
  {
    nn::Conv1d conv(
        nn::Conv1dOptions(4, 2, 3).stride(2).padding(2).dilation(2).groups(2).bias(false));
    tnn::Conv1d ref(
        tnn::Conv1dOptions(4, 2, 3).stride(2).padding(2).dilation(2).groups(2).bias(false));
    expect_matches(conv, ref, input_of({3, 4, 9}));
  }
  {
    nn::Conv1d conv(nn::Conv1dOptions(2, 2, 4).padding("same").padding_mode("reflect"));
    tnn::Conv1d ref(
        tnn::Conv1dOptions(2, 2, 4).padding(torch::kSame).padding_mode(torch::kReflect));
    expect_matches(conv, ref, input_of({2, 2, 7}));
  }
}

// ---- Linear ----

TEST(NnLayersVsTorch, LinearMatchesTorchModule) {
  nn::Linear lin(5, 3);
  tnn::Linear ref(5, 3);
  expect_matches(lin, ref, input_of({4, 5}));
  nn::Linear no_bias(5, 3, false);
  tnn::Linear ref_no_bias(tnn::LinearOptions(5, 3).bias(false));
  expect_matches(no_bias, ref_no_bias, input_of({2, 3, 5}));
}

// ---- Normalization ----

// Compares running_mean / running_var / num_batches_tracked after the forwards already run.
template <typename Holder>
void expect_running_stats_match(const nn::BatchNormBase& bn, Holder& ref) {
  testing::expect_close_to_torch(bn.running_mean, ref->running_mean, kTol64, kTol64,
                                 "running_mean");
  testing::expect_close_to_torch(bn.running_var, ref->running_var, kTol64, kTol64, "running_var");
  EXPECT_EQ(bn.num_batches_tracked.item<std::int64_t>(),
            ref->num_batches_tracked.template item<std::int64_t>());
}

TEST(NnLayersVsTorch, BatchNorm2dMatchesTorchModuleInTrainAndEval) {
  for (const bool training : {true, false}) {
    SCOPED_TRACE(training ? "train" : "eval");
    nn::BatchNorm2d bn(3);
    tnn::BatchNorm2d ref(3);
    // Non-trivial affine parameters and running statistics.
    bn.to(Dtype::Float64);
    bn.weight.detach().copy_(input_of({3}, 1.1));
    bn.bias.detach().copy_(input_of({3}, 1.7));
    bn.running_mean.copy_(input_of({3}, 2.1));
    bn.running_var.copy_(pattern_tensor({3}, 2.9, 0.5, 2.0, Dtype::Float64));
    expect_matches(bn, ref, input_of({2, 3, 4, 3}), training);
    expect_running_stats_match(bn, ref);
  }
  {
    nn::BatchNorm2d bn(2, 1e-3, 0.3, /*affine=*/false);
    tnn::BatchNorm2d ref(tnn::BatchNorm2dOptions(2).eps(1e-3).momentum(0.3).affine(false));
    expect_matches(bn, ref, input_of({3, 2, 2, 2}));
    expect_running_stats_match(bn, ref);
  }
  {
    nn::BatchNorm2d bn(2, 1e-5, 0.1, true, /*track_running_stats=*/false);
    tnn::BatchNorm2d ref(tnn::BatchNorm2dOptions(2).track_running_stats(false));
    expect_matches(bn, ref, input_of({3, 2, 2, 2}), /*training=*/false);
  }
}

TEST(NnLayersVsTorch, BatchNorm1dMatchesTorchModule) {
  {
    nn::BatchNorm1d bn(4);
    tnn::BatchNorm1d ref(4);
    expect_matches(bn, ref, input_of({5, 4}));
    expect_running_stats_match(bn, ref);
    expect_matches(bn, ref, input_of({3, 4, 6}, 0.9));  // second batch: [N, C, L]
    expect_running_stats_match(bn, ref);
    expect_matches(bn, ref, input_of({3, 4}, 1.9), /*training=*/false);
  }
  {
    // momentum = None: cumulative average over two batches.
    nn::BatchNorm1d bn(3, 1e-5, std::nullopt);
    tnn::BatchNorm1d ref(tnn::BatchNorm1dOptions(3).momentum(c10::nullopt));
    expect_matches(bn, ref, input_of({4, 3}));
    expect_matches(bn, ref, input_of({4, 3}, 2.5));
    expect_running_stats_match(bn, ref);
  }
  {
    nn::BatchNorm1d bn(3);
    tnn::BatchNorm1d ref(3);
    expect_matches(bn, ref, input_of({4, 3, 2}), true, Dtype::Float32);
  }
}

TEST(NnLayersVsTorch, LayerNormMatchesTorchModule) {
  {
    nn::LayerNorm ln({4});
    tnn::LayerNorm ref(tnn::LayerNormOptions({4}));
    ln.to(Dtype::Float64);
    ln.weight.detach().copy_(input_of({4}, 0.4));
    ln.bias.detach().copy_(input_of({4}, 0.8));
    expect_matches(ln, ref, input_of({3, 4}));
  }
  {
    nn::LayerNorm ln({3, 4}, 1e-3);
    tnn::LayerNorm ref(tnn::LayerNormOptions({3, 4}).eps(1e-3));
    expect_matches(ln, ref, input_of({2, 3, 4}));
  }
  {
    nn::LayerNorm ln({5}, 1e-5, /*elementwise_affine=*/false);
    tnn::LayerNorm ref(tnn::LayerNormOptions({5}).elementwise_affine(false));
    expect_matches(ln, ref, input_of({2, 2, 5}));
    expect_matches(ln, ref, input_of({2, 5}), true, Dtype::Float32);
  }
}

// ---- Dropout: RNGs differ, so only eval mode and p = 0 ----

TEST(NnLayersVsTorch, DropoutMatchesTorchModuleInEvalAndWithZeroP) {
  nn::Dropout dropout(0.4);
  tnn::Dropout ref(0.4);
  expect_matches(dropout, ref, input_of({3, 5}), /*training=*/false);
  nn::Dropout none(0.0);
  tnn::Dropout ref_none(0.0);
  expect_matches(none, ref_none, input_of({3, 5}), /*training=*/true);
}

// ---- Embedding ----

TEST(NnLayersVsTorch, EmbeddingMatchesTorchModule) {
  const Tensor idx = tensor(std::vector<std::int64_t>{0, 3, 3, 1, 4, 2}, {2, 3});
  {
    nn::Embedding emb(5, 3);
    tnn::Embedding ref(5, 3);
    expect_matches(emb, ref, idx);
  }
  {
    nn::Embedding emb(5, 4, /*padding_idx=*/-2);  // row 3
    tnn::Embedding ref(tnn::EmbeddingOptions(5, 4).padding_idx(-2));
    EXPECT_EQ(emb.padding_idx, *ref->options.padding_idx());
    expect_matches(emb, ref, idx);
  }
}

// ---- Pooling and shape ----

TEST(NnLayersVsTorch, MaxPoolMatchesTorchModule) {
  {
    nn::MaxPool2d pool(2);
    tnn::MaxPool2d ref(2);
    expect_matches(pool, ref, input_of({2, 3, 6, 7}));
  }
  {
    nn::MaxPool2d pool(
        nn::MaxPool2dOptions({3, 2}).stride({2, 1}).padding(1).dilation({1, 2}).ceil_mode(true));
    tnn::MaxPool2d ref(
        tnn::MaxPool2dOptions({3, 2}).stride({2, 1}).padding(1).dilation({1, 2}).ceil_mode(true));
    expect_matches(pool, ref, input_of({1, 2, 7, 8}));
  }
  {
    nn::MaxPool1d pool(nn::MaxPool1dOptions(3).stride(2).padding(1));
    tnn::MaxPool1d ref(tnn::MaxPool1dOptions(3).stride(2).padding(1));
    expect_matches(pool, ref, input_of({2, 3, 9}));
  }
}

TEST(NnLayersVsTorch, AvgPoolMatchesTorchModule) {
  {
    nn::AvgPool2d pool(3);
    tnn::AvgPool2d ref(3);
    expect_matches(pool, ref, input_of({2, 2, 7, 6}));
  }
  {
    nn::AvgPool2d pool(
        nn::AvgPool2dOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false));
    tnn::AvgPool2d ref(
        tnn::AvgPool2dOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false));
    expect_matches(pool, ref, input_of({1, 2, 6, 7}));
  }
  {
    nn::AvgPool1d pool(nn::AvgPool1dOptions(2).padding(1));
    tnn::AvgPool1d ref(tnn::AvgPool1dOptions(2).padding(1));
    expect_matches(pool, ref, input_of({2, 3, 7}));
  }
}

TEST(NnLayersVsTorch, AdaptiveAvgPool2dMatchesTorchModule) {
  {
    nn::AdaptiveAvgPool2d pool(1);
    tnn::AdaptiveAvgPool2d ref(1);
    expect_matches(pool, ref, input_of({2, 3, 5, 4}));
  }
  {
    nn::AdaptiveAvgPool2d pool({3, 2});
    tnn::AdaptiveAvgPool2d ref(tnn::AdaptiveAvgPool2dOptions({3, 2}));
    expect_matches(pool, ref, input_of({1, 2, 7, 5}));
  }
}

TEST(NnLayersVsTorch, Pool3dLayersMatchTorchModules) {
  {
    nn::MaxPool3d pool(nn::MaxPool3dOptions({2, 3, 2}).stride(2).padding(1).dilation({1, 1, 2}));
    tnn::MaxPool3d ref(tnn::MaxPool3dOptions({2, 3, 2}).stride(2).padding(1).dilation({1, 1, 2}));
    expect_matches(pool, ref, input_of({2, 2, 5, 6, 7}));
  }
  {
    nn::AvgPool3d pool(
        nn::AvgPool3dOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false));
    tnn::AvgPool3d ref(
        tnn::AvgPool3dOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false));
    expect_matches(pool, ref, input_of({1, 2, 6, 5, 7}));
  }
  {
    nn::AdaptiveAvgPool3d pool({3, 1, 2});
    tnn::AdaptiveAvgPool3d ref(tnn::AdaptiveAvgPool3dOptions({3, 1, 2}));
    expect_matches(pool, ref, input_of({2, 7, 5, 4}));
  }
}

TEST(NnLayersVsTorch, FlattenAndUnflattenMatchTorchModule) {
  {
    nn::Flatten flatten;
    tnn::Flatten ref;
    expect_matches(flatten, ref, input_of({2, 3, 4}));
  }
  {
    nn::Flatten flatten(0, -2);
    tnn::Flatten ref(tnn::FlattenOptions().start_dim(0).end_dim(-2));
    expect_matches(flatten, ref, input_of({2, 3, 4}));
  }
  {
    nn::Unflatten unflatten(1, {2, 6});
    tnn::Unflatten ref(tnn::UnflattenOptions(1, {2, 6}));
    expect_matches(unflatten, ref, input_of({3, 12}));
  }
}

// ---- Activations ----

TEST(NnLayersVsTorch, ActivationsMatchTorchModules) {
  const Tensor x = input_of({3, 4, 2}, 0.6);
  {
    nn::LeakyReLU m;
    tnn::LeakyReLU ref;
    expect_matches(m, ref, x);
  }
  {
    nn::LeakyReLU m(0.3);
    tnn::LeakyReLU ref(tnn::LeakyReLUOptions().negative_slope(0.3));
    expect_matches(m, ref, x);
  }
  {
    nn::GELU m;
    tnn::GELU ref;
    expect_matches(m, ref, x);
  }
  {
    nn::GELU m("tanh");
    tnn::GELU ref(tnn::GELUOptions().approximate("tanh"));
    expect_matches(m, ref, x);
  }
  {
    nn::SiLU m;
    tnn::SiLU ref;
    expect_matches(m, ref, x);
  }
  {
    nn::ELU m(0.7);
    tnn::ELU ref(tnn::ELUOptions().alpha(0.7));
    expect_matches(m, ref, x);
  }
  {
    nn::Softplus m(2.0, 1.5);
    tnn::Softplus ref(tnn::SoftplusOptions().beta(2.0).threshold(1.5));
    expect_matches(m, ref, x);
  }
  {
    nn::Softmax m(1);
    tnn::Softmax ref(1);
    expect_matches(m, ref, x);
  }
  {
    nn::LogSoftmax m(-1);
    tnn::LogSoftmax ref(-1);
    expect_matches(m, ref, x);
  }
  {
    nn::Identity m;
    tnn::Identity ref;
    expect_matches(m, ref, x);
  }
  {
    nn::ReLU m;
    tnn::ReLU ref;
    expect_matches(m, ref, x, true, Dtype::Float32);
  }
}

// ---- Containers: keys line up with torch's ModuleList / ModuleDict ----

class WeftTower : public nn::Module {
 public:
  WeftTower() {
    blocks = register_module("blocks",
                             std::make_shared<nn::ModuleList>(std::make_shared<nn::Conv2d>(2, 3, 3),
                                                              std::make_shared<nn::BatchNorm2d>(3),
                                                              std::make_shared<nn::ReLU>()));
    heads =
        register_module("heads", std::make_shared<nn::ModuleDict>(std::vector<nn::ModuleDict::Item>{
                                     {"pool", std::make_shared<nn::AdaptiveAvgPool2d>(1)},
                                     {"flat", std::make_shared<nn::Flatten>()},
                                     {"fc", std::make_shared<nn::Linear>(3, 2)}}));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = x;
    for (const auto& block : *blocks) h = (*block)(h);
    for (const auto& [key, head] : *heads) h = (*head)(h);
    return h;
  }
  std::shared_ptr<nn::ModuleList> blocks;
  std::shared_ptr<nn::ModuleDict> heads;
};

struct TorchTowerImpl : tnn::Module {
  TorchTowerImpl() {
    blocks = register_module(
        "blocks", tnn::ModuleList(tnn::Conv2d(2, 3, 3), tnn::BatchNorm2d(3), tnn::ReLU()));
    heads = register_module(
        "heads", tnn::ModuleDict(torch::OrderedDict<std::string, std::shared_ptr<tnn::Module>>{
                     {"pool", tnn::AdaptiveAvgPool2d(1).ptr()},
                     {"flat", tnn::Flatten().ptr()},
                     {"fc", tnn::Linear(3, 2).ptr()}}));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = blocks[0]->as<tnn::Conv2d>()->forward(x);
    x = blocks[1]->as<tnn::BatchNorm2d>()->forward(x);
    x = blocks[2]->as<tnn::ReLU>()->forward(x);
    x = heads["pool"]->as<tnn::AdaptiveAvgPool2d>()->forward(x);
    x = heads["flat"]->as<tnn::Flatten>()->forward(x);
    return heads["fc"]->as<tnn::Linear>()->forward(x);
  }
  tnn::ModuleList blocks;
  tnn::ModuleDict heads;
};
TORCH_MODULE(TorchTower);

TEST(NnLayersVsTorch, ModuleListAndModuleDictGiveTorchStateDictKeys) {
  WeftTower tower;
  TorchTower ref;
  std::vector<std::string> torch_keys;
  for (const auto& item : ref->named_parameters()) torch_keys.push_back(item.key());
  std::vector<std::string> weft_keys;
  for (const auto& [name, p] : tower.named_parameters()) weft_keys.push_back(name);
  EXPECT_EQ(weft_keys, torch_keys);
  expect_matches(tower, ref, input_of({2, 2, 5, 5}));
  expect_matches(tower, ref, input_of({2, 2, 5, 5}, 1.3), /*training=*/false);
}

// ---- Default initialisation: the same distributions as torch's (different RNG streams) ----

struct Stats {
  double mean = 0, std = 0, absmax = 0;
};
Stats stats_of(const std::vector<double>& v) {
  Stats s;
  for (double x : v) {
    s.mean += x;
    s.absmax = std::max(s.absmax, std::fabs(x));
  }
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.std += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(s.std / static_cast<double>(v.size() - 1));
  return s;
}
std::vector<double> values_of(const torch::Tensor& t) {
  const torch::Tensor flat = t.detach().to(torch::kFloat64).contiguous().view({-1});
  return {flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel()};
}

// Both samples are U(-bound, bound): within the bound, reaching near it, std ≈ bound/√3.
void expect_uniform(const std::vector<double>& weft_values, const std::vector<double>& torch_values,
                    double bound, const std::string& what) {
  const Stats w = stats_of(weft_values), t = stats_of(torch_values);
  const double std = bound / std::sqrt(3.0);
  const double n = static_cast<double>(weft_values.size());
  EXPECT_LE(w.absmax, bound) << what;
  EXPECT_GT(w.absmax, bound * (1 - 20 / n)) << what;
  EXPECT_NEAR(w.mean, 0.0, 5 * std / std::sqrt(n)) << what;
  EXPECT_NEAR(w.std, std, 0.05 * std) << what;
  EXPECT_NEAR(t.std, std, 0.05 * std) << what << " (torch)";
  EXPECT_LE(t.absmax, bound) << what << " (torch)";
}

TEST(NnLayersVsTorch, DefaultInitDrawsFromTorchsDistributions) {
  manual_seed(0);
  torch::manual_seed(0);
  {
    nn::Conv2d conv(16, 64, 3);
    tnn::Conv2d ref(16, 64, 3);
    const double bound = 1.0 / std::sqrt(16.0 * 9.0);
    expect_uniform(conv.weight.to_vector<double>(), values_of(ref->weight), bound, "Conv2d weight");
    const Stats b = stats_of(conv.bias.to_vector<double>());
    EXPECT_LE(b.absmax, bound);
  }
  {
    nn::Conv1d conv(nn::Conv1dOptions(8, 256, 5).groups(4));
    tnn::Conv1d ref(tnn::Conv1dOptions(8, 256, 5).groups(4));
    expect_uniform(conv.weight.to_vector<double>(), values_of(ref->weight), 1.0 / std::sqrt(10.0),
                   "Conv1d weight");
  }
  {
    nn::Linear lin(100, 80);
    tnn::Linear ref(100, 80);
    expect_uniform(lin.weight.to_vector<double>(), values_of(ref->weight), 0.1, "Linear weight");
  }
  {
    nn::Embedding emb(1000, 20);
    tnn::Embedding ref(1000, 20);
    const Stats w = stats_of(emb.weight.to_vector<double>());
    const Stats t = stats_of(values_of(ref->weight));
    EXPECT_NEAR(w.mean, 0.0, 0.05);
    EXPECT_NEAR(w.std, 1.0, 0.03);
    EXPECT_NEAR(t.std, 1.0, 0.03);
  }
  {
    // Deterministic initialisers: exactly torch's values.
    nn::BatchNorm2d bn(4);
    tnn::BatchNorm2d ref(4);
    const auto params = ref->named_parameters();
    const auto buffers = ref->named_buffers();
    for (const auto& [name, value] : bn.state_dict()) {
      const torch::Tensor* t = params.find(name);
      if (t == nullptr) t = buffers.find(name);
      ASSERT_NE(t, nullptr) << name;
      EXPECT_EQ(value.to_vector<double>(), values_of(*t)) << name;
    }
    nn::LayerNorm ln({3});
    tnn::LayerNorm ref_ln(tnn::LayerNormOptions({3}));
    EXPECT_EQ(ln.weight.to_vector<double>(), values_of(ref_ln->weight));
    EXPECT_EQ(ln.bias.to_vector<double>(), values_of(ref_ln->bias));
  }
}

}  // namespace
}  // namespace weft
