#pragma once
// Loss modules (torch.nn.MSELoss, CrossEntropyLoss, …): an options struct plus a two-argument
// forward(input, target) that calls the matching nn::functional loss. Weights given in the
// options are registered as buffers, as PyTorch does.

#include <cstdint>

#include "weft/nn/functional.h"
#include "weft/nn/module.h"

namespace weft::nn {

using functional::Reduction;

struct MSELossOptions {
  Reduction reduction = Reduction::Mean;
};
struct L1LossOptions {
  Reduction reduction = Reduction::Mean;
};
struct SmoothL1LossOptions {
  Reduction reduction = Reduction::Mean;
  double beta = 1.0;
};
struct NLLLossOptions {
  Tensor weight;  // [C] or undefined
  std::int64_t ignore_index = -100;
  Reduction reduction = Reduction::Mean;
};
struct CrossEntropyLossOptions {
  Tensor weight;  // [C] or undefined
  std::int64_t ignore_index = -100;
  Reduction reduction = Reduction::Mean;
  double label_smoothing = 0.0;
};
struct BCELossOptions {
  Tensor weight;  // broadcastable to the input, or undefined
  Reduction reduction = Reduction::Mean;
};
struct BCEWithLogitsLossOptions {
  Tensor weight;      // broadcastable to the input, or undefined
  Tensor pos_weight;  // broadcastable to the input, or undefined
  Reduction reduction = Reduction::Mean;
};

// Losses take two tensors; the single-tensor Module::forward stays unusable on them.
#define WEFT_LOSS_MODULE(Name)                                     \
  class Name : public Module {                                     \
   public:                                                         \
    explicit Name(Name##Options options = {});                     \
    using Module::forward;                                         \
    Tensor forward(const Tensor& input, const Tensor& target);     \
    Tensor operator()(const Tensor& input, const Tensor& target) { \
      return forward(input, target);                               \
    }                                                              \
    const Name##Options& options() const { return options_; }      \
                                                                   \
   private:                                                        \
    Name##Options options_;                                        \
  };

WEFT_LOSS_MODULE(MSELoss)
WEFT_LOSS_MODULE(L1Loss)
WEFT_LOSS_MODULE(SmoothL1Loss)
WEFT_LOSS_MODULE(NLLLoss)
WEFT_LOSS_MODULE(CrossEntropyLoss)
WEFT_LOSS_MODULE(BCELoss)
WEFT_LOSS_MODULE(BCEWithLogitsLoss)

#undef WEFT_LOSS_MODULE

}  // namespace weft::nn
