// libFuzzer target: arbitrary bytes → JSON → graph_from_json. Garbage must be refused with a
// weft::Error; nothing else may escape, and nothing may crash. A document that loads must
// also survive a round trip: written and read back, it gives the same text.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "weft/error.h"
#include "weft/ir/graph_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json document = nlohmann::json::parse(data, data + size, nullptr,
                                                        /*allow_exceptions=*/false);
  if (document.is_discarded()) return 0;
  weft::ir::Graph graph;
  try {
    graph = weft::ir::graph_from_json(document, "fuzz/graph.json");
  } catch (const weft::Error&) {
    return 0;
  }
  const std::string text = weft::ir::graph_to_json_text(graph);
  const weft::ir::Graph again =
      weft::ir::graph_from_json(nlohmann::json::parse(text), "fuzz/roundtrip.json");
  if (weft::ir::graph_to_json_text(again) != text) {
    std::fprintf(stderr, "round trip changed the document:\n%s", text.c_str());
    std::abort();
  }
  return 0;
}
