#include "kernels/reduce.h"

#include <algorithm>

#include "weft/autograd.h"
#include "weft/ops.h"

namespace weft::kernels {

ReductionLayout reduction_layout(const Tensor& x, const std::vector<std::int64_t>& dims,
                                 bool keepdim) {
  ReductionLayout layout;
  std::vector<std::int64_t> order;
  for (std::int64_t d = 0; d < x.dim(); ++d) {
    const bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!reduced) {
      order.push_back(d);
      layout.outer *= x.size(d);
      layout.out_shape.push_back(x.size(d));
      layout.keepdim_shape.push_back(x.size(d));
    } else {
      layout.inner *= x.size(d);
      if (keepdim) layout.out_shape.push_back(1);
      layout.keepdim_shape.push_back(1);
    }
  }
  for (std::int64_t d : dims) order.push_back(d);
  autograd::NoGradGuard guard;  // layout copies are an implementation detail
  Tensor arranged = x.dim() == 0 ? x : permute(x, order);
  layout.segments = arranged.contiguous().reshape({layout.outer, layout.inner});
  return layout;
}

DimLayout dim_layout(const Tensor& x, std::int64_t dim, bool keepdim) {
  DimLayout layout;
  for (std::int64_t d = 0; d < x.dim(); ++d) {
    const std::int64_t n = x.size(d);
    if (d < dim) layout.outer *= n;
    if (d > dim) layout.inner *= n;
    if (d == dim) {
      layout.size = n;
      if (keepdim) layout.out_shape.push_back(1);
      layout.keepdim_shape.push_back(1);
    } else {
      layout.out_shape.push_back(n);
      layout.keepdim_shape.push_back(n);
    }
  }
  autograd::NoGradGuard guard;
  layout.input = x.contiguous();
  return layout;
}

DimLayout flat_layout(const Tensor& x, bool keepdim) {
  DimLayout layout;
  layout.size = x.numel();
  layout.keepdim_shape.assign(static_cast<std::size_t>(x.dim()), 1);
  if (keepdim) layout.out_shape = layout.keepdim_shape;
  autograd::NoGradGuard guard;
  layout.input = x.contiguous();
  return layout;
}

}  // namespace weft::kernels
