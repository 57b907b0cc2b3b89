// nn::MultiheadAttention, nn::TransformerEncoderLayer and nn::TransformerEncoder on their own:
// result shapes in every layout, PyTorch's parameter names and init, the attention formula and
// masks, error messages, and finite-difference gradients.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "expect_error.h"
#include "gradcheck.h"
#include "weft/autograd.h"
#include "weft/nn/attention.h"
#include "weft/nn/transformer.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft {
namespace {

using nn::MultiheadAttention;
using nn::TransformerEncoder;
using nn::TransformerEncoderLayer;
using testing::expect_error;
using testing::expect_parameter_gradients_match_finite_differences;
using testing::expect_same_values;
using testing::random_tensor;

std::pair<double, double> range_of(const Tensor& t) {
  const auto v = t.to_vector<double>();
  return {*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
}

TEST(NnAttention, OutputAndWeightShapesFollowLayout) {
  MultiheadAttention mha(8, 2);
  const Tensor q = randn({4, 3, 8}), kv = randn({5, 3, 8});
  auto [out, w] = mha(q, kv, kv);
  EXPECT_EQ(out.sizes(), (Shape{4, 3, 8}));
  EXPECT_EQ(w.sizes(), (Shape{3, 4, 5}));
  EXPECT_EQ(std::get<1>(mha(q, kv, kv, {}, true, {}, /*average_attn_weights=*/false)).sizes(),
            (Shape{3, 2, 4, 5}));
  EXPECT_FALSE(std::get<1>(mha(q, kv, kv, {}, /*need_weights=*/false)).defined());

  MultiheadAttention mha_bf(8, 2, 0.0, true, false, false, std::nullopt, std::nullopt,
                            /*batch_first=*/true);
  auto [out_bf, w_bf] = mha_bf(randn({3, 4, 8}), randn({3, 5, 8}), randn({3, 5, 8}));
  EXPECT_EQ(out_bf.sizes(), (Shape{3, 4, 8}));
  EXPECT_EQ(w_bf.sizes(), (Shape{3, 4, 5}));

  auto [out_u, w_u] = mha(randn({4, 8}), randn({5, 8}), randn({5, 8}), {}, true, {}, false);
  EXPECT_EQ(out_u.sizes(), (Shape{4, 8}));
  EXPECT_EQ(w_u.sizes(), (Shape{2, 4, 5}));

  // kdim/vdim, a learned extra key (bias_k/bias_v) and a zero key: two more keys.
  MultiheadAttention extra(8, 2, 0.0, true, /*add_bias_kv=*/true, /*add_zero_attn=*/true, 3, 6);
  auto [out_x, w_x] = extra(q, randn({5, 3, 3}), randn({5, 3, 6}));
  EXPECT_EQ(out_x.sizes(), (Shape{4, 3, 8}));
  EXPECT_EQ(w_x.sizes(), (Shape{3, 4, 7}));
}

TEST(NnAttention, StateDictKeysAndShapesMatchPyTorch) {
  MultiheadAttention mha(8, 2);
  EXPECT_EQ(mha.state_dict().keys(),
            (std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight",
                                      "out_proj.bias"}));
  EXPECT_EQ(mha.in_proj_weight.sizes(), (Shape{24, 8}));
  EXPECT_EQ(mha.in_proj_bias.sizes(), (Shape{24}));

  MultiheadAttention separate(8, 2, 0.0, true, /*add_bias_kv=*/true, false, 3, 5);
  EXPECT_EQ(
      separate.state_dict().keys(),
      (std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                                "bias_k", "bias_v", "out_proj.weight", "out_proj.bias"}));
  EXPECT_EQ(separate.k_proj_weight.sizes(), (Shape{8, 3}));
  EXPECT_EQ(separate.v_proj_weight.sizes(), (Shape{8, 5}));
  EXPECT_EQ(separate.bias_k.sizes(), (Shape{1, 1, 8}));

  MultiheadAttention no_bias(8, 2, 0.0, /*bias=*/false);
  EXPECT_EQ(no_bias.state_dict().keys(),
            (std::vector<std::string>{"in_proj_weight", "out_proj.weight"}));
}

