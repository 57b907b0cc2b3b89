// Joining, splitting and padding. cat copies each input into a slice of the result (the
// gradient of input i is the matching slice of the output gradient); split and chunk return
// views recorded as one node whose backward concatenates the gradients; pad is an index map
// (index.cpp) whose backward accumulates into the source positions.
#include <algorithm>
#include <string>

#include "index_map.h"
#include "kernels/copy.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace {

// torch.cat's legacy rule: 1-d empty tensors are skipped whatever the other shapes.
bool legacy_skipped(const Tensor& t) {
  return t.dim() == 1 && t.size(0) == 0;
}

// Views of consecutive pieces of `x` along `d`, recorded as one node (like SplitBackward0).
std::vector<Tensor> split_views(const Tensor& x, std::int64_t d,
                                const std::vector<std::int64_t>& sizes) {
  std::vector<Tensor> out;
  {
    autograd::NoGradGuard guard;
    std::int64_t start = 0;
    for (std::int64_t s : sizes) {
      out.push_back(slice(x, d, start, start + s));
      start += s;
    }
  }
  autograd::record_function("SplitBackward0", {x}, out, {},
                            [d](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
                              return std::vector<Tensor>{cat(g, d)};
                            });
  return out;
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim) {
  WEFT_TRACE_OP(Cat, (tensors), ir::Attributes().set("dim", dim), cat(tensors, dim));
  if (tensors.empty()) throw Error("torch.cat(): expected a non-empty list of Tensors");
  Dtype type = tensors[0].dtype();
  const Tensor* reference = nullptr;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].dim() == 0) {
      throw Error("zero-dimensional tensor (at position " + std::to_string(i) +
                  ") cannot be concatenated");
    }
    type = promote_types(type, tensors[i].dtype());
    if (!reference && !legacy_skipped(tensors[i])) reference = &tensors[i];
  }
  if (!reference) {
    wrap_dim(dim, 1);
    return empty({0}, weft::dtype(type));
  }
  const std::int64_t rank = reference->dim();
  const std::int64_t d = wrap_dim(dim, rank);
  Shape out_shape = reference->sizes();
  out_shape[d] = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (legacy_skipped(t)) continue;
    if (t.dim() != rank) {
      throw Error("Tensors must have same number of dimensions: got " + std::to_string(rank) +
                  " and " + std::to_string(t.dim()));
    }
    for (std::int64_t k = 0; k < rank; ++k) {
      if (k != d && t.size(k) != reference->size(k)) {
        throw Error("Sizes of tensors must match except in dimension " + std::to_string(d) +
                    ". Expected size " + std::to_string(reference->size(k)) + " but got size " +
                    std::to_string(t.size(k)) + " for tensor number " + std::to_string(i) +
                    " in the list.");
      }
    }
    out_shape[d] += t.size(d);
  }
  Tensor out = empty(out_shape, weft::dtype(type));
  std::vector<std::int64_t> offsets, lengths;
  std::vector<Dtype> types;
  {
    autograd::NoGradGuard guard;
    std::int64_t offset = 0;
    for (const Tensor& t : tensors) {
      const bool skipped = legacy_skipped(t);
      offsets.push_back(skipped ? -1 : offset);
      lengths.push_back(skipped ? 0 : t.size(d));
      types.push_back(t.dtype());
      if (skipped) continue;
      kernels::copy_into(slice(out, d, offset, offset + t.size(d)), t);
      offset += t.size(d);
    }
  }
  autograd::record_function(
      "CatBackward0", tensors, {out}, {},
      [d, offsets, lengths, types](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
        std::vector<Tensor> grads;
        for (std::size_t i = 0; i < offsets.size(); ++i) {
          if (!is_floating(types[i])) {
            grads.emplace_back();
          } else if (offsets[i] < 0) {
            grads.push_back(zeros({0}, weft::dtype(types[i])));
          } else {
            grads.push_back(slice(g[0], d, offsets[i], offsets[i] + lengths[i]).to(types[i]));
          }
        }
        return grads;
      });
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim) {
  WEFT_TRACE_OP(Stack, (tensors), ir::Attributes().set("dim", dim), stack(tensors, dim));
  if (tensors.empty()) throw Error("stack expects a non-empty TensorList");
  for (std::size_t i = 1; i < tensors.size(); ++i) {
    if (tensors[i].sizes() != tensors[0].sizes()) {
      throw Error("stack expects each tensor to be equal size, but got " +
                  shape_str(tensors[0].sizes()) + " at entry 0 and " +
                  shape_str(tensors[i].sizes()) + " at entry " + std::to_string(i));
    }
  }
  const std::int64_t d = wrap_dim(dim, tensors[0].dim() + 1);
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (const Tensor& t : tensors) parts.push_back(unsqueeze(t, d));
  return cat(parts, d);
}

