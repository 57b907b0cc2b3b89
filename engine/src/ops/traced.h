#pragma once
// The one statement each public op starts with: when a trace is being recorded on this thread,
// the op is appended to it (see weft/ir/tracer.h). `inputs` are the op's tensor arguments in
// the IR's order, in parentheses: (a, b); `...` is the call that runs the op itself. Operands
// in float16 or bfloat16 make the op run on float32 copies instead (ops/reduced.cpp).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "weft/ir/tracer.h"
#include "weft/shape.h"

namespace weft::ops_detail {

template <typename... Ts>
std::vector<Tensor> traced_inputs(const Ts&... tensors) {
  return std::vector<Tensor>{tensors...};
}
inline std::vector<Tensor> traced_inputs(const std::vector<Tensor>& tensors) {
  return tensors;
}

// float16 and bfloat16 operands (ops/reduced.cpp): whether one is there, whether the op then
// runs on float32 copies, and the run itself, returning the op's outputs in its own form.
inline bool is_reduced(const Tensor& t) {
  return t.defined() && is_reduced_floating(t.dtype());
}
inline bool is_reduced(const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors) {
    if (is_reduced(t)) return true;
  }
  return false;
}
template <typename... Ts>
bool any_reduced(const Ts&... tensors) {
  return (is_reduced(tensors) || ...);
}
bool runs_in_float32(ir::OpKind op, const std::vector<Tensor>& inputs);
std::vector<Tensor> run_in_float32(ir::OpKind op, const std::vector<Tensor>& inputs,
                                   const ir::Attributes& attrs);
template <typename R>
R outputs_as(std::vector<Tensor> outputs) {
  if constexpr (std::is_same_v<R, Tensor>) {
    return outputs.at(0);
  } else if constexpr (std::is_same_v<R, std::vector<Tensor>>) {
    return outputs;
  } else {
    return R(outputs.at(0), outputs.at(1));
  }
}

inline std::vector<std::int64_t> to_ints(IntList list) {
  return std::vector<std::int64_t>(list.begin(), list.end());
}

// Optional arguments are absent attributes ("none"), as the op schema declares them.
inline ir::Attributes optional_dim(std::optional<std::int64_t> dim) {
  ir::Attributes attrs;
  if (dim) attrs.set("dim", *dim);
  return attrs;
}
inline ir::Attributes clamp_attributes(std::optional<double> min, std::optional<double> max) {
  ir::Attributes attrs;
  if (min) attrs.set("min", *min);
  if (max) attrs.set("max", *max);
  return attrs;
}
inline ir::Attributes div_attributes(std::optional<std::string_view> rounding_mode) {
  ir::Attributes attrs;
  if (rounding_mode) attrs.set("rounding_mode", std::string(*rounding_mode));
  return attrs;
}

}  // namespace weft::ops_detail

#define WEFT_TRACE_OP(kind, inputs, attrs, ...)                                                 \
  do {                                                                                          \
    if (::weft::ir::Tracer* weft_tracer = ::weft::ir::active_tracer()) {                        \
      return weft_tracer->record(::weft::ir::OpKind::kind,                                      \
                                 ::weft::ops_detail::traced_inputs inputs, attrs,               \
                                 [&] { return __VA_ARGS__; });                                  \
    }                                                                                           \
    if (::weft::ops_detail::any_reduced inputs &&                                               \
        ::weft::ops_detail::runs_in_float32(::weft::ir::OpKind::kind,                           \
                                            ::weft::ops_detail::traced_inputs inputs)) {        \
      return ::weft::ops_detail::outputs_as<decltype(__VA_ARGS__)>(                             \
          ::weft::ops_detail::run_in_float32(::weft::ir::OpKind::kind,                          \
                                             ::weft::ops_detail::traced_inputs inputs, attrs)); \
    }                                                                                           \
  } while (false)
