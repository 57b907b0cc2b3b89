// Sliding blocks: im2col (F.unfold) extracts every kernel-sized block of [N, C, H, W] as a
// column of [N, C*kh*kw, L], col2im (F.fold) sums such columns back into [N, C, H, W]
// (overlapping blocks add up). Unbatched [C, H, W] and [C*kh*kw, L] work as one image. Each is the
// other's adjoint, so each one's backward is the other op, and gradients of any order follow.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/im2col.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace {

struct BlockParams {
  std::int64_t sh, sw, ph, pw, dh, dw;
};

// One image's sizes as the kernels read them; Ho x Wo blocks.
struct BlockGeometry {
  std::int64_t C, H, W, kh, kw, Ho, Wo;
};

void expect_pairs(const char* op, const std::vector<std::int64_t>& kernel_size,
                  const std::vector<std::int64_t>& dilation,
                  const std::vector<std::int64_t>& padding,
                  const std::vector<std::int64_t>& stride) {
  const auto pair = [op](const char* name, const std::vector<std::int64_t>& v, std::int64_t min) {
    if (v.size() != 2) {
      throw Error(std::string(op) + ": It is expected " + name + " equals to 2, but got size " +
                  std::to_string(v.size()));
    }
    if (v[0] < min || v[1] < min) {
      throw Error(std::string(op) + ": expected " + name + " to be " +
                  (min > 0 ? "greater than zero" : "non-negative") + ", but got " + name + "=[" +
                  std::to_string(v[0]) + ", " + std::to_string(v[1]) + "]");
    }
  };
  pair("kernel_size", kernel_size, 1);
  pair("dilation", dilation, 1);
  pair("padding", padding, 0);
  pair("stride", stride, 1);
}

BlockGeometry blocks(std::int64_t C, std::int64_t H, std::int64_t W,
                     const std::vector<std::int64_t>& k, const BlockParams& p) {
  BlockGeometry g{C, H, W, k[0], k[1], 0, 0};
  g.Ho = (H + 2 * p.ph - p.dh * (k[0] - 1) - 1) / p.sh + 1;
  g.Wo = (W + 2 * p.pw - p.dw * (k[1] - 1) - 1) / p.sw + 1;
  return g;
}

std::string pair_text(const char* name, const std::vector<std::int64_t>& v) {
  return std::string(name) + "=(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ")";
}

// "kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0)", as PyTorch's messages write them.
std::string pairs_text(const std::vector<std::int64_t>& kernel_size,
                       const std::vector<std::int64_t>& dilation,
                       const std::vector<std::int64_t>& padding) {
  return pair_text("kernel_size", kernel_size) + ", " + pair_text("dilation", dilation) + ", " +
         pair_text("padding", padding);
}

BlockParams params(const std::vector<std::int64_t>& dilation,
                   const std::vector<std::int64_t>& padding,
                   const std::vector<std::int64_t>& stride) {
  return {stride[0], stride[1], padding[0], padding[1], dilation[0], dilation[1]};
}

}  // namespace

Tensor im2col(const Tensor& x, const std::vector<std::int64_t>& kernel_size,
              const std::vector<std::int64_t>& dilation, const std::vector<std::int64_t>& padding,
              const std::vector<std::int64_t>& stride) {
  WEFT_TRACE_OP(Im2col, (x),
                ir::Attributes()
                    .set("kernel_size", kernel_size)
                    .set("dilation", dilation)
                    .set("padding", padding)
                    .set("stride", stride),
                im2col(x, kernel_size, dilation, padding, stride));
  expect_pairs("im2col", kernel_size, dilation, padding, stride);
  const bool batched = x.dim() == 4;
  bool valid = x.dim() == 3 || batched;
  for (std::int64_t d = batched ? 1 : 0; valid && d < x.dim(); ++d) valid = x.size(d) > 0;
  if (!valid) {
    throw Error(
        "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
        "non-zero dimensions for input, but got: " +
        shape_str(x.sizes()));
  }
  // One image of an unbatched input.
  Shape s = x.sizes();
  if (!batched) s.insert(s.begin(), 1);
  const BlockParams p = params(dilation, padding, stride);
  const BlockGeometry g = blocks(s[1], s[2], s[3], kernel_size, p);
  if (g.Ho < 1 || g.Wo < 1) {
    throw Error("Given input with spatial size (" + std::to_string(s[2]) + ", " +
                std::to_string(s[3]) + "), " + pairs_text(kernel_size, dilation, padding) +
                ", calculated shape of the array of sliding blocks as (" +
                std::to_string(std::max<std::int64_t>(g.Ho, 0)) + ", " +
                std::to_string(std::max<std::int64_t>(g.Wo, 0)) +
                "), but its components must be at least one.");
  }
  const std::int64_t rows = g.C * g.kh * g.kw, L = g.Ho * g.Wo;
  const Tensor input = x.contiguous();
  Tensor out = empty(batched ? Shape{s[0], rows, L} : Shape{rows, L}, dtype(x.dtype()));
  kernels::dispatch_floating(x.dtype(), "im2col_out_cpu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = input.data<T>();
    T* col = out.data<T>();
    for (std::int64_t n = 0; n < s[0]; ++n) {
      kernels::im2col(in + n * g.C * g.H * g.W, col + n * rows * L, g, p, 0, g.Ho);
    }
  });
  const std::vector<std::int64_t> output_size{s[2], s[3]};
  autograd::record_function("Im2ColBackward0", {x}, {out}, {},
                            [=](const std::vector<Tensor>& grad, const std::vector<Tensor>&) {
                              return std::vector<Tensor>{col2im(grad[0], output_size, kernel_size,
                                                                dilation, padding, stride)};
                            });
  return out;
}

