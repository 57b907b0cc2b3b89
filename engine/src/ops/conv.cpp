// Convolution as im2col + GEMM, per image: out[g] = W[g] · col(x)[g]. conv1d is conv2d over
// a unit height; the transposed convolutions are the input-gradient kernel. The three kernels
// (forward, input gradient, weight gradient) are bilinear and each one's derivative is made of
// the other two, so gradients of any order work.
#include <algorithm>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/gemm.h"
#include "kernels/im2col.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/parallel.h"

namespace weft {

namespace {
using Grads = std::vector<Tensor>;
using Saved = std::vector<Tensor>;

struct ConvParams {
  std::int64_t sh, sw, ph, pw, dh, dw, groups;
};

// Sizes of one convolution: input [N, C, H, W], weight [O, C/groups, kh, kw], out [N, O, Ho, Wo].
struct Geometry {
  std::int64_t N, C, H, W, O, kh, kw, Ho, Wo;
  std::int64_t G, Cg, Og;  // groups, channels and outputs per group
  std::int64_t L() const { return Ho * Wo; }
  std::int64_t K() const { return Cg * kh * kw; }  // GEMM depth per group
  bool is_pointwise(const ConvParams& p) const {
    return kh == 1 && kw == 1 && p.sh == 1 && p.sw == 1 && p.ph == 0 && p.pw == 0;
  }
};

Geometry geometry(const Shape& x, const Shape& w, const ConvParams& p) {
  Geometry g{};
  g.N = x[0], g.C = x[1], g.H = x[2], g.W = x[3];
  g.O = w[0], g.kh = w[2], g.kw = w[3];
  g.Ho = (g.H + 2 * p.ph - p.dh * (g.kh - 1) - 1) / p.sh + 1;
  g.Wo = (g.W + 2 * p.pw - p.dw * (g.kw - 1) - 1) / p.sw + 1;
  g.G = p.groups, g.Cg = g.C / p.groups, g.Og = g.O / p.groups;
  return g;
}

// Runs fn(n0, n1) over images: across threads when there are enough images, else serially
// so that each GEMM can use the threads instead.
void for_images(std::int64_t N, const std::function<void(std::int64_t, std::int64_t)>& fn) {
  if (N == 0) return;
  const std::int64_t grain = N >= get_num_threads() ? 1 : N;
  parallel_for(0, N, grain, fn);
}

// Output rows per im2col tile: the column buffer of one tile stays within ~512 KiB, so it is
// still in cache when the GEMM reads it.
template <typename T>
std::int64_t tile_rows(const Geometry& g) {
  const std::int64_t col_rows = std::max<std::int64_t>(g.C * g.kh * g.kw, 1);
  const std::int64_t cols =
      (std::int64_t{512} << 10) / (col_rows * static_cast<std::int64_t>(sizeof(T)));
  return std::max<std::int64_t>(1, std::min(g.Ho, cols / std::max<std::int64_t>(g.Wo, 1)));
}

// Calls fn(oh0, oh1, col, ldc) for each tile of output rows; col holds the tile's im2col
// columns (leading dimension ldc), or for a pointwise conv the image itself.
template <typename T, typename F>
void for_tiles(const T* img, std::vector<T>& buffer, const Geometry& g, const ConvParams& p,
               bool fill, F fn) {
  if (g.is_pointwise(p)) {
    fn(std::int64_t{0}, g.Ho, const_cast<T*>(img), g.L());
    return;
  }
  const std::int64_t rows = tile_rows<T>(g);
  buffer.resize(static_cast<std::size_t>(g.C * g.kh * g.kw * rows * g.Wo));
  for (std::int64_t oh0 = 0; oh0 < g.Ho; oh0 += rows) {
    const std::int64_t oh1 = std::min(g.Ho, oh0 + rows);
    if (fill) kernels::im2col(img, buffer.data(), g, p, oh0, oh1);
    fn(oh0, oh1, buffer.data(), (oh1 - oh0) * g.Wo);
  }
}

template <typename T>
void forward_kernel(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& out,
                    const Geometry& g, const ConvParams& p) {
  const T* xd = x.data<T>();
  const T* wd = w.data<T>();
  const T* bd = bias.defined() ? bias.data<T>() : nullptr;
  T* od = out.data<T>();
  const std::int64_t L = g.L(), K = g.K();
  for_images(g.N, [&](std::int64_t n0, std::int64_t n1) {
    std::vector<T> col;
    for (std::int64_t n = n0; n < n1; ++n) {
      T* on = od + n * g.O * L;
      for_tiles<T>(xd + n * g.C * g.H * g.W, col, g, p, true,
                   [&](std::int64_t oh0, std::int64_t oh1, const T* cd, std::int64_t ldc) {
                     const std::int64_t cols = (oh1 - oh0) * g.Wo;
                     for (std::int64_t gr = 0; gr < g.G; ++gr) {
                       kernels::gemm<T>({wd + gr * g.Og * K, g.Og, K, K, 1},
                                        {cd + gr * K * ldc, K, cols, ldc, 1},
                                        {on + gr * g.Og * L + oh0 * g.Wo, g.Og, cols, L, 1}, T(1),
                                        T(0));
                     }
                   });
      if (bd) {
        for (std::int64_t o = 0; o < g.O; ++o) {
          T* row = on + o * L;
          for (std::int64_t l = 0; l < L; ++l) row[l] += bd[o];
        }
      }
    }
  });
}

template <typename T>
void input_grad_kernel(const Tensor& gout, const Tensor& w, const Tensor& dx, const Geometry& g,
                       const ConvParams& p) {
  const T* gd = gout.data<T>();
  const T* wd = w.data<T>();
  T* xd = dx.data<T>();
  const std::int64_t L = g.L(), K = g.K();
  const bool pointwise = g.is_pointwise(p);
  for_images(g.N, [&](std::int64_t n0, std::int64_t n1) {
    std::vector<T> col;
    for (std::int64_t n = n0; n < n1; ++n) {
      T* img = xd + n * g.C * g.H * g.W;
      if (!pointwise) std::fill(img, img + g.C * g.H * g.W, T(0));
      const T* gn = gd + n * g.O * L;
      for_tiles<T>(img, col, g, p, false,
                   [&](std::int64_t oh0, std::int64_t oh1, T* cd, std::int64_t ldc) {
                     const std::int64_t cols = (oh1 - oh0) * g.Wo;
                     for (std::int64_t gr = 0; gr < g.G; ++gr) {
                       // col[g] = W[g]ᵀ · gout[g]; W[g] is [Og, K] row-major, seen transposed.
                       kernels::gemm<T>({wd + gr * g.Og * K, K, g.Og, 1, K},
                                        {gn + gr * g.Og * L + oh0 * g.Wo, g.Og, cols, L, 1},
                                        {cd + gr * K * ldc, K, cols, ldc, 1}, T(1), T(0));
                     }
                     if (!pointwise) kernels::col2im(cd, img, g, p, oh0, oh1);
                   });
    }
  });
}

template <typename T>
void weight_grad_kernel(const Tensor& x, const Tensor& gout, const Tensor& dw, const Geometry& g,
                        const ConvParams& p) {
  const T* xd = x.data<T>();
  const T* gd = gout.data<T>();
  T* wd = dw.data<T>();
  const std::int64_t L = g.L(), K = g.K();
  const std::int64_t wsize = g.O * K;
  std::fill(wd, wd + wsize, T(0));
  std::mutex merge;
  for_images(g.N, [&](std::int64_t n0, std::int64_t n1) {
    std::vector<T> col;
    const bool whole = n0 == 0 && n1 == g.N;  // the only chunk: accumulate in place
    std::vector<T> local(whole ? 0 : static_cast<std::size_t>(wsize), T(0));
    T* acc = whole ? wd : local.data();
    for (std::int64_t n = n0; n < n1; ++n) {
      const T* gn = gd + n * g.O * L;
      for_tiles<T>(xd + n * g.C * g.H * g.W, col, g, p, true,
                   [&](std::int64_t oh0, std::int64_t oh1, const T* cd, std::int64_t ldc) {
                     const std::int64_t cols = (oh1 - oh0) * g.Wo;
                     for (std::int64_t gr = 0; gr < g.G; ++gr) {
                       // dW[g] += gout[g] · col[g]ᵀ
                       kernels::gemm<T>({gn + gr * g.Og * L + oh0 * g.Wo, g.Og, cols, L, 1},
                                        {cd + gr * K * ldc, cols, K, 1, ldc},
                                        {acc + gr * g.Og * K, g.Og, K, K, 1}, T(1), T(1));
                     }
                   });
    }
    if (!whole) {
      std::lock_guard<std::mutex> lock(merge);
      for (std::int64_t i = 0; i < wsize; ++i) wd[i] += local[i];
    }
  });
}

Tensor conv_forward(const Tensor& x, const Tensor& w, const Tensor& bias, const ConvParams& p);
Tensor conv_input_grad(const Tensor& gout, const Tensor& w, const Shape& x_shape,
                       const ConvParams& p);
Tensor conv_weight_grad(const Tensor& x, const Tensor& gout, const Shape& w_shape,
                        const ConvParams& p);

Tensor conv_forward(const Tensor& x0, const Tensor& w0, const Tensor& bias0, const ConvParams& p) {
  const Tensor x = x0.contiguous(), w = w0.contiguous();
  const Tensor bias = bias0.defined() ? bias0.contiguous() : Tensor();
  const Geometry g = geometry(x.sizes(), w.sizes(), p);
  Tensor out = empty({g.N, g.O, g.Ho, g.Wo}, dtype(x.dtype()));
  kernels::dispatch_floating(x.dtype(), "slow_conv2d_cpu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    forward_kernel<T>(x, w, bias, out, g, p);
  });
  const Shape x_shape = x.sizes(), w_shape = w.sizes();
  const bool has_bias = bias.defined();
  std::vector<Tensor> inputs{x0, w0};
  if (has_bias) inputs.push_back(bias0);
  autograd::record_function("ConvolutionBackward0", inputs, {out}, {x, w},
                            [p, x_shape, w_shape, has_bias](const Grads& gr, const Saved& s) {
                              Grads grads{conv_input_grad(gr[0], s[1], x_shape, p),
                                          conv_weight_grad(s[0], gr[0], w_shape, p)};
                              if (has_bias) grads.push_back(sum(gr[0], {0, 2, 3}));
                              return grads;
                            });
  return out;
}

Tensor conv_input_grad(const Tensor& gout0, const Tensor& w0, const Shape& x_shape,
                       const ConvParams& p) {
  const Tensor gout = gout0.contiguous(), w = w0.contiguous();
  const Geometry g = geometry(x_shape, w.sizes(), p);
  Tensor dx = empty(x_shape, dtype(gout.dtype()));
  kernels::dispatch_floating(gout.dtype(), "slow_conv2d_cpu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    input_grad_kernel<T>(gout, w, dx, g, p);
  });
  const Shape w_shape = w.sizes();
  autograd::record_function("ConvolutionBackwardInput", {gout0, w0}, {dx}, {gout, w},
                            [p, w_shape](const Grads& gr, const Saved& s) {
                              return Grads{conv_forward(gr[0], s[1], Tensor(), p),
                                           conv_weight_grad(gr[0], s[0], w_shape, p)};
                            });
  return dx;
}

