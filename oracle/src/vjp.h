#pragma once
// Gradient localization by vector-Jacobian products (used by Oracle::localize): every node of
// a case alone, fed the float64 reference's values at its inputs and the reference's gradient
// at its outputs. A path whose gradient is wrong there computes that node's VJP wrongly, with
// the inputs and incoming gradient the case really gave it: the node is the bug, not the
// consumer after it that made the gradient large or infinite.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "weft/ir/execute.h"
#include "weft/ir/graph.h"

namespace weft::oracle {

struct VjpGraph {
  ir::Graph graph;                 // one copy of each differentiable node, its inputs as leaves
  ir::TensorMap values;            // the reference's inputs of each node, in their declared dtypes
  std::vector<Tensor> cotangents;  // the reference's gradients at each node's outputs
  // Which node of the case each leaf feeds. Leaves sort with the last node first, so the
  // judge's first gradient finding names the node closest to the output.
  std::map<std::string, std::size_t> node_of_leaf;
};

// Nullopt when the case has no node with a floating input whose output gets a gradient, or
// when the reference cannot run it.
std::optional<VjpGraph> vjp_graph(const ir::Graph& graph, const ir::TensorMap& values,
                                  const std::vector<Tensor>& cotangents);

// Node `producer` alone on the reference's values at its inputs, each floating output
// multiplied by a leaf of random weights: a consumer that stands for any other. Compilers
// differentiate groups of nodes, not single ones (TorchScript's autodiff wants two), so a
// producer's broken derivative may show only next to a consumer: when it shows next to this
// one as well, the producer is at fault, not the consumer bisection stopped at. Nullopt when the
// node has no floating input or output, or the reference cannot run the case.
std::optional<VjpGraph> producer_graph(const ir::Graph& graph, const ir::TensorMap& values,
                                       std::size_t producer, std::uint64_t seed);

// The leaf a finding's message names ("gradient of 'g9990_in0' [3]: ..."); empty when none.
std::string gradient_leaf_of(const std::string& message);

}  // namespace weft::oracle
