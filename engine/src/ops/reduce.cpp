// Reductions. Multi-dim ones (sum, var, logsumexp) lay the input out as [outer, inner]
// segments (kernels/reduce.h) and reduce every segment; single-dim ones (prod, max/min,
// argmax/argmin) see the contiguous input as [outer, size, inner] and reduce along `size`.
// Backward broadcasts the gradient back over the reduced dims. PyTorch's conventions:
// integers sum/prod to int64; NaN is the max and the min; ties pick the first index.
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

// Output elements per parallel chunk, so that each chunk reads about 32k inputs.
std::int64_t grain_for(std::int64_t per_item) {
  return std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(per_item, 1));
}

// Double accumulation for float32, as PyTorch's CPU var/std.
template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, float>, double, T>;

// Sums each contiguous segment; floating types use Eigen's vectorized tree reduction.
template <typename T, typename AccT>
void sum_segments(const T* in, AccT* out, std::int64_t outer, std::int64_t inner) {
  auto segment_sum = [](const T* row, std::int64_t n) -> AccT {
    if constexpr (std::is_floating_point_v<T> && std::is_same_v<T, AccT>) {
      return n == 0 ? AccT(0) : Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(row, n).sum();
    } else {
      AccT acc = 0;
      for (std::int64_t i = 0; i < n; ++i) acc += static_cast<AccT>(row[i]);
      return acc;
    }
  };
  const int threads = get_num_threads();
  if (outer < threads && inner >= 2 * 32768) {
    // Few long segments (a full reduction has one): partial sums of pieces, added in piece
    // order, so the result does not depend on which thread ran which piece.
    const std::int64_t pieces = threads;
    const std::int64_t len = (inner + pieces - 1) / pieces;
    std::vector<AccT> partial(static_cast<std::size_t>(outer * pieces));
    parallel_for(0, outer * pieces, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t u = b; u < e; ++u) {
        const std::int64_t start = (u % pieces) * len;
        const std::int64_t n = std::max<std::int64_t>(0, std::min(len, inner - start));
        partial[u] = segment_sum(in + (u / pieces) * inner + start, n);
      }
    });
    for (std::int64_t o = 0; o < outer; ++o) {
      AccT total = 0;
      for (std::int64_t p = 0; p < pieces; ++p) total += partial[o * pieces + p];
      out[o] = total;
    }
    return;
  }
  parallel_for(0, outer, grain_for(inner), [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t o = b; o < e; ++o) out[o] = segment_sum(in + o * inner, inner);
  });
}

// out[o, i] = prod_k in[o, k, i].
template <typename T>
void prod_kernel(const T* in, T* out, const kernels::DimLayout& l) {
  const std::int64_t size = l.size, inner = l.inner;
  parallel_for(0, l.outer, grain_for(size * inner), [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t o = b; o < e; ++o) {
      const T* src = in + o * size * inner;
      T* dst = out + o * inner;
      if (inner == 1) {
        if constexpr (std::is_floating_point_v<T>) {
          *dst = size == 0 ? T(1)
                           : Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(src, size).prod();
        } else {
          T acc = T(1);
          for (std::int64_t k = 0; k < size; ++k) acc = kernels::wrapping_mul(acc, src[k]);
          *dst = acc;
        }
        continue;
      }
      for (std::int64_t i = 0; i < inner; ++i) dst[i] = T(1);
      for (std::int64_t k = 0; k < size; ++k) {
        const T* row = src + k * inner;
        for (std::int64_t i = 0; i < inner; ++i) dst[i] = kernels::wrapping_mul(dst[i], row[i]);
      }
    }
  });
}

// others[o, k, i] = prod_{j != k} in[o, j, i]: the exact derivative of a product, also when
// the input holds zeros (exclusive prefix products times exclusive suffix products).
template <typename T>
void prod_others_kernel(const T* in, T* others, const kernels::DimLayout& l) {
  const std::int64_t size = l.size, inner = l.inner;
  parallel_for(0, l.outer, grain_for(size * inner), [&](std::int64_t b, std::int64_t e) {
    std::vector<T> acc(static_cast<std::size_t>(inner));
    for (std::int64_t o = b; o < e; ++o) {
      const T* src = in + o * size * inner;
      T* dst = others + o * size * inner;
      std::fill(acc.begin(), acc.end(), T(1));
      for (std::int64_t k = 0; k < size; ++k) {
        for (std::int64_t i = 0; i < inner; ++i) {
          dst[k * inner + i] = acc[i];
          acc[i] *= src[k * inner + i];
        }
      }
      std::fill(acc.begin(), acc.end(), T(1));
      for (std::int64_t k = size; k-- > 0;) {
        for (std::int64_t i = 0; i < inner; ++i) {
          dst[k * inner + i] *= acc[i];
          acc[i] *= src[k * inner + i];
        }
      }
    }
  });
}