TEST(NnAttention, InitialisationFollowsPyTorch) {
  manual_seed(9);
  MultiheadAttention mha(16, 4);
  const double xavier = std::sqrt(6.0 / (16 + 48));
  auto [lo, hi] = range_of(mha.in_proj_weight);
  EXPECT_GE(lo, -xavier);
  EXPECT_LE(hi, xavier);
  EXPECT_LT(lo, -xavier / 2);
  EXPECT_GT(hi, xavier / 2);
  EXPECT_EQ(range_of(mha.in_proj_bias), std::make_pair(0.0, 0.0));
  EXPECT_EQ(range_of(mha.out_proj->bias), std::make_pair(0.0, 0.0));
  auto [olo, ohi] = range_of(mha.out_proj->weight);  // Linear's default
  EXPECT_GE(olo, -0.25);
  EXPECT_LE(ohi, 0.25);
}

TEST(NnAttention, SingleHeadComputesScaledDotProductAttention) {
  MultiheadAttention mha(4, 1);
  const Tensor q = randn({3, 2, 4}), k = randn({5, 2, 4}), v = randn({5, 2, 4});
  auto [out, w] = mha(q, k, v);
  const auto wq = split(mha.in_proj_weight, 4, 0);
  const auto bq = split(mha.in_proj_bias, 4, 0);
  for (std::int64_t n = 0; n < 2; ++n) {
    const Tensor qp = linear(q.select(1, n), wq[0], bq[0]);
    const Tensor kp = linear(k.select(1, n), wq[1], bq[1]);
    const Tensor vp = linear(v.select(1, n), wq[2], bq[2]);
    const Tensor weights = softmax(matmul(qp, kp.t()) / 2.0, -1);  // sqrt(head_dim) = 2
    expect_same_values(w[n], weights, 1e-6);
    expect_same_values(out.select(1, n),
                       linear(matmul(weights, vp), mha.out_proj->weight, mha.out_proj->bias), 1e-5);
  }
}

TEST(NnAttention, MasksRemoveKeysAndBoolMatchesMinusInfinity) {
  MultiheadAttention mha(8, 2);
  const Tensor x = randn({4, 2, 8});
  auto [out, w] = mha(x, x, x, {}, true, {}, false);
  expect_same_values(sum(w, {-1}), ones({2, 2, 4}), 1e-6);

  // Key 3 of batch 1 is padding: nobody attends to it.
  const Tensor padding = tensor(std::vector<bool>{false, false, false, false,  //
                                                  false, false, false, true},
                                {2, 4});
  auto [out_p, w_p] = mha(x, x, x, padding, true, {}, false);
  expect_same_values(w_p[1].select(-1, 3), zeros({2, 4}));
  EXPECT_GT(min(w_p[0].select(-1, 3)).item(), 0.0);

  // A causal mask as bool and as a float -inf mask gives the same result.
  const Tensor causal = triu(ones({4, 4}), 1);
  const Tensor as_bool = gt(causal, scalar_tensor(0.5));
  const Tensor as_float =
      where(as_bool, scalar_tensor(-std::numeric_limits<double>::infinity()), scalar_tensor(0.0));
  auto [out_b, w_b] = mha(x, x, x, {}, true, as_bool);
  auto [out_f, w_f] = mha(x, x, x, {}, true, as_float);
  expect_same_values(out_b, out_f, 1e-6);
  expect_same_values(w_b, w_f, 1e-6);
  expect_same_values(mul(w_b, causal), zeros({2, 4, 4}));
  // Both masks at once: a bool attn_mask or-ed with the padding.
  auto [out_bp, w_bp] = mha(x, x, x, padding, true, as_bool);
  expect_same_values(w_bp[1].select(-1, 3), zeros({4}));
  expect_same_values(mul(w_bp, causal), zeros({2, 4, 4}));
  // A float key padding mask is added to the scores.
  const Tensor float_padding = where(padding, scalar_tensor(-1e9), scalar_tensor(0.0));
  expect_same_values(std::get<0>(mha(x, x, x, float_padding)), out_p, 1e-6);
}

TEST(NnAttention, UnbatchedAndBatchFirstInputsMatchTheSeqFirstBatch) {
  MultiheadAttention mha(8, 2);
  MultiheadAttention mha_bf(8, 2, 0.0, true, false, false, std::nullopt, std::nullopt, true);
  mha_bf.load_state_dict(mha.state_dict());
  const Tensor q = randn({4, 3, 8}), k = randn({5, 3, 8}), v = randn({5, 3, 8});
  const Tensor mask = randn({4, 5});
  auto [out, w] = mha(q, k, v, {}, true, mask);
  auto [out_bf, w_bf] =
      mha_bf(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), {}, true, mask);
  expect_same_values(out_bf.transpose(0, 1), out, 1e-6);
  expect_same_values(w_bf, w, 1e-6);

  auto [out_u, w_u] = mha(q.select(1, 2), k.select(1, 2), v.select(1, 2), {}, true, mask);
  expect_same_values(out_u, out.select(1, 2), 1e-6);
  expect_same_values(w_u, w[2], 1e-6);
}

