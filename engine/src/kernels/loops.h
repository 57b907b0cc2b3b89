#pragma once
// Elementwise loops over strided, broadcast operands. The iteration space is coalesced
// (adjacent dims merged when every operand allows it) and the innermost dim gets a
// tight loop that the compiler vectorizes when all operands are contiguous there.

#include <array>
#include <cstdint>
#include <vector>

#include "weft/parallel.h"
#include "weft/tensor.h"

namespace weft::kernels {

// Elements per parallel chunk: below this, threads cost more than they save.
inline constexpr std::int64_t kElementwiseGrain = 32768;

// N operand layouts (strides in elements, 0 on broadcast dims) over one shape.
template <std::size_t N>
struct StridedSpace {
  Shape shape;
  std::array<std::vector<std::int64_t>, N> strides;
  std::array<char*, N> base{};
  std::array<std::int64_t, N> elem_size{};
};

// Strides of `t` seen through broadcasting to `shape` (which t must broadcast to).
inline std::vector<std::int64_t> broadcast_strides(const Tensor& t, const Shape& shape) {
  std::vector<std::int64_t> strides(shape.size(), 0);
  const std::size_t offset = shape.size() - t.sizes().size();
  for (std::size_t i = 0; i < t.sizes().size(); ++i) {
    strides[offset + i] = t.sizes()[i] == 1 ? 0 : t.strides()[i];
  }
  return strides;
}

template <std::size_t N>
StridedSpace<N> make_space(const Shape& shape, const std::array<const Tensor*, N>& operands) {
  StridedSpace<N> space;
  space.shape = shape;
  for (std::size_t k = 0; k < N; ++k) {
    space.strides[k] = broadcast_strides(*operands[k], shape);
    space.base[k] = static_cast<char*>(operands[k]->raw_data());
    space.elem_size[k] = static_cast<std::int64_t>(itemsize(operands[k]->dtype()));
  }
  // Drop size-1 dims, then merge dim d into d+1 when contiguous for every operand.
  Shape dims;
  std::array<std::vector<std::int64_t>, N> strides;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!dims.empty()) {
      bool mergeable = true;
      for (std::size_t k = 0; k < N; ++k) {
        if (strides[k].back() != space.strides[k][d] * shape[d]) mergeable = false;
      }
      if (mergeable) {
        dims.back() *= shape[d];
        for (std::size_t k = 0; k < N; ++k) strides[k].back() = space.strides[k][d];
        continue;
      }
    }
    dims.push_back(shape[d]);
    for (std::size_t k = 0; k < N; ++k) strides[k].push_back(space.strides[k][d]);
  }
  if (dims.empty()) {
    dims.push_back(1);
    for (std::size_t k = 0; k < N; ++k) strides[k].push_back(0);
  }
  space.shape = dims;
  space.strides = strides;
  return space;
}

