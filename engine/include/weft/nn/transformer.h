#pragma once
// Transformer encoder blocks (torch.nn.TransformerEncoderLayer, TransformerEncoder) with
// PyTorch's arguments, child names (so state-dict keys match) and forward computation.

#include <cstdint>
#include <memory>
#include <string>

#include "weft/nn/attention.h"
#include "weft/nn/container.h"
#include "weft/nn/dropout.h"
#include "weft/nn/linear.h"
#include "weft/nn/module.h"
#include "weft/nn/normalization.h"

namespace weft::nn {

// Self-attention then a feed-forward block, each with a residual connection and LayerNorm
// (after the residual add, or before the block when norm_first). Children: self_attn, linear1,
// dropout, linear2, norm1, norm2, dropout1, dropout2. `activation` is "relu" or "gelu".
class TransformerEncoderLayer : public Module {
 public:
  TransformerEncoderLayer(std::int64_t d_model, std::int64_t nhead,
                          std::int64_t dim_feedforward = 2048, double dropout = 0.1,
                          std::string activation = "relu", double layer_norm_eps = 1e-5,
                          bool batch_first = false, bool norm_first = false);

  // src [S, N, E] ([N, S, E] when batch_first, [S, E] unbatched); masks as
  // MultiheadAttention's attn_mask and key_padding_mask. Returns a tensor of src's shape.
  Tensor forward(const Tensor& src) override;
  Tensor forward(const Tensor& src, const Tensor& src_mask,
                 const Tensor& src_key_padding_mask = Tensor());
  using Module::operator();
  Tensor operator()(const Tensor& src, const Tensor& src_mask,
                    const Tensor& src_key_padding_mask = Tensor()) {
    return forward(src, src_mask, src_key_padding_mask);
  }

  // A new layer with the same arguments and a copy of this one's parameters and mode (what
  // Python's copy.deepcopy gives TransformerEncoder).
  std::shared_ptr<TransformerEncoderLayer> clone() const;

  std::int64_t d_model;
  std::int64_t nhead;
  std::int64_t dim_feedforward;
  double dropout_p;
  std::string activation;
  double layer_norm_eps;
  bool batch_first;
  bool norm_first;

  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1;
  std::shared_ptr<Dropout> dropout;
  std::shared_ptr<Linear> linear2;
  std::shared_ptr<LayerNorm> norm1;
  std::shared_ptr<LayerNorm> norm2;
  std::shared_ptr<Dropout> dropout1;
  std::shared_ptr<Dropout> dropout2;

 private:
  Tensor self_attention_block(const Tensor& x, const Tensor& attn_mask,
                              const Tensor& key_padding_mask);
  Tensor feed_forward_block(const Tensor& x);
};

// A stack of num_layers copies of `encoder_layer` (children layers.0, layers.1, …; each a copy
// with the same initial weights, as Python's deepcopy makes), then the optional final `norm`.
class TransformerEncoder : public Module {
 public:
  TransformerEncoder(const TransformerEncoderLayer& encoder_layer, std::int64_t num_layers,
                     std::shared_ptr<LayerNorm> norm = nullptr);

  Tensor forward(const Tensor& src) override;
  Tensor forward(const Tensor& src, const Tensor& mask,
                 const Tensor& src_key_padding_mask = Tensor());
  using Module::operator();
  Tensor operator()(const Tensor& src, const Tensor& mask,
                    const Tensor& src_key_padding_mask = Tensor()) {
    return forward(src, mask, src_key_padding_mask);
  }

  std::int64_t num_layers;
  std::shared_ptr<Sequential> layers;  // Python's ModuleList: children "0", "1", …
  std::shared_ptr<LayerNorm> norm;     // null when absent
};

}  // namespace weft::nn
