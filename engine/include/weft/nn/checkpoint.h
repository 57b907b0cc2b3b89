#pragma once
// Checkpoints: a state dict saved as safetensors, with PyTorch-identical dotted keys
// ("layer1.0.weight") and user metadata (labels, epoch, …) in __metadata__, so that Python's
// safetensors / torch can read what weft writes and the other way round.

#include <filesystem>
#include <map>
#include <string>

#include "weft/nn/module.h"

namespace weft::nn {

struct Checkpoint {
  StateDict state;
  std::map<std::string, std::string> metadata;
};

// Writes atomically (temp file + rename): a crash never leaves a partial checkpoint.
void save(const StateDict& state, const std::filesystem::path& path,
          const std::map<std::string, std::string>& metadata = {});
// Throws weft::FormatError naming the file and the tensor or field when the file is damaged.
Checkpoint load(const std::filesystem::path& path);

}  // namespace weft::nn
