#include "weft/nn/checkpoint.h"

#include "weft/io/safetensors.h"
#include "weft/io/tensor_bytes.h"

namespace weft::nn {

void save(const StateDict& state, const std::filesystem::path& path,
          const std::map<std::string, std::string>& metadata) {
  io::SafetensorsFile file;
  file.metadata = metadata;
  for (const auto& [key, value] : state) {
    file.tensors.emplace_back(key, io::to_bytes(value));
  }
  io::write_safetensors(path, file);
}

Checkpoint load(const std::filesystem::path& path) {
  const io::SafetensorsFile file = io::read_safetensors(path);
  Checkpoint checkpoint;
  checkpoint.metadata = file.metadata;
  for (const auto& [key, bytes] : file.tensors) {
    checkpoint.state.insert(key, io::from_bytes(bytes));
  }
  return checkpoint;
}

}  // namespace weft::nn