std::vector<Tensor> split(const Tensor& x, std::int64_t split_size, std::int64_t dim) {
  WEFT_TRACE_OP(Split, (x), ir::Attributes().set("split_size", {split_size}).set("dim", dim),
                split(x, split_size, dim));
  if (x.dim() == 0) throw Error("split expects at least a 1-dimensional tensor");
  if (split_size < 0) {
    throw Error("split expects split_size be non-negative, but got split_size=" +
                std::to_string(split_size));
  }
  const std::int64_t d = wrap_dim(dim, x.dim());
  const std::int64_t size = x.size(d);
  if (split_size == 0 && size != 0) {
    throw Error("split_size can only be 0 if dimension size is 0, but got dimension size of " +
                std::to_string(size));
  }
  std::int64_t pieces = 1;
  if (split_size != 0) pieces = std::max<std::int64_t>((size + split_size - 1) / split_size, 1);
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(pieces), split_size);
  sizes.back() = split_size - (split_size * pieces - size);
  return split_views(x, d, sizes);
}

std::vector<Tensor> split(const Tensor& x, IntList section_sizes, std::int64_t dim) {
  WEFT_TRACE_OP(
      Split, (x),
      ir::Attributes().set("split_size", ops_detail::to_ints(section_sizes)).set("dim", dim),
      split(x, section_sizes, dim));
  if (x.dim() == 0) throw Error("split expects at least a 1-dimensional tensor");
  const std::int64_t d = wrap_dim(dim, x.dim());
  std::int64_t total = 0;
  for (std::int64_t s : section_sizes) {
    if (s < 0) {
      throw Error(
          "split_with_sizes expects split_sizes have only non-negative entries, but got "
          "split_sizes=" +
          shape_str(section_sizes));
    }
    total += s;
  }
  if (total != x.size(d)) {
    throw Error("split_with_sizes expects split_sizes to sum exactly to " +
                std::to_string(x.size(d)) + " (input tensor's size at dimension " +
                std::to_string(d) + "), but got split_sizes=" + shape_str(section_sizes));
  }
  return split_views(x, d, section_sizes.vec());
}

std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim) {
  WEFT_TRACE_OP(Chunk, (x), ir::Attributes().set("chunks", chunks).set("dim", dim),
                chunk(x, chunks, dim));
  if (x.dim() == 0) throw Error("chunk expects at least a 1-dimensional tensor");
  if (chunks <= 0) {
    throw Error("chunk expects `chunks` to be greater than 0, got: " + std::to_string(chunks));
  }
  const std::int64_t d = wrap_dim(dim, x.dim());
  const std::int64_t size = x.size(d);
  const std::int64_t split_size = (size + chunks - 1) / chunks;
  if (split_size == 0 && size == 0) {
    return split_views(x, d, std::vector<std::int64_t>(static_cast<std::size_t>(chunks), 0));
  }
  return split(x, split_size, d);
}

