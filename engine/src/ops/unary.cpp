// Unary math. Each op: the forward as a scalar function mapped over the tensor, and its
// derivative written with engine ops next to it. Integer inputs of real-valued functions
// become float32 (PyTorch's int-to-float promotion); rounding ops have zero gradient.
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "kernels/elementwise.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace {
using Grads = std::vector<Tensor>;
using Saved = std::vector<Tensor>;

// What a real function's backward reads, as in PyTorch's derivatives: its input (sin, log) or
// its result (exp, sqrt, tanh). Only that is saved, so an in-place write into the other one
// is allowed exactly where PyTorch allows it.
enum class Saves { Input, Result };

// A real function of one variable: x → f(x), with backward(grad, x, out) → grad_x (the one
// not saved is undefined).
template <Saves saves = Saves::Input, typename F, typename B>
Tensor real_function(const Tensor& x0, const char* name, const char* node, F f, B backward) {
  const Tensor x = x0.to(kernels::floating_result(x0.dtype()));
  Tensor out = kernels::map_floating(x, name, f);
  constexpr bool by_result = saves == Saves::Result;
  autograd::record_function(
      node, {x}, {out}, {by_result ? out : x}, [backward](const Grads& g, const Saved& s) {
        return Grads{by_result ? backward(g[0], Tensor(), s[0]) : backward(g[0], s[0], Tensor())};
      });
  return out;
}

// Piecewise-constant ops (floor, ceil, round, sign): identity on integers, zero gradient.
template <typename F>
Tensor step_function(const Tensor& x, const char* name, const char* node, F f) {
  if (!x.is_floating_point()) {
    if (x.dtype() == Dtype::Bool && std::string_view(name) == "sign") return x.clone();
    if (x.dtype() == Dtype::Bool) {
      throw Error(std::string("\"") + name + "\" not implemented for 'bool'");
    }
    if (std::string_view(name) != "sign") return x.clone();
    return kernels::dispatch(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      return kernels::map_unary<T, T>(x, x.dtype(), [](T v) { return T((T(0) < v) - (v < T(0))); });
    });
  }
  Tensor out = kernels::map_floating(x, name, f);
  const Shape shape = x.sizes();
  autograd::record_function(node, {x}, {out}, {}, [shape](const Grads& g, const Saved&) {
    return Grads{zeros(shape, dtype(g[0].dtype()))};
  });
  return out;
}

constexpr double kLn2 = 0.69314718055994530942;
constexpr double kLn10 = 2.30258509299404568402;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
constexpr double kHalfSqrtPi = 0.88622692545275801365;
constexpr double kPi = 3.14159265358979323846;

// The inverse error function in double: Giles' approximation ("Approximating the erfinv
// function", 2010) refined by two Newton steps on erf, which leaves it within an ulp or two.
double erfinv_double(double y) {
  if (std::isnan(y) || y < -1.0 || y > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1.0) return std::numeric_limits<double>::infinity();
  if (y == -1.0) return -std::numeric_limits<double>::infinity();
  double w = -std::log((1.0 - y) * (1.0 + y));
  double p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941}) {
      p = c + p * w;
    }
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682}) {
      p = c + p * w;
    }
  }
  double x = p * y;
  for (int step = 0; step < 2; ++step) {
    x -= (std::erf(x) - y) / (kTwoOverSqrtPi * std::exp(-x * x));
  }
  return x;
}

// digamma (psi) in double, with ATen's values at the poles: -inf at +0 and +inf at -0
// (copysign(inf, -x)), NaN at the negative integers. Negative x by reflection through the
// fractional part (tan(pi r) is more accurate than tan(pi x)); x pushed up to 10 by the
// recurrence psi(x) = psi(x + 1) - 1/x, then the asymptotic series in 1/x^2.
double digamma_double(double x) {
  if (x == 0) return std::copysign(std::numeric_limits<double>::infinity(), -x);
  if (x < 0) {
    if (x == std::trunc(x)) return std::numeric_limits<double>::quiet_NaN();
    double whole = 0;
    const double fraction = std::modf(x, &whole);
    return digamma_double(1 - x) - kPi / std::tan(kPi * fraction);
  }
  double result = 0;
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  // psi(x) ~ ln x - 1/(2x) - sum_k B_2k / (2k x^2k), Bernoulli numbers B_2 .. B_14.
  constexpr double kSeries[] = {1.0 / 12,  -1.0 / 120,       1.0 / 252, -1.0 / 240,
                                1.0 / 132, -691.0 / 32760.0, 1.0 / 12};
  const double z = 1 / (x * x);
  double tail = 0;
  double power = z;
  for (double c : kSeries) {
    tail += c * power;
    power *= z;
  }
  return result + std::log(x) - 0.5 / x - tail;
}

