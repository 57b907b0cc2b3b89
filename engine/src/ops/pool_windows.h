#pragma once
// What the 1-D/2-D pools (ops/pool.cpp) and the 3-D pools (ops/pool3d.cpp) share: PyTorch's
// output-size rule, the windows of average and adaptive pooling along one dim, and max
// pooling's backward pair (scatter into the argmax indices, and its adjoint, a gather), over
// planes of the last `spatial` dims.
#include <cstdint>
#include <vector>

#include "weft/tensor.h"

namespace weft::pool_detail {

std::int64_t floor_div(std::int64_t a, std::int64_t b);

// PyTorch's pooling_output_shape: with ceil_mode, the last window must start inside the
// input or the left padding.
std::int64_t pooled_size(std::int64_t in, std::int64_t k, std::int64_t pad, std::int64_t stride,
                         std::int64_t dilation, bool ceil_mode);

// The product of the dims before the last `spatial` ones (batch and channels).
std::int64_t leading_planes(const Tensor& x, int spatial);

// Per output index along one dim: the input range [start, end) and the divisor factor.
struct Windows {
  std::vector<std::int64_t> start, end, count;
};

// Average pooling's windows: count is the padded window (count_include_pad) or the part of
// it inside the input.
Windows avg_windows(std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t stride,
                    std::int64_t pad, bool count_include_pad);
// Adaptive pooling's windows: [floor(o * in / out), ceil((o + 1) * in / out)).
Windows adaptive_windows(std::int64_t in, std::int64_t out);

// Average pools take floating and int64 input (PyTorch's CPU kernels), nothing else.
void check_avg_dtype(const Tensor& x, const char* name);

// indices: the flat position of each output's maximum inside its plane of the input.
Tensor max_gather(const Tensor& h, const Tensor& indices, const Shape& out_shape, int spatial);
Tensor max_scatter(const Tensor& g, const Tensor& indices, const Shape& in_shape, int spatial);

}  // namespace weft::pool_detail
