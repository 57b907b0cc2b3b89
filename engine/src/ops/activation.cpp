// Activation functions: forward as a scalar function, derivative beside it. PyTorch's
// conventions at kinks: relu'(0) = 0, leaky_relu'(0) = slope, hardtanh' = 0 at its bounds,
// clamp' = 1 at its bounds; NaN propagates through every forward.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kernels/dispatch.h"
#include "kernels/elementwise.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace {
using Grads = std::vector<Tensor>;
using Saved = std::vector<Tensor>;

// Elementwise derivative mask/scale computed from x (no gradient of its own).
template <typename F>
Tensor derivative(const Tensor& x, F f) {
  autograd::NoGradGuard guard;
  return kernels::map_floating(x, "derivative", f);
}

// The incoming gradient where `inside` holds for x, zero elsewhere. PyTorch selects for its 0/1
// derivatives (clamp, hardtanh) instead of multiplying by a mask, so an infinite or NaN incoming
// gradient stays out of the elements the op cut off, where inf * 0 would give NaN.
template <typename P>
Tensor pass_where(const Tensor& grad, const Tensor& x, P inside) {
  const Tensor mask = derivative(x, [inside](auto v) {
    using T = decltype(v);
    return inside(v) ? T(1) : T(0);
  });
  return where(gt(mask, wrapped_scalar(0.0)), grad, zeros_like(grad));
}

constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
}  // namespace

Tensor sigmoid(const Tensor& x0) {
  WEFT_TRACE_OP(Sigmoid, (x0), ir::Attributes(), sigmoid(x0));
  const Tensor x = x0.to(kernels::floating_result(x0.dtype()));
  Tensor out = kernels::map_floating(x, "sigmoid", [](auto v) {
    using T = decltype(v);
    return T(1) / (T(1) + std::exp(-v));
  });
  autograd::record_function(
      "SigmoidBackward0", {x}, {out}, {out},
      [](const Grads& g, const Saved& s) { return Grads{g[0] * s[0] * (1.0 - s[0])}; });
  return out;
}

Tensor relu(const Tensor& x) {
  WEFT_TRACE_OP(Relu, (x), ir::Attributes(), relu(x));
  if (x.dtype() == Dtype::Bool) throw Error("\"relu\" not implemented for 'bool'");
  Tensor out = kernels::dispatch(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return kernels::map_unary<T, T>(x, x.dtype(),
                                    [](T v) { return v > T(0) || v != v ? v : T(0); });
  });
  autograd::record_function("ReluBackward0", {x}, {out}, {out}, [](const Grads& g, const Saved& s) {
    if (autograd::grad_enabled() || g[0].dtype() != s[0].dtype()) {
      // Recording a double backward: stay with differentiable ops.
      return Grads{where(gt(s[0], wrapped_scalar(0.0)), g[0], zeros_like(g[0]))};
    }
    // One pass instead of a comparison, a zeros tensor and a select.
    return Grads{kernels::dispatch_floating(g[0].dtype(), "relu_backward", [&](auto tag) {
      using T = typename decltype(tag)::type;
      return kernels::map_binary<T, T>(g[0], s[0], g[0].dtype(),
                                       [](T grad, T y) { return y > T(0) ? grad : T(0); });
    })};
  });
  return out;
}

Tensor leaky_relu(const Tensor& x, double slope) {
  WEFT_TRACE_OP(LeakyRelu, (x), ir::Attributes().set("negative_slope", slope),
                leaky_relu(x, slope));
  Tensor out = kernels::map_floating(x, "leaky_relu", [slope](auto v) {
    using T = decltype(v);
    return v > T(0) ? v : v * T(slope);
  });
  autograd::record_function("LeakyReluBackward0", {x}, {out}, {x},
                            [slope](const Grads& g, const Saved& s) {
                              return Grads{g[0] * derivative(s[0], [slope](auto v) {
                                             using T = decltype(v);
                                             return v > T(0) ? T(1) : T(slope);
                                           })};
                            });
  return out;
}

Tensor elu(const Tensor& x, double alpha) {
  WEFT_TRACE_OP(Elu, (x), ir::Attributes().set("alpha", alpha), elu(x, alpha));
  Tensor out = kernels::map_floating(x, "elu", [alpha](auto v) {
    using T = decltype(v);
    return v > T(0) ? v : T(alpha) * std::expm1(v);
  });
  autograd::record_function("EluBackward0", {x}, {out}, {x},
                            [alpha](const Grads& g, const Saved& s) {
                              return Grads{g[0] * derivative(s[0], [alpha](auto v) {
                                             using T = decltype(v);
                                             return v > T(0) ? T(1) : T(alpha) * std::exp(v);
                                           })};
                            });
  return out;
}

