// Matrix products. Every case reduces to one batched kernel over [..., m, k] · [..., k, n]
// with broadcast batch dims (kernels/gemm.h does each product on strided views, no copies);
// its backward is itself made of matmuls: dA = g·Bᵀ, dB = Aᵀ·g, summed over broadcast dims.
#include <string>

#include "kernels/dispatch.h"
#include "kernels/gemm.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/parallel.h"

namespace weft {

namespace {
using Grads = std::vector<Tensor>;
using Saved = std::vector<Tensor>;

// PyTorch's C type names, as its matmul messages print them.
const char* c_type_name(Dtype d) {
  switch (d) {
    case Dtype::Bool:
      return "bool";
    case Dtype::Int32:
      return "int";
    case Dtype::Int64:
      return "long int";
    case Dtype::Float16:
      return "c10::Half";
    case Dtype::BFloat16:
      return "c10::BFloat16";
    case Dtype::Float32:
      return "float";
    case Dtype::Float64:
      return "double";
  }
  return "?";
}

void check_same_dtype(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    throw Error(std::string("expected m1 and m2 to have the same dtype, but got: ") +
                c_type_name(a.dtype()) + " != " + c_type_name(b.dtype()));
  }
}

std::string mm_shapes_error(std::int64_t m, std::int64_t k1, std::int64_t k2, std::int64_t n) {
  return "mat1 and mat2 shapes cannot be multiplied (" + std::to_string(m) + "x" +
         std::to_string(k1) + " and " + std::to_string(k2) + "x" + std::to_string(n) + ")";
}

template <typename T>
kernels::MatView<const T> mat_view(const Tensor& t, std::int64_t offset) {
  const std::int64_t r = t.dim();
  return {t.data<T>() + offset, t.size(r - 2), t.size(r - 1), t.stride(r - 2), t.stride(r - 1)};
}

// out[batch…, m, n] = a[…, m, k] · b[…, k, n], batch dims broadcast. No autograd.
Tensor batched_product(const Tensor& a0, const Tensor& b) {
  autograd::NoGradGuard no_grad;
  const std::int64_t ra = a0.dim(), rb = b.dim();
  const std::int64_t m = a0.size(ra - 2), k = a0.size(ra - 1), n = b.size(rb - 1);
  const Shape batch_a(a0.sizes().begin(), a0.sizes().end() - 2);
  const Shape batch_b(b.sizes().begin(), b.sizes().end() - 2);
  const Shape batch = broadcast_shapes(batch_a, batch_b);
  Shape out_shape = batch;
  out_shape.push_back(m);
  out_shape.push_back(n);
  Tensor out = empty(out_shape, dtype(a0.dtype()));
  if (out.numel() == 0) return out;

  Tensor a = a0;
  std::int64_t batches = numel_of(batch);
  std::int64_t rows = m;
  if (rb == 2 && ra > 2) {
    // [..., m, k] · [k, n]: one tall GEMM over all rows (copies only if a can't be viewed so).
    rows = numel_of(batch_a) * m;
    a = a0.reshape({rows, k});
    batches = 1;
  }
  // Element offsets of every batch's matrices, through broadcasting.
  std::vector<std::int64_t> off_a(static_cast<std::size_t>(batches), 0);
  std::vector<std::int64_t> off_b(static_cast<std::size_t>(batches), 0);
  if (batches > 1) {
    const std::int64_t nb = static_cast<std::int64_t>(batch.size());
    for (std::int64_t i = 0; i < batches; ++i) {
      std::int64_t rest = i, oa = 0, ob = 0;
      for (std::int64_t d = nb - 1; d >= 0; --d) {
        const std::int64_t idx = rest % batch[d];
        rest /= batch[d];
        const std::int64_t da = d - (nb - static_cast<std::int64_t>(batch_a.size()));
        const std::int64_t db = d - (nb - static_cast<std::int64_t>(batch_b.size()));
        if (da >= 0 && batch_a[da] != 1) oa += idx * a.stride(da);
        if (db >= 0 && batch_b[db] != 1) ob += idx * b.stride(db);
      }
      off_a[i] = oa;
      off_b[i] = ob;
    }
  }
  kernels::dispatch_numeric(a.dtype(), "addmm_impl_cpu_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    auto one = [&](std::int64_t i) {
      kernels::MatView<const T> av = mat_view<T>(a, off_a[i]);
      av.rows = rows;
      kernels::gemm<T>(av, mat_view<T>(b, off_b[i]), {o + i * rows * n, rows, n, n, 1}, T(1), T(0));
    };
    if (batches == 1) {
      one(0);
    } else {
      const std::int64_t work = m * n * std::max<std::int64_t>(k, 1);
      parallel_for(0, batches, std::max<std::int64_t>(1, (1 << 16) / work),
                   [&](std::int64_t b0, std::int64_t b1) {
                     for (std::int64_t i = b0; i < b1; ++i) one(i);
                   });
    }
  });
  return out;
}

