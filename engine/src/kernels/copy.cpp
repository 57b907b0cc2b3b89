#include "kernels/copy.h"

#include <cstring>

#include "kernels/dispatch.h"
#include "kernels/half.h"
#include "kernels/loops.h"

namespace weft::kernels {

void copy_into(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  if (dst.dtype() == src.dtype() && dst.sizes() == src.sizes() && dst.is_contiguous() &&
      src.is_contiguous()) {
    std::memmove(dst.raw_data(), src.raw_data(), dst.numel() * itemsize(dst.dtype()));
    return;
  }
  dispatch_storage(dst.dtype(), [&](auto out_tag) {
    using Out = typename decltype(out_tag)::type;
    dispatch_storage(src.dtype(), [&](auto in_tag) {
      using In = typename decltype(in_tag)::type;
      unary_loop<Out, In>(dst, src, [](In v) { return convert_any<Out>(v); });
    });
  });
}

}  // namespace weft::kernels
