#pragma once
// The rounding model's per-op rows (rounding_ops.cpp: which ops take decisions, accumulate, or
// move values exactly) and its rounded steps (rounding_steps.cpp: Monte Carlo perturbation, and
// the ops run decomposed with each step rounded), used by rounding.cpp's Model.

#include <vector>

#include "weft/dtype.h"
#include "weft/ir/graph.h"
#include "weft/random.h"
#include "weft/tensor.h"

namespace weft::oracle::rounding_detail {

inline constexpr double kUnit32 = 0x1p-23;  // FLT_EPSILON: one float32 rounding, with margin
inline constexpr double kUnit64 = 0x1p-52;

// One rounding of a value of `dtype`: float16's and bfloat16's epsilons are their own (the
// op computed in float32 and rounded its result to them).
inline double unit_of(Dtype dtype) {
  if (dtype == Dtype::Float64) return kUnit64;
  return is_reduced_floating(dtype) ? dtype_epsilon(dtype) : kUnit32;
}

enum class Decision { None, Elementwise, Index, Kink };

bool reads_floating(const ir::Graph& graph, const ir::Node& node);
// What rounding can change about `node`'s result besides its values: an elementwise decision
// (floor, comparisons), an index (argmax, sort order), a kink (relu's gradient), or nothing.
Decision decision_of(const ir::Graph& graph, const ir::Node& node);
// Ops whose result sums (or multiplies) many rounded terms: their inputs are perturbed too.
bool accumulates(ir::OpKind op);
bool accumulates(const ir::Node& node);
// Ops that move or pick values without rounding them.
bool exact(ir::OpKind op);
bool exact(const ir::Node& node);

// t * (1 + unit * u), u uniform in [-1, 1] per element; differentiable in t.
Tensor perturb(const Tensor& t, double unit, Generator& gen);
// A result that its own backward reads (logsumexp), rounded where the backward sees it too.
Tensor rounded_saved_result(const Tensor& result, double unit, Generator& gen);
// The ops that float32 evaluates in steps whose rounding matters (var, std, the norms, cdist,
// sinc, tanhshrink), run with every step rounded; undefined for other ops.
Tensor decomposed(const ir::Node& node, const std::vector<Tensor>& in, double unit, Generator& gen);

}  // namespace weft::oracle::rounding_detail
