// Reductions without indices: amax and amin over a list of dims (empty: every dim), any and
// all over one dim or every element. amax/amin share the gradient evenly among the elements
// equal to the result (PyTorch's amax backward: grad / count * (x == result)); any/all are
// bool (uint8 stays out: weft has no uint8) and have no gradient.
#include <algorithm>
#include <string>

#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace {
using Grads = std::vector<Tensor>;
using Saved = std::vector<Tensor>;

// `dims` wrapped, unique and sorted; empty means every dim.
std::vector<std::int64_t> reduced_dims(const char* op, IntList dims, std::int64_t rank) {
  std::vector<std::int64_t> out;
  if (dims.empty()) {
    for (std::int64_t d = 0; d < rank; ++d) out.push_back(d);
    return out;
  }
  for (std::int64_t d : dims) {
    const std::int64_t w = wrap_dim(d, rank);
    if (std::find(out.begin(), out.end(), w) != out.end()) {
      throw Error(std::string(op) + ": dim " + std::to_string(w) +
                  " appears multiple times in the list of dims");
    }
    out.push_back(w);
  }
  std::sort(out.begin(), out.end());
  return out;
}

template <bool IsMax>
Tensor extreme_over(const char* op, const char* node, const Tensor& x, IntList dims_in,
                    bool keepdim) {
  const std::vector<std::int64_t> dims = reduced_dims(op, dims_in, x.dim());
  Shape keep_shape = x.sizes();
  for (std::int64_t d : dims) {
    if (keep_shape[static_cast<std::size_t>(d)] == 0) {
      throw Error(std::string(op) + "(): Expected reduction dim " + std::to_string(d) +
                  " to have non-zero size.");
    }
    keep_shape[static_cast<std::size_t>(d)] = 1;
  }
  if (x.dim() == 0 && x.numel() == 0) {
    throw Error(std::string(op) +
                "(): Expected reduction dim to be specified for input.numel() "
                "== 0.");
  }
  Tensor kept;
  {
    autograd::NoGradGuard guard;
    kept = x.detach();
    for (std::int64_t d : dims) {
      kept = std::get<0>(IsMax ? max(kept, d, true) : min(kept, d, true));
    }
  }
  Shape out_shape;
  for (std::size_t d = 0; d < keep_shape.size(); ++d) {
    const bool gone =
        std::find(dims.begin(), dims.end(), static_cast<std::int64_t>(d)) != dims.end();
    if (!gone || keepdim) out_shape.push_back(keep_shape[d]);
  }
  Tensor out;
  {
    autograd::NoGradGuard guard;
    out = reshape(kept, out_shape).clone();
  }
  if (x.is_floating_point()) {
    autograd::record_function(
        node, {x}, {out}, {x, out}, [keep_shape, dims](const Grads& g, const Saved& s) {
          Tensor mask;
          Tensor count;
          {
            autograd::NoGradGuard guard;
            mask = eq(s[0], reshape(s[1], keep_shape));
            count = sum(mask, dims, true).to(g[0].dtype());
          }
          // g / count * mask, as PyTorch's scale_grad_by_count: a non-finite g makes NaN
          // also where the mask is 0.
          return Grads{mul(div(reshape(g[0], keep_shape), count), mask.to(g[0].dtype()))};
        });
  }
  return out;
}

// any (all): whether some (every) element of the line is non-zero; NaN counts as non-zero.
Tensor truth_over(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim, bool every) {
  autograd::NoGradGuard guard;
  const Tensor nonzero = ne(x, zeros({}, dtype(x.dtype())));
  const Tensor falses = logical_not(nonzero);
  const Tensor counted = every ? falses : nonzero;
  Tensor total;
  if (dim) {
    total = sum(counted, {wrap_dim(*dim, x.dim())}, keepdim);
  } else {
    total = sum(counted, {}, false);
    if (keepdim) total = reshape(total, Shape(static_cast<std::size_t>(x.dim()), 1));
  }
  const Tensor zero = zeros({}, dtype(total.dtype()));
  return every ? eq(total, zero) : ne(total, zero);
}

}  // namespace

Tensor amax(const Tensor& x, IntList dims, bool keepdim) {
  WEFT_TRACE_OP(Amax, (x),
                ir::Attributes().set("dim", ops_detail::to_ints(dims)).set("keepdim", keepdim),
                amax(x, dims, keepdim));
  return extreme_over<true>("amax", "AmaxBackward0", x, dims, keepdim);
}

Tensor amin(const Tensor& x, IntList dims, bool keepdim) {
  WEFT_TRACE_OP(Amin, (x),
                ir::Attributes().set("dim", ops_detail::to_ints(dims)).set("keepdim", keepdim),
                amin(x, dims, keepdim));
  return extreme_over<false>("amin", "AminBackward0", x, dims, keepdim);
}

Tensor any(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  WEFT_TRACE_OP(Any, (x), ops_detail::optional_dim(dim).set("keepdim", keepdim),
                any(x, dim, keepdim));
  return truth_over(x, dim, keepdim, false);
}

Tensor all(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  WEFT_TRACE_OP(All, (x), ops_detail::optional_dim(dim).set("keepdim", keepdim),
                all(x, dim, keepdim));
  return truth_over(x, dim, keepdim, true);
}

}  // namespace weft
