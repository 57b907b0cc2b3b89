// Loss functions (nn::functional) and their modules (nn::MSELoss, …). Each loss is a short
// composition of engine ops following PyTorch 1.13's ATen formulas (Loss.cpp, LossNLL.cpp), so
// values match torch's to rounding and autograd derives the gradients.
#include "weft/nn/loss.h"

#include <limits>
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

void check_long_target(const Tensor& target) {
  if (target.dtype() != Dtype::Int64) {
    throw Error(std::string("expected scalar type Long but found ") +
                torch_scalar_type_name(target.dtype()));
  }
}

void check_class_weight(const Tensor& weight, std::int64_t n_classes, const char* prefix) {
  if (weight.defined() && (weight.dim() != 1 || weight.numel() != n_classes)) {
    throw Error(std::string(prefix) + "weight tensor should be defined either for all " +
                std::to_string(n_classes) + " classes or no classes but got weight tensor of " +
                "shape: " + shape_str(weight.sizes()));
  }
}

void check_label_smoothing(double label_smoothing) {
  if (label_smoothing < 0.0 || label_smoothing > 1.0) {
    throw Error("label_smoothing must be between 0.0 and 1.0. Got: " +
                std::to_string(label_smoothing));
  }
}

// weight [C] viewed as [1, C, 1, …] so it broadcasts against a rank-`rank` input.
Tensor class_weight_view(const Tensor& weight, std::int64_t rank) {
  if (rank <= 1) return weight;
  Shape shape(static_cast<std::size_t>(rank), 1);
  shape[1] = weight.size(0);
  return weight.reshape(shape);
}

// Validates an nll_loss input/target pair of rank ≥ 2 / ≥ 1 (after 1-D inputs were batched).
void check_nll_shapes(const Tensor& input, const Tensor& target) {
  if (input.size(0) != target.size(0)) {
    throw Error("Expected input batch_size (" + std::to_string(input.size(0)) +
                ") to match target batch_size (" + std::to_string(target.size(0)) + ").");
  }
  if (input.dim() == 2 && target.dim() != 1) {
    throw Error("0D or 1D target tensor expected, multi-target not supported");
  }
  Shape expected = input.sizes();
  expected.erase(expected.begin() + 1);
  if (target.sizes() != expected) {
    throw Error("Expected target size " + shape_str(expected) + ", got " +
                shape_str(target.sizes()));
  }
}

void check_targets_in_range(const Tensor& target, std::int64_t n_classes,
                            std::int64_t ignore_index) {
  for (std::int64_t t : target.to_vector<std::int64_t>()) {
    if (t != ignore_index && (t < 0 || t >= n_classes)) {
      throw Error("Target " + std::to_string(t) + " is out of bounds.");
    }
  }
}

// Per-target pieces of nll_loss on a batched input [N, C, d…] and target [N, d…]:
// the per-element loss −w[t]·input[t] (0 where ignored) and the weights w[t] (0 where ignored).
struct NllParts {
  Tensor loss;
  Tensor weights;
};

NllParts nll_parts(const Tensor& input, const Tensor& target, const Tensor& weight,
                   std::int64_t ignore_index) {
  const Tensor keep = ne(target, wrapped_scalar(ignore_index));
  const Tensor safe_target = where(keep, target, zeros_like(target));
  const Tensor picked = squeeze(gather(input, 1, safe_target.unsqueeze(1)), {1});
  Tensor w = weight.defined() ? index_select(cast(weight, input.dtype()), 0, safe_target.flatten())
                                    .reshape(target.sizes())
                              : ones_like(picked);
  w = where(keep, w, zeros_like(w));
  return {-(picked * w), w};
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

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                std::int64_t ignore_index, Reduction reduction) {
  if (input.dim() < 1) {
    throw Error("Expected 1 or more dimensions (got " + std::to_string(input.dim()) + ")");
  }
  check_long_target(target);
  if (input.dim() == 1) {
    // No batch dim: input [C], target []; run it as a batch of one.
    if (target.dim() != 0) {
      throw Error("0D or 1D target tensor expected, multi-target not supported");
    }
    Tensor out = nll_loss(input.unsqueeze(0), target.reshape({1}), weight, ignore_index, reduction);
    return reduction == Reduction::None ? out.reshape({}) : out;
  }
  check_nll_shapes(input, target);
  const std::int64_t n_classes = input.size(1);
  check_class_weight(weight, n_classes, "");
  check_targets_in_range(target, n_classes, ignore_index);
  const NllParts parts = nll_parts(input, target, weight, ignore_index);
  switch (reduction) {
    case Reduction::Mean: {
      // Weights are constants (PyTorch has no gradient for them), so their sum is a number.
      // When every target is ignored the value is 0/0 = NaN but the gradient is zero, as in
      // PyTorch; dividing by a zero tensor would make the gradient NaN too.
      const double total = sum(parts.weights).item();
      if (total == 0.0) return sum(parts.loss) * 0.0 + std::numeric_limits<double>::quiet_NaN();
      return sum(parts.loss) / total;
    }
    case Reduction::Sum:
      return sum(parts.loss);
    case Reduction::None:
      break;
  }
  return parts.loss;
}

