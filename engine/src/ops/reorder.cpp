// Reordering: flip, roll, repeat and diagonal. Each output element is one input element, so
// each op is an index map (detail::take_linear, ops/index.cpp): the forward takes x.flat[idx],
// the backward scatters the gradient back through the same indices (a repeated element sums
// the gradients of its copies), and double backward comes with it. pixel_shuffle and
// pixel_unshuffle are a reshape, a permute and a reshape, as ATen writes them.
#include <algorithm>
#include <string>

#include "index_map.h"
#include "traced.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace {

// For every element of an output of shape `out_shape` (row-major), the flat index into the
// contiguous input that `source` names: source(coordinates of the output element, input
// coordinates to fill in).
template <typename Source>
Tensor index_map(const Shape& out_shape, const Shape& in_shape, Source source) {
  const Shape in_strides = contiguous_strides(in_shape);
  std::int64_t count = 1;
  for (std::int64_t s : out_shape) count *= s;
  std::vector<std::int64_t> flat(static_cast<std::size_t>(count));
  std::vector<std::int64_t> at(out_shape.size(), 0);
  std::vector<std::int64_t> from(in_shape.size(), 0);
  for (std::int64_t o = 0; o < count; ++o) {
    source(at, from);
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < from.size(); ++d) offset += from[d] * in_strides[d];
    flat[static_cast<std::size_t>(o)] = offset;
    for (std::size_t d = at.size(); d-- > 0;) {  // the next output element, row-major
      if (++at[d] < out_shape[d]) break;
      at[d] = 0;
    }
  }
  return tensor(flat, {count});
}

std::vector<std::int64_t> wrapped_unique(const char* op, IntList dims, std::int64_t rank) {
  std::vector<std::int64_t> out;
  for (std::int64_t d : dims) {
    const std::int64_t w = wrap_dim(d, rank);
    if (std::find(out.begin(), out.end(), w) != out.end()) {
      throw Error(std::string(op) + ": dim " + std::to_string(w) +
                  " appears multiple times in the list of dims");
    }
    out.push_back(w);
  }
  return out;
}

Tensor take(const char* name, const Tensor& x, const Tensor& idx, const Shape& out_shape) {
  return detail::take_linear(name, x, idx, Tensor(), 1, out_shape, 0.0, Tensor());
}

}  // namespace

Tensor flip(const Tensor& x, IntList dims) {
  WEFT_TRACE_OP(Flip, (x), ir::Attributes().set("dims", ops_detail::to_ints(dims)), flip(x, dims));
  const Shape shape = x.sizes();
  std::vector<std::int64_t> flipped = wrapped_unique("flip", dims, x.dim());
  if (x.dim() == 0) flipped.clear();  // dim 0 of a scalar is the scalar: nothing moves
  const Tensor idx = index_map(shape, shape, [&](const auto& at, auto& from) {
    for (std::size_t d = 0; d < at.size(); ++d) from[d] = at[d];
    for (std::int64_t d : flipped) {
      const auto k = static_cast<std::size_t>(d);
      from[k] = shape[k] - 1 - at[k];
    }
  });
  return take("FlipBackward0", x, idx, shape);
}

Tensor roll(const Tensor& x, IntList shifts, IntList dims) {
  WEFT_TRACE_OP(Roll, (x),
                ir::Attributes()
                    .set("shifts", ops_detail::to_ints(shifts))
                    .set("dims", ops_detail::to_ints(dims)),
                roll(x, shifts, dims));
  if (shifts.empty()) throw Error("`shifts` required");
  if (dims.empty() && shifts.size() == 1) {
    // No dims: the flattened tensor rolls, and takes x's shape again.
    return reshape(roll(flatten(x), shifts, {0}), x.sizes());
  }
  if (shifts.size() != dims.size()) {
    throw Error("shifts and dimensions must align. shifts: " + std::to_string(shifts.size()) +
                ", dims:" + std::to_string(dims.size()));
  }
  const Shape shape = x.sizes();
  std::vector<std::int64_t> by(shape.size(), 0);  // a dim listed twice rolls twice
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const std::int64_t d = wrap_dim(dims[k], x.dim());
    if (x.dim() > 0) by[static_cast<std::size_t>(d)] += shifts[k];  // a scalar rolls onto itself
  }
  const Tensor idx = index_map(shape, shape, [&](const auto& at, auto& from) {
    for (std::size_t d = 0; d < at.size(); ++d) {
      const std::int64_t n = shape[d];
      from[d] = n == 0 ? 0 : (((at[d] - by[d]) % n) + n) % n;
    }
  });
  return take("RollBackward0", x, idx, shape);
}

Tensor repeat(const Tensor& x, IntList repeats) {
  WEFT_TRACE_OP(Repeat, (x), ir::Attributes().set("repeats", ops_detail::to_ints(repeats)),
                repeat(x, repeats));
  if (static_cast<std::int64_t>(repeats.size()) < x.dim()) {
    throw Error(
        "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
        "tensor");
  }
  // x's shape padded with leading ones to the repeats' length; each dim tiles r times.
  const std::size_t rank = repeats.size();
  const std::size_t lead = rank - static_cast<std::size_t>(x.dim());
  Shape padded(lead, 1);
  for (std::int64_t s : x.sizes()) padded.push_back(s);
  Shape out_shape(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    if (repeats[d] < 0) {
      throw Error("Trying to create tensor with negative dimension " + std::to_string(repeats[d]) +
                  ": " + shape_str(repeats));
    }
    out_shape[d] = padded[d] * repeats[d];
  }
  const Shape in_shape = x.sizes();
  const Tensor idx = index_map(out_shape, in_shape, [&](const auto& at, auto& from) {
    for (std::size_t d = 0; d < from.size(); ++d) from[d] = at[d + lead] % padded[d + lead];
  });
  return take("RepeatBackward0", x, idx, out_shape);
}