Tensor conv_weight_grad(const Tensor& x0, const Tensor& gout0, const Shape& w_shape,
                        const ConvParams& p) {
  const Tensor x = x0.contiguous(), gout = gout0.contiguous();
  const Geometry g = geometry(x.sizes(), w_shape, p);
  Tensor dw = empty(w_shape, dtype(x.dtype()));
  kernels::dispatch_floating(x.dtype(), "slow_conv2d_cpu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    weight_grad_kernel<T>(x, gout, dw, g, p);
  });
  const Shape x_shape = x.sizes();
  autograd::record_function("ConvolutionBackwardWeight", {x0, gout0}, {dw}, {x, gout},
                            [p, x_shape](const Grads& gr, const Saved& s) {
                              return Grads{conv_input_grad(s[1], gr[0], x_shape, p),
                                           conv_forward(s[0], gr[0], Tensor(), p)};
                            });
  return dw;
}

std::string join_sizes(const std::vector<std::int64_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? " x " : "") + std::to_string(v[i]);
  return s;
}

// One value per spatial dim from a one-element or full list.
std::vector<std::int64_t> expand_param(IntList values, std::size_t dims, const char* name) {
  if (values.size() == 1) return std::vector<std::int64_t>(dims, values[0]);
  if (values.size() != dims) {
    throw Error(std::string("expected ") + name + " to be a single integer value or a list of " +
                std::to_string(dims) + " values to match the convolution dimensions, but got " +
                name + "=" + shape_str(values));
  }
  return values.vec();
}

