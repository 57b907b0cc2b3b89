// CUDA runtime probing. With no GPU, cudaGetDeviceCount returns an error such as
// cudaErrorInsufficientDriver and leaves the count unwritten: trust the error code only.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "weft/cuda.h"

namespace weft::cuda {

void launch_fill(float* device_data, std::size_t count, float value);  // fill.cu

namespace {

Availability probe() {
  Availability result;
  result.compiled = true;
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) {
    result.runtime_version =
        std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
  }
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    result.reason = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(status) + " (" +
                    cudaGetErrorString(status) + ")";
    cudaGetLastError();  // clear the sticky error so later probes start clean
    return result;
  }
  if (count <= 0) {
    result.reason = "the CUDA runtime reports no device";
    return result;
  }
  result.device_count = count;
  result.available = true;
  return result;
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(status));
  }
}

}  // namespace

const Availability& availability() {
  static const Availability probed = probe();
  return probed;
}

std::vector<float> fill_on_device(std::size_t count, float value) {
  if (!availability().available) {
    throw std::runtime_error("CUDA is unavailable: " + availability().reason);
  }
  std::vector<float> host(count);
  void* allocation = nullptr;
  check(cudaMalloc(&allocation, count * sizeof(float) + 1), "cudaMalloc");
  float* device = static_cast<float*>(allocation);
  launch_fill(device, count, value);
  const cudaError_t launched = cudaGetLastError();
  const cudaError_t copied =
      cudaMemcpy(host.data(), device, count * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(device);
  check(launched, "fill kernel launch");
  check(copied, "cudaMemcpy device to host");
  return host;
}

}  // namespace weft::cuda
