// Binary arithmetic with NumPy broadcasting and PyTorch type promotion. Operands are converted
// to the common type first (through cast, so gradients flow back in each operand's dtype);
// backward reduces broadcast gradients with sum_to.
#include <cmath>
#include <limits>

#include "kernels/elementwise.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace {
using autograd::sum_to;

template <typename T>
T integer_pow(T base, T exponent) {
  if (exponent < 0) {
    // Only reachable for 1 and -1 bases: other bases were rejected before the loop.
    if (base == 1) return 1;
    return (exponent % 2 == 0) ? T(1) : T(-1);
  }
  T result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = static_cast<T>(result * base);
    base = static_cast<T>(base * base);
    exponent >>= 1;
  }
  return result;
}

// Wrap-around arithmetic for integers, as LibTorch's two's complement results.
template <typename T>
T wrapping(T a, T b, int op) {
  using U = std::make_unsigned_t<T>;
  const U ua = static_cast<U>(a), ub = static_cast<U>(b);
  const U r = op == 0 ? ua + ub : op == 1 ? ua - ub : static_cast<U>(ua * ub);
  return static_cast<T>(r);
}
}  // namespace

Tensor add(const Tensor& a0, const Tensor& b0, double alpha) {
  WEFT_TRACE_OP(Add, (a0, b0), ir::Attributes().set("alpha", alpha), add(a0, b0, alpha));
  const Dtype type = kernels::result_type({&a0, &b0});
  if (type == Dtype::Bool && alpha != 1.0)
    throw Error("Boolean alpha only supported for Boolean results.");
  const Tensor a = a0.to(type), b = b0.to(type);
  Tensor out = kernels::dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return kernels::map_binary<T, T>(a, b, type, [](T x, T y) { return x || y; });
    } else if constexpr (std::is_integral_v<T>) {
      const T k = static_cast<T>(alpha);
      return kernels::map_binary<T, T>(a, b, type,
                                       [k](T x, T y) { return wrapping(x, wrapping(k, y, 2), 0); });
    } else {
      const T k = static_cast<T>(alpha);
      if (k == T(1)) return kernels::map_binary<T, T>(a, b, type, [](T x, T y) { return x + y; });
      return kernels::map_binary<T, T>(a, b, type, [k](T x, T y) { return x + k * y; });
    }
  });
  const Shape sa = a.sizes(), sb = b.sizes();
  autograd::record_function(
      "AddBackward0", {a, b}, {out}, {},
      [sa, sb, alpha](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
        return std::vector<Tensor>{sum_to(g[0], sa),
                                   sum_to(alpha == 1.0 ? g[0] : g[0] * alpha, sb)};
      });
  return out;
}

Tensor sub(const Tensor& a0, const Tensor& b0, double alpha) {
  WEFT_TRACE_OP(Sub, (a0, b0), ir::Attributes().set("alpha", alpha), sub(a0, b0, alpha));
  const Dtype type = kernels::result_type({&a0, &b0});
  if (type == Dtype::Bool) {
    throw Error(
        "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
        "`^` or `logical_xor()` operator instead.");
  }
  // A bool operand of a non-bool result is refused too (`mask - 1`, `x - True`).
  if (a0.dtype() == Dtype::Bool || b0.dtype() == Dtype::Bool) {
    throw Error(
        "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
        "to invert a mask, use the `~` or `logical_not()` operator instead.");
  }
  const Tensor a = a0.to(type), b = b0.to(type);
  Tensor out = kernels::dispatch_numeric(type, "sub", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      const T k = static_cast<T>(alpha);
      return kernels::map_binary<T, T>(a, b, type,
                                       [k](T x, T y) { return wrapping(x, wrapping(k, y, 2), 1); });
    } else {
      const T k = static_cast<T>(alpha);
      if (k == T(1)) return kernels::map_binary<T, T>(a, b, type, [](T x, T y) { return x - y; });
      return kernels::map_binary<T, T>(a, b, type, [k](T x, T y) { return x - k * y; });
    }
  });
  const Shape sa = a.sizes(), sb = b.sizes();
  autograd::record_function(
      "SubBackward0", {a, b}, {out}, {},
      [sa, sb, alpha](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
        return std::vector<Tensor>{sum_to(g[0], sa), sum_to(g[0] * -alpha, sb)};
      });
  return out;
}