// What a convolution and a transposed one check alike (PyTorch's _convolution): the input's
// rank (a missing batch dim is added), the dtypes, the size lists expanded per spatial dim,
// groups, and the weight's rank.
struct ConvArgs {
  bool batched;
  Tensor input;
  std::vector<std::int64_t> stride, padding, dilation;
};

ConvArgs checked_conv_args(const Tensor& x, const Tensor& weight, const Tensor& bias,
                           IntList stride_in, IntList padding_in, IntList dilation_in,
                           std::int64_t groups, std::size_t dims, const char* name) {
  const std::int64_t rank = static_cast<std::int64_t>(dims);
  if (x.dim() != rank + 1 && x.dim() != rank + 2) {
    throw Error("Expected " + std::to_string(rank + 1) + "D (unbatched) or " +
                std::to_string(rank + 2) + "D (batched) input to " + name +
                ", but got input of size: " + shape_str(x.sizes()));
  }
  ConvArgs args;
  args.batched = x.dim() == rank + 2;
  args.input = args.batched ? x : x.unsqueeze(0);
  const Tensor& input = args.input;
  if (input.dtype() != weight.dtype() || (bias.defined() && bias.dtype() != input.dtype())) {
    const Dtype other = input.dtype() != weight.dtype() ? weight.dtype() : bias.dtype();
    throw Error(std::string("expected scalar type ") + torch_scalar_type_name(input.dtype()) +
                " but found " + torch_scalar_type_name(other));
  }
  args.stride = expand_param(stride_in, dims, "stride");
  args.padding = expand_param(padding_in, dims, "padding");
  args.dilation = expand_param(dilation_in, dims, "dilation");
  if (groups <= 0) throw Error("non-positive groups is not supported");
  for (std::size_t d = 0; d < dims; ++d) {
    if (args.padding[d] < 0) throw Error("negative padding is not supported");
    if (args.stride[d] <= 0) throw Error("non-positive stride is not supported");
    if (args.dilation[d] <= 0) throw Error("dilation should be greater than zero");
  }
  if (weight.dim() != input.dim()) {
    throw Error("Expected " + std::to_string(weight.dim()) + "-dimensional input for " +
                std::to_string(weight.dim()) + "-dimensional weight " + shape_str(weight.sizes()) +
                ", but got " + std::to_string(input.dim()) + "-dimensional input of size " +
                shape_str(input.sizes()) + " instead");
  }
  return args;
}

