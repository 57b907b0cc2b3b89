#pragma once
// The rounding model: what an honest float32 execution of a case may return, measured on the
// engine instead of guessed from the result's magnitude (DESIGN.md "The oracle").
//
// Monte Carlo arithmetic (Parker's MCA at float32's 24 bits): the case runs several times in
// float64 with every floating input of every node, every node's outputs and every gradient a
// backward node computes multiplied by (1 + eps * u), u uniform in [-1, 1], eps the epsilon of
// the value's declared dtype. Each op then sees inputs that carry one rounding of their own, so
// a sum of terms that cancel spreads by about eps * sum |terms| (not eps * |result|), a matmul
// by eps * (|A| |B|), and an ill-conditioned op amplifies the spread as it amplifies rounding.
// The spread of those runs around the reference is the honest float32 error of every element.
// logsumexp's gradient reads its own rounded result (g * exp(x - result)): those runs round the
// result inside the gradient too, so a large result's rounding (eps * |result|, exp-amplified)
// is honest error, as it is for a float16 path that keeps x in float32 and saves the result.
//
// Decisions (floor, ceil, round, sign, comparisons, casts to integers, floor division, argmax,
// argmin and max/min indices, and the kinks of relu, leaky_relu, hardtanh, clamp, abs,
// maximum and minimum for gradients) flip when rounding moves their input across a boundary.
// Two "decision runs" move every decision whose float64 input lies within `margin` times that
// input's honest error of a boundary, once to each side (the index ops pick the first and the
// last of their near-ties), so every element computed from an undecided decision, downstream
// as far as it reaches, is as far from the reference in those runs as the decision allows.
// Pure engine computation: no torch, no processes.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weft/ir/execute.h"
#include "weft/ir/graph.h"
#include "weft/oracle/backend.h"

namespace weft::oracle {

struct RoundingOptions {
  int monte_carlo_runs = 4;
  // A decision is moved when its input lies within `margin` x its honest error of a boundary
  // (the judge's own error factor).
  double margin = 16;
  std::uint64_t seed = 0x7a11ed;
};

struct RoundingModel {
  // Outputs and gradients of every run: the Monte Carlo runs first, then the decision runs.
  std::vector<CallResult> runs;
  int monte_carlo_runs = 0;
  // Per graph value (by id): the honest error of every element, the largest distance to the
  // reference of the float32 engine and of the Monte Carlo runs; empty where not computed.
  std::vector<std::vector<double>> value_error;
  // Decision nodes whose decision the decision runs moved on at least one element.
  std::vector<std::size_t> moved_decisions;
  // Graph outputs (by position) computed from the indices of a sort, argsort or topk whose
  // order is undecided: not judged at all (two runs cannot span every order of every group).
  std::vector<std::size_t> undecided_outputs;
  // Why no model could be built (the engine refused the case); empty when it was.
  std::string failure;

  bool empty() const { return runs.empty(); }
};

RoundingModel model_rounding(const ir::Graph& graph, const ir::TensorMap& values,
                             const std::vector<Tensor>& cotangents,
                             const RoundingOptions& options = {});

// The nodes whose decisions the model moves (see above), and those of them whose outputs are
// discrete (every decision but the kinks, which only route gradients).
bool is_decision_node(const ir::Graph& graph, const ir::Node& node);
bool is_discrete_decision(const ir::Graph& graph, const ir::Node& node);

}  // namespace weft::oracle