TEST(NnAttention, DropoutOnWeightsOnlyInTraining) {
  MultiheadAttention mha(8, 2, /*dropout=*/0.5);
  const Tensor x = randn({6, 2, 8});
  manual_seed(4);
  auto [a, wa] = mha(x, x, x);
  manual_seed(4);
  auto [b, wb] = mha(x, x, x);
  expect_same_values(a, b);
  mha.eval();
  auto [e, we] = mha(x, x, x);
  expect_same_values(sum(we, {-1}), ones({2, 6}), 1e-6);
  EXPECT_GT(max(abs(a - e)).item(), 1e-3);
}

TEST(NnAttention, RejectsBadArgumentsWithPyTorchMessages) {
  expect_error([] { MultiheadAttention(10, 3); }, "embed_dim must be divisible by num_heads");
  MultiheadAttention mha(8, 2);
  const Tensor q = randn({4, 3, 8}), kv = randn({5, 3, 8});
  expect_error(
      [&] {
        mha(randn({1, 4, 3, 8}), kv, kv);
      },
      "query should be unbatched 2D or batched 3D tensor but received 4-D query tensor");
  expect_error(
      [&] {
        mha(q, randn({5, 8}), randn({5, 8}));
      },
      "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found 2-D "
      "and 2-D tensors respectively");
  expect_error(
      [&] {
        mha(randn({4, 3, 6}), kv, kv);
      },
      "was expecting embedding dimension of 8, but got 6");
  expect_error(
      [&] {
        mha(q, kv, randn({4, 3, 8}));
      },
      "key shape torch.Size([5, 3, 8]) does not match value shape torch.Size([4, 3, 8])");
  expect_error(
      [&] {
        mha(q, kv, kv, {}, true, randn({4, 4}));
      },
      "The shape of the 2D attn_mask is torch.Size([4, 4]), but should be (4, 5).");
  expect_error(
      [&] {
        mha(q, kv, kv, {}, true, randn({3, 4, 5}));
      },
      "The shape of the 3D attn_mask is torch.Size([3, 4, 5]), but should be (6, 4, 5).");
  expect_error(
      [&] {
        mha(q, kv, kv, zeros({3, 4}, dtype(Dtype::Bool)));
      },
      "expecting key_padding_mask shape of (3, 5), but got torch.Size([3, 4])");
  expect_error(
      [&] {
        mha(q, kv, kv, zeros({3, 5}, dtype(Dtype::Int64)));
      },
      "only bool and floating types of key_padding_mask are supported");
  expect_error(
      [&] {
        mha(q, kv, kv, {}, true, zeros({4, 5}, dtype(Dtype::Int64)));
      },
      "Only float, byte, and bool types are supported for attn_mask, not torch.int64");
}

TEST(NnAttention, MultiheadAttentionGradientsMatchFiniteDifferences) {
  manual_seed(7);
  MultiheadAttention mha(4, 2, 0.0, true, /*add_bias_kv=*/true, /*add_zero_attn=*/false, 3, 5);
  mha.to(Dtype::Float64);
  const Tensor q = random_tensor({3, 2, 4}, 1);
  const Tensor k = random_tensor({4, 2, 3}, 2);
  const Tensor v = random_tensor({4, 2, 5}, 3);
  const Tensor mask = random_tensor({3, 4}, 4);
  testing::expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& in) {
        auto [out, w] = mha(in[0], in[1], in[2], {}, true, in[3], false);
        return std::vector<Tensor>{out, w};
      },
      {q, k, v, mask});
  expect_parameter_gradients_match_finite_differences(mha, [&] {
    auto [out, w] = mha(q, k, v, {}, true, mask, false);
    return testing::weighted_sum({out, w}, 9);
  });
}

TEST(NnTransformer, EncoderLayerKeysMatchPyTorch) {
  TransformerEncoderLayer layer(8, 2, 16);
  EXPECT_EQ(layer.state_dict().keys(),
            (std::vector<std::string>{
                "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
                "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"}));
  std::vector<std::string> children;
  for (const auto& [name, child] : layer.named_children()) children.push_back(name);
  EXPECT_EQ(children, (std::vector<std::string>{"self_attn", "linear1", "dropout", "linear2",
                                                "norm1", "norm2", "dropout1", "dropout2"}));
  EXPECT_EQ(layer.linear1->weight.sizes(), (Shape{16, 8}));
  expect_error([] { TransformerEncoderLayer(8, 2, 16, 0.1, "tanh"); },
               "activation should be relu/gelu, not tanh");
}

