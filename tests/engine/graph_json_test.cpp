#include "weft/ir/graph_json.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "weft/error.h"
#include "weft/io/atomic_file.h"
#include "weft/ir/validate.h"

namespace weft::ir {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TensorType f32(Shape shape) {
  return TensorType{Dtype::Float32, std::move(shape)};
}

// A graph whose attributes cover every AttrType, optional inputs, multi-output and
// variadic nodes, and non-finite floats.
Graph every_attribute_graph() {
  Graph g;
  const ValueId x = g.add_input("x", f32({2, 3, 8, 8}));
  const ValueId idx = g.add_input("idx", TensorType{Dtype::Int64, {4}});
  const ValueId w = g.add_parameter("conv.weight", f32({4, 3, 3, 3}));
  const ValueId b = g.add_parameter("conv.bias", f32({4}));
  const ValueId emb = g.add_parameter("emb.weight", f32({10, 5}));
  const ValueId conv =
      g.add_node(OpKind::Conv2d, {x, w, b},
                 Attributes().set("stride", {1, 2}).set("padding", {1}).set("groups", 1),
                 {f32({2, 4, 8, 4})}, "conv")[0];
  const ValueId act = g.add_node(OpKind::Gelu, {conv}, Attributes().set("approximate", "tanh"),
                                 {f32({2, 4, 8, 4})}, "act")[0];
  const ValueId leaky = g.add_node(OpKind::LeakyRelu, {act},
                                   Attributes().set("negative_slope", 1.0), {f32({2, 4, 8, 4})})[0];
  const ValueId clamp =
      g.add_node(OpKind::Clamp, {leaky},
                 Attributes().set("min", -std::numeric_limits<double>::infinity()).set("max", 1e-5),
                 {f32({2, 4, 8, 4})})[0];
  const ValueId hard =
      g.add_node(OpKind::Hardtanh, {clamp}, Attributes().set("min_val", -2.5).set("max_val", 3.0),
                 {f32({2, 4, 8, 4})})[0];
  const ValueId sum =
      g.add_node(OpKind::Sum, {hard}, Attributes().set("dim", {-1, 2}).set("keepdim", true),
                 {f32({2, 4, 1, 1})}, "sum")[0];
  const auto max = g.add_node(OpKind::Max, {hard}, Attributes().set("dim", 0),
                              {f32({4, 8, 4}), TensorType{Dtype::Int64, {4, 8, 4}}}, "max");
  const ValueId cast = g.add_node(OpKind::Cast, {max[1]}, Attributes().set("dtype", Dtype::Float64),
                                  {TensorType{Dtype::Float64, {4, 8, 4}}})[0];
  const auto parts = g.add_node(OpKind::Split, {max[0]}, Attributes().set("split_size", {3, 5}),
                                {f32({4, 3, 4}), f32({4, 5, 4})});
  const ValueId joined = g.add_node(OpKind::Cat, {parts[1], parts[0]}, Attributes().set("dim", 1),
                                    {f32({4, 8, 4})})[0];
  const ValueId slice = g.add_node(
      OpKind::Slice, {joined}, Attributes().set("end", std::numeric_limits<std::int64_t>::max()),
      {f32({4, 8, 4})})[0];
  const ValueId looked = g.add_node(OpKind::Embedding, {idx, emb}, {}, {f32({4, 5})}, "lookup")[0];
  g.mutable_values()[static_cast<std::size_t>(looked)].name = "embedded";
  g.mark_output(sum);
  g.mark_output(cast);
  g.mark_output(slice);
  g.mark_output(looked);
  g.mark_output(sum);
  return g;
}

// A fresh directory per test, removed afterwards.
class GraphJson : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("weft_graph_json_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string read(const fs::path& path) { return io::read_file(path); }
  fs::path write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  fs::path dir_;
};

FormatError format_error(const json& document) {
  try {
    graph_from_json(document, "case/graph.json");
  } catch (const FormatError& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected weft::FormatError, got: " << e.what();
    return FormatError("", "", "");
  }
  ADD_FAILURE() << "the document was accepted: " << document.dump();
  return FormatError("", "", "");
}

TEST_F(GraphJson, RoundTripKeepsEveryAttributeType) {
  const Graph g = every_attribute_graph();
  ASSERT_NO_THROW(validate(g));
  const fs::path path = dir_ / "graph.json";
  save_graph(g, path);
  const Graph loaded = load_graph(path);
  EXPECT_EQ(loaded, g);

  // Compare variants, not just values: a float 1.0 must come back as a float.
  for (std::size_t i = 0; i < g.nodes().size(); ++i) {
    for (const auto& [name, value] : g.nodes()[i].attrs) {
      const AttrValue* back = loaded.nodes()[i].attrs.find(name);
      ASSERT_NE(back, nullptr) << name;
      EXPECT_EQ(attr_type(*back), attr_type(value)) << name;
    }
  }
  EXPECT_EQ(attr_type(*loaded.nodes()[2].attrs.find("negative_slope")), AttrType::Float);
  EXPECT_TRUE(std::isinf(loaded.nodes()[3].attrs.get_float("min")));
  EXPECT_EQ(loaded.nodes()[7].attrs.get_dtype("dtype"), Dtype::Float64);
  EXPECT_EQ(loaded.value(loaded.nodes().back().outputs[0]).name, "embedded");

  const std::string text = read(path);
  EXPECT_NE(text.find("\"negative_slope\": 1.0"), std::string::npos) << text;
  EXPECT_NE(text.find("\"min\": \"-inf\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"dtype\": \"float64\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"weft\": 1"), std::string::npos) << text;
}

TEST_F(GraphJson, ResavingIsByteIdentical) {
  const Graph g = every_attribute_graph();
  const fs::path first = dir_ / "first.json";
  const fs::path second = dir_ / "second.json";
  save_graph(g, first);
  save_graph(load_graph(first), second);
  EXPECT_EQ(read(first), read(second));
  EXPECT_EQ(graph_to_json_text(g), read(first));
  EXPECT_EQ(read(first).back(), '\n');
  // Only the final files are left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 2);
}

TEST_F(GraphJson, IdsAreRenumberedInFileOrder) {
  // A parameter added after a node gets a later id in memory, but the file lists parameters
  // before nodes; writing renumbers, so that reading gives back the file's ids.
  Graph g;
  const ValueId x = g.add_input("x", f32({2, 3}));
  const ValueId y = g.add_node(OpKind::Relu, {x}, {}, {f32({2, 3})})[0];
  const ValueId w = g.add_parameter("w", f32({2, 3}));
  g.mark_output(g.add_node(OpKind::Add, {y, w}, Attributes().set("alpha", 2.0), {f32({2, 3})})[0]);
  const json document = graph_to_json(g);
  EXPECT_EQ(document["parameters"][0]["id"], 1);
  EXPECT_EQ(document["nodes"][0]["outputs"][0]["id"], 2);
  EXPECT_EQ(document["nodes"][1]["inputs"], json::array({2, 1}));
  const Graph loaded = graph_from_json(document, "mem");
  EXPECT_EQ(graph_to_json(loaded), document);
  EXPECT_EQ(loaded.parameters(), (std::vector<ValueId>{1}));
}

TEST_F(GraphJson, HandWrittenFilesMayOmitOptionalFieldsAndWriteFloatsAsIntegers) {
  const fs::path path = write("graph.json", R"({
    "weft": 1,
    "inputs": [{"name": "x", "id": 10, "dtype": "float", "shape": [3]}],
    "parameters": [],
    "nodes": [{"op": "elu", "inputs": [10],
               "outputs": [{"id": 7, "dtype": "float32", "shape": [3]}],
               "attrs": {"alpha": 2}}],
    "outputs": [7]
  })");
  const Graph g = load_graph(path);
  EXPECT_EQ(g.nodes()[0].attrs.find("alpha")->index(), 1u);  // a double
  EXPECT_DOUBLE_EQ(g.nodes()[0].attrs.get_float("alpha"), 2.0);
  EXPECT_EQ(g.outputs(), (std::vector<ValueId>{1}));
  EXPECT_EQ(g.type(0).dtype, Dtype::Float32);
}

