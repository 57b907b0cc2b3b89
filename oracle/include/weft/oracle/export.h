#pragma once
// PyTorch programs from test cases: the `Model` class the python backend runs, and the
// standalone script of `weft export --python` that shows a bug with stock PyTorch.

#include <string>

#include "weft/ir/execute.h"
#include "weft/ir/graph.h"

namespace weft::oracle {

// `class Model(torch.nn.Module)` for `graph`: __init__(self, params) takes the parameters by
// leaf name (floating ones become nn.Parameter, others buffers) and records them in
// `self.weft_parameters` (leaf name -> attribute); forward(self, <inputs>) returns a tuple.
// Needs `import torch` and `import torch.nn.functional as F` before it.
std::string python_model_source(const ir::Graph& graph);

struct ExportOptions {
  // The path the script runs against the eager float64 reference: "torch", a torchscript
  // variant, or a fault backend (whose fault the script injects with a forward hook on the
  // faulty op's results, so that it reproduces with stock PyTorch).
  std::string backend = "torchscript-ofi";
  // Where the script reads values.safetensors; empty: the values are embedded as literals.
  std::string values_path;
  int calls = 3;
};

// A standalone script: the Model class, the inputs, the eager float64 reference, the eager
// float32 run (the honest rounding), the chosen path's runs, and a check that prints the
// largest differences and exits 1 when the path is far beyond float32 rounding (the judge's
// rule in brief), 0 otherwise.
std::string export_python_script(const ir::Graph& graph, const ir::TensorMap& values,
                                 const ExportOptions& options);

}  // namespace weft::oracle
