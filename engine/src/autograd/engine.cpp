// The backward pass: a dependency-counted walk over the recorded graph, highest sequence
// number first (the reverse of creation order), accumulating gradients per node input.
#include <algorithm>
#include <atomic>
#include <map>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "kernels/copy.h"
#include "weft/autograd.h"
#include "weft/autograd/hooks.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft::autograd {

namespace {
std::atomic<std::uint64_t> next_sequence_nr{0};
thread_local bool grad_mode = true;
thread_local BackwardHook backward_hook;

// PyTorch's words for a backward through a graph whose saved tensors were already freed.
constexpr const char* kFreedGraphMessage =
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward.";

std::string describe(const Tensor& t) {
  return std::string("[") + dtype_name(t.dtype()) + " " + shape_str(t.sizes()) + "]";
}
}  // namespace

Node::Node(std::string name) : name_(std::move(name)), sequence_nr_(next_sequence_nr++) {}

// ---- saved tensors ----
SavedTensor::SavedTensor(const Tensor& tensor, bool is_output) : was_defined_(tensor.defined()) {
  if (!tensor.defined()) return;
  data_ = is_output ? tensor.detach() : tensor;
  saved_version_ = tensor.version();
}

Tensor SavedTensor::unpack(const Node& owner) const {
  if (!was_defined_) return Tensor();
  if (!data_.defined()) {
    throw Error(kFreedGraphMessage);
  }
  if (data_.version() != saved_version_) {
    throw Error(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: " +
        describe(data_) + ", saved by " + owner.name() + ", is at version " +
        std::to_string(data_.version()) + "; expected version " + std::to_string(saved_version_) +
        " instead.");
  }
  return data_;
}

// ---- FunctionNode ----
FunctionNode::FunctionNode(std::string name, std::vector<SavedTensor> saved, BackwardFn backward)
    : Node(std::move(name)), saved_(std::move(saved)), backward_(std::move(backward)) {}

std::vector<Tensor> FunctionNode::apply(std::vector<Tensor>&& grad_outputs) {
  if (released_) {
    throw Error(kFreedGraphMessage);
  }
  std::vector<Tensor> saved;
  saved.reserve(saved_.size());
  for (const SavedTensor& s : saved_) saved.push_back(s.unpack(*this));
  std::vector<Tensor> grads = backward_(grad_outputs, saved);
  if (grads.size() != next_edges().size()) {
    throw Error("internal: " + name() + " returned " + std::to_string(grads.size()) +
                " gradients for " + std::to_string(next_edges().size()) + " inputs");
  }
  return grads;
}

void FunctionNode::release_saved() {
  for (SavedTensor& s : saved_) s.reset();
  backward_ = nullptr;
  released_ = true;
}

// ---- AccumulateGrad ----
AccumulateGrad::AccumulateGrad(std::shared_ptr<TensorImpl> leaf)
    : Node("AccumulateGrad"), leaf_(std::move(leaf)) {}

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor>&& grad_outputs) {
  Tensor incoming = std::move(grad_outputs[0]);
  if (!incoming.defined()) return {};
  Tensor leaf(leaf_);
  if (incoming.sizes() != leaf.sizes()) {
    throw Error("AccumulateGrad: gradient of shape " + shape_str(incoming.sizes()) +
                " does not match the leaf's shape " + shape_str(leaf.sizes()));
  }
  if (incoming.dtype() != leaf.dtype()) incoming = incoming.to(leaf.dtype());
  if (!grad_enabled()) incoming = incoming.detach();
  Tensor current = leaf.grad();
  if (!current.defined()) {
    // Take the buffer when nobody else holds it; otherwise copy, so that later in-place
    // updates of .grad never write into someone else's tensor.
    const bool exclusive = incoming.impl_ptr().use_count() == 1 &&
                           incoming.storage().use_count() == 1 && incoming.is_contiguous();
    leaf.set_grad(exclusive || grad_enabled() ? incoming : incoming.clone().detach());
  } else {
    leaf.set_grad(grad_enabled() ? add(current, incoming) : add(current, incoming).detach());
  }
  return {};
}

