// Index-driven accumulation: scatter (plain writes), scatter_add, scatter_reduce (sum, prod, mean,
// amax, amin, with or without self), index_add and index_put (x[index] = values, or += with
// accumulate). Each source element is combined into the element of the output that its index names,
// in the source's order (ATen's CPU order). The backward formulas are PyTorch's (derivatives.yaml,
// scatter_reduce_backward), written with engine ops so that a double backward is recorded too:
// amax/amin share a tie's gradient evenly, prod's exclusive products are exact where one zero is
// scattered to an element.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/wrapping.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace {

enum class Reduction { Sum, Prod, Mean, Amax, Amin };

Reduction parse_reduction(const std::string& reduce) {
  if (reduce == "sum") return Reduction::Sum;
  if (reduce == "prod") return Reduction::Prod;
  if (reduce == "mean") return Reduction::Mean;
  if (reduce == "amax") return Reduction::Amax;
  if (reduce == "amin") return Reduction::Amin;
  throw Error("reduce argument must be either sum, prod, mean, amax or amin, got " + reduce);
}

// Where every source element goes: flat offsets into the (contiguous) output and source.
struct ScatterPlan {
  std::vector<std::int64_t> target;
  std::vector<std::int64_t> source;
};

// scatter_add / scatter_reduce: index has self's rank, is no larger than src anywhere and no
// larger than self apart from `dim`; index[p] names the position along `dim` of src[p]'s target.
ScatterPlan plan_scatter(const char* op, const Tensor& self, std::int64_t d, const Tensor& index,
                         const Tensor& src) {
  if (index.dtype() != Dtype::Int64) {
    throw Error(std::string(op) + "(): Expected dtype int64 for index");
  }
  if (src.dtype() != self.dtype()) {
    throw Error(std::string(op) + "(): Expected self.dtype to be equal to src.dtype");
  }
  // 0-d tensors act as 1-d tensors of one element, as in gather.
  const Shape xs = self.dim() == 0 ? Shape{1} : self.sizes();
  const Shape is = index.dim() == 0 ? Shape{1} : index.sizes();
  const Shape ss = src.dim() == 0 ? Shape{1} : src.sizes();
  if (is.size() != xs.size() || ss.size() != xs.size()) {
    throw Error("Index tensor must have the same number of dimensions as self tensor");
  }
  const auto rank = static_cast<std::int64_t>(xs.size());
  for (std::int64_t i = 0; i < rank; ++i) {
    if ((i != d && is[i] > xs[i]) || is[i] > ss[i]) {
      throw Error("Expected index " + shape_str(index.sizes()) + " to be smaller than self " +
                  shape_str(self.sizes()) + " apart from dimension " + std::to_string(d) +
                  " and to be smaller size than src " + shape_str(src.sizes()));
    }
  }
  const std::vector<std::int64_t> values = index.to_vector<std::int64_t>();
  const Shape xstride = contiguous_strides(xs), sstride = contiguous_strides(ss);
  ScatterPlan plan;
  plan.target.reserve(values.size());
  plan.source.reserve(values.size());
  std::vector<std::int64_t> pos(static_cast<std::size_t>(rank), 0);
  for (std::int64_t v : values) {
    if (v < 0 || v >= xs[d]) {
      throw Error("index " + std::to_string(v) + " is out of bounds for dimension " +
                  std::to_string(d) + " with size " + std::to_string(xs[d]));
    }
    std::int64_t t = 0, s = 0;
    for (std::int64_t i = 0; i < rank; ++i) {
      t += (i == d ? v : pos[i]) * xstride[i];
      s += pos[i] * sstride[i];
    }
    plan.target.push_back(t);
    plan.source.push_back(s);
    for (std::int64_t i = rank - 1; i >= 0; --i) {
      if (++pos[i] < is[i]) break;
      pos[i] = 0;
    }
  }
  return plan;
}