Tensor gelu(const Tensor& x, std::string_view approximate) {
  WEFT_TRACE_OP(Gelu, (x), ir::Attributes().set("approximate", std::string(approximate)),
                gelu(x, approximate));
  if (approximate != "none" && approximate != "tanh") {
    throw Error("approximate argument must be either none or tanh, got '" +
                std::string(approximate) + "'");
  }
  const bool use_tanh = approximate == "tanh";
  Tensor out = kernels::map_floating(x, "gelu", [use_tanh](auto v) {
    using T = decltype(v);
    if (use_tanh) {
      const T inner = T(kSqrt2OverPi) * (v + T(0.044715) * v * v * v);
      return T(0.5) * v * (T(1) + std::tanh(inner));
    }
    return T(0.5) * v * (T(1) + std::erf(v / T(kSqrt2)));
  });
  autograd::record_function(
      "GeluBackward0", {x}, {out}, {x}, [use_tanh](const Grads& g, const Saved& s) {
        return Grads{g[0] * derivative(s[0], [use_tanh](auto v) {
                       using T = decltype(v);
                       if (use_tanh) {
                         const T inner = T(kSqrt2OverPi) * (v + T(0.044715) * v * v * v);
                         const T t = std::tanh(inner);
                         const T d_inner = T(kSqrt2OverPi) * (T(1) + T(3 * 0.044715) * v * v);
                         return T(0.5) * (T(1) + t) + T(0.5) * v * (T(1) - t * t) * d_inner;
                       }
                       const T cdf = T(0.5) * (T(1) + std::erf(v / T(kSqrt2)));
                       const T pdf = T(kInvSqrt2Pi) * std::exp(T(-0.5) * v * v);
                       return cdf + v * pdf;
                     })};
      });
  return out;
}

Tensor silu(const Tensor& x) {
  WEFT_TRACE_OP(Silu, (x), ir::Attributes(), silu(x));
  Tensor out = kernels::map_floating(x, "silu", [](auto v) {
    using T = decltype(v);
    return v / (T(1) + std::exp(-v));
  });
  autograd::record_function("SiluBackward0", {x}, {out}, {x}, [](const Grads& g, const Saved& s) {
    return Grads{g[0] * derivative(s[0], [](auto v) {
                   using T = decltype(v);
                   const T sig = T(1) / (T(1) + std::exp(-v));
                   return sig * (T(1) + v * (T(1) - sig));
                 })};
  });
  return out;
}

Tensor softplus(const Tensor& x, double beta, double threshold) {
  WEFT_TRACE_OP(Softplus, (x), ir::Attributes().set("beta", beta).set("threshold", threshold),
                softplus(x, beta, threshold));
  Tensor out = kernels::map_floating(x, "softplus", [beta, threshold](auto v) {
    using T = decltype(v);
    return v * T(beta) > T(threshold) ? v : std::log1p(std::exp(v * T(beta))) / T(beta);
  });
  autograd::record_function("SoftplusBackward0", {x}, {out}, {x},
                            [beta, threshold](const Grads& g, const Saved& s) {
                              return Grads{g[0] * derivative(s[0], [beta, threshold](auto v) {
                                             using T = decltype(v);
                                             if (v * T(beta) > T(threshold)) return T(1);
                                             const T z = std::exp(v * T(beta));
                                             return z / (z + T(1));
                                           })};
                            });
  return out;
}

Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  WEFT_TRACE_OP(Hardtanh, (x), ir::Attributes().set("min_val", min_val).set("max_val", max_val),
                hardtanh(x, min_val, max_val));
  if (min_val > max_val) throw Error("hardtanh: min_val cannot be greater than max_val");
  Tensor out = kernels::map_floating(x, "hardtanh", [min_val, max_val](auto v) {
    using T = decltype(v);
    return v != v ? v : std::min(std::max(v, T(min_val)), T(max_val));
  });
  autograd::record_function("HardtanhBackward0", {x}, {out}, {x},
                            [min_val, max_val](const Grads& g, const Saved& s) {
                              return Grads{pass_where(g[0], s[0], [min_val, max_val](auto v) {
                                using T = decltype(v);
                                return !(v <= T(min_val) || v >= T(max_val));
                              })};
                            });
  return out;
}

