// The reducer against planted faults in random 20-node models: it keeps the finding's
// signature (symptom, path, localized op kind) and ends at the faulty node and at most one
// producer; a finding that never shows is reported flaky and nothing is reduced.
#include "weft/reduce/reducer.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <map>
#include <optional>
#include <string>

#include "support/default_suite.h"
#include "weft/gen/generator.h"
#include "weft/ir/inplace.h"
#include "weft/ir/validate.h"
#include "weft/ops.h"
#include "weft/oracle/fault.h"
#include "weft/oracle/oracle.h"

namespace weft::reduce {
namespace {

using oracle::FaultKind;

oracle::WorkerOptions worker_options(double time_limit = 20) {
  oracle::WorkerOptions options;
  options.command = {WEFT_BINARY, "worker"};
  options.time_limit_seconds = time_limit;
  return options;
}

struct Planted {
  ir::Graph graph;
  ir::TensorMap values;
  oracle::Finding finding;
};

oracle::Symptom symptom_of(FaultKind kind) {
  switch (kind) {
    case FaultKind::Crash:
    case FaultKind::Abort:
      return oracle::Symptom::Crash;
    case FaultKind::Hang:
      return oracle::Symptom::Timeout;
    case FaultKind::Throw:
      return oracle::Symptom::ExceptionMismatch;
    case FaultKind::Nan:
      return oracle::Symptom::NanInfMismatch;
    case FaultKind::WrongGradient:
      return oracle::Symptom::WrongGradient;
    case FaultKind::PerturbSmall:
    case FaultKind::PerturbLarge:
    case FaultKind::Recompile:
      return oracle::Symptom::WrongOutput;
  }
  return oracle::Symptom::WrongOutput;
}

// A random 20-node model with a fault planted on the op of one of its nodes (chosen by the
// seed), and the finding the oracle reports for it; nothing when the fault does not show (the
// faulty op's value never reaches an output, say).
std::optional<Planted> plant(gen::Generator& generator, std::uint64_t seed, FaultKind kind,
                             double dynamic_shapes_rate = 0.2,
                             double half_precision_rate = gen::CaseOptions().half_precision_rate,
                             double in_place_rate = gen::CaseOptions().in_place_rate) {
  gen::CaseOptions options;
  options.in_place_rate = in_place_rate;
  options.dynamic_shapes_rate = dynamic_shapes_rate;
  options.half_precision_rate = half_precision_rate;
  options.generator.seed = seed;
  options.generator.nodes = 20;
  const gen::GeneratedCase generated = gen::generate_case(generator, options);
  if (!generated.values.finite || generated.graph.nodes().empty()) return std::nullopt;
  const ir::Graph& graph = generated.graph;
  const ir::Node& node = graph.nodes()[(seed * 7919) % graph.nodes().size()];
  const std::string backend = oracle::fault_backend_name({kind, node.op});
  oracle::OracleOptions oracle_options;
  oracle_options.backends = {backend};
  oracle_options.worker = worker_options();
  oracle::Oracle oracle(oracle_options);
  const oracle::CaseReport report = oracle.check(graph, generated.values.values);
  for (const oracle::Finding& finding : report.verdict.findings) {
    if (finding.backend == backend && finding.symptom == symptom_of(kind)) {
      return Planted{graph, generated.values.values, finding};
    }
  }
  return std::nullopt;
}

// Judges `result` again, in a fresh oracle: does it still show `target`?
bool still_shows(const ReduceResult& result, const oracle::Finding& target) {
  oracle::OracleOptions options;
  options.backends = {target.backend};
  options.worker = worker_options();
  oracle::Oracle oracle(options);
  const oracle::CaseReport report = oracle.check(result.graph, result.values);
  for (const oracle::Finding& finding : report.verdict.findings) {
    if (same_finding(finding, target)) return true;
  }
  return false;
}

ReduceOptions reduce_options(int jobs = 2) {
  ReduceOptions options;
  options.jobs = jobs;
  options.worker = worker_options(10);
  return options;
}

TEST(Reducer, PlantedFaultsIn20NodeModelsReduceToTheFaultyNode) {
  WEFT_SKIP_WHERE_THE_DEFAULT_SUITE_RAN_IT();
  gen::Generator generator;
  const FaultKind kinds[] = {FaultKind::PerturbLarge, FaultKind::Nan, FaultKind::WrongGradient,
                             FaultKind::Throw};
  int planted = 0;
  int small = 0;
  std::map<std::size_t, int> sizes;
  std::map<std::string, int> reduced_by_symptom;
  for (std::uint64_t seed = 1; planted < 50 && seed < 400; ++seed) {
    const FaultKind kind = kinds[seed % 4];
    const std::optional<Planted> p = plant(generator, seed, kind);
    if (!p) continue;
    ++planted;
    const ReduceResult result = reduce_case(p->graph, p->values, p->finding, reduce_options());
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + p->finding.signature);
    ASSERT_EQ(result.status, ReduceStatus::Reduced);
    EXPECT_NO_THROW(ir::validate(result.graph));
    EXPECT_TRUE(same_finding(result.finding, p->finding));
    // Every result still shows the same signature, judged afresh.
    EXPECT_TRUE(still_shows(result, p->finding));
    EXPECT_LE(result.nodes_after, result.nodes_before);
    // No step adds nodes, and the log ends at the result.
    std::size_t nodes = result.nodes_before;
    for (const ReduceStep& step : result.steps) {
      EXPECT_LE(step.nodes, nodes) << step.pass << ": " << step.description;
      nodes = step.nodes;
    }
    EXPECT_EQ(nodes, result.nodes_after);
    ++sizes[result.nodes_after];
    if (result.nodes_after > 2) {
      std::cout << "seed " << seed << " (" << p->finding.signature << ") kept "
                << result.nodes_after << " nodes\n";
    }
    if (result.nodes_after <= 2) {
      ++small;
      ++reduced_by_symptom[std::string(oracle::symptom_name(p->finding.symptom))];
    }
  }
  std::string histogram;
  for (const auto& [nodes, count] : sizes) {
    histogram += std::to_string(nodes) + " nodes: " + std::to_string(count) + "; ";
  }
  std::cout << "planted " << planted << ", reduced to <= 2 nodes: " << small << " (" << histogram
            << ")\n";
  ASSERT_EQ(planted, 50);
  EXPECT_GE(small, 48) << histogram;  // 95 %
  // Every planted symptom was reduced.
  for (const char* symptom :
       {"wrong-output", "nan-inf-mismatch", "wrong-gradient", "exception-mismatch"}) {
    EXPECT_GT(reduced_by_symptom[symptom], 0) << symptom;
  }
}

// A finding that needs none of the case's program forms loses the ones that are only text
// (layouts, nn submodules) and keeps the one that decides the run (forward-only).
TEST(Reducer, FormsTheFindingDoesNotNeedAreDroppedAndForwardOnlyStays) {
  gen::Generator generator;
  int reduced = 0;
  for (std::uint64_t seed = 1; reduced < 3 && seed < 60; ++seed) {
    std::optional<Planted> p = plant(generator, seed, FaultKind::PerturbLarge);
    if (!p) continue;
    p->graph.set_requires_grad(false);
    p->graph.set_nn_modules(true);
    bool laid_out = false;
    for (ir::ValueId id : p->graph.inputs()) {
      ir::Value& leaf = p->graph.mutable_values()[static_cast<std::size_t>(id)];
      if (leaf.type.shape.size() < 2) continue;
      ir::Shape reversed(leaf.type.shape.rbegin(), leaf.type.shape.rend());
      const ir::Shape strides = ir::contiguous_strides(reversed);
      leaf.strides.assign(strides.rbegin(), strides.rend());  // stored transposed
      laid_out = true;
    }
    if (!laid_out) continue;
    ASSERT_NO_THROW(ir::validate(p->graph));
    const ReduceResult result = reduce_case(p->graph, p->values, p->finding, reduce_options());
    SCOPED_TRACE("seed " + std::to_string(seed));
    ASSERT_EQ(result.status, ReduceStatus::Reduced);
    EXPECT_FALSE(result.graph.requires_grad());
    EXPECT_FALSE(result.graph.nn_modules());
    for (ir::ValueId id : result.graph.inputs()) {
      EXPECT_FALSE(result.graph.value(id).has_layout()) << result.graph.value(id).name;
    }
    EXPECT_TRUE(still_shows(result, p->finding));
    ++reduced;
  }
  EXPECT_EQ(reduced, 3);
}

// A planted fault shows in any dtype: the reducer makes a half-precision case float32 (the
// form is one the finding does not need), and the reduced case still shows it.
TEST(Reducer, HalfPrecisionTheFindingDoesNotNeedIsDropped) {
  gen::Generator generator;
  int reduced = 0;
  for (std::uint64_t seed = 1; reduced < 2 && seed < 60; ++seed) {
    std::optional<Planted> p = plant(generator, seed, FaultKind::PerturbLarge, 0.0, 1.0);
    if (!p) continue;
    const std::vector<std::string> forms = ir::program_forms(p->graph);
    if (std::find(forms.begin(), forms.end(), "half-precision") == forms.end()) continue;
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + p->finding.signature);
    const ReduceResult result = reduce_case(p->graph, p->values, p->finding, reduce_options());
    ASSERT_EQ(result.status, ReduceStatus::Reduced);
    for (const ir::Value& value : result.graph.values()) {
      EXPECT_FALSE(is_reduced_floating(value.type.dtype)) << value.name;
    }
    EXPECT_TRUE(still_shows(result, p->finding));
    ++reduced;
  }
  EXPECT_EQ(reduced, 2);
}

