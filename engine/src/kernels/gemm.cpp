// Eigen-backed GEMM over strided views: row-major or column-major operands are mapped in
// place (Eigen::OuterStride), anything else is packed into a contiguous buffer first.
#include "kernels/gemm.h"

#include <Eigen/Dense>
#include <algorithm>
#include <vector>

#include "weft/parallel.h"

namespace weft::kernels {

namespace {

template <typename T>
using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ColMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
using Outer = Eigen::OuterStride<>;

// Multiply-adds per parallel chunk: below this, threads cost more than they save.
constexpr std::int64_t kGemmGrain = 1 << 15;

enum class Layout { Row, Col, Other };

template <typename T>
Layout layout_of(const MatView<const T>& m) {
  if (m.cs == 1 || m.cols <= 1) return Layout::Row;
  if (m.rs == 1 || m.rows <= 1) return Layout::Col;
  return Layout::Other;
}

template <typename T>
Eigen::Map<const RowMat<T>, 0, Outer> row_map(const MatView<const T>& m) {
  // A single row may carry any stride; Eigen only needs one that covers the columns.
  const std::int64_t rs = m.rows <= 1 ? std::max<std::int64_t>(m.cols, 1) : m.rs;
  return {m.data, m.rows, m.cols, Outer(rs)};
}

template <typename T>
Eigen::Map<const ColMat<T>, 0, Outer> col_map(const MatView<const T>& m) {
  const std::int64_t cs = m.cols <= 1 ? std::max<std::int64_t>(m.rows, 1) : m.cs;
  return {m.data, m.rows, m.cols, Outer(cs)};
}

template <typename T, typename A, typename B>
void run(const A& a, const B& b, const MatView<T>& c, T alpha, T beta) {
  const std::int64_t m = c.rows, n = c.cols, k = a.cols();
  Eigen::Map<RowMat<T>, 0, Outer> cm(c.data, m, n,
                                     Outer(m <= 1 ? std::max<std::int64_t>(n, 1) : c.rs));
  auto block = [&](auto&& cb, const auto& ab, const auto& bb) {
    if (k == 0) {
      if (beta == T(0)) {
        cb.setZero();
      } else if (beta != T(1)) {
        cb *= beta;
      }
      return;
    }
    if (beta == T(0)) {
      cb.noalias() = (alpha * ab) * bb;
    } else {
      if (beta != T(1)) cb *= beta;
      cb.noalias() += (alpha * ab) * bb;
    }
  };
  const std::int64_t work = m * n * std::max<std::int64_t>(k, 1);
  if (work < 2 * kGemmGrain || get_num_threads() == 1) {
    block(cm, a, b);
    return;
  }
  // Split the longer side of c; each chunk is an independent smaller GEMM.
  if (m >= n) {
    const std::int64_t grain =
        std::max<std::int64_t>(1, kGemmGrain / (n * std::max<std::int64_t>(k, 1)));
    parallel_for(0, m, grain, [&](std::int64_t r0, std::int64_t r1) {
      block(cm.middleRows(r0, r1 - r0), a.middleRows(r0, r1 - r0), b);
    });
  } else {
    const std::int64_t grain =
        std::max<std::int64_t>(1, kGemmGrain / (m * std::max<std::int64_t>(k, 1)));
    parallel_for(0, n, grain, [&](std::int64_t c0, std::int64_t c1) {
      block(cm.middleCols(c0, c1 - c0), a, b.middleCols(c0, c1 - c0));
    });
  }
}

template <typename T>
std::vector<T> pack(const MatView<const T>& m) {
  std::vector<T> out(static_cast<std::size_t>(m.rows * m.cols));
  for (std::int64_t i = 0; i < m.rows; ++i) {
    for (std::int64_t j = 0; j < m.cols; ++j) out[i * m.cols + j] = m.data[i * m.rs + j * m.cs];
  }
  return out;
}

template <typename T, typename A>
void with_b(const A& am, const MatView<const T>& b, const MatView<T>& c, T alpha, T beta) {
  switch (layout_of(b)) {
    case Layout::Row:
      return run(am, row_map(b), c, alpha, beta);
    case Layout::Col:
      return run(am, col_map(b), c, alpha, beta);
    case Layout::Other: {
      const std::vector<T> packed = pack(b);
      return run(am, row_map(MatView<const T>{packed.data(), b.rows, b.cols, b.cols, 1}), c, alpha,
                 beta);
    }
  }
}

}  // namespace

template <typename T>
void gemm(const MatView<const T>& a, const MatView<const T>& b, const MatView<T>& c, T alpha,
          T beta) {
  if (c.rows == 0 || c.cols == 0) return;
  switch (layout_of(a)) {
    case Layout::Row:
      return with_b(row_map(a), b, c, alpha, beta);
    case Layout::Col:
      return with_b(col_map(a), b, c, alpha, beta);
    case Layout::Other: {
      const std::vector<T> packed = pack(a);
      return with_b(row_map(MatView<const T>{packed.data(), a.rows, a.cols, a.cols, 1}), b, c,
                    alpha, beta);
    }
  }
}

template void gemm<float>(const MatView<const float>&, const MatView<const float>&,
                          const MatView<float>&, float, float);
template void gemm<double>(const MatView<const double>&, const MatView<const double>&,
                           const MatView<double>&, double, double);
template void gemm<std::int32_t>(const MatView<const std::int32_t>&,
                                 const MatView<const std::int32_t>&, const MatView<std::int32_t>&,
                                 std::int32_t, std::int32_t);
template void gemm<std::int64_t>(const MatView<const std::int64_t>&,
                                 const MatView<const std::int64_t>&, const MatView<std::int64_t>&,
                                 std::int64_t, std::int64_t);

}  // namespace weft::kernels
