#pragma once
// Whole-file reads and crash-safe writes: a reader (or a campaign killed mid-write) sees
// either the old file or the new one, never a torn mix.

#include <filesystem>
#include <string>
#include <string_view>

namespace weft::io {

// Writes `bytes` to a unique temporary file next to `path`, fsyncs it and renames it over
// `path`. On failure the temporary file is removed and weft::Error names the path and errno.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

// The whole file. Throws weft::Error("<path>: cannot open: <strerror>") and the like.
std::string read_file(const std::filesystem::path& path);

}  // namespace weft::io
