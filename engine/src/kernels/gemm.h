#pragma once
// A GEMM over strided matrices, shared by matmul and convolution. Eigen does the math;
// rows (or columns) of the result are split across weft's threads.

#include <cstdint>

namespace weft::kernels {

// A matrix view: element (i, j) lives at data[i * rs + j * cs] (strides in elements).
template <typename T>
struct MatView {
  T* data;
  std::int64_t rows, cols, rs, cs;
};

// c = alpha · a · b + beta · c, with c row-major (c.cs == 1). beta == 0 overwrites c, so
// NaNs already in c do not propagate (like BLAS). a and b may be row- or column-major views
// without copies; other layouts are packed first. Parallel unless called inside a parallel
// region (nested parallel_for calls run inline).
template <typename T>
void gemm(const MatView<const T>& a, const MatView<const T>& b, const MatView<T>& c, T alpha,
          T beta);

}  // namespace weft::kernels
