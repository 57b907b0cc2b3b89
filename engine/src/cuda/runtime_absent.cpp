// CUDA entry points for a build configured without CUDA (WEFT_CUDA=OFF or no nvcc).
#include <stdexcept>

#include "weft/cuda.h"

namespace weft::cuda {

const Availability& availability() {
  static const Availability absent{
      false, false, 0, "weft was built without CUDA (WEFT_CUDA=OFF or nvcc not found)", ""};
  return absent;
}

std::vector<float> fill_on_device(std::size_t, float) {
  throw std::runtime_error("CUDA is unavailable: " + availability().reason);
}

}  // namespace weft::cuda
