#pragma once
// The sliding-block copies of one image: im2col lays each kernel-sized block of img [C, H, W]
// out as a column of col [C*kh*kw, Ho*Wo], col2im adds the columns back (its adjoint).
// Convolution runs them per tile of output rows; unfold/fold (ops/fold.cpp) per image.
// Geometry has C, H, W, kh, kw, Wo; Params has sh, sw, ph, pw, dh, dw.
#include <algorithm>
#include <cstdint>

namespace weft::kernels {

// col[(c, i, j), (oh - oh0, ow)] = img[c, oh*sh - ph + i*dh, ow*sw - pw + j*dw], zero
// outside, for output rows oh in [oh0, oh1).
template <typename T, typename Geometry, typename Params>
void im2col(const T* img, T* col, const Geometry& g, const Params& p, std::int64_t oh0,
            std::int64_t oh1) {
  const std::int64_t L = (oh1 - oh0) * g.Wo;
  for (std::int64_t c = 0; c < g.C; ++c) {
    for (std::int64_t i = 0; i < g.kh; ++i) {
      for (std::int64_t j = 0; j < g.kw; ++j) {
        T* row = col + ((c * g.kh + i) * g.kw + j) * L;
        const std::int64_t x0 = j * p.dw - p.pw;
        // Output columns whose input column x0 + ow*sw lies in [0, W).
        std::int64_t lo = x0 >= 0 ? 0 : (-x0 + p.sw - 1) / p.sw;
        std::int64_t hi = x0 >= g.W ? 0 : (g.W - 1 - x0) / p.sw + 1;
        lo = std::min(lo, g.Wo);
        hi = std::max(lo, std::min(hi, g.Wo));
        for (std::int64_t oh = oh0; oh < oh1; ++oh) {
          T* out = row + (oh - oh0) * g.Wo;
          const std::int64_t ih = oh * p.sh - p.ph + i * p.dh;
          if (ih < 0 || ih >= g.H) {
            std::fill(out, out + g.Wo, T(0));
            continue;
          }
          const T* in = img + (c * g.H + ih) * g.W;
          std::fill(out, out + lo, T(0));
          if (p.sw == 1) {
            if (hi > lo) std::copy(in + x0 + lo, in + x0 + hi, out + lo);
          } else {
            for (std::int64_t ow = lo; ow < hi; ++ow) out[ow] = in[x0 + ow * p.sw];
          }
          std::fill(out + hi, out + g.Wo, T(0));
        }
      }
    }
  }
}

// The adjoint of im2col: img[c, ih, iw] += col[...] (img must start zeroed).
template <typename T, typename Geometry, typename Params>
void col2im(const T* col, T* img, const Geometry& g, const Params& p, std::int64_t oh0,
            std::int64_t oh1) {
  const std::int64_t L = (oh1 - oh0) * g.Wo;
  for (std::int64_t c = 0; c < g.C; ++c) {
    for (std::int64_t i = 0; i < g.kh; ++i) {
      for (std::int64_t j = 0; j < g.kw; ++j) {
        const T* row = col + ((c * g.kh + i) * g.kw + j) * L;
        const std::int64_t x0 = j * p.dw - p.pw;
        std::int64_t lo = x0 >= 0 ? 0 : (-x0 + p.sw - 1) / p.sw;
        std::int64_t hi = x0 >= g.W ? 0 : (g.W - 1 - x0) / p.sw + 1;
        lo = std::min(lo, g.Wo);
        hi = std::max(lo, std::min(hi, g.Wo));
        for (std::int64_t oh = oh0; oh < oh1; ++oh) {
          const std::int64_t ih = oh * p.sh - p.ph + i * p.dh;
          if (ih < 0 || ih >= g.H) continue;
          const T* src = row + (oh - oh0) * g.Wo;
          T* dst = img + (c * g.H + ih) * g.W;
          for (std::int64_t ow = lo; ow < hi; ++ow) dst[x0 + ow * p.sw] += src[ow];
        }
      }
    }
  }
}

}  // namespace weft::kernels
