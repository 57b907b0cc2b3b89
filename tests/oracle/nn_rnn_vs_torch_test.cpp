// weft's LSTM, GRU, MultiheadAttention, TransformerEncoderLayer and TransformerEncoder against
// torch::nn's (LibTorch 1.13): with weft's weights copied into the torch module by name, outputs
// and gradients (input, initial states, key/value, every parameter) agree within 1e-10 in float64
// and 2e-5 in float32. Where LibTorch's C++ modules lack a Python argument (batch_first for
// attention, norm_first, layer_norm_eps), the torch side transposes or composes its own
// submodules exactly as Python 1.13's forward does.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <limits>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "module_vs_torch.h"
#include "weft/nn/attention.h"
#include "weft/nn/normalization.h"
#include "weft/nn/rnn.h"
#include "weft/nn/transformer.h"
#include "weft/ops.h"

namespace weft {
namespace {

using testing::copy_weights;
using testing::expect_close_to_torch;
using testing::expect_module_matches_torch;
using testing::pattern_tensor;

torch::Dtype torch_dtype(Dtype dt) {
  return dt == Dtype::Float64 ? torch::kFloat64 : torch::kFloat32;
}

double tolerance(Dtype dt) {
  return dt == Dtype::Float64 ? 1e-10 : 2e-5;
}

// The same values as a leaf that requires grad on both sides (initial states, key, value).
struct Leaf {
  Tensor weft;
  torch::Tensor torch;
};
Leaf make_leaf(const Shape& shape, double seed, Dtype dt) {
  Tensor w = pattern_tensor(shape, seed, -1.0, 1.0, dt);
  w.requires_grad_(true);
  torch::Tensor t = oracle::to_torch(w).clone().requires_grad_(true);
  return {w, t};
}

void expect_same_gradient(const Leaf& leaf, double tol, const std::string& what) {
  ASSERT_TRUE(leaf.weft.grad().defined()) << what;
  ASSERT_TRUE(leaf.torch.grad().defined()) << what;
  expect_close_to_torch(leaf.weft.grad(), leaf.torch.grad(), tol, tol, "gradient of " + what);
}

Tensor flat_cat(const std::vector<Tensor>& parts) {
  std::vector<Tensor> flat;
  for (const Tensor& p : parts) flat.push_back(p.reshape({-1}));
  return cat(flat, 0);
}
torch::Tensor flat_cat(const std::vector<torch::Tensor>& parts) {
  std::vector<torch::Tensor> flat;
  for (const torch::Tensor& p : parts) flat.push_back(p.reshape({-1}));
  return torch::cat(flat, 0);
}

// ---------------------------------------------------------------- LSTM and GRU

struct RnnCase {
  std::int64_t num_layers;
  bool bidirectional;
  bool batch_first;
  bool with_state;
  bool unbatched;
  Dtype dt;
  double dropout = 0.0;
  bool eval = false;
  bool bias = true;
};

std::string describe(const RnnCase& c) {
  std::ostringstream out;
  out << "num_layers=" << c.num_layers << " bidirectional=" << c.bidirectional
      << " batch_first=" << c.batch_first << " with_state=" << c.with_state
      << " unbatched=" << c.unbatched << " dtype=" << dtype_name(c.dt) << " dropout=" << c.dropout
      << " eval=" << c.eval << " bias=" << c.bias;
  return out.str();
}

std::vector<RnnCase> rnn_cases() {
  std::vector<RnnCase> cases;
  for (std::int64_t layers : {1, 2}) {
    for (bool bidirectional : {false, true}) {
      for (bool batch_first : {false, true}) {
        for (bool with_state : {false, true}) {
          cases.push_back({layers, bidirectional, batch_first, with_state, false, Dtype::Float64});
        }
      }
    }
  }
  cases.push_back({2, true, false, true, /*unbatched=*/true, Dtype::Float64});
  cases.push_back({2, true, true, true, false, Dtype::Float32});
  cases.push_back({2, false, false, false, false, Dtype::Float64, /*dropout=*/0.4, /*eval=*/true});
  cases.push_back({2, true, false, true, false, Dtype::Float64, 0.0, false, /*bias=*/false});
  return cases;
}

constexpr std::int64_t kInput = 3, kHidden = 4, kSteps = 5, kBatch = 2;

Shape rnn_input_shape(const RnnCase& c) {
  if (c.unbatched) return {kSteps, kInput};
  return c.batch_first ? Shape{kBatch, kSteps, kInput} : Shape{kSteps, kBatch, kInput};
}

Shape rnn_state_shape(const RnnCase& c) {
  const std::int64_t rows = c.num_layers * (c.bidirectional ? 2 : 1);
  return c.unbatched ? Shape{rows, kHidden} : Shape{rows, kBatch, kHidden};
}

// LibTorch 1.13's C++ RNNs take batched input only; Python treats unbatched input as a batch
// of one (dim 1 for the input and the states). The flattened results are the same either way.
torch::Tensor batch_of_one(const torch::Tensor& t, const RnnCase& c) {
  return c.unbatched ? t.unsqueeze(1) : t;
}

template <typename TorchOptions>
TorchOptions torch_rnn_options(const RnnCase& c) {
  return TorchOptions(kInput, kHidden)
      .num_layers(c.num_layers)
      .bias(c.bias)
      .batch_first(c.batch_first)
      .dropout(c.dropout)
      .bidirectional(c.bidirectional);
}

TEST(NnRnnVsTorch, LstmMatchesTorchModule) {
  for (const RnnCase& c : rnn_cases()) {
    SCOPED_TRACE(describe(c));
    nn::LSTM lstm(kInput, kHidden, c.num_layers, c.bias, c.batch_first, c.dropout, c.bidirectional);
    torch::nn::LSTM torch_lstm(torch_rnn_options<torch::nn::LSTMOptions>(c));
    lstm.to(c.dt);
    torch_lstm->to(torch_dtype(c.dt));
    if (c.eval) {
      lstm.eval();
      torch_lstm->eval();
    }
    copy_weights(lstm, *torch_lstm);
    const Leaf h0 = make_leaf(rnn_state_shape(c), 0.3, c.dt);
    const Leaf c0 = make_leaf(rnn_state_shape(c), 0.9, c.dt);
    const double tol = tolerance(c.dt);
    expect_module_matches_torch(
        lstm, *torch_lstm, pattern_tensor(rnn_input_shape(c), 0.1, -1.0, 1.0, c.dt),
        [&](const Tensor& x) {
          auto [out, state] = c.with_state ? lstm(x, std::make_tuple(h0.weft, c0.weft)) : lstm(x);
          return flat_cat({out, std::get<0>(state), std::get<1>(state)});
        },
        [&](const torch::Tensor& x) {
          auto [out, state] = c.with_state
                                  ? torch_lstm->forward(batch_of_one(x, c),
                                                        std::make_tuple(batch_of_one(h0.torch, c),
                                                                        batch_of_one(c0.torch, c)))
                                  : torch_lstm->forward(batch_of_one(x, c));
          return flat_cat(std::vector<torch::Tensor>{out, std::get<0>(state), std::get<1>(state)});
        },
        tol, tol);
    if (c.with_state) {
      expect_same_gradient(h0, tol, "h_0");
      expect_same_gradient(c0, tol, "c_0");
    }
  }
}

TEST(NnRnnVsTorch, GruMatchesTorchModule) {
  for (const RnnCase& c : rnn_cases()) {
    SCOPED_TRACE(describe(c));
    nn::GRU gru(kInput, kHidden, c.num_layers, c.bias, c.batch_first, c.dropout, c.bidirectional);
    torch::nn::GRU torch_gru(torch_rnn_options<torch::nn::GRUOptions>(c));
    gru.to(c.dt);
    torch_gru->to(torch_dtype(c.dt));
    if (c.eval) {
      gru.eval();
      torch_gru->eval();
    }
    copy_weights(gru, *torch_gru);
    const Leaf h0 = make_leaf(rnn_state_shape(c), 0.3, c.dt);
    const double tol = tolerance(c.dt);
    expect_module_matches_torch(
        gru, *torch_gru, pattern_tensor(rnn_input_shape(c), 0.1, -1.0, 1.0, c.dt),
        [&](const Tensor& x) {
          auto [out, h_n] = c.with_state ? gru(x, h0.weft) : gru(x);
          return flat_cat({out, h_n});
        },
        [&](const torch::Tensor& x) {
          auto [out, h_n] = c.with_state
                                ? torch_gru->forward(batch_of_one(x, c), batch_of_one(h0.torch, c))
                                : torch_gru->forward(batch_of_one(x, c));
          return flat_cat(std::vector<torch::Tensor>{out, h_n});
        },
        tol, tol);
    if (c.with_state) expect_same_gradient(h0, tol, "h_0");
  }
}

// ---------------------------------------------------------------- MultiheadAttention

enum class Mask { None, Float, Bool };

struct MhaCase {
  bool self_attention = true;
  bool key_padding_mask = false;
  Mask attn_mask = Mask::None;
  bool need_weights = true;
  bool average_attn_weights = true;
  bool batch_first = false;
  bool bias = true;
  bool add_bias_kv = false;
  bool add_zero_attn = false;
  bool separate_kv_dims = false;  // kdim = vdim != embed_dim (LibTorch needs kdim == vdim)
  Dtype dt = Dtype::Float64;
};

std::string describe(const MhaCase& c) {
  std::ostringstream out;
  out << "self_attention=" << c.self_attention << " key_padding_mask=" << c.key_padding_mask
      << " attn_mask=" << static_cast<int>(c.attn_mask) << " need_weights=" << c.need_weights
      << " average_attn_weights=" << c.average_attn_weights << " batch_first=" << c.batch_first
      << " bias=" << c.bias << " add_bias_kv=" << c.add_bias_kv
      << " add_zero_attn=" << c.add_zero_attn << " separate_kv_dims=" << c.separate_kv_dims
      << " dtype=" << dtype_name(c.dt);
  return out.str();
}

std::vector<MhaCase> mha_cases() {
  std::vector<MhaCase> cases;
  for (bool batch_first : {false, true}) {
    for (bool need_weights : {false, true}) {
      MhaCase c;
      c.batch_first = batch_first;
      c.need_weights = need_weights;
      cases.push_back(c);
      c.self_attention = false;
      cases.push_back(c);
    }
  }
  MhaCase c;
  c.average_attn_weights = false;
  cases.push_back(c);
  c.attn_mask = Mask::Float;
  cases.push_back(c);
  c.attn_mask = Mask::Bool;
  cases.push_back(c);
  c.key_padding_mask = true;
  cases.push_back(c);
  c.self_attention = false;
  c.attn_mask = Mask::Float;
  c.batch_first = true;
  cases.push_back(c);
  c.attn_mask = Mask::None;
  c.average_attn_weights = true;
  cases.push_back(c);
  c.add_bias_kv = true;
  cases.push_back(c);
  c.add_zero_attn = true;
  c.attn_mask = Mask::Bool;
  cases.push_back(c);
  c.separate_kv_dims = true;
  cases.push_back(c);
  MhaCase no_bias;
  no_bias.bias = false;
  no_bias.self_attention = false;
  cases.push_back(no_bias);
  MhaCase f32;
  f32.dt = Dtype::Float32;
  f32.key_padding_mask = true;
  f32.attn_mask = Mask::Float;
  cases.push_back(f32);
  return cases;
}

TEST(NnRnnVsTorch, MultiheadAttentionMatchesTorchModule) {
  constexpr std::int64_t kEmbed = 8, kHeads = 2, kTgt = 4, kSrc = 5, kN = 3, kKdim = 5, kVdim = 5;
  for (const MhaCase& c : mha_cases()) {
    SCOPED_TRACE(describe(c));
    const std::int64_t src = c.self_attention ? kTgt : kSrc;
    const std::optional<std::int64_t> kdim =
        c.separate_kv_dims ? std::optional<std::int64_t>(kKdim) : std::nullopt;
    const std::optional<std::int64_t> vdim =
        c.separate_kv_dims ? std::optional<std::int64_t>(kVdim) : std::nullopt;
    nn::MultiheadAttention mha(kEmbed, kHeads, 0.0, c.bias, c.add_bias_kv, c.add_zero_attn, kdim,
                               vdim, c.batch_first);
    torch::nn::MultiheadAttention torch_mha(torch::nn::MultiheadAttentionOptions(kEmbed, kHeads)
                                                .bias(c.bias)
                                                .add_bias_kv(c.add_bias_kv)
                                                .add_zero_attn(c.add_zero_attn)
                                                .kdim(kdim.value_or(kEmbed))
                                                .vdim(vdim.value_or(kEmbed)));
    mha.to(c.dt);
    torch_mha->to(torch_dtype(c.dt));
    copy_weights(mha, *torch_mha);

    // Sequence-first shapes; batch_first inputs are their transposes.
    auto layout = [&](std::int64_t len, std::int64_t features) {
      return c.batch_first ? Shape{kN, len, features} : Shape{len, kN, features};
    };
    const Leaf key = make_leaf(layout(src, kdim.value_or(kEmbed)), 0.4, c.dt);
    const Leaf value = make_leaf(layout(src, vdim.value_or(kEmbed)), 0.8, c.dt);

    // Masks: key 4 of batch 1 is padding; the causal mask never hides a whole row.
    Tensor key_padding_mask, attn_mask;
    torch::Tensor torch_key_padding_mask, torch_attn_mask;
    if (c.key_padding_mask) {
      std::vector<bool> pad(static_cast<std::size_t>(kN * src), false);
      pad[static_cast<std::size_t>(src + src - 1)] = true;
      key_padding_mask = tensor(pad, {kN, src});
      torch_key_padding_mask = oracle::to_torch(key_padding_mask);
    }
    if (c.attn_mask == Mask::Float) {
      attn_mask = pattern_tensor({kTgt, src}, 0.6, -2.0, 1.0, c.dt);
      torch_attn_mask = oracle::to_torch(attn_mask);
    } else if (c.attn_mask == Mask::Bool) {
      attn_mask = gt(triu(ones({kTgt, src}), 1), scalar_tensor(0.5));
      // LibTorch's C++ forward adds a bool mask as 0/1; Python 1.13 turns it into 0/-inf.
      torch_attn_mask =
          torch::zeros({kTgt, src}, torch_dtype(c.dt))
              .masked_fill(oracle::to_torch(attn_mask), -std::numeric_limits<double>::infinity());
    }

    const double tol = tolerance(c.dt);
    expect_module_matches_torch(
        mha, *torch_mha, pattern_tensor(layout(kTgt, kEmbed), 0.2, -1.0, 1.0, c.dt),
        [&](const Tensor& query) {
          auto [out, weights] = c.self_attention
                                    ? mha(query, query, query, key_padding_mask, c.need_weights,
                                          attn_mask, c.average_attn_weights)
                                    : mha(query, key.weft, value.weft, key_padding_mask,
                                          c.need_weights, attn_mask, c.average_attn_weights);
          EXPECT_EQ(weights.defined(), c.need_weights);
          return c.need_weights ? flat_cat({out, weights}) : flat_cat({out});
        },
        [&](const torch::Tensor& query) {
          auto seq_first = [&](const torch::Tensor& t) {
            return c.batch_first ? t.transpose(0, 1) : t;
          };
          const torch::Tensor q = seq_first(query);
          const torch::Tensor k = c.self_attention ? q : seq_first(key.torch);
          const torch::Tensor v = c.self_attention ? q : seq_first(value.torch);
          auto [out, weights] = torch_mha->forward(q, k, v, torch_key_padding_mask, c.need_weights,
                                                   torch_attn_mask, c.average_attn_weights);
          out = seq_first(out);
          return c.need_weights ? flat_cat(std::vector<torch::Tensor>{out, weights})
                                : flat_cat(std::vector<torch::Tensor>{out});
        },
        tol, tol);
    if (!c.self_attention) {
      expect_same_gradient(key, tol, "key");
      expect_same_gradient(value, tol, "value");
    }
  }
}

// ---------------------------------------------------------------- Transformer encoder

struct EncoderCase {
  std::string activation;
  bool norm_first;
  bool batch_first;
  bool masks;
  bool eval = false;
  double dropout = 0.0;
  double layer_norm_eps = 1e-5;
  Dtype dt = Dtype::Float64;
};

std::string describe(const EncoderCase& c) {
  std::ostringstream out;
  out << "activation=" << c.activation << " norm_first=" << c.norm_first
      << " batch_first=" << c.batch_first << " masks=" << c.masks << " eval=" << c.eval
      << " dropout=" << c.dropout << " layer_norm_eps=" << c.layer_norm_eps
      << " dtype=" << dtype_name(c.dt);
  return out.str();
}

// Python 1.13's TransformerEncoderLayer.forward, written with the LibTorch layer's submodules
// (LibTorch's own forward has no norm_first).
torch::Tensor torch_encoder_layer_forward(torch::nn::TransformerEncoderLayer& layer,
                                          const torch::Tensor& src, const torch::Tensor& mask,
                                          const torch::Tensor& key_padding_mask, bool norm_first,
                                          bool gelu) {
  auto self_attention = [&](const torch::Tensor& x) {
    return layer->dropout1(
        std::get<0>(layer->self_attn->forward(x, x, x, key_padding_mask, false, mask)));
  };
  auto feed_forward = [&](const torch::Tensor& x) {
    torch::Tensor h = layer->linear1(x);
    h = gelu ? torch::gelu(h) : torch::relu(h);
    return layer->dropout2(layer->linear2(layer->dropout(h)));
  };
  if (norm_first) {
    torch::Tensor x = src + self_attention(layer->norm1(src));
    return x + feed_forward(layer->norm2(x));
  }
  torch::Tensor x = layer->norm1(src + self_attention(src));
  return layer->norm2(x + feed_forward(x));
}

TEST(NnRnnVsTorch, TransformerEncoderLayerMatchesTorchModule) {
  constexpr std::int64_t kModel = 8, kHeads = 2, kFeedForward = 16, kSeq = 5, kN = 3;
  std::vector<EncoderCase> cases;
  for (const char* activation : {"relu", "gelu"}) {
    for (bool norm_first : {false, true}) {
      for (bool batch_first : {false, true}) {
        cases.push_back({activation, norm_first, batch_first, /*masks=*/batch_first});
      }
    }
  }
  cases.push_back({"relu", false, false, true, /*eval=*/true, /*dropout=*/0.1});
  cases.push_back({"gelu", true, false, false, false, 0.0, /*layer_norm_eps=*/1e-3});
  cases.push_back({"gelu", false, true, true, false, 0.0, 1e-5, Dtype::Float32});

  for (const EncoderCase& c : cases) {
    SCOPED_TRACE(describe(c));
    const bool gelu = c.activation == "gelu";
    nn::TransformerEncoderLayer layer(kModel, kHeads, kFeedForward, c.dropout, c.activation,
                                      c.layer_norm_eps, c.batch_first, c.norm_first);
    auto options = torch::nn::TransformerEncoderLayerOptions(kModel, kHeads)
                       .dim_feedforward(kFeedForward)
                       .dropout(c.dropout);
    if (gelu) options.activation(torch::kGELU);
    torch::nn::TransformerEncoderLayer torch_layer(options);
    torch_layer->norm1->options.eps(c.layer_norm_eps);
    torch_layer->norm2->options.eps(c.layer_norm_eps);
    layer.to(c.dt);
    torch_layer->to(torch_dtype(c.dt));
    if (c.eval) {
      layer.eval();
      torch_layer->eval();
    }
    copy_weights(layer, *torch_layer);

    Tensor mask, key_padding_mask;
    torch::Tensor torch_mask, torch_key_padding_mask;
    if (c.masks) {
      mask = pattern_tensor({kSeq, kSeq}, 0.5, -1.0, 0.5, c.dt);
      std::vector<bool> pad(static_cast<std::size_t>(kN * kSeq), false);
      pad[static_cast<std::size_t>(2 * kSeq - 1)] = true;
      key_padding_mask = tensor(pad, {kN, kSeq});
      torch_mask = oracle::to_torch(mask);
      torch_key_padding_mask = oracle::to_torch(key_padding_mask);
    }
    const Shape shape = c.batch_first ? Shape{kN, kSeq, kModel} : Shape{kSeq, kN, kModel};
    const double tol = tolerance(c.dt);
    expect_module_matches_torch(
        layer, *torch_layer, pattern_tensor(shape, 0.3, -1.0, 1.0, c.dt),
        [&](const Tensor& src) { return layer(src, mask, key_padding_mask); },
        [&](const torch::Tensor& src) {
          const torch::Tensor x = c.batch_first ? src.transpose(0, 1) : src;
          // LibTorch's own forward where it has the arguments; Python's formula otherwise.
          torch::Tensor y = c.norm_first
                                ? torch_encoder_layer_forward(torch_layer, x, torch_mask,
                                                              torch_key_padding_mask, true, gelu)
                                : torch_layer->forward(x, torch_mask, torch_key_padding_mask);
          return c.batch_first ? y.transpose(0, 1) : y;
        },
        tol, tol);
  }
}

TEST(NnRnnVsTorch, TransformerEncoderMatchesTorchModule) {
  constexpr std::int64_t kModel = 8, kHeads = 2, kSeq = 4, kN = 2;
  nn::TransformerEncoderLayer prototype(kModel, kHeads, 12, 0.0, "gelu");
  nn::TransformerEncoder encoder(
      prototype, 3, std::make_shared<nn::LayerNorm>(std::vector<std::int64_t>{kModel}));
  // Give each copy its own weights, so that a mix-up between layers shows.
  {
    autograd::NoGradGuard no_grad;
    double seed = 0.0;
    for (Tensor p : encoder.parameters()) p.add_(pattern_tensor(p.sizes(), seed += 0.7, -0.1, 0.1));
  }
  torch::nn::TransformerEncoder torch_encoder(
      torch::nn::TransformerEncoderOptions(
          torch::nn::TransformerEncoderLayer(
              torch::nn::TransformerEncoderLayerOptions(kModel, kHeads)
                  .dim_feedforward(12)
                  .dropout(0.0)
                  .activation(torch::kGELU)),
          3)
          .norm(torch::nn::AnyModule(torch::nn::LayerNorm(torch::nn::LayerNormOptions({kModel})))));
  encoder.to(Dtype::Float64);
  torch_encoder->to(torch::kFloat64);
  copy_weights(encoder, *torch_encoder);
  const Tensor mask = pattern_tensor({kSeq, kSeq}, 0.5, -1.0, 0.5, Dtype::Float64);
  const torch::Tensor torch_mask = oracle::to_torch(mask);
  expect_module_matches_torch(
      encoder, *torch_encoder, pattern_tensor({kSeq, kN, kModel}, 0.3, -1.0, 1.0, Dtype::Float64),
      [&](const Tensor& src) { return encoder(src, mask); },
      [&](const torch::Tensor& src) { return torch_encoder->forward(src, torch_mask); }, 1e-10,
      1e-10);
}

}  // namespace
}  // namespace weft
