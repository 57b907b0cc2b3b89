#pragma once
// Loss functions as free functions, named and computed like torch.nn.functional's (PyTorch 1.13
// formulas). Each is composed from engine ops, so autograd supplies its gradient; mse_loss,
// l1_loss and smooth_l1_loss are the IR's ops of those names (weft/ops.h, ops/loss.cpp).

#include <cstdint>
#include <string>

#include "weft/tensor.h"

namespace weft::nn::functional {

// How a loss reduces its per-element values: kept as-is, averaged, or summed. For nll_loss and
// cross_entropy with class indices, "mean" divides by the summed weights of non-ignored targets.
enum class Reduction { None, Mean, Sum };

// Parses "none" | "mean" | "sum" (PyTorch's strings); throws on anything else.
Reduction reduction_from_string(const std::string& name);
// The reduction's string, as torch.nn.functional and the IR's loss ops take it.
const char* reduction_name(Reduction reduction);

// (input − target)², broadcasting like PyTorch.
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
// |input − target|.
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
// 0.5·d²/beta where |d| < beta, else |d| − 0.5·beta (beta = 0 is l1_loss).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      Reduction reduction = Reduction::Mean, double beta = 1.0);

// Negative log likelihood of log-probabilities `input` ([C], [N, C] or [N, C, d…]) at int64
// class indices `target` ([], [N] or [N, d…]); `weight` ([C]) is optional.
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                std::int64_t ignore_index = -100, Reduction reduction = Reduction::Mean);

// log_softmax over the class dim followed by nll_loss, with two target forms: int64 class
// indices, or floating class probabilities of the input's shape. label_smoothing ∈ [0, 1].
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                     std::int64_t ignore_index = -100, Reduction reduction = Reduction::Mean,
                     double label_smoothing = 0.0);

// −w·(t·log x + (1 − t)·log(1 − x)) for x ∈ [0, 1], each log clamped at −100.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const Tensor& weight = Tensor(), Reduction reduction = Reduction::Mean);

// binary_cross_entropy(sigmoid(input), target) computed stably from logits; pos_weight
// ([C], broadcast over the last dim) scales the positive term.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight = Tensor(),
                                        const Tensor& pos_weight = Tensor(),
                                        Reduction reduction = Reduction::Mean);

}  // namespace weft::nn::functional