// Whether v replaces the current best: strictly greater (less) wins, so ties keep the first
// index; a NaN beats every number and the first NaN stays.
template <bool IsMax, typename T>
inline bool better(T v, T best) {
  if constexpr (std::is_floating_point_v<T>) {
    if (best != best) return false;
    if (v != v) return true;
  }
  if constexpr (IsMax) {
    return v > best;
  } else {
    return v < best;
  }
}

// values[o, i], indices[o, i] = max (min) over k of in[o, k, i] and its first index.
template <bool IsMax, typename T>
void extreme_kernel(const T* in, T* values, std::int64_t* indices, const kernels::DimLayout& l) {
  const std::int64_t size = l.size, inner = l.inner;
  parallel_for(0, l.outer, grain_for(size * inner), [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t o = b; o < e; ++o) {
      const T* src = in + o * size * inner;
      T* val = values + o * inner;
      std::int64_t* idx = indices + o * inner;
      if (inner == 1) {
        std::int64_t at = 0;
        if constexpr (std::is_same_v<T, bool>) {
          for (std::int64_t k = 1; k < size; ++k) {
            if (better<IsMax>(src[k], src[at])) at = k;
          }
        } else {
          // A vectorized pass finds the extreme (NaN if any), then the first element equal
          // to it is the index: cheaper than a compare-and-branch per element.
          const Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>> row(src, size);
          const T m = IsMax ? row.template maxCoeff<Eigen::PropagateNaN>()
                            : row.template minCoeff<Eigen::PropagateNaN>();
          if (m != m) {
            while (src[at] == src[at]) ++at;
          } else {
            while (src[at] != m) ++at;
          }
        }
        *val = src[at];
        *idx = at;
        continue;
      }
      for (std::int64_t i = 0; i < inner; ++i) {
        val[i] = src[i];
        idx[i] = 0;
      }
      for (std::int64_t k = 1; k < size; ++k) {
        const T* row = src + k * inner;
        for (std::int64_t i = 0; i < inner; ++i) {
          if (better<IsMax>(row[i], val[i])) {
            val[i] = row[i];
            idx[i] = k;
          }
        }
      }
    }
  });
}

void check_nonempty_dim(const char* op, const kernels::DimLayout& l, std::int64_t dim) {
  if (l.size == 0) {
    throw Error(std::string(op) + "(): Expected reduction dim " + std::to_string(dim) +
                " to have non-zero size.");
  }
}

// Runs extreme_kernel on x in its own dtype; returns (values, int64 indices) in l.out_shape.
template <bool IsMax>
std::tuple<Tensor, Tensor> extreme(const kernels::DimLayout& l, Dtype type) {
  Tensor values = empty(l.out_shape, dtype(type));
  Tensor indices = empty(l.out_shape, dtype(Dtype::Int64));
  if (l.outer * l.inner == 0) return {values, indices};
  kernels::dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    extreme_kernel<IsMax, T>(l.input.data<T>(), values.data<T>(), indices.data<std::int64_t>(), l);
  });
  return {values, indices};
}

// A bool mask of x's shape, true where k == indices[o, i] (the element each output chose).
Tensor chosen_mask(const Tensor& indices, const Shape& input_shape, std::int64_t dim) {
  Tensor mask = empty(input_shape, dtype(Dtype::Bool));
  const kernels::DimLayout l = kernels::dim_layout(mask, dim, true);
  const Tensor idx = indices.contiguous();
  const std::int64_t* ip = idx.data<std::int64_t>();
  bool* mp = mask.data<bool>();
  for (std::int64_t o = 0; o < l.outer; ++o) {
    for (std::int64_t k = 0; k < l.size; ++k) {
      bool* row = mp + (o * l.size + k) * l.inner;
      const std::int64_t* irow = ip + o * l.inner;
      for (std::int64_t i = 0; i < l.inner; ++i) row[i] = irow[i] == k;
    }
  }
  return mask;
}

