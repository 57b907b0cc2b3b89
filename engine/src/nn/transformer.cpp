// nn::TransformerEncoderLayer and nn::TransformerEncoder, as torch.nn's (PyTorch 1.13) slow path:
// the eval-mode fused "fast path" computes the same function, so it has no counterpart here.
#include "weft/nn/transformer.h"

#include <utility>

#include "weft/error.h"
#include "weft/ops.h"

namespace weft::nn {

TransformerEncoderLayer::TransformerEncoderLayer(std::int64_t d_model_, std::int64_t nhead_,
                                                 std::int64_t dim_feedforward_, double dropout_,
                                                 std::string activation_, double layer_norm_eps_,
                                                 bool batch_first_, bool norm_first_)
    : d_model(d_model_),
      nhead(nhead_),
      dim_feedforward(dim_feedforward_),
      dropout_p(dropout_),
      activation(std::move(activation_)),
      layer_norm_eps(layer_norm_eps_),
      batch_first(batch_first_),
      norm_first(norm_first_) {
  if (activation != "relu" && activation != "gelu") {
    throw Error("activation should be relu/gelu, not " + activation);
  }
  // Registration order is Python's, so parameters() and state_dict() list keys the same way.
  self_attn = register_module("self_attn", std::make_shared<MultiheadAttention>(
                                               d_model, nhead, dropout_p, true, false, false,
                                               std::nullopt, std::nullopt, batch_first));
  linear1 = register_module("linear1", std::make_shared<Linear>(d_model, dim_feedforward));
  dropout = register_module("dropout", std::make_shared<Dropout>(dropout_p));
  linear2 = register_module("linear2", std::make_shared<Linear>(dim_feedforward, d_model));
  norm1 = register_module(
      "norm1", std::make_shared<LayerNorm>(std::vector<std::int64_t>{d_model}, layer_norm_eps));
  norm2 = register_module(
      "norm2", std::make_shared<LayerNorm>(std::vector<std::int64_t>{d_model}, layer_norm_eps));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(dropout_p));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(dropout_p));
}

Tensor TransformerEncoderLayer::forward(const Tensor& src) {
  return forward(src, Tensor(), Tensor());
}

Tensor TransformerEncoderLayer::forward(const Tensor& src, const Tensor& src_mask,
                                        const Tensor& src_key_padding_mask) {
  Tensor x = src;
  if (norm_first) {
    x = add(x, self_attention_block((*norm1)(x), src_mask, src_key_padding_mask));
    x = add(x, feed_forward_block((*norm2)(x)));
  } else {
    x = (*norm1)(add(x, self_attention_block(x, src_mask, src_key_padding_mask)));
    x = (*norm2)(add(x, feed_forward_block(x)));
  }
  return x;
}

Tensor TransformerEncoderLayer::self_attention_block(const Tensor& x, const Tensor& attn_mask,
                                                     const Tensor& key_padding_mask) {
  const Tensor attended = std::get<0>(self_attn->forward(x, x, x, key_padding_mask,
                                                         /*need_weights=*/false, attn_mask));
  return (*dropout1)(attended);
}

Tensor TransformerEncoderLayer::feed_forward_block(const Tensor& x) {
  Tensor hidden = (*linear1)(x);
  hidden = activation == "gelu" ? gelu(hidden) : relu(hidden);
  return (*dropout2)((*linear2)((*dropout)(hidden)));
}

std::shared_ptr<TransformerEncoderLayer> TransformerEncoderLayer::clone() const {
  auto copy = std::make_shared<TransformerEncoderLayer>(d_model, nhead, dim_feedforward, dropout_p,
                                                        activation, layer_norm_eps, batch_first,
                                                        norm_first);
  copy->load_state_dict(state_dict());
  copy->train(is_training());
  return copy;
}

TransformerEncoder::TransformerEncoder(const TransformerEncoderLayer& encoder_layer,
                                       std::int64_t num_layers_, std::shared_ptr<LayerNorm> norm_)
    : num_layers(num_layers_) {
  if (num_layers < 0) {
    throw Error("TransformerEncoder: num_layers must be non-negative, got " +
                std::to_string(num_layers));
  }
  layers = register_module("layers", std::make_shared<Sequential>());
  for (std::int64_t i = 0; i < num_layers; ++i) layers->push_back(encoder_layer.clone());
  if (norm_) norm = register_module("norm", std::move(norm_));
}

Tensor TransformerEncoder::forward(const Tensor& src) {
  return forward(src, Tensor(), Tensor());
}

Tensor TransformerEncoder::forward(const Tensor& src, const Tensor& mask,
                                   const Tensor& src_key_padding_mask) {
  Tensor output = src;
  for (std::size_t i = 0; i < layers->size(); ++i) {
    // Only TransformerEncoderLayers are ever added to `layers`.
    auto& layer = static_cast<TransformerEncoderLayer&>(*(*layers)[static_cast<std::int64_t>(i)]);
    output = layer.forward(output, mask, src_key_padding_mask);
  }
  if (norm) output = (*norm)(output);
  return output;
}

}  // namespace weft::nn
