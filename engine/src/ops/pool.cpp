// Pooling over the last two dims of [N, C, H, W] or [C, H, W] (1-D pools: a unit height).
// Every pool is a map over independent planes. Max pooling keeps the flat argmax of each
// window; its backward scatters into those indices and that scatter's backward gathers from
// them. Average pools are linear maps whose adjoints are written beside them, so gradients
// of any order exist.
#include <algorithm>
#include <cmath>
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
using pool_detail::adaptive_windows;
using pool_detail::avg_windows;
using pool_detail::check_avg_dtype;
using pool_detail::max_scatter;
using pool_detail::pooled_size;
using pool_detail::Windows;

constexpr std::int64_t kPlaneGrain = 16;

struct Pool2d {
  std::int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool ceil_mode;
};

std::int64_t leading_planes(const Tensor& x) {
  return pool_detail::leading_planes(x, 2);
}

Shape with_last_two(const Tensor& x, std::int64_t h, std::int64_t w) {
  Shape s(x.sizes().begin(), x.sizes().end() - 2);
  s.push_back(h);
  s.push_back(w);
  return s;
}

// ---- max pooling ----

// x: [..., H, W] with validated parameters.
Tensor max_pool_planes(const Tensor& x0, const Pool2d& p) {
  const Tensor x = x0.contiguous();
  const std::int64_t H = x.size(-2), W = x.size(-1);
  const std::int64_t Ho = pooled_size(H, p.kh, p.ph, p.sh, p.dh, p.ceil_mode);
  const std::int64_t Wo = pooled_size(W, p.kw, p.pw, p.sw, p.dw, p.ceil_mode);
  const std::int64_t planes = leading_planes(x);
  Tensor out = empty(with_last_two(x, Ho, Wo), dtype(x.dtype()));
  Tensor indices = empty(out.sizes(), dtype(Dtype::Int64));
  kernels::dispatch_numeric(x.dtype(), "max_pool2d", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xd = x.data<T>();
    T* od = out.data<T>();
    std::int64_t* id = indices.data<std::int64_t>();
    // The common 2×2 window with stride 2 and no padding: four loads per output, same choice
    // rule as the general loop (the first maximum in scan order; a NaN wins, the last one).
    const bool two_by_two = p.kh == 2 && p.kw == 2 && p.sh == 2 && p.sw == 2 && p.ph == 0 &&
                            p.pw == 0 && p.dh == 1 && p.dw == 1 && 2 * Ho <= H && 2 * Wo <= W;
    parallel_for(0, planes, kPlaneGrain, [&](std::int64_t p0, std::int64_t p1) {
      for (std::int64_t pl = p0; pl < p1; ++pl) {
        const T* in = xd + pl * H * W;
        if (two_by_two) {
          for (std::int64_t oh = 0; oh < Ho; ++oh) {
            for (std::int64_t ow = 0; ow < Wo; ++ow) {
              const std::int64_t first = 2 * oh * W + 2 * ow;
              std::int64_t best = first;
              T best_val = in[first];
              for (const std::int64_t at : {first + 1, first + W, first + W + 1}) {
                const T v = in[at];
                if (v > best_val || v != v) {
                  best_val = v;
                  best = at;
                }
              }
              od[(pl * Ho + oh) * Wo + ow] = best_val;
              id[(pl * Ho + oh) * Wo + ow] = best;
            }
          }
          continue;
        }
        for (std::int64_t oh = 0; oh < Ho; ++oh) {
          std::int64_t h0 = oh * p.sh - p.ph;
          const std::int64_t h1 = std::min(h0 + (p.kh - 1) * p.dh + 1, H);
          while (h0 < 0) h0 += p.dh;
          for (std::int64_t ow = 0; ow < Wo; ++ow) {
            std::int64_t w0 = ow * p.sw - p.pw;
            const std::int64_t w1 = std::min(w0 + (p.kw - 1) * p.dw + 1, W);
            while (w0 < 0) w0 += p.dw;
            // Strict > keeps the first maximum; NaN always wins (the last NaN, as PyTorch).
            std::int64_t best = h0 * W + w0;
            T best_val = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                              : std::numeric_limits<T>::lowest();
            for (std::int64_t ih = h0; ih < h1; ih += p.dh) {
              for (std::int64_t iw = w0; iw < w1; iw += p.dw) {
                const T v = in[ih * W + iw];
                if (v > best_val || v != v) {
                  best_val = v;
                  best = ih * W + iw;
                }
              }
            }
            od[(pl * Ho + oh) * Wo + ow] = best_val;
            // A window wholly in the padding (dilation lets one start there) reads nothing: -inf
            // and no index. PyTorch's index points past the plane, and its backward writes there
            // (into the next plane, or past the buffer).
            id[(pl * Ho + oh) * Wo + ow] = h0 >= h1 || w0 >= w1 ? -1 : best;
          }
        }
      }
    });
  });
  const Shape in_shape = x.sizes();
  autograd::record_function("MaxPool2DWithIndicesBackward0", {x0}, {out}, {indices},
                            [in_shape](const Grads& g, const Saved& s) {
                              return Grads{max_scatter(g[0], s[0], in_shape, 2)};
                            });
  return out;
}

