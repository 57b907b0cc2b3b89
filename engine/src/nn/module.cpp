// nn::Module: registration, traversal in PyTorch's order, modes, dtype conversion and state
// dicts. Traversal order and error messages follow torch/nn/modules/module.py.
#include "weft/nn/module.h"

#include <algorithm>
#include <cstdlib>
#include <typeinfo>

#include "weft/autograd.h"
#include "weft/error.h"

#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#define WEFT_HAVE_CXXABI 1
#endif

namespace weft::nn {

namespace {

std::string demangle(const char* mangled) {
#ifdef WEFT_HAVE_CXXABI
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  if (status == 0 && out) return out.get();
#endif
  return mangled;
}

// "weft::nn::Linear" → "Linear", like Python's __class__.__name__ (template arguments kept).
std::string unqualified(const std::string& name) {
  const std::size_t template_start = std::min(name.find('<'), name.size());
  const std::size_t colon = name.rfind("::", template_start);
  return colon == std::string::npos ? name : name.substr(colon + 2);
}

std::string join_key(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

std::string quoted_list(const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& k : keys) out += (out.empty() ? "\"" : ", \"") + k + "\"";
  return out;
}

// Points `dst`'s TensorImpl at `src`'s data (torch's set_data), so every handle of `dst`
// sees the conversion and autograd metadata (leafness, requires_grad) is kept.
void set_data(const Tensor& dst, const Tensor& src) {
  TensorImpl& d = *dst.impl();
  const TensorImpl& s = *src.impl();
  d.storage = s.storage;
  d.sizes = s.sizes;
  d.strides = s.strides;
  d.offset = s.offset;
  d.dtype = s.dtype;
}

void convert_in_place(const Tensor& t, Dtype dtype) {
  if (!t.defined() || !t.is_floating_point() || t.dtype() == dtype) return;
  set_data(t, t.detach().to(dtype));
  const Tensor grad = t.grad();
  if (grad.defined() && grad.is_floating_point() && grad.dtype() != dtype) {
    t.set_grad(grad.detach().to(dtype));
  }
}

}  // namespace

// ---- StateDict ----

void StateDict::insert(const std::string& key, const Tensor& value) {
  for (Item& item : items_) {
    if (item.first == key) {
      item.second = value;
      return;
    }
  }
  items_.emplace_back(key, value);
}

const Tensor* StateDict::find(const std::string& key) const {
  for (const Item& item : items_) {
    if (item.first == key) return &item.second;
  }
  return nullptr;
}

const Tensor& StateDict::at(const std::string& key) const {
  const Tensor* t = find(key);
  if (t == nullptr) throw Error("state_dict has no key \"" + key + "\"");
  return *t;
}

std::vector<std::string> StateDict::keys() const {
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const Item& item : items_) out.push_back(item.first);
  return out;
}

// ---- Module ----

std::string Module::name() const {
  return unqualified(demangle(typeid(*this).name()));
}

Tensor Module::forward(const Tensor& /*input*/) {
  throw Error("Module " + name() + " has no single-tensor forward");
}

void Module::check_new_name(const std::string& kind, const std::string& name) const {
  if (name.empty()) throw Error(kind + " name can't be empty string \"\"");
  if (name.find('.') != std::string::npos) {
    throw Error(kind + " name can't contain \".\", got: " + name);
  }
  const auto has = [&name](const auto& list) {
    return std::any_of(list.begin(), list.end(), [&](const auto& p) { return p.first == name; });
  };
  if (has(parameters_) || has(buffers_) || has(children_)) {
    throw Error("attribute '" + name + "' already exists in " + this->name());
  }
}

Tensor& Module::register_parameter(const std::string& name, Tensor tensor, bool requires_grad) {
  check_new_name("parameter", name);
  if (tensor.defined()) {
    if (!tensor.is_leaf()) {
      throw Error("Cannot assign non-leaf Tensor to parameter '" + name +
                  "'. Model parameters must be created explicitly. To express '" + name +
                  "' as a function of another Tensor, compute the value in the forward() "
                  "method.");
    }
    tensor.requires_grad_(requires_grad);
  }
  parameters_.emplace_back(name, std::move(tensor));
  return parameters_.back().second;
}

Tensor& Module::register_buffer(const std::string& name, Tensor tensor, bool persistent) {
  check_new_name("buffer", name);
  buffers_.emplace_back(name, std::move(tensor));
  if (!persistent) non_persistent_buffers_.push_back(name);
  return buffers_.back().second;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_new_name("module", name);
  if (!module) throw Error("module '" + name + "' is null; register a constructed module");
  if (module.get() == this) throw Error("module '" + name + "' can't be its own child");
  children_.emplace_back(name, std::move(module));
}

void Module::visit(const std::string& prefix, std::vector<const Module*>& seen,
                   const std::function<void(const std::string&, const Module&)>& fn) const {
  if (std::find(seen.begin(), seen.end(), this) != seen.end()) return;
  seen.push_back(this);
  fn(prefix, *this);
  for (const auto& [child_name, child] : children_) {
    child->visit(join_key(prefix, child_name), seen, fn);
  }
}

Module::NamedList<Tensor> Module::named_members(bool recurse, bool buffers) const {
  NamedList<Tensor> out;
  std::vector<const TensorImpl*> seen_tensors;
  const auto add_own = [&](const std::string& prefix, const Module& m) {
    for (const auto& [key, t] : buffers ? m.buffers_ : m.parameters_) {
      if (!t.defined()) continue;
      if (std::find(seen_tensors.begin(), seen_tensors.end(), t.impl()) != seen_tensors.end())
        continue;
      seen_tensors.push_back(t.impl());
      out.emplace_back(join_key(prefix, key), t);
    }
  };
  if (!recurse) {
    add_own("", *this);
    return out;
  }
  std::vector<const Module*> seen_modules;
  visit("", seen_modules, add_own);
  return out;
}

