#pragma once
// The oracle's source-text row of the op table: the forward computation of an IR graph written
// as the body of `def forward(self, <inputs>)`, in TorchScript (compiled in C++ with torch::jit
// by the torchscript backends) or in plain PyTorch 1.13 Python (`weft export --python`, the
// python backend). Both reproduce torch_eager.cpp's semantics op by op. Pure string emission:
// no torch headers.

#include <map>
#include <string>
#include <vector>

#include "weft/ir/graph.h"
#include "weft/tensor.h"

namespace weft::oracle {

enum class SourceDialect {
  // Compiles with torch::jit (Module::define): aten names (torch.conv2d, torch.hardtanh),
  // integer dtype codes (.to(6)), no torch.nn.functional.
  TorchScript,
  // A normal PyTorch 1.13 program: torch.float32, keyword arguments, F.* (import
  // torch.nn.functional as F).
  Python,
};

// One graph's forward, ready to be placed in a module class. Inputs are the method's
// arguments, parameters are attributes (`self.<identifier>`).
struct EmittedForward {
  // Python identifiers of the graph's inputs, in graph.inputs() order: the arguments of
  // forward after `self`.
  std::vector<std::string> inputs;
  // Python identifiers of the graph's parameters, in graph.parameters() order: the module
  // attributes (register_parameter names) the body reads as `self.<identifier>`.
  std::vector<std::string> parameters;
  // Leaf name (as in values.safetensors, may hold dots or any character) -> identifier.
  // Deterministic; unique over inputs and parameters; never a Python keyword, a name the
  // body uses (torch, F, self, v<N>, ...) or an attribute of torch.nn.Module.
  std::map<std::string, std::string> identifiers;
  // The expressions returned, in graph.outputs() order (identifiers of values).
  std::vector<std::string> outputs;
  // The statements of the body, one per line, without indentation; the last one is
  // `return (<outputs>,)`: forward always returns a tuple, even of one output.
  std::vector<std::string> lines;
  // The module form (Python dialect, graph.nn_modules()): statements of __init__, after the
  // parameters, that build nn submodules from a dict `params` of values by leaf name
  // (`self.conv2d_3 = torch.nn.Conv2d(...)`, then its weight set from params), which the body
  // calls (`self.conv2d_3(x)`). A parameter a submodule owns is not a module attribute of its
  // own: `submodule_parameters` gives its path by leaf name ("conv2d_3.weight").
  std::vector<std::string> init_lines;
  std::map<std::string, std::string> submodule_parameters;

  // "def forward(self, a, b):\n" + the body lines indented by `indent` + 4 spaces, every line
  // (the first included) indented by `indent` spaces, ending with a newline.
  std::string method(int indent = 0) const;
};

// Python that the emitted program needs where PyTorch is older than an op it calls, placed
// before the module class: F.rms_norm (PyTorch 2.4) for Debian's 1.13, as ATen's composite
// computes it (defined only where F lacks it). Empty when the graph calls no such op.
std::string python_compat_definitions(const ir::Graph& graph);

// Emits `graph`'s forward. Throws weft::Error naming the node for what torch_eager.cpp refuses
// before calling ATen and that the source cannot express (dropout in training mode with
// 0 < p < 1, an embedding padding_idx out of range, interpolate's Python-side checks, a
// repeated squeeze dim), so that every path refuses the same graphs.
EmittedForward emit_forward(const ir::Graph& graph, SourceDialect dialect);

// A Python float literal that reads back as exactly `value`: the shortest of up to 17
// significant digits that round-trips, always with a '.' or an exponent ("1.0", "0.1",
// "1e-05"), float('inf'), -float('inf'), float('nan').
std::string float_literal(double value);
// A Python identifier made from `name`: characters outside [A-Za-z0-9_] become '_', a leading
// digit or an empty name gets a prefix. Not made unique (emit_forward does that).
std::string sanitize_identifier(const std::string& name);
// `torch.tensor([[...], ...], dtype=torch.float32)`: a Python (not TorchScript) expression
// that rebuilds `tensor` exactly (values with float_literal; shape kept for size-0 and
// rank-0 tensors too).
std::string python_tensor_literal(const Tensor& tensor);
// "torch.float32", ... (Python); "6", ... (TorchScript's ScalarType codes).
std::string dtype_expression(Dtype dtype, SourceDialect dialect);

}  // namespace weft::oracle