// ---- backward hook ----
BackwardHookGuard::BackwardHookGuard(BackwardHook hook) : previous_(std::move(backward_hook)) {
  backward_hook = std::move(hook);
}
BackwardHookGuard::~BackwardHookGuard() {
  backward_hook = std::move(previous_);
}

// ---- grad mode ----
bool grad_enabled() {
  return grad_mode;
}
NoGradGuard::NoGradGuard() : previous_(grad_mode) {
  grad_mode = false;
}
NoGradGuard::~NoGradGuard() {
  grad_mode = previous_;
}
EnableGradGuard::EnableGradGuard(bool enabled) : previous_(grad_mode) {
  grad_mode = enabled;
}
EnableGradGuard::~EnableGradGuard() {
  grad_mode = previous_;
}

// ---- recording ----
Edge gradient_edge(const Tensor& tensor) {
  if (!tensor.defined()) return {};
  refresh_view_history(tensor);
  TensorImpl* impl = tensor.impl();
  if (impl->grad_fn) return {impl->grad_fn, impl->output_nr};
  if (!impl->requires_grad) return {};
  std::shared_ptr<Node> accumulator = impl->grad_accumulator.lock();
  if (!accumulator) {
    accumulator = std::make_shared<AccumulateGrad>(tensor.impl_ptr());
    impl->grad_accumulator = accumulator;
  }
  return {accumulator, 0};
}

bool any_requires_grad(std::initializer_list<const Tensor*> inputs) {
  if (!grad_mode) return false;
  for (const Tensor* t : inputs) {
    if (t->defined() && t->requires_grad()) return true;
  }
  return false;
}

bool any_requires_grad(const std::vector<Tensor>& inputs) {
  if (!grad_mode) return false;
  for (const Tensor& t : inputs) {
    if (t.defined() && t.requires_grad()) return true;
  }
  return false;
}

void record(const std::shared_ptr<Node>& node, const std::vector<Tensor>& inputs,
            const std::vector<Tensor>& outputs) {
  node->next_edges().clear();
  for (const Tensor& input : inputs) node->next_edges().push_back(gradient_edge(input));
  node->set_num_outputs(static_cast<std::uint32_t>(outputs.size()));
  node->output_meta().clear();
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    node->output_meta().emplace_back(out.sizes(), out.dtype());
    // Integer and bool outputs (indices, masks) are not differentiable.
    if (!is_floating(out.dtype())) continue;
    out.impl()->grad_fn = node;
    out.impl()->output_nr = static_cast<std::uint32_t>(i);
    out.impl()->requires_grad = false;
  }
}

void record_function(const char* name, const std::vector<Tensor>& inputs,
                     const std::vector<Tensor>& outputs, const std::vector<Tensor>& saved,
                     BackwardFn backward) {
  if (!any_requires_grad(inputs)) return;
  std::vector<SavedTensor> kept;
  kept.reserve(saved.size());
  for (const Tensor& s : saved) {
    const bool is_output =
        std::any_of(outputs.begin(), outputs.end(), [&](const Tensor& o) { return o.is_same(s); });
    kept.emplace_back(s, is_output);
  }
  auto node = std::make_shared<FunctionNode>(name, std::move(kept), std::move(backward));
  record(node, inputs, outputs);
}

void check_inplace(const Tensor& tensor) {
  if (grad_mode && tensor.is_leaf() && tensor.requires_grad()) {
    throw Error("a leaf Variable that requires grad is being used in an in-place operation.");
  }
  tensor.storage()->bump_version();
}

void clear_grad(const Tensor& parameter, bool set_to_none) {
  Tensor grad = parameter.grad();
  if (!grad.defined()) return;
  if (set_to_none) {
    parameter.set_grad(Tensor());
    return;
  }
  if (grad.grad_fn()) {
    grad = grad.detach();
    parameter.set_grad(grad);
  }
  NoGradGuard no_grad;
  grad.zero_();
}

