#pragma once
// Python/TorchScript literals and identifiers for the emitted source text (source.cpp,
// source_expressions.cpp), shared with nothing else: the public ones (float_literal,
// python_tensor_literal, ...) are declared in weft/oracle/source.h.
#include <cstdint>
#include <string>
#include <vector>

namespace weft::oracle {

std::string int_literal(std::int64_t value);
std::string ints_literal(const std::vector<std::int64_t>& values);
std::string bool_literal(bool value);
std::string string_literal(const std::string& value);
// A whole-valued multiplier (add's alpha, addmm's beta) as an int literal, as Python programs
// write it and as torch_eager.cpp's multiplier() passes it: ATen refuses floating alphas for
// integral tensors.
std::string multiplier_literal(double value);
// Names the emitted text or its module class uses, which a leaf identifier must not shadow.
bool is_reserved_name(const std::string& word);
// v<digits>: the names of node outputs.
bool looks_like_value_name(const std::string& word);

}  // namespace weft::oracle
