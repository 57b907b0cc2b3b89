#pragma once
// nn::Embedding (torch.nn.Embedding): a lookup table weight [num_embeddings, embedding_dim]
// drawn from N(0, 1), with the padding_idx row (if any) zero and never updated by gradients.
// max_norm, scale_grad_by_freq and sparse are not supported.

#include <cstdint>
#include <memory>
#include <optional>

#include "weft/nn/module.h"

namespace weft::nn {

class Embedding : public Module {
 public:
  // A negative padding_idx counts from the end, as in Python.
  Embedding(std::int64_t num_embeddings, std::int64_t embedding_dim,
            std::optional<std::int64_t> padding_idx = std::nullopt);
  // An Embedding whose weight shares `embeddings`' data (2-D); frozen (requires_grad = false)
  // unless freeze is false.
  static std::shared_ptr<Embedding> from_pretrained(
      const Tensor& embeddings, bool freeze = true,
      std::optional<std::int64_t> padding_idx = std::nullopt);

  Tensor forward(const Tensor& input) override;
  void reset_parameters();  // N(0, 1), then the padding row zeroed

  std::int64_t num_embeddings;
  std::int64_t embedding_dim;
  std::optional<std::int64_t> padding_idx;  // normalised to [0, num_embeddings)
  Tensor weight;

 private:
  struct PretrainedKey {};  // only from_pretrained may build from an existing table

 public:
  Embedding(PretrainedKey, const Tensor& embeddings, std::optional<std::int64_t> padding_idx);
};

}  // namespace weft::nn