Tensor sum_to(const Tensor& grad, IntList shape) {
  if (grad.sizes().size() == shape.size() &&
      std::equal(shape.begin(), shape.end(), grad.sizes().begin())) {
    return grad;
  }
  const std::int64_t lead = grad.dim() - static_cast<std::int64_t>(shape.size());
  std::vector<std::int64_t> dims;
  for (std::int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1 && grad.size(lead + static_cast<std::int64_t>(i)) != 1) {
      dims.push_back(lead + static_cast<std::int64_t>(i));
    }
  }
  Tensor reduced = dims.empty() ? grad : sum(grad, dims, /*keepdim=*/true);
  return lead > 0 || reduced.sizes().size() != shape.size() ? reshape(reduced, shape) : reduced;
}

// ---- the backward pass ----
namespace {

struct Capture {
  Node* node;
  std::uint32_t input_nr;
};

// Runs the graph; when `captures` is non-empty, returns the gradient arriving at each captured
// (node, input_nr) and does not touch leaves' .grad.
std::vector<Tensor> run_backward(const std::vector<Tensor>& roots,
                                 const std::vector<Tensor>& grad_roots, bool retain_graph,
                                 bool create_graph, const std::vector<Capture>& captures) {
  if (roots.size() != grad_roots.size() && !grad_roots.empty()) {
    throw Error("grad_tensors should have the same length as tensors: got " +
                std::to_string(grad_roots.size()) + " and " + std::to_string(roots.size()));
  }
  std::vector<Edge> root_edges;
  std::vector<Tensor> root_grads;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    const Tensor& root = roots[i];
    if (!root.requires_grad()) {
      throw Error("element " + std::to_string(i) +
                  " of tensors does not require grad and does not have a grad_fn");
    }
    Tensor g = grad_roots.empty() ? Tensor() : grad_roots[i];
    if (!g.defined()) {
      if (root.numel() != 1) {
        throw Error("grad can be implicitly created only for scalar outputs");
      }
      g = ones_like(root);
    } else if (g.sizes() != root.sizes()) {
      throw Error("Mismatch in shape: grad_output[" + std::to_string(i) + "] has a shape of " +
                  shape_str(g.sizes()) + " and output[" + std::to_string(i) + "] has a shape of " +
                  shape_str(root.sizes()) + ".");
    }
    root_edges.push_back(gradient_edge(root));
    root_grads.push_back(g);
  }

