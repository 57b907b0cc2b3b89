// Scans along one dim: cumsum, cumprod, logcumsumexp, cummax and cummin. The contiguous input
// is seen as [outer, size, inner] and every (outer, inner) line is scanned in order,
// accumulating in the result's type as PyTorch's CPU kernels do. Integers and bool sum and
// multiply to int64 (wrapping on overflow). cumsum's gradient is the reversed cumsum of the
// incoming gradient; cumprod's is exact also where the input holds zeros:
// g_k = sum_{j >= k} g_j * prod_{i <= j, i != k} x_i (0 past the first zero); logcumsumexp's is
// g_k = sum_{j >= k} g_j * exp(x_k - out_j), every factor at most 1 (a NaN g_j left out, as
// PyTorch's log-space form leaves it); cummax's and cummin's go
// to the elements their indices name.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>

#include "kernels/dispatch.h"
#include "kernels/reduce.h"
#include "kernels/wrapping.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/parallel.h"

namespace weft {

namespace {
using Grads = std::vector<Tensor>;
using Saved = std::vector<Tensor>;

Dtype scan_dtype(Dtype in) {
  return is_floating(in) ? in : Dtype::Int64;
}

// out[o, k, i] = acc over j <= k of x[o, j, i], x already in the result's type.
template <bool IsSum>
Tensor scan(const Tensor& x0, std::int64_t dim) {
  const kernels::DimLayout l = kernels::dim_layout(x0, dim, true);
  const Tensor& x = l.input;
  Tensor out = empty(x.sizes(), dtype(x.dtype()));
  if (x.numel() == 0) return out;
  kernels::dispatch(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw Error("scan of bool: the input is int64 by now");
    } else {
      const T* src = x.data<T>();
      T* dst = out.data<T>();
      const std::int64_t size = l.size, inner = l.inner;
      parallel_for(0, l.outer, std::max<std::int64_t>(1, 32768 / (size * inner)),
                   [&](std::int64_t b, std::int64_t e) {
                     for (std::int64_t o = b; o < e; ++o) {
                       const T* in = src + o * size * inner;
                       T* res = dst + o * size * inner;
                       for (std::int64_t i = 0; i < inner; ++i) res[i] = in[i];
                       for (std::int64_t k = 1; k < size; ++k) {
                         for (std::int64_t i = 0; i < inner; ++i) {
                           const T prev = res[(k - 1) * inner + i];
                           const T cur = in[k * inner + i];
                           res[k * inner + i] = IsSum ? kernels::wrapping_add(prev, cur)
                                                      : kernels::wrapping_mul(prev, cur);
                         }
                       }
                     }
                   });
    }
  });
  return out;
}

// The exact gradient of cumprod along `dim` (see the file comment): quadratic in the dim's
// size, which is small in the cases weft generates.
Tensor cumprod_grad(const Tensor& g0, const Tensor& x0, std::int64_t dim) {
  const kernels::DimLayout l = kernels::dim_layout(x0, dim, true);
  const Tensor g = g0.to(x0.dtype()).contiguous();
  const Tensor& x = l.input;
  Tensor out = zeros(x.sizes(), dtype(x.dtype()));
  kernels::dispatch_floating(x.dtype(), "cumprod_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = x.data<T>();
    const T* gp = g.data<T>();
    T* op = out.data<T>();
    const std::int64_t size = l.size, inner = l.inner;
    for (std::int64_t o = 0; o < l.outer; ++o) {
      for (std::int64_t i = 0; i < inner; ++i) {
        const auto at = [&](std::int64_t k) { return (o * size + k) * inner + i; };
        T before = T(1);  // prod_{i < k} x_i
        bool zero_seen = false;
        for (std::int64_t k = 0; k < size; ++k) {
          // Past the line's first zero every product holds it: PyTorch's gradient is 0 there
          // outright (not g * 0, which a non-finite g would make NaN).
          if (zero_seen) break;
          zero_seen = xp[at(k)] == T(0);
          T running = before;  // prod_{i <= j, i != k} x_i, from j = k on
          T acc = T(0);
          for (std::int64_t j = k; j < size; ++j) {
            if (j > k && xp[at(j)] == T(0))
              break;  // this and later terms are 0: PyTorch omits them
            if (j > k) running *= xp[at(j)];
            acc += gp[at(j)] * running;
          }
          op[at(k)] = acc;
          before *= xp[at(k)];
        }
      }
    }
  });
  return out;
}

