#pragma once
// Whether this build and this machine can run CUDA kernels, and why not when they cannot.

#include <cstddef>
#include <string>
#include <vector>

namespace weft::cuda {

struct Availability {
  bool compiled = false;   // weft was built with WEFT_CUDA
  bool available = false;  // ... and a usable device is present
  int device_count = 0;
  std::string reason;  // why not available; empty when available
  std::string runtime_version;
};

// Probes the CUDA runtime once; cheap after the first call.
const Availability& availability();

// Fills `count` floats with `value` on device 0 and copies them back: the smallest kernel
// round trip, used to prove that device code builds and runs. Throws when unavailable.
std::vector<float> fill_on_device(std::size_t count, float value);

}  // namespace weft::cuda
