#pragma once
// Raw element copies with dtype conversion and broadcasting; no autograd.

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "weft/tensor.h"

namespace weft::kernels {

// Converts like x86 (and so LibTorch on x86): NaN and out-of-range floats become the
// integer type's minimum instead of undefined behaviour.
template <typename To, typename From>
inline To convert(From value) {
  if constexpr (std::is_same_v<To, bool>) {
    return value != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    constexpr double lo = static_cast<double>(std::numeric_limits<To>::min());
    constexpr double hi = -lo;  // 2^(bits-1): the first value past the maximum
    const double v = static_cast<double>(value);
    if (!(v > lo - 1.0 && v < hi)) return std::numeric_limits<To>::min();
    return static_cast<To>(value);
  } else {
    return static_cast<To>(value);
  }
}

// dst[...] = convert(src[...]); src broadcasts to dst's shape.
void copy_into(const Tensor& dst, const Tensor& src);

}  // namespace weft::kernels
