#pragma once
// Random draws in a graph (ops/random.cpp): which nodes draw, and which values depend on a draw.
// PyTorch's generators and weft's draw different numbers, so the oracle judges what depends on a
// draw by its properties (shape, type, range, the same values under the same seed), never
// against the reference's values.
#include <vector>

#include "weft/ir/graph.h"

namespace weft::ir {

// A random-family op (dropouts, rrelu, rand_like, randn_like, rand, randn, randint_like,
// bernoulli, randperm), whatever its attributes.
bool is_random_op(OpKind op);
// The samplers among them: their values do not depend on their input's, and they carry no
// gradient to it (bernoulli's derivative is zero).
bool is_sampler(OpKind op);
// Whether the node draws: the samplers always; the dropouts in training with 0 < p < 1; rrelu in
// training with lower < upper. (Evaluation mode, p = 0 or p = 1 compute without drawing.)
bool draws_random(const Node& node);
// Per value id: whether the value is drawn or computed from a draw.
std::vector<bool> random_dependent(const Graph& graph);
bool has_random_draws(const Graph& graph);

}  // namespace weft::ir