Tensor mul(const Tensor& a0, const Tensor& b0) {
  WEFT_TRACE_OP(Mul, (a0, b0), ir::Attributes(), mul(a0, b0));
  const Dtype type = kernels::result_type({&a0, &b0});
  const Tensor a = a0.to(type), b = b0.to(type);
  Tensor out = kernels::dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return kernels::map_binary<T, T>(a, b, type, [](T x, T y) { return x && y; });
    } else if constexpr (std::is_integral_v<T>) {
      return kernels::map_binary<T, T>(a, b, type, [](T x, T y) { return wrapping(x, y, 2); });
    } else {
      return kernels::map_binary<T, T>(a, b, type, [](T x, T y) { return x * y; });
    }
  });
  // Each gradient needs only the other operand; save just what a required input needs.
  const bool save_a = b.requires_grad(), save_b = a.requires_grad();
  const Shape sa = a.sizes(), sb = b.sizes();
  autograd::record_function("MulBackward0", {a, b}, {out},
                            {save_a ? a : Tensor(), save_b ? b : Tensor()},
                            [sa, sb](const std::vector<Tensor>& g, const std::vector<Tensor>& s) {
                              Tensor ga = s[1].defined() ? sum_to(g[0] * s[1], sa) : Tensor();
                              Tensor gb = s[0].defined() ? sum_to(g[0] * s[0], sb) : Tensor();
                              return std::vector<Tensor>{ga, gb};
                            });
  return out;
}

Tensor div(const Tensor& a0, const Tensor& b0, std::optional<std::string_view> rounding_mode) {
  WEFT_TRACE_OP(Div, (a0, b0), ops_detail::div_attributes(rounding_mode),
                div(a0, b0, rounding_mode));
  Dtype type = kernels::result_type({&a0, &b0});
  if (!rounding_mode) type = kernels::floating_result(type);
  if (rounding_mode && *rounding_mode != "trunc" && *rounding_mode != "floor") {
    throw Error("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" +
                std::string(*rounding_mode) + "'");
  }
  if (type == Dtype::Bool) type = Dtype::Int64;  // bool // bool divides as integers
  const bool floor_mode = rounding_mode && *rounding_mode == "floor";
  const Tensor a = a0.to(type), b = b0.to(type);
  Tensor out = kernels::dispatch_numeric(type, "div", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      return kernels::map_binary<T, T>(a, b, type, [floor_mode](T x, T y) -> T {
        if (y == 0) throw Error("ZeroDivisionError");
        if (y == -1) return wrapping(T(0), x, 1);  // avoids the MIN / -1 trap
        T q = x / y;
        if (floor_mode && (x % y != 0) && ((x < 0) != (y < 0))) --q;
        return q;
      });
    } else if (!rounding_mode) {
      return kernels::map_binary<T, T>(a, b, type, [](T x, T y) { return x / y; });
    } else if (floor_mode) {
      // Python's floor division: floor of the exact quotient, computed via fmod as ATen does.
      return kernels::map_binary<T, T>(a, b, type, [](T x, T y) -> T {
        if (y == 0) return x / y;
        T mod = std::fmod(x, y);
        T q = (x - mod) / y;
        if (mod != 0 && ((y < 0) != (mod < 0))) q -= 1;
        if (q == 0) return std::copysign(T(0), x / y);
        T fq = std::floor(q);
        if (q - fq > T(0.5)) fq += 1;
        return fq;
      });
    } else {
      return kernels::map_binary<T, T>(a, b, type, [](T x, T y) { return std::trunc(x / y); });
    }
  });
  if (rounding_mode) {
    // Rounded division is piecewise constant: zero gradient almost everywhere.
    const Shape sa = a.sizes(), sb = b.sizes();
    autograd::record_function("DivBackward1", {a, b}, {out}, {},
                              [sa, sb](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
                                return std::vector<Tensor>{zeros(sa, dtype(g[0].dtype())),
                                                           zeros(sb, dtype(g[0].dtype()))};
                              });
    return out;
  }
  autograd::record_function("DivBackward0", {a, b}, {out}, {a, b},
                            [](const std::vector<Tensor>& g, const std::vector<Tensor>& s) {
                              const Tensor& a = s[0];
                              const Tensor& b = s[1];
                              return std::vector<Tensor>{sum_to(g[0] / b, a.sizes()),
                                                         sum_to(-g[0] * a / (b * b), b.sizes())};
                            });
  return out;
}

