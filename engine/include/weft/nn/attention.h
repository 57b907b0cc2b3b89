#pragma once
// nn::MultiheadAttention (torch.nn.MultiheadAttention): scaled dot-product attention over
// num_heads projected subspaces, with PyTorch's arguments, parameter names, masks and results.

#include <cstdint>
#include <memory>
#include <optional>
#include <tuple>

#include "weft/nn/linear.h"
#include "weft/nn/module.h"

namespace weft::nn {

// MultiheadAttention replaces the single-tensor Module::forward with torch's
// forward(query, key, value, …), which returns two tensors; hiding the base's forward is intended.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverloaded-virtual"

// Parameters (PyTorch's names and order): in_proj_weight [3E, E] (or q_proj_weight [E, E],
// k_proj_weight [E, kdim], v_proj_weight [E, vdim] when kdim or vdim differ from E),
// in_proj_bias [3E] (when bias), bias_k and bias_v [1, 1, E] (when add_bias_kv), and the child
// out_proj (Linear(E, E)). Init: xavier_uniform_ projections, zero biases, xavier_normal_
// bias_k/bias_v, Linear's default for out_proj.weight.
class MultiheadAttention : public Module {
 public:
  MultiheadAttention(std::int64_t embed_dim, std::int64_t num_heads, double dropout = 0.0,
                     bool bias = true, bool add_bias_kv = false, bool add_zero_attn = false,
                     std::optional<std::int64_t> kdim = std::nullopt,
                     std::optional<std::int64_t> vdim = std::nullopt, bool batch_first = false);

  // query [L, N, E], key [S, N, kdim], value [S, N, vdim] ([N, L, E]… when batch_first; [L, E]…
  // unbatched). key_padding_mask [N, S]: bool (true = ignore that key) or float (added to the
  // scores). attn_mask [L, S] or [N·num_heads, L, S]: bool (true = not allowed) or float
  // (added). Returns (attn_output [L, N, E], attn_weights): the weights after softmax and
  // dropout, [N, L, S] averaged over heads or [N, num_heads, L, S] when !average_attn_weights;
  // undefined when !need_weights.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = Tensor(),
                                     bool need_weights = true, const Tensor& attn_mask = Tensor(),
                                     bool average_attn_weights = true);
  std::tuple<Tensor, Tensor> operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                                        const Tensor& key_padding_mask = Tensor(),
                                        bool need_weights = true,
                                        const Tensor& attn_mask = Tensor(),
                                        bool average_attn_weights = true) {
    return forward(query, key, value, key_padding_mask, need_weights, attn_mask,
                   average_attn_weights);
  }

  void reset_parameters();

  std::int64_t embed_dim;
  std::int64_t kdim;
  std::int64_t vdim;
  std::int64_t num_heads;
  std::int64_t head_dim;
  double dropout;
  bool add_zero_attn;
  bool batch_first;
  Tensor in_proj_weight;  // undefined when kdim or vdim differ from embed_dim
  Tensor q_proj_weight;   // defined only when kdim or vdim differ from embed_dim
  Tensor k_proj_weight;
  Tensor v_proj_weight;
  Tensor in_proj_bias;  // undefined without bias
  Tensor bias_k;        // defined only with add_bias_kv
  Tensor bias_v;
  std::shared_ptr<Linear> out_proj;

 private:
  bool qkv_same_embed_dim() const { return kdim == embed_dim && vdim == embed_dim; }
};

#pragma GCC diagnostic pop

}  // namespace weft::nn