Tensor clamp(const Tensor& x0, std::optional<double> min, std::optional<double> max) {
  WEFT_TRACE_OP(Clamp, (x0), ops_detail::clamp_attributes(min, max), clamp(x0, min, max));
  if (!min && !max) throw Error("torch.clamp: At least one of 'min' or 'max' must not be None");
  const Tensor lo = wrapped_scalar(min.value_or(0.0)), hi = wrapped_scalar(max.value_or(0.0));
  Dtype type = x0.dtype();
  if (min) type = kernels::result_type({&x0, &lo});
  if (max) {
    type = promote_types(type, kernels::result_type({&x0, &hi}));
  }
  if (type == Dtype::Bool) throw Error("\"clamp\" not implemented for 'bool'");
  const Tensor x = x0.to(type);
  Tensor out = kernels::dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T low = min ? static_cast<T>(*min) : std::numeric_limits<T>::lowest();
    const T high = max ? static_cast<T>(*max) : std::numeric_limits<T>::max();
    // min(max(x, low), high): when low > high every element becomes high, as in PyTorch.
    return kernels::map_unary<T, T>(x, type, [low, high](T v) {
      if (v != v) return v;
      const T raised = v < low ? low : v;
      return raised > high ? high : raised;
    });
  });
  autograd::record_function("ClampBackward1", {x}, {out}, {x},
                            [min, max](const Grads& g, const Saved& s) {
                              return Grads{pass_where(g[0], s[0], [min, max](auto v) {
                                using T = decltype(v);
                                return (!min || v >= T(*min)) && (!max || v <= T(*max));
                              })};
                            });
  return out;
}

// ---- piecewise activations: PyTorch's derivative on each kink is the one written below ----

Tensor hardswish(const Tensor& x) {
  WEFT_TRACE_OP(Hardswish, (x), ir::Attributes(), hardswish(x));
  Tensor out = kernels::map_floating(x, "hardswish", [](auto v) {
    using T = decltype(v);
    return v * std::min(std::max(v + T(3), T(0)), T(6)) / T(6);
  });
  // Below -3 PyTorch selects a zero (an infinite incoming gradient gives 0, not NaN).
  autograd::record_function(
      "HardswishBackward0", {x}, {out}, {x}, [](const Grads& g, const Saved& s) {
        const Tensor kept = pass_where(g[0], s[0], [](auto v) { return !(v < decltype(v)(-3)); });
        return Grads{kept * derivative(s[0], [](auto v) {
                       using T = decltype(v);
                       if (v < T(-3)) return T(0);
                       return v <= T(3) ? v / T(3) + T(0.5) : T(1);
                     })};
      });
  return out;
}

Tensor hardsigmoid(const Tensor& x) {
  WEFT_TRACE_OP(Hardsigmoid, (x), ir::Attributes(), hardsigmoid(x));
  Tensor out = kernels::map_floating(x, "hardsigmoid", [](auto v) {
    using T = decltype(v);
    return std::min(std::max(v + T(3), T(0)), T(6)) / T(6);
  });
  autograd::record_function("HardsigmoidBackward0", {x}, {out}, {x},
                            [](const Grads& g, const Saved& s) {
                              const Tensor inside = pass_where(g[0], s[0], [](auto v) {
                                using T = decltype(v);
                                return v > T(-3) && v < T(3);
                              });
                              // PyTorch multiplies by float(1/6) (`1.0f / 6.0f`) in every dtype,
                              // float64 too.
                              return Grads{inside * static_cast<double>(1.0f / 6.0f)};
                            });
  return out;
}

// torch.nn.functional.relu6 is hardtanh(x, 0, 6), its gradient 0 on both bounds.
Tensor relu6(const Tensor& x) {
  WEFT_TRACE_OP(Relu6, (x), ir::Attributes(), relu6(x));
  Tensor out = kernels::map_floating(x, "relu6", [](auto v) {
    using T = decltype(v);
    return v != v ? v : std::min(std::max(v, T(0)), T(6));
  });
  autograd::record_function("HardtanhBackward0", {x}, {out}, {x},
                            [](const Grads& g, const Saved& s) {
                              return Grads{pass_where(g[0], s[0], [](auto v) {
                                using T = decltype(v);
                                return !(v <= T(0) || v >= T(6));
                              })};
                            });
  return out;
}

Tensor mish(const Tensor& x) {
  WEFT_TRACE_OP(Mish, (x), ir::Attributes(), mish(x));
  Tensor out = kernels::map_floating(x, "mish",
                                     [](auto v) { return v * std::tanh(std::log1p(std::exp(v))); });
  autograd::record_function("MishBackward0", {x}, {out}, {x}, [](const Grads& g, const Saved& s) {
    return Grads{g[0] * derivative(s[0], [](auto v) {
                   using T = decltype(v);
                   const T sig = T(1) / (T(1) + std::exp(-v));
                   const T t = std::tanh(std::log1p(std::exp(v)));
                   return t + v * sig * (T(1) - t * t);
                 })};
  });
  return out;
}