// index_add: source has self's shape but `index.numel()` along `dim`; slice i of source goes
// to slice index[i] of the output.
ScatterPlan plan_index_add(const Tensor& self, std::int64_t d, const Tensor& index,
                           const Tensor& source) {
  if (index.dim() > 1) throw Error("index_add_(): Index is supposed to be a vector");
  if (index.dtype() != Dtype::Int64 && index.dtype() != Dtype::Int32) {
    throw Error("index_add_(): Expected dtype int32/int64 for index");
  }
  if (source.dtype() != self.dtype()) {
    throw Error("index_add_(): self (" + std::string(dtype_name(self.dtype())) + ") and source (" +
                dtype_name(source.dtype()) + ") must have the same scalar type");
  }
  const Shape xs = self.dim() == 0 ? Shape{1} : self.sizes();
  const Shape ss = source.dim() == 0 ? Shape{1} : source.sizes();
  const std::int64_t count = index.numel();
  bool fits = xs.size() == ss.size() && ss[static_cast<std::size_t>(d)] == count;
  for (std::size_t i = 0; fits && i < xs.size(); ++i) {
    fits = i == static_cast<std::size_t>(d) || xs[i] == ss[i];
  }
  if (!fits) {
    throw Error("index_add_(): source " + shape_str(source.sizes()) +
                " must have the shape of self " + shape_str(self.sizes()) + " with " +
                std::to_string(count) + " entries (the index's) along dimension " +
                std::to_string(d));
  }
  const std::vector<std::int64_t> values = index.to(Dtype::Int64).to_vector<std::int64_t>();
  const auto rank = static_cast<std::int64_t>(xs.size());
  const Shape xstride = contiguous_strides(xs);
  ScatterPlan plan;
  std::vector<std::int64_t> pos(static_cast<std::size_t>(rank), 0);
  const std::int64_t numel = source.numel();
  for (std::int64_t s = 0; s < numel; ++s) {
    const std::int64_t v = values[static_cast<std::size_t>(pos[d])];
    if (v < -xs[d] || v >= xs[d]) {
      throw Error("index out of range in self: index " + std::to_string(v) + " for dimension " +
                  std::to_string(d) + " with size " + std::to_string(xs[d]));
    }
    std::int64_t t = 0;
    for (std::int64_t i = 0; i < rank; ++i)
      t += (i == d ? (v < 0 ? v + xs[d] : v) : pos[i]) * xstride[i];
    plan.target.push_back(t);
    plan.source.push_back(s);
    for (std::int64_t i = rank - 1; i >= 0; --i) {
      if (++pos[i] < ss[i]) break;
      pos[i] = 0;
    }
  }
  return plan;
}

// The forward: out = self with every planned source element combined into its target, scaled
// by `alpha` (index_add); targets that get none keep self. Also returns, per output element,
// how many source elements reached it (mean's divisor and the backward's mask).
Tensor combine(const Tensor& self0, const Tensor& src0, const ScatterPlan& plan,
               Reduction reduction, bool include_self, double alpha,
               std::vector<std::int64_t>* counts_out) {
  const Tensor self = self0.contiguous(), src = src0.contiguous();
  Tensor out = self.detach().clone();
  std::vector<std::int64_t> counts(static_cast<std::size_t>(self.numel()), 0);
  for (std::int64_t t : plan.target) ++counts[static_cast<std::size_t>(t)];
  kernels::dispatch_numeric(self.dtype(), "scatter_reduce", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* op = out.data<T>();
    const T* sp = src.data<T>();
    if (!include_self) {
      // The reduction's identity where a source element lands.
      T identity = T(0);
      if (reduction == Reduction::Prod) identity = T(1);
      if (reduction == Reduction::Amax) {
        identity = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                        : std::numeric_limits<T>::lowest();
      }
      if (reduction == Reduction::Amin) {
        identity = std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                        : std::numeric_limits<T>::max();
      }
      for (std::int64_t t : plan.target) op[t] = identity;
    }
    const T scale = static_cast<T>(alpha);
    for (std::size_t k = 0; k < plan.target.size(); ++k) {
      T& acc = op[plan.target[k]];
      const T v = sp[plan.source[k]];
      switch (reduction) {
        case Reduction::Sum:
        case Reduction::Mean:
          acc = kernels::wrapping_add(acc, alpha == 1.0 ? v : kernels::wrapping_mul(scale, v));
          break;
        case Reduction::Prod:
          acc = kernels::wrapping_mul(acc, v);
          break;
        case Reduction::Amax:
          acc = (v != v || v > acc) ? v : acc;  // NaN propagates, as max does
          break;
        case Reduction::Amin:
          acc = (v != v || v < acc) ? v : acc;
          break;
      }
    }
    if (reduction == Reduction::Mean) {
      for (std::size_t i = 0; i < counts.size(); ++i) {
        if (counts[i] == 0) continue;
        const auto n = static_cast<T>(counts[i] + (include_self ? 1 : 0));
        if constexpr (std::is_integral_v<T>) {
          // Integer means round down (ATen divides with rounding_mode="floor").
          T q = op[i] / n;
          if ((op[i] % n != 0) && ((op[i] < 0) != (n < 0))) --q;
          op[i] = q;
        } else {
          op[i] = op[i] / n;
        }
      }
    }
  });
  if (counts_out) *counts_out = std::move(counts);
  return out;
}

