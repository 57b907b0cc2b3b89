#pragma once
// Traces (torch.jit.trace): a module's forward pass on example inputs recorded into weft's graph
// IR together with its weights. A TracedModule runs that graph (gradients included); it saves to
// one safetensors file — the weights under their state_dict keys, the graph in __metadata__ —
// and loads back as a forward-only module that needs none of the original classes.
//
// As with torch.jit.trace, the trace is what ran: tensor shapes are those of the examples (an
// input of another shape is an error naming it), branches taken on values are frozen, tensors
// made inside forward are saved as constants, and in-place changes of traced values are refused.

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "weft/ir/graph.h"
#include "weft/nn/module.h"

namespace weft::nn {

class TracedModule : public Module {
 public:
  // `weights` holds a value for every parameter leaf of `graph`; those named in `buffer_names`
  // become buffers (constants, running statistics), the others trainable parameters. Both are
  // registered under their dotted names, so state_dict() has the traced module's keys.
  TracedModule(ir::Graph graph, const StateDict& weights,
               const std::vector<std::string>& buffer_names);

  std::string name() const override { return "TracedModule"; }
  // One input, one output.
  Tensor forward(const Tensor& input) override;
  // Inputs in the order given to trace(); outputs in the order forward returned them.
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs);

  const ir::Graph& graph() const { return graph_; }
  const std::vector<std::string>& buffer_names() const { return buffer_names_; }

 private:
  ir::Graph graph_;
  std::vector<std::string> buffer_names_;
  // The module's tensor for each parameter leaf of the graph, by leaf name.
  std::vector<std::pair<std::string, Tensor>> leaves_;
};

// The forward pass to trace, for modules whose forward is not Tensor → Tensor.
using TraceFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Runs module.forward(example_inputs[0]) (exactly one input) while recording.
std::shared_ptr<TracedModule> trace(Module& module, const std::vector<Tensor>& example_inputs);
// Runs forward(example_inputs) while recording; the module provides the named weights.
std::shared_ptr<TracedModule> trace(Module& module, const std::vector<Tensor>& example_inputs,
                                    const TraceFunction& forward);

// Writes atomically. The file is a valid safetensors checkpoint (nn::load reads its weights).
void save_trace(const TracedModule& traced, const std::filesystem::path& path);
// Throws weft::FormatError naming the file and the field for a damaged or foreign file.
std::shared_ptr<TracedModule> load_trace(const std::filesystem::path& path);

}  // namespace weft::nn
