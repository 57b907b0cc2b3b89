// Triangles and indexing. gather, index_select (and embedding, pad, interpolate in their own
// files) are "index maps": out.flat[o] = Σ_k w[o,k] · x.flat[idx[o,k]]. The map is a fixed
// sparse matrix A, so the forward is A·x and the backward is Aᵀ·g (a scatter-add); each of the
// two primitives below is the other's derivative, which also gives double backward.
#include <algorithm>
#include <string>

#include "index_map.h"
#include "kernels/copy.h"
#include "kernels/dispatch.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/parallel.h"

namespace weft {

namespace detail {

// out.flat[o] = Σ_k w[o*K+k] · x.flat[idx[o*K+k]] (entries with idx < 0 are skipped). Without
// weights K must be 1 and entries with idx < 0 take `fill` (any dtype); with weights (float64,
// one per entry) x must be floating. The backward scatters through `grad_idx` (default: idx),
// which may drop entries whose source gets no gradient (embedding's padding_idx).
Tensor take_linear(const char* name, const Tensor& x0, const Tensor& idx, const Tensor& weights,
                   std::int64_t k, IntList out_shape, double fill, const Tensor& grad_idx) {
  const Tensor x = x0.contiguous();
  Tensor out = empty(out_shape, dtype(x.dtype()));
  const std::int64_t m = out.numel();
  const std::int64_t* ip = idx.data<std::int64_t>();
  constexpr std::int64_t kGrain = 16384;
  if (weights.defined()) {
    const double* wp = weights.data<double>();
    kernels::dispatch_floating(x.dtype(), name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = x.data<T>();
      T* op = out.data<T>();
      parallel_for(0, m, kGrain, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t o = b; o < e; ++o) {
          T acc = 0;
          for (std::int64_t j = o * k; j < (o + 1) * k; ++j) {
            if (ip[j] >= 0) acc += xp[ip[j]] * static_cast<T>(wp[j]);
          }
          op[o] = acc;
        }
      });
    });
  } else {
    kernels::dispatch(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = x.data<T>();
      T* op = out.data<T>();
      const T f = kernels::convert<T>(fill);
      parallel_for(0, m, kGrain, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t o = b; o < e; ++o) op[o] = ip[o] >= 0 ? xp[ip[o]] : f;
      });
    });
  }
  if (x.is_floating_point()) {
    const Shape in_shape = x.sizes();
    autograd::record_function(
        name, {x}, {out}, {grad_idx.defined() ? grad_idx : idx, weights},
        [in_shape, k](const std::vector<Tensor>& g, const std::vector<Tensor>& s) {
          return std::vector<Tensor>{scatter_linear(g[0], s[0], s[1], k, in_shape)};
        });
  }
  return out;
}

// The transpose of take_linear: gx.flat[idx[o*K+k]] += w[o*K+k] · g.flat[o]; g floating.
Tensor scatter_linear(const Tensor& g0, const Tensor& idx, const Tensor& weights, std::int64_t k,
                      IntList in_shape) {
  const Tensor g = g0.contiguous();
  Tensor out = zeros(in_shape, dtype(g.dtype()));
  const std::int64_t m = g.numel();
  const std::int64_t* ip = idx.data<std::int64_t>();
  const double* wp = weights.defined() ? weights.data<double>() : nullptr;
  kernels::dispatch_floating(g.dtype(), "scatter_add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* gp = g.data<T>();
    T* op = out.data<T>();
    // Serial: different outputs may scatter into the same source element.
    for (std::int64_t o = 0; o < m; ++o) {
      for (std::int64_t j = o * k; j < (o + 1) * k; ++j) {
        if (ip[j] < 0) continue;
        op[ip[j]] += wp ? gp[o] * static_cast<T>(wp[j]) : gp[o];
      }
    }
  });
  const Shape g_shape = g.sizes();
  autograd::record_function(
      "ScatterAddBackward0", {g}, {out}, {idx, weights},
      [g_shape, k](const std::vector<Tensor>& gg, const std::vector<Tensor>& s) {
        return std::vector<Tensor>{
            take_linear("TakeBackward0", gg[0], s[0], s[1], k, g_shape, 0.0, Tensor())};
      });
  return out;
}
}  // namespace detail

namespace {

Tensor triangle(const char* name, const Tensor& x0, std::int64_t diagonal, bool lower) {
  if (x0.dim() < 2) {
    throw Error(std::string(name) + ": input tensor must have at least 2 dimensions");
  }
  const Tensor x = x0.contiguous();
  Tensor out = empty(x.sizes(), dtype(x.dtype()));
  const std::int64_t rows = x.size(-2), cols = x.size(-1);
  const std::int64_t batch = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  kernels::dispatch(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    parallel_for(0, batch * rows,
                 std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(cols, 1)),
                 [&](std::int64_t b, std::int64_t e) {
                   for (std::int64_t row = b; row < e; ++row) {
                     const std::int64_t r = row % rows;
                     for (std::int64_t c = 0; c < cols; ++c) {
                       const bool keep = lower ? c - r <= diagonal : c - r >= diagonal;
                       op[row * cols + c] = keep ? xp[row * cols + c] : T(0);
                     }
                   }
                 });
  });
  // The mask is linear: the gradient is the same triangle of the incoming gradient.
  autograd::record_function(
      lower ? "TrilBackward0" : "TriuBackward0", {x}, {out}, {},
      [diagonal, lower](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
        return std::vector<Tensor>{lower ? tril(g[0], diagonal) : triu(g[0], diagonal)};
      });
  return out;
}

}  // namespace