template <bool IsMax>
std::tuple<Tensor, Tensor> extreme_dim(const char* op, const char* node, const Tensor& x,
                                       std::int64_t dim_in, bool keepdim) {
  const std::int64_t dim = wrap_dim(dim_in, x.dim());
  const kernels::DimLayout l = kernels::dim_layout(x, dim, keepdim);
  check_nonempty_dim(op, l, dim);
  auto [values, indices] = extreme<IsMax>(l, x.dtype());
  const Shape input_shape = x.sizes(), keep_shape = l.keepdim_shape;
  // The gradient goes to the chosen element only (PyTorch's value_selecting_reduction_backward).
  autograd::record_function(node, {x}, {values, indices}, {indices},
                            [input_shape, keep_shape, dim](const Grads& g, const Saved& s) {
                              Tensor mask;
                              {
                                autograd::NoGradGuard guard;
                                mask = chosen_mask(s[0], input_shape, dim);
                              }
                              const Tensor zero = zeros({}, dtype(g[0].dtype()));
                              return Grads{where(mask, reshape(g[0], keep_shape), zero)};
                            });
  return {values, indices};
}

template <bool IsMax>
Tensor extreme_all(const char* op, const char* node, const Tensor& x) {
  if (x.numel() == 0) {
    throw Error(std::string(op) +
                "(): Expected reduction dim to be specified for input.numel() "
                "== 0. Specify the reduction dim with the 'dim' argument.");
  }
  const kernels::DimLayout l = kernels::flat_layout(x, false);
  Tensor value = std::get<0>(extreme<IsMax>(l, x.dtype()));
  // The gradient is shared evenly by every element equal to the result (NaN counts as equal
  // to NaN): PyTorch's evenly_distribute_backward.
  autograd::record_function(node, {x}, {value}, {x, value}, [](const Grads& g, const Saved& s) {
    Tensor mask;
    std::int64_t count = 0;
    {
      autograd::NoGradGuard guard;
      const Tensor input = s[0].contiguous();
      mask = empty(input.sizes(), dtype(Dtype::Bool));
      kernels::dispatch_floating(input.dtype(), "max_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* p = input.data<T>();
        const T v = *s[1].data<T>();
        bool* m = mask.data<bool>();
        for (std::int64_t i = 0; i < input.numel(); ++i) {
          m[i] = v != v ? p[i] != p[i] : p[i] == v;
          count += m[i];
        }
      });
    }
    const Tensor zero = zeros({}, dtype(g[0].dtype()));
    return Grads{where(mask, g[0] / static_cast<double>(count), zero)};
  });
  return value;
}

template <bool IsMax>
Tensor arg_extreme(const char* op, const Tensor& x, std::optional<std::int64_t> dim_in,
                   bool keepdim) {
  if (x.dtype() == Dtype::Bool) {
    throw Error(std::string("\"") + op + "_cpu\" not implemented for 'Bool'");
  }
  autograd::NoGradGuard guard;  // indices have no gradient
  if (!dim_in) {
    if (x.numel() == 0) {
      throw Error(std::string(op) +
                  "(): Expected reduction dim to be specified for input.numel() == 0.");
    }
    return std::get<1>(extreme<IsMax>(kernels::flat_layout(x, keepdim), x.dtype()));
  }
  const std::int64_t dim = wrap_dim(*dim_in, x.dim());
  const kernels::DimLayout l = kernels::dim_layout(x, dim, keepdim);
  check_nonempty_dim(op, l, dim);
  return std::get<1>(extreme<IsMax>(l, x.dtype()));
}

void check_var_dtype(const Tensor& x) {
  if (!x.is_floating_point()) {
    throw Error("std and var only support floating point and complex dtypes");
  }
}

// var (or std) of every segment: two passes (mean, then squared deviations) in double for
// float32, divided by max(0, n - correction) so that n <= correction gives inf or NaN.
Tensor var_forward(const Tensor& x, const std::vector<std::int64_t>& dims, std::int64_t correction,
                   bool keepdim, bool take_sqrt, kernels::ReductionLayout* layout_out) {
  autograd::NoGradGuard guard;
  kernels::ReductionLayout l = kernels::reduction_layout(x, dims, keepdim);
  Tensor out = empty(l.out_shape, dtype(x.dtype()));
  kernels::dispatch_floating(x.dtype(), "var", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = Acc<T>;
    const T* in = l.segments.data<T>();
    T* o = out.data<T>();
    const std::int64_t n = l.inner;
    const A divisor = static_cast<A>(std::max<std::int64_t>(0, n - correction));
    parallel_for(0, l.outer, grain_for(n), [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t r = b; r < e; ++r) {
        const auto row =
            Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(in + r * n, n).template cast<A>();
        const A mean = (n == 0 ? A(0) : row.sum()) / static_cast<A>(n);
        const A m2 = n == 0 ? A(0) : (row - mean).square().sum();
        const A v = m2 / divisor;
        o[r] = static_cast<T>(take_sqrt ? std::sqrt(v) : v);
      }
    });
  });
  if (layout_out) *layout_out = std::move(l);
  return out;
}