// Adaptive max pooling of x: [..., H, W] into [..., Ho, Wo] over adaptive windows; the first
// maximum of each window (a NaN wins), its flat index kept for the backward.
Tensor adaptive_max_planes(const Tensor& x0, std::int64_t Ho, std::int64_t Wo, const char* node) {
  const Tensor x = x0.contiguous();
  const std::int64_t H = x.size(-2), W = x.size(-1);
  const Windows wh = adaptive_windows(H, Ho);
  const Windows ww = adaptive_windows(W, Wo);
  const std::int64_t planes = leading_planes(x);
  Tensor out = empty(with_last_two(x, Ho, Wo), dtype(x.dtype()));
  Tensor indices = empty(out.sizes(), dtype(Dtype::Int64));
  kernels::dispatch_floating(x.dtype(), "adaptive_max_pool2d", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xd = x.data<T>();
    T* od = out.data<T>();
    std::int64_t* id = indices.data<std::int64_t>();
    parallel_for(0, planes, kPlaneGrain, [&](std::int64_t p0, std::int64_t p1) {
      for (std::int64_t pl = p0; pl < p1; ++pl) {
        const T* in = xd + pl * H * W;
        for (std::int64_t oh = 0; oh < Ho; ++oh) {
          for (std::int64_t ow = 0; ow < Wo; ++ow) {
            const std::int64_t h0 = wh.start[static_cast<std::size_t>(oh)];
            const std::int64_t w0 = ww.start[static_cast<std::size_t>(ow)];
            std::int64_t best = h0 * W + w0;
            T best_val = in[best];
            for (std::int64_t ih = h0; ih < wh.end[static_cast<std::size_t>(oh)]; ++ih) {
              for (std::int64_t iw = w0; iw < ww.end[static_cast<std::size_t>(ow)]; ++iw) {
                const T v = in[ih * W + iw];
                if (v > best_val || v != v) {
                  best_val = v;
                  best = ih * W + iw;
                }
              }
            }
            od[(pl * Ho + oh) * Wo + ow] = best_val;
            id[(pl * Ho + oh) * Wo + ow] = best;
          }
        }
      }
    });
  });
  const Shape in_shape = x.sizes();
  autograd::record_function(node, {x0}, {out}, {indices},
                            [in_shape](const Grads& g, const Saved& s) {
                              return Grads{max_scatter(g[0], s[0], in_shape, 2)};
                            });
  return out;
}

// ATen's checks of an adaptive pool's input: 2 or 3 dims (1-D), 3 or 4 (2-D), nothing empty but
// the batch.
void check_adaptive_input(const Tensor& x, int spatial, const char* name) {
  if (x.dim() != spatial + 1 && x.dim() != spatial + 2) {
    throw Error(std::string(name) + "(): Expected " + std::to_string(spatial + 1) + "D or " +
                std::to_string(spatial + 2) + "D tensor, but got " + shape_str(x.sizes()));
  }
  for (std::int64_t d = 1; d < x.dim(); ++d) {
    if (x.size(d) == 0) {
      throw Error(std::string(name) +
                  "(): Expected input to have non-zero size for non-batch dimensions, but input "
                  "has sizes " +
                  shape_str(x.sizes()) + " with dimension " + std::to_string(d) + " being empty");
    }
  }
  if (!x.is_floating_point()) {
    throw Error(std::string("\"adaptive_max_pool2d\" not implemented for '") +
                torch_scalar_type_name(x.dtype()) + "'");
  }
}