namespace {
constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
}  // namespace

// scale * elu(x, alpha) with PyTorch's constants; the derivative at 0 is the left one.
Tensor selu(const Tensor& x) {
  WEFT_TRACE_OP(Selu, (x), ir::Attributes(), selu(x));
  Tensor out = kernels::map_floating(x, "selu", [](auto v) {
    using T = decltype(v);
    return v > T(0) ? T(kSeluScale) * v : T(kSeluScale * kSeluAlpha) * std::expm1(v);
  });
  autograd::record_function("EluBackward0", {x}, {out}, {x}, [](const Grads& g, const Saved& s) {
    return Grads{g[0] * derivative(s[0], [](auto v) {
                   using T = decltype(v);
                   return v > T(0) ? T(kSeluScale) : T(kSeluScale * kSeluAlpha) * std::exp(v);
                 })};
  });
  return out;
}

Tensor celu(const Tensor& x, double alpha) {
  WEFT_TRACE_OP(Celu, (x), ir::Attributes().set("alpha", alpha), celu(x, alpha));
  if (alpha == 0.0) throw Error("ZeroDivisionError");
  Tensor out = kernels::map_floating(x, "celu", [alpha](auto v) {
    using T = decltype(v);
    return v > T(0) ? v : T(alpha) * std::expm1(v / T(alpha));
  });
  autograd::record_function("EluBackward0", {x}, {out}, {x},
                            [alpha](const Grads& g, const Saved& s) {
                              return Grads{g[0] * derivative(s[0], [alpha](auto v) {
                                             using T = decltype(v);
                                             return v > T(0) ? T(1) : std::exp(v / T(alpha));
                                           })};
                            });
  return out;
}

// torch.nn.functional.softsign is Python: x / (x.abs() + 1), differentiated through its parts.
Tensor softsign(const Tensor& x) {
  WEFT_TRACE_OP(Softsign, (x), ir::Attributes(), softsign(x));
  Tensor out = kernels::map_floating(x, "softsign", [](auto v) {
    using T = decltype(v);
    return v / (std::abs(v) + T(1));
  });
  autograd::record_function("SoftsignBackward", {x}, {out}, {x},
                            [](const Grads& g, const Saved& s) {
                              return Grads{g[0] * derivative(s[0], [](auto v) {
                                             using T = decltype(v);
                                             const T d = std::abs(v) + T(1);
                                             return T(1) / (d * d);
                                           })};
                            });
  return out;
}

// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), finite for every finite x.
Tensor logsigmoid(const Tensor& x) {
  WEFT_TRACE_OP(Logsigmoid, (x), ir::Attributes(), logsigmoid(x));
  Tensor out = kernels::map_floating(x, "log_sigmoid", [](auto v) {
    using T = decltype(v);
    return std::min(v, T(0)) - std::log1p(std::exp(-std::abs(v)));
  });
  autograd::record_function("LogSigmoidBackward0", {x}, {out}, {x},
                            [](const Grads& g, const Saved& s) {
                              return Grads{g[0] * derivative(s[0], [](auto v) {
                                             using T = decltype(v);
                                             return T(1) / (T(1) + std::exp(v));
                                           })};
                            });
  return out;
}

// torch.nn.functional.tanhshrink is Python: x - x.tanh().
Tensor tanhshrink(const Tensor& x) {
  WEFT_TRACE_OP(Tanhshrink, (x), ir::Attributes(), tanhshrink(x));
  Tensor out = kernels::map_floating(x, "tanhshrink", [](auto v) { return v - std::tanh(v); });
  autograd::record_function("TanhshrinkBackward", {x}, {out}, {x},
                            [](const Grads& g, const Saved& s) {
                              return Grads{g[0] * derivative(s[0], [](auto v) {
                                             const auto t = std::tanh(v);
                                             return t * t;
                                           })};
                            });
  return out;
}

