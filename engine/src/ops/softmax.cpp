// softmax and log_softmax along one dim, numerically stable: subtract the max before exp.
// The contiguous input is seen as [outer, size, inner] (kernels/reduce.h). The common case,
// the last dim (inner == 1), runs one Eigen-vectorized max / exp / sum pass per row; other
// dims run the same passes across `inner` columns at once. Backward:
//   softmax:     dx = y * (g - sum(g * y, dim))
//   log_softmax: dx = g - exp(y) * sum(g, dim)
// fused into one kernel, or built from differentiable ops when create_graph asks for it.
// GCC 12 with -march=native (AVX-512) reports false (maybe-)uninitialized warnings inside
// Eigen's packet math (-Wuninitialized under the sanitizers); the pragmas must precede the
// intrinsics headers to cover them. clang still checks this file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/reduce.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/parallel.h"

namespace weft {

namespace {
using Grads = std::vector<Tensor>;
using Saved = std::vector<Tensor>;

template <typename T>
using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
template <typename T>
using Row = Eigen::Map<Array<T>>;
template <typename T>
using ConstRow = Eigen::Map<const Array<T>>;

// Eigen's vectorized exp clamps its argument (at -88.7 for float, -709.8 for double), so far
// below 0 it returns ~1e-39 / ~1e-308 where the true value is tiny or 0 (a -inf mask must
// give exactly 0). Arguments under this bound are recomputed with std::exp.
template <typename T>
constexpr T kExpAccurateFrom = std::is_same_v<T, float> ? T(-87) : T(-708);

// out[i] = exp(arg[i]) for the elements whose argument is below kExpAccurateFrom.
template <typename T, typename Arg, typename Out>
void fix_low_exp(const Arg& arg, Out&& out) {
  for (Eigen::Index i = 0; i < arg.size(); ++i) {
    const T a = arg[i];
    if (a < kExpAccurateFrom<T>) out[i] = std::exp(a);
  }
}

// Rows per parallel chunk, so that each chunk touches about 32k elements.
std::int64_t grain_for(std::int64_t per_item) {
  return std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(per_item, 1));
}

// y = softmax (or log_softmax) of x along `size`; x and y contiguous [outer, size, inner].
template <bool Log, typename T>
void softmax_kernel(const T* x, T* y, const kernels::DimLayout& l) {
  const std::int64_t size = l.size, inner = l.inner;
  parallel_for(0, l.outer, grain_for(size * inner), [&](std::int64_t b, std::int64_t e) {
    if (inner == 1) {
      for (std::int64_t o = b; o < e; ++o) {
        const ConstRow<T> in(x + o * size, size);
        Row<T> out(y + o * size, size);
        // A NaN anywhere makes the sum, and so every output of the row, NaN; an all -inf
        // row gives -inf - -inf = NaN like PyTorch.
        const T m = in.maxCoeff();
        if constexpr (Log) {
          const T log_sum = std::log((in - m).exp().sum());
          out = (in - m) - log_sum;
        } else {
          out = (in - m).exp();
          if (in.minCoeff() - m < kExpAccurateFrom<T>) fix_low_exp<T>(in - m, out);
          const T inv = T(1) / out.sum();
          out *= inv;
        }
      }
      return;
    }
    Array<T> m(inner), lowest(inner), total(inner);
    for (std::int64_t o = b; o < e; ++o) {
      const T* src = x + o * size * inner;
      T* dst = y + o * size * inner;
      m.setConstant(-std::numeric_limits<T>::infinity());
      lowest.setConstant(std::numeric_limits<T>::infinity());
      for (std::int64_t k = 0; k < size; ++k) {
        const ConstRow<T> in(src + k * inner, inner);
        m = m.max(in);
        if constexpr (!Log) lowest = lowest.min(in);
      }
      // Whether some exp argument falls where Eigen's exp is inaccurate.
      const bool low = !Log && ((lowest - m) < kExpAccurateFrom<T>).any();
      total.setZero();
      for (std::int64_t k = 0; k < size; ++k) {
        const ConstRow<T> in(src + k * inner, inner);
        if constexpr (Log) {
          // Tiny terms beside the max's exp(0) = 1 do not change the sum: no fix needed.
          total += (in - m).exp();
        } else {
          Row<T> out(dst + k * inner, inner);
          out = (in - m).exp();
          if (low) fix_low_exp<T>(in - m, out);
          total += out;
        }
      }
      if constexpr (Log) {
        total = total.log();
        for (std::int64_t k = 0; k < size; ++k) {
          Row<T>(dst + k * inner, inner) = (ConstRow<T>(src + k * inner, inner) - m) - total;
        }
      } else {
        total = total.inverse();
        for (std::int64_t k = 0; k < size; ++k) Row<T>(dst + k * inner, inner) *= total;
      }
    }
  });
}

// dx from g and y (all contiguous [outer, size, inner]).
template <bool Log, typename T>
void softmax_backward_kernel(const T* g, const T* y, T* dx, const kernels::DimLayout& l) {
  const std::int64_t size = l.size, inner = l.inner;
  // dx = g - exp(y) * total for log_softmax, recomputing the exps Eigen gets wrong.
  auto log_line = [](const auto& gk, const auto& yk, auto&& out, const auto& total) {
    out = gk - yk.exp() * total;
    if (yk.minCoeff() < kExpAccurateFrom<T>) {
      for (Eigen::Index i = 0; i < yk.size(); ++i) {
        if (yk[i] < kExpAccurateFrom<T>) out[i] = gk[i] - std::exp(yk[i]) * total[i];
      }
    }
  };
  parallel_for(0, l.outer, grain_for(size * inner), [&](std::int64_t b, std::int64_t e) {
    if (inner == 1) {
      for (std::int64_t o = b; o < e; ++o) {
        const ConstRow<T> gr(g + o * size, size), yr(y + o * size, size);
        Row<T> out(dx + o * size, size);
        if constexpr (Log) {
          log_line(gr, yr, out, Array<T>::Constant(size, gr.sum()));
        } else {
          out = yr * (gr - (gr * yr).sum());
        }
      }
      return;
    }
    Array<T> total(inner);
    for (std::int64_t o = b; o < e; ++o) {
      const std::int64_t base = o * size * inner;
      total.setZero();
      for (std::int64_t k = 0; k < size; ++k) {
        const ConstRow<T> gk(g + base + k * inner, inner);
        if constexpr (Log) {
          total += gk;
        } else {
          total += gk * ConstRow<T>(y + base + k * inner, inner);
        }
      }
      for (std::int64_t k = 0; k < size; ++k) {
        const std::int64_t at = base + k * inner;
        const ConstRow<T> gk(g + at, inner), yk(y + at, inner);
        if constexpr (Log) {
          log_line(gk, yk, Row<T>(dx + at, inner), total);
        } else {
          Row<T>(dx + at, inner) = yk * (gk - total);
        }
      }
    }
  });
}

template <bool Log>
Tensor softmax_impl(const Tensor& x, std::int64_t dim_in) {
  const std::int64_t dim = wrap_dim(dim_in, x.dim());
  const bool lastdim = x.dim() == 0 || dim == x.dim() - 1;
  // PyTorch returns an empty integer tensor before it looks at the dtype.
  if (x.numel() == 0 && !x.is_floating_point()) return empty(x.sizes(), dtype(x.dtype()));
  if (!x.is_floating_point()) {
    const std::string name =
        lastdim ? (Log ? "log_softmax_lastdim_kernel_impl" : "softmax_lastdim_kernel_impl")
                : "softmax_kernel_impl";
    throw Error("\"" + name + "\" not implemented for '" + torch_scalar_type_name(x.dtype()) + "'");
  }
  const kernels::DimLayout l = kernels::dim_layout(x, dim, true);
  Tensor y = empty(x.sizes(), dtype(x.dtype()));
  if (x.numel() > 0) {
    kernels::dispatch_floating(x.dtype(), Log ? "log_softmax" : "softmax", [&](auto tag) {
      using T = typename decltype(tag)::type;
      softmax_kernel<Log, T>(l.input.data<T>(), y.data<T>(), l);
    });
  }
  autograd::record_function(
      Log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", {x}, {y}, {y},
      [dim](const Grads& g, const Saved& s) {
        const Tensor& out = s[0];
        if (autograd::grad_enabled()) {
          // create_graph: a differentiable (in g) composition.
          if constexpr (Log) {
            return Grads{g[0] - exp(out) * sum(g[0], {dim}, true)};
          } else {
            return Grads{out * (g[0] - sum(g[0] * out, {dim}, true))};
          }
        }
        const Tensor gc = g[0].to(out.dtype()).contiguous();
        const kernels::DimLayout bl = kernels::dim_layout(out, dim, true);
        Tensor dx = empty(out.sizes(), dtype(out.dtype()));
        if (out.numel() > 0) {
          kernels::dispatch_floating(out.dtype(), "softmax_backward", [&](auto tag) {
            using T = typename decltype(tag)::type;
            softmax_backward_kernel<Log, T>(gc.data<T>(), bl.input.data<T>(), dx.data<T>(), bl);
          });
        }
        return Grads{dx};
      });
  return y;
}
}  // namespace

Tensor softmax(const Tensor& x, std::int64_t dim) {
  WEFT_TRACE_OP(Softmax, (x), ir::Attributes().set("dim", dim), softmax(x, dim));
  return softmax_impl<false>(x, dim);
}
Tensor log_softmax(const Tensor& x, std::int64_t dim) {
  WEFT_TRACE_OP(LogSoftmax, (x), ir::Attributes().set("dim", dim), log_softmax(x, dim));
  return softmax_impl<true>(x, dim);
}

}  // namespace weft