// self with every planned source element written to its target, in the index's order: with a
// repeated index the last write stays (ATen's CPU order; PyTorch calls which one undefined).
Tensor assign(const Tensor& self, const Tensor& src0, const ScatterPlan& plan) {
  Tensor out = self.detach().contiguous().clone();
  const Tensor src = src0.contiguous();
  kernels::dispatch(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* op = out.data<T>();
    const T* sp = src.data<T>();
    for (std::size_t k = 0; k < plan.target.size(); ++k) op[plan.target[k]] = sp[plan.source[k]];
  });
  return out;
}

Tensor counts_tensor(const std::vector<std::int64_t>& counts, const Shape& shape, Dtype dtype,
                     std::int64_t plus) {
  std::vector<double> values(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    values[i] = static_cast<double>(counts[i] + (counts[i] > 0 ? plus : 0));
  }
  return from_blob(values.data(), shape, Dtype::Float64).to(dtype);
}

Tensor scattered_mask(const std::vector<std::int64_t>& counts, const Shape& shape) {
  std::vector<double> values(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) values[i] = counts[i] > 0 ? 1.0 : 0.0;
  return from_blob(values.data(), shape, Dtype::Float64).to(Dtype::Bool);
}

std::vector<Tensor> scatter_reduce_backward(const Tensor& g, const Tensor& self, std::int64_t dim,
                                            const Tensor& index, const Tensor& src,
                                            const Tensor& result, const Tensor& scattered,
                                            const Tensor& divisor, Reduction reduction,
                                            bool include_self, const std::string& reduce) {
  Tensor grad_self, grad_src;
  const Tensor zero = zeros_like(g);
  switch (reduction) {
    case Reduction::Sum:
      grad_self = g;
      grad_src = gather(g, dim, index);
      break;
    case Reduction::Mean: {
      const Tensor shared = div(g, divisor);
      grad_self = shared;
      grad_src = gather(shared, dim, index);
      break;
    }
    case Reduction::Amax:
    case Reduction::Amin: {
      // A tie shares the gradient evenly among self and the sources that hold the result.
      const Tensor value = gather(result, dim, index);
      const Tensor self_is_result = eq(self, result).to(g.dtype());
      const Tensor src_is_result = eq(src, value).to(g.dtype());
      const Tensor holders = scatter_add(self_is_result, dim, index, src_is_result);
      const Tensor shared = div(g, holders);
      grad_self = mul(self_is_result, shared);
      grad_src = mul(src_is_result, gather(shared, dim, index));
      break;
    }
    case Reduction::Prod: {
      // Exclusive products: self's from the product with self's zeros read as ones; a source's
      // from the product with that source read as one where it is its target's only zero.
      const Tensor one = ones_like(self);
      const Tensor masked_self = where(eq(self, zeros_like(self)), one, self);
      const Tensor masked_self_result =
          scatter_reduce(masked_self, dim, index, src, reduce, include_self);
      grad_self = div(mul(g, masked_self_result), masked_self);
      const Tensor src_zero = eq(src, zeros_like(src));
      const Tensor zeros_at_target =
          gather(scatter_add(zeros_like(self), dim, index, src_zero.to(self.dtype())), dim, index);
      const Tensor single_zero =
          logical_and(src_zero, eq(zeros_at_target, ones_like(zeros_at_target)));
      const Tensor masked_src = where(single_zero, ones_like(src), src);
      const Tensor masked_src_result =
          scatter_reduce(self, dim, index, masked_src, reduce, include_self);
      grad_src =
          where(single_zero, gather(mul(g, masked_src_result), dim, index),
                div(gather(mul(g, result), dim, index), where(src_zero, ones_like(src), src)));
      break;
    }
  }
  if (!include_self) grad_self = where(scattered, zero, grad_self);
  return {grad_self, grad_src};
}

