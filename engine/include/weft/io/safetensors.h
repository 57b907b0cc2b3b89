#pragma once
// Reading and writing safetensors files (https://github.com/huggingface/safetensors), the
// format of test-case values and training checkpoints, so that Python and PyTorch read them.
//
// Layout: an 8-byte little-endian header length N; N bytes of JSON mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} plus an optional "__metadata__" object of
// strings; then the data buffer, which the tensors cover exactly, without holes or overlaps.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weft/dtype.h"

namespace weft::io {

// One tensor as stored: raw little-endian, C-contiguous bytes (data.size() == numel * itemsize).
struct TensorBytes {
  Dtype dtype = Dtype::Float32;
  std::vector<std::int64_t> shape;
  std::string data;
};

struct SafetensorsFile {
  std::map<std::string, std::string> metadata;
  // In file order (sorted by data offset) after parsing; written in this order.
  std::vector<std::pair<std::string, TensorBytes>> tensors;

  // The tensor called `name`, or nullptr.
  const TensorBytes* find(std::string_view name) const;
};

// The largest header accepted or written, as in the reference implementation.
inline constexpr std::uint64_t kMaxSafetensorsHeaderSize = 100'000'000;

// Parses a whole file held in memory. Any malformed input raises weft::FormatError naming
// `source_name`, the field (a tensor name, "__metadata__" or "header") and the problem.
SafetensorsFile parse_safetensors(std::string_view bytes, const std::string& source_name);
SafetensorsFile read_safetensors(const std::filesystem::path& path);

// The file's bytes: tensors laid out in the given order, the JSON header padded with spaces to
// a multiple of 8 bytes. Raises weft::FormatError when the contents cannot be stored (a data
// size that does not match dtype and shape, a duplicate or reserved name, invalid UTF-8).
std::string serialize_safetensors(const SafetensorsFile& file);
// Serializes and writes atomically (see write_file_atomically).
void write_safetensors(const std::filesystem::path& path, const SafetensorsFile& file);

}  // namespace weft::io