// d var / dx = 2 (x - mean) / (n - correction), with PyTorch's choices where n <= correction.
Tensor var_backward(const Tensor& g, const Tensor& x, const std::vector<std::int64_t>& dims,
                    bool all_dims, std::int64_t n, std::int64_t correction,
                    const Shape& keep_shape) {
  const Tensor gk = reshape(g, keep_shape);
  const Tensor mu = mean(x, dims, /*keepdim=*/true);
  const std::int64_t dof = n - correction;
  if (all_dims && dof <= 0) {
    // Current PyTorch (1.13 returned inf * g, or failed on the shape): NaN where x
    // equals the mean (inf * 0), inf elsewhere.
    const Tensor nan_or_inf =
        where(eq(x, mu), full({}, std::numeric_limits<double>::quiet_NaN(), dtype(x.dtype())),
              full({}, std::numeric_limits<double>::infinity(), dtype(x.dtype())));
    return gk * nan_or_inf;
  }
  // dof == 0 on explicit dims: 2/0 = inf, times (x - mean): ±inf, NaN where x equals the mean.
  return gk * (x - mu) * (2.0 / static_cast<double>(dof));
}

Tensor var_or_std(const char* node, const Tensor& x, IntList dims_in, std::int64_t correction,
                  bool keepdim, bool take_sqrt) {
  check_var_dtype(x);
  const std::vector<std::int64_t> dims = wrap_dims(dims_in, x.dim());
  kernels::ReductionLayout l;
  Tensor out = var_forward(x, dims, correction, keepdim, take_sqrt, &l);
  const bool all_dims = dims_in.empty() || x.dim() == 0;
  const std::int64_t n = l.inner;
  const Shape keep_shape = l.keepdim_shape;
  autograd::record_function(
      node, {x}, {out}, {x, out},
      [dims, all_dims, n, correction, keep_shape, take_sqrt](const Grads& g, const Saved& s) {
        Tensor gv = g[0];
        if (take_sqrt) {
          // d std = d var / (2 std), and 0 where std is 0 (PyTorch's masked_fill).
          const Tensor zero = zeros({}, dtype(g[0].dtype()));
          gv = where(eq(s[1], zero), zero, g[0] / (s[1] * 2.0));
        }
        return Grads{var_backward(gv, s[0], dims, all_dims, n, correction, keep_shape)};
      });
  return out;
}
}  // namespace

Tensor sum(const Tensor& x0, IntList dims_in, bool keepdim, std::optional<Dtype> dtype_opt) {
  if (dtype_opt && ir::active_tracer()) return sum(x0.to(*dtype_opt), dims_in, keepdim);
  WEFT_TRACE_OP(Sum, (x0),
                ir::Attributes().set("dim", ops_detail::to_ints(dims_in)).set("keepdim", keepdim),
                sum(x0, dims_in, keepdim, dtype_opt));
  // Integers and bool sum to int64, as in PyTorch.
  const Dtype out_type = dtype_opt.value_or(x0.is_floating_point() ? x0.dtype() : Dtype::Int64);
  const Tensor x = x0.to(out_type);
  const std::vector<std::int64_t> dims = wrap_dims(dims_in, x.dim());
  const kernels::ReductionLayout layout = kernels::reduction_layout(x, dims, keepdim);
  Tensor out = empty(layout.out_shape, dtype(out_type));
  kernels::dispatch_numeric(
      out_type == Dtype::Bool ? Dtype::Int64 : out_type, "sum", [&](auto tag) {
        using T = typename decltype(tag)::type;
        sum_segments<T, T>(layout.segments.data<T>(), out.data<T>(), layout.outer, layout.inner);
      });
  const Shape input_shape = x.sizes();
  const Shape keep_shape = layout.keepdim_shape;
  autograd::record_function("SumBackward1", {x}, {out}, {},
                            [input_shape, keep_shape](const Grads& g, const Saved&) {
                              return Grads{expand(reshape(g[0], keep_shape), input_shape)};
                            });
  return out;
}