// The gradient of logcumsumexp (see the file comment), accumulated in double: quadratic in the
// dim's size, like cumprod's.
Tensor logcumsumexp_grad(const Tensor& g0, const Tensor& x0, const Tensor& out0, std::int64_t dim) {
  const kernels::DimLayout l = kernels::dim_layout(x0, dim, true);
  const Tensor g = g0.to(x0.dtype()).contiguous(), out = out0.contiguous();
  const Tensor& x = l.input;
  Tensor grad = zeros(x.sizes(), dtype(x.dtype()));
  kernels::dispatch_floating(x.dtype(), "logcumsumexp_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = x.data<T>();
    const T* gp = g.data<T>();
    const T* op = out.data<T>();
    T* rp = grad.data<T>();
    const std::int64_t size = l.size, inner = l.inner;
    for (std::int64_t o = 0; o < l.outer; ++o) {
      for (std::int64_t i = 0; i < inner; ++i) {
        const auto at = [&](std::int64_t k) { return (o * size + k) * inner + i; };
        for (std::int64_t k = 0; k < size; ++k) {
          double acc = 0;
          for (std::int64_t j = k; j < size; ++j) {
            const auto g = static_cast<double>(gp[at(j)]);
            // PyTorch sums the positive and the negative terms in log space (log|g| where
            // g > 0, and where g < 0): a NaN g is in neither and adds nothing, an infinite one
            // adds its infinity whatever its factor.
            if (std::isnan(g)) continue;
            acc +=
                std::isinf(g)
                    ? g
                    : g * std::exp(static_cast<double>(xp[at(k)]) - static_cast<double>(op[at(j)]));
          }
          rp[at(k)] = static_cast<T>(acc);
        }
      }
    }
  });
  return grad;
}

// log(exp(a) + exp(b)) as ATen's CPU scan computes it: a NaN propagates, and two equal
// infinities stay themselves.
template <typename T>
T log_add_exp(T x, T y) {
  const T low = std::isnan(y) ? y : std::min(x, y);
  const T high = std::isnan(y) ? y : std::max(x, y);
  if (low != high || std::isfinite(low)) return std::log1p(std::exp(low - high)) + high;
  return x;
}

// The running maximum (IsMax) or minimum of every line and where it was last reached; a NaN
// takes over and stays (ATen's cummax_cummin_helper).
template <bool IsMax>
std::tuple<Tensor, Tensor> running_extreme(const Tensor& x, std::int64_t dim) {
  const kernels::DimLayout l = kernels::dim_layout(x, dim, true);
  Tensor values = empty(x.sizes(), dtype(x.dtype()));
  Tensor indices = empty(x.sizes(), dtype(Dtype::Int64));
  kernels::dispatch(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = l.input.data<T>();
    T* vp = values.data<T>();
    std::int64_t* ip = indices.data<std::int64_t>();
    const std::int64_t size = l.size, inner = l.inner;
    const auto is_nan = [](T v) {
      if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
      return false;
    };
    for (std::int64_t o = 0; o < l.outer; ++o) {
      for (std::int64_t i = 0; i < inner; ++i) {
        const auto at = [&](std::int64_t k) { return (o * size + k) * inner + i; };
        if (size == 0) continue;
        T best = src[at(0)];
        std::int64_t where = 0;
        for (std::int64_t k = 0; k < size; ++k) {
          const T cur = src[at(k)];
          const bool takes = IsMax ? cur >= best : cur <= best;
          if (is_nan(cur) || (!is_nan(best) && takes)) {
            best = cur;
            where = k;
          }
          vp[at(k)] = best;
          ip[at(k)] = where;
        }
      }
    }
  });
  return {values, indices};
}