Tensor scatter_reduce_impl(const Tensor& self, std::int64_t dim_in, const Tensor& index,
                           const Tensor& src, const std::string& reduce, bool include_self,
                           const char* op, const char* backward_name) {
  const Reduction reduction = parse_reduction(reduce);
  const std::int64_t d = wrap_dim(dim_in, std::max<std::int64_t>(self.dim(), 1));
  const ScatterPlan plan = plan_scatter(op, self, d, index, src);
  std::vector<std::int64_t> counts;
  Tensor out = combine(self, src, plan, reduction, include_self, 1.0, &counts);
  if (self.is_floating_point()) {
    const Tensor scattered = scattered_mask(counts, self.sizes());
    const Tensor divisor =
        reduction == Reduction::Mean
            ? add(counts_tensor(counts, self.sizes(), self.dtype(), include_self ? 1 : 0),
                  where(scattered, zeros_like(self), ones_like(self)))
            : Tensor();
    autograd::record_function(
        backward_name, {self, src}, {out}, {self, index, src, out, scattered, divisor},
        [dim_in, reduction, include_self, reduce](const std::vector<Tensor>& g,
                                                  const std::vector<Tensor>& s) {
          return scatter_reduce_backward(g[0], s[0], dim_in, s[1], s[2], s[3], s[4], s[5],
                                         reduction, include_self, reduce);
        });
  }
  return out;
}

}  // namespace

Tensor scatter_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src) {
  WEFT_TRACE_OP(ScatterAdd, (self, index, src), ir::Attributes().set("dim", dim),
                scatter_add(self, dim, index, src));
  return scatter_reduce_impl(self, dim, index, src, "sum", true, "scatter_add",
                             "ScatterAddBackward0");
}

Tensor scatter_reduce(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src,
                      std::string_view reduce, bool include_self) {
  WEFT_TRACE_OP(ScatterReduce, (self, index, src),
                ir::Attributes()
                    .set("dim", dim)
                    .set("reduce", std::string(reduce))
                    .set("include_self", include_self),
                scatter_reduce(self, dim, index, src, reduce, include_self));
  return scatter_reduce_impl(self, dim, index, src, std::string(reduce), include_self,
                             "scatter_reduce", "ScatterReduceBackward0");
}

Tensor scatter(const Tensor& self, std::int64_t dim_in, const Tensor& index, const Tensor& src) {
  WEFT_TRACE_OP(Scatter, (self, index, src), ir::Attributes().set("dim", dim_in),
                scatter(self, dim_in, index, src));
  const std::int64_t d = wrap_dim(dim_in, std::max<std::int64_t>(self.dim(), 1));
  const ScatterPlan plan = plan_scatter("scatter", self, d, index, src);
  Tensor out = assign(self, src, plan);
  if (self.is_floating_point()) {
    autograd::record_function("ScatterBackward0", {self, src}, {out}, {index},
                              [dim_in](const std::vector<Tensor>& g, const std::vector<Tensor>& s) {
                                // derivatives.yaml: self's gradient is g with the written elements
                                // zeroed; src's is g read back at them.
                                const Tensor overwritten = zeros(s[0].sizes(), dtype(g[0].dtype()));
                                return std::vector<Tensor>{scatter(g[0], dim_in, s[0], overwritten),
                                                           gather(g[0], dim_in, s[0])};
                              });
  }
  return out;
}

