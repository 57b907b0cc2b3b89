// Test-case directories: the graph and its leaf values, checked against each other both when
// writing and when reading.
#include "weft/corpus/test_case.h"

#include "weft/error.h"
#include "weft/io/safetensors.h"
#include "weft/io/tensor_bytes.h"
#include "weft/ir/graph_json.h"

namespace weft::corpus {

namespace {

// The problem with `value` as the leaf `leaf`, or "" when it fits.
std::string mismatch(const ir::Value& leaf, const Tensor* value) {
  if (value == nullptr || !value->defined()) return "missing";
  if (value->sizes() != leaf.type.shape || value->dtype() != leaf.type.dtype) {
    return "is " + std::string(dtype_name(value->dtype())) + shape_str(value->sizes()) +
           ", but the graph declares " + ir::to_string(leaf.type);
  }
  return "";
}

// Every stored value of the case: (key, the leaf as declared at that key's shape set). A
// dynamic-shape input's later sets are "x@1", "x@2", ... at their own shapes.
template <typename F>
void for_each_leaf(const ir::Graph& graph, F f) {
  for (ir::LeafKind kind : {ir::LeafKind::Input, ir::LeafKind::Parameter}) {
    for (ir::ValueId id : graph.leaves(kind)) {
      const ir::Value& leaf = graph.value(id);
      f(leaf.name, leaf);
      for (std::size_t k = 0; k < leaf.shape_sets.size(); ++k) {
        ir::Value at_set = leaf;
        at_set.type.shape = leaf.shape_sets[k];
        f(ir::shape_set_key(leaf.name, k + 1), at_set);
      }
    }
  }
}

}  // namespace

void save_case(const std::filesystem::path& dir, const TestCase& test_case) {
  io::SafetensorsFile file;
  for_each_leaf(test_case.graph, [&](const std::string& key, const ir::Value& leaf) {
    const auto found = test_case.values.find(key);
    const Tensor* value = found == test_case.values.end() ? nullptr : &found->second;
    const std::string problem = mismatch(leaf, value);
    if (!problem.empty()) throw Error("save_case: value of '" + key + "' " + problem);
    file.tensors.emplace_back(key, io::to_bytes(*value));
  });
  std::filesystem::create_directories(dir);
  io::write_safetensors(dir / kValuesFile, file);
  ir::save_graph(test_case.graph, dir / kGraphFile);
}

TestCase load_case(const std::filesystem::path& dir) {
  TestCase test_case;
  test_case.graph = ir::load_graph(dir / kGraphFile);
  const std::filesystem::path values_path = dir / kValuesFile;
  const io::SafetensorsFile file = io::read_safetensors(values_path);
  for (const auto& [name, bytes] : file.tensors) {
    test_case.values.emplace(name, io::from_bytes(bytes));
  }
  for_each_leaf(test_case.graph, [&](const std::string& key, const ir::Value& leaf) {
    const auto found = test_case.values.find(key);
    const std::string problem =
        mismatch(leaf, found == test_case.values.end() ? nullptr : &found->second);
    if (!problem.empty()) throw FormatError(values_path.string(), key, problem);
  });
  return test_case;
}

}  // namespace weft::corpus
