// The program forms on every path: one case that holds them all (non-contiguous inputs of each
// kind, Python scalars of each kind, channels_last, nn submodules), with and without gradients,
// must agree with the reference on LibTorch 1.13's C++ paths, the Python program and, where
// installed, PyTorch 2.x's; the emitted programs must show the forms as a user writes them.
// A second case computes in float16 and bfloat16, mixed with float32.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "case_helpers.h"
#include "support/default_suite.h"
#include "weft/ir/execute.h"
#include "weft/ir/graph.h"
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

struct FormsCase {
  ir::Graph graph;
  ir::TensorMap values;
};

// image [1, 2, 4, 4] channels_last -> conv2d (a submodule) -> * 0.1 -> 2 - y -> y ** 2
// -> + True -> contiguous(channels_last); rows [3, 4] transposed, a step-sliced [2, 4] and
// an expanded [3, 4] -> linear (a submodule) -> / 3 -> 2 ** y.
FormsCase forms_case(bool requires_grad) {
  FormsCase c;
  ir::Graph& g = c.graph;
  auto layout = [&](ir::ValueId id, ir::Shape strides, std::int64_t offset = 0) {
    g.mutable_values()[static_cast<std::size_t>(id)].strides = std::move(strides);
    g.mutable_values()[static_cast<std::size_t>(id)].storage_offset = offset;
  };
  const ir::ValueId image = g.add_input("image", f32({1, 2, 4, 4}));
  layout(image, ir::channels_last_strides({1, 2, 4, 4}));
  const ir::ValueId rows = g.add_input("rows", f32({3, 4}));
  layout(rows, {1, 3});
  const ir::ValueId stepped = g.add_input("stepped", f32({2, 4}));
  layout(stepped, {8, 2}, 1);
  const ir::ValueId repeated = g.add_input("repeated", f32({3, 4}));
  layout(repeated, {0, 1});
  const ir::ValueId weight = g.add_parameter("conv.weight", f32({3, 2, 3, 3}));
  const ir::ValueId bias = g.add_parameter("conv.bias", f32({3}));
  const ir::ValueId fc = g.add_parameter("fc.weight", f32({5, 4}));
  auto node = [&](OpKind op, std::vector<ir::ValueId> in, ir::Attributes a, ir::Shape shape) {
    return g.add_node(op, std::move(in), std::move(a), {f32(std::move(shape))})[0];
  };
  ir::ValueId y = node(OpKind::Conv2d, {image, weight, bias},
                       ir::Attributes().set("padding", ir::Shape{1}), {1, 3, 4, 4});
  y = node(OpKind::MulScalar, {y}, ir::Attributes().set("other", 0.1), {1, 3, 4, 4});
  y = node(OpKind::RsubScalar, {y}, ir::Attributes().set("other", std::int64_t{2}), {1, 3, 4, 4});
  y = node(OpKind::PowScalar, {y},
           ir::Attributes().set("other", std::int64_t{2}).set("spelling", "method"), {1, 3, 4, 4});
  y = node(OpKind::AddScalar, {y}, ir::Attributes().set("other", true).set("spelling", "function"),
           {1, 3, 4, 4});
  g.mark_output(node(OpKind::Contiguous, {y},
                     ir::Attributes().set("memory_format", "channels_last"), {1, 3, 4, 4}));
  ir::ValueId z = node(OpKind::Cat, {rows, stepped, repeated}, {}, {8, 4});
  z = node(OpKind::Linear, {z, fc}, {}, {8, 5});
  z = node(OpKind::DivScalar, {z}, ir::Attributes().set("other", std::int64_t{3}), {8, 5});
  g.mark_output(node(OpKind::RpowScalar, {z}, ir::Attributes().set("other", 2.0), {8, 5}));
  g.set_requires_grad(requires_grad);
  g.set_nn_modules(true);
  std::uint64_t seed = 1;
  for (ir::LeafKind kind : {ir::LeafKind::Input, ir::LeafKind::Parameter}) {
    for (ir::ValueId id : g.leaves(kind)) {
      c.values[g.value(id).name] = uniform(g.type(id).shape, seed++, -0.5, 0.5);
    }
  }
  c.values = ir::project_to_layouts(g, c.values);
  return c;
}

void expect_agreement(const std::vector<std::string>& paths, bool requires_grad,
                      double time_limit = 60) {
  const FormsCase c = forms_case(requires_grad);
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
    for (const CallResult& call : result.calls) {
      // A forward-only case computes no gradient on any path.
      if (!requires_grad) {
        EXPECT_TRUE(call.gradients.empty()) << result.backend;
      }
    }
    const bool differentiated =
        result.backend == "torch" || result.backend == "torchscript" || result.backend == "python";
    if (requires_grad && differentiated && !result.calls.empty()) {
      EXPECT_EQ(result.calls[0].gradients.count("repeated"), 1u) << result.backend;
    }
  }
}

