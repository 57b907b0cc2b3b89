#pragma once
// Numeric-validity value search: picks values for every input and parameter of a graph so
// that running it on the engine is finite in float32 and in float64, outputs and gradients
// alike. What it returns is what the fuzzer stores as values.safetensors, so that the
// differential oracle never reports a NaN or an infinity that the inputs themselves caused.
//
// The search: seeded initial values that respect each consumer (valid indices, positive
// bases, non-zero integer divisors); then, only when a check fails, signed-gradient (Rprop)
// steps on a loss that grows as hinted ops' inputs leave their finite domain and as values
// grow past a bound; then resampling of the leaves that feed a failing node.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weft/ir/execute.h"
#include "weft/ir/graph.h"
#include "weft/random.h"
#include "weft/tensor.h"

namespace weft::gen {

struct ValueSearchOptions {
  // Same graph, same seed, same options: identical values.
  std::uint64_t seed = 0;
  // Gradient steps in total, over every resample.
  int max_iterations = 120;
  // Gradient steps before a fresh draw (one comes earlier when the count of violations stops
  // falling).
  int steps_per_round = 30;
  // Fresh draws after the first: of the leaf elements the failing terms depend on, or of every
  // leaf behind the failing node when no gradient reaches it.
  int max_resamples = 12;
  // Intermediate values beyond this magnitude are penalised while searching.
  double magnitude_bound = 1e4;
  // The cotangent of each output for the gradient check; empty: ir::random_cotangents(graph, seed).
  std::vector<Tensor> cotangents;
  // Values to start from instead of the first draw (the generator's, which it checked while
  // the graph grew); leaves missing here, or of another type, are drawn.
  ir::TensorMap initial;
};

struct ValueSearchResult {
  // Every input and parameter by name, in its declared dtype.
  ir::TensorMap values;
  // Outputs and gradients are finite in float32 and float64 with `values`.
  bool finite = false;
  // Empty when finite; otherwise what still fails ("node 2 'n' (log): output 0 is not finite
  // in float32") or why the engine refused the values.
  std::string reason;
  int iterations = 0;  // gradient steps taken
  int resamples = 0;   // fresh draws after the first
  int checks = 0;      // float32 + float64 forward-backward checks run
};

ValueSearchResult search_values(const ir::Graph& graph, const ValueSearchOptions& options = {});

// The first draw of the search: floating leaves uniform in their consumer's domain (weights
// scaled by 1/sqrt(fan-in)), integer leaves that reach an index slot inside the indexed dim,
// other integers small and non-zero, bools random.
ir::TensorMap initial_values(const ir::Graph& graph, std::uint64_t seed);

struct FiniteCheck {
  bool finite = false;
  // What is not finite, or the engine's error; empty when finite.
  std::string problem;
  // The first node with a non-finite output, when the forward pass has one.
  std::optional<std::size_t> failing_node;
};

// Runs `graph` forward and backward (with `cotangents`) in float32, then in float64, and says
// whether every output and every gradient of a floating leaf is finite. In-place writes run as
// written except in float64. An engine error is a failed check whose problem is the error.
FiniteCheck check_finite(const ir::Graph& graph, const ir::TensorMap& values,
                         const std::vector<Tensor>& cotangents);

// Where an op is finite (with a finite gradient): a condition on one of its inputs. Used as
// the search's loss; rows live in value_domains.cpp, one per OpKind.
enum class DomainKind {
  Above,         // x > bound
  AwayFromZero,  // |x| > bound
  Below,         // x < bound
  Within,        // |x| < bound
  AwayFromPole,  // |cos x| > bound (tan)
  InsideUnit,    // bound < x < 1 - bound (logit)
};

struct DomainHint {
  std::size_t input;  // the node's input slot
  DomainKind kind;
  double bound;
};

// The hints of `node` of `graph` (empty for ops finite everywhere).
std::vector<DomainHint> domain_hints(const ir::Graph& graph, const ir::Node& node);
// The same before the node exists: by op, and (pow) whether the exponent is floating.
std::vector<DomainHint> domain_hints(ir::OpKind op, bool floating_exponent);

// The same rule for one leaf as if `consumer` (which reads it at `slot`) were its only
// consumer: how the generator gives values to the leaves it creates.
Tensor draw_initial_value(const ir::Graph& graph, const ir::Node& consumer, std::size_t slot,
                          ir::ValueId leaf, ::weft::Generator& gen);

// Whether `x` (an input of a node at `hint.input`) is inside the hint's domain; non-floating
// and empty tensors always are.
bool inside_domain(const DomainHint& hint, const Tensor& x);

}  // namespace weft::gen
