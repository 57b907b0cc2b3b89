#pragma once
// Writing a reduction's result, shared by `weft reduce` and `weft fuzz --reduce`: the reduced
// case directory (graph.json, values.safetensors, verdict.json), repro.py, and the log of the
// steps (reduce.log for people, reduce.json for programs).
#include <filesystem>
#include <string>

#include "weft/reduce/reducer.h"

namespace weft::cli {

// Writes the directory whole or not at all: into a temporary sibling, renamed to `dir` at the
// end. `dir` must not exist yet (weft::Error otherwise).
void write_reduced_case(const std::filesystem::path& dir, const reduce::ReduceResult& result);

// "20 -> 1 nodes, 4312 -> 24 elements, 3.1 s, 41 oracle checks".
std::string reduction_summary(const reduce::ReduceResult& result);

}  // namespace weft::cli
