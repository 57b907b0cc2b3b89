#include "weft/dtype.h"

#include <array>

namespace weft {

namespace {
struct DtypeInfo {
  const char* name;
  const char* safetensors_name;
  const char* torch_name;
  std::size_t size;
};
constexpr std::array<DtypeInfo, kNumDtypes> kInfo{{
    {"bool", "BOOL", "Bool", 1},
    {"int32", "I32", "Int", 4},
    {"int64", "I64", "Long", 8},
    {"float32", "F32", "Float", 4},
    {"float64", "F64", "Double", 8},
}};
const DtypeInfo& info(Dtype dtype) {
  return kInfo[static_cast<std::size_t>(dtype)];
}

int category(Dtype dtype) {
  return dtype == Dtype::Bool ? 0 : is_floating(dtype) ? 2 : 1;
}
}  // namespace

std::size_t itemsize(Dtype dtype) {
  return info(dtype).size;
}
bool is_floating(Dtype dtype) {
  return dtype == Dtype::Float32 || dtype == Dtype::Float64;
}
bool is_integral(Dtype dtype, bool include_bool) {
  return dtype == Dtype::Int32 || dtype == Dtype::Int64 || (include_bool && dtype == Dtype::Bool);
}
const char* dtype_name(Dtype dtype) {
  return info(dtype).name;
}
const char* safetensors_dtype_name(Dtype dtype) {
  return info(dtype).safetensors_name;
}
const char* torch_scalar_type_name(Dtype dtype) { return info(dtype).torch_name; }

std::optional<Dtype> dtype_from_name(std::string_view name) {
  for (int i = 0; i < kNumDtypes; ++i) {
    if (name == kInfo[i].name) return static_cast<Dtype>(i);
  }
  if (name == "float") return Dtype::Float32;
  if (name == "double") return Dtype::Float64;
  if (name == "long") return Dtype::Int64;
  if (name == "int") return Dtype::Int32;
  return std::nullopt;
}

std::optional<Dtype> dtype_from_safetensors_name(std::string_view name) {
  for (int i = 0; i < kNumDtypes; ++i) {
    if (name == kInfo[i].safetensors_name) return static_cast<Dtype>(i);
  }
  return std::nullopt;
}

Dtype promote_types(Dtype a, Dtype b) {
  // The enum order is a total order that matches PyTorch for the types weft has.
  return static_cast<std::uint8_t>(a) >= static_cast<std::uint8_t>(b) ? a : b;
}

Dtype combine_result_types(std::optional<Dtype> dimensioned, std::optional<Dtype> zero_dim,
                           std::optional<Dtype> scalars) {
  // Mirrors ATen's combine_categories(higher, lower), applied as dim ∘ (zero ∘ scalar).
  auto combine = [](std::optional<Dtype> higher,
                    std::optional<Dtype> lower) -> std::optional<Dtype> {
    if (!higher) return lower;
    if (!lower) return higher;
    if (category(*higher) >= category(*lower)) {
      // Same or higher category decides, except that bool always yields to others.
      if (*higher == Dtype::Bool) return promote_types(*higher, *lower);
      return higher;
    }
    // A higher category in the lower-priority group: take the promoted type of that group,
    // (e.g. int tensor + 2.5 → float32, int tensor + float64 zero-dim tensor → float64).
    return lower;
  };
  return *combine(dimensioned, combine(zero_dim, scalars));
}

}  // namespace weft
