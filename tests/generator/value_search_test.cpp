// The value search: values that make hand-built graphs finite in float32 and float64
// (outputs and gradients), valid indices, determinism, honest failure on graphs that no
// values can fix, and a sweep over the single-op sample cases of every op.
#include "weft/gen/value_search.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "support/op_cases.h"
#include "weft/ir/execute.h"
#include "weft/ir/graph.h"
#include "weft/ir/op_kind.h"
#include "weft/ops.h"

namespace weft {
namespace {

using ir::Attributes;
using ir::OpKind;
using ir::ValueId;

// Builds graphs by hand; output types come from running each node on sample tensors.
class Builder {
 public:
  ValueId input(const std::string& name, Dtype dtype, const ir::Shape& shape) {
    return remember(graph.add_input(name, {dtype, shape}));
  }
  ValueId param(const std::string& name, Dtype dtype, const ir::Shape& shape) {
    return remember(graph.add_parameter(name, {dtype, shape}));
  }
  ValueId node(OpKind op, const std::vector<ValueId>& inputs, Attributes attrs = {}) {
    std::vector<Tensor> in;
    for (ValueId id : inputs) in.push_back(samples_[static_cast<std::size_t>(id)]);
    const ir::Node probe{op, inputs, {}, attrs, ""};
    const std::vector<Tensor> out = ir::run_node(probe, in);
    std::vector<ir::TensorType> types;
    for (const Tensor& t : out) types.push_back({t.dtype(), t.sizes()});
    const std::vector<ValueId> ids = graph.add_node(op, inputs, attrs, types);
    samples_.resize(graph.values().size());
    for (std::size_t k = 0; k < ids.size(); ++k)
      samples_[static_cast<std::size_t>(ids[k])] = out[k];
    return ids[0];
  }
  void output(ValueId id) { graph.mark_output(id); }

  ir::Graph graph;

