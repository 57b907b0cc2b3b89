// Pooling over the last three dims of [N, C, T, H, W] or [C, T, H, W]: max_pool3d,
// avg_pool3d and adaptive_avg_pool3d, with PyTorch's pool3d_shape_check and output sizes.
// As in ops/pool.cpp, every pool maps independent volumes; max pooling keeps the flat argmax
// of each window (backward: pool_detail's scatter and gather), and the average pools are
// linear maps with their adjoints beside them, so gradients of any order exist.
#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "pool_windows.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/parallel.h"

namespace weft {

namespace {
using Grads = std::vector<Tensor>;
using Saved = std::vector<Tensor>;
using Triple = std::array<std::int64_t, 3>;
using pool_detail::pooled_size;
using pool_detail::Windows;

constexpr std::int64_t kVolumeGrain = 4;

struct Pool3d {
  Triple k, s, p, d;
  bool ceil_mode;
};

Shape with_last_three(const Tensor& x, const Triple& out) {
  Shape shape(x.sizes().begin(), x.sizes().end() - 3);
  shape.insert(shape.end(), out.begin(), out.end());
  return shape;
}

Triple output_sizes(const Tensor& x, const Pool3d& p) {
  Triple out{};
  for (int i = 0; i < 3; ++i) {
    out[i] = pooled_size(x.size(i - 3), p.k[i], p.p[i], p.s[i], p.d[i], p.ceil_mode);
  }
  return out;
}

// ---- max pooling ----

Tensor max_pool_volumes(const Tensor& x0, const Pool3d& p) {
  const Tensor x = x0.contiguous();
  const std::int64_t T = x.size(-3), H = x.size(-2), W = x.size(-1);
  const Triple o = output_sizes(x, p);
  const std::int64_t out_volume = o[0] * o[1] * o[2];
  const std::int64_t volumes = pool_detail::leading_planes(x, 3);
  Tensor out = empty(with_last_three(x, o), dtype(x.dtype()));
  Tensor indices = empty(out.sizes(), dtype(Dtype::Int64));
  kernels::dispatch_numeric(x.dtype(), "max_pool3d", [&](auto tag) {
    using V = typename decltype(tag)::type;
    const V* xd = x.data<V>();
    V* od = out.data<V>();
    std::int64_t* id = indices.data<std::int64_t>();
    // The first window start at or after `start` that is inside the input.
    auto first_inside = [](std::int64_t start, std::int64_t dilation) {
      while (start < 0) start += dilation;
      return start;
    };
    parallel_for(0, volumes, kVolumeGrain, [&](std::int64_t v0, std::int64_t v1) {
      for (std::int64_t vol = v0; vol < v1; ++vol) {
        const V* in = xd + vol * T * H * W;
        std::int64_t at = vol * out_volume;
        for (std::int64_t ot = 0; ot < o[0]; ++ot) {
          const std::int64_t t_start = ot * p.s[0] - p.p[0];
          const std::int64_t t1 = std::min(t_start + (p.k[0] - 1) * p.d[0] + 1, T);
          const std::int64_t t0 = first_inside(t_start, p.d[0]);
          for (std::int64_t oh = 0; oh < o[1]; ++oh) {
            const std::int64_t h_start = oh * p.s[1] - p.p[1];
            const std::int64_t h1 = std::min(h_start + (p.k[1] - 1) * p.d[1] + 1, H);
            const std::int64_t h0 = first_inside(h_start, p.d[1]);
            for (std::int64_t ow = 0; ow < o[2]; ++ow, ++at) {
              const std::int64_t w_start = ow * p.s[2] - p.p[2];
              const std::int64_t w1 = std::min(w_start + (p.k[2] - 1) * p.d[2] + 1, W);
              const std::int64_t w0 = first_inside(w_start, p.d[2]);
              // Strict > keeps the first maximum in scan order; a NaN always wins (the last
              // one), as PyTorch's kernel.
              std::int64_t best = (t0 * H + h0) * W + w0;
              V best_val = std::numeric_limits<V>::has_infinity
                               ? -std::numeric_limits<V>::infinity()
                               : std::numeric_limits<V>::lowest();
              for (std::int64_t it = t0; it < t1; it += p.d[0]) {
                for (std::int64_t ih = h0; ih < h1; ih += p.d[1]) {
                  for (std::int64_t iw = w0; iw < w1; iw += p.d[2]) {
                    const std::int64_t flat = (it * H + ih) * W + iw;
                    const V v = in[flat];
                    if (v > best_val || v != v) {
                      best_val = v;
                      best = flat;
                    }
                  }
                }
              }
              od[at] = best_val;
              // A window wholly in the padding: -inf and no index (pool.cpp's max_pool2d).
              id[at] = t0 >= t1 || h0 >= h1 || w0 >= w1 ? -1 : best;
            }
          }
        }
      }
    });
  });
  const Shape in_shape = x.sizes();
  autograd::record_function("MaxPool3DWithIndicesBackward0", {x0}, {out}, {indices},
                            [in_shape](const Grads& g, const Saved& s) {
                              return Grads{pool_detail::max_scatter(g[0], s[0], in_shape, 3)};
                            });
  return out;
}

// ---- average pooling ----

using Windows3 = std::array<Windows, 3>;

Tensor avg_adjoint3(const Tensor& g, const Windows3& w, const Shape& in_shape, const char* name);

bool empty_window(const Windows3& w, std::int64_t ot, std::int64_t oh, std::int64_t ow) {
  return w[0].start[ot] >= w[0].end[ot] || w[1].start[oh] >= w[1].end[oh] ||
         w[2].start[ow] >= w[2].end[ow];
}

std::int64_t divisor(const Windows3& w, std::int64_t ot, std::int64_t oh, std::int64_t ow) {
  return w[0].count[ot] * w[1].count[oh] * w[2].count[ow];
}

Triple window_counts(const Windows3& w) {
  return {static_cast<std::int64_t>(w[0].start.size()),
          static_cast<std::int64_t>(w[1].start.size()),
          static_cast<std::int64_t>(w[2].start.size())};
}

// out[v, ot, oh, ow] = Σ window / divisor (0 for an empty window)
Tensor avg_apply3(const Tensor& x0, const Windows3& w, const char* name) {
  const Tensor x = x0.contiguous();
  const std::int64_t T = x.size(-3), H = x.size(-2), W = x.size(-1);
  const Triple o = window_counts(w);
  const std::int64_t volumes = pool_detail::leading_planes(x, 3);
  Tensor out = empty(with_last_three(x, o), dtype(x.dtype()));
  auto run = [&](auto tag) {
    using V = typename decltype(tag)::type;
    const V* xd = x.data<V>();
    V* od = out.data<V>();
    parallel_for(0, volumes, kVolumeGrain, [&](std::int64_t v0, std::int64_t v1) {
      for (std::int64_t vol = v0; vol < v1; ++vol) {
        const V* in = xd + vol * T * H * W;
        V* dst = od + vol * o[0] * o[1] * o[2];
        for (std::int64_t ot = 0; ot < o[0]; ++ot) {
          for (std::int64_t oh = 0; oh < o[1]; ++oh) {
            for (std::int64_t ow = 0; ow < o[2]; ++ow) {
              V& result = dst[(ot * o[1] + oh) * o[2] + ow];
              if (empty_window(w, ot, oh, ow)) {
                result = V(0);
                continue;
              }
              V acc = V(0);
              for (std::int64_t it = w[0].start[ot]; it < w[0].end[ot]; ++it) {
                for (std::int64_t ih = w[1].start[oh]; ih < w[1].end[oh]; ++ih) {
                  for (std::int64_t iw = w[2].start[ow]; iw < w[2].end[ow]; ++iw) {
                    acc += in[(it * H + ih) * W + iw];
                  }
                }
              }
              result = acc / static_cast<V>(divisor(w, ot, oh, ow));
            }
          }
        }
      }
    });
  };
  if (x.dtype() == Dtype::Int64) {
    run(kernels::TypeTag<std::int64_t>{});
  } else {
    kernels::dispatch_floating(x.dtype(), name, run);
  }
  const Shape in_shape = x.sizes();
  const std::string backward = std::string(name) + "Backward0";
  autograd::record_function(backward.c_str(), {x0}, {out}, {},
                            [w, in_shape, name](const Grads& g, const Saved&) {
                              return Grads{avg_adjoint3(g[0], w, in_shape, name)};
                            });
  return out;
}

// The adjoint of avg_apply3: each input element gets g / divisor of every window holding it.
Tensor avg_adjoint3(const Tensor& g0, const Windows3& w, const Shape& in_shape, const char* name) {
  const Tensor g = g0.contiguous();
  const std::int64_t T = in_shape[in_shape.size() - 3], H = in_shape[in_shape.size() - 2],
                     W = in_shape.back();
  const Triple o = window_counts(w);
  const std::int64_t volumes = pool_detail::leading_planes(g, 3);
  Tensor dx = zeros(in_shape, dtype(g.dtype()));
  kernels::dispatch_floating(g.dtype(), name, [&](auto tag) {
    using V = typename decltype(tag)::type;
    const V* gd = g.data<V>();
    V* xd = dx.data<V>();
    parallel_for(0, volumes, kVolumeGrain, [&](std::int64_t v0, std::int64_t v1) {
      for (std::int64_t vol = v0; vol < v1; ++vol) {
        V* in = xd + vol * T * H * W;
        const V* src = gd + vol * o[0] * o[1] * o[2];
        for (std::int64_t ot = 0; ot < o[0]; ++ot) {
          for (std::int64_t oh = 0; oh < o[1]; ++oh) {
            for (std::int64_t ow = 0; ow < o[2]; ++ow) {
              if (empty_window(w, ot, oh, ow)) continue;
              const V v =
                  src[(ot * o[1] + oh) * o[2] + ow] / static_cast<V>(divisor(w, ot, oh, ow));
              for (std::int64_t it = w[0].start[ot]; it < w[0].end[ot]; ++it) {
                for (std::int64_t ih = w[1].start[oh]; ih < w[1].end[oh]; ++ih) {
                  for (std::int64_t iw = w[2].start[ow]; iw < w[2].end[ow]; ++iw) {
                    in[(it * H + ih) * W + iw] += v;
                  }
                }
              }
            }
          }
        }
      }
    });
  });
  autograd::record_function(
      "AvgPool3DAdjointBackward", {g0}, {dx}, {},
      [w, name](const Grads& gr, const Saved&) { return Grads{avg_apply3(gr[0], w, name)}; });
  return dx;
}

// ---- argument handling ----

// One value for all three dims, or three; `allow_empty` for a stride (then the kernel's).
std::vector<std::int64_t> three(IntList v, const std::string& message, bool allow_empty = false) {
  if (allow_empty && v.empty()) return {};
  if (v.size() == 1) return {v[0], v[0], v[0]};
  if (v.size() == 3) return {v[0], v[1], v[2]};
  throw Error(message);
}

Triple as_triple(const std::vector<std::int64_t>& v) {
  return {v[0], v[1], v[2]};
}

std::string triple_str(const char* a, const char* b, const char* c, const Triple& v) {
  return std::string(a) + std::to_string(v[0]) + b + std::to_string(v[1]) + c +
         std::to_string(v[2]);
}

// PyTorch's pool3d_shape_check (its messages), on [N, C, T, H, W] or [C, T, H, W].
// input_at_least_kernel: avg_pool3d's own check (PyTorch's check_input_size): the input, without
// its padding, must hold a whole kernel in every dim.
void check_pool3d(const Tensor& x, const Pool3d& p, const char* name, bool input_at_least_kernel) {
  if (p.k[0] <= 0 || p.k[1] <= 0 || p.k[2] <= 0) {
    throw Error("kernel size should be greater than zero, but got " +
                triple_str("kT: ", " kH: ", " kW: ", p.k));
  }
  if (p.s[0] <= 0 || p.s[1] <= 0 || p.s[2] <= 0) {
    throw Error("stride should be greater than zero, but got " +
                triple_str("dT: ", " dH: ", " dW: ", p.s));
  }
  if (p.d[0] <= 0 || p.d[1] <= 0 || p.d[2] <= 0) {
    throw Error("dilation should be greater than zero, but got " +
                triple_str("dilationT: ", " dilationH: ", " dilationW: ", p.d));
  }
  const bool valid = (x.dim() == 4 || x.dim() == 5) && [&] {
    for (std::int64_t d = x.dim() - 4; d < x.dim(); ++d) {
      if (d > 0 || x.dim() == 4) {
        if (x.size(d) == 0) return false;
      }
    }
    return true;
  }();
  if (!valid) {
    throw Error(std::string(name) +
                ": Expected 4D or 5D tensor for input, with non-zero sizes for non-batch dims, "
                "but got " +
                shape_str(x.sizes()));
  }
  const Triple in{x.size(-3), x.size(-2), x.size(-1)};
  if (input_at_least_kernel && (in[0] < p.k[0] || in[1] < p.k[1] || in[2] < p.k[2])) {
    throw Error("input image " + triple_str("(T: ", " H: ", " W: ", in) + ") smaller than " +
                triple_str("kernel size (kT: ", " kH: ", " kW: ", p.k) + ")");
  }
  if (p.k[0] / 2 < p.p[0] || p.k[1] / 2 < p.p[1] || p.k[2] / 2 < p.p[2]) {
    throw Error("pad should be smaller than or equal to half of kernel size, but got " +
                triple_str("kT: ", " kW: ", " kH: ", {p.k[0], p.k[2], p.k[1]}) +
                triple_str(" padT: ", " padW: ", " padH: ", {p.p[0], p.p[2], p.p[1]}));
  }
  const Triple o = output_sizes(x, p);
  if (o[0] < 1 || o[1] < 1 || o[2] < 1) {
    const std::int64_t C = x.size(-4);
    throw Error("Given input size: (" + std::to_string(C) + "x" + std::to_string(x.size(-3)) + "x" +
                std::to_string(x.size(-2)) + "x" + std::to_string(x.size(-1)) +
                "). Calculated output size: (" + std::to_string(C) + "x" + std::to_string(o[0]) +
                "x" + std::to_string(o[1]) + "x" + std::to_string(o[2]) +
                "). Output size is too small");
  }
}
}  // namespace

Tensor max_pool3d(const Tensor& x, IntList kernel_size, IntList stride, IntList padding,
                  IntList dilation, bool ceil_mode) {
  WEFT_TRACE_OP(MaxPool3d, (x),
                ir::Attributes()
                    .set("kernel_size", ops_detail::to_ints(kernel_size))
                    .set("stride", ops_detail::to_ints(stride))
                    .set("padding", ops_detail::to_ints(padding))
                    .set("dilation", ops_detail::to_ints(dilation))
                    .set("ceil_mode", ceil_mode),
                max_pool3d(x, kernel_size, stride, padding, dilation, ceil_mode));
  const auto k = three(kernel_size,
                       "max_pool3d: kernel_size must either be a single int, or a tuple of three "
                       "ints");
  auto s = three(stride,
                 "max_pool3d: stride must either be omitted, a single int, or a tuple of three "
                 "ints",
                 true);
  if (s.empty()) s = k;
  const auto pd =
      three(padding, "max_pool3d: padding must either be a single int, or a tuple of three ints");
  const auto d = three(dilation,
                       "max_pool3d: dilation must be either a single int, or a tuple of three "
                       "ints");
  const Pool3d p{as_triple(k), as_triple(s), as_triple(pd), as_triple(d), ceil_mode};
  check_pool3d(x, p, "max_pool3d", false);
  return max_pool_volumes(x, p);
}

Tensor avg_pool3d(const Tensor& x, IntList kernel_size, IntList stride, IntList padding,
                  bool ceil_mode, bool count_include_pad) {
  WEFT_TRACE_OP(AvgPool3d, (x),
                ir::Attributes()
                    .set("kernel_size", ops_detail::to_ints(kernel_size))
                    .set("stride", ops_detail::to_ints(stride))
                    .set("padding", ops_detail::to_ints(padding))
                    .set("ceil_mode", ceil_mode)
                    .set("count_include_pad", count_include_pad),
                avg_pool3d(x, kernel_size, stride, padding, ceil_mode, count_include_pad));
  const auto k =
      three(kernel_size, "avg_pool3d: kernel_size must be a single int, or a tuple of three ints");
  auto s = three(
      stride, "avg_pool3d: stride must be omitted, a single int, or a tuple of three ints", true);
  if (s.empty()) s = k;
  const auto pd =
      three(padding, "avg_pool3d: padding must be a single int, or a tuple of three ints");
  const Pool3d p{as_triple(k), as_triple(s), as_triple(pd), {1, 1, 1}, ceil_mode};
  check_pool3d(x, p, "avg_pool3d", true);
  pool_detail::check_avg_dtype(x, "avg_pool3d_out_frame");
  const Triple o = output_sizes(x, p);
  Windows3 w;
  for (int i = 0; i < 3; ++i) {
    w[i] = pool_detail::avg_windows(x.size(i - 3), o[i], p.k[i], p.s[i], p.p[i], count_include_pad);
  }
  return avg_apply3(x, w, "AvgPool3D");
}

Tensor adaptive_avg_pool3d(const Tensor& x, IntList output_size) {
  WEFT_TRACE_OP(AdaptiveAvgPool3d, (x),
                ir::Attributes().set("output_size", ops_detail::to_ints(output_size)),
                adaptive_avg_pool3d(x, output_size));
  if (output_size.size() != 3 && output_size.size() != 1) {
    throw Error("adaptive_avg_pool3d: output_size must be 3");
  }
  const auto size = three(output_size, "adaptive_avg_pool3d: output_size must be 3");
  for (std::int64_t v : size) {
    if (v < 0) {
      throw Error(
          "adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 "
          "but received {" +
          std::to_string(size[0]) + ", " + std::to_string(size[1]) + ", " +
          std::to_string(size[2]) + "}");
    }
  }
  if (x.dim() != 4 && x.dim() != 5) {
    throw Error("adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got " + shape_str(x.sizes()));
  }
  for (std::int64_t d = 1; d < x.dim(); ++d) {
    if (x.size(d) == 0) {
      throw Error(
          "adaptive_avg_pool3d(): Expected input to have non-zero size for non-batch "
          "dimensions, but input has sizes " +
          shape_str(x.sizes()) + " with dimension " + std::to_string(d) + " being empty");
    }
  }
  pool_detail::check_avg_dtype(x, "adaptive_avg_pool3d_cpu");
  Windows3 w;
  for (int i = 0; i < 3; ++i) w[i] = pool_detail::adaptive_windows(x.size(i - 3), size[i]);
  return avg_apply3(x, w, "AdaptiveAvgPool3D");
}

}  // namespace weft
