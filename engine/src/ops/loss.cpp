// Losses of torch.nn.functional, written with engine ops so that the gradients are theirs.
// Regression: mse_loss, l1_loss, smooth_l1_loss, huber_loss: each is its pointwise loss of
// d = self - target, then the reduction ("none", "mean" of all elements, "sum"): PyTorch's
// formulas, with abs's zero gradient where d is 0 and the quadratic branch's gradient d / beta
// (continuous with the linear branch's sign at |d| = beta). Classification: nll_loss and
// cross_entropy_loss pick each target's class score; "mean" divides by the targets that are
// not ignore_index (none left: 0 / 0, NaN, as in PyTorch, with a zero gradient). Divergences:
// binary_cross_entropy_with_logits and kl_div, as ATen composes them.
#include <cstdint>
#include <string>

#include "traced.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/shape.h"

namespace weft {

namespace {

// The checks PyTorch's losses make of self's and target's dtypes.
void check_loss_dtypes(const char* op, const Tensor& self, const Tensor& target) {
  if (!self.is_floating_point() || !target.is_floating_point()) {
    // ATen's loss kernels dispatch on floating types only.
    const Dtype wrong = self.is_floating_point() ? target.dtype() : self.dtype();
    throw Error(std::string("\"") + op + "\" not implemented for '" +
                torch_scalar_type_name(wrong) + "'");
  }
}

// The elementwise difference, after those checks.
Tensor difference(const char* op, const Tensor& self, const Tensor& target) {
  check_loss_dtypes(op, self, target);
  return sub(self, target);
}

Tensor reduce_loss(const Tensor& loss, const std::string& reduction) {
  if (reduction == "none") return loss;
  if (reduction == "mean") return mean(loss);
  if (reduction == "sum") return sum(loss);
  throw Error(reduction + " is not a valid value for reduction");
}

Tensor half(const Tensor& like) {
  return scalar_tensor(0.5, dtype(like.dtype()));
}

// The pointwise loss that is quadratic inside |d| < bound and linear outside: smooth_l1's
// (0.5 d^2 / beta, |d| - 0.5 beta) and huber's (0.5 d^2, delta (|d| - 0.5 delta)), computed in
// PyTorch's order of operations so that float32 results round as its kernels' do.
Tensor piecewise(const Tensor& d, double bound, bool huber) {
  const Tensor size = abs(d);
  const Tensor bound_t = scalar_tensor(bound, dtype(d.dtype()));
  const Tensor square = mul(mul(half(d), d), d);
  if (huber) {
    return where(lt(size, bound_t), square, mul(bound_t, sub(size, mul(half(d), bound_t))));
  }
  return where(lt(size, bound_t), div(square, bound_t), sub(size, mul(half(d), bound_t)));
}

// ---- classification ----

// The class dim of a classification loss's scores: [C] has it first, [N, C, d...] second.
std::int64_t class_dim(const Tensor& self) {
  return self.dim() == 1 ? 0 : 1;
}

// PyTorch's checks of scores, class targets and class weights (LossNLL.cpp's messages).
void check_classification(const Tensor& self, const Tensor& target, const Tensor& weight,
                          std::int64_t ignore_index) {
  if (self.dim() < 1) {
    throw Error("Expected 1 or more dimensions (got " + std::to_string(self.dim()) + ")");
  }
  if (!self.is_floating_point()) {
    throw Error(std::string("\"nll_loss_out_frame\" not implemented for '") +
                torch_scalar_type_name(self.dtype()) + "'");
  }
  if (target.dtype() != Dtype::Int64) {
    throw Error(std::string("expected scalar type Long but found ") +
                torch_scalar_type_name(target.dtype()));
  }
  if (self.dim() <= 2 && target.dim() > 1) {
    throw Error("0D or 1D target tensor expected, multi-target not supported");
  }
  if (self.dim() > 1 && (target.dim() == 0 || self.size(0) != target.size(0))) {
    throw Error("Expected input batch_size (" + std::to_string(self.size(0)) +
                ") to match target batch_size (" +
                std::to_string(target.dim() == 0 ? 0 : target.size(0)) + ").");
  }
  Shape expected = self.sizes();
  expected.erase(expected.begin() + class_dim(self));
  if (target.sizes() != expected) {
    throw Error("Expected target size " + shape_str(expected) + ", got " +
                shape_str(target.sizes()));
  }
  const std::int64_t classes = self.size(class_dim(self));
  if (weight.defined() && (weight.dim() != 1 || weight.numel() != classes)) {
    throw Error(
        "weight tensor should be defined either for all " + std::to_string(classes) +
        " classes or no classes but got weight tensor of shape: " + shape_str(weight.sizes()));
  }
  for (std::int64_t t : target.contiguous().to_vector<std::int64_t>()) {
    if (t != ignore_index && (t < 0 || t >= classes)) {
      throw Error("Target " + std::to_string(t) + " is out of bounds.");
    }
  }
}

// Per target: -w[t] self[.., t, ..] and w[t] (w = 1 without class weights), both 0 where the
// target is ignore_index. The weights are constants: PyTorch has no gradient for them.
struct PickedScores {
  Tensor loss;
  Tensor weights;
  Tensor counts;  // bool: the target is not ignore_index
};

PickedScores picked_scores(const Tensor& self, const Tensor& target, const Tensor& weight,
                           std::int64_t ignore_index) {
  const std::int64_t dim = class_dim(self);
  const Tensor counts = ne(target, wrapped_scalar(ignore_index));
  const Tensor safe_target = where(counts, target, zeros_like(target));
  const Tensor picked = squeeze(gather(self, dim, unsqueeze(safe_target, dim)), {dim});
  const Tensor zero = zeros({}, dtype(self.dtype()));
  if (!weight.defined()) {
    return {where(counts, neg(picked), zero), counts.to(self.dtype()), counts};
  }
  const Tensor w = where(counts,
                         index_select(weight.detach().to(self.dtype()), 0, safe_target.flatten())
                             .reshape(target.sizes()),
                         zero);
  // where, not a product with w = 0: the gradient of an ignored target is 0 even when "mean"
  // divides by a zero total weight.
  return {where(counts, neg(mul(picked, w)), zero), w, counts};
}

// Class weights [C] seen as [1, C, 1, ...] against log-probabilities of self's rank.
Tensor class_weight_view(const Tensor& weight, const Tensor& log_p) {
  Shape view(static_cast<std::size_t>(log_p.dim()), 1);
  view[static_cast<std::size_t>(class_dim(log_p))] = weight.size(0);
  return weight.detach().to(log_p.dtype()).reshape(view);
}

// cross_entropy with class probabilities (a floating target of self's shape, ATen's
// cross_entropy_loss_prob_target): -sum_c w_c t_c log p_c per sample, t smoothed towards 1/C;
// "mean" divides by the number of samples.
Tensor cross_entropy_probabilities(const Tensor& log_p, const Tensor& target, const Tensor& weight,
                                   std::int64_t ignore_index, const std::string& reduction,
                                   double label_smoothing) {
  if (!target.is_floating_point()) {
    throw Error(
        std::string("Expected floating point type for target with class probabilities, got ") +
        torch_scalar_type_name(target.dtype()));
  }
  if (ignore_index >= 0) throw Error("ignore_index is not supported for floating point target");
  const std::int64_t dim = class_dim(log_p);
  const std::int64_t classes = log_p.size(dim);
  if (weight.defined() && (weight.dim() != 1 || weight.numel() != classes)) {
    throw Error("cross_entropy: weight tensor should be defined either for all " +
                std::to_string(classes) + " classes or no classes but got weight tensor of " +
                "shape: " + shape_str(weight.sizes()));
  }
  Tensor t = target;
  if (label_smoothing > 0.0) {
    t = add(mul(target, wrapped_scalar(1.0 - label_smoothing)),
            wrapped_scalar(label_smoothing / static_cast<double>(classes)));
  }
  Tensor terms = mul(log_p, t);
  if (weight.defined()) terms = mul(terms, class_weight_view(weight, log_p));
  if (reduction == "mean") {
    return div(neg(sum(terms)), wrapped_scalar(static_cast<double>(log_p.numel() / classes)));
  }
  if (reduction == "sum") return neg(sum(terms));
  if (reduction == "none") return neg(sum(terms, {dim}));
  throw Error(reduction + " is not a valid value for reduction");
}

// "mean" divides by the summed weights of the counted targets (their number without weights):
// none counted gives 0 / 0, NaN, with a zero gradient, as in PyTorch.
Tensor reduce_weighted(const Tensor& loss, const Tensor& weights, const std::string& reduction) {
  if (reduction == "mean") return div(sum(loss), sum(weights));
  return reduce_loss(loss, reduction);
}

}  // namespace

Tensor mse_loss(const Tensor& self, const Tensor& target, std::string_view reduction) {
  WEFT_TRACE_OP(MseLoss, (self, target), ir::Attributes().set("reduction", std::string(reduction)),
                mse_loss(self, target, reduction));
  const Tensor d = difference("mse_cpu", self, target);
  return reduce_loss(mul(d, d), std::string(reduction));
}

Tensor l1_loss(const Tensor& self, const Tensor& target, std::string_view reduction) {
  WEFT_TRACE_OP(L1Loss, (self, target), ir::Attributes().set("reduction", std::string(reduction)),
                l1_loss(self, target, reduction));
  const Tensor d = difference("abs_cpu", self, target);
  return reduce_loss(abs(d), std::string(reduction));
}

Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, std::string_view reduction,
                      double beta) {
  WEFT_TRACE_OP(SmoothL1Loss, (self, target),
                ir::Attributes().set("reduction", std::string(reduction)).set("beta", beta),
                smooth_l1_loss(self, target, reduction, beta));
  if (beta < 0) throw Error("smooth_l1_loss does not support negative values for beta.");
  const Tensor d = difference("smooth_l1_cpu", self, target);
  // beta = 0 is l1_loss (torch.nn.functional takes that path).
  return reduce_loss(beta == 0 ? abs(d) : piecewise(d, beta, false), std::string(reduction));
}

