#pragma once
// Reverse-mode automatic differentiation, define-by-run. Each op's result points to the Node
// that made it; backward() walks those nodes from the root and accumulates into leaves.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "weft/tensor.h"

namespace weft::autograd {

struct Edge {
  std::shared_ptr<Node> function;  // null: this input needs no gradient
  std::uint32_t input_nr = 0;      // which output of `function` the gradient flows into
  bool valid() const { return function != nullptr; }
};

// One recorded operation. apply() maps gradients w.r.t. its outputs to gradients w.r.t.
// its inputs (one per next_edges entry; undefined = zero).
class Node {
 public:
  explicit Node(std::string name);
  virtual ~Node() = default;
  virtual std::vector<Tensor> apply(std::vector<Tensor>&& grad_outputs) = 0;
  // Drops saved tensors after a backward without retain_graph.
  virtual void release_saved() {}

  const std::string& name() const { return name_; }
  std::uint64_t sequence_nr() const { return sequence_nr_; }
  std::vector<Edge>& next_edges() { return next_edges_; }
  const std::vector<Edge>& next_edges() const { return next_edges_; }
  std::uint32_t num_outputs() const { return num_outputs_; }
  void set_num_outputs(std::uint32_t n) { num_outputs_ = n; }
  // Metadata of each output, used to make zero gradients for outputs nobody used.
  std::vector<std::pair<Shape, Dtype>>& output_meta() { return output_meta_; }
  // Non-leaf tensors that asked for retain_grad(), per output index.
  std::vector<std::pair<std::uint32_t, std::weak_ptr<TensorImpl>>>& retained() { return retained_; }

 private:
  std::string name_;
  std::uint64_t sequence_nr_;
  std::vector<Edge> next_edges_;
  std::uint32_t num_outputs_ = 1;
  std::vector<std::pair<Shape, Dtype>> output_meta_;
  std::vector<std::pair<std::uint32_t, std::weak_ptr<TensorImpl>>> retained_;
};

// A tensor kept for backward. Saved outputs are kept detached (no reference cycle through
// their own grad_fn); the version at save time detects later in-place changes.
class SavedTensor {
 public:
  SavedTensor() = default;
  SavedTensor(const Tensor& tensor, bool is_output);
  // Throws PyTorch's "modified by an inplace operation" error when the data changed.
  Tensor unpack(const Node& owner) const;
  void reset() { data_ = Tensor(); }
  bool defined() const { return data_.defined(); }

 private:
  Tensor data_;
  std::uint32_t saved_version_ = 0;
  bool was_defined_ = false;
};

// Maps gradients w.r.t. the outputs to gradients w.r.t. the inputs, given the saved tensors
// (already checked against in-place changes). Gradients of unused outputs arrive as zeros.
using BackwardFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& grad_outputs,
                                                     const std::vector<Tensor>& saved)>;

// The node type every op uses: a name, its saved tensors, and a backward closure. Closures
// capture shapes and scalars by value; tensors go through `saved` (no reference cycles, and
// retain_graph / version checks work).
class FunctionNode final : public Node {
 public:
  FunctionNode(std::string name, std::vector<SavedTensor> saved, BackwardFn backward);
  std::vector<Tensor> apply(std::vector<Tensor>&& grad_outputs) override;
  void release_saved() override;

 private:
  std::vector<SavedTensor> saved_;
  BackwardFn backward_;
  bool released_ = false;
};

// Accumulates incoming gradients into a leaf's .grad.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> leaf);
  std::vector<Tensor> apply(std::vector<Tensor>&& grad_outputs) override;
  const std::shared_ptr<TensorImpl>& leaf() const { return leaf_; }

 private:
  std::shared_ptr<TensorImpl> leaf_;
};

// ---- Grad mode ----
bool grad_enabled();
// Disables recording for its lifetime (torch.no_grad()).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};
// Enables recording for its lifetime (torch.enable_grad()), e.g. inside create_graph backward.
class EnableGradGuard {
 public:
  explicit EnableGradGuard(bool enabled = true);
  ~EnableGradGuard();
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool previous_;
};

// The edge through which a gradient reaches `tensor` (its grad_fn, or its leaf accumulator).
Edge gradient_edge(const Tensor& tensor);
// True when any input requires grad and grad mode is on: the op must record a node.
bool any_requires_grad(std::initializer_list<const Tensor*> inputs);
bool any_requires_grad(const std::vector<Tensor>& inputs);

// Records `node` as the maker of `outputs` (sets their grad_fn) with edges to `inputs`.
// Call only when any_requires_grad(inputs).
void record(const std::shared_ptr<Node>& node, const std::vector<Tensor>& inputs,
            const std::vector<Tensor>& outputs);

// Convenience for the common case: builds a FunctionNode and records it when needed.
// `saved` tensors are flagged as outputs when they are one of `outputs` (no cycles).
void record_function(const char* name, const std::vector<Tensor>& inputs,
                     const std::vector<Tensor>& outputs, const std::vector<Tensor>& saved,
                     BackwardFn backward);

// Runs the backward pass from `roots`. With `inputs` given, gradients are returned for them
// instead of accumulated into leaves (torch.autograd.grad).
void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots,
              bool retain_graph = false, bool create_graph = false);
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, bool retain_graph = false,
                         bool create_graph = false, bool allow_unused = false);

// Sums a broadcast gradient back to `shape` (the reverse of broadcasting).
Tensor sum_to(const Tensor& grad, IntList shape);

// Drops (set_to_none) or zeroes a parameter's .grad, as Module and Optimizer zero_grad do; a
// grad with history (create_graph) is detached before zeroing, as in PyTorch.
void clear_grad(const Tensor& parameter, bool set_to_none);

// Checks that an in-place op on `tensor` is allowed and bumps its version.
void check_inplace(const Tensor& tensor);

// In-place writes through views (autograd/views.cpp). After `source` was copied into the
// differentiable view `view` with history recorded: its base's history becomes "the old base
// with the view's region replaced by source" (PyTorch's CopySlices) and the view's own history
// a view of that base. Throws PyTorch's errors for a view of a leaf that requires grad and for
// a view whose elements overlap (expanded).
void record_write_through_view(const Tensor& view, const Tensor& source);
// A differentiable view whose storage was written since its history was made takes a fresh
// one from its base (PyTorch regenerates such a view's grad_fn); a no-op for other tensors.
void refresh_view_history(const Tensor& tensor);

}  // namespace weft::autograd