 private:
  ValueId remember(ValueId id) {
    const ir::TensorType& type = graph.type(id);
    samples_.resize(graph.values().size());
    // Ones are inside every op's domain, divisors included, and valid indices here.
    samples_[static_cast<std::size_t>(id)] = ones(type.shape, dtype(type.dtype));
    return id;
  }
  std::vector<Tensor> samples_;
};

bool finite(const Tensor& t) {
  if (!t.is_floating_point()) return true;
  for (double x : t.to_vector<double>()) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

// Checks independently of the search that outputs and gradients are finite in both dtypes.
void expect_finite_everywhere(const ir::Graph& graph, const ir::TensorMap& values,
                              std::uint64_t cotangent_seed) {
  const std::vector<Tensor> cotangents = ir::random_cotangents(graph, cotangent_seed);
  for (Dtype d : {Dtype::Float32, Dtype::Float64}) {
    ir::ExecutionOptions options;
    options.floating_dtype = d;
    const ir::GradientExecution run =
        ir::execute_with_gradients(graph, values, cotangents, options);
    for (std::size_t i = 0; i < run.forward.outputs.size(); ++i) {
      EXPECT_TRUE(finite(run.forward.outputs[i])) << "output " << i << " in " << dtype_name(d);
    }
    for (const auto& [name, g] : run.gradients) {
      EXPECT_TRUE(finite(g)) << "gradient of " << name << " in " << dtype_name(d);
    }
  }
}

void expect_declared_types(const ir::Graph& graph, const ir::TensorMap& values) {
  for (ir::LeafKind kind : {ir::LeafKind::Input, ir::LeafKind::Parameter}) {
    for (ValueId id : graph.leaves(kind)) {
      const ir::Value& leaf = graph.value(id);
      ASSERT_TRUE(values.count(leaf.name)) << leaf.name;
      EXPECT_EQ(values.at(leaf.name).dtype(), leaf.type.dtype) << leaf.name;
      EXPECT_EQ(values.at(leaf.name).sizes(), leaf.type.shape) << leaf.name;
    }
  }
}

// Searches, then checks the result without trusting the search.
gen::ValueSearchResult search_and_verify(const ir::Graph& graph, std::uint64_t seed = 1) {
  gen::ValueSearchOptions options;
  options.seed = seed;
  gen::ValueSearchResult result = gen::search_values(graph, options);
  EXPECT_TRUE(result.finite) << result.reason;
  EXPECT_TRUE(result.reason.empty());
  expect_declared_types(graph, result.values);
  if (result.finite) expect_finite_everywhere(graph, result.values, seed ^ 0x5eed);
  return result;
}

// The search's first draw fails the check, so the finite result is the search's doing.
void expect_first_draw_fails(const ir::Graph& graph, std::uint64_t seed = 1) {
  const gen::FiniteCheck check = gen::check_finite(graph, gen::initial_values(graph, seed),
                                                   ir::random_cotangents(graph, seed));
  EXPECT_FALSE(check.finite);
  EXPECT_FALSE(check.problem.empty());
}

TEST(ValueSearch, GraphFiniteAtFirstDrawCostsOneCheckAndNoSteps) {
  Builder b;
  const ValueId x = b.input("x", Dtype::Float32, {4, 8});
  const ValueId w = b.param("w", Dtype::Float32, {16, 8});
  const ValueId bias = b.param("b", Dtype::Float32, {16});
  b.output(b.node(OpKind::Tanh, {b.node(OpKind::Linear, {x, w, bias})}));
  const gen::ValueSearchResult r = search_and_verify(b.graph);
  EXPECT_EQ(r.checks, 1);
  EXPECT_EQ(r.iterations, 0);
  EXPECT_EQ(r.resamples, 0);
}

TEST(ValueSearch, LogOfDifferenceIsPushedPositive) {
  Builder b;
  const ValueId x = b.input("x", Dtype::Float32, {4, 5});
  const ValueId y = b.input("y", Dtype::Float32, {4, 5});
  b.output(b.node(OpKind::Log, {b.node(OpKind::Sub, {x, y})}));
  expect_first_draw_fails(b.graph);
  const gen::ValueSearchResult r = search_and_verify(b.graph);
  EXPECT_GT(r.iterations, 0);
  const std::vector<double> xs = r.values.at("x").to_vector<double>();
  const std::vector<double> ys = r.values.at("y").to_vector<double>();
  for (std::size_t i = 0; i < xs.size(); ++i) EXPECT_GT(xs[i] - ys[i], 0.0);
}

TEST(ValueSearch, SqrtOfInputIsDrawnInsideItsDomain) {
  Builder b;
  b.output(b.node(OpKind::Sqrt, {b.input("x", Dtype::Float64, {3, 4})}));
  const gen::ValueSearchResult r = search_and_verify(b.graph);
  EXPECT_EQ(r.iterations, 0);
  for (double v : r.values.at("x").to_vector<double>()) EXPECT_GT(v, 0.0);
}

TEST(ValueSearch, SqrtOfDifferenceWithGradientIsFinite) {
  Builder b;
  const ValueId x = b.input("x", Dtype::Float32, {6, 3});
  const ValueId y = b.param("y", Dtype::Float32, {3});
  b.output(b.node(OpKind::Sqrt, {b.node(OpKind::Sub, {x, y})}));
  expect_first_draw_fails(b.graph);
  search_and_verify(b.graph);
}

TEST(ValueSearch, DivisionByAnInputOrADifferenceIsFinite) {
  Builder b;
  const ValueId x = b.input("x", Dtype::Float32, {4, 4});
  const ValueId y = b.input("y", Dtype::Float32, {4, 4});
  const ValueId z = b.input("z", Dtype::Float32, {4});
  b.output(b.node(OpKind::Div, {x, y}));
  b.output(b.node(OpKind::Reciprocal, {b.node(OpKind::Sub, {y, z})}));
  search_and_verify(b.graph);
  const gen::ValueSearchResult r = search_and_verify(b.graph, 7);
  for (double v : r.values.at("y").to_vector<double>()) EXPECT_GT(std::fabs(v), 0.0);
}

TEST(ValueSearch, AsinOfTripledInputStaysInsideUnitInterval) {
  Builder b;
  const ValueId x = b.input("x", Dtype::Float32, {16});
  const ValueId two_x = b.node(OpKind::Add, {x, x});
  b.output(b.node(OpKind::Asin, {b.node(OpKind::Add, {two_x, x})}));
  expect_first_draw_fails(b.graph);
  const gen::ValueSearchResult r = search_and_verify(b.graph);
  for (double v : r.values.at("x").to_vector<double>()) EXPECT_LT(std::fabs(3.0 * v), 1.0);
}

TEST(ValueSearch, ExpOfScaledInputDoesNotOverflowFloat32) {
  Builder b;
  ValueId v = b.input("x", Dtype::Float32, {16});
  for (int i = 0; i < 7; ++i) v = b.node(OpKind::Add, {v, v});  // 128 x
  b.output(b.node(OpKind::Exp, {v}));
  expect_first_draw_fails(b.graph);
  search_and_verify(b.graph);
}

TEST(ValueSearch, PowWithFloatAndIntegerExponentsIsFinite) {
  Builder b;
  const ValueId x = b.input("x", Dtype::Float32, {3, 4});
  const ValueId y = b.input("y", Dtype::Float32, {3, 4});
  const ValueId e = b.param("e", Dtype::Float32, {4});
  const ValueId k = b.input("k", Dtype::Int64, {4});
  b.output(b.node(OpKind::Pow, {b.node(OpKind::Sub, {x, y}), e}));
  b.output(b.node(OpKind::Pow, {y, k}));
  expect_first_draw_fails(b.graph);
  const gen::ValueSearchResult r = search_and_verify(b.graph);
  for (std::int64_t v : r.values.at("k").to_vector<std::int64_t>()) EXPECT_GE(v, 0);
}

TEST(ValueSearch, IndexInputsAreValidForTheirConsumers) {
  Builder b;
  const ValueId ids = b.input("ids", Dtype::Int64, {2, 3});
  const ValueId table = b.param("table", Dtype::Float32, {5, 4});
  const ValueId x = b.input("x", Dtype::Float32, {3, 4});
  const ValueId gather_index = b.input("gather_index", Dtype::Int64, {3, 6});
  const ValueId rows = b.input("rows", Dtype::Int32, {7});
  const ValueId flat_ids = b.input("flat_ids", Dtype::Int64, {6});
  b.output(b.node(OpKind::Embedding, {ids, table}));
  b.output(b.node(OpKind::Gather, {x, gather_index}, Attributes().set("dim", 1)));
  b.output(b.node(OpKind::IndexSelect, {x, rows}, Attributes().set("dim", -2)));
  // Indices that reach the embedding through a reshape.
  const ValueId reshaped = b.node(OpKind::Reshape, {flat_ids}, Attributes().set("shape", {3, 2}));
  b.output(b.node(OpKind::Embedding, {reshaped, table}));
  const gen::ValueSearchResult r = search_and_verify(b.graph);
  auto expect_in = [&](const std::string& name, std::int64_t bound) {
    for (std::int64_t v : r.values.at(name).to_vector<std::int64_t>()) {
      EXPECT_GE(v, 0) << name;
      EXPECT_LT(v, bound) << name;
    }
  };
  expect_in("ids", 5);
  expect_in("gather_index", 4);
  expect_in("rows", 3);
  expect_in("flat_ids", 5);
}

TEST(ValueSearch, IntegerDivisorsAreNotZero) {
  Builder b;
  const ValueId a = b.input("a", Dtype::Int64, {4, 4});
  const ValueId d = b.input("d", Dtype::Int64, {4, 4});
  b.output(b.node(OpKind::Div, {a, d}, Attributes().set("rounding_mode", "floor")));
  const gen::ValueSearchResult r = search_and_verify(b.graph);
  for (std::int64_t v : r.values.at("d").to_vector<std::int64_t>()) EXPECT_NE(v, 0);
}

TEST(ValueSearch, ChainOfTenMixedOpsIsFinite) {
  Builder b;
  const ValueId x = b.input("x", Dtype::Float32, {4, 6});
  const ValueId w = b.param("w", Dtype::Float32, {6, 6});
  const ValueId y = b.input("y", Dtype::Float32, {4, 6});
  const ValueId h = b.node(OpKind::Matmul, {x, w});                       // 1
  const ValueId t = b.node(OpKind::Tanh, {h});                            // 2
  const ValueId d = b.node(OpKind::Sub, {t, y});                          // 3
  const ValueId l = b.node(OpKind::Log, {d});                             // 4
  const ValueId e = b.node(OpKind::Exp, {b.node(OpKind::Mul, {l, y})});   // 5, 6
  const ValueId s = b.node(OpKind::Sqrt, {b.node(OpKind::Relu, {d})});    // 7, 8
  const ValueId q = b.node(OpKind::Div, {e, s});                          // 9
  b.output(b.node(OpKind::LogSoftmax, {q}, Attributes().set("dim", 1)));  // 10
  expect_first_draw_fails(b.graph);
  search_and_verify(b.graph);
  search_and_verify(b.graph, 2);
  search_and_verify(b.graph, 3);
}

ir::Graph graph_that_needs_search() {
  Builder b;
  const ValueId x = b.input("x", Dtype::Float32, {4, 5});
  const ValueId y = b.input("y", Dtype::Float32, {5});
  const ValueId k = b.input("k", Dtype::Int64, {4});
  const ValueId table = b.param("table", Dtype::Float32, {4, 5});
  const ValueId rows = b.node(OpKind::Embedding, {k, table});
  b.output(b.node(OpKind::Log, {b.node(OpKind::Sub, {b.node(OpKind::Add, {x, rows}), y})}));
  return b.graph;
}

TEST(ValueSearch, SameSeedGivesIdenticalValues) {
  const ir::Graph graph = graph_that_needs_search();
  gen::ValueSearchOptions options;
  options.seed = 42;
  const gen::ValueSearchResult a = gen::search_values(graph, options);
  const gen::ValueSearchResult b = gen::search_values(graph, options);
  ASSERT_TRUE(a.finite) << a.reason;
  EXPECT_EQ(a.iterations, b.iterations);
  ASSERT_EQ(a.values.size(), b.values.size());
  for (const auto& [name, value] : a.values) {
    EXPECT_EQ(value.to_vector<double>(), b.values.at(name).to_vector<double>()) << name;
  }
  options.seed = 43;
  const gen::ValueSearchResult c = gen::search_values(graph, options);
  EXPECT_NE(a.values.at("x").to_vector<double>(), c.values.at("x").to_vector<double>());
}

TEST(ValueSearch, LogOfZeroReportsFailureWithinBudget) {
  Builder b;
  const ValueId x = b.input("x", Dtype::Float32, {3});
  b.output(b.node(OpKind::Log, {b.node(OpKind::Sub, {x, x})}));
  gen::ValueSearchOptions options;
  const gen::ValueSearchResult r = gen::search_values(b.graph, options);
  EXPECT_FALSE(r.finite);
  EXPECT_NE(r.reason.find("log"), std::string::npos) << r.reason;
  EXPECT_LE(r.iterations, options.max_iterations);
  EXPECT_LE(r.resamples, options.max_resamples);
  expect_declared_types(b.graph, r.values);
}

TEST(ValueSearch, EveryOpHasHintsThatNameItsOwnInputs) {
  // Every row of the table answers (the switch has no default) and names an existing slot
  // of a node with the schema's largest input count.
  for (OpKind op : ir::kAllOps) {
    Builder b;
    const ValueId x = b.input("x", Dtype::Float32, {2});
    ir::Node node{op, {x, x, x, x, x}, {}, {}, ""};
    for (const gen::DomainHint& hint : gen::domain_hints(b.graph, node)) {
      EXPECT_LT(hint.input, node.inputs.size()) << ir::op_name(op);
    }
  }
}

// Random chains of ops with poles, narrow domains and overflow, over shared inputs: the
// search's real work (the single-op cases are nearly all finite at the first draw). Some
// chains have no finite values at all (asin(cosh(x)), log(x - x)), so the bar is lower.
TEST(ValueSearch, RandomChainsOfDomainLimitedOpsAreMostlyMadeFinite) {
  const std::vector<OpKind> unary{OpKind::Exp,   OpKind::Log,        OpKind::Log2,    OpKind::Sqrt,
                                  OpKind::Rsqrt, OpKind::Reciprocal, OpKind::Tan,     OpKind::Asin,
                                  OpKind::Acos,  OpKind::Sinh,       OpKind::Cosh,    OpKind::Tanh,
                                  OpKind::Relu,  OpKind::Floor,      OpKind::Sigmoid, OpKind::Neg};
  const std::vector<OpKind> binary{OpKind::Add, OpKind::Sub, OpKind::Mul,
                                   OpKind::Div, OpKind::Pow, OpKind::Maximum};
  std::mt19937_64 rng(12345);
  auto pick = [&rng](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const int graphs = 300;
  int finite_graphs = 0;
  int searched = 0;
  long steps = 0;
  double seconds = 0.0;
  std::vector<std::string> failures;
  for (int g = 0; g < graphs; ++g) {
    Builder b;
    std::vector<ValueId> vals{b.input("x", Dtype::Float32, {4, 5}),
                              b.input("y", Dtype::Float32, {4, 5}),
                              b.param("w", Dtype::Float32, {5})};
    const int length = 6 + static_cast<int>(pick(7));
    for (int i = 0; i < length; ++i) {
      const ValueId a = vals[vals.size() - 1 - pick(std::min<std::size_t>(vals.size(), 3))];
      if (rng() % 2 == 0) {
        vals.push_back(b.node(unary[pick(unary.size())], {a}));
      } else {
        vals.push_back(b.node(binary[pick(binary.size())], {a, vals[pick(vals.size())]}));
      }
    }
    b.output(vals.back());
    b.output(vals[3 + pick(vals.size() - 3)]);
    gen::ValueSearchOptions options;
    options.seed = static_cast<std::uint64_t>(g);
    const auto start = std::chrono::steady_clock::now();
    const gen::ValueSearchResult r = gen::search_values(b.graph, options);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    steps += r.iterations;
    if (r.checks > 1) ++searched;
    if (r.finite) {
      ++finite_graphs;
      expect_finite_everywhere(b.graph, r.values, options.seed);
    } else {
      failures.push_back(std::to_string(g) + ": " + r.reason);
    }
  }
  const double rate = static_cast<double>(finite_graphs) / graphs;
  std::cout << "random chains: " << finite_graphs << "/" << graphs << " finite (" << 100.0 * rate
            << "%), " << searched << " needed the search, " << static_cast<double>(steps) / graphs
            << " steps and " << 1e3 * seconds / graphs << " ms per graph\n";
  for (const std::string& f : failures) std::cout << "  not finite: " << f << "\n";
  EXPECT_GE(rate, 0.85);
}

TEST(ValueSearch, SweepOfEverySingleOpCaseIsFiniteInAtLeast99Percent) {
  int total = 0;
  int finite_cases = 0;
  int first_draw = 0;
  double seconds = 0.0;
  std::vector<std::string> failures;
  for (OpKind op : ir::kAllOps) {
    for (const testing::OpCase& c : testing::op_cases(op, Dtype::Float32)) {
      if (!c.engine_error.empty()) continue;  // an engine bug, judged by the engine sweep
      gen::ValueSearchOptions options;
      options.seed = testing::label_seed(c.label);
      const auto start = std::chrono::steady_clock::now();
      const gen::ValueSearchResult r = gen::search_values(c.graph, options);
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      ++total;
      if (r.finite) {
        ++finite_cases;
        if (r.checks == 1) ++first_draw;
        expect_finite_everywhere(c.graph, r.values, options.seed);
      } else {
        failures.push_back(c.label + ": " + r.reason);
      }
    }
  }
  ASSERT_GT(total, 0);
  const double rate = static_cast<double>(finite_cases) / total;
  std::cout << "value search sweep: " << finite_cases << "/" << total << " finite (" << 100.0 * rate
            << "%), " << first_draw << " at the first draw, mean " << 1e3 * seconds / total
            << " ms per graph\n";
  for (const std::string& f : failures) std::cout << "  not finite: " << f << "\n";
  EXPECT_GE(rate, 0.99);
}

}  // namespace
}  // namespace weft
