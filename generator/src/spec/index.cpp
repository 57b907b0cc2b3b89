// Indexing by an Index input (fresh int64 values the value search keeps in range): gather
// (an index of the input's rank, no larger than it except along `dim`) and index_select (a
// 1-d index, or a 0-d one), and the writes: scatter, scatter_add and scatter_reduce (an index
// of src's shape: PyTorch's backward refuses a src larger than the index; scatter's no longer
// than self along `dim`, as each line's indices are drawn all different) and
// index_add (a 1-d index, one entry per slice of source along `dim`), and index_put (a 1-d
// index into dim 0, values broadcast to the indexed rows; without accumulate, no more indices
// than rows, which the value search draws all different).
#include <algorithm>
#include <string>

#include "spec/builder.h"
#include "spec/families.h"

namespace weft::gen {

namespace {

std::int64_t min_dim(const RuleContext& b) {
  return b.bounds().allow_zero_dims ? 0 : 1;
}

template <class B>
void gather_rule(B& b) {
  using Int = typename B::Int;
  const int rank = b.rank(0);
  const auto x = b.data(0);
  const std::int64_t dim = b.attr_dim("dim", rank);
  const auto d = static_cast<std::size_t>(rank == 0 ? 0 : (dim < 0 ? dim + rank : dim));
  // Index values must exist along `dim`.
  if (rank > 0) b.require(x[d] >= 1);
  std::vector<Int> index;
  if (b.bound(1)) {
    b.require_that(b.rank(1) == rank, "gather: index rank");
    index = b.data(1);
    for (std::size_t i = 0; i < index.size(); ++i) {
      if (i != d) b.require(index[i] <= x[i]);
    }
  } else {
    // A fresh index of the input's rank (whatever rank the binding drew).
    const std::int64_t max_dim = b.bounds().max_dim;
    const std::int64_t along = b.chance("gather.long", 0.15) ? max_dim : 6;
    for (int i = 0; i < rank; ++i) {
      const auto u = static_cast<std::size_t>(i);
      const std::string name = "index." + std::to_string(i);
      if (u == d) {
        index.push_back(b.var(name, min_dim(b), along));
      } else {
        const Int v = b.var(name, min_dim(b), std::max(min_dim(b), hint(x[u], max_dim)));
        b.require(v <= x[u]);
        index.push_back(v);
      }
    }
    b.shape_input(1, index);
  }
  b.output(index);
}

template <class B>
void index_select_rule(B& b) {
  using Int = typename B::Int;
  const int rank = b.rank(0);
  auto x = b.data(0);
  const std::int64_t dim = b.attr_dim("dim", rank);
  if (rank > 0) b.require(x[static_cast<std::size_t>(dim < 0 ? dim + rank : dim)] >= 1);
  Int count = b.lit(1);
  if (b.bound(1)) {
    b.require_that(b.rank(1) <= 1, "index_select: index rank");
    const auto index = b.data(1);
    if (!index.empty()) count = index[0];
  } else if (rank == 0 || b.chance("index.scalar", 0.1)) {
    b.shape_input(1, {});  // a 0-d index selects one entry
  } else {
    const std::int64_t hi = b.chance("index.long", 0.15) ? b.bounds().max_dim : 8;
    count = b.var("index.0", min_dim(b), hi);
    b.shape_input(1, {count});
  }
  // A 0-d input takes exactly one index and stays 0-d.
  if (rank == 0) {
    b.require(count == 1);
  } else {
    x[static_cast<std::size_t>(dim < 0 ? dim + rank : dim)] = count;
  }
  b.output(x);
}

// self, index, src: index and src share a shape that fits self apart from `dim`.
template <class B>
void scatter_rule(B& b) {
  using Int = typename B::Int;
  const int rank = b.rank(0);
  const auto x = b.data(0);
  const std::int64_t dim = b.attr_dim("dim", rank);
  const auto d = static_cast<std::size_t>(rank == 0 ? 0 : (dim < 0 ? dim + rank : dim));
  if (rank > 0) b.require(x[d] >= 1);
  std::vector<Int> index;
  if (b.bound(2)) {
    b.require_that(b.rank(2) == rank, "scatter: src rank");
    index = b.data(2);
  } else {
    const std::int64_t max_dim = b.bounds().max_dim;
    const std::int64_t along = b.chance("src.long", 0.15) ? max_dim : 6;
    for (int i = 0; i < rank; ++i) {
      const auto u = static_cast<std::size_t>(i);
      const std::string name = "src." + std::to_string(i);
      index.push_back(u == d ? b.var(name, min_dim(b), along)
                             : b.var(name, min_dim(b), std::max(min_dim(b), hint(x[u], max_dim))));
    }
    b.shape_input(2, index);
  }
  for (std::size_t i = 0; i < index.size(); ++i) {
    if (i != d) b.require(index[i] <= x[i]);
  }
  // scatter writes: with a repeated index the write that stays is undefined, so each line
  // along `dim` names distinct positions (the value search draws them so).
  if (b.spec().op == ir::OpKind::Scatter && rank > 0) b.require(index[d] <= x[d]);
  b.shape_input(1, index);
  if (b.spec().op == ir::OpKind::ScatterReduce) {
    b.attr_string("reduce", {"sum", "prod", "mean", "amax", "amin"});
    b.set_attr("include_self", !b.chance("include_self.false", 0.3));
  }
  b.output(x);
}

// self, index (1-d), source: source is self with index's length along `dim`.
template <class B>
void index_add_rule(B& b) {
  const int rank = b.rank(0);
  b.require_that(rank >= 1, "index_add: a 0-d self takes a 0-d source");
  auto x = b.data(0);
  const std::int64_t dim = b.attr_dim("dim", rank);
  const auto d = static_cast<std::size_t>(dim < 0 ? dim + rank : dim);
  b.require(x[d] >= 1);
  const std::int64_t hi = b.chance("index.long", 0.15) ? b.bounds().max_dim : 8;
  const auto count = b.var("index.0", min_dim(b), hi);
  b.shape_input(1, {count});
  auto source = x;
  source[d] = count;
  b.shape_input(2, source);
  // A whole alpha at times; a fractional one (refused for integral tensors) only on floats,
  // which is all this spec draws.
  const std::int64_t kind = b.choose("alpha.kind", 0, 3);
  if (kind == 1) b.set_attr("alpha", static_cast<double>(b.choose("alpha.whole", -2, 3)));
  if (kind >= 2) b.attr_float("alpha", -2.0, 2.0);
  b.output(x);
}

// self, index (1-d, into dim 0), values: values broadcast to [count, self's other dims].
template <class B>
void index_put_rule(B& b) {
  const int rank = b.rank(0);
  b.require_that(rank >= 1, "index_put: a 0-d self has no dim to index");
  const auto x = b.data(0);
  b.require(x[0] >= 1);
  const bool accumulate = b.chance("accumulate", 0.5);
  b.set_attr("accumulate", accumulate);
  // A bound input's dims are required, not set: the sampler's shape_input does not check
  // them against an existing value (a shrink proposal once kept values of 7 rows for 3 indices).
  const std::int64_t hi = b.chance("index.long", 0.15) ? b.bounds().max_dim : 8;
  b.require_that(!b.bound(1) || b.rank(1) == 1, "index_put: a 1-d index");
  const auto count = b.bound(1) ? b.data(1)[0] : b.var("index.0", min_dim(b), hi);
  // Without accumulate a repeated index is undefined: at most one write per row.
  if (!accumulate) b.require(count <= x[0]);
  if (!b.bound(1)) b.shape_input(1, {count});
  auto rows = x;
  rows[0] = count;
  // values: the indexed rows (rank of self), one row broadcast to all of them (one less), or a
  // 0-d value: the last dims of the rows.
  int values_rank = rank;
  if (b.bound(2)) {
    values_rank = b.rank(2);
    b.require_that(values_rank <= rank, "index_put: values of higher rank than self");
  } else {
    const std::int64_t form = b.choose("values.form", 0, 2);
    values_rank = form == 2 ? 0 : form == 1 ? rank - 1 : rank;
  }
  const decltype(rows) values(rows.end() - values_rank, rows.end());
  if (b.bound(2)) {
    const auto bound_values = b.data(2);
    for (std::size_t i = 0; i < values.size(); ++i) b.require(bound_values[i] == values[i]);
  } else {
    b.shape_input(2, values);
  }
  b.output(x);
}

OpSpec make(ir::OpKind op, int index_max_rank, void (*sample)(Sampler&), void (*encode)(Encoder&)) {
  OpSpec s;
  s.op = op;
  s.inputs = {InputDecl{"self", InputRole::Data, 0, 5},
              InputDecl{"index", InputRole::Index, 0, index_max_rank}};
  s.dtypes = kAnyDtype;
  s.output_dtypes = dtypes::same;
  s.sample = sample;
  s.encode = encode;
  return s;
}

}  // namespace

OpSpec index_spec(ir::OpKind op) {
  using K = ir::OpKind;
  switch (op) {
    case K::Gather:
      return make(op, 5, WEFT_RULE(gather_rule));
    case K::IndexSelect:
      return make(op, 1, WEFT_RULE(index_select_rule));
    case K::ScatterAdd:
    case K::ScatterReduce:
    case K::Scatter: {
      OpSpec s = make(op, 5, WEFT_RULE(scatter_rule));
      s.inputs.push_back(InputDecl{"src", InputRole::Data, 0, 5});
      s.dtypes = kFloat | kInt;
      return s;
    }
    case K::IndexAdd: {
      OpSpec s = make(op, 1, WEFT_RULE(index_add_rule));
      s.inputs.push_back(InputDecl{"source", InputRole::Data, 1, 5});
      s.inputs[0].min_rank = 1;
      s.dtypes = kFloat;
      return s;
    }
    case K::IndexPut: {
      OpSpec s = make(op, 1, WEFT_RULE(index_put_rule));
      s.inputs.push_back(InputDecl{"values", InputRole::Data, 0, 5});
      s.inputs[0].min_rank = 1;
      s.dtypes = kFloat | kInt;
      return s;
    }
    default:
      break;
  }
  return OpSpec{op, {}};
}

}  // namespace weft::gen
