// Two-argument math with broadcasting and PyTorch's type promotion: atan2, xlogy and copysign
// (integers promote to float32), hypot, logaddexp and logaddexp2 (floating only), fmax/fmin
// (any dtype; a NaN loses to a number), and the two remainders: fmod keeps the sign of the
// dividend (C's fmod), remainder the sign of the divisor (Python's %). Backward reduces
// broadcast gradients with sum_to; the formulas are PyTorch's derivatives.yaml (the remainders'
// divisor gradient is -g * (a / b) rounded toward zero for fmod, down for remainder).
#include <cmath>
#include <limits>
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
using Saved = std::vector<Tensor>;

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

Tensor logaddexp2(const Tensor& a0, const Tensor& b0) {
  WEFT_TRACE_OP(Logaddexp2, (a0, b0), ir::Attributes(), logaddexp2(a0, b0));
  const auto [a, b] = floating_operands(a0, b0, "logaddexp2", false);
  Tensor out = map_floating2(a, b, "logaddexp2", [](auto x, auto y) {
    using T = decltype(x);
    if (std::isinf(x) && x == y) return x;
    const T m = std::max(x, y);
    return static_cast<T>(m + std::log1p(std::exp2(-std::abs(x - y))) / std::log(T(2)));
  });
  autograd::record_function(
      "Logaddexp2Backward0", {a, b}, {out}, {a, b}, [](const Grads& g, const Saved& s) {
        const Tensor two = full_like(s[0], 2.0);
        return Grads{sum_to(g[0] / (pow(two, s[1] - s[0]) + 1.0), s[0].sizes()),
                     sum_to(g[0] / (pow(two, s[0] - s[1]) + 1.0), s[1].sizes())};
      });
  return out;
}

// x * log(y), 0 where x is 0 (even for y = 0 or inf), NaN where y is NaN.
Tensor xlogy(const Tensor& a0, const Tensor& b0) {
  WEFT_TRACE_OP(Xlogy, (a0, b0), ir::Attributes(), xlogy(a0, b0));
  const auto [a, b] = floating_operands(a0, b0, "xlogy", true);
  Tensor out = map_floating2(a, b, "xlogy", [](auto x, auto y) {
    using T = decltype(x);
    if (std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
    if (x == T(0)) return T(0);
    return static_cast<T>(x * std::log(y));
  });
  autograd::record_function(
      "XlogyBackward0", {a, b}, {out}, {a, b}, [](const Grads& g, const Saved& s) {
        const Tensor no_log = logical_and(eq(s[0], zeros_like(s[0])), le(s[1], zeros_like(s[1])));
        const Tensor ga = masked_fill(xlogy(g[0], s[1]), no_log, 0.0);
        return Grads{sum_to(ga, s[0].sizes()), sum_to(g[0] * s[0] / s[1], s[1].sizes())};
      });
  return out;
}

// |a| with b's sign bit. a's gradient is g * result / a (0 where a is 0); b's is 0.
Tensor copysign(const Tensor& a0, const Tensor& b0) {
  WEFT_TRACE_OP(Copysign, (a0, b0), ir::Attributes(), copysign(a0, b0));
  const auto [a, b] = floating_operands(a0, b0, "copysign", true);
  Tensor out = map_floating2(a, b, "copysign", [](auto x, auto y) { return std::copysign(x, y); });
  autograd::record_function(
      "CopysignBackward0", {a, b}, {out}, {a, out},
      [b_shape = b.sizes(), b_dtype = b.dtype()](const Grads& g, const Saved& s) {
        const Tensor ratio = masked_fill(s[1] / s[0], eq(s[0], zeros_like(s[0])), 0.0);
        return Grads{sum_to(g[0] * ratio, s[0].sizes()), zeros(b_shape, dtype(b_dtype))};
      });
  return out;
}

namespace {
// fmax (larger = true) or fmin: the larger (smaller) of two numbers, the number where one is
// NaN, NaN where both are. Backward (PyTorch 2.x): an exact tie gives each operand half of g;
// a NaN other gives all of it to self. (LibTorch 1.13 gave a tie's g to self alone.)
Tensor fmax_or_fmin(const Tensor& a0, const Tensor& b0, bool larger) {
  const Dtype type = kernels::result_type({&a0, &b0});
  const Tensor a = a0.to(type), b = b0.to(type);
  Tensor out = kernels::dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return kernels::map_binary<T, T>(a, b, type, [larger](T x, T y) {
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(x)) return y;
        if (std::isnan(y)) return x;
      }
      return larger ? (x < y ? y : x) : (y < x ? y : x);
    });
  });
  if (!is_floating(type)) return out;
  autograd::record_function(
      larger ? "FmaxBackward0" : "FminBackward0", {a, b}, {out}, {a, b},
      [larger](const Grads& g, const Saved& s) {
        const Tensor& x = s[0];
        const Tensor& y = s[1];
        const Tensor split = where(eq(x, y), g[0] * 0.5, g[0]);
        const Tensor self_wins = logical_or(larger ? ge(x, y) : le(x, y), isnan(y));
        const Tensor other_wins = logical_or(larger ? gt(x, y) : lt(x, y), isnan(y));
        return Grads{sum_to(masked_fill(split, logical_not(self_wins), 0.0), x.sizes()),
                     sum_to(masked_fill(split, other_wins, 0.0), y.sizes())};
      });
  return out;
}
}  // namespace

Tensor fmax(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(Fmax, (a, b), ir::Attributes(), fmax(a, b));
  return fmax_or_fmin(a, b, true);
}

Tensor fmin(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(Fmin, (a, b), ir::Attributes(), fmin(a, b));
  return fmax_or_fmin(a, b, false);
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
