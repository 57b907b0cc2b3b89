#include "weft/oracle/torch_info.h"

#include <ATen/Context.h>
#include <torch/version.h>

namespace weft::oracle {

std::string torch_version() {
  return TORCH_VERSION;
}

int torch_major() {
  return TORCH_VERSION_MAJOR;
}

std::string torch_cuda_unavailable_reason() {
  if (at::hasCUDA()) return {};
  // WEFT_TORCH_CUDA: the LibTorch build has CUDA kernels (CMake saw its torch_cuda library).
  return std::string("LibTorch ") + TORCH_VERSION +
         (WEFT_TORCH_CUDA ? " has CUDA but finds no CUDA device or driver here"
                          : " here is a CPU-only build, without CUDA");
}

}  // namespace weft::oracle
