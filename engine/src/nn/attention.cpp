// nn::MultiheadAttention, following torch.nn.functional.multi_head_attention_forward of
// PyTorch 1.13 step by step (checks and messages included), so masks, padding, bias_k/bias_v and
// add_zero_attn combine exactly as there. Float key_padding_masks are added to the scores, as
// PyTorch 2.x's canonical masks do (1.13 handles them only partly).
#include "weft/nn/attention.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/nn/init.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft::nn {
namespace {

// How Python prints tensor.shape: "torch.Size([2, 5])".
std::string torch_size_str(IntList shape) {
  return "torch.Size(" + shape_str(shape) + ")";
}

// F.pad(mask, (0, 1)): one more key that every query may attend to (zero / false).
Tensor pad_last(const Tensor& mask) {
  Shape extra = mask.sizes();
  extra.back() = 1;
  return cat({mask, zeros(extra, dtype(mask.dtype()))}, -1);
}

// A bool mask as a float one: -inf where true, 0 elsewhere.
Tensor bool_mask_to_float(const Tensor& mask, Dtype dt) {
  return where(mask, scalar_tensor(-std::numeric_limits<double>::infinity(), dtype(dt)),
               scalar_tensor(0.0, dtype(dt)));
}

// torch's _mha_shape_check: the ranks of query/key/value and the masks; true when batched.
bool check_shapes(const Tensor& query, const Tensor& key, const Tensor& value,
                  const Tensor& key_padding_mask, const Tensor& attn_mask, std::int64_t num_heads) {
  const std::string kv_dims =
      std::to_string(key.dim()) + "-D and " + std::to_string(value.dim()) + "-D tensors";
  if (query.dim() == 3) {
    if (key.dim() != 3 || value.dim() != 3) {
      throw Error("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found " +
                  kv_dims + " respectively");
    }
    if (key_padding_mask.defined() && key_padding_mask.dim() != 2) {
      throw Error(
          "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but found " +
          std::to_string(key_padding_mask.dim()) + "-D tensor instead");
    }
    if (attn_mask.defined() && attn_mask.dim() != 2 && attn_mask.dim() != 3) {
      throw Error(
          "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found " +
          std::to_string(attn_mask.dim()) + "-D tensor instead");
    }
    return true;
  }
  if (query.dim() == 2) {
    if (key.dim() != 2 || value.dim() != 2) {
      throw Error("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found " +
                  kv_dims + " respectively");
    }
    if (key_padding_mask.defined() && key_padding_mask.dim() != 1) {
      throw Error(
          "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
          "found " +
          std::to_string(key_padding_mask.dim()) + "-D tensor instead");
    }
    if (attn_mask.defined()) {
      if (attn_mask.dim() != 2 && attn_mask.dim() != 3) {
        throw Error(
            "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
            "found " +
            std::to_string(attn_mask.dim()) + "-D tensor instead");
      }
      const Shape expected{num_heads, query.size(0), key.size(0)};
      if (attn_mask.dim() == 3 && attn_mask.sizes() != expected) {
        throw Error("Expected `attn_mask` shape to be " + tuple_str(expected) + " but got " +
                    torch_size_str(attn_mask.sizes()));
      }
    }
    return false;
  }
  throw Error("query should be unbatched 2D or batched 3D tensor but received " +
              std::to_string(query.dim()) + "-D query tensor");
}

}  // namespace

MultiheadAttention::MultiheadAttention(std::int64_t embed_dim_, std::int64_t num_heads_,
                                       double dropout_, bool bias, bool add_bias_kv,
                                       bool add_zero_attn_, std::optional<std::int64_t> kdim_,
                                       std::optional<std::int64_t> vdim_, bool batch_first_)
    : embed_dim(embed_dim_),
      kdim(kdim_.value_or(embed_dim_)),
      vdim(vdim_.value_or(embed_dim_)),
      num_heads(num_heads_),
      head_dim(0),
      dropout(dropout_),
      add_zero_attn(add_zero_attn_),
      batch_first(batch_first_) {
  if (embed_dim <= 0 || num_heads <= 0) {
    throw Error("embed_dim and num_heads must be greater than 0, got embed_dim=" +
                std::to_string(embed_dim) + " and num_heads=" + std::to_string(num_heads) +
                " instead");
  }
  if (embed_dim % num_heads != 0) throw Error("embed_dim must be divisible by num_heads");
  if (!(dropout >= 0.0 && dropout <= 1.0)) {
    std::ostringstream message;
    message << "dropout probability has to be between 0 and 1, but got " << dropout;
    throw Error(message.str());
  }
  head_dim = embed_dim / num_heads;
  const std::int64_t e = embed_dim;
  if (qkv_same_embed_dim()) {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * e, e}));
  } else {
    q_proj_weight = register_parameter("q_proj_weight", empty({e, e}));
    k_proj_weight = register_parameter("k_proj_weight", empty({e, kdim}));
    v_proj_weight = register_parameter("v_proj_weight", empty({e, vdim}));
  }
  if (bias) in_proj_bias = register_parameter("in_proj_bias", empty({3 * e}));
  out_proj = register_module("out_proj", std::make_shared<Linear>(e, e, bias));
  if (add_bias_kv) {
    bias_k = register_parameter("bias_k", empty({1, 1, e}));
    bias_v = register_parameter("bias_v", empty({1, 1, e}));
  }
  reset_parameters();
}

