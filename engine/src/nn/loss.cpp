// Loss functions (nn::functional) and their modules (nn::MSELoss, …). Most are the IR's loss ops
// (ops/loss.cpp), so a traced training step records one node each; binary_cross_entropy is a
// short composition of engine ops here, following
// ATen's formulas (Loss.cpp), so values match torch's to rounding and autograd derives the
// gradients.
#include "weft/nn/loss.h"

#include <string>
#include <utility>
#include <vector>

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/nn/functional.h"
#include "weft/ops.h"
#include "weft/shape.h"

namespace weft::nn {
namespace functional {
namespace {

Tensor reduce(const Tensor& loss, Reduction reduction) {
  switch (reduction) {
    case Reduction::Mean:
      return mean(loss);
    case Reduction::Sum:
      return sum(loss);
    case Reduction::None:
      break;
  }
  return loss;
}

}  // namespace

const char* reduction_name(Reduction reduction) {
  switch (reduction) {
    case Reduction::None:
      return "none";
    case Reduction::Sum:
      return "sum";
    case Reduction::Mean:
      break;
  }
  return "mean";
}

Reduction reduction_from_string(const std::string& name) {
  if (name == "none") return Reduction::None;
  if (name == "mean") return Reduction::Mean;
  if (name == "sum") return Reduction::Sum;
  throw Error(name + " is not a valid value for reduction");
}

// The regression losses are the IR's ops (ops/loss.cpp): a traced training step records them
// as one node each.
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  return weft::mse_loss(input, target, reduction_name(reduction));
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  return weft::l1_loss(input, target, reduction_name(reduction));
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  return weft::smooth_l1_loss(input, target, reduction_name(reduction), beta);
}

// The classification losses are the IR's ops too (ops/loss.cpp), with their class weights.
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                std::int64_t ignore_index, Reduction reduction) {
  return weft::nll_loss(input, target, reduction_name(reduction), ignore_index, weight);
}

// Class indices or class probabilities alike (a floating target of input's shape).
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                     std::int64_t ignore_index, Reduction reduction, double label_smoothing) {
  return weft::cross_entropy_loss(input, target, reduction_name(reduction), ignore_index,
                                  label_smoothing, weight);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            Reduction reduction) {
  if (input.sizes() != target.sizes()) {
    throw Error("Using a target size (" + shape_str(target.sizes()) +
                ") that is different to the input size (" + shape_str(input.sizes()) +
                ") is deprecated. Please ensure they have the same size.");
  }
  for (double v : input.to_vector<double>()) {
    if (!(v >= 0.0 && v <= 1.0)) throw Error("all elements of input should be between 0 and 1");
  }
  // ATen: (t − 1)·max(log(1 − x), −100) − t·max(log x, −100).
  const Tensor log_x = clamp(log(input), -100.0, std::nullopt);
  const Tensor log_1mx = clamp(log(1.0 - input), -100.0, std::nullopt);
  Tensor loss = (target - 1.0) * log_1mx - target * log_x;
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight, const Tensor& pos_weight,
                                        Reduction reduction) {
  return weft::binary_cross_entropy_with_logits(input, target, reduction_name(reduction), weight,
                                                pos_weight);
}

}  // namespace functional

namespace {

// Registers an optional weight as a buffer (PyTorch's nn losses do) and returns the stored one.
Tensor keep_buffer(Module& module, const std::string& name, const Tensor& tensor) {
  if (!tensor.defined()) return tensor;
  return module.register_buffer(name, tensor);
}

}  // namespace

MSELoss::MSELoss(MSELossOptions options) : options_(std::move(options)) {}
Tensor MSELoss::forward(const Tensor& input, const Tensor& target) {
  return functional::mse_loss(input, target, options_.reduction);
}

L1Loss::L1Loss(L1LossOptions options) : options_(std::move(options)) {}
Tensor L1Loss::forward(const Tensor& input, const Tensor& target) {
  return functional::l1_loss(input, target, options_.reduction);
}

SmoothL1Loss::SmoothL1Loss(SmoothL1LossOptions options) : options_(std::move(options)) {}
Tensor SmoothL1Loss::forward(const Tensor& input, const Tensor& target) {
  return functional::smooth_l1_loss(input, target, options_.reduction, options_.beta);
}

NLLLoss::NLLLoss(NLLLossOptions options) : options_(std::move(options)) {
  options_.weight = keep_buffer(*this, "weight", options_.weight);
}
Tensor NLLLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::nll_loss(input, target, options_.weight, options_.ignore_index,
                              options_.reduction);
}

CrossEntropyLoss::CrossEntropyLoss(CrossEntropyLossOptions options) : options_(std::move(options)) {
  options_.weight = keep_buffer(*this, "weight", options_.weight);
}
Tensor CrossEntropyLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::cross_entropy(input, target, options_.weight, options_.ignore_index,
                                   options_.reduction, options_.label_smoothing);
}

BCELoss::BCELoss(BCELossOptions options) : options_(std::move(options)) {
  options_.weight = keep_buffer(*this, "weight", options_.weight);
}
Tensor BCELoss::forward(const Tensor& input, const Tensor& target) {
  return functional::binary_cross_entropy(input, target, options_.weight, options_.reduction);
}

BCEWithLogitsLoss::BCEWithLogitsLoss(BCEWithLogitsLossOptions options)
    : options_(std::move(options)) {
  options_.weight = keep_buffer(*this, "weight", options_.weight);
  options_.pos_weight = keep_buffer(*this, "pos_weight", options_.pos_weight);
}
Tensor BCEWithLogitsLoss::forward(const Tensor& input, const Tensor& target) {
  return functional::binary_cross_entropy_with_logits(input, target, options_.weight,
                                                      options_.pos_weight, options_.reduction);
}

}  // namespace weft::nn
