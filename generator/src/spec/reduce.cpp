// Reductions over a list of dims (sum, mean, var, std, logsumexp, amax, amin), over one optional
// dim (prod, argmax, argmin, any, all), over one required dim with values and indices (max, min),
// the scans (cumsum, cumprod) and softmaxes, which keep the shape, and sorting (sort, argsort,
// topk).
#include <algorithm>

#include "spec/builder.h"
#include "spec/families.h"

namespace weft::gen {

namespace {

template <class B>
using Dims = std::vector<typename B::Int>;

// `dims` wrapped to [0, rank); empty means every dim.
std::vector<std::int64_t> wrapped(const std::vector<std::int64_t>& dims, int rank) {
  std::vector<std::int64_t> out;
  if (dims.empty()) {
    for (int d = 0; d < rank; ++d) out.push_back(d);
    return out;
  }
  for (std::int64_t d : dims) out.push_back(d < 0 ? d + rank : d);
  return out;
}

template <class B>
Dims<B> reduced(B& b, const Dims<B>& x, const std::vector<std::int64_t>& dims, bool keepdim) {
  Dims<B> out;
  for (std::size_t d = 0; d < x.size(); ++d) {
    const bool gone =
        std::find(dims.begin(), dims.end(), static_cast<std::int64_t>(d)) != dims.end();
    if (!gone) {
      out.push_back(x[d]);
    } else if (keepdim) {
      out.push_back(b.lit(1));
    }
  }
  return out;
}

// sum, mean, var, std: a list of distinct dims (empty: all) and keepdim.
template <class B>
void dims_rule(B& b) {
  const Dims<B> x = b.data(0);
  const int rank = b.rank(0);
  const auto dims = b.attr_dims("dim", rank, 0);
  const bool keepdim = b.attr_bool("keepdim");
  b.output(reduced(b, x, wrapped(dims, rank), keepdim));
}

template <class B>
void var_rule(B& b) {
  // More reduced elements than the correction: otherwise the result is inf or NaN whatever
  // the values, a case the value search could never make finite.
  const std::int64_t correction = b.choose("correction", 0, 2);
  b.set_attr("correction", correction);
  const Dims<B> x = b.data(0);
  const int rank = b.rank(0);
  const auto dims = wrapped(b.attr_dims("dim", rank, 0), rank);
  const bool keepdim = b.attr_bool("keepdim");
  typename B::Int count = b.lit(1);
  for (std::int64_t d : dims) count = count * x[static_cast<std::size_t>(d)];
  b.require(count > b.lit(correction));
  b.output(reduced(b, x, dims, keepdim));
  // var_mean, std_mean: the mean, of the same shape
  if (b.spec().op == ir::OpKind::VarMean || b.spec().op == ir::OpKind::StdMean) {
    b.output(reduced(b, x, dims, keepdim));
  }
}

// logsumexp: `dim` is required and never empty (ATen's empty list is not "all dims").
template <class B>
void logsumexp_rule(B& b) {
  const Dims<B> x = b.data(0);
  const int rank = b.rank(0);
  std::vector<std::int64_t> dims;
  if (rank == 0) {
    dims = {b.choose("dim.scalar", -1, 0)};
    b.set_attr("dim", dims);
  } else {
    dims = b.attr_dims("dim", rank, 1);
  }
  const bool keepdim = b.attr_bool("keepdim");
  b.output(reduced(b, x, rank == 0 ? std::vector<std::int64_t>{} : wrapped(dims, rank), keepdim));
}

// prod, argmax, argmin: one dim or none (all elements; keepdim then keeps every dim as 1).
// `nonempty`: argmax/argmin refuse to reduce an empty dim (or an empty tensor without dim).
template <class B, bool kNonEmpty>
void optional_dim_rule(B& b) {
  const Dims<B> x = b.data(0);
  const int rank = b.rank(0);
  const bool keepdim = b.attr_bool("keepdim");
  if (b.chance("dim.present", 0.7)) {
    const std::int64_t dim = b.attr_dim("dim", rank);
    const std::int64_t d = dim < 0 ? dim + std::max(rank, 1) : dim;
    if (kNonEmpty && rank > 0) b.require(x[static_cast<std::size_t>(d)] >= b.lit(1));
    b.output(reduced(b, x, rank == 0 ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{d},
                     keepdim));
    return;
  }
  if (kNonEmpty) {
    for (const auto& v : x) b.require(v >= b.lit(1));
  }
  b.output(reduced(b, x, wrapped({}, rank), keepdim));
}

// max, min: a required dim, two outputs (values, int64 indices) of the same shape.
template <class B>
void values_indices_rule(B& b) {
  const Dims<B> x = b.data(0);
  const int rank = b.rank(0);
  const std::int64_t dim = b.attr_dim("dim", rank);
  const bool keepdim = b.attr_bool("keepdim");
  std::vector<std::int64_t> dims;
  if (rank > 0) {
    dims = {dim < 0 ? dim + rank : dim};
    b.require(x[static_cast<std::size_t>(dims[0])] >= b.lit(1));
  }
  const Dims<B> out = reduced(b, x, dims, keepdim);
  b.output(out);
  b.output(out);
}

// amax, amin: a list of distinct dims (empty: all), each of non-zero size (an empty dim has
// no extreme: "Expected reduction dim to have non-zero size").
template <class B>
void extreme_dims_rule(B& b) {
  const Dims<B> x = b.data(0);
  const int rank = b.rank(0);
  const auto dims = wrapped(b.attr_dims("dim", rank, 0), rank);
  const bool keepdim = b.attr_bool("keepdim");
  for (std::int64_t d : dims) b.require(x[static_cast<std::size_t>(d)] >= b.lit(1));
  b.output(reduced(b, x, dims, keepdim));
}

// cumsum, cumprod: one dim, the input's shape.
template <class B>
void scan_rule(B& b) {
  b.attr_dim("dim", b.rank(0));
  b.output(b.data(0));
}

// cummax, cummin: a dim; values and indices of the input's shape.
template <class B>
void running_extreme_rule(B& b) {
  b.attr_dim("dim", b.rank(0));
  b.output(b.data(0));
  b.output(b.data(0));
}

// sort, argsort: a dim, the input's shape (sort: values and int64 indices alike).
template <class B>
void sort_rule(B& b) {
  b.attr_dim("dim", b.rank(0));
  b.set_attr("descending", b.chance("descending", 0.5));
  b.set_attr("stable", b.chance("stable", 0.5));
  const Dims<B> x = b.data(0);
  b.output(x);
  if (b.spec().op == ir::OpKind::Sort) b.output(x);
}

// topk: k of the line along dim (0 to all of it), values and int64 indices.
template <class B>
void topk_rule(B& b) {
  const int rank = b.rank(0);
  const std::int64_t dim = b.attr_dim("dim", rank);
  b.set_attr("largest", !b.chance("smallest", 0.3));
  Dims<B> out = b.data(0);
  auto size = b.lit(1);  // a 0-d input is a line of one
  std::size_t d = 0;
  if (rank > 0) {
    d = static_cast<std::size_t>(dim < 0 ? dim + rank : dim);
    size = out[d];
  }
  const auto k = b.attr_int("k", 0, hint(size, b.bounds().max_dim));
  b.require(k <= size);
  if (rank > 0) out[d] = k;
  b.output(out);
  b.output(out);
}

template <class B>
void softmax_rule(B& b) {
  b.attr_dim("dim", b.rank(0));
  b.output(b.data(0));
}

// Integers and bool sum (and multiply) to int64.
std::vector<Dtype> sum_dtypes(const std::vector<Dtype>& in, const ir::Attributes&) {
  return {is_floating(in.at(0)) ? in[0] : Dtype::Int64};
}

std::vector<Dtype> two_same_dtypes(const std::vector<Dtype>& in, const ir::Attributes&) {
  return {in.at(0), in.at(0)};
}

std::vector<Dtype> values_indices_dtypes(const std::vector<Dtype>& in, const ir::Attributes&) {
  return {in.at(0), Dtype::Int64};
}

OpSpec one_input(ir::OpKind op, unsigned dtypes_allowed,
                 std::vector<Dtype> (*out)(const std::vector<Dtype>&, const ir::Attributes&),
                 void (*sample)(Sampler&), void (*encode)(Encoder&)) {
  OpSpec s{op, {InputDecl{"self"}}};
  s.dtypes = dtypes_allowed;
  s.output_dtypes = out;
  s.sample = sample;
  s.encode = encode;
  return s;
}

}  // namespace

OpSpec reduce_spec(ir::OpKind op) {
  using K = ir::OpKind;
  switch (op) {
    case K::Sum:
      return one_input(op, kAnyDtype, sum_dtypes, WEFT_RULE(dims_rule));
    case K::Mean:
      return one_input(op, kFloat, dtypes::same, WEFT_RULE(dims_rule));
    case K::Var:
    case K::Std:
      return one_input(op, kFloat, dtypes::same, WEFT_RULE(var_rule));
    case K::VarMean:
    case K::StdMean:
      return one_input(op, kFloat, two_same_dtypes, WEFT_RULE(var_rule));
    case K::Logsumexp: {
      OpSpec s = one_input(op, kAnyDtype, dtypes::floating, WEFT_RULE(logsumexp_rule));
      s.hint = ValueHint::Bounded;
      return s;
    }
    case K::Prod: {
      OpSpec s = one_input(op, kAnyDtype, sum_dtypes, &optional_dim_rule<Sampler, false>,
                           &optional_dim_rule<Encoder, false>);
      s.hint = ValueHint::Bounded;  // products of many large values overflow
      return s;
    }
    case K::Argmax:
    case K::Argmin:
      // Bool is refused ("argmax_cpu" is not implemented for 'Bool').
      return one_input(op, kFloat | kInt, dtypes::int64, &optional_dim_rule<Sampler, true>,
                       &optional_dim_rule<Encoder, true>);
    case K::Max:
    case K::Min:
      return one_input(op, kAnyDtype, values_indices_dtypes, WEFT_RULE(values_indices_rule));
    case K::Amax:
    case K::Amin:
      return one_input(op, kFloat | kInt, dtypes::same, WEFT_RULE(extreme_dims_rule));
    case K::Any:
    case K::All:
      // An empty line is any = False, all = True: no size is refused.
      return one_input(op, kAnyDtype, dtypes::boolean, &optional_dim_rule<Sampler, false>,
                       &optional_dim_rule<Encoder, false>);
    case K::Cumsum:
      return one_input(op, kAnyDtype, sum_dtypes, WEFT_RULE(scan_rule));
    case K::Cumprod: {
      OpSpec s = one_input(op, kAnyDtype, sum_dtypes, WEFT_RULE(scan_rule));
      s.hint = ValueHint::Bounded;  // running products of large values overflow
      return s;
    }
    case K::Logcumsumexp:
      return one_input(op, kFloat, dtypes::same, WEFT_RULE(scan_rule));
    case K::Cummax:
    case K::Cummin:
      return one_input(op, kAnyDtype, values_indices_dtypes, WEFT_RULE(running_extreme_rule));
    case K::Softmax:
    case K::LogSoftmax:
      return one_input(op, kFloat, dtypes::same, WEFT_RULE(softmax_rule));
    case K::Sort:
      return one_input(op, kFloat | kInt, values_indices_dtypes, WEFT_RULE(sort_rule));
    case K::Argsort:
      return one_input(op, kFloat | kInt, dtypes::int64, WEFT_RULE(sort_rule));
    case K::Topk:
      return one_input(op, kFloat | kInt, values_indices_dtypes, WEFT_RULE(topk_rule));
    default:
      break;
  }
  return OpSpec{op, {}};
}

}  // namespace weft::gen