// Both operands at least 2-D, inner sizes already checked.
Tensor matmul_nd(const Tensor& a, const Tensor& b, const char* name) {
  check_same_dtype(a, b);
  Tensor out = batched_product(a, b);
  const Shape a_shape = a.sizes(), b_shape = b.sizes();
  autograd::record_function(
      name, {a, b}, {out}, {a, b}, [a_shape, b_shape](const Grads& g, const Saved& s) {
        const Tensor& A = s[0];
        const Tensor& B = s[1];
        const Tensor ga = autograd::sum_to(matmul(g[0], B.transpose(-1, -2)), a_shape);
        Tensor gb;
        if (b_shape.size() == 2 && a_shape.size() > 2) {
          // Fold the batch into rows, as the forward did: Aᵀ·g over all rows at once.
          const std::int64_t k = a_shape.back(), n = b_shape.back();
          const std::int64_t rows = numel_of(a_shape) / std::max<std::int64_t>(k, 1);
          const std::int64_t all_rows =
              k == 0 ? numel_of(g[0].sizes()) / std::max<std::int64_t>(n, 1) : rows;
          gb = mm(A.reshape({all_rows, k}).t(), g[0].reshape({all_rows, n}));
        } else {
          gb = autograd::sum_to(matmul(A.transpose(-1, -2), g[0]), b_shape);
        }
        return Grads{ga, gb};
      });
  return out;
}

