#pragma once
// Facts about the Z3 library this build links.

#include <string>

namespace weft::gen {

// "4.8.12": the version of the linked Z3 (not of the headers it was compiled with).
std::string z3_version();

}  // namespace weft::gen
