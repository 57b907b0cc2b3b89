#pragma once
// Tensors written as literals in engine tests, and their elements read back as doubles.

#include <cstdint>
#include <vector>

#include "weft/tensor.h"

namespace weft::testing {

// A 1-D float64 tensor of these values.
inline Tensor doubles(std::vector<double> values) {
  return tensor(values);
}
// A 1-D int64 tensor of these values.
inline Tensor int64s(std::vector<std::int64_t> values) {
  return tensor(values);
}
// The elements of `t` (any dtype), in order, as doubles.
inline std::vector<double> values(const Tensor& t) {
  return t.to(Dtype::Float64).to_vector<double>();
}

}  // namespace weft::testing
