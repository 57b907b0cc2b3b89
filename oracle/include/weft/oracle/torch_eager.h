#pragma once
// LibTorch eager execution of IR graphs, behind an interface that exposes no torch headers:
// the oracle's `torch` row of the op table (lowering of every OpKind to an ATen call) and a
// runner that returns outputs and gradients as engine tensors.

#include <vector>

#include "weft/ir/execute.h"
#include "weft/ir/graph.h"
#include "weft/tensor.h"

namespace weft::oracle {

struct TorchExecution {
  std::vector<Tensor> outputs;  // in graph.outputs() order, copied into engine tensors
  ir::TensorMap gradients;      // d<outputs, cotangents>/d(leaf) for floating leaves, by name
};

// Runs `graph` with LibTorch eager ops on the CPU, or on the first CUDA device with `cuda`
// (leaves and cotangents are copied there; results come back to the CPU). With `cotangents`
// non-empty (one per output), also runs torch autograd and fills `gradients` (zeros for leaves
// the outputs do not reach). Throws weft::Error (message: node label + LibTorch's message)
// when LibTorch throws.
TorchExecution run_torch_eager(const ir::Graph& graph, const ir::TensorMap& leaves,
                               const std::vector<Tensor>& cotangents = {}, bool cuda = false);

}  // namespace weft::oracle