TEST(ProgramForms, LibTorch113PathsAgreeWithGradients) {
  expect_agreement(
      {"torch", "torchscript", "torchscript-frozen", "torchscript-ofi", "torchscript-nnc"}, true);
}

TEST(ProgramForms, LibTorch113PathsAgreeForwardOnly) {
  expect_agreement({"torch", "torchscript", "torchscript-ofi", "torchscript-nnc"}, false);
}

TEST(ProgramForms, ThePythonProgramAgrees) {
  const std::string reason = make_backend("python")->unavailable_reason();
  if (!reason.empty()) GTEST_SKIP() << "python backend unavailable: " << reason;
  expect_agreement({"python"}, true);
  expect_agreement({"python"}, false);
}

TEST(ProgramForms, PyTorch2PathsAgree) {
  WEFT_SKIP_WHERE_THE_DEFAULT_SUITE_RAN_IT();
  const std::string reason = make_backend("torch2-eager")->unavailable_reason();
  if (!reason.empty()) GTEST_SKIP() << "PyTorch 2.x unavailable: " << reason;
  expect_agreement({"torch2-eager", "torch2-inductor", "torch2-export", "torch2-aoti-python"},
                   false, 300);
}

// x float16 [3, 4] -> linear with w float16 [5, 4] -> sigmoid -> * 2.5 -> to(bfloat16) -> + y
// bfloat16 [3, 5] -> softmax -> + z float32 (float32 out); sum of x over dim 1 (float16 out).
FormsCase half_case(bool requires_grad) {
  FormsCase c;
  ir::Graph& g = c.graph;
  auto type = [](Dtype dtype, ir::Shape shape) { return TensorType{dtype, std::move(shape)}; };
  const ir::ValueId x = g.add_input("x", type(Dtype::Float16, {3, 4}));
  const ir::ValueId y = g.add_input("y", type(Dtype::BFloat16, {3, 5}));
  const ir::ValueId z = g.add_input("z", type(Dtype::Float32, {3, 5}));
  const ir::ValueId w = g.add_parameter("w", type(Dtype::Float16, {5, 4}));
  auto node = [&](OpKind op, std::vector<ir::ValueId> in, ir::Attributes a, TensorType out) {
    return g.add_node(op, std::move(in), std::move(a), {std::move(out)})[0];
  };
  ir::ValueId v = node(OpKind::Linear, {x, w}, {}, type(Dtype::Float16, {3, 5}));
  v = node(OpKind::Sigmoid, {v}, {}, type(Dtype::Float16, {3, 5}));
  v = node(OpKind::MulScalar, {v}, ir::Attributes().set("other", 2.5),
           type(Dtype::Float16, {3, 5}));
  v = node(OpKind::Cast, {v}, ir::Attributes().set("dtype", Dtype::BFloat16),
           type(Dtype::BFloat16, {3, 5}));
  v = node(OpKind::Add, {v, y}, {}, type(Dtype::BFloat16, {3, 5}));
  v = node(OpKind::Softmax, {v}, ir::Attributes().set("dim", std::int64_t{1}),
           type(Dtype::BFloat16, {3, 5}));
  g.mark_output(node(OpKind::Add, {v, z}, {}, type(Dtype::Float32, {3, 5})));
  g.mark_output(
      node(OpKind::Sum, {x}, ir::Attributes().set("dim", ir::Shape{1}), type(Dtype::Float16, {3})));
  g.set_requires_grad(requires_grad);
  std::uint64_t seed = 7;
  for (ir::LeafKind kind : {ir::LeafKind::Input, ir::LeafKind::Parameter}) {
    for (ir::ValueId id : g.leaves(kind)) {
      c.values[g.value(id).name] = uniform(g.type(id).shape, seed++).to(g.type(id).dtype);
    }
  }
  return c;
}