Tensor pow(const Tensor& a0, const Tensor& b0) {
  WEFT_TRACE_OP(Pow, (a0, b0), ir::Attributes(), pow(a0, b0));
  Dtype type = kernels::result_type({&a0, &b0});
  if (type == Dtype::Bool) type = Dtype::Int64;
  const Tensor a = a0.to(type), b = b0.to(type);
  Tensor out = kernels::dispatch_numeric(type, "pow", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      return kernels::map_binary<T, T>(a, b, type, [](T x, T y) -> T {
        if (y < 0 && x != 1 && x != -1) {
          throw Error("Integers to negative integer powers are not allowed.");
        }
        return integer_pow(x, y);
      });
    } else {
      return kernels::map_binary<T, T>(a, b, type, [](T x, T y) -> T {
        if (y == T(2)) return x * x;
        return std::pow(x, y);
      });
    }
  });
  autograd::record_function(
      "PowBackward1", {a, b}, {out}, {a, b, out},
      [](const std::vector<Tensor>& g, const std::vector<Tensor>& s) {
        const Tensor& a = s[0];
        const Tensor& b = s[1];
        const Tensor& out = s[2];
        // d/da a^b = b a^(b-1) (0 where b == 0, as PyTorch); d/db a^b = a^b log a (0 where a == 0
        // and b >= 0). As in PyTorch, the base's zeros are selected after multiplying by the
        // incoming gradient (an infinite one gives 0 there), the exponent's before (inf * 0).
        const Tensor zero = zeros_like(g[0]);
        Tensor ga = where(eq(b, wrapped_scalar(0.0)), zero, g[0] * (b * pow(a, b - 1.0)));
        Tensor gb =
            g[0] * where(logical_and(eq(a, wrapped_scalar(0.0)), ge(b, wrapped_scalar(0.0))),
                         zeros_like(a), out * log(a));
        return std::vector<Tensor>{sum_to(ga, a.sizes()), sum_to(gb, b.sizes())};
      });
  return out;
}

Tensor pow(const Tensor& a, double exponent) {
  return pow(a, wrapped_scalar(exponent));
}

namespace {
// maximum/minimum propagate NaN; ties split the gradient evenly, as PyTorch.
Tensor extremum(const Tensor& a0, const Tensor& b0, bool take_max) {
  const Dtype type = kernels::result_type({&a0, &b0});
  const Tensor a = a0.to(type), b = b0.to(type);
  Tensor out = kernels::dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return kernels::map_binary<T, T>(a, b, type, [take_max](T x, T y) -> T {
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
      }
      return take_max ? (x > y ? x : y) : (x < y ? x : y);
    });
  });
  autograd::record_function(
      take_max ? "MaximumBackward0" : "MinimumBackward0", {a, b}, {out}, {a, b},
      [take_max](const std::vector<Tensor>& g, const std::vector<Tensor>& s) {
        const Tensor& a = s[0];
        const Tensor& b = s[1];
        const Tensor a_wins = take_max ? gt(a, b) : lt(a, b);
        const Tensor tie = eq(a, b);
        const Tensor half = g[0] * 0.5;
        const Tensor zero = zeros_like(g[0]);
        Tensor ga = where(tie, half, where(a_wins, g[0], zero));
        Tensor gb = where(tie, half, where(a_wins, zero, g[0]));
        return std::vector<Tensor>{sum_to(ga, a.sizes()), sum_to(gb, b.sizes())};
      });
  return out;
}
}  // namespace

Tensor maximum(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(Maximum, (a, b), ir::Attributes(), maximum(a, b));
  return extremum(a, b, true);
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(Minimum, (a, b), ir::Attributes(), minimum(a, b));
  return extremum(a, b, false);
}

Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
Tensor operator-(const Tensor& a, const Tensor& b) {
  return sub(a, b);
}
Tensor operator*(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
Tensor operator/(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
Tensor operator-(const Tensor& a) {
  return neg(a);
}
Tensor operator+(const Tensor& a, double b) {
  return add(a, wrapped_scalar(b));
}
Tensor operator-(const Tensor& a, double b) {
  return sub(a, wrapped_scalar(b));
}
Tensor operator*(const Tensor& a, double b) {
  return mul(a, wrapped_scalar(b));
}
Tensor operator/(const Tensor& a, double b) {
  return div(a, wrapped_scalar(b));
}
Tensor operator+(double a, const Tensor& b) {
  return add(wrapped_scalar(a), b);
}
Tensor operator-(double a, const Tensor& b) {
  return sub(wrapped_scalar(a), b);
}
Tensor operator*(double a, const Tensor& b) {
  return mul(wrapped_scalar(a), b);
}
Tensor operator/(double a, const Tensor& b) {
  return div(wrapped_scalar(a), b);
}

}  // namespace weft