Tensor col2im(const Tensor& x, const std::vector<std::int64_t>& output_size,
              const std::vector<std::int64_t>& kernel_size,
              const std::vector<std::int64_t>& dilation, const std::vector<std::int64_t>& padding,
              const std::vector<std::int64_t>& stride) {
  WEFT_TRACE_OP(Col2im, (x),
                ir::Attributes()
                    .set("output_size", output_size)
                    .set("kernel_size", kernel_size)
                    .set("dilation", dilation)
                    .set("padding", padding)
                    .set("stride", stride),
                col2im(x, output_size, kernel_size, dilation, padding, stride));
  expect_pairs("col2im", kernel_size, dilation, padding, stride);
  if (output_size.size() != 2 || output_size[0] < 1 || output_size[1] < 1) {
    throw Error("col2im: expected output_size to be two positive sizes");
  }
  const bool batched = x.dim() == 3;
  bool valid = x.dim() == 2 || batched;
  for (std::int64_t d = batched ? 1 : 0; valid && d < x.dim(); ++d) valid = x.size(d) > 0;
  if (!valid) {
    throw Error(
        "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
        "non-zero dimensions for input, but got: " +
        shape_str(x.sizes()));
  }
  Shape s = x.sizes();
  if (!batched) s.insert(s.begin(), 1);
  const std::int64_t per_block = kernel_size[0] * kernel_size[1];
  if (s[1] % per_block != 0) {
    throw Error(
        "Expected size of input's dimension 1 to be divisible by the product of "
        "kernel_size, but got input.size(1)=" +
        std::to_string(s[1]) + " and kernel_size=(" + std::to_string(kernel_size[0]) + ", " +
        std::to_string(kernel_size[1]) + ")");
  }
  const BlockParams p = params(dilation, padding, stride);
  const BlockGeometry g = blocks(s[1] / per_block, output_size[0], output_size[1], kernel_size, p);
  if (g.Ho < 1 || g.Wo < 1 || g.Ho * g.Wo != s[2]) {
    throw Error(
        "Given output_size=(" + std::to_string(output_size[0]) + ", " +
        std::to_string(output_size[1]) + "), " + pairs_text(kernel_size, dilation, padding) +
        ", stride=(" + std::to_string(stride[0]) + ", " + std::to_string(stride[1]) +
        "), expected size of input's dimension 2 to match the calculated number of "
        "sliding blocks " +
        std::to_string(g.Ho) + " * " + std::to_string(g.Wo) + " = " + std::to_string(g.Ho * g.Wo) +
        ", but got input.size(2)=" + std::to_string(s[2]) + ".");
  }
  const Tensor input = x.contiguous();
  Tensor out = zeros(batched ? Shape{s[0], g.C, g.H, g.W} : Shape{g.C, g.H, g.W}, dtype(x.dtype()));
  kernels::dispatch_floating(x.dtype(), "col2im_out_cpu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* col = input.data<T>();
    T* img = out.data<T>();
    for (std::int64_t n = 0; n < s[0]; ++n) {
      kernels::col2im(col + n * s[1] * s[2], img + n * g.C * g.H * g.W, g, p, 0, g.Ho);
    }
  });
  autograd::record_function(
      "Col2ImBackward0", {x}, {out}, {},
      [=](const std::vector<Tensor>& grad, const std::vector<Tensor>&) {
        return std::vector<Tensor>{im2col(grad[0], kernel_size, dilation, padding, stride)};
      });
  return out;
}

}  // namespace weft