// conv1d / conv2d: validates like PyTorch's _convolution, then runs the 2-D kernels.
Tensor convolution(const Tensor& x, const Tensor& weight, const Tensor& bias, IntList stride_in,
                   IntList padding_in, IntList dilation_in, std::int64_t groups, std::size_t dims,
                   const char* name) {
  const ConvArgs args =
      checked_conv_args(x, weight, bias, stride_in, padding_in, dilation_in, groups, dims, name);
  const bool batched = args.batched;
  const Tensor& input = args.input;
  const std::vector<std::int64_t>& stride = args.stride;
  const std::vector<std::int64_t>& padding = args.padding;
  const std::vector<std::int64_t>& dilation = args.dilation;
  const Shape& ws = weight.sizes();
  const Shape& is = input.sizes();
  const std::string g_str = std::to_string(groups);
  if (ws[0] < groups) {
    throw Error("Given groups=" + g_str + ", expected weight to be at least " + g_str +
                " at dimension 0, but got weight of size " + shape_str(ws) + " instead");
  }
  if (ws[0] % groups != 0) {
    throw Error("Given groups=" + g_str + ", expected weight to be divisible by " + g_str +
                " at dimension 0, but got weight of size " + shape_str(ws) + " instead");
  }
  if (is[1] != ws[1] * groups) {
    throw Error("Given groups=" + g_str + ", weight of size " + shape_str(ws) + ", expected input" +
                shape_str(is) + " to have " + std::to_string(ws[1] * groups) +
                " channels, but got " + std::to_string(is[1]) + " channels instead");
  }
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != ws[0])) {
    throw Error("Given weight of size " + shape_str(ws) +
                ", expected bias to be 1-dimensional with " + std::to_string(ws[0]) +
                " elements, but got bias of size " + shape_str(bias.sizes()) + " instead");
  }
  std::vector<std::int64_t> padded(dims), kernel(dims);
  bool too_big = false;
  for (std::size_t d = 0; d < dims; ++d) {
    padded[d] = is[2 + d] + 2 * padding[d];
    kernel[d] = dilation[d] * (ws[2 + d] - 1) + 1;
    if (padded[d] < kernel[d]) too_big = true;
  }
  if (too_big) {
    throw Error("Calculated padded input size per channel: (" + join_sizes(padded) +
                "). Kernel size: (" + join_sizes(kernel) +
                "). Kernel size can't be greater than actual input size");
  }
  if (!input.is_floating_point()) {
    throw Error(std::string("\"slow_conv2d_cpu\" not implemented for '") +
                torch_scalar_type_name(input.dtype()) + "'");
  }

  Tensor out;
  if (dims == 1) {
    const ConvParams p{1, stride[0], 0, padding[0], 1, dilation[0], groups};
    out = conv_forward(input.unsqueeze(2), weight.unsqueeze(2), bias, p).squeeze({2});
  } else {
    const ConvParams p{stride[0],   stride[1],   padding[0], padding[1],
                       dilation[0], dilation[1], groups};
    out = conv_forward(input, weight, bias, p);
  }
  return batched ? out : out.squeeze({0});
}
// conv_transpose1d / conv_transpose2d: a convolution's input gradient with x as the outgoing
// gradient and weight [in, out/groups, *kernel] as the convolution's [O, C/groups, *kernel].
// Validates like PyTorch's _convolution with transposed=1.
Tensor transposed_convolution(const Tensor& x, const Tensor& weight, const Tensor& bias,
                              IntList stride_in, IntList padding_in, IntList output_padding_in,
                              std::int64_t groups, IntList dilation_in, std::size_t dims,
                              const char* name) {
  const ConvArgs args =
      checked_conv_args(x, weight, bias, stride_in, padding_in, dilation_in, groups, dims, name);
  const bool batched = args.batched;
  const Tensor& input = args.input;
  const std::vector<std::int64_t>& stride = args.stride;
  const std::vector<std::int64_t>& padding = args.padding;
  const std::vector<std::int64_t>& dilation = args.dilation;
  const auto output_padding = expand_param(output_padding_in, dims, "output_padding");
  for (std::size_t d = 0; d < dims; ++d) {
    if (output_padding[d] < 0) throw Error("negative output_padding is not supported");
    if (output_padding[d] >= stride[d] && output_padding[d] >= dilation[d]) {
      throw Error(
          "output padding must be smaller than either stride or dilation, but got "
          "output_padding=" +
          shape_str(output_padding) + ", stride=" + shape_str(stride) +
          ", dilation=" + shape_str(dilation));
    }
  }
  const Shape& ws = weight.sizes();
  const Shape& is = input.sizes();
  const std::string g_str = std::to_string(groups);
  if (ws[0] % groups != 0) {
    throw Error("Given groups=" + g_str + ", expected weight to be divisible by " + g_str +
                " at dimension 0, but got weight of size " + shape_str(ws) + " instead");
  }
  if (is[1] != ws[0]) {
    throw Error("Given transposed=1, weight of size " + shape_str(ws) + ", expected input" +
                shape_str(is) + " to have " + std::to_string(ws[0]) + " channels, but got " +
                std::to_string(is[1]) + " channels instead");
  }
  const std::int64_t out_channels = ws[1] * groups;
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != out_channels)) {
    throw Error("Given transposed=1, weight of size " + shape_str(ws) +
                ", expected bias to be 1-dimensional with " + std::to_string(out_channels) +
                " elements, but got bias of size " + shape_str(bias.sizes()) + " instead");
  }
  Shape out_shape{is[0], out_channels};
  std::vector<std::int64_t> extra(dims);
  for (std::size_t d = 0; d < dims; ++d) {
    const std::int64_t size = (is[2 + d] - 1) * stride[d] - 2 * padding[d] +
                              dilation[d] * (ws[2 + d] - 1) + output_padding[d] + 1;
    if (size <= 0) {
      throw Error("Given input size per channel: (" + join_sizes({is.begin() + 2, is.end()}) +
                  "). Calculated output size per channel: (" + std::to_string(size) +
                  "). Output size is too small");
    }
    out_shape.push_back(size);
    // An output_padding of a stride or more (allowed below the dilation) is reached by zero
    // rows after the input: the convolution of the output then spans those rows too.
    extra[d] = output_padding[d] / stride[d];
  }
  if (!input.is_floating_point()) {
    throw Error(std::string("\"slow_conv2d_cpu\" not implemented for '") +
                torch_scalar_type_name(input.dtype()) + "'");
  }
  Tensor source = input;
  if (std::any_of(extra.begin(), extra.end(), [](std::int64_t e) { return e > 0; })) {
    std::vector<std::int64_t> pads;  // last dim first, as pad() takes them
    for (std::size_t d = dims; d-- > 0;) {
      pads.push_back(0);
      pads.push_back(extra[d]);
    }
    source = pad(input, pads);
  }
  Tensor out;
  if (dims == 1) {
    const ConvParams p{1, stride[0], 0, padding[0], 1, dilation[0], groups};
    out = conv_input_grad(source.unsqueeze(2), weight.unsqueeze(2),
                          {out_shape[0], out_shape[1], 1, out_shape[2]}, p)
              .squeeze({2});
  } else {
    const ConvParams p{stride[0],   stride[1],   padding[0], padding[1],
                       dilation[0], dilation[1], groups};
    out = conv_input_grad(source, weight, out_shape, p);
  }
  if (bias.defined()) {
    Shape bias_shape(out.dim(), 1);
    bias_shape[1] = out_channels;
    out = add(out, bias.reshape(bias_shape));
  }
  return batched ? out : out.squeeze({0});
}
}  // namespace

Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, IntList stride,
              IntList padding, IntList dilation, std::int64_t groups) {
  WEFT_TRACE_OP(Conv1d, (x, weight, bias),
                ir::Attributes()
                    .set("stride", ops_detail::to_ints(stride))
                    .set("padding", ops_detail::to_ints(padding))
                    .set("dilation", ops_detail::to_ints(dilation))
                    .set("groups", groups),
                conv1d(x, weight, bias, stride, padding, dilation, groups));
  return convolution(x, weight, bias, stride, padding, dilation, groups, 1, "conv1d");
}

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, IntList stride,
              IntList padding, IntList dilation, std::int64_t groups) {
  WEFT_TRACE_OP(Conv2d, (x, weight, bias),
                ir::Attributes()
                    .set("stride", ops_detail::to_ints(stride))
                    .set("padding", ops_detail::to_ints(padding))
                    .set("dilation", ops_detail::to_ints(dilation))
                    .set("groups", groups),
                conv2d(x, weight, bias, stride, padding, dilation, groups));
  return convolution(x, weight, bias, stride, padding, dilation, groups, 2, "conv2d");
}

