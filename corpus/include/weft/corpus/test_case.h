#pragma once
// A test case on disk (DESIGN.md "Data at rest"): a directory holding graph.json (the IR) and
// values.safetensors (every input and parameter by name), both written atomically.
#include <filesystem>

#include "weft/ir/execute.h"
#include "weft/ir/graph.h"

namespace weft::corpus {

struct TestCase {
  ir::Graph graph;
  ir::TensorMap values;  // one per input and parameter, by name
};

inline constexpr const char* kGraphFile = "graph.json";
inline constexpr const char* kValuesFile = "values.safetensors";

// Creates `dir` when needed. Throws weft::Error when a value is missing or has another type
// than the graph declares (nothing is written then).
void save_case(const std::filesystem::path& dir, const TestCase& test_case);
// Throws weft::FormatError naming the file and the field (a leaf name) when the files are
// damaged or disagree with each other.
TestCase load_case(const std::filesystem::path& dir);

}  // namespace weft::corpus