// ---- average pooling ----

Tensor avg_adjoint(const Tensor& g, const Windows& wh, const Windows& ww, const Shape& in_shape,
                   const char* name);

// out[p, oh, ow] = Σ window / divisor (0 for an empty window)
Tensor avg_apply(const Tensor& x0, const Windows& wh, const Windows& ww, const char* name) {
  const Tensor x = x0.contiguous();
  const std::int64_t H = x.size(-2), W = x.size(-1);
  const std::int64_t Ho = static_cast<std::int64_t>(wh.start.size());
  const std::int64_t Wo = static_cast<std::int64_t>(ww.start.size());
  const std::int64_t planes = leading_planes(x);
  Tensor out = empty(with_last_two(x, Ho, Wo), dtype(x.dtype()));
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xd = x.data<T>();
    T* od = out.data<T>();
    parallel_for(0, planes, kPlaneGrain, [&](std::int64_t p0, std::int64_t p1) {
      for (std::int64_t pl = p0; pl < p1; ++pl) {
        const T* in = xd + pl * H * W;
        for (std::int64_t oh = 0; oh < Ho; ++oh) {
          for (std::int64_t ow = 0; ow < Wo; ++ow) {
            T& o = od[(pl * Ho + oh) * Wo + ow];
            if (wh.start[oh] >= wh.end[oh] || ww.start[ow] >= ww.end[ow]) {
              o = T(0);
              continue;
            }
            T acc = T(0);
            for (std::int64_t ih = wh.start[oh]; ih < wh.end[oh]; ++ih) {
              for (std::int64_t iw = ww.start[ow]; iw < ww.end[ow]; ++iw) acc += in[ih * W + iw];
            }
            o = acc / static_cast<T>(wh.count[oh] * ww.count[ow]);
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
                            [wh, ww, in_shape, name](const Grads& g, const Saved&) {
                              return Grads{avg_adjoint(g[0], wh, ww, in_shape, name)};
                            });
  return out;
}

// The adjoint of avg_apply: dx[p, ih, iw] += g[p, oh, ow] / divisor over windows holding (ih, iw).
Tensor avg_adjoint(const Tensor& g0, const Windows& wh, const Windows& ww, const Shape& in_shape,
                   const char* name) {
  const Tensor g = g0.contiguous();
  const std::int64_t H = in_shape[in_shape.size() - 2], W = in_shape.back();
  const std::int64_t Ho = g.size(-2), Wo = g.size(-1);
  const std::int64_t planes = leading_planes(g);
  Tensor dx = zeros(in_shape, dtype(g.dtype()));
  kernels::dispatch_floating(g.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* gd = g.data<T>();
    T* xd = dx.data<T>();
    parallel_for(0, planes, kPlaneGrain, [&](std::int64_t p0, std::int64_t p1) {
      for (std::int64_t pl = p0; pl < p1; ++pl) {
        T* in = xd + pl * H * W;
        for (std::int64_t oh = 0; oh < Ho; ++oh) {
          for (std::int64_t ow = 0; ow < Wo; ++ow) {
            if (wh.start[oh] >= wh.end[oh] || ww.start[ow] >= ww.end[ow]) continue;
            const T v = gd[(pl * Ho + oh) * Wo + ow] / static_cast<T>(wh.count[oh] * ww.count[ow]);
            for (std::int64_t ih = wh.start[oh]; ih < wh.end[oh]; ++ih) {
              for (std::int64_t iw = ww.start[ow]; iw < ww.end[ow]; ++iw) in[ih * W + iw] += v;
            }
          }
        }
      }
    });
  });
  autograd::record_function("AvgPoolAdjointBackward", {g0}, {dx}, {},
                            [wh, ww, name](const Grads& gr, const Saved&) {
                              return Grads{avg_apply(gr[0], wh, ww, name)};
                            });
  return dx;
}

// ---- argument handling ----

std::vector<std::int64_t> two(IntList v, const std::string& message, bool allow_empty = false) {
  if (allow_empty && v.empty()) return {};
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 2) return {v[0], v[1]};
  throw Error(message);
}

// pool2d_shape_check + pooling_output_shape of PyTorch, on [N, C, H, W] or [C, H, W].
void check_pool2d(const Tensor& x, const Pool2d& p) {
  if (p.kh <= 0 || p.kw <= 0) {
    throw Error("kernel size should be greater than zero, but got kH: " + std::to_string(p.kh) +
                " kW: " + std::to_string(p.kw));
  }
  if (p.sh <= 0 || p.sw <= 0) {
    throw Error("stride should be greater than zero, but got dH: " + std::to_string(p.sh) +
                " dW: " + std::to_string(p.sw));
  }
  if (p.dh <= 0 || p.dw <= 0) {
    throw Error("dilation should be greater than zero, but got dilationH: " + std::to_string(p.dh) +
                " dilationW: " + std::to_string(p.dw));
  }
  const std::int64_t pads[2] = {p.ph, p.pw}, ks[2] = {p.kh, p.kw}, ds[2] = {p.dh, p.dw};
  for (int d = 0; d < 2; ++d) {
    if (pads[d] < 0)
      throw Error("pad must be non-negative, but got pad: " + std::to_string(pads[d]));
    if (pads[d] > ((ks[d] - 1) * ds[d] + 1) / 2) {
      throw Error("pad should be at most half of effective kernel size, but got pad=" +
                  std::to_string(pads[d]) + ", kernel_size=" + std::to_string(ks[d]) +
                  " and dilation=" + std::to_string(ds[d]));
    }
  }
  const bool valid = (x.dim() == 3 && x.size(0) != 0 && x.size(1) != 0 && x.size(2) != 0) ||
                     (x.dim() == 4 && x.size(1) != 0 && x.size(2) != 0 && x.size(3) != 0);
  if (!valid) {
    throw Error(
        "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:" +
        shape_str(x.sizes()));
  }
  const std::int64_t C = x.size(-3), H = x.size(-2), W = x.size(-1);
  const std::int64_t Ho = pooled_size(H, p.kh, p.ph, p.sh, p.dh, p.ceil_mode);
  const std::int64_t Wo = pooled_size(W, p.kw, p.pw, p.sw, p.dw, p.ceil_mode);
  if (Ho < 1 || Wo < 1) {
    throw Error("Given input size: (" + std::to_string(C) + "x" + std::to_string(H) + "x" +
                std::to_string(W) + "). Calculated output size: (" + std::to_string(C) + "x" +
                std::to_string(Ho) + "x" + std::to_string(Wo) + "). Output size is too small");
  }
}

void check_pool1d_input(const Tensor& x, const char* name) {
  if (x.dim() != 2 && x.dim() != 3) {
    throw Error(std::string(name) + "() Expected 2D or 3D input tensor, but got " +
                shape_str(x.sizes()));
  }
}

void check_one(IntList v, const char* name, const char* arg, bool allow_empty = false) {
  if (v.size() == 1 || (allow_empty && v.empty())) return;
  throw Error(std::string(name) + "() argument '" + arg + "' should contain one int (got " +
              std::to_string(v.size()) + ")");
}

Tensor avg_pool_2d(const Tensor& x, const Pool2d& p, bool count_include_pad, const char* name) {
  check_pool2d(x, p);
  check_avg_dtype(x, "avg_pool2d");
  const std::int64_t H = x.size(-2), W = x.size(-1);
  const std::int64_t Ho = pooled_size(H, p.kh, p.ph, p.sh, 1, p.ceil_mode);
  const std::int64_t Wo = pooled_size(W, p.kw, p.pw, p.sw, 1, p.ceil_mode);
  return avg_apply(x, avg_windows(H, Ho, p.kh, p.sh, p.ph, count_include_pad),
                   avg_windows(W, Wo, p.kw, p.sw, p.pw, count_include_pad), name);
}
}  // namespace

namespace pool_detail {

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::int64_t pooled_size(std::int64_t in, std::int64_t k, std::int64_t pad, std::int64_t stride,
                         std::int64_t dilation, bool ceil_mode) {
  std::int64_t out =
      floor_div(in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0), stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

std::int64_t leading_planes(const Tensor& x, int spatial) {
  std::int64_t p = 1;
  for (std::int64_t d = 0; d + spatial < x.dim(); ++d) p *= x.size(d);
  return p;
}

std::int64_t trailing_volume(const Shape& shape, int spatial) {
  std::int64_t v = 1;
  for (std::size_t d = shape.size() - static_cast<std::size_t>(spatial); d < shape.size(); ++d) {
    v *= shape[d];
  }
  return v;
}

Windows avg_windows(std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t stride,
                    std::int64_t pad, bool count_include_pad) {
  Windows w;
  for (std::int64_t o = 0; o < out; ++o) {
    std::int64_t s = o * stride - pad;
    std::int64_t e = std::min(s + k, in + pad);
    const std::int64_t padded = e - s;
    s = std::max<std::int64_t>(s, 0);
    e = std::min(e, in);
    w.start.push_back(s);
    w.end.push_back(e);
    w.count.push_back(count_include_pad ? padded : e - s);
  }
  return w;
}

Windows adaptive_windows(std::int64_t in, std::int64_t out) {
  Windows w;
  for (std::int64_t o = 0; o < out; ++o) {
    const std::int64_t s = (o * in) / out;
    const std::int64_t e = ((o + 1) * in + out - 1) / out;
    w.start.push_back(s);
    w.end.push_back(e);
    w.count.push_back(e - s);
  }
  return w;
}

void check_avg_dtype(const Tensor& x, const char* name) {
  if (!x.is_floating_point() && x.dtype() != Dtype::Int64) {
    throw Error(std::string("\"") + name + "\" not implemented for '" +
                torch_scalar_type_name(x.dtype()) + "'");
  }
}

// out[p, o] = h[p, indices[p, o]] over planes of `spatial` trailing dims.
Tensor max_gather(const Tensor& h0, const Tensor& indices, const Shape& out_shape, int spatial) {
  const Tensor h = h0.contiguous();
  const std::int64_t in_plane = trailing_volume(h.sizes(), spatial);
  const std::int64_t out_plane = trailing_volume(out_shape, spatial);
  const std::int64_t planes = leading_planes(h, spatial);
  Tensor out = empty(out_shape, dtype(h.dtype()));
  kernels::dispatch_floating(h.dtype(), "max_pool_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = h.data<T>();
    const std::int64_t* idx = indices.data<std::int64_t>();
    T* dst = out.data<T>();
    for (std::int64_t i = 0; i < planes * out_plane; ++i) {
      dst[i] = idx[i] < 0 ? T(0) : src[(i / out_plane) * in_plane + idx[i]];
    }
  });
  const Shape in_shape = h.sizes();
  autograd::record_function("MaxPoolGatherBackward", {h0}, {out}, {indices},
                            [in_shape, spatial](const Grads& g, const Saved& s) {
                              return Grads{max_scatter(g[0], s[0], in_shape, spatial)};
                            });
  return out;
}

// dx[p, indices[p, o]] += g[p, o]
Tensor max_scatter(const Tensor& g0, const Tensor& indices, const Shape& in_shape, int spatial) {
  const Tensor g = g0.contiguous();
  Tensor dx = zeros(in_shape, dtype(g.dtype()));
  const std::int64_t in_plane = trailing_volume(in_shape, spatial);
  const std::int64_t out_plane = trailing_volume(g.sizes(), spatial);
  const std::int64_t planes = leading_planes(g, spatial);
  kernels::dispatch_floating(g.dtype(), "max_pool_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = g.data<T>();
    const std::int64_t* idx = indices.data<std::int64_t>();
    T* dst = dx.data<T>();
    parallel_for(0, planes, kPlaneGrain, [&](std::int64_t p0, std::int64_t p1) {
      for (std::int64_t p = p0; p < p1; ++p) {
        for (std::int64_t o = 0; o < out_plane; ++o) {
          const std::int64_t at = idx[p * out_plane + o];
          if (at >= 0) dst[p * in_plane + at] += src[p * out_plane + o];
        }
      }
    });
  });
  const Shape out_shape = g.sizes();
  const char* name = spatial == 3 ? "MaxPool3DWithIndicesBackwardBackward0"
                                  : "MaxPool2DWithIndicesBackwardBackward0";
  autograd::record_function(name, {g0}, {dx}, {indices},
                            [out_shape, spatial](const Grads& gr, const Saved& s) {
                              return Grads{max_gather(gr[0], s[0], out_shape, spatial)};
                            });
  return dx;
}

}  // namespace pool_detail