// x where x > threshold, else value: a jump at the threshold unless value == threshold.
Tensor threshold(const Tensor& x, double threshold, double value) {
  WEFT_TRACE_OP(Threshold, (x), ir::Attributes().set("threshold", threshold).set("value", value),
                weft::threshold(x, threshold, value));
  Tensor out = kernels::map_floating(x, "threshold", [threshold, value](auto v) {
    using T = decltype(v);
    return v <= T(threshold) ? T(value) : v;
  });
  autograd::record_function("ThresholdBackward0", {x}, {out}, {x},
                            [threshold](const Grads& g, const Saved& s) {
                              return Grads{pass_where(g[0], s[0], [threshold](auto v) {
                                using T = decltype(v);
                                return !(v <= T(threshold));
                              })};
                            });
  return out;
}

Tensor hardshrink(const Tensor& x, double lambd) {
  WEFT_TRACE_OP(Hardshrink, (x), ir::Attributes().set("lambd", lambd), hardshrink(x, lambd));
  Tensor out = kernels::map_floating(x, "hardshrink", [lambd](auto v) {
    using T = decltype(v);
    return v >= T(-lambd) && v <= T(lambd) ? T(0) : v;
  });
  autograd::record_function("HardshrinkBackward0", {x}, {out}, {x},
                            [lambd](const Grads& g, const Saved& s) {
                              return Grads{pass_where(g[0], s[0], [lambd](auto v) {
                                using T = decltype(v);
                                return !(v >= T(-lambd) && v <= T(lambd));
                              })};
                            });
  return out;
}

Tensor softshrink(const Tensor& x, double lambd) {
  WEFT_TRACE_OP(Softshrink, (x), ir::Attributes().set("lambd", lambd), softshrink(x, lambd));
  if (lambd < 0) {
    throw Error("lambda must be greater or equal to 0, but found to be " + std::to_string(lambd) +
                ".");
  }
  Tensor out = kernels::map_floating(x, "softshrink", [lambd](auto v) {
    using T = decltype(v);
    return v > T(lambd) ? v - T(lambd) : (v < T(-lambd) ? v + T(lambd) : v * T(0));
  });
  autograd::record_function("SoftshrinkBackward0", {x}, {out}, {x},
                            [lambd](const Grads& g, const Saved& s) {
                              return Grads{pass_where(g[0], s[0], [lambd](auto v) {
                                using T = decltype(v);
                                return !(v >= T(-lambd) && v <= T(lambd));
                              })};
                            });
  return out;
}

// glu(x, dim): the first half of x along dim times the sigmoid of the second half.
Tensor glu(const Tensor& x, std::int64_t dim) {
  WEFT_TRACE_OP(Glu, (x), ir::Attributes().set("dim", dim), glu(x, dim));
  if (x.dim() == 0) throw Error("glu does not support scalars because halving size must be even");
  const std::int64_t d = dim < 0 ? dim + x.dim() : dim;
  if (d < 0 || d >= x.dim()) {
    throw Error("Dimension out of range (expected to be in range of [" + std::to_string(-x.dim()) +
                ", " + std::to_string(x.dim() - 1) + "], but got " + std::to_string(dim) + ")");
  }
  if (x.size(d) % 2 != 0) {
    throw Error("Halving dimension must be even, but dimension " + std::to_string(d) + " is size " +
                std::to_string(x.size(d)));
  }
  if (!x.is_floating_point()) {
    throw Error(std::string("\"glu_cpu\" not implemented for '") +
                torch_scalar_type_name(x.dtype()) + "'");
  }
  const std::vector<Tensor> halves = chunk(x, 2, d);
  return halves[0] * sigmoid(halves[1]);
}

// prelu(x, weight): x where x > 0, else weight * x; weight holds one slope, or one per channel
// (dim 1 of x, or the only one of a 1-D x taken as one channel).
Tensor prelu(const Tensor& x, const Tensor& weight) {
  WEFT_TRACE_OP(Prelu, (x, weight), ir::Attributes(), prelu(x, weight));
  if (weight.dim() > 1) {
    throw Error("prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = " +
                std::to_string(weight.dim()));
  }
  const std::int64_t channels = x.dim() >= 2 ? x.size(1) : 1;
  if (weight.numel() != 1 && weight.numel() != channels) {
    throw Error("Mismatch of parameter numbers and input channel size. Found parameter numbers = " +
                std::to_string(weight.numel()) + " and channel size = " + std::to_string(channels) +
                ".");
  }
  Shape slope_shape;  // one slope: a scalar; per channel: [C, 1, ...] against x's dims 1..
  if (weight.numel() != 1) {
    slope_shape.assign(static_cast<std::size_t>(x.dim() - 1), 1);
    slope_shape[0] = channels;
  }
  const Tensor slope = weight.reshape(slope_shape);
  return where(gt(x, zeros_like(x)), x, slope * x);
}

}  // namespace weft
