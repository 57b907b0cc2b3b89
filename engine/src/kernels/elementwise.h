#pragma once
// Building blocks shared by the elementwise op families: PyTorch's result type, operand
// conversion, and loops that allocate the broadcast output.

#include <initializer_list>
#include <optional>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/loops.h"
#include "weft/tensor.h"

namespace weft::kernels {

// torch.result_type over tensors (wrapped scalars count as Python numbers; undefined tensors,
// absent optional operands, are left out).
inline Dtype result_type_of(const std::vector<const Tensor*>& operands) {
  std::optional<Dtype> dimensioned, zero_dim, scalars;
  auto join = [](std::optional<Dtype>& group, Dtype d) {
    group = group ? promote_types(*group, d) : d;
  };
  for (const Tensor* t : operands) {
    if (!t->defined()) continue;
    if (t->impl()->is_wrapped_number) {
      join(scalars, is_floating(t->dtype()) ? kDefaultFloat : t->dtype());
    } else if (t->dim() == 0) {
      join(zero_dim, t->dtype());
    } else {
      join(dimensioned, t->dtype());
    }
  }
  return combine_result_types(dimensioned, zero_dim, scalars);
}
inline Dtype result_type(std::initializer_list<const Tensor*> operands) {
  return result_type_of(std::vector<const Tensor*>(operands));
}
inline Dtype result_type(const std::vector<Tensor>& operands) {
  std::vector<const Tensor*> pointers;
  for (const Tensor& t : operands) pointers.push_back(&t);
  return result_type_of(pointers);
}

// Integral inputs of ops that only make sense on reals (exp, sin, true division) become
// float32, as PyTorch's "int to float" promotion does.
inline Dtype floating_result(Dtype d) {
  return is_floating(d) ? d : kDefaultFloat;
}

// out = f(a) elementwise in type T (a already converted to T).
template <typename Out, typename T, typename F>
Tensor map_unary(const Tensor& a, Dtype out_dtype, F f) {
  Tensor out = empty(a.sizes(), dtype(out_dtype));
  unary_loop<Out, T>(out, a, f);
  return out;
}

// out = f(x) in x's floating type (f: a generic lambda); integer inputs are refused with
// PyTorch's "not implemented for" message.
template <typename F>
Tensor map_floating(const Tensor& x, const char* name, F f) {
  return dispatch_floating(x.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return map_unary<T, T>(x, x.dtype(), [f](T v) { return static_cast<T>(f(v)); });
  });
}

// out = f(a, b) elementwise over the broadcast shape (a, b already converted to T).
template <typename Out, typename T, typename F>
Tensor map_binary(const Tensor& a, const Tensor& b, Dtype out_dtype, F f) {
  Tensor out = empty(broadcast_shapes(a.sizes(), b.sizes()), dtype(out_dtype));
  binary_loop<Out, T, T>(out, a, b, f);
  return out;
}

}  // namespace weft::kernels
