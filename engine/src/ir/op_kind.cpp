#include "weft/ir/op_kind.h"

namespace weft::ir {

namespace {
constexpr std::array<std::string_view, kNumOps> kNames{{
#define WEFT_OP_NAME(id, name) name,
    WEFT_OP_LIST(WEFT_OP_NAME)
#undef WEFT_OP_NAME
}};
}  // namespace

std::string_view op_name(OpKind op) {
  return kNames[static_cast<std::size_t>(op)];
}

std::optional<OpKind> op_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kNumOps; ++i) {
    if (kNames[i] == name) return kAllOps[i];
  }
  return std::nullopt;
}

}  // namespace weft::ir