Module::NamedList<Tensor> Module::named_parameters(bool recurse) const {
  return named_members(recurse, /*buffers=*/false);
}

Module::NamedList<Tensor> Module::named_buffers(bool recurse) const {
  return named_members(recurse, /*buffers=*/true);
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& item : named_parameters(recurse)) out.push_back(std::move(item.second));
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& item : named_buffers(recurse)) out.push_back(std::move(item.second));
  return out;
}

Module::NamedList<std::shared_ptr<Module>> Module::named_children() const {
  NamedList<std::shared_ptr<Module>> out;
  for (const auto& item : children_) {
    const bool seen =
        std::any_of(out.begin(), out.end(), [&](const auto& o) { return o.second == item.second; });
    if (!seen) out.push_back(item);
  }
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& item : named_children()) out.push_back(std::move(item.second));
  return out;
}

Module::NamedList<std::shared_ptr<Module>> Module::named_modules() {
  std::shared_ptr<Module> self = weak_from_this().lock();
  if (!self) {
    throw Error("named_modules() needs " + name() +
                " to be owned by a std::shared_ptr (create it with std::make_shared)");
  }
  NamedList<std::shared_ptr<Module>> out;
  out.emplace_back("", self);
  std::vector<const Module*> seen{this};
  // Children are held by shared_ptr, so the visitor recovers each one's owner.
  for (const auto& [child_name, child] : children_) {
    child->visit(child_name, seen, [&out](const std::string& prefix, const Module& m) {
      out.emplace_back(prefix, std::const_pointer_cast<Module>(m.shared_from_this()));
    });
  }
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules() {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& item : named_modules()) out.push_back(std::move(item.second));
  return out;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& item : children_) item.second->train(on);
}

void Module::zero_grad(bool set_to_none) {
  for (const Tensor& p : parameters()) {
    autograd::clear_grad(p, set_to_none);
  }
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (auto& item : children_) item.second->apply(fn);
  fn(*this);
}

void Module::to(Dtype dtype) {
  if (!is_floating(dtype)) {
    throw Error(std::string("nn.Module.to only accepts floating point dtypes, but got desired "
                            "dtype=") +
                dtype_name(dtype));
  }
  autograd::NoGradGuard no_grad;
  for (const Tensor& p : parameters()) convert_in_place(p, dtype);
  for (const Tensor& b : buffers()) convert_in_place(b, dtype);
}

void Module::collect_state(const std::string& prefix, NamedList<Tensor>& out) const {
  for (const auto& [key, t] : parameters_) {
    if (t.defined()) out.emplace_back(prefix + key, t);
  }
  for (const auto& [key, t] : buffers_) {
    const bool persistent = std::find(non_persistent_buffers_.begin(),
                                      non_persistent_buffers_.end(),
                                      key) == non_persistent_buffers_.end();
    if (t.defined() && persistent) out.emplace_back(prefix + key, t);
  }
  for (const auto& [child_name, child] : children_) {
    child->collect_state(prefix + child_name + ".", out);
  }
}

StateDict Module::state_dict() const {
  NamedList<Tensor> live;
  collect_state("", live);
  StateDict out;
  for (const auto& [key, t] : live) out.insert(key, t.detach());
  return out;
}

LoadStateDictResult Module::load_state_dict(const StateDict& state_dict, bool strict) {
  NamedList<Tensor> live;
  collect_state("", live);

  LoadStateDictResult result;
  std::vector<std::string> size_errors;
  for (const auto& [key, target] : live) {
    const Tensor* source = state_dict.find(key);
    if (source == nullptr) {
      result.missing_keys.push_back(key);
    } else if (source->sizes() != target.sizes()) {
      size_errors.push_back("size mismatch for " + key + ": copying a param with shape " +
                            shape_str(source->sizes()) +
                            " from checkpoint, the shape in current model is " +
                            shape_str(target.sizes()) + ".");
    }
  }
  for (const auto& [key, value] : state_dict) {
    const bool expected = std::any_of(live.begin(), live.end(),
                                      [&key = key](const auto& l) { return l.first == key; });
    if (!expected) result.unexpected_keys.push_back(key);
  }

  // Same order as PyTorch: missing, unexpected, then size mismatches.
  std::vector<std::string> errors;
  if (strict && !result.missing_keys.empty()) {
    errors.push_back("Missing key(s) in state_dict: " + quoted_list(result.missing_keys) + ". ");
  }
  if (strict && !result.unexpected_keys.empty()) {
    errors.push_back("Unexpected key(s) in state_dict: " + quoted_list(result.unexpected_keys) +
                     ". ");
  }
  errors.insert(errors.end(), size_errors.begin(), size_errors.end());
  if (!errors.empty()) {
    std::string message = "Error(s) in loading state_dict for " + name() + ":";
    for (const std::string& e : errors) message += "\n\t" + e;
    throw Error(message);
  }

  autograd::NoGradGuard no_grad;
  for (const auto& [key, target] : live) {
    const Tensor* source = state_dict.find(key);
    if (source != nullptr) Tensor(target).copy_(*source);
  }
  return result;
}

}  // namespace weft::nn
