// Sliding blocks: im2col (F.unfold) turns [N, C, H, W] (or [C, H, W]) into the columns
// [N, C*kh*kw, L] of its kernel-sized blocks, col2im (F.fold) sums such columns into
// [N, C, *output_size]. L is the number of blocks, PyTorch's
// (size + 2*padding - dilation*(kernel - 1) - 1) / stride + 1 per spatial dim, multiplied.
#include <string>
#include <vector>

#include "spec/builder.h"
#include "spec/families.h"

namespace weft::gen {

namespace {

// Blocks along one spatial dim; rejects a size whose blocks would not fit.
template <class B>
typename B::Int block_count(B& b, const typename B::Int& size, const typename B::Int& kernel,
                            const typename B::Int& dilation, const typename B::Int& padding,
                            const typename B::Int& stride) {
  const typename B::Int span = size + 2 * padding - dilation * (kernel - 1) - 1;
  b.require(span >= 0);
  return span / stride + 1;
}

template <class B>
void im2col_rule(B& b) {
  using Int = typename B::Int;
  const int rank = b.rank(0);
  b.require_that(rank == 3 || rank == 4, "im2col: input rank");
  const auto x = b.data(0);
  const std::size_t channel = rank == 4 ? 1 : 0;
  for (std::size_t d = channel; d < x.size(); ++d) b.require(x[d] >= 1);
  const std::int64_t max_dim = b.bounds().max_dim;
  const auto dilation = b.attr_ints("dilation", 2, 1, b.chance("dilation.edge", 0.2) ? 3 : 1);
  const auto padding = b.attr_ints("padding", 2, 0, b.chance("padding.some", 0.3) ? 2 : 0);
  std::vector<Int> kernel;
  for (std::size_t i = 0; i < 2; ++i) {
    // A kernel that fits the unpadded input, mostly small.
    const std::int64_t in = hint(x[channel + 1 + i], max_dim);
    const std::int64_t fits = (in - 1) / hint(dilation[i], 1) + 1;
    kernel.push_back(b.var("kernel_size." + std::to_string(i), 1,
                           std::max<std::int64_t>(1, std::min<std::int64_t>(fits, 3))));
  }
  set_ints(b, "kernel_size", kernel);
  const auto stride = b.attr_ints("stride", 2, 1, b.chance("stride.edge", 0.3) ? 3 : 1);
  Int blocks = b.lit(1);
  for (std::size_t i = 0; i < 2; ++i) {
    blocks =
        blocks * block_count(b, x[channel + 1 + i], kernel[i], dilation[i], padding[i], stride[i]);
  }
  std::vector<Int> out(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(channel));
  out.push_back(x[channel] * kernel[0] * kernel[1]);
  out.push_back(blocks);
  b.output(out);
}

template <class B>
void col2im_rule(B& b) {
  using Int = typename B::Int;
  const int rank = b.rank(0);
  b.require_that(rank == 2 || rank == 3, "col2im: input rank");
  const std::size_t channel = rank == 3 ? 1 : 0;
  const std::int64_t max_dim = b.bounds().max_dim;
  const auto output_size =
      b.attr_ints("output_size", 2, 1, b.chance("output_size.large", 0.15) ? max_dim : 6);
  const auto kernel = b.attr_ints("kernel_size", 2, 1, 3);
  const auto dilation = b.attr_ints("dilation", 2, 1, b.chance("dilation.edge", 0.2) ? 2 : 1);
  const auto padding = b.attr_ints("padding", 2, 0, b.chance("padding.some", 0.3) ? 1 : 0);
  const auto stride = b.attr_ints("stride", 2, 1, b.chance("stride.edge", 0.4) ? 2 : 1);
  Int blocks = b.lit(1);
  for (std::size_t i = 0; i < 2; ++i) {
    blocks = blocks * block_count(b, output_size[i], kernel[i], dilation[i], padding[i], stride[i]);
  }
  const Int channels = b.var("channels", 1, 4);
  std::vector<Int> columns;
  if (b.bound(0)) {
    columns = b.data(0);
    b.require(columns[channel] == channels * kernel[0] * kernel[1]);
    b.require(columns[channel + 1] == blocks);
  } else {
    if (channel == 1) columns.push_back(b.var("batch", 1, 3));
    columns.push_back(channels * kernel[0] * kernel[1]);
    columns.push_back(blocks);
    b.shape_input(0, columns);
  }
  std::vector<Int> out(columns.begin(), columns.begin() + static_cast<std::ptrdiff_t>(channel));
  out.push_back(channels);
  out.insert(out.end(), output_size.begin(), output_size.end());
  b.output(out);
}

OpSpec sliding_blocks(ir::OpKind op, void (*sample)(Sampler&), void (*encode)(Encoder&),
                      int min_rank) {
  OpSpec s;
  s.op = op;
  s.inputs = {InputDecl{"self", InputRole::Data, min_rank, min_rank + 1}};
  s.dtypes = kFloat;
  s.output_dtypes = dtypes::same;
  s.sample = sample;
  s.encode = encode;
  return s;
}

}  // namespace

OpSpec fold_spec(ir::OpKind op) {
  if (op == ir::OpKind::Im2col) {
    return sliding_blocks(op, &im2col_rule<Sampler>, &im2col_rule<Encoder>, 3);
  }
  if (op == ir::OpKind::Col2im) {
    return sliding_blocks(op, &col2im_rule<Sampler>, &col2im_rule<Encoder>, 2);
  }
  return OpSpec{op, {}};
}

}  // namespace weft::gen