// trigamma (psi'), for digamma's gradient: reflection psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x)
// below 1/2, the recurrence psi'(x) = psi'(x + 1) + 1/x^2 up to 10, then the asymptotic series.
double trigamma_double(double x) {
  double result = 0;
  double sign = 1;
  if (x < 0.5) {
    const double s = std::sin(kPi * x);
    result = kPi * kPi / (s * s);
    sign = -1;
    x = 1 - x;
  }
  double sum = 0;
  while (x < 10) {
    sum += 1 / (x * x);
    x += 1;
  }
  // psi'(x) ~ 1/x + 1/(2x^2) + sum_k B_2k / x^(2k+1), Bernoulli numbers B_2 .. B_12.
  constexpr double kSeries[] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730};
  const double z = 1 / (x * x);
  double power = z / x;
  sum += 1 / x + z / 2;
  for (double c : kSeries) {
    sum += c * power;
    power *= z;
  }
  return result + sign * sum;
}
}  // namespace

Tensor neg(const Tensor& x) {
  WEFT_TRACE_OP(Neg, (x), ir::Attributes(), neg(x));
  Tensor out = kernels::dispatch_numeric(x.dtype(), "neg", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return kernels::map_unary<T, T>(x, x.dtype(),
                                      [](T v) { return static_cast<T>(U(0) - U(v)); });
    } else {
      return kernels::map_unary<T, T>(x, x.dtype(), [](T v) { return -v; });
    }
  });
  autograd::record_function("NegBackward0", {x}, {out}, {},
                            [](const Grads& g, const Saved&) { return Grads{neg(g[0])}; });
  return out;
}

Tensor abs(const Tensor& x) {
  WEFT_TRACE_OP(Abs, (x), ir::Attributes(), abs(x));
  Tensor out = kernels::dispatch(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return x.clone();
    } else if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return kernels::map_unary<T, T>(x, x.dtype(),
                                      [](T v) { return v < 0 ? static_cast<T>(U(0) - U(v)) : v; });
    } else {
      return kernels::map_unary<T, T>(x, x.dtype(), [](T v) { return std::abs(v); });
    }
  });
  autograd::record_function("AbsBackward0", {x}, {out}, {x}, [](const Grads& g, const Saved& s) {
    return Grads{g[0] * sign(s[0])};
  });
  return out;
}

Tensor exp(const Tensor& x) {
  WEFT_TRACE_OP(Exp, (x), ir::Attributes(), exp(x));
  return real_function<Saves::Result>(
      x, "exp", "ExpBackward0", [](auto v) { return std::exp(v); },
      [](const Tensor& g, const Tensor&, const Tensor& out) { return g * out; });
}

Tensor log(const Tensor& x) {
  WEFT_TRACE_OP(Log, (x), ir::Attributes(), log(x));
  return real_function(
      x, "log", "LogBackward0", [](auto v) { return std::log(v); },
      [](const Tensor& g, const Tensor& x, const Tensor&) { return g / x; });
}

Tensor log2(const Tensor& x) {
  WEFT_TRACE_OP(Log2, (x), ir::Attributes(), log2(x));
  return real_function(
      x, "log2", "Log2Backward0", [](auto v) { return std::log2(v); },
      [](const Tensor& g, const Tensor& x, const Tensor&) { return g / (x * kLn2); });
}

Tensor sqrt(const Tensor& x) {
  WEFT_TRACE_OP(Sqrt, (x), ir::Attributes(), sqrt(x));
  return real_function<Saves::Result>(
      x, "sqrt", "SqrtBackward0", [](auto v) { return std::sqrt(v); },
      [](const Tensor& g, const Tensor&, const Tensor& out) { return g / (out * 2.0); });
}

Tensor rsqrt(const Tensor& x) {
  WEFT_TRACE_OP(Rsqrt, (x), ir::Attributes(), rsqrt(x));
  return real_function<Saves::Result>(
      x, "rsqrt", "RsqrtBackward0", [](auto v) { return decltype(v)(1) / std::sqrt(v); },
      [](const Tensor& g, const Tensor&, const Tensor& out) { return g * out * out * out * -0.5; });
}