TEST(NnTransformer, EncoderLayerFollowsPostAndPreNormFormulas) {
  for (const bool norm_first : {false, true}) {
    TransformerEncoderLayer layer(8, 2, 16, 0.0, "gelu", 1e-5, /*batch_first=*/true, norm_first);
    const Tensor src = randn({2, 5, 8});
    const Tensor out = layer(src);
    EXPECT_EQ(out.sizes(), src.sizes());
    auto attention = [&](const Tensor& x) { return std::get<0>((*layer.self_attn)(x, x, x)); };
    auto feed_forward = [&](const Tensor& x) {
      return (*layer.linear2)(gelu((*layer.linear1)(x)));
    };
    Tensor want;
    if (norm_first) {
      const Tensor x = src + attention((*layer.norm1)(src));
      want = x + feed_forward((*layer.norm2)(x));
    } else {
      const Tensor x = (*layer.norm1)(src + attention(src));
      want = (*layer.norm2)(x + feed_forward(x));
    }
    expect_same_values(out, want, 1e-5);
  }
}

TEST(NnTransformer, EncoderLayerDropoutOnlyInTrainingAndMasksReachAttention) {
  TransformerEncoderLayer layer(8, 2, 16, /*dropout=*/0.3);
  const Tensor src = randn({5, 2, 8});
  const Tensor train_out = layer(src);
  layer.eval();
  const Tensor a = layer(src);
  expect_same_values(a, layer(src));
  EXPECT_GT(max(abs(train_out - a)).item(), 1e-3);

  const Tensor causal = gt(triu(ones({5, 5}), 1), scalar_tensor(0.5));
  const Tensor masked = layer(src, causal);
  // Position 0 sees only itself, so it does not depend on later positions.
  const Tensor changed = cat({src.slice(0, 0, 1), randn({4, 2, 8})}, 0);
  expect_same_values(layer(changed, causal)[0], masked[0], 1e-6);
  EXPECT_GT(max(abs(masked[0] - a[0])).item(), 1e-4);  // row 0 lost its other keys
}

TEST(NnTransformer, EncoderStacksIndependentCopiesOfTheLayer) {
  TransformerEncoderLayer prototype(8, 2, 16, 0.0);
  TransformerEncoder encoder(prototype, 2, std::make_shared<nn::LayerNorm>(Shape{8}));
  const auto keys = encoder.state_dict().keys();
  ASSERT_EQ(keys.size(), 2 * prototype.state_dict().size() + 2);
  EXPECT_EQ(keys.front(), "layers.0.self_attn.in_proj_weight");
  EXPECT_EQ(keys[12], "layers.1.self_attn.in_proj_weight");
  EXPECT_EQ(keys.back(), "norm.bias");

  // Same initial values as the prototype (Python deep-copies it), but separate tensors.
  auto first = std::static_pointer_cast<TransformerEncoderLayer>((*encoder.layers)[0]);
  auto second = std::static_pointer_cast<TransformerEncoderLayer>((*encoder.layers)[1]);
  expect_same_values(first->linear1->weight, prototype.linear1->weight);
  EXPECT_FALSE(first->linear1->weight.is_same(second->linear1->weight));
  EXPECT_FALSE(first->linear1->weight.storage() == prototype.linear1->weight.storage());

  const Tensor src = randn({4, 3, 8});
  const Tensor mask = randn({4, 4});
  expect_same_values(encoder(src, mask),
                     (*encoder.norm)(second->forward(first->forward(src, mask), mask)), 1e-6);
}

TEST(NnTransformer, EncoderLayerGradientsMatchFiniteDifferences) {
  manual_seed(8);
  TransformerEncoderLayer layer(4, 2, 6, 0.0, "gelu", 1e-5, false, /*norm_first=*/true);
  layer.to(Dtype::Float64);
  const Tensor src = random_tensor({3, 2, 4}, 5);
  testing::expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{layer(in[0])}; }, {src});
  expect_parameter_gradients_match_finite_differences(
      layer, [&] { return testing::weighted_sum({layer(src)}, 10); });
}

}  // namespace
}  // namespace weft