Tensor max_pool2d(const Tensor& x, IntList kernel_size, IntList stride, IntList padding,
                  IntList dilation, bool ceil_mode) {
  WEFT_TRACE_OP(MaxPool2d, (x),
                ir::Attributes()
                    .set("kernel_size", ops_detail::to_ints(kernel_size))
                    .set("stride", ops_detail::to_ints(stride))
                    .set("padding", ops_detail::to_ints(padding))
                    .set("dilation", ops_detail::to_ints(dilation))
                    .set("ceil_mode", ceil_mode),
                max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode));
  const auto k = two(kernel_size,
                     "max_pool2d: kernel_size must either be a single int, or a tuple of two ints");
  auto s =
      two(stride, "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints",
          true);
  if (s.empty()) s = k;
  const auto pd =
      two(padding, "max_pool2d: padding must either be a single int, or a tuple of two ints");
  const auto d =
      two(dilation, "max_pool2d: dilation must be either a single int, or a tuple of two ints");
  const Pool2d p{k[0], k[1], s[0], s[1], pd[0], pd[1], d[0], d[1], ceil_mode};
  check_pool2d(x, p);
  return max_pool_planes(x, p);
}

Tensor max_pool1d(const Tensor& x, IntList kernel_size, IntList stride, IntList padding,
                  IntList dilation, bool ceil_mode) {
  WEFT_TRACE_OP(MaxPool1d, (x),
                ir::Attributes()
                    .set("kernel_size", ops_detail::to_ints(kernel_size))
                    .set("stride", ops_detail::to_ints(stride))
                    .set("padding", ops_detail::to_ints(padding))
                    .set("dilation", ops_detail::to_ints(dilation))
                    .set("ceil_mode", ceil_mode),
                max_pool1d(x, kernel_size, stride, padding, dilation, ceil_mode));
  check_one(kernel_size, "max_pool1d", "kernel_size");
  check_one(stride, "max_pool1d", "stride", true);
  check_one(padding, "max_pool1d", "padding");
  check_one(dilation, "max_pool1d", "dilation");
  check_pool1d_input(x, "max_pool1d");
  const std::int64_t k = kernel_size[0], s = stride.empty() ? k : stride[0];
  const std::int64_t pad = padding[0], dil = dilation[0];
  const std::string pre = "max_pool1d() ";
  if (k <= 0)
    throw Error(pre + "kernel_size must be greater than zero, but got " + std::to_string(k));
  if (s <= 0) throw Error(pre + "stride must be greater than zero, but got " + std::to_string(s));
  if (pad < 0) throw Error(pre + "padding must be non-negative, but got " + std::to_string(pad));
  if (pad > k / 2) {
    throw Error(pre + "padding should be at most half of kernel size, but got padding=" +
                std::to_string(pad) + " and kernel_size=" + std::to_string(k));
  }
  if (dil <= 0)
    throw Error(pre + "dilation must be greater than zero, but got " + std::to_string(dil));
  const std::int64_t L = x.size(-1);
  const std::int64_t out = pooled_size(L, k, pad, s, dil, ceil_mode);
  if (out < 1) {
    throw Error(pre + "Invalid computed output size: " + std::to_string(out));
  }
  if (x.size(-2) == 0) {
    throw Error(pre +
                "Expected 2D or 3D input tensor with non-zero size for non-batch dims, but got " +
                shape_str(x.sizes()));
  }
  return max_pool_planes(x.unsqueeze(-2), Pool2d{1, k, 1, s, 0, pad, 1, dil, ceil_mode})
      .squeeze({-2});
}

