// Scans along one dim: cumsum and cumprod. The contiguous input is seen as [outer, size, inner]
// and every (outer, inner) line is scanned in order, accumulating in the result's type as
// PyTorch's CPU kernels do. Integers and bool scan to int64 (wrapping on overflow). cumsum's
// gradient is the reversed cumsum of the incoming gradient; cumprod's is exact also where the
// input holds zeros: g_k = sum_{j >= k} g_j * prod_{i <= j, i != k} x_i (0 past the first zero).
#include <string>
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