Tensor reciprocal(const Tensor& x) {
  WEFT_TRACE_OP(Reciprocal, (x), ir::Attributes(), reciprocal(x));
  return real_function<Saves::Result>(
      x, "reciprocal", "ReciprocalBackward0", [](auto v) { return decltype(v)(1) / v; },
      [](const Tensor& g, const Tensor&, const Tensor& out) { return -g * out * out; });
}

Tensor sin(const Tensor& x) {
  WEFT_TRACE_OP(Sin, (x), ir::Attributes(), sin(x));
  return real_function(
      x, "sin", "SinBackward0", [](auto v) { return std::sin(v); },
      [](const Tensor& g, const Tensor& x, const Tensor&) { return g * cos(x); });
}

Tensor cos(const Tensor& x) {
  WEFT_TRACE_OP(Cos, (x), ir::Attributes(), cos(x));
  return real_function(
      x, "cos", "CosBackward0", [](auto v) { return std::cos(v); },
      [](const Tensor& g, const Tensor& x, const Tensor&) { return -g * sin(x); });
}

Tensor tan(const Tensor& x) {
  WEFT_TRACE_OP(Tan, (x), ir::Attributes(), tan(x));
  return real_function<Saves::Result>(
      x, "tan", "TanBackward0", [](auto v) { return std::tan(v); },
      [](const Tensor& g, const Tensor&, const Tensor& out) { return g * (out * out + 1.0); });
}

Tensor asin(const Tensor& x) {
  WEFT_TRACE_OP(Asin, (x), ir::Attributes(), asin(x));
  return real_function(
      x, "asin", "AsinBackward0", [](auto v) { return std::asin(v); },
      [](const Tensor& g, const Tensor& x, const Tensor&) { return g * rsqrt(1.0 - x * x); });
}

Tensor acos(const Tensor& x) {
  WEFT_TRACE_OP(Acos, (x), ir::Attributes(), acos(x));
  return real_function(
      x, "acos", "AcosBackward0", [](auto v) { return std::acos(v); },
      [](const Tensor& g, const Tensor& x, const Tensor&) { return -g * rsqrt(1.0 - x * x); });
}

Tensor atan(const Tensor& x) {
  WEFT_TRACE_OP(Atan, (x), ir::Attributes(), atan(x));
  return real_function(
      x, "atan", "AtanBackward0", [](auto v) { return std::atan(v); },
      [](const Tensor& g, const Tensor& x, const Tensor&) { return g / (x * x + 1.0); });
}

Tensor sinh(const Tensor& x) {
  WEFT_TRACE_OP(Sinh, (x), ir::Attributes(), sinh(x));
  return real_function(
      x, "sinh", "SinhBackward0", [](auto v) { return std::sinh(v); },
      [](const Tensor& g, const Tensor& x, const Tensor&) { return g * cosh(x); });
}

Tensor cosh(const Tensor& x) {
  WEFT_TRACE_OP(Cosh, (x), ir::Attributes(), cosh(x));
  return real_function(
      x, "cosh", "CoshBackward0", [](auto v) { return std::cosh(v); },
      [](const Tensor& g, const Tensor& x, const Tensor&) { return g * sinh(x); });
}

Tensor tanh(const Tensor& x) {
  WEFT_TRACE_OP(Tanh, (x), ir::Attributes(), tanh(x));
  return real_function<Saves::Result>(
      x, "tanh", "TanhBackward0", [](auto v) { return std::tanh(v); },
      [](const Tensor& g, const Tensor&, const Tensor& out) { return g * (1.0 - out * out); });
}

Tensor erf(const Tensor& x) {
  WEFT_TRACE_OP(Erf, (x), ir::Attributes(), erf(x));
  return real_function(
      x, "erf", "ErfBackward0", [](auto v) { return std::erf(v); },
      [](const Tensor& g, const Tensor& x, const Tensor&) {
        return g * exp(-(x * x)) * kTwoOverSqrtPi;
      });
}

Tensor floor(const Tensor& x) {
  WEFT_TRACE_OP(Floor, (x), ir::Attributes(), floor(x));
  return step_function(x, "floor", "FloorBackward0", [](auto v) { return std::floor(v); });
}

Tensor ceil(const Tensor& x) {
  WEFT_TRACE_OP(Ceil, (x), ir::Attributes(), ceil(x));
  return step_function(x, "ceil", "CeilBackward0", [](auto v) { return std::ceil(v); });
}

