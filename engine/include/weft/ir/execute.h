#pragma once
// Running a graph on the engine: the engine's row of the op table (one call per OpKind), a
// forward pass that checks every value against its declared type, and gradients of a given
// cotangent with respect to the graph's inputs and parameters.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "weft/ir/graph.h"
#include "weft/tensor.h"

namespace weft::ir {

// Leaf values (inputs and parameters) by name, as stored in values.safetensors.
using TensorMap = std::map<std::string, Tensor>;

struct ExecutionOptions {
  // Run every floating value in this type instead (Float64: the fp64 shadow of the oracle).
  std::optional<Dtype> floating_dtype;
  // Keep every intermediate value (for localization); otherwise only outputs are kept.
  bool keep_values = false;
  // Run "inplace" nodes in place and writebacks as their base (weft/ir/inplace.h), as the
  // programs of every path do: the engine backend's way. Otherwise every node is dataflow (the
  // reference, the rounding model); both give the same values.
  bool as_written = false;
  // Called after each node with its index, inputs and outputs, which it may replace (same shapes
  // and dtypes): the oracle's fault-injection backend makes one op misbehave through it, and its
  // rounding model perturbs values and moves decisions through it.
  std::function<void(std::size_t node_index, const std::vector<Tensor>& inputs,
                     std::vector<Tensor>& outputs)>
      after_node;
};

struct Execution {
  std::vector<Tensor> outputs;  // in graph.outputs() order
  std::vector<Tensor> values;   // by ValueId, when keep_values
};

// `node` with the defaults that depend on its declared input types written out, for running it
// on other types (the float64 reference of a float32 program): rms_norm without eps takes the
// epsilon of its declared input type, which is the program's constant. `node` itself when it has
// no such default; else a copy held in `scratch`. execute() applies it to every node; callers of
// run_node on a graph's node in another dtype (the rounding model, the value search) do too.
const Node& with_declared_defaults(const Graph& graph, const Node& node, Node& scratch);

// Executes one node on engine tensors: the kernel table of the IR.
std::vector<Tensor> run_node(const Node& node, const std::vector<Tensor>& inputs,
                             std::optional<Dtype> floating_dtype = std::nullopt);

// Forward pass. Throws weft::Error naming the node when an op fails or a result's shape or
// dtype differs from the graph's declaration, and naming the leaf when a value is missing
// or has the wrong type.
Execution execute(const Graph& graph, const TensorMap& leaves,
                  const ExecutionOptions& options = {});

struct GradientExecution {
  Execution forward;
  // d(sum of outputs · cotangents)/d(leaf) for every floating input and parameter, by name.
  TensorMap gradients;
};

// Forward, then backward of sum_i <outputs[i], cotangents[i]> (non-floating outputs skipped).
GradientExecution execute_with_gradients(const Graph& graph, const TensorMap& leaves,
                                         const std::vector<Tensor>& cotangents,
                                         const ExecutionOptions& options = {});

// `values` with every input whose layout has a stride of 0 (an expanded input) holding, along
// each such dim, the values at index 0: what every path's buffer holds, since a stride-0 dim
// reads one element. The generator stores values so; the oracle applies it before judging.
TensorMap project_to_layouts(const Graph& graph, TensorMap values);

// One cotangent per output for the gradient checks of every part (value search, oracle,
// tests): uniform in [-1, 1), rounded to float32 so the float32 and float64 runs use the same
// numbers, in the output's dtype; zeros for non-floating outputs. Deterministic in `seed`.
std::vector<Tensor> random_cotangents(const Graph& graph, std::uint64_t seed);

}  // namespace weft::ir
