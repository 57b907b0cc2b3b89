// The oracle's judge on real executions: the float64 engine (reference), the float32 engine
// and LibTorch eager on op sample cases and generated models give no finding; perturbed
// results give exactly the expected symptom on the expected path; ties, signatures and the
// verdict's JSON form.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "support/op_cases.h"
#include "weft/error.h"
#include "weft/gen/generator.h"
#include "weft/ir/execute.h"
#include "weft/ops.h"
#include "weft/oracle/judge.h"
#include "weft/oracle/oracle.h"
#include "weft/oracle/reference_check.h"
#include "weft/oracle/torch_eager.h"
#include "weft/oracle/torch_info.h"

namespace weft::oracle {
namespace {

using ir::Graph;
using ir::OpKind;
using ir::TensorMap;

constexpr int kCalls = 3;

BackendResult run_engine(const Graph& graph, const TensorMap& values,
                         const std::vector<Tensor>& cotangents, bool float64) {
  BackendResult result;
  result.backend = float64 ? kReferenceBackend : kEngineBackend;
  ir::ExecutionOptions options;
  if (float64) options.floating_dtype = Dtype::Float64;
  for (int c = 0; c < kCalls; ++c) {
    try {
      ir::GradientExecution run = ir::execute_with_gradients(graph, values, cotangents, options);
      result.calls.push_back({run.forward.outputs, run.gradients});
    } catch (const std::exception& e) {
      result.outcome = Outcome::Exception;
      result.message = e.what();
      result.phase = "call " + std::to_string(c);
      break;
    }
  }
  return result;
}

BackendResult run_torch(const Graph& graph, const TensorMap& values,
                        const std::vector<Tensor>& cotangents) {
  BackendResult result;
  result.backend = "torch";
  for (int c = 0; c < kCalls; ++c) {
    try {
      TorchExecution run = run_torch_eager(graph, values, cotangents);
      result.calls.push_back({run.outputs, run.gradients});
    } catch (const std::exception& e) {
      result.outcome = Outcome::Exception;
      result.message = e.what();
      result.phase = "call " + std::to_string(c);
      break;
    }
  }
  return result;
}

// Reference, float32 engine and torch on one case, in that order.
std::vector<BackendResult> run_all(const Graph& graph, const TensorMap& values,
                                   std::uint64_t seed) {
  const std::vector<Tensor> cotangents = ir::random_cotangents(graph, seed);
  return {run_engine(graph, values, cotangents, true), run_engine(graph, values, cotangents, false),
          run_torch(graph, values, cotangents)};
}

// The three paths judged as the oracle judges them: with the tie rule and the rounding model.
Verdict judge_case(const Graph& graph, const TensorMap& values, std::uint64_t seed) {
  const std::vector<Tensor> cotangents = ir::random_cotangents(graph, seed);
  return judge(graph, run_all(graph, values, seed), with_case_rules({}, graph, values, cotangents));
}

std::string describe(const Verdict& verdict) {
  std::string text;
  for (const Finding& f : verdict.findings) {
    text += "\n  " + std::string(symptom_name(f.symptom)) + " on " + f.backend + ": " + f.message;
  }
  return text;
}

double torch_ratio(const Verdict& verdict) {
  for (const BackendSummary& s : verdict.backends) {
    if (s.backend == "torch") return s.max_error_ratio;
  }
  return 0;
}

bool known_torch113_bug(const Finding& f, const ir::Graph& graph);

// LibTorch's pixel_unshuffle (1.13 and 2.x) returns a zero-element input unchanged, in the
// input's shape (pytorch/pytorch#192816); pixel_shuffle's backward is pixel_unshuffle.
bool known_empty_pixel_unshuffle(const Finding& f, const ir::Graph& graph) {
  if (f.symptom != Symptom::ExceptionMismatch && f.symptom != Symptom::ShapeMismatch) return false;
  return std::any_of(graph.nodes().begin(), graph.nodes().end(), [&](const ir::Node& node) {
    return (node.op == OpKind::PixelShuffle || node.op == OpKind::PixelUnshuffle) &&
           numel_of(graph.value(node.inputs[0]).type.shape) == 0;
  });
}

TEST(JudgeNoFalseAlarms, OpSampleCases) {
  int cases = 0;
  double worst = 0;
  std::string worst_label;
  for (OpKind op : ir::kAllOps) {
    for (const testing::OpCase& c : testing::op_cases(op, Dtype::Float32)) {
      if (!c.engine_error.empty() || !c.torch_crash.empty()) continue;
      ++cases;
      const Verdict verdict = judge_case(c.graph, c.values, testing::label_seed(c.label));
      const bool known = verdict.findings.size() == 1 &&
                         (known_torch113_bug(verdict.findings[0], c.graph) ||  // trace/tall_4x2
                          known_empty_pixel_unshuffle(verdict.findings[0], c.graph));
      EXPECT_TRUE(known || !verdict.bug()) << c.label << describe(verdict);
      if (!known && torch_ratio(verdict) > worst) {
        worst = torch_ratio(verdict);
        worst_label = c.label;
      }
    }
  }
  std::cout << "[ JUDGE    ] " << cases << " op cases, largest torch error/tolerance " << worst
            << " (" << worst_label << "), known LibTorch bugs left out\n";
  EXPECT_GT(cases, 100);
}

// Real differences of the paths, found by the judge, not false alarms: LibTorch refusing a
// case the engine accepts ("reflection_pad2d" not implemented for 'Long', batch_norm of zero
// channels), and LibTorch's index among exactly equal values (max over dim 0 of a constant
// tensor) where float32 and float64 agree. Counted and printed, not failed; floating values
// (whose messages name a tolerance) must always agree.
// Also a wrong output of LibTorch 1.13 on a case with a nearest interpolation of a bfloat16
// tensor: 1.13 computes its source index in bfloat16 (corpus case
// bug-eager-bf16-nearest-index; fixed in 2.x). The judge does not localize, so the op is
// found in the graph.
// Two more of 1.13's: trace's backward writes past the diagonal of a tall matrix (corpus
// bug-eager-trace-tall-matrix-backward), and baddbmm with beta = 0 reads its uninitialized
// result, NaN now and then (pytorch/pytorch#80588).
bool known_torch113_bug(const Finding& f, const ir::Graph& graph) {
  const auto has = [&](ir::OpKind op) {
    return std::any_of(graph.nodes().begin(), graph.nodes().end(),
                       [&](const ir::Node& node) { return node.op == op; });
  };
  if (torch_major() == 1 && f.symptom == Symptom::WrongGradient && has(ir::OpKind::Trace)) {
    return true;
  }
  if (torch_major() == 1 && f.symptom == Symptom::NanInfMismatch && has(ir::OpKind::Baddbmm)) {
    return true;
  }
  if (torch_major() != 1 || f.symptom != Symptom::WrongOutput) {
    return false;
  }
  return std::any_of(graph.nodes().begin(), graph.nodes().end(), [&](const ir::Node& node) {
    const ir::AttrValue* mode = node.attrs.find("mode");
    return node.op == ir::OpKind::Interpolate && mode != nullptr &&
           *mode == ir::AttrValue(std::string("nearest")) &&
           graph.value(node.inputs[0]).type.dtype == Dtype::BFloat16;
  });
}

bool path_difference(const Verdict& verdict, const ir::Graph& graph) {
  if (verdict.findings.size() != 1 || verdict.findings[0].backend != "torch") return false;
  const Finding& f = verdict.findings[0];
  return f.symptom == Symptom::ExceptionMismatch || known_torch113_bug(f, graph) ||
         (f.symptom == Symptom::WrongOutput && f.message.find("tolerance") == std::string::npos);
}

// WEFT_JUDGE_SEEDS=N runs N seeds per size instead of 200 (a longer margin measurement).
std::uint64_t seeds_per_size() {
  const char* text = std::getenv("WEFT_JUDGE_SEEDS");
  return text ? std::strtoull(text, nullptr, 10) : 200;
}

TEST(JudgeNoFalseAlarms, GeneratedModels) {
  gen::Generator generator;
  int models = 0;
  int not_finite = 0;
  int refused = 0;
  int differences = 0;
  double worst = 0;
  std::string worst_case;
  const auto start = std::chrono::steady_clock::now();
  for (int nodes : {5, 10, 20}) {
    for (std::uint64_t seed = 0; seed < seeds_per_size(); ++seed) {
      gen::CaseOptions options;
      options.generator.seed = seed;
      options.generator.nodes = nodes;
      const gen::GeneratedCase generated = gen::generate_case(generator, options);
      ++models;
      not_finite += generated.values.finite ? 0 : 1;
      const Verdict verdict = judge_case(generated.graph, generated.values.values, seed);
      refused += verdict.note.empty() ? 0 : 1;
      const std::string label =
          "seed " + std::to_string(seed) + ", " + std::to_string(nodes) + " nodes";
      if (path_difference(verdict, generated.graph)) {
        ++differences;
        std::cout << "[ JUDGE    ] " << label << ": paths differ: " << verdict.findings[0].message
                  << "\n";
        continue;
      }
      EXPECT_FALSE(verdict.bug()) << label << describe(verdict);
      if (torch_ratio(verdict) > worst) {
        worst = torch_ratio(verdict);
        worst_case = label;
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ JUDGE    ] " << models << " generated models (" << not_finite
            << " without finite values, " << refused << " refused by every path, " << differences
            << " real path differences) in " << seconds << " s, largest torch error/tolerance "
            << worst << " (" << worst_case << ")\n";
}

// The op sample cases in bfloat16 and float16 (computed in float32, rounded per op, by the
// engine and by LibTorch): no false alarm; cases LibTorch has no kernel for are counted apart.
TEST(JudgeNoFalseAlarms, OpSampleCasesInHalfPrecision) {
  for (Dtype dtype : {Dtype::BFloat16, Dtype::Float16}) {
    int cases = 0;
    int unsupported = 0;
    double worst = 0;
    std::string worst_label;
    for (OpKind op : ir::kAllOps) {
      for (const testing::OpCase& c : testing::op_cases(op, dtype)) {
        if (!c.engine_error.empty() || !c.torch_crash.empty()) continue;
        const Verdict verdict = judge_case(c.graph, c.values, testing::label_seed(c.label));
        if (!verdict.unsupported.empty()) {
          ++unsupported;
          continue;
        }
        ++cases;
        const bool known = verdict.findings.size() == 1 &&
                           known_empty_pixel_unshuffle(verdict.findings[0], c.graph);
        EXPECT_TRUE(known || !verdict.bug())
            << c.label << " (" << dtype_name(dtype) << ")" << describe(verdict);
        if (!known && torch_ratio(verdict) > worst) {
          worst = torch_ratio(verdict);
          worst_label = c.label;
        }
      }
    }
    std::cout << "[ JUDGE    ] " << dtype_name(dtype) << ": " << cases << " op cases ("
              << unsupported << " without a LibTorch kernel), largest torch error/tolerance "
              << worst << " (" << worst_label << ")\n";
    EXPECT_GT(cases, dtype == Dtype::BFloat16 ? 100 : 20);
  }
}

// Generated models whose floating leaves are float16 or bfloat16 (some mixed with float32).
TEST(JudgeNoFalseAlarms, GeneratedHalfPrecisionModels) {
  gen::Generator generator;
  int models = 0;
  int judged = 0;
  double worst = 0;
  std::string worst_case;
  for (int nodes : {5, 10}) {
    for (std::uint64_t seed = 0; seed < seeds_per_size() / 4; ++seed) {
      gen::CaseOptions options;
      options.generator.seed = seed;
      options.generator.nodes = nodes;
      options.half_precision_rate = 1;
      const gen::GeneratedCase generated = gen::generate_case(generator, options);
      ++models;
      const Verdict verdict = judge_case(generated.graph, generated.values.values, seed);
      const std::string label =
          "seed " + std::to_string(seed) + ", " + std::to_string(nodes) + " nodes";
      if (!verdict.unsupported.empty() || path_difference(verdict, generated.graph)) continue;
      ++judged;
      EXPECT_FALSE(verdict.bug()) << label << describe(verdict);
      if (torch_ratio(verdict) > worst) {
        worst = torch_ratio(verdict);
        worst_case = label;
      }
    }
  }
  std::cout << "[ JUDGE    ] " << models << " half-precision models, " << judged
            << " judged (the others refused by LibTorch), largest torch error/tolerance " << worst
            << " (" << worst_case << ")\n";
  EXPECT_GT(judged, models / 4);
}

// A float16 result one rounding away from torch's is accepted; one off by a few percent is a
// wrong output (the floor is float16's epsilon, not float32's).
TEST(JudgeDetection, HalfPrecisionToleranceIsFloat16s) {
  Graph graph;
  const auto x = graph.add_input("x", {Dtype::Float16, {8}});
  const auto y = graph.add_node(OpKind::Sin, {x}, {}, {{Dtype::Float16, {8}}})[0];
  graph.mark_output(y);
  graph.set_requires_grad(false);
  TensorMap values;
  values["x"] =
      tensor(std::vector<double>{0.3, -0.7, 1.2, 0.9, -1.1, 0.5, 0.8, -0.4}).to(Dtype::Float16);
  // The path under test returns the float16 engine's results (LibTorch 1.13 has no float16
  // sin on the CPU), then altered.
  const std::vector<Tensor> cotangents = ir::random_cotangents(graph, 3);
  std::vector<BackendResult> results{run_engine(graph, values, cotangents, true),
                                     run_engine(graph, values, cotangents, false)};
  results.push_back(results[1]);
  results[2].backend = "torch";
  EXPECT_FALSE(judge(graph, results).bug());
  auto with_output = [&](double factor) {
    std::vector<BackendResult> changed = results;
    for (CallResult& call : changed[2].calls) {
      call.outputs[0] =
          mul(call.outputs[0].to(Dtype::Float32), wrapped_scalar(factor)).to(Dtype::Float16);
    }
    return judge(graph, changed);
  };
  EXPECT_FALSE(with_output(1 + dtype_epsilon(Dtype::Float16)).bug());
  const Verdict wrong = with_output(1.05);
  ASSERT_TRUE(wrong.bug());
  EXPECT_EQ(wrong.findings[0].symptom, Symptom::WrongOutput);
  EXPECT_EQ(wrong.findings[0].backend, "torch");
}

// x·w → tanh (floating, with gradients) and its argmax (int64).
struct Fixture {
  Graph graph;
  TensorMap values;
  std::vector<BackendResult> results;

  Fixture() {
    const auto x = graph.add_input("x", {Dtype::Float32, {3, 4}});
    const auto w = graph.add_parameter("w", {Dtype::Float32, {4, 5}});
    const auto h = graph.add_node(OpKind::Mm, {x, w}, {}, {{Dtype::Float32, {3, 5}}}, "h")[0];
    const auto t = graph.add_node(OpKind::Tanh, {h}, {}, {{Dtype::Float32, {3, 5}}}, "t")[0];
    const auto a = graph.add_node(OpKind::Argmax, {t}, ir::Attributes().set("dim", 1),
                                  {{Dtype::Int64, {3}}}, "a")[0];
    graph.mark_output(t);
    graph.mark_output(a);
    values["x"] = tensor(std::vector<float>{0.3f, -0.7f, 0.2f, 0.9f, -0.1f, 0.5f, 0.8f, -0.4f, 0.6f,
                                            0.1f, -0.9f, 0.35f},
                         {3, 4});
    values["w"] = tensor(
        std::vector<float>{0.5f,  -0.2f, 0.7f,  0.1f,  -0.6f, 0.3f,  0.9f,   -0.8f, 0.4f,  0.2f,
                           -0.5f, 0.6f,  0.15f, -0.3f, 0.8f,  0.25f, -0.45f, 0.55f, 0.65f, -0.15f},
        {4, 5});
    results = run_all(graph, values, 7);
  }

  BackendResult& torch() { return results[2]; }
  Verdict verdict() const { return judge(graph, results); }
};

// Adds `delta` to element `index` of `t` (a fresh tensor: results of other calls keep theirs).
Tensor perturbed(const Tensor& t, std::int64_t index, double delta) {
  std::vector<double> v = t.to_vector<double>();
  v[static_cast<std::size_t>(index)] += delta;
  return tensor(v, t.sizes()).reshape(t.sizes()).to(t.dtype());
}

void expect_single(const Verdict& verdict, Symptom symptom, const std::string& backend) {
  ASSERT_EQ(verdict.findings.size(), 1u) << describe(verdict);
  EXPECT_EQ(verdict.findings[0].symptom, symptom) << describe(verdict);
  EXPECT_EQ(verdict.findings[0].backend, backend) << describe(verdict);
  for (const BackendSummary& s : verdict.backends) EXPECT_EQ(s.agrees, s.backend != backend);
}

TEST(JudgeDetection, UnchangedResultsAgree) {
  Fixture f;
  const Verdict verdict = f.verdict();
  EXPECT_FALSE(verdict.bug()) << describe(verdict);
  EXPECT_TRUE(verdict.reference_finite);
  ASSERT_EQ(verdict.backends.size(), 3u);
  EXPECT_GT(verdict.backends[2].max_abs_error, 0.0);  // float32 against float64
  EXPECT_LT(verdict.backends[2].max_rel_error, 1e-5);
}

TEST(JudgeDetection, OutputPerturbationsJustBeyondToleranceAndFarBeyond) {
  Fixture f;
  // Measure the tolerance at element 4 through the ratio that a small perturbation shows.
  const double probe = 1e-3;
  for (CallResult& call : f.torch().calls) call.outputs[0] = perturbed(call.outputs[0], 4, probe);
  Verdict verdict = f.verdict();
  const double tolerance = probe / verdict.backends[2].max_error_ratio;
  ASSERT_GT(tolerance, 0.0);
  ASSERT_LT(tolerance, 1e-4);

  for (double factor : {0.5, 1.5, 1e4}) {
    Fixture g;
    for (CallResult& call : g.torch().calls) {
      call.outputs[0] = perturbed(call.outputs[0], 4, factor * tolerance);
    }
    verdict = g.verdict();
    if (factor < 1) {
      EXPECT_FALSE(verdict.bug()) << describe(verdict);
    } else {
      expect_single(verdict, Symptom::WrongOutput, "torch");
      EXPECT_NE(verdict.findings[0].message.find("output 0 [3, 5]"), std::string::npos)
          << verdict.findings[0].message;
      EXPECT_EQ(verdict.findings[0].signature, "wrong-output|torch||");
    }
  }
}

TEST(JudgeDetection, NanWhereTheReferenceIsFinite) {
  Fixture f;
  for (CallResult& call : f.torch().calls) {
    call.outputs[0] = perturbed(call.outputs[0], 2, std::numeric_limits<double>::quiet_NaN());
  }
  expect_single(f.verdict(), Symptom::NanInfMismatch, "torch");
}

TEST(JudgeDetection, ShapeAndDtypeChanges) {
  Fixture f;
  for (CallResult& call : f.torch().calls) call.outputs[0] = call.outputs[0].reshape({5, 3});
  expect_single(f.verdict(), Symptom::ShapeMismatch, "torch");

  Fixture g;
  for (CallResult& call : g.torch().calls) call.outputs[0] = call.outputs[0].to(Dtype::Float64);
  expect_single(g.verdict(), Symptom::ShapeMismatch, "torch");
}

TEST(JudgeDetection, ThrowingPath) {
  Fixture f;
  f.torch().outcome = Outcome::Exception;
  f.torch().phase = "call 0";
  f.torch().calls.clear();
  f.torch().message = "node 1 't' (tanh): tanh(): expected a tensor of 3 dims, got [3, 5]";
  const Verdict verdict = f.verdict();
  expect_single(verdict, Symptom::ExceptionMismatch, "torch");
  ASSERT_TRUE(verdict.findings[0].node.has_value());
  EXPECT_EQ(*verdict.findings[0].node, 1u);
  EXPECT_EQ(verdict.findings[0].op, "tanh");
  // The message is the root cause: the signature names no op, and op names become <op>.
  EXPECT_EQ(verdict.findings[0].signature,
            "exception-mismatch|torch||<op>(): expected a tensor of N dims, got [N]");
}

TEST(JudgeDetection, SecondCallDiffers) {
  Fixture f;
  f.torch().calls[2].outputs[0] = perturbed(f.torch().calls[2].outputs[0], 7, 0.25);
  expect_single(f.verdict(), Symptom::Nondeterminism, "torch");
}

TEST(JudgeDetection, GradientPerturbation) {
  Fixture f;
  for (CallResult& call : f.torch().calls) {
    call.gradients["w"] = perturbed(call.gradients.at("w"), 3, 0.01);
  }
  expect_single(f.verdict(), Symptom::WrongGradient, "torch");
}

TEST(JudgeDetection, WrongIntegerOutput) {
  Fixture f;
  for (CallResult& call : f.torch().calls) call.outputs[1] = perturbed(call.outputs[1], 0, 1);
  expect_single(f.verdict(), Symptom::WrongOutput, "torch");
}

TEST(JudgeDetection, CrashAndTimeoutOutcomes) {
  Fixture f;
  f.torch().outcome = Outcome::Crash;
  f.torch().phase = "call 1";
  f.torch().message = "worker killed by signal 11 (SIGSEGV); stderr: ...";
  f.torch().calls.resize(1);
  Verdict verdict = f.verdict();
  expect_single(verdict, Symptom::Crash, "torch");
  EXPECT_EQ(verdict.findings[0].signature, "crash|torch||SIGSEGV");

  Fixture g;
  g.torch().outcome = Outcome::Timeout;
  g.torch().message = "no answer after 30 s";
  g.torch().calls.clear();
  verdict = g.verdict();
  expect_single(verdict, Symptom::Timeout, "torch");
  EXPECT_EQ(verdict.findings[0].signature, "timeout|torch||");
}

TEST(JudgeDetection, UnavailablePathIsOnlySummarized) {
  Fixture f;
  f.torch().outcome = Outcome::Unavailable;
  f.torch().message = "no CUDA device";
  f.torch().calls.clear();
  const Verdict verdict = f.verdict();
  EXPECT_FALSE(verdict.bug()) << describe(verdict);
  EXPECT_EQ(verdict.backends[2].outcome, Outcome::Unavailable);
}

TEST(JudgeDetection, ReferenceThrowingAloneIsTheReferencesFault) {
  Fixture f;
  f.results[0].outcome = Outcome::Exception;
  f.results[0].message = "node 0 'h' (mm): mm: expected 4 rows, got 5";
  f.results[0].calls.clear();
  Verdict verdict = f.verdict();
  expect_single(verdict, Symptom::ExceptionMismatch, "engine-f64");
  EXPECT_EQ(verdict.findings[0].op, "mm");

  // The float32 engine throwing too: both engine paths are at fault.
  f.results[1].outcome = Outcome::Exception;
  f.results[1].message = f.results[0].message;
  f.results[1].calls.clear();
  verdict = f.verdict();
  ASSERT_EQ(verdict.findings.size(), 2u) << describe(verdict);
  EXPECT_EQ(verdict.findings[0].backend, "engine-f64");
  EXPECT_EQ(verdict.findings[1].backend, "engine");
  EXPECT_TRUE(verdict.backends[2].agrees);
}

TEST(JudgeDetection, EveryPathThrowingIsNoFinding) {
  Fixture f;
  for (BackendResult& r : f.results) {
    r.outcome = Outcome::Exception;
    r.message = "node 0 'h' (mm): mm: expected 4 rows, got 5";
    r.calls.clear();
  }
  const Verdict verdict = f.verdict();
  EXPECT_FALSE(verdict.bug()) << describe(verdict);
  EXPECT_EQ(verdict.note,
            "every path refused the case: node 0 'h' (mm): mm: expected 4 rows, got 5");
}

TEST(JudgeDetection, EngineFarFromTheReferenceWhileTorchAgrees) {
  Fixture f;
  for (CallResult& call : f.results[1].calls) {
    call.outputs[0] = perturbed(call.outputs[0], 5, 0.1);
  }
  expect_single(f.verdict(), Symptom::WrongOutput, "engine");
}

TEST(JudgeReferenceNotFinite, NoNanFindings) {
  // log of a negative input: NaN in every path.
  Graph graph;
  const auto x = graph.add_input("x", {Dtype::Float32, {3}});
  graph.mark_output(graph.add_node(OpKind::Log, {x}, {}, {{Dtype::Float32, {3}}})[0]);
  TensorMap values{{"x", tensor(std::vector<float>{-1.0f, 2.0f, 3.0f}, {3})}};
  std::vector<BackendResult> results = run_all(graph, values, 3);
  Verdict verdict = judge(graph, results);
  EXPECT_FALSE(verdict.reference_finite);
  EXPECT_FALSE(verdict.bug()) << describe(verdict);

  // A NaN where the reference is finite is not reported either, a wrong finite value is.
  for (CallResult& call : results[2].calls) {
    call.outputs[0] = perturbed(call.outputs[0], 1, std::numeric_limits<double>::quiet_NaN());
  }
  verdict = judge(graph, results);
  EXPECT_FALSE(verdict.bug()) << describe(verdict);
  for (CallResult& call : results[2].calls) call.outputs[0] = perturbed(call.outputs[0], 2, 1.0);
  expect_single(judge(graph, results), Symptom::WrongOutput, "torch");
}

// x + y with y tiny: float32 rounds it away, float64 does not, so discrete results flip.
std::vector<BackendResult> tie_case(OpKind op, Graph& graph, TensorMap& values) {
  const auto x = graph.add_input("x", {Dtype::Float32, {3}});
  const auto y = graph.add_input("y", {Dtype::Float32, {3}});
  const auto s = graph.add_node(OpKind::Add, {x, y}, {}, {{Dtype::Float32, {3}}})[0];
  if (op == OpKind::Argmax) {
    graph.mark_output(graph.add_node(op, {s}, {}, {{Dtype::Int64, {}}})[0]);
    values["x"] = tensor(std::vector<float>{1.0f, 1.0f, 0.5f}, {3});
  } else {
    graph.mark_output(graph.add_node(op, {s}, {}, {{Dtype::Float32, {3}}})[0]);
    values["x"] = tensor(std::vector<float>{2.5f, 0.5f, 1.25f}, {3});
  }
  values["y"] = tensor(std::vector<float>{0.0f, std::ldexp(1.0f, -30), std::ldexp(1.0f, -30)}, {3});
  return run_all(graph, values, 1);
}

TEST(JudgeTies, ArgmaxOfValuesEqualInFloat32) {
  Graph graph;
  TensorMap values;
  std::vector<BackendResult> results = tie_case(OpKind::Argmax, graph, values);
  // The flip is real: float64 sees x[1] + y[1] as the largest, float32 a tie won by index 0.
  ASSERT_EQ(results[0].calls[0].outputs[0].item(), 1.0);
  ASSERT_EQ(results[1].calls[0].outputs[0].item(), 0.0);
  EXPECT_FALSE(judge(graph, results).bug()) << describe(judge(graph, results));
  // Either side of the tie is accepted, another index is not.
  for (CallResult& call : results[2].calls) call.outputs[0] = perturbed(call.outputs[0], 0, 1);
  EXPECT_FALSE(judge(graph, results).bug()) << describe(judge(graph, results));
  for (CallResult& call : results[2].calls) call.outputs[0] = perturbed(call.outputs[0], 0, 1);
  expect_single(judge(graph, results), Symptom::WrongOutput, "torch");
}

TEST(JudgeTies, RoundOfHalf) {
  Graph graph;
  TensorMap values;
  std::vector<BackendResult> results = tie_case(OpKind::Round, graph, values);
  ASSERT_EQ(results[0].calls[0].outputs[0].to_vector<double>(), (std::vector<double>{2, 1, 1}));
  ASSERT_EQ(results[1].calls[0].outputs[0].to_vector<double>(), (std::vector<double>{2, 0, 1}));
  EXPECT_FALSE(judge(graph, results).bug()) << describe(judge(graph, results));
  // torch on the float64 side of the flip: accepted too.
  for (CallResult& call : results[2].calls) call.outputs[0] = perturbed(call.outputs[0], 1, 1);
  EXPECT_FALSE(judge(graph, results).bug()) << describe(judge(graph, results));
  for (CallResult& call : results[2].calls) call.outputs[0] = perturbed(call.outputs[0], 0, 1);
  expect_single(judge(graph, results), Symptom::WrongOutput, "torch");
}

Finding exception_finding(const std::string& message, const std::string& backend = "torch") {
  Finding finding{
      Symptom::ExceptionMismatch, backend, message, std::nullopt, "conv2d", "", {}, {}, {}};
  return finding;
}

TEST(JudgeSignatures, NumbersShapesAndNamesAreNormalized) {
  const std::string a = make_signature(exception_finding(
      "node 3 'conv' (conv2d): Given groups=1, weight of size [8, 3, 3, 3], expected "
      "input[1, 4, 5, 5] to have 3 channels, but got 4 channels instead"));
  const std::string b = make_signature(
      exception_finding("node 12 (conv2d): Given groups=2, weight of size [16, 1, 5, 5],  expected "
                        "input[2, 3, 9, 9] to have 2 channels, but got 3 channels instead"));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a,
            "exception-mismatch|torch||Given groups=N, weight of size [N], expected input[N] "
            "to have N channels, but got N channels instead");
  EXPECT_EQ(make_signature(exception_finding("value 'x' has dtype float32, 2.5e-3 off")),
            "exception-mismatch|torch||value '?' has dtype <dtype>, N off");

  // One message on one path is one bucket, whatever the op and dtype it met.
  Finding other = exception_finding("node 3 'conv' (conv1d): Given groups=1");
  other.op = "conv1d";
  EXPECT_EQ(make_signature(other),
            make_signature(exception_finding("node 3 (conv2d): Given groups=1")));
  EXPECT_EQ(make_signature(exception_finding("\"reflection_pad1d\" not implemented for 'Long'")),
            make_signature(exception_finding("\"replication_pad2d\" not implemented for 'Int'")));
  EXPECT_EQ(make_signature(exception_finding("Invalid integral op_type: 23 at add")),
            make_signature(exception_finding("Invalid integral op_type: 7 at floor")));
  EXPECT_NE(make_signature(exception_finding("Invalid integral op_type: 23")),
            make_signature(exception_finding("expected scalar type Float")));
  EXPECT_NE(make_signature(exception_finding("x", "torch")),
            make_signature(exception_finding("x", "torchscript")));

  // Value symptoms: the message does not matter.
  Finding wrong{
      Symptom::WrongOutput, "torch", "output 0 [3]: error 0.5", 2, "relu", "", {}, {}, {}};
  Finding wrong2 = wrong;
  wrong2.message = "output 1 [7, 7]: error 3";
  EXPECT_EQ(make_signature(wrong), make_signature(wrong2));
  EXPECT_EQ(make_signature(wrong), "wrong-output|torch|relu|");

  const std::string long_message(500, 'a');
  EXPECT_LE(make_signature(exception_finding(long_message)).size(), 160u);
}

TEST(JudgeJson, RoundTrip) {
  Fixture f;
  f.torch().outcome = Outcome::Exception;
  f.torch().message = "node 1 't' (tanh): no";
  f.torch().calls.clear();
  const Verdict verdict = f.verdict();
  ASSERT_TRUE(verdict.bug());
  const nlohmann::json document = verdict_to_json(verdict);
  const Verdict back = verdict_from_json(nlohmann::json::parse(document.dump()), "verdict.json");
  EXPECT_EQ(verdict_to_json(back), document);
  ASSERT_EQ(back.findings.size(), 1u);
  EXPECT_EQ(back.findings[0].node, verdict.findings[0].node);
  EXPECT_EQ(back.findings[0].signature, verdict.findings[0].signature);
  EXPECT_EQ(back.backends[2].outcome, Outcome::Exception);
  EXPECT_DOUBLE_EQ(back.backends[1].max_abs_error, verdict.backends[1].max_abs_error);
}

TEST(JudgeJson, MalformedFieldIsNamed) {
  Fixture f;
  nlohmann::json document = verdict_to_json(f.verdict());
  document["backends"][1]["outcome"] = "exploded";
  try {
    verdict_from_json(document, "run/verdict.json");
    FAIL() << "expected a FormatError";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.source(), "run/verdict.json");
    EXPECT_EQ(e.field(), "/backends/1/outcome");
    EXPECT_NE(std::string(e.what()).find("exploded"), std::string::npos) << e.what();
  }
  document = verdict_to_json(f.verdict());
  document["reference_finite"] = 1;
  try {
    verdict_from_json(document, "v.json");
    FAIL() << "expected a FormatError";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.field(), "/reference_finite");
  }
  EXPECT_THROW(verdict_from_json(nlohmann::json::array(), "v.json"), FormatError);
}

TEST(JudgeNames, SymptomsAndOutcomesRoundTrip) {
  for (Symptom s : {Symptom::Crash, Symptom::Timeout, Symptom::OutOfMemory,
                    Symptom::ExceptionMismatch, Symptom::ShapeMismatch, Symptom::NanInfMismatch,
                    Symptom::WrongOutput, Symptom::WrongGradient, Symptom::Nondeterminism}) {
    EXPECT_EQ(symptom_from_name(symptom_name(s)), s);
  }
  for (Outcome o : {Outcome::Ok, Outcome::Exception, Outcome::Crash, Outcome::Timeout,
                    Outcome::OutOfMemory, Outcome::Unavailable}) {
    EXPECT_EQ(outcome_from_name(outcome_name(o)), o);
  }
  EXPECT_THROW(symptom_from_name("wrong"), Error);
  EXPECT_THROW(outcome_from_name("fine"), Error);
}

}  // namespace
}  // namespace weft::oracle