Tensor avg_pool2d(const Tensor& x, IntList kernel_size, IntList stride, IntList padding,
                  bool ceil_mode, bool count_include_pad) {
  WEFT_TRACE_OP(AvgPool2d, (x),
                ir::Attributes()
                    .set("kernel_size", ops_detail::to_ints(kernel_size))
                    .set("stride", ops_detail::to_ints(stride))
                    .set("padding", ops_detail::to_ints(padding))
                    .set("ceil_mode", ceil_mode)
                    .set("count_include_pad", count_include_pad),
                avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad));
  const auto k = two(kernel_size,
                     "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints");
  auto s =
      two(stride, "avg_pool2d: stride must either be omitted, a single int, or a tuple of two ints",
          true);
  if (s.empty()) s = k;
  const auto pd =
      two(padding, "avg_pool2d: padding must either be a single int, or a tuple of two ints");
  return avg_pool_2d(x, Pool2d{k[0], k[1], s[0], s[1], pd[0], pd[1], 1, 1, ceil_mode},
                     count_include_pad, "AvgPool2D");
}

Tensor avg_pool1d(const Tensor& x, IntList kernel_size, IntList stride, IntList padding,
                  bool ceil_mode, bool count_include_pad) {
  WEFT_TRACE_OP(AvgPool1d, (x),
                ir::Attributes()
                    .set("kernel_size", ops_detail::to_ints(kernel_size))
                    .set("stride", ops_detail::to_ints(stride))
                    .set("padding", ops_detail::to_ints(padding))
                    .set("ceil_mode", ceil_mode)
                    .set("count_include_pad", count_include_pad),
                avg_pool1d(x, kernel_size, stride, padding, ceil_mode, count_include_pad));
  check_one(kernel_size, "avg_pool1d", "kernel_size");
  check_one(stride, "avg_pool1d", "stride", true);
  check_one(padding, "avg_pool1d", "padding");
  check_pool1d_input(x, "avg_pool1d");
  const std::int64_t k = kernel_size[0], s = stride.empty() ? k : stride[0];
  return avg_pool_2d(x.unsqueeze(-2), Pool2d{1, k, 1, s, 0, padding[0], 1, 1, ceil_mode},
                     count_include_pad, "AvgPool2D")
      .squeeze({-2});
}

