// Resampling. Separable: each spatial dim is resampled on its own (last dim first, which is
// the nesting order of ATen's CPU kernels), each step an index map (index.cpp) whose backward
// scatters the gradient back with the same weights. Source indices and weights follow ATen's
// UpSample.h exactly, computed in the input's type (float for float32).
#include <algorithm>
#include <cmath>
#include <string>

#include "index_map.h"
#include "kernels/dispatch.h"
#include "traced.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace {

// ATen's legacy 'nearest': floor(dst * (float)in / out), clamped to the last input.
std::int64_t nearest_index(std::int64_t dst, std::int64_t in, std::int64_t out) {
  if (out == in) return dst;
  if (out == 2 * in) return dst >> 1;
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  return std::min(static_cast<std::int64_t>(std::floor(static_cast<float>(dst) * scale)), in - 1);
}

// ATen's compute_source_index_and_lambda (area_pixel_compute_source_index + guard) in type T.
template <typename T>
void linear_source(std::int64_t dst, std::int64_t in, std::int64_t out, bool align_corners,
                   std::int64_t* idx, double* w) {
  if (out == in) {
    idx[0] = idx[1] = dst;
    w[0] = 1.0;
    w[1] = 0.0;
    return;
  }
  T scale;
  if (align_corners) {
    scale = out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  } else {
    scale = static_cast<T>(in) / static_cast<T>(out);
  }
  T real;
  if (align_corners) {
    real = scale * static_cast<T>(dst);
  } else {
    real = scale * (static_cast<T>(dst) + T(0.5)) - T(0.5);
    if (real < T(0)) real = T(0);
  }
  const std::int64_t i0 =
      std::min(static_cast<std::int64_t>(std::floor(static_cast<float>(real))), in - 1);
  const T lambda = std::min(std::max(real - static_cast<T>(i0), T(0)), T(1));
  idx[0] = i0;
  idx[1] = i0 + (i0 < in - 1 ? 1 : 0);
  w[0] = static_cast<double>(T(1) - lambda);
  w[1] = static_cast<double>(lambda);
}

// Resamples dim d of x to `out_len` samples; each output sample j combines the input samples
// src[j*K + k] with weights w[j*K + k] (no weights: K = 1, a copy).
Tensor resample_dim(const char* name, const Tensor& x, std::int64_t d, std::int64_t out_len,
                    std::int64_t k, const std::vector<std::int64_t>& src,
                    const std::vector<double>& w) {
  Shape out_shape = x.sizes();
  const std::int64_t in_len = out_shape[d];
  out_shape[d] = out_len;
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t i = 0; i < x.dim(); ++i) {
    if (i < d) outer *= x.size(i);
    if (i > d) inner *= x.size(i);
  }
  const std::int64_t total = outer * out_len * inner * k;
  Tensor idx = empty({total}, dtype(Dtype::Int64));
  Tensor weights = w.empty() ? Tensor() : empty({total}, dtype(Dtype::Float64));
  std::int64_t* ip = idx.data<std::int64_t>();
  double* wp = weights.defined() ? weights.data<double>() : nullptr;
  std::int64_t e = 0;
  for (std::int64_t a = 0; a < outer; ++a) {
    for (std::int64_t j = 0; j < out_len; ++j) {
      for (std::int64_t b = 0; b < inner; ++b) {
        for (std::int64_t t = 0; t < k; ++t, ++e) {
          ip[e] = (a * in_len + src[j * k + t]) * inner + b;
          if (wp) wp[e] = w[j * k + t];
        }
      }
    }
  }
  return detail::take_linear(name, x, idx, weights, k, out_shape, 0.0, Tensor());
}

}  // namespace

Tensor interpolate(const Tensor& x, IntList size, std::string_view mode, bool align_corners) {
  WEFT_TRACE_OP(Interpolate, (x),
                ir::Attributes()
                    .set("size", ops_detail::to_ints(size))
                    .set("mode", std::string(mode))
                    .set("align_corners", align_corners),
                interpolate(x, size, mode, align_corners));
  const std::int64_t rank = x.dim();
  const bool nearest = mode == "nearest", linear = mode == "linear", bilinear = mode == "bilinear";
  if (rank < 3 || rank > 5 || !(nearest || linear || bilinear)) {
    throw Error("Input Error: Only 3D, 4D and 5D input Tensors supported (got " +
                std::to_string(rank) +
                "D) for the modes: nearest | linear | bilinear | bicubic | "
                "trilinear | area | nearest-exact (got " +
                std::string(mode) + ")");
  }
  const std::int64_t spatial = rank - 2;
  if (static_cast<std::int64_t>(size.size()) != spatial) {
    throw Error(
        "Input and output must have the same number of spatial dimensions, but got input "
        "with spatial dimensions of " +
        shape_str(Shape(x.sizes().begin() + 2, x.sizes().end())) + " and output size of " +
        shape_str(size) +
        ". Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size "
        "in (o1, o2, ...,oK) format.");
  }
  if (nearest && align_corners) {
    throw Error(
        "align_corners option can only be set with the interpolating modes: linear | "
        "bilinear | bicubic | trilinear");
  }
  if (linear && rank != 3) {
    throw Error("Got " + std::to_string(rank) + "D input, but linear mode needs 3D input");
  }
  if (bilinear && rank != 4) {
    throw Error("Got " + std::to_string(rank) + "D input, but bilinear mode needs 4D input");
  }
  bool positive = true;
  for (std::int64_t i = 0; i < spatial; ++i)
    positive = positive && x.size(2 + i) > 0 && size[i] > 0;
  if (!positive) {
    static const char* const kNames[] = {"D", "H", "W"};
    std::string in = "input (", out = "output (";
    for (std::int64_t i = 0; i < spatial; ++i) {
      const std::string label = std::string(i ? ", " : "") + kNames[3 - spatial + i] + ": ";
      in += label + std::to_string(x.size(2 + i));
      out += label + std::to_string(size[i]);
    }
    throw Error("Input and output sizes should be greater than 0, but got " + in + ") and " + out +
                ")");
  }
  const char* name = nearest  ? (spatial == 1   ? "UpsampleNearest1DBackward0"
                                 : spatial == 2 ? "UpsampleNearest2DBackward0"
                                                : "UpsampleNearest3DBackward0")
                     : linear ? "UpsampleLinear1DBackward0"
                              : "UpsampleBilinear2DBackward0";
  const std::int64_t k = nearest ? 1 : 2;
  Tensor out = x;
  kernels::dispatch_floating(x.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (std::int64_t d = rank - 1; d >= 2; --d) {
      const std::int64_t in_len = x.size(d), out_len = size[d - 2];
      std::vector<std::int64_t> src(static_cast<std::size_t>(out_len * k));
      std::vector<double> w;
      if (nearest) {
        for (std::int64_t j = 0; j < out_len; ++j) src[j] = nearest_index(j, in_len, out_len);
      } else {
        w.resize(src.size());
        for (std::int64_t j = 0; j < out_len; ++j) {
          linear_source<T>(j, in_len, out_len, align_corners, &src[2 * j], &w[2 * j]);
        }
      }
      out = resample_dim(name, out, d, out_len, k, src, w);
    }
  });
  return out;
}

}  // namespace weft
