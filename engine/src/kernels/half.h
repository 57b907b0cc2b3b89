#pragma once
// The engine's 16-bit floats, as storage: Eigen's half and bfloat16, which round float32 to
// nearest even (NaN kept a quiet NaN) exactly as c10::Half and c10::BFloat16 do. Kernels never
// compute in them: the ops run on float32 copies and round their results (ops/reduced.cpp), so
// only the conversions below and the copies see these types.
// GCC 12 with -march=native reports false (maybe-)uninitialized warnings inside Eigen's packet
// math; the pragmas must precede the intrinsics headers (see ops/softmax.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <Eigen/Core>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <type_traits>

#include "kernels/copy.h"
#include "kernels/dispatch.h"

namespace weft::kernels {

using Half = Eigen::half;
using BFloat16 = Eigen::bfloat16;

template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// convert() (kernels/copy.h) extended to the 16-bit floats. Through float32 both ways, as
// c10 converts: a double becomes float first (so it is rounded twice, as in PyTorch), and a
// 16-bit float becomes an integer as its float32 value does.
template <typename To, typename From>
inline To convert_any(From value) {
  if constexpr (is_half_v<From>) {
    return convert_any<To>(static_cast<float>(value));
  } else if constexpr (is_half_v<To>) {
    return To(static_cast<float>(value));
  } else {
    return convert<To>(value);
  }
}

// dispatch() (kernels/dispatch.h) over every storage type, the 16-bit floats included: for
// code that only moves or converts elements.
template <typename F>
decltype(auto) dispatch_storage(Dtype dtype, F&& f) {
  switch (dtype) {
    case Dtype::Float16:
      return f(TypeTag<Half>{});
    case Dtype::BFloat16:
      return f(TypeTag<BFloat16>{});
    default:
      return dispatch(dtype, std::forward<F>(f));
  }
}

}  // namespace weft::kernels
