#pragma once
// Facts about the LibTorch this build links, without exposing torch headers to callers.

#include <string>

namespace weft::oracle {

std::string torch_version();  // "1.13.0" as LibTorch's headers state it

}  // namespace weft::oracle
