#include "weft/io/tensor_bytes.h"

#include <cstring>

namespace weft::io {

TensorBytes to_bytes(const Tensor& tensor) {
  const Tensor data = tensor.detach().to(kCPU).contiguous();
  TensorBytes bytes{data.dtype(), data.sizes(), std::string()};
  bytes.data.resize(static_cast<std::size_t>(data.numel()) * itemsize(data.dtype()));
  if (!bytes.data.empty()) std::memcpy(bytes.data.data(), data.raw_data(), bytes.data.size());
  return bytes;
}

Tensor from_bytes(const TensorBytes& bytes) {
  return from_blob(bytes.data.data(), bytes.shape, bytes.dtype);
}

}  // namespace weft::io
