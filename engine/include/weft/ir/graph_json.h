#pragma once
// graph.json: the human-readable, versioned file form of a Graph.
//
//   {"weft": 1,
//    "inputs":     [{"name": "x", "id": 0, "dtype": "float32", "shape": [2, 3]}],
//    "parameters": [{"name": "fc.weight", "id": 1, "dtype": "float32", "shape": [4, 3]}],
//    "nodes": [{"op": "linear", "name": "fc", "inputs": [0, 1],
//               "outputs": [{"id": 2, "dtype": "float32", "shape": [2, 4]}],
//               "attrs": {}}],
//    "outputs": [2]}
//
// Program forms (version 2): `"requires_grad": false` (forward-only), `"nn_modules": true`,
// and per input `"strides": [1, 3], "storage_offset": 0` (a non-contiguous layout).
//
// Ids are renumbered on writing: 0, 1, 2, … in the order values appear in the file (inputs,
// parameters, then node outputs); reading assigns ids in the same order. So a graph read from
// a file has the file's ids, and writing it again gives the same bytes.
// Attributes are written by type: ints as JSON integers, floats as JSON numbers with a
// decimal point or exponent (non-finite ones as the strings "inf", "-inf", "nan"), bools,
// strings, int lists as arrays, dtypes as names ("float32"). Reading decodes each attribute
// by the type its op's schema declares.

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "weft/ir/graph.h"

namespace weft::ir {

// The newest graph.json schema version this build reads and the one it writes.
// Version 2 added the program forms: "requires_grad" and "nn_modules" at the top, "strides" and
// "storage_offset" on inputs. A graph without them is still written as version 1.
inline constexpr int kGraphJsonVersion = 2;

// Only valid graphs are written: throws ValidationError (weft/ir/validate.h) otherwise.
nlohmann::json graph_to_json(const Graph& graph);

// Throws weft::FormatError naming `source` and the JSON pointer of the field at fault
// ("/nodes/3/attrs/stride") for any document that is not a valid graph. The result is
// validated (weft/ir/validate.h).
Graph graph_from_json(const nlohmann::json& document, const std::string& source);

// Writes graph_to_json pretty-printed, atomically (temporary file + rename). The same graph
// always gives the same bytes.
void save_graph(const Graph& graph, const std::filesystem::path& path);
// The graph.json text save_graph writes.
std::string graph_to_json_text(const Graph& graph);

// Reads and validates. A file that cannot be read is a weft::Error naming it; a file whose
// content is not a valid graph is a weft::FormatError naming it and the field.
Graph load_graph(const std::filesystem::path& path);

}  // namespace weft::ir