// A planted fault does not need the case's in-place writes: the reduced case writes none (no
// "inplace" node, no writeback) and still shows the fault.
TEST(Reducer, InPlaceWritesTheFindingDoesNotNeedAreDropped) {
  gen::Generator generator;
  int reduced = 0;
  for (std::uint64_t seed = 1; reduced < 2 && seed < 60; ++seed) {
    std::optional<Planted> p = plant(generator, seed, FaultKind::PerturbLarge, 0.0, 0.0, 1.0);
    if (!p) continue;
    const std::vector<std::string> forms = ir::program_forms(p->graph);
    if (std::find(forms.begin(), forms.end(), "in-place") == forms.end()) continue;
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + p->finding.signature);
    const ReduceResult result = reduce_case(p->graph, p->values, p->finding, reduce_options());
    ASSERT_EQ(result.status, ReduceStatus::Reduced);
    EXPECT_EQ(ir::count_in_place(result.graph), 0u);
    for (const ir::Node& node : result.graph.nodes()) EXPECT_FALSE(ir::is_writeback(node));
    EXPECT_TRUE(still_shows(result, p->finding));
    ++reduced;
  }
  EXPECT_EQ(reduced, 2);
}

// A bug that shows only once the shapes change keeps the case's shape sets through every pass;
// one that shows at the first shapes loses them.
TEST(Reducer, ADynamicShapeBugKeepsItsShapeSetsAndOthersLoseThem) {
  gen::Generator generator;
  int kept = 0;
  int dropped = 0;
  for (std::uint64_t seed = 1; (kept < 2 || dropped < 1) && seed < 80; ++seed) {
    const bool dynamic_bug = kept < 2;
    std::optional<Planted> p =
        plant(generator, seed, dynamic_bug ? FaultKind::Recompile : FaultKind::PerturbLarge, 1.0);
    if (!p || p->graph.shape_set_count() == 1) continue;
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + p->finding.signature);
    EXPECT_EQ(p->finding.shape_set.has_value(), dynamic_bug);
    const ReduceResult result = reduce_case(p->graph, p->values, p->finding, reduce_options());
    ASSERT_EQ(result.status, ReduceStatus::Reduced);
    EXPECT_NO_THROW(ir::validate(result.graph));
    EXPECT_TRUE(still_shows(result, p->finding));
    if (dynamic_bug) {
      EXPECT_GT(result.graph.shape_set_count(), 1u);
      EXPECT_LE(result.nodes_after, 2u);
      for (ir::ValueId id : result.graph.inputs()) {
        const ir::Value& input = result.graph.value(id);
        for (std::size_t k = 1; k <= input.shape_sets.size(); ++k) {
          EXPECT_EQ(result.values.count(ir::shape_set_key(input.name, k)), 1u) << input.name;
        }
      }
      ++kept;
    } else {
      EXPECT_EQ(result.graph.shape_set_count(), 1u);
      for (const auto& [name, value] : result.values) {
        EXPECT_EQ(name.find('@'), std::string::npos) << name;
      }
      ++dropped;
    }
  }
  EXPECT_EQ(kept, 2);
  EXPECT_EQ(dropped, 1);
}

