// The products around matmul that models call by name: dot (1-D · 1-D), mv (matrix · vector),
// outer (column times row, with type promotion as mul), trace (the diagonal's sum) and baddbmm
// (beta * self + alpha * batch1 @ batch2). Their shapes are checked with PyTorch's messages;
// the products themselves run on matmul's kernel (ops/matmul.cpp), so their backward is
// matmul's, except baddbmm's, written out below because beta = 0 must ignore self entirely.
#include <string>
#include <vector>

#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace {
using Grads = std::vector<Tensor>;
using Saved = std::vector<Tensor>;

std::string dims_text(const Tensor& t) {
  return std::to_string(t.dim()) + "D";
}
}  // namespace

Tensor dot(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(Dot, (a, b), ir::Attributes(), dot(a, b));
  if (a.dim() != 1 || b.dim() != 1) {
    throw Error("1D tensors expected, but got " + dims_text(a) + " and " + dims_text(b) +
                " tensors");
  }
  return matmul(a, b);  // its 1-D · 1-D case checks dtypes and sizes with dot's messages
}

Tensor mv(const Tensor& matrix, const Tensor& vector) {
  WEFT_TRACE_OP(Mv, (matrix, vector), ir::Attributes(), mv(matrix, vector));
  if (matrix.dim() != 2 || vector.dim() != 1) {
    throw Error("vector + matrix @ vector expected, got 1, " + std::to_string(matrix.dim()) + ", " +
                std::to_string(vector.dim()));
  }
  return matmul(matrix, vector);
}

Tensor outer(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(Outer, (a, b), ir::Attributes(), outer(a, b));
  for (const auto& [name, t] : {std::pair<const char*, const Tensor*>{"self", &a},
                                std::pair<const char*, const Tensor*>{"vec2", &b}}) {
    if (t->dim() != 1) {
      throw Error(std::string("outer: Expected 1-D argument ") + name + ", but got " +
                  std::to_string(t->dim()) + "-D");
    }
  }
  return mul(a.reshape({a.size(0), 1}), b);
}

Tensor trace(const Tensor& x) {
  WEFT_TRACE_OP(Trace, (x), ir::Attributes(), trace(x));
  if (x.dim() != 2) {
    throw Error("trace: expected a matrix, but got tensor with dim " + std::to_string(x.dim()));
  }
  return sum(diagonal(x));
}

Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, double beta,
               double alpha) {
  WEFT_TRACE_OP(Baddbmm, (self, batch1, batch2),
                ir::Attributes().set("beta", beta).set("alpha", alpha),
                baddbmm(self, batch1, batch2, beta, alpha));
  if (self.dtype() != batch1.dtype()) {
    throw Error(std::string("expected scalar type ") + dtype_name(batch1.dtype()) + " but found " +
                dtype_name(self.dtype()));
  }
  Tensor out;
  {
    autograd::NoGradGuard no_grad;
    const Tensor product = bmm(batch1, batch2);  // bmm's checks and messages
    const Tensor expanded = self.expand(product.sizes());
    out = alpha == 1.0 ? product : product * alpha;
    // beta = 0: self is not read (its NaN and inf do not propagate), only its shape is checked.
    if (beta != 0.0) out = add(beta == 1.0 ? expanded : expanded * beta, out);
    if (out.dtype() != self.dtype()) out = out.to(self.dtype());
  }
  autograd::record_function(
      "BaddbmmBackward0", {self, batch1, batch2}, {out}, {batch1, batch2},
      [beta, alpha, self_shape = self.sizes()](const Grads& g, const Saved& s) {
        const Tensor gs = autograd::sum_to(beta == 1.0 ? g[0] : g[0] * beta, self_shape);
        Tensor g1 = bmm(g[0], s[1].transpose(1, 2));
        Tensor g2 = bmm(s[0].transpose(1, 2), g[0]);
        if (alpha != 1.0) {
          g1 = g1 * alpha;
          g2 = g2 * alpha;
        }
        return Grads{gs, g1, g2};
      });
  return out;
}

}  // namespace weft
