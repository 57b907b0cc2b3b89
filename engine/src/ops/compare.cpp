// Comparisons, logic and bitwise ops: bool or integer results, no gradient. where() selects between
// two tensors and routes the gradient to the side that was chosen; masked_fill writes a value where
// a mask holds.
#include <cmath>
#include <type_traits>

#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace {
template <typename F>
Tensor compare(const Tensor& a0, const Tensor& b0, F f) {
  const Dtype type = kernels::result_type({&a0, &b0});
  const Tensor a = a0.to(type), b = b0.to(type);
  return kernels::dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return kernels::map_binary<bool, T>(a, b, Dtype::Bool, [f](T x, T y) { return f(x, y); });
  });
}

template <typename F>
Tensor logical(const Tensor& a, const Tensor& b, F f) {
  return compare(a.to(Dtype::Bool), b.to(Dtype::Bool), f);
}

// Integers and bools in their promoted type (bool & int64 is int64); PyTorch refuses floats.
template <typename F>
Tensor bitwise(const char* name, const Tensor& a0, const Tensor& b0, F f) {
  const Dtype type = kernels::result_type({&a0, &b0});
  if (is_floating(type)) {
    throw Error(std::string("\"") + name + "_cpu\" not implemented for '" + dtype_name(type) + "'");
  }
  const Tensor a = a0.to(type), b = b0.to(type);
  return kernels::dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      throw Error("bitwise: unreachable floating type");
      return Tensor();
    } else {
      return kernels::map_binary<T, T>(a, b, type,
                                       [f](T x, T y) { return static_cast<T>(f(x, y)); });
    }
  });
}
}  // namespace

Tensor eq(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(Eq, (a, b), ir::Attributes(), eq(a, b));
  return compare(a, b, [](auto x, auto y) { return x == y; });
}
Tensor ne(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(Ne, (a, b), ir::Attributes(), ne(a, b));
  return compare(a, b, [](auto x, auto y) { return x != y; });
}
Tensor lt(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(Lt, (a, b), ir::Attributes(), lt(a, b));
  return compare(a, b, [](auto x, auto y) { return x < y; });
}
Tensor le(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(Le, (a, b), ir::Attributes(), le(a, b));
  return compare(a, b, [](auto x, auto y) { return x <= y; });
}
Tensor gt(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(Gt, (a, b), ir::Attributes(), gt(a, b));
  return compare(a, b, [](auto x, auto y) { return x > y; });
}
Tensor ge(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(Ge, (a, b), ir::Attributes(), ge(a, b));
  return compare(a, b, [](auto x, auto y) { return x >= y; });
}

Tensor logical_and(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(LogicalAnd, (a, b), ir::Attributes(), logical_and(a, b));
  return logical(a, b, [](bool x, bool y) { return x && y; });
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(LogicalOr, (a, b), ir::Attributes(), logical_or(a, b));
  return logical(a, b, [](bool x, bool y) { return x || y; });
}
Tensor logical_xor(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(LogicalXor, (a, b), ir::Attributes(), logical_xor(a, b));
  return logical(a, b, [](bool x, bool y) { return x != y; });
}

Tensor logical_not(const Tensor& a) {
  WEFT_TRACE_OP(LogicalNot, (a), ir::Attributes(), logical_not(a));
  const Tensor x = a.to(Dtype::Bool);
  return kernels::map_unary<bool, bool>(x, Dtype::Bool, [](bool v) { return !v; });
}

Tensor bitwise_and(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(BitwiseAnd, (a, b), ir::Attributes(), bitwise_and(a, b));
  return bitwise("bitwise_and", a, b, [](auto x, auto y) { return x & y; });
}
Tensor bitwise_or(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(BitwiseOr, (a, b), ir::Attributes(), bitwise_or(a, b));
  return bitwise("bitwise_or", a, b, [](auto x, auto y) { return x | y; });
}
Tensor bitwise_xor(const Tensor& a, const Tensor& b) {
  WEFT_TRACE_OP(BitwiseXor, (a, b), ir::Attributes(), bitwise_xor(a, b));
  return bitwise("bitwise_xor", a, b, [](auto x, auto y) { return x ^ y; });
}
Tensor bitwise_not(const Tensor& a) {
  WEFT_TRACE_OP(BitwiseNot, (a), ir::Attributes(), bitwise_not(a));
  if (a.is_floating_point()) {
    throw Error(std::string("\"bitwise_not_cpu\" not implemented for '") + dtype_name(a.dtype()) +
                "'");
  }
  return kernels::dispatch(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      throw Error("bitwise_not: unreachable floating type");
      return Tensor();
    } else {
      // bool's complement is logical not (~ would promote it to int), an integer's ~.
      return kernels::map_unary<T, T>(a, a.dtype(), [](T v) {
        if constexpr (std::is_same_v<T, bool>) {
          return !v;
        } else {
          return static_cast<T>(~v);
        }
      });
    }
  });
}

Tensor where(const Tensor& condition, const Tensor& a0, const Tensor& b0) {
  WEFT_TRACE_OP(Where, (condition, a0, b0), ir::Attributes(), where(condition, a0, b0));
  if (condition.dtype() != Dtype::Bool) {
    throw Error(std::string("where expected condition to be a boolean tensor, but got a tensor "
                            "with dtype ") +
                dtype_name(condition.dtype()));
  }
  const Dtype type = kernels::result_type({&a0, &b0});
  const Tensor a = a0.to(type), b = b0.to(type);
  const Shape shape = broadcast_shapes(broadcast_shapes(condition.sizes(), a.sizes()), b.sizes());
  Tensor out = empty(shape, dtype(type));
  kernels::dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernels::ternary_loop<T, bool, T, T>(out, condition, a, b,
                                         [](bool c, T x, T y) { return c ? x : y; });
  });
  const Shape sa = a.sizes(), sb = b.sizes();
  autograd::record_function("WhereBackward0", {a, b}, {out}, {condition},
                            [sa, sb](const std::vector<Tensor>& g, const std::vector<Tensor>& s) {
                              const Tensor zero = zeros_like(g[0]);
                              return std::vector<Tensor>{
                                  autograd::sum_to(where(s[0], g[0], zero), sa),
                                  autograd::sum_to(where(s[0], zero, g[0]), sb)};
                            });
  return out;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  WEFT_TRACE_OP(MaskedFill, (x, mask), ir::Attributes().set("value", value),
                masked_fill(x, mask, value));
  if (mask.dtype() != Dtype::Bool) {
    throw Error(std::string("masked_fill_ only supports boolean masks, but got mask with dtype ") +
                dtype_name(mask.dtype()));
  }
  // The value takes x's dtype (an integer tensor truncates a float value), and the result has
  // x's dtype and the broadcast shape of x and mask.
  const Shape shape = broadcast_shapes(mask.sizes(), x.sizes());
  Tensor out = empty(shape, dtype(x.dtype()));
  kernels::dispatch(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T fill = kernels::convert<T>(value);
    kernels::ternary_loop<T, bool, T, T>(out, mask, x, x,
                                         [fill](bool c, T v, T) { return c ? fill : v; });
  });
  const Shape sx = x.sizes();
  autograd::record_function(
      "MaskedFillBackward0", {x}, {out}, {mask},
      [sx](const std::vector<Tensor>& g, const std::vector<Tensor>& s) {
        return std::vector<Tensor>{autograd::sum_to(where(s[0], zeros_like(g[0]), g[0]), sx)};
      });
  return out;
}

}  // namespace weft
