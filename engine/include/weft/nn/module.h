#pragma once
// nn::Module: the base class of layers and models, shaped like torch.nn.Module. A module owns
// named parameters, buffers and child modules in insertion order; keys are dotted paths
// ("layer1.0.weight") in PyTorch's order, so state dicts line up with Python checkpoints.

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/dtype.h"
#include "weft/tensor.h"

namespace weft::nn {

// An ordered name → tensor map (Python's OrderedDict[str, Tensor]) returned by state_dict().
class StateDict {
 public:
  using Item = std::pair<std::string, Tensor>;

  // Appends `key`, or replaces its value when it is already present (keeping its position).
  void insert(const std::string& key, const Tensor& value);
  const Tensor* find(const std::string& key) const;  // null when absent
  bool contains(const std::string& key) const { return find(key) != nullptr; }
  const Tensor& at(const std::string& key) const;  // throws when absent
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  std::vector<std::string> keys() const;
  const std::vector<Item>& items() const { return items_; }
  std::vector<Item>::const_iterator begin() const { return items_.begin(); }
  std::vector<Item>::const_iterator end() const { return items_.end(); }

 private:
  std::vector<Item> items_;
};

// What load_state_dict(…, strict=false) could not match (torch's _IncompatibleKeys).
struct LoadStateDictResult {
  std::vector<std::string> missing_keys;
  std::vector<std::string> unexpected_keys;
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  template <typename T>
  using NamedList = std::vector<std::pair<std::string, T>>;

  Module() = default;
  virtual ~Module() = default;
  // Copies would share tensors with the original behind its back; modules live in shared_ptrs.
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The type name used in messages ("Linear"); defaults to the demangled class name.
  virtual std::string name() const;

  // The single-tensor forward used by operator() and Sequential. Modules with other
  // signatures define their own forward overloads instead.
  virtual Tensor forward(const Tensor& input);
  Tensor operator()(const Tensor& input) { return forward(input); }

  // ---- Registration. Names must be non-empty, without '.', and unique in this module. ----
  // Stores `tensor` (a leaf; undefined means "no parameter", like Python's None) and sets its
  // requires_grad. The reference stays valid for the module's lifetime.
  Tensor& register_parameter(const std::string& name, Tensor tensor, bool requires_grad = true);
  // A non-persistent buffer moves with the module (to(), buffers()) but is left out of
  // state_dict() and load_state_dict(), as PyTorch's persistent=False.
  Tensor& register_buffer(const std::string& name, Tensor tensor, bool persistent = true);
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    static_assert(std::is_base_of_v<Module, M>, "register_module expects an nn::Module");
    add_child(name, module);
    return module;
  }

  // ---- Traversal, in PyTorch's order: own members first, then children depth-first. ----
  // Shared tensors and modules are listed once (at their first path), as in PyTorch.
  std::vector<Tensor> parameters(bool recurse = true) const;
  NamedList<Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  NamedList<Tensor> named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  NamedList<std::shared_ptr<Module>> named_children() const;
  // Self first (named ""); needs this module to be owned by a std::shared_ptr.
  std::vector<std::shared_ptr<Module>> modules();
  NamedList<std::shared_ptr<Module>> named_modules();

  // ---- Mode and state ----
  virtual void train(bool on = true);  // sets this module and every descendant
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // Drops (set_to_none) or zeroes every parameter's .grad.
  void zero_grad(bool set_to_none = true);
  // Calls fn on every descendant, then on this module (children first, as PyTorch).
  void apply(const std::function<void(Module&)>& fn);
  // Converts floating parameters (with their grads) and floating buffers to `dtype` in place:
  // existing Tensor handles see the new dtype and parameters stay leaves.
  void to(Dtype dtype);

  // Parameters then buffers of each module, then its children's, under dotted keys. The
  // values are detached views of the module's tensors.
  StateDict state_dict() const;
  // Copies values into the module's tensors (under no-grad). Shape mismatches are always
  // errors; missing and unexpected keys are errors when `strict`. Nothing is copied when an
  // error is thrown.
  LoadStateDictResult load_state_dict(const StateDict& state_dict, bool strict = true);

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> module);
  void check_new_name(const std::string& kind, const std::string& name) const;
  void collect_state(const std::string& prefix, NamedList<Tensor>& out) const;
  // Visits this module and its descendants once each, with their dotted prefixes.
  void visit(const std::string& prefix, std::vector<const Module*>& seen,
             const std::function<void(const std::string&, const Module&)>& fn) const;
  NamedList<Tensor> named_members(bool recurse, bool buffers) const;

  // deque: references returned by register_* survive later registrations.
  std::deque<std::pair<std::string, Tensor>> parameters_;
  std::deque<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::string> non_persistent_buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

}  // namespace weft::nn