namespace weft::oracle {
namespace {

// A copy of torch's results under another path's name.
BackendResult as_path(BackendResult result, const std::string& name) {
  result.backend = name;
  return result;
}

TEST(JudgeRootCauses, ACompiledPathFailingAsEagerDoesIsFoldedIntoEager) {
  Fixture f;
  for (CallResult& call : f.torch().calls) call.outputs[0] = perturbed(call.outputs[0], 4, 0.5);
  f.results.push_back(as_path(f.torch(), "torchscript"));
  f.results.push_back(as_path(f.torch(), "torchscript-ofi"));
  const Verdict verdict = f.verdict();
  ASSERT_EQ(verdict.findings.size(), 1u) << describe(verdict);
  EXPECT_EQ(verdict.findings[0].backend, "torch");
  EXPECT_EQ(verdict.findings[0].also, (std::vector<std::string>{"torchscript", "torchscript-ofi"}));
  for (const BackendSummary& s : verdict.backends) {
    EXPECT_EQ(s.agrees, s.backend == kReferenceBackend || s.backend == kEngineBackend) << s.backend;
  }
  // Where eager is right, the compiled path's bug is its own.
  Fixture g;
  g.results.push_back(as_path(g.torch(), "torchscript"));
  for (CallResult& call : g.results.back().calls)
    call.outputs[0] = perturbed(call.outputs[0], 4, 0.5);
  expect_single(g.verdict(), Symptom::WrongOutput, "torchscript");
}

TEST(JudgeRootCauses, EagerRefusingForWantOfAKernelIsACapabilityGapNotABug) {
  Fixture f;
  f.torch().outcome = Outcome::Exception;
  f.torch().calls.clear();
  f.torch().phase = "call 0";
  f.torch().message = "node 1 't' (tanh): \"tanh_vml_cpu\" not implemented for 'Long'";
  f.results.push_back(as_path(f.torch(), "torchscript"));
  f.results.back().message = "\"tanh_vml_cpu\" not implemented for 'Long'";
  const Verdict verdict = f.verdict();
  EXPECT_FALSE(verdict.bug()) << describe(verdict);
  ASSERT_EQ(verdict.unsupported.size(), 1u);
  EXPECT_EQ(verdict.unsupported[0].op, "tanh");
  EXPECT_EQ(verdict.unsupported[0].dtypes, (std::vector<std::string>{"float32"}));
  EXPECT_EQ(verdict.unsupported[0].signature, "unsupported|torch|tanh|'?' not implemented for '?'");
  // Round trip through verdict.json.
  const Verdict back = verdict_from_json(verdict_to_json(verdict), "verdict.json");
  ASSERT_EQ(back.unsupported.size(), 1u);
  EXPECT_EQ(back.unsupported[0].signature, verdict.unsupported[0].signature);
  // Any other exception of eager stays a bug.
  Fixture g;
  g.torch().outcome = Outcome::Exception;
  g.torch().calls.clear();
  g.torch().message = "node 1 't' (tanh): expected a tensor of 3 dims";
  expect_single(g.verdict(), Symptom::ExceptionMismatch, "torch");
}

// A compiled path of the same PyTorch refusing a case its eager refuses, in its own words (seed
// 1400: torch.compile's "BackendCompilerFailed" over 2.x's missing bernoulli.p derivative),
// shares eager's gap; where eager ran, the same refusal stays the compiled path's bug.
TEST(JudgeRootCauses, ACompiledPathRefusingWhatItsEagerCannotRunSharesTheGap) {
  Fixture f;
  f.torch().backend = "torch2-eager";
  f.torch().outcome = Outcome::Exception;
  f.torch().calls.clear();
  f.torch().message = "python: RuntimeError: derivative for aten::bernoulli is not implemented";
  f.results.push_back(as_path(f.torch(), "torch2-aot-eager"));
  f.results.back().message = "python: BackendCompilerFailed: backend='aot_eager' raised:";
  f.results.push_back(as_path(f.torch(), "torch2-inductor"));
  f.results.back().message = "python: BackendCompilerFailed: backend='inductor' raised:";
  const Verdict verdict = f.verdict();
  EXPECT_FALSE(verdict.bug()) << describe(verdict);
  EXPECT_EQ(verdict.unsupported.size(), 1u);
  Fixture g;
  g.results.push_back(as_path(g.torch(), "torch2-eager"));
  g.results.push_back(as_path(g.torch(), "torch2-aot-eager"));
  g.results.back().outcome = Outcome::Exception;
  g.results.back().calls.clear();
  g.results.back().message = "python: BackendCompilerFailed: backend='aot_eager' raised:";
  expect_single(g.verdict(), Symptom::ExceptionMismatch, "torch2-aot-eager");
}

// The same refusal in other words: a Python path adds the exception type, a C++ path the node
// label. Eager executions standing in for an absent eager path share the gap too (a campaign
// of a sibling build: torch2-libtorch judged without torch2-eager).
TEST(JudgeRootCauses, EveryEagerRefusingInItsOwnWordsSharesTheGap) {
  const std::string refusal =
      "Non-empty 4D data tensor expected but got a tensor with sizes [2, 0, 3, 3]";
  Fixture f;
  f.torch().outcome = Outcome::Exception;
  f.torch().calls.clear();
  f.torch().message = "node 0 (interpolate): " + refusal;
  f.results.push_back(as_path(f.torch(), "python"));
  f.results.back().message = "python: RuntimeError: " + refusal;
  f.results.push_back(as_path(f.torch(), "torch2-libtorch"));
  Verdict verdict = f.verdict();
  EXPECT_FALSE(verdict.bug()) << describe(verdict);
  // A backward's refusal: the C++ path names the phase, the Python path does not (seed 1208,
  // 1.13's bfloat16 hardshrink backward).
  const std::string backward_refusal = "\"hardshrink_backward_cpu\" not implemented for 'BFloat16'";
  Fixture b;
  b.torch().outcome = Outcome::Exception;
  b.torch().calls.clear();
  b.torch().message = "backward: " + backward_refusal;
  b.results.push_back(as_path(b.torch(), "python"));
  b.results.back().message = "python: RuntimeError: " + backward_refusal;
  verdict = b.verdict();
  EXPECT_FALSE(verdict.bug()) << describe(verdict);
  EXPECT_EQ(verdict.unsupported.size(), 1u);
  // torch2-libtorch alone (no eager path of any PyTorch ran) is the eager of its PyTorch.
  Fixture g;
  g.torch().backend = "torch2-libtorch";
  g.torch().outcome = Outcome::Exception;
  g.torch().calls.clear();
  g.torch().message = "node 0 (interpolate): " + refusal;
  verdict = g.verdict();
  EXPECT_FALSE(verdict.bug()) << describe(verdict);
  ASSERT_EQ(verdict.unsupported.size(), 1u);
  EXPECT_EQ(verdict.unsupported[0].backend, "torch2-libtorch");
  // A compiled path refusing what its eager ran is still a bug of its own.
  Fixture h;
  h.results.push_back(as_path(h.torch(), "torch2-eager"));
  h.results.push_back(as_path(h.torch(), "torch2-inductor"));
  h.results.back().outcome = Outcome::Exception;
  h.results.back().calls.clear();
  h.results.back().message = "python: RuntimeError: " + refusal;
  expect_single(h.verdict(), Symptom::ExceptionMismatch, "torch2-inductor");
}

TEST(JudgeLabels, AWarmUpSwitchToWrongValuesIsAWrongOutputAtThatCall) {
  Fixture f;
  f.results.push_back(as_path(f.torch(), "torchscript"));
  for (std::size_t c = 1; c < 3; ++c) {
    f.results.back().calls[c].outputs[0] = perturbed(f.results.back().calls[c].outputs[0], 4, 0.5);
  }
  Verdict verdict = f.verdict();
  expect_single(verdict, Symptom::WrongOutput, "torchscript");
  ASSERT_TRUE(verdict.findings[0].call.has_value());
  EXPECT_EQ(*verdict.findings[0].call, 1);
  EXPECT_EQ(verdict.findings[0].signature, "wrong-output|torchscript||call 1");
  // Eager has no warm-up: the same change there is nondeterminism.
  Fixture g;
  for (std::size_t c = 1; c < 3; ++c) {
    g.torch().calls[c].outputs[0] = perturbed(g.torch().calls[c].outputs[0], 4, 0.5);
  }
  expect_single(g.verdict(), Symptom::Nondeterminism, "torch");
  // Calls after the switch that disagree with each other are nondeterminism on any path.
  Fixture h;
  h.results.push_back(as_path(h.torch(), "torchscript"));
  h.results.back().calls[2].outputs[0] = perturbed(h.results.back().calls[2].outputs[0], 4, 0.5);
  expect_single(h.verdict(), Symptom::Nondeterminism, "torchscript");
}

// std of a constant: float32 leaves ~1e-7 of cancellation where float64 leaves ~1e-16. The
// rounding model sets the tolerance from the terms that cancel, not from the result.
TEST(JudgeRounding, CancellationIsToleratedAndARealErrorIsNot) {
  Graph g;
  const auto x = g.add_input("x", {Dtype::Float32, {4, 6}});
  const auto h =
      g.add_node(OpKind::Hardtanh, {x}, ir::Attributes().set("min_val", -2.0).set("max_val", -0.7),
                 {{Dtype::Float32, {4, 6}}})[0];
  const auto s =
      g.add_node(OpKind::Std, {h}, ir::Attributes().set("dim", std::vector<std::int64_t>{1}),
                 {{Dtype::Float32, {4}}})[0];
  g.mark_output(s);
  TensorMap values{{"x", full({4, 6}, 0.25)}};
  const std::vector<Tensor> cotangents = ir::random_cotangents(g, 1);
  std::vector<BackendResult> results = {run_engine(g, values, cotangents, true),
                                        run_engine(g, values, cotangents, false),
                                        run_engine(g, values, cotangents, false)};
  results[2].backend = "torch";
  const JudgeOptions rules = with_case_rules({}, g, values, cotangents);
  ASSERT_NE(rules.rounding, nullptr);
  EXPECT_GE(rules.rounding->monte_carlo_runs, 1);
  for (double offset : {1.8e-7, 1e-3}) {
    for (CallResult& call : results[2].calls) {
      call.outputs[0] = full({4}, offset).to(Dtype::Float32);
    }
    const Verdict verdict = judge(g, results, rules);
    EXPECT_EQ(verdict.bug(), offset > 1e-4) << offset << describe(verdict);
  }
}

// floor(x * 10) with x = float32(0.1): float64 gives 1.0000000149..., within one float32
// rounding of 1, so the decision is undecided there and the element is not judged; the other
// element (3.7) is far from a boundary and judged exactly.
TEST(JudgeRounding, AFloorWithinRoundingOfAnIntegerIsNotJudgedOthersAre) {
  Graph g;
  const auto x = g.add_input("x", {Dtype::Float32, {2}});
  const auto w = g.add_input("w", {Dtype::Float32, {2}});
  const auto m = g.add_node(OpKind::Mul, {x, w}, {}, {{Dtype::Float32, {2}}})[0];
  const auto f = g.add_node(OpKind::Floor, {m}, {}, {{Dtype::Float32, {2}}})[0];
  g.mark_output(f);
  TensorMap values{{"x", tensor(std::vector<float>{0.1f, 0.37f}, {2})},
                   {"w", tensor(std::vector<float>{10.0f, 10.0f}, {2})}};
  const std::vector<Tensor> cotangents = ir::random_cotangents(g, 1);
  std::vector<BackendResult> results = {run_engine(g, values, cotangents, true),
                                        run_engine(g, values, cotangents, false),
                                        run_engine(g, values, cotangents, false)};
  results[2].backend = "torch";
  const JudgeOptions rules = with_case_rules({}, g, values, cotangents);
  ASSERT_NE(rules.rounding, nullptr);
  EXPECT_EQ(rules.rounding->moved_decisions, (std::vector<std::size_t>{1}));
  for (float first : {0.0f, 1.0f, 2.0f}) {
    for (CallResult& call : results[2].calls) {
      call.outputs[0] = tensor(std::vector<float>{first, 3.0f}, {2});
    }
    const Verdict verdict = judge(g, results, rules);
    EXPECT_FALSE(verdict.bug()) << first << describe(verdict);
  }
  // The element far from a boundary (3.7) is judged exactly.
  for (CallResult& call : results[2].calls) {
    call.outputs[0] = tensor(std::vector<float>{1.0f, 4.0f}, {2});
  }
  EXPECT_TRUE(judge(g, results, rules).bug());
}

// topk of int64 values {1, 0, 1, 2}, k = 2: the second place is a tie (either index is honest,
// and the position is not judged at all), the first is decided (index 3, the 2), and a value
// computed from the undecided indices (their sum) is not judged.
TEST(JudgeRounding, TopkTiesAreUndecidedOtherIndicesAreJudged) {
  Graph g;
  const auto x = g.add_input("x", {Dtype::Int64, {4}});
  const auto top = g.add_node(OpKind::Topk, {x}, ir::Attributes().set("k", 2),
                              {{Dtype::Int64, {2}}, {Dtype::Int64, {2}}});
  g.mark_output(top[1]);
  g.mark_output(g.add_node(OpKind::Sum, {top[1]}, ir::Attributes(), {{Dtype::Int64, {}}})[0]);
  TensorMap values{{"x", tensor(std::vector<std::int64_t>{1, 0, 1, 2}, {4})}};
  const std::vector<Tensor> cotangents = ir::random_cotangents(g, 1);
  std::vector<BackendResult> results = {run_engine(g, values, cotangents, true),
                                        run_engine(g, values, cotangents, false),
                                        run_engine(g, values, cotangents, false)};
  ASSERT_EQ(results[2].outcome, Outcome::Ok) << results[2].message;
  results[2].backend = "torch";
  const JudgeOptions rules = with_case_rules({}, g, values, cotangents);
  ASSERT_NE(rules.rounding, nullptr);
  EXPECT_EQ(rules.rounding->undecided_outputs, (std::vector<std::size_t>{1}));
  const auto answer = [&](std::vector<std::int64_t> indices, std::int64_t sum) {
    for (CallResult& call : results[2].calls) {
      call.outputs = {tensor(indices, {2}),
                      scalar_tensor(static_cast<double>(sum), dtype(Dtype::Int64))};
    }
    EXPECT_EQ(results[2].calls.size(), results[0].calls.size());
    return judge(g, results, rules);
  };
  EXPECT_FALSE(answer({3, 2}, 99).bug()) << describe(answer({3, 2}, 99));
  EXPECT_TRUE(answer({0, 3}, 3).bug());
}

}  // namespace
}  // namespace weft::oracle

