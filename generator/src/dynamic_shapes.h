#pragma once
// Dynamic shapes for a generated case: later input shape sets from Z3 (other_shape_sets in
// weft/gen/shrink.h), each with input values that keep the computation finite.
#include <cstdint>

#include "weft/gen/generator.h"

namespace weft::gen {

// Gives `result` up to two later shape sets (Value::shape_sets, values "x@1", "x@2"): the same
// program at other input shapes, parameters shared. A set whose inputs no finite values were
// found for is dropped; nothing changes when no input dim can move or the case is not finite.
void add_shape_sets(GeneratedCase& result, std::uint64_t seed);

}  // namespace weft::gen