  // Count, for each node, how many edges point to it from nodes reachable from the roots.
  std::unordered_map<Node*, int> dependencies;
  std::unordered_set<Node*> seen;
  std::vector<Node*> stack;
  for (const Edge& e : root_edges) {
    if (seen.insert(e.function.get()).second) stack.push_back(e.function.get());
  }
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const Edge& next : node->next_edges()) {
      if (!next.valid()) continue;
      ++dependencies[next.function.get()];
      if (seen.insert(next.function.get()).second) stack.push_back(next.function.get());
    }
  }

  std::map<std::pair<Node*, std::uint32_t>, std::size_t> capture_index;
  for (std::size_t i = 0; i < captures.size(); ++i) {
    capture_index[{captures[i].node, captures[i].input_nr}] = i;
  }
  std::vector<Tensor> captured(captures.size());

  // Gradients accumulated at each node's outputs; nodes kept alive while pending.
  std::unordered_map<Node*, std::vector<Tensor>> buffers;
  std::unordered_map<Node*, std::shared_ptr<Node>> owners;
  auto accumulate = [&](const Edge& edge, const Tensor& g) {
    Node* node = edge.function.get();
    owners.emplace(node, edge.function);
    std::vector<Tensor>& buffer = buffers[node];
    if (buffer.empty()) buffer.resize(std::max<std::uint32_t>(node->num_outputs(), 1));
    Tensor& slot = buffer[edge.input_nr];
    slot = slot.defined() ? add(slot, g) : g;
  };
  auto by_sequence = [](Node* a, Node* b) { return a->sequence_nr() < b->sequence_nr(); };
  std::priority_queue<Node*, std::vector<Node*>, decltype(by_sequence)> ready(by_sequence);

  EnableGradGuard mode(create_graph);
  for (std::size_t i = 0; i < root_edges.size(); ++i) {
    accumulate(root_edges[i], root_grads[i]);
  }
  for (const Edge& e : root_edges) {
    Node* node = e.function.get();
    if (dependencies[node] == 0) {
      dependencies[node] = -1;  // queued
      ready.push(node);
    }
  }

  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    std::vector<Tensor> grads = std::move(buffers[node]);
    buffers.erase(node);
    grads.resize(std::max<std::uint32_t>(node->num_outputs(), 1));
    for (std::uint32_t i = 0; i < grads.size(); ++i) {
      auto it = capture_index.find({node, i});
      if (it != capture_index.end()) captured[it->second] = grads[i];
    }
    for (auto& [index, weak] : node->retained()) {
      if (std::shared_ptr<TensorImpl> impl = weak.lock()) {
        if (index < grads.size() && grads[index].defined()) {
          Tensor holder(impl);
          Tensor g = create_graph ? grads[index] : grads[index].detach();
          holder.set_grad(holder.grad().defined() ? add(holder.grad(), g) : g.clone().detach());
        }
      }
    }
    const bool is_leaf_accumulator = dynamic_cast<AccumulateGrad*>(node) != nullptr;
    std::vector<Tensor> input_grads;
    if (!(is_leaf_accumulator && !captures.empty())) {
      // Unused outputs get zero gradients so backward formulas never see undefined tensors.
      for (std::size_t i = 0; i < grads.size() && i < node->output_meta().size(); ++i) {
        if (!grads[i].defined()) {
          const auto& [shape, dtype] = node->output_meta()[i];
          grads[i] = zeros(shape, weft::dtype(dtype));
        }
      }
      input_grads = node->apply(std::move(grads));
      if (backward_hook && !is_leaf_accumulator) backward_hook(node->name(), input_grads);
      if (!retain_graph) node->release_saved();
    }
    for (std::size_t i = 0; i < input_grads.size(); ++i) {
      const Edge& next = node->next_edges()[i];
      if (!next.valid()) continue;
      if (input_grads[i].defined()) accumulate(next, input_grads[i]);
    }
    for (const Edge& next : node->next_edges()) {
      if (!next.valid()) continue;
      Node* target = next.function.get();
      if (--dependencies[target] == 0) {
        dependencies[target] = -1;
        ready.push(target);
      }
    }
    owners.erase(node);
  }
  return captured;
}

}  // namespace

void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots,
              bool retain_graph, bool create_graph) {
  run_backward(roots, grad_roots, retain_graph || create_graph, create_graph, {});
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool retain_graph,
                         bool create_graph, bool allow_unused) {
  std::vector<Capture> captures;
  std::vector<std::shared_ptr<Node>> keep_alive;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].requires_grad()) {
      throw Error("One of the differentiated Tensors (input " + std::to_string(i) +
                  ") does not require grad");
    }
    Edge edge = gradient_edge(inputs[i]);
    keep_alive.push_back(edge.function);
    captures.push_back({edge.function.get(), edge.input_nr});
  }
  std::vector<Tensor> result =
      run_backward(outputs, grad_outputs, retain_graph || create_graph, create_graph, captures);
  for (std::size_t i = 0; i < result.size(); ++i) {
    if (!result[i].defined() && !allow_unused) {
      throw Error("One of the differentiated Tensors (input " + std::to_string(i) +
                  ") appears to not have been used in the graph. Set allow_unused=True if this "
                  "is the desired behavior.");
    }
    if (result[i].defined() && !create_graph) result[i] = result[i].detach();
  }
  return result;
}

}  // namespace weft::autograd