void MultiheadAttention::reset_parameters() {
  if (qkv_same_embed_dim()) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    init::constant_(in_proj_bias, 0.0);
    init::constant_(out_proj->bias, 0.0);
  }
  if (bias_k.defined()) init::xavier_normal_(bias_k);
  if (bias_v.defined()) init::xavier_normal_(bias_v);
}

std::tuple<Tensor, Tensor> MultiheadAttention::forward(const Tensor& query_in, const Tensor& key_in,
                                                       const Tensor& value_in,
                                                       const Tensor& key_padding_mask_in,
                                                       bool need_weights,
                                                       const Tensor& attn_mask_in,
                                                       bool average_attn_weights) {
  Tensor key_padding_mask = key_padding_mask_in;
  Tensor attn_mask = attn_mask_in;
  if (key_padding_mask.defined() && key_padding_mask.dtype() != Dtype::Bool &&
      !key_padding_mask.is_floating_point()) {
    throw Error("only bool and floating types of key_padding_mask are supported");
  }
  // Which inputs are the same tensor decides how the packed projection is split (as torch).
  const bool kv_same = key_in.is_same(value_in);
  const bool qkv_same = kv_same && query_in.is_same(key_in);
  const bool batched =
      check_shapes(query_in, key_in, value_in, key_padding_mask, attn_mask, num_heads);
  // Internally [L, N, E].
  Tensor query = query_in, key = key_in, value = value_in;
  if (batched && batch_first) {
    query = query.transpose(0, 1);
    key = key.transpose(0, 1);
    value = value.transpose(0, 1);
  } else if (!batched) {
    query = query.unsqueeze(1);
    key = key.unsqueeze(1);
    value = value.unsqueeze(1);
    if (key_padding_mask.defined()) key_padding_mask = key_padding_mask.unsqueeze(0);
  }

  const std::int64_t tgt_len = query.size(0);
  const std::int64_t bsz = query.size(1);
  const std::int64_t e = embed_dim;
  if (query.size(2) != e) {
    throw Error("was expecting embedding dimension of " + std::to_string(e) + ", but got " +
                std::to_string(query.size(2)));
  }
  if (qkv_same_embed_dim()) {
    if (key.sizes() != value.sizes()) {
      throw Error("key shape " + torch_size_str(key.sizes()) + " does not match value shape " +
                  torch_size_str(value.sizes()));
    }
  } else if (key.size(0) != value.size(0) || key.size(1) != value.size(1)) {
    throw Error("key's sequence and batch dims " + torch_size_str({key.size(0), key.size(1)}) +
                " do not match value's " + torch_size_str({value.size(0), value.size(1)}));
  }
  if (key.size(1) != bsz) {
    throw Error("key's batch size " + std::to_string(key.size(1)) +
                " does not match query's batch size " + std::to_string(bsz));
  }

  // ---- input projections ----
  auto bias_part = [&](std::int64_t first, std::int64_t count) {
    return in_proj_bias.defined() ? in_proj_bias.slice(0, first * e, (first + count) * e)
                                  : Tensor();
  };
  Tensor q, k, v;
  if (!qkv_same_embed_dim()) {
    q = linear(query, q_proj_weight, bias_part(0, 1));
    k = linear(key, k_proj_weight, bias_part(1, 1));
    v = linear(value, v_proj_weight, bias_part(2, 1));
  } else if (qkv_same) {
    const std::vector<Tensor> qkv = chunk(linear(query, in_proj_weight, in_proj_bias), 3, -1);
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else if (kv_same) {
    q = linear(query, in_proj_weight.slice(0, 0, e), bias_part(0, 1));
    const std::vector<Tensor> kv =
        chunk(linear(key, in_proj_weight.slice(0, e, 3 * e), bias_part(1, 2)), 2, -1);
    k = kv[0], v = kv[1];
  } else {
    q = linear(query, in_proj_weight.slice(0, 0, e), bias_part(0, 1));
    k = linear(key, in_proj_weight.slice(0, e, 2 * e), bias_part(1, 1));
    v = linear(value, in_proj_weight.slice(0, 2 * e, 3 * e), bias_part(2, 1));
  }

  // ---- attention mask: [1 or N·heads, L, S], bool or float ----
  std::int64_t src_len = key.size(0);
  if (attn_mask.defined()) {
    if (!attn_mask.is_floating_point() && attn_mask.dtype() != Dtype::Bool) {
      throw Error(std::string("Only float, byte, and bool types are supported for attn_mask, "
                              "not torch.") +
                  dtype_name(attn_mask.dtype()));
    }
    if (attn_mask.dim() == 2) {
      const Shape expected{tgt_len, src_len};
      if (attn_mask.sizes() != expected) {
        throw Error("The shape of the 2D attn_mask is " + torch_size_str(attn_mask.sizes()) +
                    ", but should be " + tuple_str(expected) + ".");
      }
      attn_mask = attn_mask.unsqueeze(0);
    } else if (attn_mask.dim() == 3) {
      const Shape expected{bsz * num_heads, tgt_len, src_len};
      if (attn_mask.sizes() != expected) {
        throw Error("The shape of the 3D attn_mask is " + torch_size_str(attn_mask.sizes()) +
                    ", but should be " + tuple_str(expected) + ".");
      }
    } else {
      throw Error("attn_mask's dimension " + std::to_string(attn_mask.dim()) + " is not supported");
    }
  }

  // ---- learned extra key/value (add_bias_kv) ----
  if (bias_k.defined()) {
    k = cat({k, bias_k.expand({1, bsz, e})}, 0);
    v = cat({v, bias_v.expand({1, bsz, e})}, 0);
    if (attn_mask.defined()) attn_mask = pad_last(attn_mask);
    if (key_padding_mask.defined()) key_padding_mask = pad_last(key_padding_mask);
  }

  // ---- split heads: [N·heads, L, head_dim] ----
  q = q.reshape({tgt_len, bsz * num_heads, head_dim}).transpose(0, 1);
  k = k.reshape({k.size(0), bsz * num_heads, head_dim}).transpose(0, 1);
  v = v.reshape({v.size(0), bsz * num_heads, head_dim}).transpose(0, 1);

  if (add_zero_attn) {
    const Tensor zero = zeros({bsz * num_heads, 1, head_dim}, dtype(q.dtype()));
    k = cat({k, zero}, 1);
    v = cat({v, zero}, 1);
    if (attn_mask.defined()) attn_mask = pad_last(attn_mask);
    if (key_padding_mask.defined()) key_padding_mask = pad_last(key_padding_mask);
  }
  src_len = k.size(1);

  // ---- merge the key padding mask into the attention mask ----
  if (key_padding_mask.defined()) {
    const Shape expected{bsz, src_len};
    if (key_padding_mask.sizes() != expected) {
      throw Error("expecting key_padding_mask shape of " + tuple_str(expected) + ", but got " +
                  torch_size_str(key_padding_mask.sizes()));
    }
    key_padding_mask = key_padding_mask.reshape({bsz, 1, 1, src_len})
                           .expand({bsz, num_heads, 1, src_len})
                           .reshape({bsz * num_heads, 1, src_len});
    if (key_padding_mask.dtype() == Dtype::Bool) {
      if (!attn_mask.defined()) {
        attn_mask = key_padding_mask;
      } else if (attn_mask.dtype() == Dtype::Bool) {
        attn_mask = logical_or(attn_mask, key_padding_mask);
      } else {
        attn_mask =
            where(key_padding_mask,
                  scalar_tensor(-std::numeric_limits<double>::infinity(), dtype(attn_mask.dtype())),
                  attn_mask);
      }
    } else {
      if (attn_mask.defined() && attn_mask.dtype() == Dtype::Bool) {
        attn_mask = bool_mask_to_float(attn_mask, q.dtype());
      }
      attn_mask = attn_mask.defined() ? add(attn_mask, key_padding_mask) : key_padding_mask;
    }
  }
  if (attn_mask.defined() && attn_mask.dtype() == Dtype::Bool) {
    attn_mask = bool_mask_to_float(attn_mask, q.dtype());
  }

  // ---- scaled dot-product attention ----
  Tensor scores =
      bmm(div(q, scalar_tensor(std::sqrt(static_cast<double>(head_dim)), dtype(q.dtype()))),
          k.transpose(1, 2));
  if (attn_mask.defined()) scores = add(attn_mask, scores);
  Tensor weights = softmax(scores, -1);
  if (dropout > 0.0 && is_training()) {
    weights = weft::dropout(weights, dropout, true, default_generator().engine()());
  }
  Tensor output = bmm(weights, v).transpose(0, 1).reshape({tgt_len * bsz, e});
  output = linear(output, out_proj->weight, out_proj->bias).reshape({tgt_len, bsz, e});

  if (need_weights) {
    weights = weights.reshape({bsz, num_heads, tgt_len, src_len});
    if (average_attn_weights) {
      weights = div(sum(weights, {1}),
                    scalar_tensor(static_cast<double>(num_heads), dtype(weights.dtype())));
    }
  } else {
    weights = Tensor();
  }
  if (!batched) {
    output = output.squeeze({1});
    if (weights.defined()) weights = weights.squeeze({0});
  } else if (batch_first) {
    output = output.transpose(0, 1);
  }
  return {output, weights};
}

}  // namespace weft::nn