Tensor round(const Tensor& x) {
  WEFT_TRACE_OP(Round, (x), ir::Attributes(), round(x));
  // nearbyint in the default rounding mode rounds half to even, like torch.round.
  return step_function(x, "round", "RoundBackward0", [](auto v) { return std::nearbyint(v); });
}

Tensor sign(const Tensor& x) {
  WEFT_TRACE_OP(Sign, (x), ir::Attributes(), sign(x));
  return step_function(x, "sign", "SignBackward0", [](auto v) {
    using T = decltype(v);
    return std::isnan(v) ? v : T((T(0) < v) - (v < T(0)));
  });
}

Tensor trunc(const Tensor& x) {
  WEFT_TRACE_OP(Trunc, (x), ir::Attributes(), trunc(x));
  return step_function(x, "trunc", "TruncBackward0", [](auto v) { return std::trunc(v); });
}

// x - trunc(x): a jump at every integer, and the identity's gradient between them.
Tensor frac(const Tensor& x) {
  WEFT_TRACE_OP(Frac, (x), ir::Attributes(), frac(x));
  if (!x.is_floating_point()) {
    throw Error(std::string("\"frac_cpu\" not implemented for '") + dtype_name(x.dtype()) + "'");
  }
  Tensor out = kernels::map_floating(x, "frac", [](auto v) { return v - std::trunc(v); });
  autograd::record_function("FracBackward0", {x}, {out}, {},
                            [](const Grads& g, const Saved&) { return Grads{g[0]}; });
  return out;
}

Tensor log1p(const Tensor& x) {
  WEFT_TRACE_OP(Log1p, (x), ir::Attributes(), log1p(x));
  return real_function(
      x, "log1p", "Log1PBackward0", [](auto v) { return std::log1p(v); },
      [](const Tensor& g, const Tensor& x, const Tensor&) { return g / (x + 1.0); });
}

Tensor expm1(const Tensor& x) {
  WEFT_TRACE_OP(Expm1, (x), ir::Attributes(), expm1(x));
  return real_function<Saves::Result>(
      x, "expm1", "Expm1Backward0", [](auto v) { return std::expm1(v); },
      [](const Tensor& g, const Tensor&, const Tensor& out) { return g * (out + 1.0); });
}

Tensor log10(const Tensor& x) {
  WEFT_TRACE_OP(Log10, (x), ir::Attributes(), log10(x));
  return real_function(
      x, "log10", "Log10Backward0", [](auto v) { return std::log10(v); },
      [](const Tensor& g, const Tensor& x, const Tensor&) { return g / (x * kLn10); });
}

Tensor exp2(const Tensor& x) {
  WEFT_TRACE_OP(Exp2, (x), ir::Attributes(), exp2(x));
  return real_function<Saves::Result>(
      x, "exp2", "Exp2Backward0", [](auto v) { return std::exp2(v); },
      [](const Tensor& g, const Tensor&, const Tensor& out) { return g * (out * kLn2); });
}

Tensor asinh(const Tensor& x) {
  WEFT_TRACE_OP(Asinh, (x), ir::Attributes(), asinh(x));
  return real_function(
      x, "asinh", "AsinhBackward0", [](auto v) { return std::asinh(v); },
      [](const Tensor& g, const Tensor& x, const Tensor&) { return g * rsqrt(x * x + 1.0); });
}

Tensor acosh(const Tensor& x) {
  WEFT_TRACE_OP(Acosh, (x), ir::Attributes(), acosh(x));
  return real_function(
      x, "acosh", "AcoshBackward0", [](auto v) { return std::acosh(v); },
      [](const Tensor& g, const Tensor& x, const Tensor&) { return g * rsqrt(x * x - 1.0); });
}

Tensor atanh(const Tensor& x) {
  WEFT_TRACE_OP(Atanh, (x), ir::Attributes(), atanh(x));
  return real_function(
      x, "atanh", "AtanhBackward0", [](auto v) { return std::atanh(v); },
      [](const Tensor& g, const Tensor& x, const Tensor&) { return g / (1.0 - x * x); });
}

