// The judge on cases that draw random numbers (weft/oracle/random_judging.h): LibTorch's draws
// are not the engine's, so what depends on them is judged by shape, dtype, the values the
// sampler may give and the same numbers on every call; what does not depend on them is judged
// as always. Real executions (engine in float64 and float32, LibTorch eager) give no finding;
// perturbed ones give the expected symptom.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "weft/ir/execute.h"
#include "weft/ir/random.h"
#include "weft/ops.h"
#include "weft/oracle/judge.h"
#include "weft/oracle/oracle.h"
#include "weft/oracle/random_judging.h"
#include "weft/oracle/torch_eager.h"

namespace weft::oracle {
namespace {

using ir::Attributes;
using ir::Graph;
using ir::OpKind;
using ir::TensorMap;
using ir::ValueId;

constexpr int kCalls = 3;

struct Case {
  Graph graph;
  TensorMap values;
};

Tensor ramp(const Shape& shape, double start, double step) {
  std::vector<double> v(static_cast<std::size_t>(numel_of(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = start + step * static_cast<double>(i);
  return tensor(v, shape).to(Dtype::Float32);
}

ValueId node(Graph& g, OpKind op, std::vector<ValueId> in, Attributes a, ir::TensorType out) {
  return g.add_node(op, std::move(in), std::move(a), {std::move(out)})[0];
}

// x [3, 4] and w [3, 4]: out0 = dropout(x, 0.3) * w (drawn), out1 = x * w (not drawn; x's
// gradient gets a drawn term from out0), out2 = rand_like(w) (a sampler; w's gradient does not
// flow into it), out3 = randperm(x.size(1)).
Case mixed_case() {
  Case c;
  const ir::TensorType f{Dtype::Float32, {3, 4}};
  const ValueId x = c.graph.add_input("x", f);
  const ValueId w = c.graph.add_parameter("w", f);
  const ValueId dropped =
      node(c.graph, OpKind::Dropout, {x}, Attributes().set("p", 0.3).set("seed", 17), f);
  c.graph.mark_output(node(c.graph, OpKind::Mul, {dropped, w}, {}, f));
  c.graph.mark_output(node(c.graph, OpKind::Mul, {x, w}, {}, f));
  c.graph.mark_output(node(c.graph, OpKind::RandLike, {w}, Attributes().set("seed", 3), f));
  c.graph.mark_output(
      node(c.graph, OpKind::Randperm, {x}, Attributes().set("dim", 1), {Dtype::Int64, {4}}));
  c.values["x"] = ramp({3, 4}, -1.0, 0.17);
  c.values["w"] = ramp({3, 4}, 0.5, -0.09);
  return c;
}

BackendResult run_engine(const Case& c, const std::vector<Tensor>& cotangents, bool float64) {
  BackendResult result;
  result.backend = float64 ? kReferenceBackend : kEngineBackend;
  ir::ExecutionOptions options;
  if (float64) options.floating_dtype = Dtype::Float64;
  for (int k = 0; k < kCalls; ++k) {
    ir::GradientExecution run = ir::execute_with_gradients(c.graph, c.values, cotangents, options);
    result.calls.push_back({run.forward.outputs, run.gradients});
  }
  return result;
}

BackendResult run_torch(const Case& c, const std::vector<Tensor>& cotangents) {
  BackendResult result;
  result.backend = "torch";
  for (int k = 0; k < kCalls; ++k) {
    TorchExecution run = run_torch_eager(c.graph, c.values, cotangents);
    result.calls.push_back({run.outputs, run.gradients});
  }
  return result;
}

struct Runs {
  std::vector<Tensor> cotangents;
  std::vector<BackendResult> results;  // reference, engine, torch
};

Runs run_all(const Case& c) {
  Runs runs;
  runs.cotangents = ir::random_cotangents(c.graph, 5);
  runs.results = {run_engine(c, runs.cotangents, true), run_engine(c, runs.cotangents, false),
                  run_torch(c, runs.cotangents)};
  return runs;
}

Verdict judge_runs(const Case& c, const Runs& runs) {
  return judge(c.graph, runs.results, with_case_rules({}, c.graph, c.values, runs.cotangents));
}

std::string describe(const Verdict& verdict) {
  std::string text;
  for (const Finding& f : verdict.findings) {
    text += std::string(symptom_name(f.symptom)) + " " + f.backend + ": " + f.message + "\n";
  }
  return text;
}

// The float tensor `t` with element `i` set to `value`.
Tensor with_element(const Tensor& t, std::size_t i, double value) {
  std::vector<double> v = t.to_vector<double>();
  v[i] = value;
  return tensor(v, t.sizes()).to(t.dtype());
}

TEST(RandomJudging, DrawnResultsFollowTheDrawsAndTheGradientsThatFlowThroughThem) {
  const Case c = mixed_case();
  const random_judging::DrawnResults drawn = random_judging::drawn_results(c.graph);
  EXPECT_EQ(drawn.outputs, (std::vector<bool>{true, false, true, true}));
  // x's gradient has dropout's mask in it; w's too (out0 = mask * x * w); rand_like takes none.
  EXPECT_EQ(drawn.gradients.count("x"), 1u);
  EXPECT_EQ(drawn.gradients.count("w"), 1u);
  EXPECT_FALSE(drawn.sampler[0].has_value());
  ASSERT_TRUE(drawn.sampler[2].has_value());
  EXPECT_EQ(c.graph.nodes()[*drawn.sampler[2]].op, OpKind::RandLike);

  // Without out0, no gradient flows through a draw: w feeds only rand_like's shape.
  Case pure = c;
  pure.graph.mutable_outputs().erase(pure.graph.mutable_outputs().begin());
  const random_judging::DrawnResults none = random_judging::drawn_results(pure.graph);
  EXPECT_TRUE(none.gradients.empty());
}

TEST(RandomJudging, NodesDrawOnlyWhenTheirAttributesMakeThemDraw) {
  ir::Node node{OpKind::Dropout, {}, {}, Attributes().set("p", 0.3), ""};
  EXPECT_TRUE(ir::draws_random(node));
  node.attrs.set("training", false);
  EXPECT_FALSE(ir::draws_random(node));
  node.attrs = Attributes().set("p", 1.0);
  EXPECT_FALSE(ir::draws_random(node));
  node = {OpKind::Rrelu, {}, {}, Attributes().set("lower", 0.2).set("upper", 0.2), ""};
  EXPECT_FALSE(ir::draws_random(node));
  node.attrs.set("upper", 0.3);
  EXPECT_TRUE(ir::draws_random(node));
  node = {OpKind::Randperm, {}, {}, Attributes(), ""};
  EXPECT_TRUE(ir::draws_random(node));
  EXPECT_FALSE(ir::draws_random(ir::Node{OpKind::Relu, {}, {}, Attributes(), ""}));
}

TEST(RandomJudging, LibTorchDrawingOtherNumbersIsNoFinding) {
  const Case c = mixed_case();
  const Runs runs = run_all(c);
  // LibTorch's draws are its own.
  EXPECT_NE(runs.results[2].calls[0].outputs[2].to_vector<double>(),
            runs.results[1].calls[0].outputs[2].to_vector<double>());
  const Verdict verdict = judge_runs(c, runs);
  EXPECT_FALSE(verdict.bug()) << describe(verdict);
}

TEST(RandomJudging, AValueNotComputedFromADrawIsStillJudged) {
  const Case c = mixed_case();
  Runs runs = run_all(c);
  for (CallResult& call : runs.results[2].calls) {
    call.outputs[1] = with_element(call.outputs[1], 5, call.outputs[1].to_vector<double>()[5] + 1);
  }
  const Verdict verdict = judge_runs(c, runs);
  ASSERT_EQ(verdict.findings.size(), 1u) << describe(verdict);
  EXPECT_EQ(verdict.findings[0].symptom, Symptom::WrongOutput);
  EXPECT_NE(verdict.findings[0].message.find("output 1"), std::string::npos);
}

TEST(RandomJudging, DrawsThatChangeFromCallToCallAreNondeterminism) {
  const Case c = mixed_case();
  Runs runs = run_all(c);
  Tensor& later = runs.results[2].calls[2].outputs[0];
  later = with_element(later, 0, later.to_vector<double>()[0] + 0.5);
  Verdict verdict = judge_runs(c, runs);
  ASSERT_EQ(verdict.findings.size(), 1u) << describe(verdict);
  EXPECT_EQ(verdict.findings[0].symptom, Symptom::Nondeterminism);
  EXPECT_NE(verdict.findings[0].message.find("drawn under the same seed"), std::string::npos)
      << verdict.findings[0].message;

  // A later call's fused graph rounding a drawn gradient otherwise is no other draw (seed 1401:
  // torchscript-nnc's gradient through a dropout mask, 1.5e-7 apart).
  runs = run_all(c);
  Tensor& gradient = runs.results[2].calls[2].gradients.at("w");
  const double g0 = gradient.to_vector<double>()[0];
  gradient = with_element(gradient, 0, g0 + 4e-7 * (std::abs(g0) + 1));
  verdict = judge_runs(c, runs);
  EXPECT_FALSE(verdict.bug()) << describe(verdict);
}

TEST(RandomJudging, ADrawOutsideItsDistributionIsAWrongOutput) {
  const Case c = mixed_case();
  Runs runs = run_all(c);
  for (CallResult& call : runs.results[2].calls)
    call.outputs[2] = with_element(call.outputs[2], 7, 1.0);
  Verdict verdict = judge_runs(c, runs);
  ASSERT_EQ(verdict.findings.size(), 1u) << describe(verdict);
  EXPECT_EQ(verdict.findings[0].symptom, Symptom::WrongOutput);
  EXPECT_NE(verdict.findings[0].message.find("outside [0, 1)"), std::string::npos)
      << verdict.findings[0].message;
  EXPECT_EQ(verdict.findings[0].op, "rand_like");

  runs = run_all(c);
  for (CallResult& call : runs.results[2].calls) {
    call.outputs[3] = tensor(std::vector<std::int64_t>{0, 2, 2, 1}, {4});
  }
  verdict = judge_runs(c, runs);
  ASSERT_EQ(verdict.findings.size(), 1u) << describe(verdict);
  EXPECT_NE(verdict.findings[0].message.find("not a permutation"), std::string::npos)
      << verdict.findings[0].message;
}

TEST(RandomJudging, ADrawnResultOfAnotherShapeIsAShapeMismatch) {
  const Case c = mixed_case();
  Runs runs = run_all(c);
  for (CallResult& call : runs.results[2].calls) call.outputs[0] = zeros({4, 3});
  const Verdict verdict = judge_runs(c, runs);
  ASSERT_EQ(verdict.findings.size(), 1u) << describe(verdict);
  EXPECT_EQ(verdict.findings[0].symptom, Symptom::ShapeMismatch);
}

TEST(RandomJudging, ImpossibleDrawsOfEachSampler) {
  const auto node_of = [](OpKind op, Attributes a) {
    return ir::Node{op, {}, {}, std::move(a), ""};
  };
  const Tensor unit = tensor(std::vector<double>{0.0, 0.5, 0.999}, {3});
  EXPECT_FALSE(random_judging::impossible_draw(node_of(OpKind::Rand, {}), unit));
  EXPECT_TRUE(random_judging::impossible_draw(node_of(OpKind::Rand, {}),
                                              tensor(std::vector<double>{0.2, -0.1}, {2})));
  EXPECT_TRUE(random_judging::impossible_draw(node_of(OpKind::RandnLike, {}),
                                              tensor(std::vector<double>{0.2, NAN}, {2})));
  const ir::Node randint = node_of(OpKind::RandintLike, Attributes().set("low", 1).set("high", 3));
  EXPECT_FALSE(random_judging::impossible_draw(randint, tensor(std::vector<double>{1, 2, 2}, {3})));
  EXPECT_TRUE(random_judging::impossible_draw(randint, tensor(std::vector<double>{1, 3}, {2})));
  EXPECT_TRUE(random_judging::impossible_draw(randint, tensor(std::vector<double>{1.5}, {1})));
  EXPECT_TRUE(random_judging::impossible_draw(node_of(OpKind::Bernoulli, {}),
                                              tensor(std::vector<double>{0, 1, 0.5}, {3})));
  EXPECT_FALSE(random_judging::impossible_draw(node_of(OpKind::Randperm, {}),
                                               tensor(std::vector<std::int64_t>{2, 0, 1}, {3})));
  EXPECT_TRUE(random_judging::impossible_draw(node_of(OpKind::Randperm, {}),
                                              tensor(std::vector<std::int64_t>{2, 0, 3}, {3})));
  // Dropouts and rrelu: no sampler rule (their support depends on the input).
  EXPECT_FALSE(random_judging::impossible_draw(node_of(OpKind::Dropout, {}), unit));
}

}  // namespace
}  // namespace weft::oracle