// The half case agrees with the reference on every path that has the kernels; a LibTorch
// without them (1.13 has no float16 addmm on the CPU) refuses it as a capability gap.
void expect_half_agreement(const std::vector<std::string>& paths, bool requires_grad,
                           double time_limit = 60) {
  const FormsCase c = half_case(requires_grad);
  OracleOptions options;
  options.backends = {kReferenceBackend, kEngineBackend};
  options.backends.insert(options.backends.end(), paths.begin(), paths.end());
  options.worker = worker_options(time_limit);
  Oracle oracle(options);
  const CaseReport report = oracle.check(c.graph, c.values);
  EXPECT_FALSE(report.verdict.bug()) << verdict_to_json(report.verdict).dump(1);
  for (const BackendResult& result : report.results) {
    if (result.outcome == Outcome::Unavailable) continue;
    if (result.outcome != Outcome::Ok) {
      EXPECT_TRUE(is_capability_message(result.message))
          << result.backend << ": " << result.message;
      continue;
    }
    if (result.backend == kReferenceBackend) continue;  // float64 throughout
    ASSERT_FALSE(result.calls.empty()) << result.backend;
    ASSERT_EQ(result.calls[0].outputs.size(), 2u) << result.backend;
    EXPECT_EQ(result.calls[0].outputs[0].dtype(), Dtype::Float32) << result.backend;
    EXPECT_EQ(result.calls[0].outputs[1].dtype(), Dtype::Float16) << result.backend;
    if (requires_grad) {
      const auto w = result.calls[0].gradients.find("w");
      ASSERT_NE(w, result.calls[0].gradients.end()) << result.backend;
      EXPECT_EQ(w->second.dtype(), Dtype::Float16) << result.backend;
    }
  }
}

TEST(ProgramForms, HalfPrecisionOnLibTorch113Paths) {
  expect_half_agreement({"torch", "torchscript", "torchscript-nnc"}, true);
  expect_half_agreement({"torch", "torchscript", "torchscript-nnc"}, false);
}

TEST(ProgramForms, HalfPrecisionOnPyTorch2Paths) {
  WEFT_SKIP_WHERE_THE_DEFAULT_SUITE_RAN_IT();
  const std::string reason = make_backend("torch2-eager")->unavailable_reason();
  if (!reason.empty()) GTEST_SKIP() << "PyTorch 2.x unavailable: " << reason;
  expect_half_agreement({"torch2-eager", "torch2-inductor"}, true, 300);
  expect_half_agreement({"torch2-eager", "torch2-inductor", "torch2-export", "torch2-aoti-python"},
                        false, 300);
}

TEST(ProgramForms, TheEmittedProgramShowsHalfPrecision) {
  const FormsCase c = half_case(true);
  const std::string source = python_model_source(c.graph);
  EXPECT_NE(source.find(".to(torch.bfloat16)"), std::string::npos) << source;
  const EmittedForward script = emit_forward(c.graph, SourceDialect::TorchScript);
  std::string body;
  for (const std::string& line : script.lines) body += line + "\n";
  EXPECT_NE(body.find(".to(15)"), std::string::npos) << body;  // c10::ScalarType::BFloat16
  ExportOptions options;
  options.backend = "torch2-inductor";
  const std::string repro = export_python_script(c.graph, c.values, options);
  EXPECT_NE(repro.find("dtype=torch.float16"), std::string::npos);
  EXPECT_NE(repro.find("dtype=torch.bfloat16"), std::string::npos);
  EXPECT_NE(repro.find("eager = run(eager_model, None"), std::string::npos);
}

TEST(ProgramForms, TheEmittedProgramShowsEveryForm) {
  const FormsCase c = forms_case(false);
  const std::string source = python_model_source(c.graph);
  for (const char* expected :
       {"self.conv2d_0 = torch.nn.Conv2d(2, 3, 3, stride=1, padding=1, dilation=1, groups=1, "
        "bias=True)",
        "self.conv2d_0.weight = torch.nn.Parameter(params['conv.weight'], requires_grad=False)",
        "self.linear_7 = torch.nn.Linear(4, 5, bias=False)", "= self.conv2d_0(image)", "* 0.1",
        "= 2 - v", ".pow(2)", "torch.add(v", ", True)", "2.0 ** v", "/ 3",
        "memory_format=torch.channels_last"}) {
    EXPECT_NE(source.find(expected), std::string::npos) << expected << "\n" << source;
  }
  const EmittedForward script = emit_forward(c.graph, SourceDialect::TorchScript);
  std::string body;
  for (const std::string& line : script.lines) body += line + "\n";
  EXPECT_TRUE(script.init_lines.empty());  // TorchScript from C++ keeps the functional form
  EXPECT_NE(body.find("torch.add(v"), std::string::npos) << body;
  EXPECT_NE(body.find(", 1)"), std::string::npos) << body;  // True beside a float tensor
  ExportOptions options;
  options.backend = "torch";
  const std::string repro = export_python_script(c.graph, c.values, options);
  EXPECT_NE(repro.find("LAYOUTS = {'image': ([32, 1, 8, 2], 0), 'rows': ([1, 3], 0), "
                       "'stepped': ([8, 2], 1), 'repeated': ([0, 1], 0)}"),
            std::string::npos)
      << repro;
  EXPECT_NE(repro.find("REQUIRES_GRAD = False"), std::string::npos);
  EXPECT_NE(repro.find("GRADIENTS = False"), std::string::npos);
}

}  // namespace
}  // namespace weft::oracle
