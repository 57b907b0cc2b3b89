// Dynamic shapes on every path: a case with two later input shape sets (one input transposed)
// is prepared once per path and called at each set; every set must agree with the reference at
// its own shapes, a bug that shows only after the shapes change is reported as a dynamic-shape
// finding of its own, and the repro script calls the path at every set.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "case_helpers.h"
#include "support/default_suite.h"
#include "weft/corpus/test_case.h"
#include "weft/error.h"
#include "weft/ir/execute.h"
#include "weft/ir/graph.h"
#include "weft/ir/shape_sets.h"
#include "weft/oracle/backend.h"
#include "weft/oracle/export.h"
#include "weft/oracle/oracle.h"
#include "weft/oracle/torch_info.h"

namespace weft::oracle {
namespace {

using ir::OpKind;

using testing::uniform;
using testing::worker_options;

struct DynamicCase {
  ir::Graph graph;
  ir::TensorMap values;
};

// x [2, 4] (transposed in memory; later [3, 4] and [5, 4]) -> linear(w [3, 4]) -> relu
// -> * 0.5 (an output) and its sum over dim 0 (an output of the same shape at every set).
DynamicCase dynamic_case(bool requires_grad) {
  DynamicCase c;
  ir::Graph& g = c.graph;
  const ir::ValueId x = g.add_input("x", {Dtype::Float32, {2, 4}});
  ir::Value& input = g.mutable_values()[static_cast<std::size_t>(x)];
  input.strides = {1, 2};
  input.shape_sets = {{3, 4}, {5, 4}};
  const ir::ValueId w = g.add_parameter("w", {Dtype::Float32, {3, 4}});
  auto node = [&](OpKind op, std::vector<ir::ValueId> in, ir::Attributes a, ir::Shape shape) {
    return g.add_node(op, std::move(in), std::move(a), {{Dtype::Float32, std::move(shape)}})[0];
  };
  ir::ValueId y = node(OpKind::Linear, {x, w}, {}, {2, 3});
  y = node(OpKind::Relu, {y}, {}, {2, 3});
  y = node(OpKind::MulScalar, {y}, ir::Attributes().set("other", 0.5), {2, 3});
  g.mark_output(y);
  g.mark_output(node(OpKind::Sum, {y}, ir::Attributes().set("dim", ir::Shape{0}), {3}));
  g.set_requires_grad(requires_grad);
  c.values["x"] = uniform({2, 4}, 1);
  c.values["x@1"] = uniform({3, 4}, 2);
  c.values["x@2"] = uniform({5, 4}, 3);
  c.values["w"] = uniform({3, 4}, 4);
  return c;
}

CaseReport check(const std::vector<std::string>& paths, bool requires_grad,
                 double time_limit = 60) {
  const DynamicCase c = dynamic_case(requires_grad);
  OracleOptions options;
  options.backends = {kReferenceBackend, kEngineBackend};
  options.backends.insert(options.backends.end(), paths.begin(), paths.end());
  options.worker = worker_options(time_limit);
  Oracle oracle(options);
  return oracle.check(c.graph, c.values);
}

// Every path ran every shape set and agrees at each.
void expect_agreement(const std::vector<std::string>& paths, bool requires_grad,
                      double time_limit = 60) {
  const CaseReport report = check(paths, requires_grad, time_limit);
  EXPECT_FALSE(report.verdict.bug()) << verdict_to_json(report.verdict).dump(1);
  for (const BackendResult& result : report.results) {
    if (result.outcome == Outcome::Unavailable) continue;
    ASSERT_EQ(result.outcome, Outcome::Ok) << result.backend << ": " << result.message;
    std::vector<int> sets;
    for (const CallResult& call : result.calls) {
      if (call.shape_set > 0) sets.push_back(call.shape_set);
    }
    EXPECT_EQ(sets, (std::vector<int>{1, 2})) << result.backend;
    for (const CallResult& call : result.calls) {
      if (call.shape_set == 0 || call.outputs.empty()) continue;
      const std::int64_t rows = call.shape_set == 1 ? 3 : 5;
      EXPECT_EQ(call.outputs[0].sizes(), (ir::Shape{rows, 3})) << result.backend;
      EXPECT_EQ(call.outputs[1].sizes(), (ir::Shape{3})) << result.backend;
      if (requires_grad && !call.gradients.empty()) {
        EXPECT_EQ(call.gradients.at("x").sizes(), (ir::Shape{rows, 4})) << result.backend;
      }
    }
  }
}

TEST(DynamicShapes, TheCaseAtEachShapeSet) {
  const DynamicCase c = dynamic_case(true);
  const ir::ShapeSetCase second = ir::at_shape_set(c.graph, c.values, 2);
  EXPECT_EQ(second.graph.shape_set_count(), 1u);
  EXPECT_EQ(second.graph.type(second.graph.inputs()[0]).shape, (ir::Shape{5, 4}));
  EXPECT_EQ(second.graph.value(second.graph.inputs()[0]).strides, (ir::Shape{1, 5}));
  EXPECT_EQ(second.graph.type(second.graph.outputs()[0]).shape, (ir::Shape{5, 3}));
  EXPECT_EQ(second.values.at("x").sizes(), (ir::Shape{5, 4}));
  EXPECT_EQ(second.values.count("x@2"), 0u);
  ir::TensorMap missing = c.values;
  missing.erase("x@1");
  try {
    ir::at_shape_set(c.graph, missing, 1);
    ADD_FAILURE() << "a missing value of a later set must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shape set 1"), std::string::npos) << e.what();
  }
}

