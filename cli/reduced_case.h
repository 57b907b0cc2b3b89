#pragma once
// Writing a reduction's result, shared by `weft reduce` and `weft fuzz --reduce`: the reduced
// case directory (graph.json, values.safetensors, verdict.json), repro.py, and the log of the
// steps (reduce.log for people, reduce.json for programs).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "weft/reduce/reducer.h"

namespace weft::cli {

// Writes the directory whole or not at all: into a temporary sibling, renamed to `dir` at the
// end. `dir` must not exist yet (weft::Error otherwise).
void write_reduced_case(const std::filesystem::path& dir, const reduce::ReduceResult& result);

// The reduced/ directory among a bucket's stored `cases` (under `bucket_dir`), if any: the
// reducer reduces the case that opened the bucket, which is not always its lowest index.
std::optional<std::filesystem::path> find_reduced_case(const std::filesystem::path& bucket_dir,
                                                       const std::vector<std::string>& cases);
// "20 → 1 nodes" from that reduction's reduce.json; "-" without one.
std::string reduction_text(const std::filesystem::path& bucket_dir,
                           const std::vector<std::string>& cases);

// "20 -> 1 nodes, 4312 -> 24 elements, 3.1 s, 41 oracle checks".
std::string reduction_summary(const reduce::ReduceResult& result);

}  // namespace weft::cli
