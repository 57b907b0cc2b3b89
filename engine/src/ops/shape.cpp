// Views and reshapes: new strides over the same storage; backward maps the gradient back to
// the input's shape (reshape, inverse permutation, sum over expanded dims, scatter into zeros).
#include <algorithm>
#include <numeric>

#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace {

Tensor make_view(const Tensor& base, Shape sizes, Shape strides, std::int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = base.storage();
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = base.dtype();
  impl->is_view = true;
  impl->view_base = base.impl()->view_base ? base.impl()->view_base : base.impl_ptr();
  impl->view_version = base.version();
  return Tensor(std::move(impl));
}

// Resolves one -1 in `shape` for a tensor of `numel` elements.
Shape infer_size(IntList shape, std::int64_t numel) {
  Shape out = shape.vec();
  std::int64_t known = 1;
  std::optional<std::size_t> infer;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer) throw Error("only one dimension can be inferred");
      infer = i;
    } else if (out[i] < 0) {
      throw Error("invalid shape dimension " + std::to_string(out[i]));
    } else {
      known *= out[i];
    }
  }
  const std::string message =
      "shape '" + shape_str(shape) + "' is invalid for input of size " + std::to_string(numel);
  if (infer) {
    if (known == 0 || numel % known != 0) throw Error(message);
    out[*infer] = numel / known;
  } else if (known != numel) {
    throw Error(message);
  }
  return out;
}