TEST(DynamicShapes, LibTorch113PathsAgreeAtEveryShapeSet) {
  expect_agreement(
      {"torch", "torchscript", "torchscript-frozen", "torchscript-ofi", "torchscript-nnc"}, true);
  expect_agreement({"torch", "torchscript", "torchscript-nnc"}, false);
}

TEST(DynamicShapes, ThePythonProgramAgreesAtEveryShapeSet) {
  const std::string reason = make_backend("python")->unavailable_reason();
  if (!reason.empty()) GTEST_SKIP() << "python backend unavailable: " << reason;
  expect_agreement({"python"}, true);
}

TEST(DynamicShapes, PyTorch2PathsAgreeAtEveryShapeSet) {
  WEFT_SKIP_WHERE_THE_DEFAULT_SUITE_RAN_IT();
  const std::string reason = make_backend("torch2-eager")->unavailable_reason();
  if (!reason.empty()) GTEST_SKIP() << "PyTorch 2.x unavailable: " << reason;
  // Inductor recompiles at the second set and marks the changed dim dynamic; the third set runs
  // that dynamic kernel. The export marks the dim that changes Dim.AUTO and keeps it dynamic.
  std::vector<std::string> paths = {"torch2-eager", "torch2-inductor", "torch2-dynamic",
                                    "torch2-export", "torch2-aoti-python"};
  // The C++ loader of the same package, in the build against LibTorch 2.x.
  if (torch_major() == 2) paths.emplace_back("torch2-aoti");
  expect_agreement(paths, true, 300);
}

TEST(DynamicShapes, ABugAfterTheShapesChangeIsADynamicShapeFinding) {
  const CaseReport report = check({"fault:recompile@relu", "fault:perturb-large@relu"}, true);
  ASSERT_EQ(report.verdict.findings.size(), 2u) << verdict_to_json(report.verdict).dump(1);
  for (const Finding& finding : report.verdict.findings) {
    EXPECT_EQ(finding.symptom, Symptom::WrongOutput);
    EXPECT_EQ(finding.op, "relu") << finding.backend;
    if (finding.backend == "fault:recompile@relu") {
      // Right at the first set, wrong once the shapes change: a bucket of its own.
      ASSERT_TRUE(finding.shape_set.has_value());
      EXPECT_EQ(*finding.shape_set, 1);
      EXPECT_NE(finding.message.find("shape set 1 (x [3, 4])"), std::string::npos)
          << finding.message;
      EXPECT_EQ(finding.signature, "wrong-output|fault:recompile@relu|relu||dynamic shapes");
    } else {
      // Wrong at every set: reported once, at the first.
      EXPECT_FALSE(finding.shape_set.has_value()) << finding.message;
      EXPECT_EQ(finding.signature, "wrong-output|fault:perturb-large@relu|relu|");
    }
  }
  const nlohmann::json json = verdict_to_json(report.verdict);
  const Verdict back = verdict_from_json(json, "test");
  ASSERT_EQ(back.findings.size(), 2u);
  EXPECT_EQ(back.findings[0].shape_set, report.verdict.findings[0].shape_set);
  EXPECT_EQ(back.findings[1].shape_set, report.verdict.findings[1].shape_set);
}

