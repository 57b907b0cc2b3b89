// Arbitrary bytes into the safetensors parser: it must either return a file or raise
// weft::Error with a valid UTF-8 message; any other exception, crash or sanitizer report is a
// bug. What it accepts must serialize and parse back to the same contents.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "weft/error.h"
#include "weft/io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  weft::io::SafetensorsFile file;
  try {
    file = weft::io::parse_safetensors(bytes, "fuzz");
  } catch (const weft::Error& e) {
    // Messages end up in JSON reports (verdict.json), so they must be valid UTF-8.
    try {
      (void)nlohmann::json(e.what()).dump();
    } catch (const nlohmann::json::type_error&) {
      std::abort();
    }
    return 0;
  }
  // Accepted input: writing it back must succeed and read back the same tensors.
  const std::string written = weft::io::serialize_safetensors(file);
  const weft::io::SafetensorsFile again = weft::io::parse_safetensors(written, "fuzz-rewritten");
  if (again.metadata != file.metadata || again.tensors.size() != file.tensors.size()) std::abort();
  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    const auto& [name, tensor] = file.tensors[i];
    const auto& [name_again, tensor_again] = again.tensors[i];
    if (name != name_again || tensor.dtype != tensor_again.dtype ||
        tensor.shape != tensor_again.shape || tensor.data != tensor_again.data) {
      std::abort();
    }
  }
  return 0;
}