Tensor conv_transpose1d(const Tensor& x, const Tensor& weight, const Tensor& bias, IntList stride,
                        IntList padding, IntList output_padding, std::int64_t groups,
                        IntList dilation) {
  WEFT_TRACE_OP(
      ConvTranspose1d, (x, weight, bias),
      ir::Attributes()
          .set("stride", ops_detail::to_ints(stride))
          .set("padding", ops_detail::to_ints(padding))
          .set("output_padding", ops_detail::to_ints(output_padding))
          .set("groups", groups)
          .set("dilation", ops_detail::to_ints(dilation)),
      conv_transpose1d(x, weight, bias, stride, padding, output_padding, groups, dilation));
  return transposed_convolution(x, weight, bias, stride, padding, output_padding, groups, dilation,
                                1, "conv_transpose1d");
}

Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias, IntList stride,
                        IntList padding, IntList output_padding, std::int64_t groups,
                        IntList dilation) {
  WEFT_TRACE_OP(
      ConvTranspose2d, (x, weight, bias),
      ir::Attributes()
          .set("stride", ops_detail::to_ints(stride))
          .set("padding", ops_detail::to_ints(padding))
          .set("output_padding", ops_detail::to_ints(output_padding))
          .set("groups", groups)
          .set("dilation", ops_detail::to_ints(dilation)),
      conv_transpose2d(x, weight, bias, stride, padding, output_padding, groups, dilation));
  return transposed_convolution(x, weight, bias, stride, padding, output_padding, groups, dilation,
                                2, "conv_transpose2d");
}

}  // namespace weft
