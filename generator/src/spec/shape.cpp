// Views and shape changes: reshape, flatten, squeeze, unsqueeze, transpose, permute, expand,
// slice, select. Attributes that depend on the input's sizes (reshape's target, slice's
// bounds, select's index) are computed from the dims in the rule, so they are valid by
// construction in both builders; only the sampler sets them (the encoder's model is replayed
// through the sampler).
#include <string>

#include "spec/builder.h"
#include "spec/families.h"

namespace weft::gen {

namespace {

template <class B>
using Dims = std::vector<typename B::Int>;

// Int attributes computed from dims: concrete in the sampler, absent in the encoder.
void set_int(Sampler& b, const std::string& name, std::int64_t v) {
  b.set_attr(name, v);
}
void set_int(Encoder&, const std::string&, const z3::expr&) {}
// A condition on dims that decides the output's rank (is this dim 1?). The sampler reads it
// off its values; the encoder takes it from a literal when it can, otherwise draws it and
// requires it, so a Z3 model replayed through the sampler decides the same way.
bool decide(Sampler& b, const std::string& name, bool condition, double) {
  b.record_decision(name, condition);
  return condition;
}
bool decide(Encoder& b, const std::string& name, const z3::expr& condition, double probability) {
  const z3::expr simple = condition.simplify();
  if (simple.is_true()) return true;
  if (simple.is_false()) return false;
  const bool c = b.chance(name, probability);
  b.require(c ? condition : !condition);
  return c;
}

// A fresh input's dims, some set to 1 (squeeze and expand need size-1 dims to do anything).
template <class B>
Dims<B> with_ones(B& b, double probability) {
  Dims<B> x = b.data(0);
  if (b.bound(0)) return x;
  for (std::size_t d = 0; d < x.size(); ++d) {
    if (b.chance("one." + std::to_string(d), probability)) x[d] = b.lit(1);
  }
  b.shape_input(0, x);
  return x;
}

std::int64_t wrap(std::int64_t dim, int rank) {
  return dim < 0 ? dim + rank : dim;
}

// reshape: the target groups the input's dims into slots (any grouping keeps the element
// count), one slot possibly split in two by a divisor, one entry possibly -1. Built from the
// dims, so the sampler never has to guess a factorization.
template <class B>
void reshape_rule(B& b) {
  const Dims<B> x = b.data(0);
  const int rank = b.rank(0);
  const int max_rank = b.bounds().max_rank;
  Dims<B> target;
  if (b.chance("reshape.scalar", 0.05)) {
    for (const auto& v : x) b.require(v == b.lit(1));
  } else {
    const std::int64_t slots = b.choose("reshape.rank", 1, max_rank);
    target.assign(static_cast<std::size_t>(slots), b.lit(1));
    for (int d = 0; d < rank; ++d) {
      const auto slot = b.choose("reshape.slot" + std::to_string(d), 0, slots - 1);
      target[static_cast<std::size_t>(slot)] = target[static_cast<std::size_t>(slot)] * x[d];
    }
    if (slots < max_rank && b.chance("reshape.split", 0.3)) {
      const auto g = static_cast<std::size_t>(b.choose("reshape.split_slot", 0, slots - 1));
      const auto divisor = b.var("reshape.divisor", 1, 8);
      const auto whole = target[g];
      b.require(whole % divisor == b.lit(0));
      target[g] = divisor;
      target.insert(target.begin() + static_cast<std::ptrdiff_t>(g) + 1, whole / divisor);
    }
  }
  Dims<B> attr = target;
  if (!target.empty() && b.chance("reshape.infer", 0.4)) {
    const auto at = static_cast<std::size_t>(
        b.choose("reshape.infer_at", 0, static_cast<std::int64_t>(target.size()) - 1));
    // -1 cannot be inferred next to a zero-sized entry.
    for (std::size_t i = 0; i < target.size(); ++i) {
      if (i != at) b.require(target[i] >= b.lit(1));
    }
    attr[at] = b.lit(-1);
  }
  set_ints(b, "shape", attr);
  b.output(target);
}

template <class B>
void flatten_rule(B& b) {
  const Dims<B> x = b.data(0);
  const int rank = b.rank(0);
  if (rank == 0) {
    // A scalar flattens to [1]; its only dims are 0 and -1.
    b.set_attr("start_dim", b.choose("flatten.start", -1, 0));
    b.set_attr("end_dim", b.choose("flatten.end", -1, 0));
    b.output({b.lit(1)});
    return;
  }
  const std::int64_t s = b.choose("flatten.start", 0, rank - 1);
  const std::int64_t e = b.choose("flatten.end", s, rank - 1);
  b.set_attr("start_dim", b.chance("flatten.start_neg", 0.3) ? s - rank : s);
  b.set_attr("end_dim", b.chance("flatten.end_neg", 0.5) ? e - rank : e);
  Dims<B> out(x.begin(), x.begin() + s);
  typename B::Int merged = b.lit(1);
  for (std::int64_t d = s; d <= e; ++d) merged = merged * x[static_cast<std::size_t>(d)];
  out.push_back(merged);
  out.insert(out.end(), x.begin() + e + 1, x.end());
  b.output(out);
}

// squeeze: the listed dims (none listed: all) that have size 1 go.
template <class B>
void squeeze_rule(B& b) {
  const Dims<B> x = with_ones(b, 0.4);
  const int rank = b.rank(0);
  const auto listed = b.attr_dims("dim", rank, 0);
  std::vector<bool> candidate(static_cast<std::size_t>(rank), listed.empty());
  for (std::int64_t d : listed) candidate[static_cast<std::size_t>(wrap(d, rank))] = true;
  Dims<B> out;
  for (int d = 0; d < rank; ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (candidate[i] && decide(b, "squeeze.one" + std::to_string(d), x[i] == b.lit(1), 0.5)) {
      continue;
    }
    out.push_back(x[i]);
  }
  b.output(out);
}

template <class B>
void unsqueeze_rule(B& b) {
  const int rank = b.rank(0);
  b.require_that(rank < b.bounds().max_rank, "unsqueeze would pass the rank bound");
  Dims<B> x = b.data(0);
  const std::int64_t d = wrap(b.attr_dim("dim", rank + 1), rank + 1);
  x.insert(x.begin() + d, b.lit(1));
  b.output(x);
}

template <class B>
void transpose_rule(B& b) {
  Dims<B> x = b.data(0);
  const int rank = b.rank(0);
  const std::int64_t d0 = b.attr_dim("dim0", rank), d1 = b.attr_dim("dim1", rank);
  if (rank > 0)
    std::swap(x[static_cast<std::size_t>(wrap(d0, rank))],
              x[static_cast<std::size_t>(wrap(d1, rank))]);
  b.output(x);
}

template <class B>
void permute_rule(B& b) {
  const Dims<B> x = b.data(0);
  const int rank = b.rank(0);
  std::vector<std::int64_t> perm = b.attr_permutation("dims", rank);
  Dims<B> out;
  for (std::int64_t d : perm) out.push_back(x[static_cast<std::size_t>(d)]);
  // Some entries negative, as PyTorch allows.
  for (std::size_t i = 0; i < perm.size(); ++i) {
    if (b.chance("dims.neg" + std::to_string(i), 0.2)) perm[i] -= rank;
  }
  b.set_attr("dims", perm);
  b.output(out);
}

// expand: new leading dims of any size; a size-1 dim grows or stays; any other dim stays
// (as its size or -1).
template <class B>
void expand_rule(B& b) {
  const Dims<B> x = with_ones(b, 0.4);
  const int rank = b.rank(0);
  const std::int64_t lo = b.bounds().allow_zero_dims ? 0 : 1;
  const std::int64_t lead = b.choose("expand.lead", 0, b.bounds().max_rank - rank);
  Dims<B> size, out;
  for (std::int64_t i = 0; i < lead; ++i) {
    const auto v = b.var("expand.new" + std::to_string(i), lo, 8);
    size.push_back(v);
    out.push_back(v);
  }
  for (int d = 0; d < rank; ++d) {
    const auto i = static_cast<std::size_t>(d);
    const std::string tag = std::to_string(d);
    if (decide(b, "expand.one" + tag, x[i] == b.lit(1), 0.5) &&
        b.chance("expand.grow" + tag, 0.7)) {
      const auto v = b.var("expand.size" + tag, lo, 8);
      size.push_back(v);
      out.push_back(v);
      continue;
    }
    size.push_back(b.chance("expand.keep" + tag, 0.3) ? b.lit(-1) : x[i]);
    out.push_back(x[i]);
  }
  set_ints(b, "size", size);
  b.output(out);
}

// Where a Python-style index lands in [0, size] (ATen's clamping of slice bounds).
template <class B>
typename B::Int clip(B& b, const typename B::Int& v, const typename B::Int& size) {
  const typename B::Int shifted = B::select(v < b.lit(0), v + size, v);
  return B::min(B::max(shifted, b.lit(0)), size);
}

// slice: start and end anywhere Python allows — inside, negative, past the end — computed
// from the dim's size; a positive step.
template <class B>
Dims<B> sliced_dims(B& b) {
  const int rank = b.rank(0);
  b.require_that(rank >= 1, "slice needs a 1-D or more input");
  Dims<B> x = b.data(0);
  const std::int64_t dim = b.attr_dim("dim", rank);
  const auto d = static_cast<std::size_t>(wrap(dim, rank));
  const typename B::Int size = x[d];
  const std::int64_t step = b.choose("slice.step", 1, 3);
  b.set_attr("step", step);
  const auto inside = [&](const std::string& name) {
    return size * b.lit(b.choose(name + ".p", 0, 8)) / b.lit(8);
  };
  // Non-negative operands only: C++ truncates a negative quotient, Z3 floors it.
  const auto negative = [&](const std::string& name) {
    const typename B::Int last = B::max(size - b.lit(1), b.lit(0));
    return b.lit(-1) - last * b.lit(b.choose(name + ".p", 0, 8)) / b.lit(8);
  };
  // Start kinds: 0 absent, 1 inside, 2 negative, 3 before the start, 4 past the end (an empty
  // slice, drawn only when empty dims are allowed).
  typename B::Int start = b.lit(0);
  const std::int64_t start_kind =
      b.choose("slice.start.kind", 0, b.bounds().allow_zero_dims ? 4 : 3);
  if (start_kind == 1) start = inside("slice.start");
  if (start_kind == 2) start = negative("slice.start");
  if (start_kind == 3) start = b.lit(-1) * size - b.lit(b.choose("slice.start.q", 0, 2));
  if (start_kind == 4) start = size + b.lit(b.choose("slice.start.q", 0, 2));
  if (start_kind != 0) set_int(b, "start", start);
  // End kinds: 0 absent (to the end), 1 inside, 2 negative, 3 past the end.
  typename B::Int end = size;
  const std::int64_t end_kind = b.choose("slice.end.kind", 0, 3);
  if (end_kind == 1) end = inside("slice.end");
  if (end_kind == 2) end = negative("slice.end");
  if (end_kind == 3) end = size + b.lit(b.choose("slice.end.q", 0, 2));
  if (end_kind != 0) set_int(b, "end", end);
  const typename B::Int first = clip(b, start, size);
  const typename B::Int last = B::max(clip(b, end, size), first);
  x[d] = (last - first + b.lit(step - 1)) / b.lit(step);
  return x;
}

template <class B>
void slice_rule(B& b) {
  b.output(sliced_dims(b));
}

template <class B>
Dims<B> selected_dims(B& b) {
  const int rank = b.rank(0);
  b.require_that(rank >= 1, "select needs a 1-D or more input");
  Dims<B> x = b.data(0);
  const auto d = static_cast<std::size_t>(wrap(b.attr_dim("dim", rank), rank));
  const typename B::Int size = x[d];
  b.require(size >= b.lit(1));
  const typename B::Int offset = (size - b.lit(1)) * b.lit(b.choose("select.p", 0, 8)) / b.lit(8);
  // A negative index counts from the end, as Python.
  set_int(b, "index", b.chance("select.neg", 0.3) ? b.lit(-1) - offset : offset);
  x.erase(x.begin() + static_cast<std::ptrdiff_t>(d));
  return x;
}

template <class B>
void select_rule(B& b) {
  b.output(selected_dims(b));
}

// slice_scatter/select_scatter: src has the shape of the slice (the select) of the base, and
// the result the base's.
template <class B>
void write_slot(B& b, const Dims<B>& slot) {
  b.require_that(b.rank(1) == static_cast<int>(slot.size()), "scatter: src rank");
  const Dims<B> src = b.data(1);
  for (std::size_t i = 0; i < slot.size(); ++i) b.require(src[i] == slot[i]);
  b.output(b.data(0));
}
template <class B>
void slice_scatter_rule(B& b) {
  write_slot(b, sliced_dims(b));
}
template <class B>
void select_scatter_rule(B& b) {
  write_slot(b, selected_dims(b));
}

OpSpec one_input(ir::OpKind op, void (*sample)(Sampler&), void (*encode)(Encoder&),
                 int min_rank = 0, int max_rank = 5) {
  OpSpec s{op, {InputDecl{"self", InputRole::Data, min_rank, max_rank}}};
  s.dtypes = kAnyDtype;
  s.output_dtypes = dtypes::same;
  s.sample = sample;
  s.encode = encode;
  return s;
}

}  // namespace

OpSpec shape_spec(ir::OpKind op) {
  using K = ir::OpKind;
  switch (op) {
    case K::Reshape:
      return one_input(op, WEFT_RULE(reshape_rule));
    case K::Flatten:
      return one_input(op, WEFT_RULE(flatten_rule));
    case K::Squeeze:
      return one_input(op, WEFT_RULE(squeeze_rule));
    case K::Unsqueeze:
      return one_input(op, WEFT_RULE(unsqueeze_rule), 0, 4);
    case K::Transpose:
      return one_input(op, WEFT_RULE(transpose_rule));
    case K::Permute:
      return one_input(op, WEFT_RULE(permute_rule));
    case K::Expand:
      return one_input(op, WEFT_RULE(expand_rule));
    case K::Slice:
      return one_input(op, WEFT_RULE(slice_rule), 1);
    case K::Select:
      return one_input(op, WEFT_RULE(select_rule), 1);
    case K::SliceScatter:
    case K::SelectScatter: {
      OpSpec s = one_input(op, WEFT_RULE(slice_scatter_rule), 1);
      if (op == K::SelectScatter) {
        s = one_input(op, WEFT_RULE(select_scatter_rule), 1);
        s.inputs.push_back(InputDecl{"src", InputRole::Data, 0, 4});
      } else {
        s.inputs.push_back(InputDecl{"src", InputRole::Data, 1, 5});
      }
      return s;
    }
    default:
      break;
  }
  return OpSpec{op, {}};
}

}  // namespace weft::gen