namespace {

// cross_entropy with class probabilities (ATen's cross_entropy_loss_prob_target).
Tensor cross_entropy_prob_target(const Tensor& self, const Tensor& target, const Tensor& weight,
                                 Reduction reduction, double label_smoothing) {
  const std::int64_t class_dim = self.dim() == 1 ? 0 : 1;
  const std::int64_t n_classes = self.size(class_dim);
  check_class_weight(weight, n_classes, "cross_entropy: ");
  const Tensor input = log_softmax(self, class_dim);
  Tensor t = target;
  if (label_smoothing > 0.0) {
    t = target * (1 - label_smoothing) + label_smoothing / static_cast<double>(n_classes);
  }
  Tensor prod = input * t;
  if (weight.defined()) prod = prod * class_weight_view(cast(weight, self.dtype()), self.dim());
  switch (reduction) {
    case Reduction::Mean:
      // Divided by the number of samples (every element but the class dim), as ATen does.
      return -sum(prod) / static_cast<double>(self.numel() / n_classes);
    case Reduction::Sum:
      return -sum(prod);
    case Reduction::None:
      break;
  }
  return -sum(prod, {class_dim});
}

// cross_entropy with class indices and label_smoothing > 0 (ATen's
// cross_entropy_loss_label_smoothing): (1 − ε)·nll + ε/C·smooth, where smooth = −Σ_c w_c·logp_c
// (0 at ignored targets). Its "mean" divides by the summed weights of non-ignored targets, or by
// their count when there are no weights, like nll_loss's.
Tensor cross_entropy_label_smoothing(const Tensor& self, const Tensor& target, const Tensor& weight,
                                     std::int64_t ignore_index, Reduction reduction,
                                     double label_smoothing) {
  const std::int64_t class_dim = self.dim() == 1 ? 0 : 1;
  const Tensor input = log_softmax(self, class_dim);
  const Tensor nll = nll_loss(input, target, weight, ignore_index, reduction);
  const std::int64_t n_classes = input.size(class_dim);
  const Tensor ignored = eq(target, wrapped_scalar(ignore_index));
  Tensor smooth =
      weight.defined()
          ? -sum(input * class_weight_view(cast(weight, self.dtype()), input.dim()), {class_dim})
          : -sum(input, {class_dim});
  smooth = where(ignored, zeros_like(smooth), smooth);
  Tensor ret;
  switch (reduction) {
    case Reduction::Mean:
      if (weight.defined()) {
        const Tensor flat = target.flatten();
        const Tensor keep = ne(flat, wrapped_scalar(ignore_index));
        const Tensor w =
            index_select(cast(weight, self.dtype()), 0, where(keep, flat, zeros_like(flat)));
        ret = sum(smooth) / sum(where(keep, w, zeros_like(w)));
      } else {
        ret = sum(smooth) / sum(cast(logical_not(ignored), self.dtype()));
      }
      break;
    case Reduction::Sum:
      ret = sum(smooth);
      break;
    case Reduction::None:
      ret = smooth;
      break;
  }
  return (1 - label_smoothing) * nll + ret * (label_smoothing / static_cast<double>(n_classes));
}

}  // namespace

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                     std::int64_t ignore_index, Reduction reduction, double label_smoothing) {
  if (input.sizes() == target.sizes()) {
    // Same shapes: the target holds class probabilities.
    if (!target.is_floating_point()) {
      throw Error(std::string("Expected floating point type for target with class "
                              "probabilities, got ") +
                  torch_scalar_type_name(target.dtype()));
    }
    if (ignore_index >= 0) {
      throw Error("ignore_index is not supported for floating point target");
    }
    check_label_smoothing(label_smoothing);
    return cross_entropy_prob_target(input, target, weight, reduction, label_smoothing);
  }
  if (input.dim() < 1) {
    throw Error("Expected 1 or more dimensions (got " + std::to_string(input.dim()) + ")");
  }
  if (label_smoothing > 0.0) {
    check_label_smoothing(label_smoothing);
    return cross_entropy_label_smoothing(input, target, weight, ignore_index, reduction,
                                         label_smoothing);
  }
  check_label_smoothing(label_smoothing);
  return nll_loss(log_softmax(input, input.dim() == 1 ? 0 : 1), target, weight, ignore_index,
                  reduction);
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
  if (input.sizes() != target.sizes()) {
    throw Error("Target size (" + shape_str(target.sizes()) + ") must be the same as input size (" +
                shape_str(input.sizes()) + ")");
  }
  // log(1 + e^−x) = m + log(e^−m + e^(−x−m)) with m = max(−x, 0): no overflow for any x.
  const Tensor m = clamp(-input, 0.0, std::nullopt);
  const Tensor log1p_exp_neg = log(exp(-m) + exp(-input - m)) + m;
  Tensor loss;
  if (pos_weight.defined()) {
    const Tensor log_weight = (pos_weight - 1.0) * target + 1.0;
    loss = (1.0 - target) * input + log_weight * log1p_exp_neg;
  } else {
    loss = (1.0 - target) * input + log1p_exp_neg;
  }
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
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
