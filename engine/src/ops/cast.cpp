// cast: dtype conversion. Differentiable between floating types (the gradient is cast back);
// conversions to or from integers and bool stop the gradient, as in PyTorch. contiguous: the
// same values in another memory layout (a differentiable copy).
#include "kernels/copy.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
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

Tensor contiguous(const Tensor& x, std::string_view memory_format) {
  WEFT_TRACE_OP(Contiguous, (x), ir::Attributes().set("memory_format", std::string(memory_format)),
                contiguous(x, memory_format));
  if (memory_format == "contiguous_format") return x.contiguous();
  if (memory_format != "channels_last") {
    throw Error("contiguous: unknown memory_format '" + std::string(memory_format) +
                "' (expected contiguous_format or channels_last)");
  }
  if (x.dim() != 4) {
    throw Error("required rank 4 tensor to use channels_last format");
  }
  // NHWC values, seen again as NCHW: the strides of channels_last.
  return x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
}

}  // namespace weft