Tensor index_add(const Tensor& self, std::int64_t dim_in, const Tensor& index, const Tensor& source,
                 double alpha) {
  WEFT_TRACE_OP(IndexAdd, (self, index, source),
                ir::Attributes().set("dim", dim_in).set("alpha", alpha),
                index_add(self, dim_in, index, source, alpha));
  if (!self.is_floating_point() && alpha != static_cast<double>(static_cast<std::int64_t>(alpha))) {
    throw Error("For integral input tensors, argument alpha must not be a floating point number.");
  }
  const std::int64_t d = wrap_dim(dim_in, std::max<std::int64_t>(self.dim(), 1));
  const ScatterPlan plan = plan_index_add(self, d, index, source);
  Tensor out = combine(self, source, plan, Reduction::Sum, true, alpha, nullptr);
  if (self.is_floating_point()) {
    const Shape source_shape = source.sizes();
    autograd::record_function(
        "IndexAddBackward0", {self, source}, {out}, {index},
        [d, alpha, source_shape](const std::vector<Tensor>& g, const std::vector<Tensor>& s) {
          // A 0-d source reads the one selected element.
          Tensor grad_source = index_select(g[0].dim() == 0 ? reshape(g[0], {1}) : g[0], d, s[0]);
          grad_source = reshape(grad_source, source_shape);
          if (alpha != 1.0)
            grad_source = mul(grad_source, scalar_tensor(alpha, dtype(g[0].dtype())));
          return std::vector<Tensor>{g[0], grad_source};
        });
  }
  return out;
}

Tensor index_put(const Tensor& self, const Tensor& index, const Tensor& values, bool accumulate) {
  WEFT_TRACE_OP(IndexPut, (self, index, values), ir::Attributes().set("accumulate", accumulate),
                index_put(self, index, values, accumulate));
  if (index.dtype() != Dtype::Int64 && index.dtype() != Dtype::Int32) {
    throw Error("tensors used as indices must be long, int, byte or bool tensors");
  }
  if (self.dim() == 0) throw Error("too many indices for tensor of dimension 0 (got 1)");
  // torch.index_put takes a list of indices; weft's op is its one-index form (dim 0).
  if (index.dim() != 1) {
    throw Error("index_put: weft's index_put takes one 1-d index into dim 0, got a " +
                std::to_string(index.dim()) + "-d index");
  }
  if (values.dtype() != self.dtype()) {
    throw Error(std::string("Index put requires the source and destination dtypes match, got ") +
                torch_scalar_type_name(self.dtype()) + " for the destination and " +
                torch_scalar_type_name(values.dtype()) + " for the source.");
  }
  Shape slots = self.sizes();
  slots[0] = index.numel();
  bool broadcasts = values.dim() <= self.dim();
  for (std::int64_t i = 1; broadcasts && i <= values.dim(); ++i) {
    const std::int64_t v = values.sizes()[static_cast<std::size_t>(values.dim() - i)];
    broadcasts = v == 1 || v == slots[slots.size() - static_cast<std::size_t>(i)];
  }
  if (!broadcasts) {
    throw Error("shape mismatch: value tensor of shape " + shape_str(values.sizes()) +
                " cannot be broadcast to indexing result of shape " + shape_str(slots));
  }
  const std::int64_t rows = self.sizes()[0];
  std::vector<std::int64_t> wrapped = index.to(Dtype::Int64).to_vector<std::int64_t>();
  for (std::int64_t& v : wrapped) {
    if (v < -rows || v >= rows) {
      throw Error("index " + std::to_string(v) + " is out of bounds for dimension 0 with size " +
                  std::to_string(rows));
    }
    if (v < 0) v += rows;
  }
  Tensor source;
  {
    autograd::NoGradGuard guard;
    source = expand(values.detach(), slots).contiguous();
  }
  const ScatterPlan plan = plan_index_add(self, 0, index, source);
  Tensor out;
  if (accumulate) {
    out = combine(self, source, plan, Reduction::Sum, true, 1.0, nullptr);
  } else {
    out = assign(self, source, plan);
  }
  if (self.is_floating_point()) {
    const Shape values_shape = values.sizes();
    autograd::record_function(
        "IndexPutBackward0", {self, values}, {out}, {tensor(wrapped)},
        [accumulate, values_shape](const std::vector<Tensor>& g, const std::vector<Tensor>& s) {
          // self's gradient: g, with the written rows zeroed unless they were added to;
          // values': the written rows of g, summed over values' broadcast dims.
          const Tensor grad_self =
              accumulate ? g[0]
                         : index_put(g[0], s[0], scalar_tensor(0.0, dtype(g[0].dtype())), false);
          return std::vector<Tensor>{grad_self,
                                     autograd::sum_to(index_select(g[0], 0, s[0]), values_shape)};
        });
  }
  return out;
}

}  // namespace weft