Tensor mean(const Tensor& x, IntList dims_in, bool keepdim) {
  WEFT_TRACE_OP(Mean, (x),
                ir::Attributes().set("dim", ops_detail::to_ints(dims_in)).set("keepdim", keepdim),
                mean(x, dims_in, keepdim));
  if (!x.is_floating_point()) {
    throw Error(std::string("mean(): could not infer output dtype. Input dtype must be either a "
                            "floating point or complex dtype. Got: ") +
                dtype_name(x.dtype()));
  }
  const std::vector<std::int64_t> dims = wrap_dims(dims_in, x.dim());
  std::int64_t count = 1;
  for (std::int64_t d : dims) count *= x.size(d);
  // 0/0 gives NaN for empty reductions, as PyTorch.
  return div(sum(x, dims_in, keepdim), wrapped_scalar(static_cast<double>(count)));
}

Tensor prod(const Tensor& x0, std::optional<std::int64_t> dim_opt, bool keepdim) {
  WEFT_TRACE_OP(Prod, (x0), ops_detail::optional_dim(dim_opt).set("keepdim", keepdim),
                prod(x0, dim_opt, keepdim));
  // Integers and bool multiply to int64, as in PyTorch.
  const Dtype out_type = x0.is_floating_point() ? x0.dtype() : Dtype::Int64;
  const Tensor x = x0.to(out_type);
  const std::optional<std::int64_t> dim =
      dim_opt ? std::optional<std::int64_t>(wrap_dim(*dim_opt, x.dim())) : std::nullopt;
  const kernels::DimLayout l =
      dim ? kernels::dim_layout(x, *dim, keepdim) : kernels::flat_layout(x, keepdim);
  Tensor out = empty(l.out_shape, dtype(out_type));
  kernels::dispatch_numeric(out_type, "prod", [&](auto tag) {
    using T = typename decltype(tag)::type;
    prod_kernel<T>(l.input.data<T>(), out.data<T>(), l);  // an empty product is 1
  });
  const Shape keep_shape = l.keepdim_shape;
  autograd::record_function(
      dim ? "ProdBackward1" : "ProdBackward0", {x}, {out}, {x},
      [keep_shape, dim](const Grads& g, const Saved& s) {
        Tensor others;
        {
          autograd::NoGradGuard guard;
          const kernels::DimLayout bl =
              dim ? kernels::dim_layout(s[0], *dim, true) : kernels::flat_layout(s[0], true);
          others = empty(s[0].sizes(), dtype(s[0].dtype()));
          kernels::dispatch_floating(s[0].dtype(), "prod_backward", [&](auto tag) {
            using T = typename decltype(tag)::type;
            prod_others_kernel<T>(bl.input.data<T>(), others.data<T>(), bl);
          });
        }
        return Grads{reshape(g[0], keep_shape) * others};
      });
  return out;
}

std::tuple<Tensor, Tensor> max(const Tensor& x, std::int64_t dim, bool keepdim) {
  WEFT_TRACE_OP(Max, (x), ir::Attributes().set("dim", dim).set("keepdim", keepdim),
                max(x, dim, keepdim));
  return extreme_dim<true>("max", "MaxBackward0", x, dim, keepdim);
}

std::tuple<Tensor, Tensor> min(const Tensor& x, std::int64_t dim, bool keepdim) {
  WEFT_TRACE_OP(Min, (x), ir::Attributes().set("dim", dim).set("keepdim", keepdim),
                min(x, dim, keepdim));
  return extreme_dim<false>("min", "MinBackward0", x, dim, keepdim);
}

Tensor max(const Tensor& x) {
  // The IR has no all-elements max: the trace records it over the flattened tensor.
  if (ir::active_tracer()) return std::get<0>(max(reshape(x, {-1}), 0));
  return extreme_all<true>("max", "MaxBackward1", x);
}
Tensor min(const Tensor& x) {
  if (ir::active_tracer()) return std::get<0>(min(reshape(x, {-1}), 0));
  return extreme_all<false>("min", "MinBackward1", x);
}

Tensor argmax(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  WEFT_TRACE_OP(Argmax, (x), ops_detail::optional_dim(dim).set("keepdim", keepdim),
                argmax(x, dim, keepdim));
  return arg_extreme<true>("argmax", x, dim, keepdim);
}

Tensor argmin(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  WEFT_TRACE_OP(Argmin, (x), ops_detail::optional_dim(dim).set("keepdim", keepdim),
                argmin(x, dim, keepdim));
  return arg_extreme<false>("argmin", x, dim, keepdim);
}