// Appends gelu -> permute (dims reversed) to the last float32 value of rank >= 2: LibTorch
// 1.13's float32 gelu backward leaves its result unwritten when its incoming gradient is
// permuted, and the workers' junk-filled allocations make that NaN.
bool append_gelu_permute(ir::Graph& graph) {
  std::optional<ir::ValueId> target;
  for (const ir::Node& node : graph.nodes()) {
    for (ir::ValueId id : node.outputs) {
      const ir::TensorType& type = graph.type(id);
      if (type.dtype == Dtype::Float32 && type.shape.size() >= 2 && graph.num_elements(id) > 0)
        target = id;
    }
  }
  if (!target) return false;
  const ir::TensorType type = graph.type(*target);
  const ir::ValueId g = graph.add_node(ir::OpKind::Gelu, {*target}, {}, {type})[0];
  std::vector<std::int64_t> dims(type.shape.size());
  for (std::size_t d = 0; d < dims.size(); ++d)
    dims[d] = static_cast<std::int64_t>(dims.size() - 1 - d);
  const ir::Shape reversed(type.shape.rbegin(), type.shape.rend());
  const ir::ValueId p = graph.add_node(ir::OpKind::Permute, {g}, ir::Attributes().set("dims", dims),
                                       {ir::TensorType{Dtype::Float32, reversed}})[0];
  graph.mark_output(p);
  return true;
}

