// Python scalars as operands (`x * 2.5`, `x + True`, `2 - x`, `2 ** x`): the binary ops of
// ops/binary.cpp with the scalar as a wrapped number, so that promotion follows PyTorch's rule
// for Python numbers and the backward is the binary op's (the scalar gets no gradient).
#include "traced.h"
#include "weft/ops.h"

namespace weft {

namespace {

ir::Attributes scalar_attributes(const Scalar& other) {
  ir::Attributes attrs;
  std::visit([&](auto value) { attrs.set("other", ir::AttrValue(value)); }, other);
  return attrs;
}

}  // namespace

Tensor wrapped_scalar(const Scalar& value) {
  return std::visit([](auto v) { return wrapped_scalar(v); }, value);
}

Tensor add_scalar(const Tensor& x, const Scalar& other) {
  WEFT_TRACE_OP(AddScalar, (x), scalar_attributes(other), add_scalar(x, other));
  return add(x, wrapped_scalar(other));
}

Tensor sub_scalar(const Tensor& x, const Scalar& other) {
  WEFT_TRACE_OP(SubScalar, (x), scalar_attributes(other), sub_scalar(x, other));
  return sub(x, wrapped_scalar(other));
}

Tensor rsub_scalar(const Tensor& x, const Scalar& other) {
  WEFT_TRACE_OP(RsubScalar, (x), scalar_attributes(other), rsub_scalar(x, other));
  return sub(wrapped_scalar(other), x);
}

Tensor mul_scalar(const Tensor& x, const Scalar& other) {
  WEFT_TRACE_OP(MulScalar, (x), scalar_attributes(other), mul_scalar(x, other));
  return mul(x, wrapped_scalar(other));
}

Tensor div_scalar(const Tensor& x, const Scalar& other) {
  WEFT_TRACE_OP(DivScalar, (x), scalar_attributes(other), div_scalar(x, other));
  return div(x, wrapped_scalar(other));
}

Tensor pow_scalar(const Tensor& x, const Scalar& other) {
  WEFT_TRACE_OP(PowScalar, (x), scalar_attributes(other), pow_scalar(x, other));
  return pow(x, wrapped_scalar(other));
}

Tensor rpow_scalar(const Tensor& x, const Scalar& other) {
  WEFT_TRACE_OP(RpowScalar, (x), scalar_attributes(other), rpow_scalar(x, other));
  return pow(wrapped_scalar(other), x);
}

}  // namespace weft