Tensor diagonal(const Tensor& x, std::int64_t offset, std::int64_t dim1_in, std::int64_t dim2_in) {
  WEFT_TRACE_OP(Diagonal, (x),
                ir::Attributes().set("offset", offset).set("dim1", dim1_in).set("dim2", dim2_in),
                diagonal(x, offset, dim1_in, dim2_in));
  const std::int64_t dim1 = wrap_dim(dim1_in, x.dim());
  const std::int64_t dim2 = wrap_dim(dim2_in, x.dim());
  if (dim1 == dim2) {
    throw Error("diagonal dimensions cannot be identical " + std::to_string(dim1_in) + ", " +
                std::to_string(dim2_in));
  }
  const Shape shape = x.sizes();
  const std::int64_t rows = shape[static_cast<std::size_t>(dim1)];
  const std::int64_t cols = shape[static_cast<std::size_t>(dim2)];
  const std::int64_t length = std::max<std::int64_t>(
      0, offset >= 0 ? std::min(rows, cols - offset) : std::min(rows + offset, cols));
  // The other dims in order, then the diagonal (PyTorch's layout of the view).
  Shape out_shape;
  std::vector<std::size_t> kept;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<std::int64_t>(d) == dim1 || static_cast<std::int64_t>(d) == dim2) continue;
    kept.push_back(d);
    out_shape.push_back(shape[d]);
  }
  out_shape.push_back(length);
  const Tensor idx = index_map(out_shape, shape, [&](const auto& at, auto& from) {
    for (std::size_t k = 0; k < kept.size(); ++k) from[kept[k]] = at[k];
    const std::int64_t i = at.back();
    from[static_cast<std::size_t>(dim1)] = offset >= 0 ? i : i - offset;
    from[static_cast<std::size_t>(dim2)] = offset >= 0 ? i + offset : i;
  });
  return take("DiagonalBackward0", x, idx, out_shape);
}

namespace {

// The batch dims of x ([*, C, H, W]) and the checks both pixel ops make.
Shape pixel_batch(const char* op, const Tensor& x, std::int64_t factor, const char* factor_name) {
  if (x.dim() < 3) {
    throw Error(std::string(op) + " expects input to have at least 3 dimensions, but got input " +
                "with " + std::to_string(x.dim()) + " dimension(s)");
  }
  if (factor <= 0) {
    throw Error(std::string(op) + " expects a positive " + factor_name + ", but got " +
                std::to_string(factor));
  }
  return Shape(x.sizes().begin(), x.sizes().end() - 3);
}

// The permutation that keeps the n batch dims and then reorders the 5 dims after them.
std::vector<std::int64_t> batch_then(std::size_t n, std::initializer_list<std::int64_t> rest) {
  std::vector<std::int64_t> dims(n);
  for (std::size_t i = 0; i < n; ++i) dims[i] = static_cast<std::int64_t>(i);
  for (std::int64_t r : rest) dims.push_back(static_cast<std::int64_t>(n) + r);
  return dims;
}

}  // namespace

Tensor pixel_shuffle(const Tensor& x, std::int64_t r) {
  WEFT_TRACE_OP(PixelShuffle, (x), ir::Attributes().set("upscale_factor", r), pixel_shuffle(x, r));
  Shape shape = pixel_batch("pixel_shuffle", x, r, "upscale_factor");
  const std::int64_t c = x.size(-3), h = x.size(-2), w = x.size(-1);
  if (c % (r * r) != 0) {
    throw Error(
        "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
        "square of upscale_factor, but input.size(-3)=" +
        std::to_string(c) + " is not divisible by " + std::to_string(r * r));
  }
  const std::size_t n = shape.size();
  Shape split = shape;
  split.insert(split.end(), {c / (r * r), r, r, h, w});
  shape.insert(shape.end(), {c / (r * r), h * r, w * r});
  // [*, oc, r, r, h, w] -> [*, oc, h, r, w, r] -> [*, oc, h * r, w * r]
  return reshape(permute(reshape(x, split), batch_then(n, {0, 3, 1, 4, 2})), shape);
}

Tensor pixel_unshuffle(const Tensor& x, std::int64_t r) {
  WEFT_TRACE_OP(PixelUnshuffle, (x), ir::Attributes().set("downscale_factor", r),
                pixel_unshuffle(x, r));
  Shape shape = pixel_batch("pixel_unshuffle", x, r, "downscale_factor");
  const std::int64_t c = x.size(-3), h = x.size(-2), w = x.size(-1);
  if (h % r != 0) {
    throw Error(
        "pixel_unshuffle expects height to be divisible by downscale_factor, but "
        "input.size(-2)=" +
        std::to_string(h) + " is not divisible by " + std::to_string(r));
  }
  if (w % r != 0) {
    throw Error(
        "pixel_unshuffle expects width to be divisible by downscale_factor, but "
        "input.size(-1)=" +
        std::to_string(w) + " is not divisible by " + std::to_string(r));
  }
  const std::size_t n = shape.size();
  Shape split = shape;
  split.insert(split.end(), {c, h / r, r, w / r, r});
  shape.insert(shape.end(), {c * r * r, h / r, w / r});
  // [*, c, oh, r, ow, r] -> [*, c, r, r, oh, ow] -> [*, c * r * r, oh, ow]
  return reshape(permute(reshape(x, split), batch_then(n, {0, 2, 4, 1, 3})), shape);
}

}  // namespace weft