Tensor huber_loss(const Tensor& self, const Tensor& target, std::string_view reduction,
                  double delta) {
  WEFT_TRACE_OP(HuberLoss, (self, target),
                ir::Attributes().set("reduction", std::string(reduction)).set("delta", delta),
                huber_loss(self, target, reduction, delta));
  if (delta <= 0) throw Error("huber_loss does not support non-positive values for delta.");
  const Tensor d = difference("huber_cpu", self, target);
  return reduce_loss(piecewise(d, delta, true), std::string(reduction));
}

Tensor nll_loss(const Tensor& self, const Tensor& target, std::string_view reduction,
                std::int64_t ignore_index, const Tensor& weight) {
  WEFT_TRACE_OP(
      NllLoss, (self, target, weight),
      ir::Attributes().set("reduction", std::string(reduction)).set("ignore_index", ignore_index),
      nll_loss(self, target, reduction, ignore_index, weight));
  check_classification(self, target, weight, ignore_index);
  const PickedScores p = picked_scores(self, target, weight, ignore_index);
  return reduce_weighted(p.loss, p.weights, std::string(reduction));
}

// ATen's cross_entropy_loss: nll_loss of log_softmax over the class dim; with label smoothing
// eps, (1 - eps) nll + eps / C * smooth, where smooth is -sum_c w_c log p_c of each counted
// target, reduced as nll_loss reduces (its "mean" over the same summed weights). A floating
// target of self's shape holds class probabilities instead.
Tensor cross_entropy_loss(const Tensor& self, const Tensor& target, std::string_view reduction,
                          std::int64_t ignore_index, double label_smoothing, const Tensor& weight) {
  WEFT_TRACE_OP(CrossEntropyLoss, (self, target, weight),
                ir::Attributes()
                    .set("reduction", std::string(reduction))
                    .set("ignore_index", ignore_index)
                    .set("label_smoothing", label_smoothing),
                cross_entropy_loss(self, target, reduction, ignore_index, label_smoothing, weight));
  if (label_smoothing < 0.0 || label_smoothing > 1.0) {
    throw Error("label_smoothing must be between 0.0 and 1.0. Got: " +
                std::to_string(label_smoothing));
  }
  if (self.dim() < 1) {
    throw Error("Expected 1 or more dimensions (got " + std::to_string(self.dim()) + ")");
  }
  const std::int64_t dim = class_dim(self);
  const Tensor log_p = log_softmax(self, dim);
  if (self.sizes() == target.sizes()) {
    return cross_entropy_probabilities(log_p, target, weight, ignore_index, std::string(reduction),
                                       label_smoothing);
  }
  check_classification(log_p, target, weight, ignore_index);
  const PickedScores p = picked_scores(log_p, target, weight, ignore_index);
  const std::string how(reduction);
  const Tensor nll = reduce_weighted(p.loss, p.weights, how);
  if (label_smoothing <= 0.0) return nll;
  const Tensor weighted_log_p =
      weight.defined() ? mul(log_p, class_weight_view(weight, log_p)) : log_p;
  const Tensor smooth =
      where(p.counts, neg(sum(weighted_log_p, {dim})), zeros({}, dtype(log_p.dtype())));
  const double classes = static_cast<double>(self.size(dim));
  return add(
      mul(nll, wrapped_scalar(1.0 - label_smoothing)),
      mul(reduce_weighted(smooth, p.weights, how), wrapped_scalar(label_smoothing / classes)));
}