Tensor adaptive_avg_pool2d(const Tensor& x, IntList output_size) {
  WEFT_TRACE_OP(AdaptiveAvgPool2d, (x),
                ir::Attributes().set("output_size", ops_detail::to_ints(output_size)),
                adaptive_avg_pool2d(x, output_size));
  if (output_size.size() != 2 && output_size.size() != 1) {
    throw Error("adaptive_avg_pool2d: output_size must be 2");
  }
  const std::int64_t oh = output_size[0];
  const std::int64_t ow = output_size.size() == 2 ? output_size[1] : output_size[0];
  if (oh < 0 || ow < 0) {
    throw Error(
        "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 "
        "but received {" +
        std::to_string(oh) + ", " + std::to_string(ow) + "}");
  }
  if (x.dim() != 3 && x.dim() != 4) {
    throw Error("adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got " + shape_str(x.sizes()));
  }
  for (std::int64_t d = 1; d < x.dim(); ++d) {
    if (x.size(d) == 0) {
      throw Error(
          "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
          "dimensions, but input has sizes " +
          shape_str(x.sizes()) + " with dimension " + std::to_string(d) + " being empty");
    }
  }
  check_avg_dtype(x, "adaptive_avg_pool2d");
  return avg_apply(x, adaptive_windows(x.size(-2), oh), adaptive_windows(x.size(-1), ow),
                   "AdaptiveAvgPool2D");
}