Tensor erfinv(const Tensor& x) {
  WEFT_TRACE_OP(Erfinv, (x), ir::Attributes(), erfinv(x));
  return real_function<Saves::Result>(
      x, "erfinv", "ErfinvBackward0",
      [](auto v) { return static_cast<decltype(v)>(erfinv_double(static_cast<double>(v))); },
      [](const Tensor& g, const Tensor&, const Tensor& out) {
        return g * exp(out * out) * kHalfSqrtPi;
      });
}

namespace {
// A bool test of each element; integers and bools are never NaN or infinite.
template <typename P>
Tensor classify(const Tensor& x, const char* name, P test) {
  if (!x.is_floating_point()) return zeros(x.sizes(), dtype(Dtype::Bool));
  return kernels::dispatch_floating(x.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return kernels::map_unary<bool, T>(x, Dtype::Bool, [test](T v) { return test(v); });
  });
}
}  // namespace

Tensor isnan(const Tensor& x) {
  WEFT_TRACE_OP(Isnan, (x), ir::Attributes(), isnan(x));
  return classify(x, "isnan", [](auto v) { return std::isnan(v); });
}

Tensor isinf(const Tensor& x) {
  WEFT_TRACE_OP(Isinf, (x), ir::Attributes(), isinf(x));
  return classify(x, "isinf", [](auto v) { return std::isinf(v); });
}

Tensor isfinite(const Tensor& x) {
  WEFT_TRACE_OP(Isfinite, (x), ir::Attributes(), isfinite(x));
  if (!x.is_floating_point()) return ones(x.sizes(), dtype(Dtype::Bool));
  return classify(x, "isfinite", [](auto v) { return std::isfinite(v); });
}

Tensor signbit(const Tensor& x) {
  WEFT_TRACE_OP(Signbit, (x), ir::Attributes(), signbit(x));
  if (x.dtype() == Dtype::Bool) return zeros(x.sizes(), dtype(Dtype::Bool));
  return kernels::dispatch_numeric(x.dtype(), "signbit", [&](auto tag) {
    using T = typename decltype(tag)::type;
    return kernels::map_unary<bool, T>(x, Dtype::Bool, [](T v) {
      if constexpr (std::is_floating_point_v<T>) {
        return std::signbit(v);  // -0.0 and a negative NaN count
      } else {
        return v < 0;
      }
    });
  });
}

// x * x (PyTorch's pow(x, 2)): an integer keeps its dtype, a bool becomes int64.
Tensor square(const Tensor& x) {
  WEFT_TRACE_OP(Square, (x), ir::Attributes(), square(x));
  const Tensor v = x.dtype() == Dtype::Bool ? x.to(Dtype::Int64) : x;
  return mul(v, v);
}

Tensor erfc(const Tensor& x) {
  WEFT_TRACE_OP(Erfc, (x), ir::Attributes(), erfc(x));
  return real_function(
      x, "erfc", "ErfcBackward0", [](auto v) { return std::erfc(v); },
      [](const Tensor& g, const Tensor& x, const Tensor&) {
        return g * exp(-(x * x)) * -kTwoOverSqrtPi;
      });
}

// sin(pi x) / (pi x) with pi x rounded in x's type first, as ATen's kernel computes it.
Tensor sinc(const Tensor& x) {
  WEFT_TRACE_OP(Sinc, (x), ir::Attributes(), sinc(x));
  return real_function(
      x, "sinc", "SincBackward0",
      [](auto v) {
        using T = decltype(v);
        if (v == T(0)) return T(1);
        const T product = static_cast<T>(kPi) * v;
        return std::sin(product) / product;
      },
      [](const Tensor& g, const Tensor& x, const Tensor&) {
        // g (pi x cos(pi x) - sin(pi x)) / (pi x^2), and 0 where pi x^2 is 0 whatever g is
        // (an infinite g too), as PyTorch's sinc_backward.
        const Tensor product = x * kPi;
        const Tensor squared = x * x * kPi;
        const Tensor out = g * (product * cos(product) - sin(product)) / squared;
        return where(eq(squared, wrapped_scalar(0.0)), zeros_like(out), out);
      });
}

Tensor deg2rad(const Tensor& x) {
  WEFT_TRACE_OP(Deg2rad, (x), ir::Attributes(), deg2rad(x));
  return real_function(
      x, "deg2rad", "MulBackward1",
      [](auto v) { return v * static_cast<decltype(v)>(kPi / 180.0); },
      [](const Tensor& g, const Tensor&, const Tensor&) { return g * (kPi / 180.0); });
}