TEST(DynamicShapes, TheReproCallsThePathAtEveryShapeSet) {
  const DynamicCase c = dynamic_case(true);
  ExportOptions options;
  options.backend = "fault:recompile@relu";
  const std::string repro = export_python_script(c.graph, c.values, options);
  EXPECT_NE(repro.find("SHAPE_SETS = 3"), std::string::npos);
  EXPECT_NE(repro.find("SHAPE_SET_LAYOUTS = [{'x': ([1, 3], 0)}, {'x': ([1, 5], 0)}]"),
            std::string::npos)
      << repro;
  options.backend = "torch2-export";
  const std::string exported = export_python_script(c.graph, c.values, options);
  EXPECT_NE(exported.find("INPUT_SHAPE_SETS = {'x': [[3,4],[5,4]]}"), std::string::npos)
      << exported;
  EXPECT_NE(exported.find("def export_at_shape_sets("), std::string::npos);
  if (std::system("/usr/bin/python3 -c 'import torch' > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "Debian's python3 has no torch to run the repro with";
  }
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("weft_dynamic_repro_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto run = [&](const std::string& backend) {
    ExportOptions o;
    o.backend = backend;
    std::ofstream(dir / "repro.py") << export_python_script(c.graph, c.values, o);
    const std::string command =
        "/usr/bin/python3 " + (dir / "repro.py").string() + " > " + (dir / "out.txt").string();
    return WEXITSTATUS(std::system(command.c_str()));
  };
  EXPECT_EQ(run("fault:recompile@relu"), 1);  // the bug shows at shape set 1
  std::ifstream out(dir / "out.txt");
  const std::string text((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("shape set 1, call 0"), std::string::npos) << text;
  EXPECT_EQ(run("torchscript"), 0);  // scripted once, called at every set
  std::filesystem::remove_all(dir);
}

TEST(DynamicShapes, ACaseDirectoryKeepsEveryShapeSetsValues) {
  const DynamicCase c = dynamic_case(true);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("weft_dynamic_case_" + std::to_string(::getpid()));
  corpus::save_case(dir / "dynamic", {c.graph, c.values});
  const corpus::TestCase back = corpus::load_case(dir / "dynamic");
  EXPECT_EQ(back.graph, c.graph);
  ASSERT_EQ(back.values.size(), 4u);
  EXPECT_EQ(back.values.at("x@2").sizes(), (ir::Shape{5, 4}));
  // Nothing is lost silently: a missing later set's value is refused on both sides.
  ir::TensorMap missing = c.values;
  missing.erase("x@2");
  try {
    corpus::save_case(dir / "missing", {c.graph, missing});
    ADD_FAILURE() << "saved a case without x@2";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("value of 'x@2' missing"), std::string::npos) << e.what();
  }
  ir::Graph static_graph = c.graph;
  static_graph.clear_shape_sets();
  corpus::save_case(dir / "static", {static_graph, ir::case_values(static_graph, c.values)});
  std::filesystem::copy_file(dir / "static" / "values.safetensors",
                             dir / "dynamic" / "values.safetensors",
                             std::filesystem::copy_options::overwrite_existing);
  try {
    (void)corpus::load_case(dir / "dynamic");
    ADD_FAILURE() << "loaded a dynamic case without its later values";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x@1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("values.safetensors"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace weft::oracle