// Current ATen's (1 - target) self - log_weight log_sigmoid(self), log_weight =
// (pos_weight - 1) target + 1 (1 without pos_weight), times weight: the gradients are PyTorch's,
// the target's too.
Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target,
                                        std::string_view reduction, const Tensor& weight_in,
                                        const Tensor& pos_weight) {
  // A trace records optional inputs in order: pos_weight alone comes with a weight of ones.
  const Tensor weight =
      weight_in.defined() || !pos_weight.defined() ? weight_in : ones({}, dtype(self.dtype()));
  WEFT_TRACE_OP(BinaryCrossEntropyWithLogits, (self, target, weight, pos_weight),
                ir::Attributes().set("reduction", std::string(reduction)),
                binary_cross_entropy_with_logits(self, target, reduction, weight, pos_weight));
  if (self.sizes() != target.sizes()) {
    throw Error("Target size (" + shape_str(target.sizes()) + ") must be the same as input size (" +
                shape_str(self.sizes()) + ")");
  }
  check_loss_dtypes("binary_cross_entropy_with_logits", self, target);
  const Tensor one = scalar_tensor(1.0, dtype(target.dtype()));
  Tensor log_sigmoid = logsigmoid(self);
  if (pos_weight.defined())
    log_sigmoid = mul(add(mul(sub(pos_weight, one), target), one), log_sigmoid);
  Tensor loss = sub(mul(sub(one, target), self), log_sigmoid);
  if (weight.defined()) loss = mul(loss, weight);
  return reduce_loss(loss, std::string(reduction));
}

// ATen's kl_div: xlogy(target, target) - target self, or exp(target) (target - self) with
// log_target. torch.nn.functional's "batchmean" is the sum over the batch size (dim 0).
Tensor kl_div(const Tensor& self, const Tensor& target, std::string_view reduction,
              bool log_target) {
  WEFT_TRACE_OP(
      KlDiv, (self, target),
      ir::Attributes().set("reduction", std::string(reduction)).set("log_target", log_target),
      kl_div(self, target, reduction, log_target));
  check_loss_dtypes("kl_div", self, target);
  const Tensor pointwise = log_target ? mul(exp(target), sub(target, self))
                                      : sub(xlogy(target, target), mul(target, self));
  if (reduction == "batchmean") {
    const Tensor total = sum(pointwise);
    return self.dim() == 0 ? total : div(total, wrapped_scalar(self.size(0)));
  }
  return reduce_loss(pointwise, std::string(reduction));
}

}  // namespace weft
