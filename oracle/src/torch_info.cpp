#include "weft/oracle/torch_info.h"

#include <ATen/Context.h>
#include <torch/version.h>

namespace weft::oracle {

std::string torch_version() {
  return TORCH_VERSION;
}

std::string torch_cuda_unavailable_reason() {
  if (!at::hasCUDA()) {
    return std::string("LibTorch ") + TORCH_VERSION +
           " here has no CUDA support (a CPU-only build, or no CUDA device/driver)";
  }
  // A CUDA LibTorch with a device: the eager lowering still places tensors on the CPU.
  return "weft's LibTorch lowering does not place tensors on CUDA devices yet";
}

}  // namespace weft::oracle
