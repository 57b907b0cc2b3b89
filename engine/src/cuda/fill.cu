// The smallest device kernel: fills a buffer. Proves that .cu files build and launch.
#include <cstddef>

namespace weft::cuda {

namespace {
__global__ void fill_kernel(float* data, std::size_t count, float value) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < count) data[i] = value;
}
}  // namespace

void launch_fill(float* device_data, std::size_t count, float value) {
  if (count == 0) return;
  constexpr unsigned kThreads = 256;
  const unsigned blocks = static_cast<unsigned>((count + kThreads - 1) / kThreads);
  fill_kernel<<<blocks, kThreads>>>(device_data, count, value);
}

}  // namespace weft::cuda