// Strides for viewing (sizes, strides) as `shape` without a copy, if possible (ATen's
// computeStride): each run of merged old dims must be contiguous within itself.
std::optional<Shape> view_strides(const Shape& sizes, const Shape& strides, const Shape& shape) {
  Shape out(shape.size());
  if (sizes.empty()) {
    std::fill(out.begin(), out.end(), 1);
    return out;
  }
  const std::int64_t numel = numel_of(sizes);
  if (numel == 0) {
    if (sizes == shape) return strides;
    return contiguous_strides(shape);
  }
  std::int64_t view_d = static_cast<std::int64_t>(shape.size()) - 1;
  std::int64_t chunk_base_stride = strides.back();
  std::int64_t tensor_numel = 1;
  std::int64_t view_numel = 1;
  for (std::int64_t d = static_cast<std::int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

Tensor view_impl(const Tensor& x, const Shape& shape, bool allow_copy) {
  std::optional<Shape> strides = view_strides(x.sizes(), x.strides(), shape);
  Tensor out;
  if (strides) {
    out = make_view(x, shape, *strides, x.storage_offset());
  } else if (allow_copy) {
    autograd::NoGradGuard guard;  // the gradient is recorded once, on the reshape below
    const Tensor c = x.clone();
    out = make_view(c, shape, contiguous_strides(shape), 0);
  } else {
    throw Error(
        "view size is not compatible with input tensor's size and stride (at least one "
        "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  }
  const Shape input_shape = x.sizes();
  autograd::record_function(
      "ViewBackward0", {x}, {out}, {},
      [input_shape](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
        return std::vector<Tensor>{reshape(g[0], input_shape)};
      });
  return out;
}

// Scatters `grad` into zeros of `input_shape` through the view that `make_slot` carves out.
template <typename MakeSlot>
Tensor scatter_into_zeros(const Tensor& grad, const Shape& input_shape, MakeSlot make_slot) {
  autograd::NoGradGuard guard;
  Tensor full = zeros(input_shape, dtype(grad.dtype()));
  make_slot(full).copy_(grad);
  return full;
}

}  // namespace

Tensor view(const Tensor& x, IntList shape) {
  WEFT_TRACE_OP(Reshape, (x), ir::Attributes().set("shape", ops_detail::to_ints(shape)),
                view(x, shape));
  return view_impl(x, infer_size(shape, x.numel()), /*allow_copy=*/false);
}

Tensor reshape(const Tensor& x, IntList shape) {
  WEFT_TRACE_OP(Reshape, (x), ir::Attributes().set("shape", ops_detail::to_ints(shape)),
                reshape(x, shape));
  return view_impl(x, infer_size(shape, x.numel()), /*allow_copy=*/true);
}

Tensor flatten(const Tensor& x, std::int64_t start_dim, std::int64_t end_dim) {
  WEFT_TRACE_OP(Flatten, (x), ir::Attributes().set("start_dim", start_dim).set("end_dim", end_dim),
                flatten(x, start_dim, end_dim));
  const std::int64_t rank = x.dim();
  if (rank == 0) return reshape(x, {1});
  const std::int64_t s = wrap_dim(start_dim, rank);
  const std::int64_t e = wrap_dim(end_dim, rank);
  if (s > e) throw Error("flatten() has invalid args: start_dim cannot come after end_dim");
  Shape shape(x.sizes().begin(), x.sizes().begin() + s);
  std::int64_t merged = 1;
  for (std::int64_t d = s; d <= e; ++d) merged *= x.size(d);
  shape.push_back(merged);
  shape.insert(shape.end(), x.sizes().begin() + e + 1, x.sizes().end());
  return reshape(x, shape);
}

Tensor squeeze(const Tensor& x, IntList dims) {
  WEFT_TRACE_OP(Squeeze, (x), ir::Attributes().set("dim", ops_detail::to_ints(dims)),
                squeeze(x, dims));
  const std::vector<std::int64_t> which = wrap_dims(dims, x.dim(), /*empty_is_all=*/true);
  Shape sizes, strides;
  for (std::int64_t d = 0; d < x.dim(); ++d) {
    const bool listed = std::find(which.begin(), which.end(), d) != which.end();
    if (listed && x.size(d) == 1) continue;
    sizes.push_back(x.size(d));
    strides.push_back(x.stride(d));
  }
  Tensor out = make_view(x, sizes, strides, x.storage_offset());
  const Shape input_shape = x.sizes();
  autograd::record_function(
      "SqueezeBackward0", {x}, {out}, {},
      [input_shape](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
        return std::vector<Tensor>{reshape(g[0], input_shape)};
      });
  return out;
}

Tensor unsqueeze(const Tensor& x, std::int64_t dim) {
  WEFT_TRACE_OP(Unsqueeze, (x), ir::Attributes().set("dim", dim), unsqueeze(x, dim));
  const std::int64_t d = wrap_dim(dim, x.dim() + 1);
  Shape sizes = x.sizes();
  Shape strides = x.strides();
  const std::int64_t stride = d < x.dim() ? x.stride(d) * x.size(d) : 1;
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  Tensor out = make_view(x, sizes, strides, x.storage_offset());
  autograd::record_function("UnsqueezeBackward0", {x}, {out}, {},
                            [d](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
                              return std::vector<Tensor>{squeeze(g[0], {d})};
                            });
  return out;
}

Tensor permute(const Tensor& x, IntList dims) {
  WEFT_TRACE_OP(Permute, (x), ir::Attributes().set("dims", ops_detail::to_ints(dims)),
                permute(x, dims));
  if (static_cast<std::int64_t>(dims.size()) != x.dim()) {
    throw Error(
        "permute(sparse_coo): number of dimensions in the tensor input does not match "
        "the length of the desired ordering of dimensions i.e. input.dim() = " +
        std::to_string(x.dim()) + " is not equal to len(dims) = " + std::to_string(dims.size()));
  }
  std::vector<std::int64_t> order;
  std::vector<bool> used(static_cast<std::size_t>(x.dim()), false);
  for (std::int64_t d : dims) {
    const std::int64_t w = wrap_dim(d, x.dim());
    if (x.dim() > 0 && used[w]) throw Error("permute(): duplicate dims are not allowed.");
    if (x.dim() > 0) used[w] = true;
    order.push_back(w);
  }
  if (x.dim() == 0) order.clear();
  Shape sizes, strides;
  for (std::int64_t d : order) {
    sizes.push_back(x.size(d));
    strides.push_back(x.stride(d));
  }
  Tensor out = make_view(x, sizes, strides, x.storage_offset());
  std::vector<std::int64_t> inverse(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) inverse[order[i]] = static_cast<std::int64_t>(i);
  autograd::record_function("PermuteBackward0", {x}, {out}, {},
                            [inverse](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
                              return std::vector<Tensor>{permute(g[0], inverse)};
                            });
  return out;
}

Tensor transpose(const Tensor& x, std::int64_t dim0, std::int64_t dim1) {
  WEFT_TRACE_OP(Transpose, (x), ir::Attributes().set("dim0", dim0).set("dim1", dim1),
                transpose(x, dim0, dim1));
  if (x.dim() == 0) {
    wrap_dim(dim0, 0);
    wrap_dim(dim1, 0);
    return permute(x, {});
  }
  std::vector<std::int64_t> order(static_cast<std::size_t>(x.dim()));
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[wrap_dim(dim0, x.dim())], order[wrap_dim(dim1, x.dim())]);
  return permute(x, order);
}

Tensor expand(const Tensor& x, IntList sizes) {
  WEFT_TRACE_OP(Expand, (x), ir::Attributes().set("size", ops_detail::to_ints(sizes)),
                expand(x, sizes));
  const std::int64_t rank = static_cast<std::int64_t>(sizes.size());
  if (rank < x.dim()) {
    throw Error("expand: the number of sizes provided (" + std::to_string(rank) +
                ") must be greater or equal to the number of dimensions in the tensor (" +
                std::to_string(x.dim()) + ")");
  }
  Shape out_sizes(rank), out_strides(rank);
  for (std::int64_t i = rank - 1; i >= 0; --i) {
    const std::int64_t src = i - (rank - x.dim());
    const std::int64_t want = sizes[i];
    if (src < 0) {
      if (want < 0) throw Error("expand: -1 is not allowed in a leading, non-existing dimension");
      out_sizes[i] = want;
      out_strides[i] = 0;
      continue;
    }
    const std::int64_t have = x.size(src);
    if (want == -1 || want == have) {
      out_sizes[i] = have;
      out_strides[i] = x.stride(src);
    } else if (have == 1 && want >= 0) {
      out_sizes[i] = want;
      out_strides[i] = 0;
    } else {
      throw Error("The expanded size of the tensor (" + std::to_string(want) +
                  ") must match the existing size (" + std::to_string(have) +
                  ") at non-singleton dimension " + std::to_string(i) + ".  Target sizes: " +
                  shape_str(sizes) + ".  Tensor sizes: " + shape_str(x.sizes()));
    }
  }
  Tensor out = make_view(x, out_sizes, out_strides, x.storage_offset());
  const Shape input_shape = x.sizes();
  autograd::record_function(
      "ExpandBackward0", {x}, {out}, {},
      [input_shape](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
        return std::vector<Tensor>{autograd::sum_to(g[0], input_shape)};
      });
  return out;
}

Tensor slice(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t end,
             std::int64_t step) {
  WEFT_TRACE_OP(
      Slice, (x),
      ir::Attributes().set("dim", dim).set("start", start).set("end", end).set("step", step),
      slice(x, dim, start, end, step));
  if (x.dim() == 0) throw Error("slice() cannot be applied to a 0-dim tensor.");
  if (step <= 0) throw Error("slice step must be positive");
  const std::int64_t d = wrap_dim(dim, x.dim());
  const std::int64_t size = x.size(d);
  auto clip = [size](std::int64_t v) {
    if (v < 0) v += size;
    return std::clamp<std::int64_t>(v, 0, size);
  };
  start = clip(start);
  end = std::max(clip(end), start);
  const std::int64_t length = (end - start + step - 1) / step;
  Shape sizes = x.sizes();
  Shape strides = x.strides();
  sizes[d] = length;
  const std::int64_t offset = x.storage_offset() + (length > 0 ? start * x.stride(d) : 0);
  strides[d] = x.stride(d) * step;
  Tensor out = make_view(x, sizes, strides, offset);
  const Shape input_shape = x.sizes();
  autograd::record_function(
      "SliceBackward0", {x}, {out}, {},
      [input_shape, d, start, end, step](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
        return std::vector<Tensor>{scatter_into_zeros(g[0], input_shape, [&](const Tensor& full) {
          return slice(full, d, start, end, step);
        })};
      });
  return out;
}

Tensor select(const Tensor& x, std::int64_t dim, std::int64_t index) {
  WEFT_TRACE_OP(Select, (x), ir::Attributes().set("dim", dim).set("index", index),
                select(x, dim, index));
  if (x.dim() == 0) throw Error("select() cannot be applied to a 0-dim tensor.");
  const std::int64_t d = wrap_dim(dim, x.dim());
  const std::int64_t size = x.size(d);
  if (index < -size || index >= size) {
    throw Error("select(): index " + std::to_string(index) + " out of range for tensor of size " +
                shape_str(x.sizes()) + " at dimension " + std::to_string(d));
  }
  if (index < 0) index += size;
  Shape sizes = x.sizes();
  Shape strides = x.strides();
  const std::int64_t offset = x.storage_offset() + index * x.stride(d);
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  Tensor out = make_view(x, sizes, strides, offset);
  const Shape input_shape = x.sizes();
  autograd::record_function(
      "SelectBackward0", {x}, {out}, {},
      [input_shape, d, index](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
        return std::vector<Tensor>{scatter_into_zeros(
            g[0], input_shape, [&](const Tensor& full) { return select(full, d, index); })};
      });
  return out;
}

}  // namespace weft