Tensor pad(const Tensor& x, IntList pads, std::string_view mode, double value) {
  WEFT_TRACE_OP(Pad, (x),
                ir::Attributes()
                    .set("pad", ops_detail::to_ints(pads))
                    .set("mode", std::string(mode))
                    .set("value", value),
                pad(x, pads, mode, value));
  const std::int64_t rank = x.dim();
  const std::int64_t count = static_cast<std::int64_t>(pads.size());
  if (count % 2 != 0) throw Error("Padding length must be divisible by 2");
  if (count > 2 * rank) {
    throw Error(
        "Padding length should be less than or equal to two times the input dimension but "
        "got padding length " +
        std::to_string(count) + " and input of dimension " + std::to_string(rank));
  }
  const std::int64_t k = count / 2;
  const Shape in = x.sizes();
  Shape out_shape = in;
  // Source coordinate of each output coordinate, per dim (-1: outside, takes `value`).
  std::vector<std::vector<std::int64_t>> source(static_cast<std::size_t>(rank));
  for (std::int64_t d = 0; d < rank; ++d) {
    source[d].resize(static_cast<std::size_t>(in[d]));
    for (std::int64_t i = 0; i < in[d]; ++i) source[d][i] = i;
  }
  auto side = [&](std::int64_t j) { return std::make_pair(pads[2 * j], pads[2 * j + 1]); };
  const char* name = "ConstantPadNdBackward0";
  if (mode == "constant") {
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t d = rank - 1 - j;
      const auto [l, r] = side(j);
      const std::int64_t size = in[d] + l + r;
      if (size < 0) {
        throw Error("The input size " + std::to_string(in[d]) + ", plus negative padding " +
                    std::to_string(l) + " and " + std::to_string(r) +
                    " resulted in a negative output size, which is invalid. Check dimension " +
                    std::to_string(d) + " of your input.");
      }
      // PyTorch crops by the negative pads before it pads (constant_pad_nd narrows first), so
      // the negative pads alone must leave a size of at least 0.
      const std::int64_t cropped =
          in[d] + std::min<std::int64_t>(l, 0) + std::min<std::int64_t>(r, 0);
      if (cropped < 0) {
        throw Error("start (" + std::to_string(std::max<std::int64_t>(-l, 0)) + ") + length (" +
                    std::to_string(cropped) + ") exceeds dimension size (" + std::to_string(in[d]) +
                    ").");
      }
      out_shape[d] = size;
      source[d].resize(static_cast<std::size_t>(size));
      for (std::int64_t o = 0; o < size; ++o) {
        const std::int64_t s = o - l;
        source[d][o] = s >= 0 && s < in[d] ? s : -1;
      }
    }
  } else {
    const bool reflect = mode == "reflect", replicate = mode == "replicate";
    if (!reflect && !replicate && mode != "circular") {
      throw Error("Unrecognised padding mode " + std::string(mode));
    }
    if (value != 0.0) {
      throw Error("Padding mode \"" + std::string(mode) + "\" doesn't take in value argument");
    }
    if (!((count == 2 || count == 4 || count == 6) && (rank == k + 1 || rank == k + 2))) {
      throw Error("Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
    }
    if (reflect || replicate) {
      // Every dim but an optional batch dim must be non-empty.
      bool valid = true;
      for (std::int64_t d = rank == k + 2 ? 1 : 0; d < rank; ++d) valid = valid && in[d] != 0;
      if (!valid) {
        throw Error("Expected " + std::to_string(k + 1) + "D or " + std::to_string(k + 2) +
                    "D (batch mode) tensor with possibly 0 batch size and other non-zero "
                    "dimensions for input, but got: " +
                    shape_str(in));
      }
    }
    if (reflect) {
      for (std::int64_t j = 0; j < k; ++j) {
        const std::int64_t d = rank - 1 - j;
        const auto [l, r] = side(j);
        if (!(l < in[d] && r < in[d])) {
          throw Error("Argument #" + std::to_string(4 + 2 * j) +
                      ": Padding size should be less than the corresponding input dimension, but "
                      "got: padding (" +
                      std::to_string(l) + ", " + std::to_string(r) + ") at dimension " +
                      std::to_string(d) + " of input " + shape_str(in));
        }
      }
    }
    bool too_small = false;
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t d = rank - 1 - j;
      const auto [l, r] = side(j);
      out_shape[d] = in[d] + l + r;
      if (mode == "circular") {
        if (l > in[d] || r > in[d])
          throw Error("Padding value causes wrapping around more than once.");
        if (out_shape[d] < 0)
          throw Error("Negative padding value is resulting in an empty dimension.");
      } else if (out_shape[d] < 1) {
        too_small = true;
      }
    }
    if (too_small) {
      static const char* const kNames[] = {"D", "H", "W"};
      std::string input = "input (", output = ". Calculated output";
      for (std::int64_t d = rank - k; d < rank; ++d) {
        const char* label = kNames[3 - (rank - d)];
        input += std::string(d > rank - k ? ", " : "") + label + ": " + std::to_string(in[d]);
        output += std::string(" ") + label + ": " + std::to_string(out_shape[d]);
      }
      throw Error(input + ") is too small" + output);
    }
    name = reflect     ? "ReflectionPadBackward0"
           : replicate ? "ReplicationPadBackward0"
                       : "CircularPadBackward0";
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t d = rank - 1 - j;
      const auto [l, r] = side(j);
      const std::int64_t size = in[d];
      const std::int64_t o_start = std::max<std::int64_t>(0, l),
                         i_start = std::max<std::int64_t>(0, -l);
      source[d].resize(static_cast<std::size_t>(out_shape[d]));
      for (std::int64_t o = 0; o < out_shape[d]; ++o) {
        std::int64_t s;
        if (reflect || replicate) {
          // ATen's reflection/replication index formulas (they also handle negative pads).
          if (o < l) {
            s = reflect ? 2 * l - o : l;
          } else if (o < size + l) {
            s = o;
          } else {
            s = reflect ? 2 * (size + l - 1) - o : size + l - 1;
          }
          s = s - o_start + i_start;
        } else {
          s = ((o - l) % size + size) % size;
        }
        source[d][o] = s;
      }
    }
  }

  // Flat source index of every output element.
  const Shape in_strides = contiguous_strides(in);
  const std::int64_t total = numel_of(out_shape);
  Tensor idx = empty({total}, weft::dtype(Dtype::Int64));
  std::int64_t* ip = idx.data<std::int64_t>();
  std::vector<std::int64_t> pos(static_cast<std::size_t>(rank), 0);
  for (std::int64_t o = 0; o < total; ++o) {
    std::int64_t flat = 0;
    for (std::int64_t d = 0; d < rank && flat >= 0; ++d) {
      const std::int64_t s = source[d][pos[d]];
      flat = s < 0 ? -1 : flat + s * in_strides[d];
    }
    ip[o] = flat;
    for (std::int64_t d = rank - 1; d >= 0; --d) {
      if (++pos[d] < out_shape[d]) break;
      pos[d] = 0;
    }
  }
  return detail::take_linear(name, x, idx, Tensor(), 1, out_shape, value, Tensor());
}

}  // namespace weft
