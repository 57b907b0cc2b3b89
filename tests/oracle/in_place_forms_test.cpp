// In-place writes (weft/ir/inplace.h) on every path: one case with each kind of write (an
// in-place op as a method and as an augmented assignment, a write through a slice and through a
// select that the base's later readers see, a copy into a slot), with and without gradients,
// agrees with the reference on LibTorch 1.13's C++ paths, the Python program and, where
// installed, PyTorch 2.x's; generated in-place models raise no false alarm; the emitted programs
// write in place.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "case_helpers.h"
#include "support/default_suite.h"
#include "weft/gen/generator.h"
#include "weft/ir/execute.h"
#include "weft/ir/inplace.h"
#include "weft/ir/validate.h"
#include "weft/oracle/backend.h"
#include "weft/oracle/export.h"
#include "weft/oracle/oracle.h"
#include "weft/oracle/source.h"

namespace weft::oracle {
namespace {

using ir::OpKind;
using ir::TensorType;
using testing::uniform;
using testing::worker_options;

TensorType f32(ir::Shape shape) {
  return {Dtype::Float32, std::move(shape)};
}

struct WritesCase {
  ir::Graph graph;
  ir::TensorMap values;
};

// a = x @ w; a[1:3].relu_(); b = a + 1; b *= s; c = x - 0.5 x; c[0].sigmoid_();
// d = c * x; e = x - 0.25; f = x - y; F.relu(f, inplace=True); e.masked_fill_(m, -1.5);
// d[-1] = y; h = x + 0.5; h[rows] = put; outputs b, d, e, f and h.
WritesCase writes_case(bool requires_grad) {
  WritesCase c;
  ir::Graph& g = c.graph;
  const ir::ValueId x = g.add_input("x", f32({4, 3}));
  const ir::ValueId y = g.add_input("y", f32({3}));
  const ir::ValueId w = g.add_parameter("w", f32({3, 3}));
  const ir::ValueId s = g.add_parameter("s", f32({3}));
  auto node = [&](OpKind op, std::vector<ir::ValueId> in, ir::Attributes a, ir::Shape shape) {
    return g.add_node(op, std::move(in), std::move(a), {f32(std::move(shape))})[0];
  };
  const ir::Attributes in_place = ir::Attributes().set("inplace", true);
  ir::ValueId a = node(OpKind::Mm, {x, w}, {}, {4, 3});
  ir::Attributes rows = ir::Attributes().set("dim", std::int64_t{0}).set("start", std::int64_t{1});
  rows.set("end", std::int64_t{3});
  const ir::ValueId view = node(OpKind::Slice, {a}, rows, {2, 3});
  const ir::ValueId relu = node(OpKind::Relu, {view}, in_place, {2, 3});
  ir::Attributes back = rows;
  back.set("writeback", true);
  a = node(OpKind::SliceScatter, {a, relu}, back, {4, 3});
  ir::ValueId b = node(OpKind::AddScalar, {a}, ir::Attributes().set("other", 1.0), {4, 3});
  b = node(OpKind::Mul, {b, s}, in_place, {4, 3});  // node 5: b *= s
  ir::ValueId col = node(OpKind::Sub, {x, x}, ir::Attributes().set("alpha", 0.5), {4, 3});
  ir::Attributes first = ir::Attributes().set("dim", std::int64_t{0}).set("index", std::int64_t{0});
  const ir::ValueId picked = node(OpKind::Select, {col}, first, {3});
  const ir::ValueId sig = node(OpKind::Sigmoid, {picked}, in_place, {3});
  ir::Attributes first_back = first;
  first_back.set("writeback", true);
  col = node(OpKind::SelectScatter, {col, sig}, first_back, {4, 3});
  ir::Attributes last = ir::Attributes().set("dim", std::int64_t{0}).set("index", std::int64_t{-1});
  last.set("writeback", true);
  const ir::ValueId d = node(OpKind::Mul, {col, x}, {}, {4, 3});
  ir::ValueId e = node(OpKind::AddScalar, {x}, ir::Attributes().set("other", -0.25), {4, 3});
  const ir::ValueId m = g.add_input("m", {Dtype::Bool, {3}});
  ir::ValueId f = node(OpKind::Sub, {x, y}, {}, {4, 3});
  f = node(OpKind::Relu, {f}, in_place, {4, 3});  // node 13: F.relu(f, inplace=True)
  ir::Attributes fill = in_place;
  fill.set("value", -1.5);
  e = node(OpKind::MaskedFill, {e, m}, fill, {4, 3});  // node 14
  g.mark_output(b);
  g.mark_output(node(OpKind::SelectScatter, {d, y}, last, {4, 3}));
  ir::ValueId h = node(OpKind::AddScalar, {x}, ir::Attributes().set("other", 0.5), {4, 3});
  const ir::ValueId picked_rows = g.add_input("rows", {Dtype::Int64, {2}});
  const ir::ValueId put = g.add_parameter("put", f32({3}));
  h = node(OpKind::IndexPut, {h, picked_rows, put}, in_place, {4, 3});  // node 17: h[rows] = put
  g.mark_output(e);
  g.mark_output(f);
  g.mark_output(h);
  g.set_requires_grad(requires_grad);
  std::uint64_t seed = 3;
  for (ir::LeafKind kind : {ir::LeafKind::Input, ir::LeafKind::Parameter}) {
    for (ir::ValueId id : g.leaves(kind))
      c.values[g.value(id).name] = uniform(g.type(id).shape, seed++);
  }
  c.values["m"] = tensor(std::vector<bool>{true, false, true});
  c.values["rows"] = tensor(std::vector<std::int64_t>{3, 1});
  return c;
}

void expect_agreement(const std::vector<std::string>& paths, bool requires_grad,
                      double time_limit = 60) {
  const WritesCase c = writes_case(requires_grad);
  OracleOptions options;
  options.backends = {kReferenceBackend, kEngineBackend};
  options.backends.insert(options.backends.end(), paths.begin(), paths.end());
  options.worker = worker_options(time_limit);
  Oracle oracle(options);
  const CaseReport report = oracle.check(c.graph, c.values);
  EXPECT_FALSE(report.verdict.bug()) << verdict_to_json(report.verdict).dump(1);
  for (const BackendResult& result : report.results) {
    if (result.outcome == Outcome::Unavailable) continue;
    EXPECT_EQ(result.outcome, Outcome::Ok) << result.backend << ": " << result.message;
  }
}

TEST(InPlaceForms, TheCaseIsValidAndRunsTheSameBothWays) {
  const WritesCase c = writes_case(true);
  ASSERT_NO_THROW(ir::validate(c.graph));
  EXPECT_EQ(ir::count_in_place(c.graph), 6u);
  EXPECT_TRUE(ir::writes_into_slot(c.graph, c.graph.nodes()[15]));
  ir::ExecutionOptions written;
  written.as_written = true;
  const auto cotangents = ir::random_cotangents(c.graph, 1);
  const auto a = ir::execute_with_gradients(c.graph, c.values, cotangents, written);
  const auto b = ir::execute_with_gradients(c.graph, c.values, cotangents, {});
  for (std::size_t k = 0; k < 5; ++k) {
    EXPECT_EQ(a.forward.outputs[k].to_vector<float>(), b.forward.outputs[k].to_vector<float>());
  }
  for (const auto& [name, g] : b.gradients) {
    EXPECT_EQ(a.gradients.at(name).to_vector<float>(), g.to_vector<float>()) << name;
  }
}

TEST(InPlaceForms, LibTorch113PathsAgree) {
  expect_agreement({"torch", "torchscript", "torchscript-nnc"}, true);
  expect_agreement({"torch", "torchscript", "torchscript-nnc"}, false);
}

TEST(InPlaceForms, ThePythonProgramAgrees) {
  const std::string reason = make_backend("python")->unavailable_reason();
  if (!reason.empty()) GTEST_SKIP() << "python backend unavailable: " << reason;
  expect_agreement({"python"}, true);
}

TEST(InPlaceForms, PyTorch2PathsAgree) {
  WEFT_SKIP_WHERE_THE_DEFAULT_SUITE_RAN_IT();
  const std::string reason = make_backend("torch2-eager")->unavailable_reason();
  if (!reason.empty()) GTEST_SKIP() << "PyTorch 2.x unavailable: " << reason;
  expect_agreement({"torch2-eager", "torch2-inductor", "torch2-aot-eager"}, true, 300);
  expect_agreement({"torch2-eager", "torch2-inductor", "torch2-export", "torch2-aoti-python"},
                   false, 300);
}

TEST(InPlaceForms, TheEmittedProgramsWriteInPlace) {
  const WritesCase c = writes_case(true);
  const std::string source = python_model_source(c.graph);
  for (const char* expected :
       {" *= self.s", ".relu_()", "holds the write through its slice", ".sigmoid_()", "[-1] = y",
        "= torch.mm(x, self.w)", "v15.masked_fill_(m, -1.5)", "F.relu(v17, inplace=True)"}) {
    EXPECT_NE(source.find(expected), std::string::npos) << expected << "\n" << source;
  }
  const EmittedForward script = emit_forward(c.graph, SourceDialect::TorchScript);
  std::string body;
  for (const std::string& line : script.lines) body += line + "\n";
  EXPECT_NE(body.find("torch.select(v"), std::string::npos) << body;
  EXPECT_NE(body.find(".copy_(y)"), std::string::npos) << body;
  EXPECT_NE(body.find("torch.relu_(v17)"), std::string::npos) << body;
}

// Generated models with writes, judged on LibTorch 1.13's eager path: no false alarm. (The
// compilers' own bugs, TorchScript's NaN gradient of a std with zero deviation among them, are
// for campaigns to find; the hand-made case above covers their in-place code.)
TEST(InPlaceForms, GeneratedModelsRaiseNoFalseAlarm) {
  gen::Generator generator;
  OracleOptions options;
  options.backends = {kReferenceBackend, kEngineBackend, "torch"};
  options.worker = worker_options(60);
  Oracle oracle(options);
  int judged = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    gen::CaseOptions generate;
    generate.generator.seed = seed;
    generate.generator.nodes = 8;
    // LibTorch 1.13's own known bugs are findings, not false alarms: trace's backward past the
    // diagonal of a tall matrix (corpus bug-eager-trace-tall-matrix-backward; seed 5 drew one
    // once three more ops changed the draws) and baddbmm's NaN from its uninitialized result
    // (pytorch/pytorch#80588). JudgeNoFalseAlarms knows them; here they stay out of the draw.
    generate.generator.exclude = {ir::OpKind::Trace, ir::OpKind::Baddbmm};
    generate.in_place_rate = 1;
    const gen::GeneratedCase c = gen::generate_case(generator, generate);
    if (ir::count_in_place(c.graph) == 0) continue;
    ++judged;
    const CaseReport report = oracle.check(c.graph, c.values.values);
    EXPECT_FALSE(report.verdict.bug()) << "seed " << seed << "\n"
                                       << verdict_to_json(report.verdict).dump(1);
  }
  std::printf("[ IN-PLACE ] %d generated models with writes judged\n", judged);
  EXPECT_GT(judged, 15);
}

}  // namespace
}  // namespace weft::oracle