Tensor tril(const Tensor& x, std::int64_t diagonal) {
  WEFT_TRACE_OP(Tril, (x), ir::Attributes().set("diagonal", diagonal), tril(x, diagonal));
  return triangle("tril", x, diagonal, true);
}

Tensor triu(const Tensor& x, std::int64_t diagonal) {
  WEFT_TRACE_OP(Triu, (x), ir::Attributes().set("diagonal", diagonal), triu(x, diagonal));
  return triangle("triu", x, diagonal, false);
}

Tensor gather(const Tensor& x, std::int64_t dim_in, const Tensor& index) {
  WEFT_TRACE_OP(Gather, (x, index), ir::Attributes().set("dim", dim_in), gather(x, dim_in, index));
  const std::int64_t d = wrap_dim(dim_in, x.dim());
  if (index.dtype() != Dtype::Int64) throw Error("gather(): Expected dtype int64 for index");
  // PyTorch treats 0-dim tensors as 1-dim of size 1 here.
  const Shape xs = x.dim() == 0 ? Shape{1} : x.sizes();
  const Shape is = index.dim() == 0 ? Shape{1} : index.sizes();
  if (xs.size() != is.size()) {
    throw Error("Index tensor must have the same number of dimensions as input tensor");
  }
  const std::int64_t rank = static_cast<std::int64_t>(xs.size());
  for (std::int64_t i = 0; i < rank; ++i) {
    if (i != d && is[i] > xs[i]) {
      throw Error("Size does not match at dimension " + std::to_string(i) + " expected index " +
                  shape_str(index.sizes()) + " to be smaller than self " + shape_str(x.sizes()) +
                  " apart from dimension " + std::to_string(d));
    }
  }
  const std::vector<std::int64_t> values = index.to_vector<std::int64_t>();
  const Shape xstride = contiguous_strides(xs);
  Tensor idx = empty({static_cast<std::int64_t>(values.size())}, dtype(Dtype::Int64));
  std::int64_t* ip = idx.data<std::int64_t>();
  // Odometer over the index's shape; `base` is the source offset without dimension d.
  std::vector<std::int64_t> pos(static_cast<std::size_t>(rank), 0);
  std::int64_t base = 0;
  for (std::size_t o = 0; o < values.size(); ++o) {
    const std::int64_t v = values[o];
    if (v < 0 || v >= xs[d]) {
      throw Error("index " + std::to_string(v) + " is out of bounds for dimension " +
                  std::to_string(d) + " with size " + std::to_string(xs[d]));
    }
    ip[o] = base + v * xstride[d];
    for (std::int64_t i = rank - 1; i >= 0; --i) {
      ++pos[i];
      if (i != d) base += xstride[i];
      if (pos[i] < is[i]) break;
      if (i != d) base -= xstride[i] * is[i];
      pos[i] = 0;
    }
  }
  return detail::take_linear("GatherBackward0", x, idx, Tensor(), 1, index.sizes(), 0.0, Tensor());
}

Tensor index_select(const Tensor& x, std::int64_t dim_in, const Tensor& index) {
  WEFT_TRACE_OP(IndexSelect, (x, index), ir::Attributes().set("dim", dim_in),
                index_select(x, dim_in, index));
  const std::int64_t d = wrap_dim(dim_in, x.dim());
  if (index.dim() > 1) throw Error("index_select(): Index is supposed to be a vector");
  if (x.dim() == 0 && index.numel() != 1) {
    throw Error("index_select(): Index to scalar can have only 1 value, got " +
                std::to_string(index.numel()) + " value(s)");
  }
  if (index.dtype() != Dtype::Int64 && index.dtype() != Dtype::Int32) {
    throw Error("index_select(): Expected dtype int32 or int64 for index");
  }
  const std::vector<std::int64_t> values = index.to_vector<std::int64_t>();
  const std::int64_t n = static_cast<std::int64_t>(values.size());
  const std::int64_t size = x.dim() == 0 ? 1 : x.size(d);
  for (std::int64_t v : values) {
    if (v < 0 || v >= size) throw Error("index out of range in self");
  }
  Shape out_shape = x.sizes();
  if (x.dim() > 0) out_shape[d] = n;
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t i = 0; i < x.dim(); ++i) {
    if (i < d) outer *= x.size(i);
    if (i > d) inner *= x.size(i);
  }
  Tensor idx = empty({outer * n * inner}, dtype(Dtype::Int64));
  std::int64_t* ip = idx.data<std::int64_t>();
  for (std::int64_t a = 0; a < outer; ++a) {
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t src = (a * size + values[j]) * inner;
      std::int64_t* row = ip + (a * n + j) * inner;
      for (std::int64_t b = 0; b < inner; ++b) row[b] = src + b;
    }
  }
  return detail::take_linear("IndexSelectBackward0", x, idx, Tensor(), 1, out_shape, 0.0, Tensor());
}

}  // namespace weft
