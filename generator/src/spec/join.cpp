// Joining, splitting, padding and triangles. Split and chunk return a number of outputs that
// depends on sizes; the rule draws that number concretely and requires the sizes to give it.
#include <algorithm>
#include <string>
#include <type_traits>

#include "spec/builder.h"
#include "spec/families.h"

namespace weft::gen {

namespace {

std::size_t wrap(std::int64_t dim, int rank) {
  return static_cast<std::size_t>(dim < 0 ? dim + rank : dim);
}

// The smallest size a dim may have.
std::int64_t min_dim(const RuleContext& b) {
  return b.bounds().allow_zero_dims ? 0 : 1;
}

// The first input bound to an existing value, else input 0: the others follow its shape.
int reference_input(const RuleContext& b) {
  for (int i = 0; i < b.num_inputs(); ++i) {
    if (b.bound(i)) return i;
  }
  return 0;
}

// Cat: every input as the reference but along `dim`. Fresh inputs are shaped by the rule
// (their rank follows the reference), so that most draws succeed.
template <class B>
void cat_rule(B& b) {
  const int ref = reference_input(b);
  const int rank = b.rank(ref);
  b.require_that(rank >= 1, "cat: zero-dimensional tensor");
  const auto x = b.data(ref);
  const std::size_t d = wrap(b.attr_dim("dim", rank), rank);
  auto out = x;
  out[d] = b.lit(0);
  const std::int64_t hi = b.chance("cat.large", 0.1) ? b.bounds().max_dim : 6;
  for (int i = 0; i < b.num_inputs(); ++i) {
    std::vector<typename B::Int> dims;
    if (i == ref) {
      dims = x;
    } else if (b.bound(i)) {
      b.require_that(b.rank(i) == rank, "cat: ranks differ");
      dims = b.data(i);
      for (std::size_t k = 0; k < dims.size(); ++k) {
        if (k != d) b.require(dims[k] == x[k]);
      }
    } else {
      dims = x;
      dims[d] = b.var("cat.size" + std::to_string(i), min_dim(b), hi);
      b.shape_input(i, dims);
    }
    out[d] = out[d] + dims[d];
  }
  b.output(out);
}

// Stack: every input of the same shape; a new dim of the input count at `dim`.
template <class B>
void stack_rule(B& b) {
  const int ref = reference_input(b);
  const int rank = b.rank(ref);
  b.require_that(rank <= b.bounds().max_rank - 1, "stack: output rank above the bound");
  const auto x = b.data(ref);
  for (int i = 0; i < b.num_inputs(); ++i) {
    if (i == ref) continue;
    if (b.bound(i)) {
      b.require_that(b.rank(i) == rank, "stack: ranks differ");
      const auto dims = b.data(i);
      for (std::size_t k = 0; k < dims.size(); ++k) b.require(dims[k] == x[k]);
    } else {
      b.shape_input(i, x);
    }
  }
  const std::size_t d = wrap(b.attr_dim("dim", rank + 1), rank + 1);
  auto out = x;
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(d), b.lit(b.num_inputs()));
  b.output(out);
}

// Split into `n` pieces (n drawn): either one split_size s with (n-1)s < size <= ns (the last
// piece is the rest), or n section sizes summing to the size.
template <class B>
void split_rule(B& b) {
  using Int = typename B::Int;
  const int rank = b.rank(0);
  b.require_that(rank >= 1, "split: scalar input");
  const auto x = b.data(0);
  const std::size_t d = wrap(b.attr_dim("dim", rank), rank);
  const Int& size = x[d];
  const std::int64_t n = b.choose("split.pieces", 1, 4);
  const std::int64_t max_dim = b.bounds().max_dim;
  std::vector<Int> sizes;
  if (b.chance("split.sections", 0.4)) {
    Int rest = size;
    for (std::int64_t i = 0; i + 1 < n; ++i) {
      const Int s = b.var("split.section" + std::to_string(i), min_dim(b),
                          std::max(min_dim(b), hint(rest, max_dim) - min_dim(b)));
      sizes.push_back(s);
      rest = rest - s;
    }
    b.require(rest >= b.lit(min_dim(b)));
    sizes.push_back(rest);
    set_ints(b, "split_size", sizes);
  } else {
    b.require(size >= 1);  // a split_size of 0 only splits an empty dim
    std::int64_t lo = 1, hi = max_dim;
    if constexpr (std::is_same_v<B, Sampler>) {
      // The sampler draws s with ceil(size/s) = n: s in [ceil(size/n), (size-1)/(n-1)].
      lo = std::max<std::int64_t>(1, (size + n - 1) / n);
      hi = n == 1 ? size + 2 : (size - 1) / (n - 1);
      b.require_that(lo <= hi, "split: no split_size gives the piece count");
    }
    const Int s = b.var("split.size", lo, hi);
    b.require(s >= 1 && b.lit(n - 1) * s < size && size <= b.lit(n) * s);
    for (std::int64_t i = 0; i + 1 < n; ++i) sizes.push_back(s);
    sizes.push_back(size - b.lit(n - 1) * s);
    set_ints(b, "split_size", std::vector<Int>{s});
  }
  for (const Int& s : sizes) {
    auto piece = x;
    piece[d] = s;
    b.output(piece);
  }
}

// Chunk: split_size = ceil(size / chunks), then ceil(size / split_size) pieces; the rule draws
// the piece count n and requires the chunks to give it.
template <class B>
void chunk_rule(B& b) {
  using Int = typename B::Int;
  const int rank = b.rank(0);
  b.require_that(rank >= 1, "chunk: scalar input");
  const auto x = b.data(0);
  const std::size_t d = wrap(b.attr_dim("dim", rank), rank);
  const Int& size = x[d];
  b.require(size >= 1);
  const std::int64_t n = b.choose("chunk.pieces", 1, 4);
  // chunks = n mostly gives n pieces; a few more (even beyond the size) still can.
  const std::int64_t hi = b.chance("chunk.many", 0.2) ? b.bounds().max_dim : n + 2;
  const Int chunks = b.attr_int("chunks", 1, hi);
  const Int s = (size + chunks - 1) / chunks;
  b.require(b.lit(n - 1) * s < size && size <= b.lit(n) * s);
  for (std::int64_t i = 0; i < n; ++i) {
    auto piece = x;
    piece[d] = i + 1 < n ? s : size - b.lit(n - 1) * s;
    b.output(piece);
  }
}

// Pad lists (left, right) pairs from the last dim. Constant pads may be negative (the output
// stays non-empty); reflect and replicate take 1..3 padded dims of a (k+1)- or (k+2)-d input,
// and reflect pads must be below the dim.
template <class B>
void pad_rule(B& b) {
  using Int = typename B::Int;
  const int rank = b.rank(0);
  b.require_that(rank >= 1, "pad: scalar input");
  const auto x = b.data(0);
  const std::string mode = b.attr_string("mode", {"constant", "constant", "reflect", "replicate"});
  const bool constant = mode == "constant";
  int k;
  if (constant) {
    k = static_cast<int>(b.choose("pad.dims", 1, rank));
    if (b.chance("pad.value", 0.5)) b.attr_float("value", -2.0, 2.0);
  } else {
    // k in {rank - 2, rank - 1} within 1..3.
    const int lo = std::max(1, rank - 2), hi = std::min(3, rank - 1);
    b.require_that(lo <= hi, "pad: rank for a non-constant mode");
    k = static_cast<int>(b.choose("pad.dims", lo, hi));
    // Every dim but an optional batch dim must be non-empty.
    for (int d = rank == k + 2 ? 1 : 0; d < rank; ++d)
      b.require(x[static_cast<std::size_t>(d)] >= 1);
  }
  const bool edge = b.chance("pad.edge", 0.15);
  const std::int64_t hi = edge ? 8 : 2;
  const std::int64_t lo = constant && b.chance("pad.negative", 0.2) ? -2 : 0;
  std::vector<Int> pads;
  auto out = x;
  const std::int64_t max_dim = b.bounds().max_dim;
  for (int j = 0; j < k; ++j) {
    const std::size_t d = static_cast<std::size_t>(rank - 1 - j);
    // Reflect: the sampler draws below the dim; the encoder requires it.
    const std::int64_t side_hi = mode == "reflect" ? std::min(hi, hint(x[d], max_dim) - 1) : hi;
    const Int l = b.var("pad." + std::to_string(2 * j), lo, std::max(lo, side_hi));
    const Int r = b.var("pad." + std::to_string(2 * j + 1), lo, std::max(lo, side_hi));
    if (mode == "reflect") b.require(l < x[d] && r < x[d]);
    // PyTorch narrows the input by a negative pad before padding: keep it non-empty.
    if (lo < 0) b.require(x[d] + l >= 1 && x[d] + l + r >= 1);
    pads.push_back(l);
    pads.push_back(r);
    out[d] = x[d] + l + r;
  }
  set_ints(b, "pad", pads);
  b.output(out);
}

template <class B>
void triangle_rule(B& b) {
  b.require_that(b.rank(0) >= 2, "tril/triu: rank below 2");
  const auto x = b.data(0);
  const std::int64_t reach = b.chance("diagonal.far", 0.2) ? 10 : 3;
  b.set_attr("diagonal", b.choose("diagonal", -reach, reach));
  b.output(x);
}

OpSpec make(ir::OpKind op, int min_rank, int max_rank, unsigned dtypes_allowed,
            void (*sample)(Sampler&), void (*encode)(Encoder&),
            std::vector<Dtype> (*out)(const std::vector<Dtype>&,
                                      const ir::Attributes&) = dtypes::same) {
  OpSpec s;
  s.op = op;
  s.inputs = {InputDecl{"self", InputRole::Data, min_rank, max_rank}};
  s.dtypes = dtypes_allowed;
  s.output_dtypes = out;
  s.sample = sample;
  s.encode = encode;
  return s;
}

OpSpec variadic(OpSpec s) {
  s.inputs[0].name = "tensors";
  s.variadic = true;
  return s;
}

// Split and chunk: every piece has the input's dtype.
std::vector<Dtype> same_for_all(const std::vector<Dtype>& in, const ir::Attributes&) {
  return {in.at(0)};
}

}  // namespace

OpSpec join_spec(ir::OpKind op) {
  using K = ir::OpKind;
  switch (op) {
    case K::Cat:
      return variadic(make(op, 1, 5, kAnyDtype, WEFT_RULE(cat_rule), dtypes::promoted));
    case K::Stack:
      return variadic(make(op, 0, 4, kAnyDtype, WEFT_RULE(stack_rule), dtypes::promoted));
    case K::Split:
      return make(op, 1, 5, kAnyDtype, WEFT_RULE(split_rule), same_for_all);
    case K::Chunk:
      return make(op, 1, 5, kAnyDtype, WEFT_RULE(chunk_rule), same_for_all);
    case K::Pad:
      return make(op, 1, 5, kFloat | kInt, WEFT_RULE(pad_rule));
    case K::Tril:
    case K::Triu:
      return make(op, 2, 5, kAnyDtype, WEFT_RULE(triangle_rule));
    default:
      break;
  }
  return OpSpec{op, {}};
}

}  // namespace weft::gen
