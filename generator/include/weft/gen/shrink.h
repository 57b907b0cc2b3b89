#pragma once
// Smaller shapes for a whole graph, solved with the generator's specs (the reducer's shape
// pass). Every node's shape rule is encoded for Z3 with its dims shared between the node that
// makes a value and those that read it; the node's other choices (its attributes, ranks,
// permutations, which dims a reshape merges) stay as they are, found again by replaying the
// rule on random draws until it gives the node back; the attributes that follow from shapes
// (a reshape's target) are derived again from the solution.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "weft/ir/graph.h"

namespace weft::gen {

struct ShrinkOptions {
  // Random draws tried per node to find the choices that made it.
  int recovery_attempts = 20000;
  // Z3's resource limit per check (deterministic), and a time limit that only guards against
  // the pathological.
  unsigned z3_rlimit = 2000000;
  unsigned z3_timeout_ms = 10000;
  std::uint64_t seed = 1;
};

// One solution: the leaves whose shapes change (each dim at most what it was) and every
// node's attributes, in node order.
struct ShrunkGraph {
  std::string goal;  // "smallest" (dims of 1 where possible) or "halved"
  std::map<ir::ValueId, ir::Shape> leaf_shapes;
  std::vector<ir::Shape> value_shapes;  // every value's, by id, as the rules derive them
  std::vector<ir::Attributes> node_attributes;
};

struct ShrinkResult {
  std::vector<ShrunkGraph> proposals;  // the smallest first; none when nothing shrinks
  // Nodes whose choices were not found (no spec, or no draw gave the node back): their inputs
  // and outputs keep their shapes.
  std::vector<std::size_t> kept_nodes;
};

ShrinkResult shrink_shapes(const ir::Graph& graph, const ShrinkOptions& options = {});

// Dynamic shapes: other models of the same shape problem for the same program. Every node's
// rule holds with its attributes and other choices exactly as they are (so the emitted program
// does not change), parameters keep their shapes, and the inputs' dims move where the rules
// let them: the first set wishes each dim one larger, the second one smaller (two larger for
// dims under 3). Each proposal's leaf_shapes hold the inputs that change; at most `count`
// proposals, all different, none equal to the graph's own shapes.
std::vector<ShrunkGraph> other_shape_sets(const ir::Graph& graph, int count,
                                          const ShrinkOptions& options = {});

}  // namespace weft::gen