Tensor var(const Tensor& x, IntList dims, std::int64_t correction, bool keepdim) {
  WEFT_TRACE_OP(Var, (x),
                ir::Attributes()
                    .set("dim", ops_detail::to_ints(dims))
                    .set("correction", correction)
                    .set("keepdim", keepdim),
                var(x, dims, correction, keepdim));
  return var_or_std("VarBackward0", x, dims, correction, keepdim, false);
}

Tensor std(const Tensor& x, IntList dims, std::int64_t correction, bool keepdim) {
  WEFT_TRACE_OP(Std, (x),
                ir::Attributes()
                    .set("dim", ops_detail::to_ints(dims))
                    .set("correction", correction)
                    .set("keepdim", keepdim),
                weft::std(x, dims, correction, keepdim));
  return var_or_std("StdBackward0", x, dims, correction, keepdim, true);
}

// var_mean and std_mean: the two reductions of one call, each with its own gradient (PyTorch's
// var_mean_backward adds the var (std) part and the mean part). mean takes the dims as given
// (none: all), and the checks are var's, which come first in ATen.
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, IntList dims, std::int64_t correction,
                                    bool keepdim) {
  WEFT_TRACE_OP(VarMean, (x),
                ir::Attributes()
                    .set("dim", ops_detail::to_ints(dims))
                    .set("correction", correction)
                    .set("keepdim", keepdim),
                var_mean(x, dims, correction, keepdim));
  Tensor spread = var_or_std("VarMeanBackward0", x, dims, correction, keepdim, false);
  return {spread, mean(x, dims, keepdim)};
}

std::tuple<Tensor, Tensor> std_mean(const Tensor& x, IntList dims, std::int64_t correction,
                                    bool keepdim) {
  WEFT_TRACE_OP(StdMean, (x),
                ir::Attributes()
                    .set("dim", ops_detail::to_ints(dims))
                    .set("correction", correction)
                    .set("keepdim", keepdim),
                std_mean(x, dims, correction, keepdim));
  Tensor spread = var_or_std("StdMeanBackward0", x, dims, correction, keepdim, true);
  return {spread, mean(x, dims, keepdim)};
}

Tensor logsumexp(const Tensor& x0, IntList dims_in, bool keepdim) {
  WEFT_TRACE_OP(Logsumexp, (x0),
                ir::Attributes().set("dim", ops_detail::to_ints(dims_in)).set("keepdim", keepdim),
                logsumexp(x0, dims_in, keepdim));
  // Integers and bool are taken as float32, as PyTorch does.
  const Tensor x = x0.to(x0.is_floating_point() ? x0.dtype() : Dtype::Float32);
  const std::vector<std::int64_t> dims = wrap_dims(dims_in, x.dim());
  kernels::ReductionLayout l = kernels::reduction_layout(x, dims, keepdim);
  Tensor out = empty(l.out_shape, dtype(x.dtype()));
  kernels::dispatch_floating(x.dtype(), "logsumexp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = l.segments.data<T>();
    T* o = out.data<T>();
    const std::int64_t n = l.inner;
    parallel_for(0, l.outer, grain_for(n), [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t r = b; r < e; ++r) {
        const T* row = in + r * n;
        const Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>> values(row, n);
        // A NaN max makes every term, and so the result, NaN.
        T m = n == 0 ? -std::numeric_limits<T>::infinity()
                     : values.template maxCoeff<Eigen::PropagateNaN>();
        // Shift by the max for stability; an infinite max is not subtracted (inf - inf would
        // be NaN), so all -inf rows give log(0) = -inf and rows holding +inf give +inf.
        const bool all_low = m == -std::numeric_limits<T>::infinity();
        if (std::isinf(m)) m = T(0);
        T total = T(0);
        if (all_low) {
          // Every element is -inf (or the row is empty): Eigen's exp would give a tiny number
          // instead of 0 for -inf (it clamps its argument), so sum exactly.
          for (std::int64_t i = 0; i < n; ++i) total += std::exp(row[i]);
        } else {
          total = (values - m).exp().sum();
        }
        o[r] = std::log(total) + m;
      }
    });
  });
  const Shape keep_shape = l.keepdim_shape;
  autograd::record_function(
      "LogsumexpBackward0", {x}, {out}, {x, out}, [keep_shape](const Grads& g, const Saved& s) {
        // d/dx log sum exp(x) = exp(x - result): the softmax of x.
        return Grads{reshape(g[0], keep_shape) * exp(s[0] - reshape(s[1], keep_shape))};
      });
  return out;
}

}  // namespace weft
