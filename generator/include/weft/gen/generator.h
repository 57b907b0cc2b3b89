#pragma once
// Random models that are valid by construction. Each step inserts one op: forward (the op
// consumes values of the graph, fresh leaves fill its other inputs) or backward (the op
// produces a value that a fresh input stood for, and its own inputs become fresh leaves). The
// op's attributes and shapes come from its spec (weft/gen/spec.h): random draws checked by the
// integer reading of the rule, Z3 on the same rule when the draws keep failing. The graph
// carries concrete values as it grows (check_values): each new node runs at once, and one
// that leaves its op's finite domain is undone, so that models without finite values are
// rarely made at all.
//
// The same options (seed included) give the same graph, byte for byte once saved.

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "weft/dtype.h"
#include "weft/gen/value_search.h"
#include "weft/ir/graph.h"
#include "weft/ir/op_kind.h"

namespace weft::gen {

struct GeneratorOptions {
  std::uint64_t seed = 0;
  int nodes = 10;
  // The ops to draw from (empty: every op with a spec), minus `exclude`.
  std::vector<ir::OpKind> ops;
  std::vector<ir::OpKind> exclude;
  // Dtypes of fresh data leaves, drawn uniformly among those an op accepts.
  std::vector<Dtype> dtypes{Dtype::Float32};
  int max_rank = 5;
  std::int64_t max_dim = 64;
  std::int64_t max_elements = 65536;
  // Probability that an insertion is backward (replaces a placeholder input).
  double backward_rate = 0.3;
  // Rate of edge cases: size-0 dims, rank-0 tensors, int/bool values, graphs without inputs,
  // attributes far from the usual. 0 turns them off.
  double edge_rate = 0.05;
  // The share of their draws that random ops (dropouts, rand_like, ...; weft/ir/random.h) keep:
  // what they feed is judged by its properties only, so they come at a lower rate than the
  // others (a redraw otherwise), unless the op list holds nothing else.
  double random_op_rate = 0.3;
  // Random draws per insertion attempt before Z3 is asked.
  int samples_per_attempt = 32;
  // Share of backward insertion attempts that call Z3 when sampling fails (forward ones always do).
  double backward_z3_rate = 0.5;
  // Z3's budget per check: a resource limit (about 100 ms of this machine's Z3, where the
  // largest check of 200 12-node models took 1304 units), so that a seed draws the same graph
  // on a loaded machine; the time limit only guards against the pathological. A wall-clock
  // limit of 100 ms alone made generation depend on load (CI's OracleAgreement run).
  unsigned z3_rlimit = 100000;
  unsigned z3_timeout_ms = 10000;
  // Insertion attempts per requested node before generation gives up (it then returns the
  // graph it has, with fewer nodes). 40 since the op list grew to 136 ops: with 20, one seed
  // in a thousand (seed 918, 5 nodes, size-0 dims) ran out; a seed that succeeds sooner draws
  // the same graph either way.
  int attempts_per_node = 40;
  // Value-aware generation: leaves get values as they are created (the value search's first
  // draw rule) and every inserted node runs on the engine at once; an insertion whose inputs
  // leave the op's finite domain, or whose outputs are not finite or exceed `value_bound`, is
  // undone. The values come back with the graph, and generate_case starts its search there.
  bool check_values = true;
  double value_bound = 1e4;
  // (op, dtype of its first input) combinations to leave out: the capability gaps of the
  // PyTorch under test (weft fuzz learns them at start, like NNSmith's auto_opset), which
  // would only be refused there.
  std::vector<std::pair<ir::OpKind, Dtype>> avoid;
};

struct GenerationStats {
  std::int64_t attempts = 0;
  std::int64_t forward_insertions = 0;
  std::int64_t backward_insertions = 0;
  std::int64_t rule_samples = 0;
  std::int64_t z3_calls = 0;
  std::int64_t z3_sat = 0;
  std::int64_t z3_unsat = 0;
  std::int64_t z3_timeouts = 0;
  // Insertions undone because of their values (check_values).
  std::int64_t value_rejections = 0;
  double seconds = 0;
};

struct Generated {
  ir::Graph graph;
  GenerationStats stats;
  // With check_values: every input and parameter by name, values with which each node's
  // inputs are inside its domain and its outputs finite and bounded. Empty otherwise, or when
  // the engine refused a node (the value search then draws and reports the refusal).
  ir::TensorMap values;
};

// Holds one Z3 context and solver for all the models it generates (reset per model, so each
// model depends only on its options).
class Generator {
 public:
  Generator();
  ~Generator();
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  // Throws weft::Error for options no model can satisfy (no usable op, bad bounds).
  Generated generate(const GeneratorOptions& options);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A model with its values: generated, then given values by the value search. When no finite
// values exist (the graph computes log of a value that is never positive, say), the model is
// generated again from a seed derived from the first, up to `max_regenerations` times; the
// last attempt is returned, marked not finite, when every one fails.
struct CaseOptions {
  GeneratorOptions generator;
  ValueSearchOptions search;  // its seed is replaced by the model's
  int max_regenerations = 4;
  // Program forms, drawn per case from the seed (0 turns one off): forward-only cases (no leaf
  // requires a gradient; their fresh leaves are int64 or bool as often as float32 where the
  // generator draws only float32), nn-module emission (ir::Graph::nn_modules), and
  // non-contiguous inputs (each input of a chosen case, at half that rate: transposed,
  // sliced with a step and an offset, expanded along a dim, or channels_last).
  double forward_only_rate = 0.2;
  double nn_modules_rate = 0.3;
  double layout_rate = 0.25;
  // Dynamic shapes: the share of cases that carry later input shape sets (the same program at
  // other shapes, from Z3; every path is called with each without being rebuilt).
  double dynamic_shapes_rate = 0.2;
  // Half precision: the share of cases whose floating leaves are float16 or bfloat16 (half
  // each) instead of float32, a third of them with float32 leaves beside (mixed graphs).
  double half_precision_rate = 0.12;
  // In-place writes (weft/ir/inplace.h): the share of cases given writes into fresh values and
  // through slices and selects of them, and nodes marked to run in place.
  double in_place_rate = 0.2;
};

struct GeneratedCase {
  ir::Graph graph;
  ValueSearchResult values;
  GenerationStats stats;  // of the returned model
  int regenerations = 0;
  double generation_seconds = 0;  // all attempts
  double search_seconds = 0;
};

GeneratedCase generate_case(Generator& generator, const CaseOptions& options);

}  // namespace weft::gen