Tensor rad2deg(const Tensor& x) {
  WEFT_TRACE_OP(Rad2deg, (x), ir::Attributes(), rad2deg(x));
  return real_function(
      x, "rad2deg", "MulBackward1",
      [](auto v) { return v * static_cast<decltype(v)>(180.0 / kPi); },
      [](const Tensor& g, const Tensor&, const Tensor&) { return g * (180.0 / kPi); });
}

// log(z / (1 - z)) with z = x clamped to [eps, 1 - eps] when eps is given. Backward: PyTorch's
// infinitely differentiable form: g / (x (1 - x)) inside [eps, 1 - eps] (inside [0, 1] without
// eps), 0 outside it with eps, NaN outside it without.
Tensor logit(const Tensor& x0, std::optional<double> eps) {
  WEFT_TRACE_OP(Logit, (x0), eps ? ir::Attributes().set("eps", *eps) : ir::Attributes(),
                logit(x0, eps));
  const Tensor x = x0.to(kernels::floating_result(x0.dtype()));
  const double lo = eps ? *eps : -1.0;  // ATen's "no eps" is a negative one
  Tensor out = kernels::map_floating(x, "logit", [lo](auto v) {
    using T = decltype(v);
    if (lo >= 0) v = v < T(lo) ? T(lo) : (v > T(1 - lo) ? T(1 - lo) : v);
    return static_cast<T>(std::log(v / (T(1) - v)));
  });
  autograd::record_function(
      "LogitBackward0", {x}, {out}, {x}, [eps](const Grads& g, const Saved& s) {
        const Tensor& v = s[0];
        const double lo = eps ? *eps : 0.0;
        const Tensor inside = logical_and(ge(v, full_like(v, lo)), le(v, full_like(v, 1.0 - lo)));
        const Tensor outside = full_like(v, eps ? 0.0 : std::numeric_limits<double>::quiet_NaN());
        return Grads{where(inside, g[0] / (v * (1.0 - v)), outside)};
      });
  return out;
}

// lgamma's gradient is digamma; digamma's is trigamma (polygamma(1, x)), computed where
// PyTorch computes it, including its poles.
Tensor lgamma(const Tensor& x) {
  WEFT_TRACE_OP(Lgamma, (x), ir::Attributes(), lgamma(x));
  return real_function(
      x, "lgamma", "LgammaBackward0", [](auto v) { return std::lgamma(v); },
      [](const Tensor& g, const Tensor& x, const Tensor&) { return g * digamma(x); });
}

Tensor digamma(const Tensor& x) {
  WEFT_TRACE_OP(Digamma, (x), ir::Attributes(), digamma(x));
  return real_function(
      x, "digamma", "DigammaBackward0",
      [](auto v) { return static_cast<decltype(v)>(digamma_double(static_cast<double>(v))); },
      [](const Tensor& g, const Tensor& x, const Tensor&) {
        return g * kernels::map_floating(x, "polygamma", [](auto v) {
                 return static_cast<decltype(v)>(trigamma_double(static_cast<double>(v)));
               });
      });
}

// NaN, +inf and -inf replaced by `nan` (0), `posinf` and `neginf` (the dtype's largest and
// lowest finite values when absent). Integers and bool are returned as they are (a copy).
// The gradient passes where x is finite.
Tensor nan_to_num(const Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  ir::Attributes attrs;
  if (nan) attrs.set("nan", *nan);
  if (posinf) attrs.set("posinf", *posinf);
  if (neginf) attrs.set("neginf", *neginf);
  WEFT_TRACE_OP(NanToNum, (x), attrs, nan_to_num(x, nan, posinf, neginf));
  if (!x.is_floating_point()) return x.clone();
  const double big = dtype_max(x.dtype());
  const double on_nan = nan.value_or(0.0), on_pos = posinf.value_or(big);
  const double on_neg = neginf.value_or(-big);
  Tensor out = kernels::map_floating(x, "nan_to_num", [on_nan, on_pos, on_neg](auto v) {
    using T = decltype(v);
    if (std::isnan(v)) return static_cast<T>(on_nan);
    if (std::isinf(v)) return static_cast<T>(v > 0 ? on_pos : on_neg);
    return v;
  });
  autograd::record_function(
      "NanToNumBackward0", {x}, {out}, {x}, [](const Grads& g, const Saved& s) {
        return Grads{g[0] * isfinite(s[0])};  // an infinite g gives NaN there, as PyTorch's
      });
  return out;
}

}  // namespace weft
