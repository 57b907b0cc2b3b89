#pragma once
// In-place writes for a generated case (weft/ir/inplace.h), a program form: writes inserted
// after fresh values (x.relu_(), x.mul_(w), a write through x[1:3] or x.select(0, 2), and
// x[1:3] = y), and nodes whose input is read by nobody else marked to run in place.
#include <random>

#include "weft/gen/generator.h"

namespace weft::gen {

// Gives `result` in-place writes drawn from `rng`; leaves it as it was when the case is not
// finite, has later shape sets, or the writes would make it non-finite or fail on the engine.
void add_in_place_writes(GeneratedCase& result, std::mt19937_64& rng);

}  // namespace weft::gen