TEST_F(GraphJson, NewerSchemaIsRefused) {
  json document = graph_to_json(every_attribute_graph());
  document["weft"] = kGraphJsonVersion + 1;
  document["something_new"] = true;
  const FormatError e = format_error(document);
  EXPECT_EQ(e.field(), "/weft");
  EXPECT_NE(std::string(e.what()).find("schema version " + std::to_string(kGraphJsonVersion + 1) +
                                       " is newer"),
            std::string::npos)
      << e.what();
  document["weft"] = 0;
  EXPECT_EQ(format_error(document).field(), "/weft");
}

// Each corruption of a valid document is reported at the field it touched.
TEST_F(GraphJson, CorruptDocumentsNameTheField) {
  const json valid = graph_to_json(every_attribute_graph());
  struct Case {
    std::string pointer;  // what to change (empty: replace the document)
    json replacement;     // null with remove = true: delete the field
    bool remove;
    std::string field;    // where the error must point
    std::string problem;  // part of the message
  };
  const std::vector<Case> cases = {
      {"/nodes/0/attrs/stride", 1.5, false, "/nodes/0/attrs/stride",
       "expected an array of integers"},
      {"/nodes/0/attrs/stride/1", "2", false, "/nodes/0/attrs/stride/1", "expected an integer"},
      {"/nodes/0/attrs/strides", json::array({1}), false, "/nodes/0/attrs/strides",
       "unknown attribute 'strides' of conv2d"},
      {"/nodes/1/attrs/approximate", "exact", false, "/nodes/1/attrs/approximate",
       "expected one of"},
      {"/nodes/4/attrs/max_val", true, false, "/nodes/4/attrs/max_val", "expected a float"},
      {"/nodes/5/attrs/keepdim", 1, false, "/nodes/5/attrs/keepdim", "expected a bool"},
      {"/nodes/7/attrs/dtype", "float8", false, "/nodes/7/attrs/dtype", "unknown dtype 'float8'"},
      {"/nodes/6/attrs/dim", nullptr, true, "/nodes/6/attrs/dim", "missing required attribute"},
      {"/nodes/0/op", "conv3d", false, "/nodes/0/op", "unknown op 'conv3d'"},
      {"/nodes/0/op", nullptr, true, "/nodes/0/op", "missing"},
      {"/nodes/0/inputs", json::array({0}), false, "/nodes/0/inputs", "expected 2 or 3 inputs"},
      {"/nodes/1/inputs/0", 99, false, "/nodes/1/inputs/0", "value id 99 used by node 1 (gelu)"},
      {"/nodes/1/inputs/0", 6, false, "/nodes/1/inputs/0", "is not defined before"},
      {"/nodes/1/outputs/0/id", 0, false, "/nodes/1/outputs/0/id",
       "value id 0 is already defined at /inputs/0/id"},
      {"/nodes/1/outputs/0/shape/0", -2, false, "/nodes/1/outputs/0/shape/0", "negative size"},
      {"/nodes/1/outputs/0/dtype", nullptr, true, "/nodes/1/outputs/0/dtype", "missing"},
      {"/nodes/1/outputs/1", json{{"id", 500}, {"dtype", "float32"}, {"shape", {1}}}, false,
       "/nodes/1/outputs", "expected 1 output, got 2"},
      {"/nodes/1/name", 3, false, "/nodes/1/name", "expected a string"},
      {"/nodes/1/name", "a b", false, "/nodes/1/name", "contains ' '"},
      {"/nodes/1/extra", 1, false, "/nodes/1/extra", "unknown field"},
      {"/nodes/1", "relu", false, "/nodes/1", "expected a node object"},
      {"/nodes/1/attrs", json::array(), false, "/nodes/1/attrs", "expected an object"},
      {"/nodes", nullptr, true, "/nodes", "missing"},
      {"/nodes", json::object(), false, "/nodes", "expected an array"},
      {"/inputs/0/shape", "abc", false, "/inputs/0/shape", "expected an array of integers"},
      {"/inputs/0/shape/1", -3, false, "/inputs/0/shape/1", "negative size"},
      {"/inputs/0/shape/1", 18446744073709551615ull, false, "/inputs/0/shape/1", "out of range"},
      {"/inputs/0/shape/1", 3.0, false, "/inputs/0/shape/1", "expected an integer"},
      {"/inputs/0/dtype", "float8", false, "/inputs/0/dtype", "unknown dtype"},
      {"/inputs/0/name", "x-1", false, "/inputs/0/name", "contains '-'"},
      {"/inputs/0/id", nullptr, false, "/inputs/0/id", "expected an integer, got null"},
      {"/parameters/0/id", 0, false, "/parameters/0/id", "already defined at /inputs/0/id"},
      {"/parameters/0/name", "x", false, "/parameters/0/name", "already used by input 0"},
      {"/parameters/0", json::array(), false, "/parameters/0", "expected an object"},
      {"/outputs", json::array(), false, "/outputs", "graph has no outputs"},
      {"/outputs/0", 1000, false, "/outputs/0", "value id 1000 used by graph output"},
      {"/outputs/0", "3", false, "/outputs/0", "expected an integer"},
      {"/weft", "1", false, "/weft", "expected the schema version"},
      {"/weft", nullptr, true, "/weft", "missing"},
      {"/extra", 1, false, "/extra", "unknown field"},
      {"", json::array(), false, "", "expected a graph.json object"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pointer + " → " + c.field);
    json document = valid;
    if (c.pointer.empty()) {
      document = c.replacement;
    } else if (c.remove) {
      const json::json_pointer pointer(c.pointer);
      document.at(pointer.parent_pointer()).erase(pointer.back());
    } else {
      document[json::json_pointer(c.pointer)] = c.replacement;
    }
    const FormatError e = format_error(document);
    EXPECT_EQ(e.source(), "case/graph.json");
    EXPECT_EQ(e.field(), c.field) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.problem), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("case/graph.json: ", 0), 0u) << e.what();
  }
}

TEST_F(GraphJson, TruncatedFilesAreRejectedWithFormatError) {
  const std::string text = graph_to_json_text(every_attribute_graph());
  for (std::size_t length = 0; length < text.size(); length += 7) {
    const fs::path path = write("truncated.json", text.substr(0, length));
    try {
      load_graph(path);
      // A truncation can still be valid JSON only at the very end (the trailing newline).
      EXPECT_GE(length, text.size() - 1);
    } catch (const FormatError& e) {
      EXPECT_EQ(e.source(), path.string());
      EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(load_graph(dir_ / "does_not_exist.json"), Error);
}

TEST_F(GraphJson, SavingAnInvalidGraphIsAnError) {
  Graph g = every_attribute_graph();
  g.mutable_outputs().clear();
  EXPECT_THROW(save_graph(g, dir_ / "graph.json"), ValidationError);
  EXPECT_FALSE(fs::exists(dir_ / "graph.json"));
}

}  // namespace
}  // namespace weft::ir
