// Convolutions: input [N, C, *spatial] (or unbatched [C, *spatial]), weight
// [out, C/groups, *kernel] and an optional bias [out], all spelled out by the rule. Each
// spatial dim gives (in + 2p - d(k-1) - 1)/s + 1, which must be at least 1.
#include <algorithm>
#include <string>

#include "spec/builder.h"
#include "spec/families.h"

namespace weft::gen {

namespace {

// One value per spatial dim; now and then a one-element list, which the op (and PyTorch)
// applies to every spatial dim.
template <class B>
std::vector<typename B::Int> per_dim(B& b, const std::string& name, int dims, std::int64_t lo,
                                     std::int64_t small_hi, std::int64_t edge_hi) {
  const int count = dims > 1 && b.chance(name + ".single", 0.25) ? 1 : dims;
  const std::int64_t hi = b.chance(name + ".edge", 0.15) ? edge_hi : small_hi;
  auto values = b.attr_ints(name, count, lo, hi);
  while (static_cast<int>(values.size()) < dims) values.push_back(values[0]);
  return values;
}

template <class B, int Dims>
void conv_rule(B& b) {
  using Int = typename B::Int;
  const int rank = b.rank(0);
  b.require_that(rank == Dims + 1 || rank == Dims + 2, "conv: input rank");
  const auto x = b.data(0);
  const int first = rank - Dims;  // the first spatial dim
  const Int channels = x[static_cast<std::size_t>(first - 1)];
  b.require(channels >= 1);

  // groups > 1 at a small rate: it must divide the input channels.
  const std::int64_t max_groups = b.chance("groups.any", 0.3) ? 4 : 1;
  const Int groups = b.attr_int("groups", 1, max_groups);
  b.require(channels % groups == 0);
  const Int per_group = b.var("out_per_group", 1, b.chance("out.wide", 0.1) ? 16 : 4);
  const Int out_channels = per_group * groups;

  const auto stride = per_dim(b, "stride", Dims, 1, 2, 8);
  const auto padding = per_dim(b, "padding", Dims, 0, 2, 8);
  const auto dilation = per_dim(b, "dilation", Dims, 1, 2, 6);

  std::vector<Int> weight{out_channels, channels / groups};
  std::vector<Int> out;
  if (rank == Dims + 2) out.push_back(x[0]);
  out.push_back(out_channels);
  const std::int64_t max_dim = b.bounds().max_dim;
  for (int i = 0; i < Dims; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const Int& in = x[static_cast<std::size_t>(first + i)];
    b.require(in >= 1);
    // Draw the kernel within the padded input: d(k-1)+1 <= in + 2p.
    const std::int64_t fits =
        (hint(in, max_dim) + 2 * hint(padding[u], 0) - 1) / hint(dilation[u], 1) + 1;
    const std::int64_t small = b.chance("kernel.large." + std::to_string(i), 0.15) ? max_dim : 5;
    const Int k = b.var("kernel." + std::to_string(i), 1,
                        std::max<std::int64_t>(1, std::min({fits, small, max_dim})));
    const Int span = in + 2 * padding[u] - dilation[u] * (k - 1) - 1;
    b.require(span >= 0);
    weight.push_back(k);
    out.push_back(span / stride[u] + 1);
  }
  b.shape_input(1, weight);
  if (b.present(2)) b.shape_input(2, {out_channels});
  b.output(out);
}

// Transposed convolutions: weight [C, out/groups, *kernel]; each spatial dim gives
// (in - 1) s - 2p + d(k-1) + output_padding + 1 >= 1, with output_padding below the stride
// or the dilation.
template <class B, int Dims>
void conv_transpose_rule(B& b) {
  using Int = typename B::Int;
  const int rank = b.rank(0);
  b.require_that(rank == Dims + 1 || rank == Dims + 2, "conv_transpose: input rank");
  const auto x = b.data(0);
  const int first = rank - Dims;
  const Int channels = x[static_cast<std::size_t>(first - 1)];
  b.require(channels >= 1);

  const std::int64_t max_groups = b.chance("groups.any", 0.3) ? 4 : 1;
  const Int groups = b.attr_int("groups", 1, max_groups);
  b.require(channels % groups == 0);
  const Int per_group = b.var("out_per_group", 1, b.chance("out.wide", 0.1) ? 16 : 4);

  const auto stride = per_dim(b, "stride", Dims, 1, 3, 6);
  const auto padding = per_dim(b, "padding", Dims, 0, 2, 6);
  const auto output_padding = per_dim(b, "output_padding", Dims, 0, 1, 3);
  const auto dilation = per_dim(b, "dilation", Dims, 1, 2, 4);

  std::vector<Int> weight{channels, per_group};
  std::vector<Int> out;
  if (rank == Dims + 2) out.push_back(x[0]);
  out.push_back(per_group * groups);
  const std::int64_t max_dim = b.bounds().max_dim;
  for (int i = 0; i < Dims; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const Int& in = x[static_cast<std::size_t>(first + i)];
    b.require(in >= 1);
    b.require(output_padding[u] < stride[u] || output_padding[u] < dilation[u]);
    const std::int64_t small = b.chance("kernel.large." + std::to_string(i), 0.15) ? 8 : 4;
    const Int k = b.var("kernel." + std::to_string(i), 1, std::min(small, max_dim));
    const Int size =
        (in - 1) * stride[u] - 2 * padding[u] + dilation[u] * (k - 1) + output_padding[u] + 1;
    b.require(size >= 1);
    b.require(size <= b.lit(max_dim));
    weight.push_back(k);
    out.push_back(size);
  }
  b.shape_input(1, weight);
  if (b.present(2)) b.shape_input(2, {per_group * groups});
  b.output(out);
}

OpSpec conv(ir::OpKind op, void (*sample)(Sampler&), void (*encode)(Encoder&), int dims) {
  OpSpec s;
  s.op = op;
  s.inputs = {InputDecl{"input", InputRole::Data, dims + 1, dims + 2},
              InputDecl{"weight", InputRole::Weight, dims + 2, dims + 2},
              InputDecl{"bias", InputRole::Weight, 1, 1, /*optional=*/true}};
  s.dtypes = kFloat;
  s.output_dtypes = dtypes::same;
  s.sample = sample;
  s.encode = encode;
  return s;
}

}  // namespace

OpSpec conv_spec(ir::OpKind op) {
  using K = ir::OpKind;
  switch (op) {
    case K::Conv1d:
      return conv(op, &conv_rule<Sampler, 1>, &conv_rule<Encoder, 1>, 1);
    case K::Conv2d:
      return conv(op, &conv_rule<Sampler, 2>, &conv_rule<Encoder, 2>, 2);
    case K::ConvTranspose1d:
      return conv(op, &conv_transpose_rule<Sampler, 1>, &conv_transpose_rule<Encoder, 1>, 1);
    case K::ConvTranspose2d:
      return conv(op, &conv_transpose_rule<Sampler, 2>, &conv_transpose_rule<Encoder, 2>, 2);
    default:
      break;
  }
  return OpSpec{op, {}};
}

}  // namespace weft::gen
