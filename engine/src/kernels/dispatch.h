#pragma once
// Turns a runtime Dtype into a compile-time element type: dispatch(dtype, [&](auto tag) {
// using T = typename decltype(tag)::type; … }). One switch per kernel call, never per element.

#include <cstdint>
#include <string>

#include "weft/dtype.h"
#include "weft/error.h"

namespace weft::kernels {

template <typename T>
struct TypeTag {
  using type = T;
};

template <typename F>
decltype(auto) dispatch(Dtype dtype, F&& f) {
  switch (dtype) {
    case Dtype::Bool:
      return f(TypeTag<bool>{});
    case Dtype::Int32:
      return f(TypeTag<std::int32_t>{});
    case Dtype::Int64:
      return f(TypeTag<std::int64_t>{});
    case Dtype::Float32:
      return f(TypeTag<float>{});
    case Dtype::Float64:
      return f(TypeTag<double>{});
    default:
      // float16 and bfloat16 reach kernels only as float32 (ops/reduced.cpp).
      throw Error(std::string("kernel not implemented for '") + dtype_name(dtype) +
                  "' (16-bit floats are computed in float32)");
  }
}

template <typename F>
decltype(auto) dispatch_floating(Dtype dtype, const char* op, F&& f) {
  switch (dtype) {
    case Dtype::Float32:
      return f(TypeTag<float>{});
    case Dtype::Float64:
      return f(TypeTag<double>{});
    default:
      throw Error(std::string("\"") + op + "\" not implemented for '" + dtype_name(dtype) + "'");
  }
}

// Every dtype except bool (arithmetic that PyTorch refuses on bool, e.g. neg).
template <typename F>
decltype(auto) dispatch_numeric(Dtype dtype, const char* op, F&& f) {
  switch (dtype) {
    case Dtype::Int32:
      return f(TypeTag<std::int32_t>{});
    case Dtype::Int64:
      return f(TypeTag<std::int64_t>{});
    case Dtype::Float32:
      return f(TypeTag<float>{});
    case Dtype::Float64:
      return f(TypeTag<double>{});
    default:
      throw Error(std::string("\"") + op + "\" not implemented for 'bool'");
  }
}

template <typename T>
constexpr Dtype dtype_of();
template <>
constexpr Dtype dtype_of<bool>() {
  return Dtype::Bool;
}
template <>
constexpr Dtype dtype_of<std::int32_t>() {
  return Dtype::Int32;
}
template <>
constexpr Dtype dtype_of<std::int64_t>() {
  return Dtype::Int64;
}
template <>
constexpr Dtype dtype_of<float>() {
  return Dtype::Float32;
}
template <>
constexpr Dtype dtype_of<double>() {
  return Dtype::Float64;
}

}  // namespace weft::kernels