TEST(Reducer, ARealLibTorchBugReducesToGeluAndPermute) {
  gen::Generator generator;
  for (std::uint64_t seed = 1; seed < 40; ++seed) {
    gen::CaseOptions options;
    options.generator.seed = seed;
    options.generator.nodes = 12;
    gen::GeneratedCase generated = gen::generate_case(generator, options);
    if (!generated.values.finite || !append_gelu_permute(generated.graph)) continue;
    oracle::OracleOptions oracle_options;
    oracle_options.backends = {"torch"};
    oracle_options.worker = worker_options();
    oracle::Oracle oracle(oracle_options);
    const oracle::CaseReport report = oracle.check(generated.graph, generated.values.values);
    const oracle::Finding* bug = nullptr;
    for (const oracle::Finding& finding : report.verdict.findings) {
      if (finding.symptom == oracle::Symptom::NanInfMismatch && finding.op == "permute")
        bug = &finding;
    }
    if (!bug) continue;  // the gelu's gradient did not reach a leaf (an integer path, say)
    const ReduceResult result =
        reduce_case(generated.graph, generated.values.values, *bug, reduce_options());
    ASSERT_EQ(result.status, ReduceStatus::Reduced);
    ASSERT_EQ(result.graph.nodes().size(), 2u) << result.nodes_before << " nodes before";
    EXPECT_EQ(result.graph.nodes()[0].op, ir::OpKind::Gelu);
    EXPECT_EQ(result.graph.nodes()[1].op, ir::OpKind::Permute);
    EXPECT_TRUE(still_shows(result, *bug));
    return;
  }
  FAIL() << "no model showed the bug";
}

TEST(Reducer, CrashesReduceToTheCrashingNode) {
  gen::Generator generator;
  std::optional<Planted> p;
  for (std::uint64_t seed = 100; !p && seed < 140; ++seed)
    p = plant(generator, seed, FaultKind::Crash);
  ASSERT_TRUE(p.has_value());
  const ReduceResult result = reduce_case(p->graph, p->values, p->finding, reduce_options());
  ASSERT_EQ(result.status, ReduceStatus::Reduced);
  EXPECT_EQ(result.finding.symptom, oracle::Symptom::Crash);
  EXPECT_LE(result.nodes_after, 2u);
  EXPECT_TRUE(still_shows(result, p->finding));
}

TEST(Reducer, HangsReduceToTheHangingNode) {
  WEFT_SKIP_WHERE_THE_DEFAULT_SUITE_RAN_IT();
  gen::Generator generator;
  std::optional<Planted> p;
  for (std::uint64_t seed = 150; !p && seed < 190; ++seed) {
    gen::CaseOptions options;
    options.generator.seed = seed;
    options.generator.nodes = 10;
    const gen::GeneratedCase generated = gen::generate_case(generator, options);
    if (!generated.values.finite) continue;
    const ir::Node& node = generated.graph.nodes()[seed % generated.graph.nodes().size()];
    const std::string backend = oracle::fault_backend_name({FaultKind::Hang, node.op});
    oracle::OracleOptions oracle_options;
    oracle_options.backends = {backend};
    oracle_options.worker = worker_options(1);
    oracle::Oracle oracle(oracle_options);
    const oracle::CaseReport report = oracle.check(generated.graph, generated.values.values);
    for (const oracle::Finding& finding : report.verdict.findings) {
      if (finding.symptom == oracle::Symptom::Timeout) {
        p = Planted{generated.graph, generated.values.values, finding};
      }
    }
  }
  ASSERT_TRUE(p.has_value());
  ReduceOptions options = reduce_options();
  options.hang_time_limit_seconds = 1;  // every candidate that still hangs costs this
  const ReduceResult result = reduce_case(p->graph, p->values, p->finding, options);
  ASSERT_EQ(result.status, ReduceStatus::Reduced);
  EXPECT_EQ(result.finding.symptom, oracle::Symptom::Timeout);
  EXPECT_LE(result.nodes_after, 2u);
}

