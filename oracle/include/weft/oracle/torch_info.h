#pragma once
// Facts about the LibTorch this build links, without exposing torch headers to callers.

#include <string>

namespace weft::oracle {

std::string torch_version();  // "1.13.0" as LibTorch's headers state it

// Why LibTorch cannot run on a CUDA device here (no CUDA in this LibTorch build, no device,
// ...); empty when it can.
std::string torch_cuda_unavailable_reason();

}  // namespace weft::oracle
