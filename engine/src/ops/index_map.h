#pragma once
// Index maps (defined in ops/index.cpp), the primitive under gather, index_select, embedding,
// pad, interpolate and the reordering ops: out.flat[o] = Σ_k w[o*K+k] · x.flat[idx[o*K+k]].
// Without weights K is 1 and entries with idx < 0 take `fill`. The backward scatters the
// gradient through `grad_idx` (default: idx); each primitive is the other's derivative.
#include <cstdint>

#include "weft/tensor.h"

namespace weft::detail {

Tensor take_linear(const char* name, const Tensor& x, const Tensor& idx, const Tensor& weights,
                   std::int64_t k, IntList out_shape, double fill, const Tensor& grad_idx);

// gx.flat[idx[o*K+k]] += w[o*K+k] · g.flat[o]; g floating.
Tensor scatter_linear(const Tensor& g, const Tensor& idx, const Tensor& weights, std::int64_t k,
                      IntList in_shape);

}  // namespace weft::detail