TEST(Reducer, ShapesTiedByAReshapesTargetShrinkWithTheSpecs) {
  // A planted fault on reshape(x[4, 6] -> [3, 8]): narrowing x alone breaks the target, so
  // only solving the graph's shapes again (x [1, 1], target [1, 1]) can shrink it.
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", ir::TensorType{Dtype::Float32, {4, 6}});
  graph.mark_output(graph.add_node(ir::OpKind::Reshape, {x}, ir::Attributes().set("shape", {3, 8}),
                                   {ir::TensorType{Dtype::Float32, {3, 8}}})[0]);
  std::vector<double> values(24);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.25 * static_cast<double>(i) - 2;
  ir::TensorMap leaves{{"x", tensor(values, {4, 6}).to(Dtype::Float32)}};
  const std::string backend =
      oracle::fault_backend_name({FaultKind::PerturbLarge, ir::OpKind::Reshape});
  oracle::OracleOptions oracle_options;
  oracle_options.backends = {backend};
  oracle_options.worker = worker_options();
  oracle::Oracle oracle(oracle_options);
  const oracle::CaseReport report = oracle.check(graph, leaves);
  ASSERT_EQ(report.verdict.findings.size(), 1u);
  const ReduceResult result =
      reduce_case(graph, leaves, report.verdict.findings[0], reduce_options());
  ASSERT_EQ(result.status, ReduceStatus::Reduced);
  ASSERT_EQ(result.graph.nodes().size(), 1u);
  EXPECT_EQ(result.elements_after, 1u);
  EXPECT_EQ(result.graph.nodes()[0].attrs.get_ints("shape"), (std::vector<std::int64_t>{1, 1}));
  bool solved = false;
  for (const ReduceStep& step : result.steps) {
    solved = solved || step.description.rfind("solved with the specs", 0) == 0;
  }
  EXPECT_TRUE(solved) << "no step solved the shapes with the specs";
  EXPECT_TRUE(still_shows(result, report.verdict.findings[0]));
}

TEST(Reducer, ParallelJobsGiveTheSameResult) {
  gen::Generator generator;
  std::optional<Planted> p;
  for (std::uint64_t seed = 200; !p && seed < 240; ++seed) {
    p = plant(generator, seed, FaultKind::PerturbLarge);
  }
  ASSERT_TRUE(p.has_value());
  const ReduceResult one = reduce_case(p->graph, p->values, p->finding, reduce_options(1));
  const ReduceResult two = reduce_case(p->graph, p->values, p->finding, reduce_options(2));
  ASSERT_EQ(one.status, ReduceStatus::Reduced);
  EXPECT_EQ(one.graph, two.graph);
  ASSERT_EQ(one.steps.size(), two.steps.size());
  for (std::size_t k = 0; k < one.steps.size(); ++k) {
    EXPECT_EQ(one.steps[k].description, two.steps[k].description);
  }
}

TEST(Reducer, AFindingThatNeverShowsIsFlakyAndNothingIsReduced) {
  gen::Generator generator;
  gen::CaseOptions options;
  options.generator.seed = 7;
  options.generator.nodes = 8;
  options.generator.exclude = {ir::OpKind::Relu};
  const gen::GeneratedCase generated = gen::generate_case(generator, options);
  // A fault on relu, in a model without relu: the finding cannot show.
  oracle::Finding ghost;
  ghost.symptom = oracle::Symptom::WrongOutput;
  ghost.backend = oracle::fault_backend_name({FaultKind::PerturbLarge, ir::OpKind::Relu});
  ghost.op = "relu";
  const ReduceResult result =
      reduce_case(generated.graph, generated.values.values, ghost, reduce_options());
  EXPECT_EQ(result.status, ReduceStatus::Flaky);
  EXPECT_EQ(result.graph, generated.graph);
  EXPECT_TRUE(result.steps.empty());
  EXPECT_EQ(result.oracle_checks, 2);  // the original, judged twice
}

TEST(Reducer, ASpentBudgetKeepsTheSmallestCaseThatShowedTheFinding) {
  gen::Generator generator;
  std::optional<Planted> p;
  for (std::uint64_t seed = 300; !p && seed < 340; ++seed) {
    p = plant(generator, seed, FaultKind::PerturbLarge);
  }
  ASSERT_TRUE(p.has_value());
  ReduceOptions options = reduce_options(1);
  options.budget_seconds = 1e-9;
  const ReduceResult result = reduce_case(p->graph, p->values, p->finding, options);
  EXPECT_EQ(result.status, ReduceStatus::Reduced);
  EXPECT_TRUE(result.budget_exhausted);
  EXPECT_EQ(result.graph, p->graph);  // nothing was accepted, and the original shows the bug
  EXPECT_TRUE(still_shows(result, p->finding));
}

}  // namespace
}  // namespace weft::reduce
