// Pooling layers: each forwards its options to the op of the same name in ops/pool.cpp or
// ops/pool3d.cpp.
#include "weft/nn/pooling.h"

#include <vector>

#include "weft/ops.h"

namespace weft::nn {

namespace {
template <std::size_t D>
std::vector<std::int64_t> stride_or_empty(const std::optional<ExpandingArray<D>>& stride) {
  return stride ? stride->vec() : std::vector<std::int64_t>{};  // empty: stride = kernel_size
}
}  // namespace

template <std::size_t D>
Tensor MaxPoolNd<D>::forward(const Tensor& input) {
  const auto kernel = options.kernel_size().vec(), stride = stride_or_empty(options.stride());
  const auto padding = options.padding().vec(), dilation = options.dilation().vec();
  if constexpr (D == 1) {
    return max_pool1d(input, kernel, stride, padding, dilation, options.ceil_mode());
  } else if constexpr (D == 2) {
    return max_pool2d(input, kernel, stride, padding, dilation, options.ceil_mode());
  } else {
    return max_pool3d(input, kernel, stride, padding, dilation, options.ceil_mode());
  }
}

template <std::size_t D>
Tensor AvgPoolNd<D>::forward(const Tensor& input) {
  const auto kernel = options.kernel_size().vec(), stride = stride_or_empty(options.stride());
  const auto padding = options.padding().vec();
  if constexpr (D == 1) {
    return avg_pool1d(input, kernel, stride, padding, options.ceil_mode(),
                      options.count_include_pad());
  } else if constexpr (D == 2) {
    return avg_pool2d(input, kernel, stride, padding, options.ceil_mode(),
                      options.count_include_pad());
  } else {
    return avg_pool3d(input, kernel, stride, padding, options.ceil_mode(),
                      options.count_include_pad());
  }
}

Tensor AdaptiveAvgPool2d::forward(const Tensor& input) {
  return adaptive_avg_pool2d(input, output_size.vec());
}

Tensor AdaptiveAvgPool3d::forward(const Tensor& input) {
  return adaptive_avg_pool3d(input, output_size.vec());
}

Tensor AdaptiveMaxPool1d::forward(const Tensor& input) {
  return adaptive_max_pool1d(input, {output_size});
}

Tensor AdaptiveMaxPool2d::forward(const Tensor& input) {
  return adaptive_max_pool2d(input, output_size.vec());
}

template class MaxPoolNd<1>;
template class MaxPoolNd<2>;
template class AvgPoolNd<1>;
template class AvgPoolNd<2>;
template class MaxPoolNd<3>;
template class AvgPoolNd<3>;

}  // namespace weft::nn
