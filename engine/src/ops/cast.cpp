// cast: dtype conversion. Differentiable between floating types (the gradient is cast back);
// conversions to or from integers and bool stop the gradient, as in PyTorch.
#include "kernels/copy.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/ops.h"

namespace weft {

Tensor cast(const Tensor& x, Dtype dtype) {
  WEFT_TRACE_OP(Cast, (x), ir::Attributes().set("dtype", dtype), cast(x, dtype));
  Tensor out = empty(x.sizes(), weft::dtype(dtype));
  kernels::copy_into(out, x);
  if (is_floating(dtype) && x.is_floating_point()) {
    const Dtype source = x.dtype();
    autograd::record_function("ToCopyBackward0", {x}, {out}, {},
                              [source](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
                                return std::vector<Tensor>{g[0].to(source)};
                              });
  }
  return out;
}

}  // namespace weft
