#pragma once
// Reductions over a set of dims: the input is laid out as [kept..., reduced...] (a
// permuted copy when needed) so each output element reduces one contiguous segment.
// Single-dim ops (prod, max, argmax, softmax) use DimLayout instead: the contiguous input
// seen as [outer, size, inner], which needs no permuted copy and lets loops run along `inner`.

#include <cstdint>
#include <vector>

#include "weft/tensor.h"

namespace weft::kernels {

struct ReductionLayout {
  Tensor segments;      // contiguous, shape [outer, inner]
  Shape out_shape;      // with keepdim applied
  Shape keepdim_shape;  // reduced dims as 1 (for broadcasting gradients back)
  std::int64_t outer = 1;
  std::int64_t inner = 1;
};

// `dims` must already be wrapped and sorted.
ReductionLayout reduction_layout(const Tensor& x, const std::vector<std::int64_t>& dims,
                                 bool keepdim);

// x (contiguous) as [outer, size, inner] around one dim; a rank-0 tensor is [1, 1, 1].
struct DimLayout {
  Tensor input;         // contiguous, x's shape
  Shape out_shape;      // with keepdim applied
  Shape keepdim_shape;  // the reduced dim as 1
  std::int64_t outer = 1;
  std::int64_t size = 1;
  std::int64_t inner = 1;
};

// `dim` must already be wrapped. Copies x only when it is not contiguous (no autograd).
DimLayout dim_layout(const Tensor& x, std::int64_t dim, bool keepdim);
// Every element as one segment: [1, numel, 1]; out_shape is [] or all ones with keepdim.
DimLayout flat_layout(const Tensor& x, bool keepdim);

}  // namespace weft::kernels
