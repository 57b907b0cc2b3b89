// Pooling: max and average pooling over the last one, two or three dims of [N, C, *spatial]
// (or unbatched [C, *spatial]) with PyTorch's pooling_output_shape, adaptive average pooling
// over two or three and adaptive max pooling over one or two.
#include <algorithm>
#include <string>

#include "spec/builder.h"
#include "spec/families.h"

namespace weft::gen {

namespace {

// How many elements a list attribute has: one per spatial dim, or now and then (2-d and 3-d
// pools) a single one that the op applies to every dim.
int list_length(RuleContext& b, const std::string& name, int dims) {
  return dims > 1 && b.chance(name + ".single", 0.25) ? 1 : dims;
}

template <class T>
std::vector<T> expanded(std::vector<T> v, int dims) {
  while (static_cast<int>(v.size()) < dims) v.push_back(v[0]);
  return v;
}

template <class B, int Dims, bool Max>
void pool_rule(B& b) {
  using Int = typename B::Int;
  const int rank = b.rank(0);
  b.require_that(rank == Dims + 1 || rank == Dims + 2, "pool: input rank");
  const auto x = b.data(0);
  const int first = rank - Dims;
  // Every dim but the batch dim must be non-empty.
  for (int d = rank == Dims + 2 ? 1 : 0; d < rank; ++d)
    b.require(x[static_cast<std::size_t>(d)] >= 1);
  const std::int64_t max_dim = b.bounds().max_dim;

  // Dilation first (max pooling only), then kernels that fit the input, then paddings of at
  // most half the kernel, then strides.
  std::vector<Int> dilation(static_cast<std::size_t>(Dims), b.lit(1));
  if constexpr (Max) {
    const std::int64_t hi = b.chance("dilation.edge", 0.15) ? 5 : 2;
    dilation = expanded(b.attr_ints("dilation", list_length(b, "dilation", Dims), 1, hi), Dims);
  }
  const int k_count = list_length(b, "kernel_size", Dims);
  std::vector<Int> kernel;
  for (int i = 0; i < k_count; ++i) {
    std::int64_t fits = max_dim;
    for (int j = i; j < Dims; j += k_count) {  // a single kernel must fit every dim
      const auto& in = x[static_cast<std::size_t>(first + j)];
      fits = std::min(fits,
                      (hint(in, max_dim) - 1) / hint(dilation[static_cast<std::size_t>(j)], 1) + 1);
    }
    const std::int64_t small = b.chance("kernel.large." + std::to_string(i), 0.15) ? max_dim : 4;
    kernel.push_back(b.var("kernel_size." + std::to_string(i), 1,
                           std::max<std::int64_t>(1, std::min({fits, small, max_dim}))));
  }
  set_ints(b, "kernel_size", kernel);
  kernel = expanded(kernel, Dims);

  std::vector<Int> padding;
  const int p_count = list_length(b, "padding", Dims);
  for (int i = 0; i < p_count; ++i) {
    // pad <= k/2 for every dim the value applies to; the sampler draws within it.
    std::int64_t half = max_dim / 2;
    for (int j = i; j < Dims; j += p_count) {
      half = std::min(half, hint(kernel[static_cast<std::size_t>(j)], max_dim) / 2);
    }
    const Int p = b.var("padding." + std::to_string(i), 0, std::max<std::int64_t>(0, half));
    for (int j = i; j < Dims; j += p_count) b.require(2 * p <= kernel[static_cast<std::size_t>(j)]);
    padding.push_back(p);
  }
  set_ints(b, "padding", padding);
  padding = expanded(padding, Dims);

  // An empty stride means stride = kernel_size.
  std::vector<Int> stride = kernel;
  if (!b.chance("stride.empty", 0.3)) {
    const std::int64_t hi = b.chance("stride.edge", 0.15) ? 8 : 3;
    stride = expanded(b.attr_ints("stride", list_length(b, "stride", Dims), 1, hi), Dims);
  } else {
    b.set_attr("stride", std::vector<std::int64_t>{});
  }
  const bool ceil_mode = b.attr_bool("ceil_mode");
  if constexpr (!Max) b.attr_bool("count_include_pad");

  std::vector<Int> out(x.begin(), x.begin() + first);
  for (int i = 0; i < Dims; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const Int& in = x[static_cast<std::size_t>(first + i)];
    // avg_pool3d alone also wants the unpadded input to hold a kernel (PyTorch's
    // check_input_size); a later shape set of a dynamic case broke it without this.
    if constexpr (!Max && Dims == 3) b.require(in >= kernel[u]);
    Int span = in + 2 * padding[u] - dilation[u] * (kernel[u] - 1) - 1;
    if (ceil_mode) span = span + stride[u] - 1;
    b.require(span >= 0);  // otherwise the output size is below 1
    Int size = span / stride[u] + 1;
    // With ceil_mode the last window must start inside the input or the left padding; the
    // correction never takes a size of 1 below 1 (0 < in + p).
    if (ceil_mode) size = B::select((size - 1) * stride[u] >= in + padding[u], size - 1, size);
    out.push_back(size);
  }
  b.output(out);
}

template <class B, int Dims>
void adaptive_rule(B& b) {
  const int rank = b.rank(0);
  b.require_that(rank == Dims + 1 || rank == Dims + 2, "adaptive pool: input rank");
  const auto x = b.data(0);
  for (int d = 1; d < rank; ++d) b.require(x[static_cast<std::size_t>(d)] >= 1);
  // The IR's schema wants every size spelled out (validate() refuses a single one).
  const std::int64_t hi = b.chance("output_size.large", 0.15) ? b.bounds().max_dim : 8;
  const auto size = b.attr_ints("output_size", Dims, 1, hi);
  std::vector<typename B::Int> out(x.begin(), x.end() - Dims);
  out.insert(out.end(), size.begin(), size.end());
  b.output(out);
}

OpSpec pool(ir::OpKind op, void (*sample)(Sampler&), void (*encode)(Encoder&), int dims) {
  OpSpec s;
  s.op = op;
  s.inputs = {InputDecl{"self", InputRole::Data, dims + 1, dims + 2}};
  s.dtypes = kFloat;
  s.output_dtypes = dtypes::same;
  s.sample = sample;
  s.encode = encode;
  return s;
}

}  // namespace

OpSpec pool_spec(ir::OpKind op) {
  using K = ir::OpKind;
  switch (op) {
    case K::MaxPool1d:
      return pool(op, &pool_rule<Sampler, 1, true>, &pool_rule<Encoder, 1, true>, 1);
    case K::MaxPool2d:
      return pool(op, &pool_rule<Sampler, 2, true>, &pool_rule<Encoder, 2, true>, 2);
    case K::AvgPool1d:
      return pool(op, &pool_rule<Sampler, 1, false>, &pool_rule<Encoder, 1, false>, 1);
    case K::AvgPool2d:
      return pool(op, &pool_rule<Sampler, 2, false>, &pool_rule<Encoder, 2, false>, 2);
    case K::MaxPool3d:
      return pool(op, &pool_rule<Sampler, 3, true>, &pool_rule<Encoder, 3, true>, 3);
    case K::AvgPool3d:
      return pool(op, &pool_rule<Sampler, 3, false>, &pool_rule<Encoder, 3, false>, 3);
    case K::AdaptiveAvgPool2d:
      return pool(op, &adaptive_rule<Sampler, 2>, &adaptive_rule<Encoder, 2>, 2);
    case K::AdaptiveAvgPool3d:
      return pool(op, &adaptive_rule<Sampler, 3>, &adaptive_rule<Encoder, 3>, 3);
    case K::AdaptiveMaxPool1d:
      return pool(op, &adaptive_rule<Sampler, 1>, &adaptive_rule<Encoder, 1>, 1);
    case K::AdaptiveMaxPool2d:
      return pool(op, &adaptive_rule<Sampler, 2>, &adaptive_rule<Encoder, 2>, 2);
    default:
      break;
  }
  return OpSpec{op, {}};
}

}  // namespace weft::gen