std::string batch_error(const Tensor& a, const Tensor& b) {
  const Shape batch = broadcast_shapes(Shape(a.sizes().begin(), a.sizes().end() - 2),
                                       Shape(b.sizes().begin(), b.sizes().end() - 2));
  const std::int64_t nb = numel_of(batch);
  return "Expected size for first two dimensions of batch2 tensor to be: [" + std::to_string(nb) +
         ", " + std::to_string(a.size(-1)) + "] but got: [" + std::to_string(nb) + ", " +
         std::to_string(b.size(-2)) + "].";
}
}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(Mm, (a, b), ir::Attributes(), mm(a, b));
  if (a.dim() != 2) throw Error("self must be a matrix");
  if (b.dim() != 2) throw Error("mat2 must be a matrix");
  if (a.size(1) != b.size(0))
    throw Error(mm_shapes_error(a.size(0), a.size(1), b.size(0), b.size(1)));
  return matmul_nd(a, b, "MmBackward0");
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(Bmm, (a, b), ir::Attributes(), bmm(a, b));
  if (a.dim() != 3) throw Error("batch1 must be a 3D tensor");
  if (b.dim() != 3) throw Error("batch2 must be a 3D tensor");
  if (a.size(0) != b.size(0)) {
    throw Error("batch1 and batch2 must have same number of batches, got " +
                std::to_string(a.size(0)) + " and " + std::to_string(b.size(0)));
  }
  if (a.size(2) != b.size(1)) {
    throw Error("Expected size for first two dimensions of batch2 tensor to be: [" +
                std::to_string(a.size(0)) + ", " + std::to_string(a.size(2)) + "] but got: [" +
                std::to_string(b.size(0)) + ", " + std::to_string(b.size(1)) + "].");
  }
  return matmul_nd(a, b, "BmmBackward0");
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(Matmul, (a, b), ir::Attributes(), matmul(a, b));
  const std::int64_t ra = a.dim(), rb = b.dim();
  if (ra == 0 || rb == 0) {
    throw Error("both arguments to matmul need to be at least 1D, but they are " +
                std::to_string(ra) + "D and " + std::to_string(rb) + "D");
  }
  if (ra == 1 && rb == 1) {
    if (a.dtype() != b.dtype()) {
      throw Error(std::string("dot : expected both vectors to have same dtype, but found ") +
                  dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()));
    }
    if (a.size(0) != b.size(0)) {
      throw Error("inconsistent tensor size, expected tensor [" + std::to_string(a.size(0)) +
                  "] and src [" + std::to_string(b.size(0)) +
                  "] to have the same number of elements, but got " + std::to_string(a.size(0)) +
                  " and " + std::to_string(b.size(0)) + " elements respectively");
    }
    return matmul_nd(a.unsqueeze(0), b.unsqueeze(1), "DotBackward0").reshape({});
  }
  if (rb == 1) {  // matrix (or batch of matrices) · vector
    if (a.size(-1) != b.size(0)) {
      const std::int64_t rows = a.numel() / std::max<std::int64_t>(a.size(-1), 1);
      throw Error("size mismatch, got input (" + std::to_string(rows) + "), mat (" +
                  std::to_string(rows) + "x" + std::to_string(a.size(-1)) + "), vec (" +
                  std::to_string(b.size(0)) + ")");
    }
    return matmul_nd(a, b.unsqueeze(1), "MvBackward0").squeeze({-1});
  }
  const Tensor a2 = ra == 1 ? a.unsqueeze(0) : a;
  if (a2.size(-1) != b.size(-2)) {
    if (rb == 2) {
      const std::int64_t rows = a2.numel() / std::max<std::int64_t>(a2.size(-1), 1);
      throw Error(
          mm_shapes_error(a2.dim() == 2 ? a2.size(0) : rows, a2.size(-1), b.size(0), b.size(1)));
    }
    throw Error(batch_error(a2, b));
  }
  Tensor out = matmul_nd(a2, b, rb == 2 && ra <= 2 ? "MmBackward0" : "BmmBackward0");
  return ra == 1 ? out.squeeze({-2}) : out;
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  WEFT_TRACE_OP(Linear, (x, weight, bias), ir::Attributes(), linear(x, weight, bias));
  if (x.dim() == 0) {
    throw Error("both arguments to linear need to be at least 1D, but they are 0D and " +
                std::to_string(weight.dim()) + "D");
  }
  if (weight.dim() != 1 && weight.dim() != 2) {
    throw Error("linear(): weight must be 1-D or 2-D, but got weight of size " +
                shape_str(weight.sizes()));
  }
  const Tensor wt = weight.dim() == 2 ? weight.t() : weight;
  if (x.dim() == 2 && bias.defined() && weight.dim() == 2) return addmm(bias, x, wt);
  Tensor out = matmul(x, wt);
  return bias.defined() ? add(out, bias) : out;
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, double beta,
             double alpha) {
  WEFT_TRACE_OP(Addmm, (self, mat1, mat2), ir::Attributes().set("beta", beta).set("alpha", alpha),
                addmm(self, mat1, mat2, beta, alpha));
  if (mat1.dim() != 2) {
    throw Error("mat1 must be a matrix, got " + std::to_string(mat1.dim()) + "-D tensor");
  }
  if (mat2.dim() != 2) {
    throw Error("mat2 must be a matrix, got " + std::to_string(mat2.dim()) + "-D tensor");
  }
  if (mat1.size(1) != mat2.size(0)) {
    throw Error(mm_shapes_error(mat1.size(0), mat1.size(1), mat2.size(0), mat2.size(1)));
  }
  check_same_dtype(mat1, mat2);
  if (self.dtype() != mat1.dtype()) {
    throw Error(std::string("self and mat2 must have the same dtype, but got ") +
                dtype_name(self.dtype()) + " and " + dtype_name(mat2.dtype()));
  }
  const std::int64_t n = mat1.size(0), p = mat2.size(1);
  Tensor out = empty({n, p}, dtype(mat1.dtype()));
  {
    autograd::NoGradGuard no_grad;
    const Tensor expanded = self.expand({n, p});  // PyTorch's message when it can't
    if (beta != 0.0) out.copy_(expanded);
    kernels::dispatch_numeric(mat1.dtype(), "addmm_impl_cpu_", [&](auto tag) {
      using T = typename decltype(tag)::type;
      kernels::gemm<T>(mat_view<T>(mat1, 0), mat_view<T>(mat2, 0), {out.data<T>(), n, p, p, 1},
                       static_cast<T>(alpha), static_cast<T>(beta));
    });
  }
  const Shape self_shape = self.sizes();
  autograd::record_function("AddmmBackward0", {self, mat1, mat2}, {out}, {mat1, mat2},
                            [self_shape, beta, alpha](const Grads& g, const Saved& s) {
                              const Tensor gs =
                                  autograd::sum_to(beta == 1.0 ? g[0] : g[0] * beta, self_shape);
                              Tensor g1 = mm(g[0], s[1].t());
                              Tensor g2 = mm(s[0].t(), g[0]);
                              if (alpha != 1.0) {
                                g1 = g1 * alpha;
                                g2 = g2 * alpha;
                              }
                              return Grads{gs, g1, g2};
                            });
  return out;
}

}  // namespace weft
