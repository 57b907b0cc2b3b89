// Pairwise p-norm distances: cdist (every row of x1 against every row of x2, batch dims
// broadcast) and pdist (the rows of one matrix against each other, the upper triangle in
// row-major order). The forward is a direct loop in the input's precision; p = 0 counts the
// differing elements and p = inf takes the largest difference. The backward follows
// PyTorch's _cdist_backward / _pdist_backward: a zero distance, and p = 0, pass no gradient,
// and p = inf passes it to every element at the maximum. It is written with differentiable
// ops, so its own gradient exists too.
//
// PyTorch computes p = 2 with more than 25 rows on a side by a matrix product
// (compute_mode 'use_mm_for_euclid_dist_if_necessary'): |x|² + |y|² - 2 x·y, which loses
// digits to cancellation when the rows are close. The engine is the reference and keeps the
// direct difference at every size.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/parallel.h"

namespace weft {

namespace {
using Grads = std::vector<Tensor>;
using Saved = std::vector<Tensor>;

constexpr std::int64_t kRowGrain = 8;

template <typename T>
T p_norm_of_difference(const T* a, const T* b, std::int64_t m, double p) {
  if (p == 0.0) {
    T count = 0;
    for (std::int64_t k = 0; k < m; ++k) count += a[k] != b[k] ? T(1) : T(0);
    return count;
  }
  if (std::isinf(p)) {
    T largest = 0;
    for (std::int64_t k = 0; k < m; ++k) {
      const T d = std::abs(a[k] - b[k]);
      if (d > largest || d != d) largest = d;
    }
    return largest;
  }
  T total = 0;
  if (p == 1.0) {
    for (std::int64_t k = 0; k < m; ++k) total += std::abs(a[k] - b[k]);
    return total;
  }
  if (p == 2.0) {
    for (std::int64_t k = 0; k < m; ++k) total += (a[k] - b[k]) * (a[k] - b[k]);
    return std::sqrt(total);
  }
  for (std::int64_t k = 0; k < m; ++k) total += std::pow(std::abs(a[k] - b[k]), static_cast<T>(p));
  return std::pow(total, static_cast<T>(1.0 / p));
}

// The incoming gradient g [..., P, R] times d dist / d diff for every pair, as PyTorch's
// kernels compute it: diff is [..., P, R, M], dist [..., P, R, 1]. Which products are skipped
// matters once g is not finite (inf * 0 is NaN): p = 0 passes nothing; p = 1 and inf multiply
// every element; other p skip pairs at zero distance, and p < 1 also skips zero differences.
// Zero distances and differences are replaced by 1 before they divide or take a negative power,
// so that the branch where() discards has no NaN left for the second derivative (0 * inf).
Tensor weighted_differences(const Tensor& g, const Tensor& diff, const Tensor& dist, double p) {
  const Tensor zero = zeros_like(diff);
  if (p == 0.0) return zero;
  const Tensor incoming = g.unsqueeze(-1);
  if (p == 1.0) return mul(incoming, sign(diff));
  if (std::isinf(p)) {
    const Tensor at_max = eq(abs(diff), dist.expand(diff.sizes())).to(diff.dtype());
    return mul(incoming, mul(sign(diff), at_max));
  }
  const Tensor at_zero = eq(dist, zeros_like(dist));
  const Tensor safe_dist = where(at_zero, ones_like(dist), dist);
  Tensor w;
  Tensor skipped = at_zero.expand(diff.sizes());
  if (p == 2.0) {
    w = div(mul(incoming, diff), safe_dist);
  } else {
    // sign(d) |d|^(p-1) / dist^(p-1)
    const Tensor zero_difference = eq(diff, zero);
    const Tensor safe_abs = where(zero_difference, ones_like(diff), abs(diff));
    w = div(mul(incoming, mul(sign(diff), pow(safe_abs, p - 1.0))), pow(safe_dist, p - 1.0));
    if (p < 1.0) skipped = logical_or(skipped, zero_difference);
  }
  return where(skipped, zero, w);
}

// The gradients of cdist's x1 [..., P, M] and x2 [..., R, M] (shapes as given, before the
// batch dims were broadcast) for the incoming g [..., P, R]. The saved output is detached
// (saved outputs hold no graph), so a backward that is itself differentiated (create_graph)
// computes the distances again, with their own history: otherwise the second derivative
// would miss everything that flows through dist.
Grads cdist_gradients(const Tensor& g, const Tensor& x1, const Tensor& x2, const Tensor& out,
                      double p) {
  const Tensor dist = autograd::grad_enabled() ? weft::cdist(x1, x2, p) : out;
  const Tensor diff = sub(x1.unsqueeze(-2), x2.unsqueeze(-3));
  const Tensor weighted = weighted_differences(g, diff, dist.unsqueeze(-1), p);
  return {autograd::sum_to(weighted.sum({-2}), x1.sizes()),
          autograd::sum_to(weighted.sum({-3}).neg(), x2.sizes())};
}

void check_p(double p, const char* name) {
  if (!(p >= 0.0)) throw Error(std::string(name) + " only supports non-negative p values");
}

void check_floating(const Tensor& x, const std::string& message) {
  if (!x.is_floating_point()) throw Error(message + torch_scalar_type_name(x.dtype()));
}

// dist[b, i, j] over contiguous [B, P, M] and [B, R, M].
Tensor distances(const Tensor& a, const Tensor& b, const Shape& out_shape, double p) {
  const std::int64_t P = a.size(-2), R = b.size(-2), M = a.size(-1);
  const std::int64_t batches = P == 0 ? 0 : a.numel() / (P * std::max<std::int64_t>(M, 1));
  Tensor out = empty(out_shape, dtype(a.dtype()));
  kernels::dispatch_floating(a.dtype(), "cdist", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* ad = a.data<T>();
    const T* bd = b.data<T>();
    T* od = out.data<T>();
    const std::int64_t rows = M == 0 ? 0 : batches * P;
    if (M == 0) {
      for (std::int64_t i = 0; i < out.numel(); ++i) od[i] = T(0);
      return;
    }
    parallel_for(0, rows, kRowGrain, [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t row = r0; row < r1; ++row) {
        const std::int64_t batch = row / P;
        const T* x = ad + row * M;
        for (std::int64_t j = 0; j < R; ++j) {
          od[row * R + j] = p_norm_of_difference(x, bd + (batch * R + j) * M, M, p);
        }
      }
    });
  });
  return out;
}
}  // namespace