// The max of adaptive windows ([floor(o * in / out), ceil((o + 1) * in / out))), the values of
// F.adaptive_max_pool1d/2d (their return_indices=False).
Tensor adaptive_max_pool2d(const Tensor& x, IntList output_size) {
  WEFT_TRACE_OP(AdaptiveMaxPool2d, (x),
                ir::Attributes().set("output_size", ops_detail::to_ints(output_size)),
                adaptive_max_pool2d(x, output_size));
  if (output_size.size() != 2) {
    throw Error("adaptive_max_pool2d(): internal error: output_size.size() must be 2");
  }
  check_adaptive_input(x, 2, "adaptive_max_pool2d");
  if (output_size[0] < 0 || output_size[1] < 0) {
    throw Error("adaptive_max_pool2d: elements of output_size must be greater than or equal to 0");
  }
  return adaptive_max_planes(x, output_size[0], output_size[1], "AdaptiveMaxPool2DBackward0");
}

Tensor adaptive_max_pool1d(const Tensor& x, IntList output_size) {
  WEFT_TRACE_OP(AdaptiveMaxPool1d, (x),
                ir::Attributes().set("output_size", ops_detail::to_ints(output_size)),
                adaptive_max_pool1d(x, output_size));
  if (output_size.size() != 1) {
    throw Error("adaptive_max_pool1d: 'output_size' should contain one int");
  }
  check_adaptive_input(x, 1, "adaptive_max_pool1d");
  // ATen runs it as the 2-D pool of a unit height.
  return adaptive_max_planes(x.unsqueeze(-2), 1, output_size[0], "AdaptiveMaxPool2DBackward0")
      .squeeze({-2});
}

}  // namespace weft
