// Two-argument math with broadcasting and PyTorch's type promotion: atan2 (integers promote to
// float32), hypot and logaddexp (floating only), and the two remainders: fmod keeps the sign of
// the dividend (C's fmod), remainder the sign of the divisor (Python's %). Backward reduces
// broadcast gradients with sum_to; the remainders' divisor gradient is -g * (a / b) rounded
// (toward zero for fmod, down for remainder), as PyTorch's derivatives.yaml.
#include <cmath>
#include <string>
#include <type_traits>

#include "kernels/elementwise.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace {
using autograd::sum_to;
using Grads = std::vector<Tensor>;

// Both operands in their common floating type; `integers` says whether an integral common type
// promotes to float32 (atan2) or is refused with PyTorch's message (hypot, logaddexp).
std::pair<Tensor, Tensor> floating_operands(const Tensor& a0, const Tensor& b0, const char* name,
                                            bool integers) {
  Dtype type = kernels::result_type({&a0, &b0});
  if (!is_floating(type)) {
    if (!integers) {
      throw Error(std::string("\"") + name + "_cpu\" not implemented for '" + dtype_name(type) +
                  "'");
    }
    type = kernels::floating_result(type);
  }
  return {a0.to(type), b0.to(type)};
}

template <typename F>
Tensor map_floating2(const Tensor& a, const Tensor& b, const char* name, F f) {
  return kernels::dispatch_floating(a.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return kernels::map_binary<T, T>(a, b, a.dtype(),
                                     [f](T x, T y) { return static_cast<T>(f(x, y)); });
  });
}

// fmod (floor = false) or remainder (floor = true) of one pair; integers divide by zero with
// PyTorch's "ZeroDivisionError".
template <typename T>
T remainder_of(T x, T y, bool floor) {
  if constexpr (std::is_integral_v<T>) {
    if (y == 0) throw Error("ZeroDivisionError");
    if (y == -1) return T(0);  // INT_MIN % -1 overflows in C++
    T r = static_cast<T>(x % y);
    if (floor && r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);
    return r;
  } else {
    T r = std::fmod(x, y);
    if (floor && r != T(0) && ((y < T(0)) != (r < T(0)))) r += y;
    return r;
  }
}

Tensor remainder_op(const Tensor& a0, const Tensor& b0, bool floor) {
  const char* name = floor ? "remainder" : "fmod";
  const Dtype type = kernels::result_type({&a0, &b0});
  const Tensor a = a0.to(type), b = b0.to(type);
  Tensor out = kernels::dispatch_numeric(type, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return kernels::map_binary<T, T>(a, b, type,
                                     [floor](T x, T y) { return remainder_of(x, y, floor); });
  });
  if (!is_floating(type)) return out;
  autograd::record_function(
      floor ? "RemainderBackward0" : "FmodBackward0", {a, b}, {out}, {a, b},
      [floor](const Grads& g, const Grads& s) {
        const Tensor quotient = div(s[0], s[1], floor ? "floor" : "trunc");
        return Grads{sum_to(g[0], s[0].sizes()), sum_to(-g[0] * quotient, s[1].sizes())};
      });
  return out;
}
}  // namespace

Tensor atan2(const Tensor& a0, const Tensor& b0) {
  WEFT_TRACE_OP(Atan2, (a0, b0), ir::Attributes(), atan2(a0, b0));
  const auto [a, b] = floating_operands(a0, b0, "atan2", true);
  Tensor out = map_floating2(a, b, "atan2", [](auto y, auto x) { return std::atan2(y, x); });
  autograd::record_function("Atan2Backward0", {a, b}, {out}, {a, b},
                            [](const Grads& g, const Grads& s) {
                              const Tensor scale = reciprocal(s[0] * s[0] + s[1] * s[1]);
                              return Grads{sum_to(g[0] * s[1] * scale, s[0].sizes()),
                                           sum_to(g[0] * -s[0] * scale, s[1].sizes())};
                            });
  return out;
}

Tensor hypot(const Tensor& a0, const Tensor& b0) {
  WEFT_TRACE_OP(Hypot, (a0, b0), ir::Attributes(), hypot(a0, b0));
  const auto [a, b] = floating_operands(a0, b0, "hypot", false);
  Tensor out = map_floating2(a, b, "hypot", [](auto x, auto y) { return std::hypot(x, y); });
  autograd::record_function(
      "HypotBackward0", {a, b}, {out}, {a, b, out}, [](const Grads& g, const Grads& s) {
        const Tensor scale = g[0] / s[2];
        return Grads{sum_to(scale * s[0], s[0].sizes()), sum_to(scale * s[1], s[1].sizes())};
      });
  return out;
}

Tensor logaddexp(const Tensor& a0, const Tensor& b0) {
  WEFT_TRACE_OP(Logaddexp, (a0, b0), ir::Attributes(), logaddexp(a0, b0));
  const auto [a, b] = floating_operands(a0, b0, "logaddexp", false);
  Tensor out = map_floating2(a, b, "logaddexp", [](auto x, auto y) {
    using T = decltype(x);
    if (std::isinf(x) && x == y) return x;
    const T m = std::max(x, y);
    return m + std::log1p(std::exp(-std::abs(x - y)));
  });
  autograd::record_function("LogaddexpBackward0", {a, b}, {out}, {a, b},
                            [](const Grads& g, const Grads& s) {
                              return Grads{sum_to(g[0] / (exp(s[1] - s[0]) + 1.0), s[0].sizes()),
                                           sum_to(g[0] / (exp(s[0] - s[1]) + 1.0), s[1].sizes())};
                            });
  return out;
}

Tensor fmod(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(Fmod, (a, b), ir::Attributes(), fmod(a, b));
  return remainder_op(a, b, false);
}

Tensor remainder(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(Remainder, (a, b), ir::Attributes(), remainder(a, b));
  return remainder_op(a, b, true);
}

}  // namespace weft
