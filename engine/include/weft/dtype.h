#pragma once
// Element types of tensors, their sizes and names, and PyTorch's type-promotion lattice.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weft {

// The order is the promotion order within each category (bool < integers < floats), except
// that float16 and bfloat16 promote to float32 together (neither holds the other).
// float16 and bfloat16 are storage types: the engine computes with them in float32 and rounds
// each op's results to them, as PyTorch's CPU kernels do (their "opmath" type).
enum class Dtype : std::uint8_t { Bool, Int32, Int64, Float16, BFloat16, Float32, Float64 };

inline constexpr int kNumDtypes = 7;

std::size_t itemsize(Dtype dtype);
bool is_floating(Dtype dtype);
bool is_integral(Dtype dtype, bool include_bool = false);
// float16 and bfloat16: stored in 16 bits, computed in float32.
bool is_reduced_floating(Dtype dtype);
// The gap between 1 and the next representable value (torch.finfo(dtype).eps); 0 for
// integers and bool.
double dtype_epsilon(Dtype dtype);
// The largest finite value (torch.finfo(dtype).max); for integers, the type's maximum.
double dtype_max(Dtype dtype);

// "float32", "int64", "bool", … (PyTorch's names without the "torch." prefix).
const char* dtype_name(Dtype dtype);
// Accepts the names above and PyTorch's aliases ("float", "double", "long", "int").
std::optional<Dtype> dtype_from_name(std::string_view name);
// LibTorch's scalar type names ("Float", "Long", …), for PyTorch-worded error messages.
const char* torch_scalar_type_name(Dtype dtype);
// Safetensors' names: "F16", "BF16", "F32", "F64", "I64", "I32", "BOOL".
const char* safetensors_dtype_name(Dtype dtype);
std::optional<Dtype> dtype_from_safetensors_name(std::string_view name);

// The smallest type that holds both (torch.promote_types).
Dtype promote_types(Dtype a, Dtype b);

// PyTorch's category rule (result_type): dimensioned tensors decide the type unless a
// zero-dim tensor or a Python scalar is of a higher category (bool < integral < floating).
// Arguments: the promoted type of each group, if the group is non-empty.
Dtype combine_result_types(std::optional<Dtype> dimensioned, std::optional<Dtype> zero_dim,
                           std::optional<Dtype> scalars);

// The dtype a Python-style scalar gets when it joins a tensor operation as a "wrapped number".
inline constexpr Dtype kDefaultFloat = Dtype::Float32;

}  // namespace weft
