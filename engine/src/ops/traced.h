#pragma once
// The one statement each public op starts with: when a trace is being recorded on this thread,
// the op is appended to it (see weft/ir/tracer.h). `inputs` are the op's tensor arguments in
// the IR's order, in parentheses: (a, b); `...` is the call that runs the op itself.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

#define WEFT_TRACE_OP(kind, inputs, attrs, ...)                                   \
  do {                                                                            \
    if (::weft::ir::Tracer* weft_tracer = ::weft::ir::active_tracer()) {          \
      return weft_tracer->record(::weft::ir::OpKind::kind,                        \
                                 ::weft::ops_detail::traced_inputs inputs, attrs, \
                                 [&] { return __VA_ARGS__; });                    \
    }                                                                             \
  } while (false)
