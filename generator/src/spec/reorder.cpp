// Reordering: flip, roll, repeat, diagonal, pixel_shuffle, pixel_unshuffle. Flip and roll keep the
// shape; repeat multiplies every dim by its count (extra leading counts add dims); diagonal drops
// two dims and appends the diagonal's length, which depends on the offset (an offset past the edge
// gives 0).
#include <string>

#include "spec/builder.h"
#include "spec/families.h"

namespace weft::gen {

namespace {

template <class B>
using Dims = std::vector<typename B::Int>;

// flip: a non-empty set of distinct dims (rank 1 and up: a flip of nothing tests nothing).
template <class B>
void flip_rule(B& b) {
  const int rank = b.rank(0);
  b.attr_dims("dims", rank, 1);
  b.output(b.data(0));
}

// roll: one shift per listed dim (a dim may repeat: it rolls twice); sometimes no dims (the
// flattened tensor rolls by one shift); shifts beyond the size and negative ones wrap.
template <class B>
void roll_rule(B& b) {
  const int rank = b.rank(0);
  std::vector<std::int64_t> shifts;
  std::vector<std::int64_t> dims;
  if (rank == 0 || b.chance("roll.flat", 0.2)) {
    shifts.push_back(b.choose("shift0", -7, 7));
  } else {
    const std::int64_t count = b.choose("roll.count", 1, std::min(rank, 3));
    for (std::int64_t k = 0; k < count; ++k) {
      const std::string i = std::to_string(k);
      shifts.push_back(b.choose("shift" + i, -7, 7));
      dims.push_back(b.choose("roll.dim" + i, -rank, rank - 1));
    }
  }
  b.set_attr("shifts", shifts);
  b.set_attr("dims", dims);
  b.output(b.data(0));
}

// repeat: a count per dim (1 to 3, sometimes 0) and up to two new leading dims.
template <class B>
void repeat_rule(B& b) {
  const Dims<B> x = b.data(0);
  const int rank = b.rank(0);
  // A rank-0 input gets at least one count, so that something is repeated.
  const std::int64_t extra =
      b.choose("repeat.extra", rank == 0 ? 1 : 0, std::min(2, b.bounds().max_rank - rank));
  std::vector<std::int64_t> repeats;
  Dims<B> out;
  for (std::int64_t d = 0; d < extra + rank; ++d) {
    const std::string i = std::to_string(d);
    const std::int64_t lo = b.bounds().allow_zero_dims && b.chance("repeat.zero" + i, 0.1) ? 0 : 1;
    const std::int64_t r = lo == 0 ? 0 : b.choose("repeat" + i, 1, 3);
    repeats.push_back(r);
    out.push_back(d < extra ? b.lit(r) : x[static_cast<std::size_t>(d - extra)] * b.lit(r));
  }
  b.set_attr("repeats", repeats);
  b.output(out);
}

// diagonal: two distinct dims (either sign) and an offset, mostly within the matrix.
template <class B>
void diagonal_rule(B& b) {
  const int rank = b.rank(0);
  b.require_that(rank >= 2, "diagonal: rank below 2");
  const Dims<B> x = b.data(0);
  const std::int64_t dim1 = b.choose("dim1", 0, rank - 1);
  std::int64_t dim2 = b.choose("dim2", 0, rank - 2);
  if (dim2 >= dim1) ++dim2;
  const std::int64_t reach = b.chance("offset.far", 0.2) ? 8 : 2;
  const std::int64_t offset = b.choose("offset", -reach, reach);
  b.set_attr("offset", offset);
  b.set_attr("dim1", b.chance("dim1.neg", 0.3) ? dim1 - rank : dim1);
  b.set_attr("dim2", b.chance("dim2.neg", 0.3) ? dim2 - rank : dim2);
  const auto rows = x[static_cast<std::size_t>(dim1)];
  const auto cols = x[static_cast<std::size_t>(dim2)];
  const auto length =
      offset >= 0 ? B::min(rows, cols - b.lit(offset)) : B::min(rows + b.lit(offset), cols);
  // An empty diagonal only where zero-size dims are allowed.
  if (!b.bounds().allow_zero_dims) b.require(length >= b.lit(1));
  Dims<B> out;
  for (int d = 0; d < rank; ++d) {
    if (d != dim1 && d != dim2) out.push_back(x[static_cast<std::size_t>(d)]);
  }
  out.push_back(B::max(length, b.lit(0)));
  b.output(out);
}

// pixel_shuffle: [*, C r^2, H, W] -> [*, C, H r, W r]; pixel_unshuffle the reverse, with H and
// W multiples of r. r from 1 to 3.
template <class B>
void pixel_rule(B& b) {
  using Int = typename B::Int;
  const int rank = b.rank(0);
  b.require_that(rank >= 3, "pixel_shuffle: rank below 3");
  Dims<B> x = b.data(0);
  const std::int64_t r = b.choose("factor", 1, 3);
  const auto c = static_cast<std::size_t>(rank - 3), h = c + 1, w = c + 2;
  if (b.spec().op == ir::OpKind::PixelShuffle) {
    b.set_attr("upscale_factor", r);
    const Int channels = x[c] / b.lit(r * r);
    b.require(x[c] >= b.lit(r * r) && x[c] == channels * b.lit(r * r));
    x[c] = channels;
    x[h] = x[h] * b.lit(r);
    x[w] = x[w] * b.lit(r);
  } else {
    b.set_attr("downscale_factor", r);
    const Int height = x[h] / b.lit(r), width = x[w] / b.lit(r);
    b.require(x[h] == height * b.lit(r) && x[w] == width * b.lit(r));
    x[c] = x[c] * b.lit(r * r);
    x[h] = height;
    x[w] = width;
  }
  b.output(x);
}

OpSpec one_input(ir::OpKind op, void (*sample)(Sampler&), void (*encode)(Encoder&),
                 int min_rank = 0) {
  OpSpec s{op, {InputDecl{"self", InputRole::Data, min_rank, 5}}};
  s.dtypes = kAnyDtype;
  s.output_dtypes = dtypes::same;
  s.sample = sample;
  s.encode = encode;
  return s;
}

}  // namespace

OpSpec reorder_spec(ir::OpKind op) {
  using K = ir::OpKind;
  switch (op) {
    case K::Flip:
      return one_input(op, WEFT_RULE(flip_rule), 1);
    case K::Roll:
      return one_input(op, WEFT_RULE(roll_rule));
    case K::Repeat:
      return one_input(op, WEFT_RULE(repeat_rule));
    case K::Diagonal:
      return one_input(op, WEFT_RULE(diagonal_rule), 2);
    case K::PixelShuffle:
    case K::PixelUnshuffle:
      return one_input(op, WEFT_RULE(pixel_rule), 3);
    default:
      break;
  }
  return OpSpec{op, {}};
}

}  // namespace weft::gen