// Calls row(pointers, inner_strides_in_elements, count) for every innermost row of `space`,
// rows split across threads. Pointers are char* to the first element of the row.
template <std::size_t N, typename RowFn>
void for_each_row(const StridedSpace<N>& space, RowFn&& row) {
  const std::size_t rank = space.shape.size();
  const std::int64_t inner = space.shape[rank - 1];
  std::int64_t rows = 1;
  for (std::size_t d = 0; d + 1 < rank; ++d) rows *= space.shape[d];
  if (rows == 0 || inner == 0) return;
  std::array<std::int64_t, N> inner_stride;
  for (std::size_t k = 0; k < N; ++k) inner_stride[k] = space.strides[k][rank - 1];

  auto run_rows = [&](std::int64_t begin, std::int64_t end) {
    // Decompose `begin` into a multi-index over the outer dims, then step like an odometer.
    std::vector<std::int64_t> index(rank > 1 ? rank - 1 : 0, 0);
    std::int64_t rest = begin;
    for (std::size_t d = rank - 1; d-- > 0;) {
      index[d] = rest % space.shape[d];
      rest /= space.shape[d];
    }
    std::array<char*, N> ptr;
    for (std::size_t k = 0; k < N; ++k) {
      std::int64_t off = 0;
      for (std::size_t d = 0; d + 1 < rank; ++d) off += index[d] * space.strides[k][d];
      ptr[k] = space.base[k] + off * space.elem_size[k];
    }
    for (std::int64_t r = begin; r < end; ++r) {
      row(ptr, inner_stride, inner);
      for (std::size_t d = rank - 1; d-- > 0;) {
        ++index[d];
        for (std::size_t k = 0; k < N; ++k) ptr[k] += space.strides[k][d] * space.elem_size[k];
        if (index[d] < space.shape[d]) break;
        for (std::size_t k = 0; k < N; ++k) {
          ptr[k] -= space.strides[k][d] * space.shape[d] * space.elem_size[k];
        }
        index[d] = 0;
      }
    }
  };
  if (rows >= get_num_threads() || rows * inner < 2 * kElementwiseGrain) {
    const std::int64_t grain_rows = std::max<std::int64_t>(1, kElementwiseGrain / inner);
    parallel_for(0, rows, grain_rows, run_rows);
    return;
  }
  // Few long rows (a contiguous tensor coalesces into one): split inside the rows instead.
  const std::int64_t pieces = std::max<std::int64_t>(1, inner / kElementwiseGrain);
  const std::int64_t piece_len = (inner + pieces - 1) / pieces;
  parallel_for(0, rows * pieces, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t unit = begin; unit < end; ++unit) {
      const std::int64_t r = unit / pieces;
      const std::int64_t start = (unit % pieces) * piece_len;
      const std::int64_t count = std::min(piece_len, inner - start);
      std::int64_t rest = r;
      std::array<char*, N> ptr = space.base;
      for (std::size_t d = rank - 1; d-- > 0;) {
        const std::int64_t i = rest % space.shape[d];
        rest /= space.shape[d];
        for (std::size_t k = 0; k < N; ++k) ptr[k] += i * space.strides[k][d] * space.elem_size[k];
      }
      for (std::size_t k = 0; k < N; ++k) ptr[k] += start * inner_stride[k] * space.elem_size[k];
      row(ptr, inner_stride, count);
    }
  });
}

// out[i] = f(a[i]) with types Out and In; `out` must already have the broadcast shape.
template <typename Out, typename In, typename F>
void unary_loop(const Tensor& out, const Tensor& a, F f) {
  const auto space = make_space<2>(out.sizes(), {&out, &a});
  for_each_row(space, [&](const std::array<char*, 2>& p, const std::array<std::int64_t, 2>& s,
                          std::int64_t n) {
    Out* o = reinterpret_cast<Out*>(p[0]);
    const In* x = reinterpret_cast<const In*>(p[1]);
    if (s[0] == 1 && s[1] == 1) {
      for (std::int64_t i = 0; i < n; ++i) o[i] = f(x[i]);
    } else {
      for (std::int64_t i = 0; i < n; ++i) o[i * s[0]] = f(x[i * s[1]]);
    }
  });
}

// out[i] = f(a[i], b[i]) over broadcast operands.
template <typename Out, typename A, typename B, typename F>
void binary_loop(const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  const auto space = make_space<3>(out.sizes(), {&out, &a, &b});
  for_each_row(space, [&](const std::array<char*, 3>& p, const std::array<std::int64_t, 3>& s,
                          std::int64_t n) {
    Out* o = reinterpret_cast<Out*>(p[0]);
    const A* x = reinterpret_cast<const A*>(p[1]);
    const B* y = reinterpret_cast<const B*>(p[2]);
    if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
      for (std::int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
    } else if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
      const B scalar = *y;
      for (std::int64_t i = 0; i < n; ++i) o[i] = f(x[i], scalar);
    } else if (s[0] == 1 && s[1] == 0 && s[2] == 1) {
      const A scalar = *x;
      for (std::int64_t i = 0; i < n; ++i) o[i] = f(scalar, y[i]);
    } else {
      for (std::int64_t i = 0; i < n; ++i) o[i * s[0]] = f(x[i * s[1]], y[i * s[2]]);
    }
  });
}

// out[i] = f(a[i], b[i], c[i]) over broadcast operands.
template <typename Out, typename A, typename B, typename C, typename F>
void ternary_loop(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c, F f) {
  const auto space = make_space<4>(out.sizes(), {&out, &a, &b, &c});
  for_each_row(space, [&](const std::array<char*, 4>& p, const std::array<std::int64_t, 4>& s,
                          std::int64_t n) {
    Out* o = reinterpret_cast<Out*>(p[0]);
    const A* x = reinterpret_cast<const A*>(p[1]);
    const B* y = reinterpret_cast<const B*>(p[2]);
    const C* z = reinterpret_cast<const C*>(p[3]);
    for (std::int64_t i = 0; i < n; ++i) o[i * s[0]] = f(x[i * s[1]], y[i * s[2]], z[i * s[3]]);
  });
}

}  // namespace weft::kernels
