// nn::Embedding, following torch/nn/modules/sparse.py.
#include "weft/nn/embedding.h"

#include <string>

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/nn/init.h"
#include "weft/ops.h"

namespace weft::nn {

namespace {
std::optional<std::int64_t> normalise_padding_idx(std::optional<std::int64_t> padding_idx,
                                                  std::int64_t num_embeddings) {
  if (!padding_idx) return padding_idx;
  if (*padding_idx >= num_embeddings || *padding_idx < -num_embeddings) {
    throw Error("Padding_idx must be within num_embeddings");
  }
  return *padding_idx < 0 ? *padding_idx + num_embeddings : *padding_idx;
}
}  // namespace

Embedding::Embedding(std::int64_t num_embeddings_, std::int64_t embedding_dim_,
                     std::optional<std::int64_t> padding_idx_)
    : num_embeddings(num_embeddings_),
      embedding_dim(embedding_dim_),
      padding_idx(normalise_padding_idx(padding_idx_, num_embeddings_)) {
  if (num_embeddings < 0 || embedding_dim < 0) {
    throw Error("Embedding: num_embeddings and embedding_dim must be non-negative, got " +
                std::to_string(num_embeddings) + " and " + std::to_string(embedding_dim));
  }
  weight = register_parameter("weight", weft::empty({num_embeddings, embedding_dim}));
  reset_parameters();
}

Embedding::Embedding(PretrainedKey, const Tensor& embeddings,
                     std::optional<std::int64_t> padding_idx_)
    : num_embeddings(embeddings.size(0)),
      embedding_dim(embeddings.size(1)),
      padding_idx(normalise_padding_idx(padding_idx_, embeddings.size(0))) {
  // No draws: the parameter shares the given table's data, as Parameter(_weight) does.
  weight = register_parameter("weight", embeddings.detach());
}

std::shared_ptr<Embedding> Embedding::from_pretrained(const Tensor& embeddings, bool freeze,
                                                      std::optional<std::int64_t> padding_idx) {
  if (embeddings.dim() != 2) throw Error("Embeddings parameter is expected to be 2-dimensional");
  auto module = std::make_shared<Embedding>(PretrainedKey{}, embeddings, padding_idx);
  module->weight.requires_grad_(!freeze);
  return module;
}

void Embedding::reset_parameters() {
  init::normal_(weight);
  if (padding_idx) {
    autograd::NoGradGuard no_grad;
    weight.select(0, *padding_idx).fill_(0.0);
  }
}

Tensor Embedding::forward(const Tensor& input) {
  return embedding(input, weight, padding_idx);
}

}  // namespace weft::nn