template <bool IsMax>
std::tuple<Tensor, Tensor> cummax_cummin(const Tensor& x, std::int64_t dim_in) {
  const std::int64_t dim = wrap_dim(dim_in, x.dim());
  Tensor values, indices;
  {
    autograd::NoGradGuard guard;
    std::tie(values, indices) = running_extreme<IsMax>(x, dim);
  }
  if (x.is_floating_point()) {
    autograd::record_function(IsMax ? "CummaxBackward0" : "CumminBackward0", {x}, {values},
                              {indices}, [dim](const Grads& g, const Saved& s) {
                                // Each value's gradient goes to the element it came from.
                                return Grads{scatter_add(zeros_like(g[0]), dim, s[0], g[0])};
                              });
  }
  return {values, indices};
}

}  // namespace

Tensor cumsum(const Tensor& x0, std::int64_t dim_in) {
  WEFT_TRACE_OP(Cumsum, (x0), ir::Attributes().set("dim", dim_in), cumsum(x0, dim_in));
  const std::int64_t dim = wrap_dim(dim_in, x0.dim());
  const Tensor x = x0.to(scan_dtype(x0.dtype()));
  Tensor out;
  {
    autograd::NoGradGuard guard;
    out = scan<true>(x, dim);
  }
  if (x.is_floating_point()) {
    autograd::record_function("CumsumBackward0", {x}, {out}, {},
                              [dim](const Grads& g, const Saved&) {
                                // Each input element reaches every later output: the gradient
                                // summed from the end.
                                return Grads{flip(cumsum(flip(g[0], {dim}), dim), {dim})};
                              });
  }
  return out;
}

Tensor cumprod(const Tensor& x0, std::int64_t dim_in) {
  WEFT_TRACE_OP(Cumprod, (x0), ir::Attributes().set("dim", dim_in), cumprod(x0, dim_in));
  const std::int64_t dim = wrap_dim(dim_in, x0.dim());
  const Tensor x = x0.to(scan_dtype(x0.dtype()));
  Tensor out;
  {
    autograd::NoGradGuard guard;
    out = scan<false>(x, dim);
  }
  if (x.is_floating_point()) {
    autograd::record_function(
        "CumprodBackward0", {x}, {out}, {x},
        [dim](const Grads& g, const Saved& s) { return Grads{cumprod_grad(g[0], s[0], dim)}; });
  }
  return out;
}

}  // namespace weft

namespace weft {

Tensor logcumsumexp(const Tensor& x, std::int64_t dim_in) {
  WEFT_TRACE_OP(Logcumsumexp, (x), ir::Attributes().set("dim", dim_in), logcumsumexp(x, dim_in));
  const std::int64_t dim = wrap_dim(dim_in, x.dim());
  if (!x.is_floating_point()) {
    throw Error(std::string("\"logcumsumexp_out_cpu\" not implemented for '") +
                torch_scalar_type_name(x.dtype()) + "'");
  }
  const kernels::DimLayout l = kernels::dim_layout(x, dim, true);
  Tensor out = empty(x.sizes(), dtype(x.dtype()));
  kernels::dispatch_floating(x.dtype(), "logcumsumexp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = l.input.data<T>();
    T* dst = out.data<T>();
    const std::int64_t size = l.size, inner = l.inner;
    for (std::int64_t o = 0; o < l.outer; ++o) {
      for (std::int64_t i = 0; i < inner; ++i) {
        T acc = -std::numeric_limits<T>::infinity();
        for (std::int64_t k = 0; k < size; ++k) {
          const std::int64_t at = (o * size + k) * inner + i;
          acc = log_add_exp(src[at], acc);
          dst[at] = acc;
        }
      }
    }
  });
  autograd::record_function("LogcumsumexpBackward0", {x}, {out}, {x, out},
                            [dim](const Grads& g, const Saved& s) {
                              return Grads{logcumsumexp_grad(g[0], s[0], s[1], dim)};
                            });
  return out;
}

std::tuple<Tensor, Tensor> cummax(const Tensor& x, std::int64_t dim) {
  WEFT_TRACE_OP(Cummax, (x), ir::Attributes().set("dim", dim), cummax(x, dim));
  return cummax_cummin<true>(x, dim);
}

std::tuple<Tensor, Tensor> cummin(const Tensor& x, std::int64_t dim) {
  WEFT_TRACE_OP(Cummin, (x), ir::Attributes().set("dim", dim), cummin(x, dim));
  return cummax_cummin<false>(x, dim);
}

}  // namespace weft