Tensor cdist(const Tensor& x1, const Tensor& x2, double p) {
  WEFT_TRACE_OP(Cdist, (x1, x2), ir::Attributes().set("p", p), cdist(x1, x2, p));
  check_floating(x1, "cdist only supports floating-point dtypes, X1 got: ");
  check_floating(x2, "cdist only supports floating-point dtypes, X2 got: ");
  if (x1.dim() < 2) {
    throw Error("cdist only supports at least 2D tensors, X1 got: " + std::to_string(x1.dim()) +
                "D");
  }
  if (x2.dim() < 2) {
    throw Error("cdist only supports at least 2D tensors, X2 got: " + std::to_string(x2.dim()) +
                "D");
  }
  if (x1.size(-1) != x2.size(-1)) {
    throw Error("X1 and X2 must have the same number of columns. X1: " +
                std::to_string(x1.size(-1)) + " X2: " + std::to_string(x2.size(-1)));
  }
  if (x1.dtype() != x2.dtype()) {
    throw Error(std::string("cdist: X1 and X2 must have the same dtype, X1 got: ") +
                torch_scalar_type_name(x1.dtype()) +
                " X2 got: " + torch_scalar_type_name(x2.dtype()));
  }
  check_p(p, "cdist");
  const Shape batch = broadcast_shapes(Shape(x1.sizes().begin(), x1.sizes().end() - 2),
                                       Shape(x2.sizes().begin(), x2.sizes().end() - 2));
  Shape a_shape = batch, b_shape = batch, out_shape = batch;
  a_shape.insert(a_shape.end(), {x1.size(-2), x1.size(-1)});
  b_shape.insert(b_shape.end(), {x2.size(-2), x2.size(-1)});
  out_shape.insert(out_shape.end(), {x1.size(-2), x2.size(-2)});
  const Tensor a = x1.expand(a_shape).contiguous();
  const Tensor b = x2.expand(b_shape).contiguous();
  Tensor out = distances(a, b, out_shape, p);
  autograd::record_function(
      "CdistBackward0", {x1, x2}, {out}, {x1, x2, out},
      [p](const Grads& g, const Saved& s) { return cdist_gradients(g[0], s[0], s[1], s[2], p); });
  return out;
}

Tensor pdist(const Tensor& x, double p) {
  WEFT_TRACE_OP(Pdist, (x), ir::Attributes().set("p", p), pdist(x, p));
  if (x.dim() != 2) {
    throw Error("pdist only supports 2D tensors, got: " + std::to_string(x.dim()) + "D");
  }
  if (!x.is_floating_point()) throw Error("pdist only supports floating-point dtypes");
  check_p(p, "pdist");
  // The pairs i < j of cdist(x, x) in row-major order: the same distances and, through
  // cdist's backward on both arguments, the same gradient as PyTorch's _pdist_backward.
  const std::int64_t n = x.size(0);
  std::vector<std::int64_t> upper;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = i + 1; j < n; ++j) upper.push_back(i * n + j);
  }
  const Tensor all = cdist(x, x, p).reshape({n * n});
  return index_select(all, 0, tensor(upper, {static_cast<std::int64_t>(upper.size())}));
}

}  // namespace weft
