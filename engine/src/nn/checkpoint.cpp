#include "weft/nn/checkpoint.h"

#include <cstring>

#include "weft/io/safetensors.h"

namespace weft::nn {

void save(const StateDict& state, const std::filesystem::path& path,
          const std::map<std::string, std::string>& metadata) {
  io::SafetensorsFile file;
  file.metadata = metadata;
  for (const auto& [key, value] : state) {
    const Tensor data = value.detach().contiguous();
    io::TensorBytes bytes{data.dtype(), data.sizes(), std::string()};
    bytes.data.resize(static_cast<std::size_t>(data.numel()) * itemsize(data.dtype()));
    if (!bytes.data.empty()) std::memcpy(bytes.data.data(), data.raw_data(), bytes.data.size());
    file.tensors.emplace_back(key, std::move(bytes));
  }
  io::write_safetensors(path, file);
}

Checkpoint load(const std::filesystem::path& path) {
  const io::SafetensorsFile file = io::read_safetensors(path);
  Checkpoint checkpoint;
  checkpoint.metadata = file.metadata;
  for (const auto& [key, bytes] : file.tensors) {
    checkpoint.state.insert(key, from_blob(bytes.data.data(), bytes.shape, bytes.dtype));
  }
  return checkpoint;
}

}  // namespace weft::nn