namespace weft::oracle {
namespace {

// tanh(x * w): the true gradient against one that is off by half, in either role.
TEST(ReferenceCheck, FiniteDifferencesSideWithTheRightGradient) {
  Graph g;
  const auto x = g.add_input("x", {Dtype::Float32, {2, 3}});
  const auto w = g.add_parameter("w", {Dtype::Float32, {2, 3}});
  const auto m = g.add_node(OpKind::Mul, {x, w}, {}, {{Dtype::Float32, {2, 3}}})[0];
  g.mark_output(g.add_node(OpKind::Tanh, {m}, {}, {{Dtype::Float32, {2, 3}}})[0]);
  TensorMap values{{"x", tensor(std::vector<float>{0.1f, -0.4f, 0.7f, 0.2f, -0.9f, 0.5f}, {2, 3})},
                   {"w", tensor(std::vector<float>{0.3f, 0.8f, -0.6f, 1.1f, 0.4f, -0.2f}, {2, 3})}};
  const std::vector<Tensor> cotangents = ir::random_cotangents(g, 3);
  ir::ExecutionOptions f64;
  f64.floating_dtype = Dtype::Float64;
  const TensorMap right = ir::execute_with_gradients(g, values, cotangents, f64).gradients;
  TensorMap wrong = right;
  wrong["w"] = right.at("w") * 1.5;
  std::string why;
  EXPECT_TRUE(finite_differences_contradict_reference(g, values, cotangents, wrong, right, why));
  EXPECT_NE(why.find("finite differences"), std::string::npos) << why;
  EXPECT_FALSE(finite_differences_contradict_reference(g, values, cotangents, right, wrong, why));
  EXPECT_FALSE(finite_differences_contradict_reference(g, values, cotangents, right, right, why));
}

}  // namespace
}  // namespace weft::oracle
