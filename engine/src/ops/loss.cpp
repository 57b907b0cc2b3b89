// Regression losses of torch.nn.functional: mse_loss, l1_loss, smooth_l1_loss, huber_loss. Each
// is its pointwise loss of d = self - target, then the reduction ("none", "mean" of all
// elements, "sum"), written with engine ops so that the gradients (to self and to target) are
// theirs: PyTorch's formulas, with abs's zero gradient where d is 0 and the quadratic branch's
// gradient d / beta (continuous with the linear branch's sign at |d| = beta).
#include <string>

#include "traced.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace {

// The elementwise difference, after the checks PyTorch's losses make.
Tensor difference(const char* op, const Tensor& self, const Tensor& target) {
  if (!self.is_floating_point() || !target.is_floating_point()) {
    // ATen's loss kernels dispatch on floating types only.
    const Dtype wrong = self.is_floating_point() ? target.dtype() : self.dtype();
    throw Error(std::string("\"") + op + "\" not implemented for '" +
                torch_scalar_type_name(wrong) + "'");
  }
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

}  // namespace weft
