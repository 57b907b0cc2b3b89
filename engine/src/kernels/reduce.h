#pragma once
// Reductions over a set of dims: the input is laid out as [kept..., reduced...] (a
// permuted copy when needed) so each output element reduces one contiguous segment.

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

}  // namespace weft::kernels
