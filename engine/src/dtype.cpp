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
    {"float16", "F16", "Half", 2},
    {"bfloat16", "BF16", "BFloat16", 2},
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
  return dtype == Dtype::Float32 || dtype == Dtype::Float64 || is_reduced_floating(dtype);
}
bool is_reduced_floating(Dtype dtype) {
  return dtype == Dtype::Float16 || dtype == Dtype::BFloat16;
}
double dtype_epsilon(Dtype dtype) {
  switch (dtype) {
    case Dtype::Float16:
      return 0x1p-10;
    case Dtype::BFloat16:
      return 0x1p-7;
    case Dtype::Float32:
      return 0x1p-23;
    case Dtype::Float64:
      return 0x1p-52;
    default:
      return 0;
  }
}
double dtype_max(Dtype dtype) {
  switch (dtype) {
    case Dtype::Bool:
      return 1;
    case Dtype::Int32:
      return 2147483647.0;
    case Dtype::Int64:
      return 9223372036854775807.0;
    case Dtype::Float16:
      return 65504.0;
    case Dtype::BFloat16:
      return 0x1.fep127;
    case Dtype::Float32:
      return 0x1.fffffep127;
    case Dtype::Float64:
      return 0x1.fffffffffffffp1023;
  }
  return 0;
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
const char* torch_scalar_type_name(Dtype dtype) {
  return info(dtype).torch_name;
}

std::optional<Dtype> dtype_from_name(std::string_view name) {
  for (int i = 0; i < kNumDtypes; ++i) {
    if (name == kInfo[i].name) return static_cast<Dtype>(i);
  }
  if (name == "float") return Dtype::Float32;
  if (name == "double") return Dtype::Float64;
  if (name == "long") return Dtype::Int64;
  if (name == "half") return Dtype::Float16;
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
  // Neither 16-bit float holds the other: both fit in float32 (torch.promote_types).
  if (is_reduced_floating(a) && is_reduced_floating(b) && a != b) return Dtype::Float32;
  // Otherwise the enum order is a total order that matches PyTorch for the types weft has.
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
