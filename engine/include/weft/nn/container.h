#pragma once
// Containers (torch.nn.Sequential, ModuleList, ModuleDict). Children are registered under
// their index ("0", "1", …) or key, so state-dict keys match Python's ("0.weight",
// "blocks.1.bias", "heads.cls.weight").

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "weft/nn/module.h"

namespace weft::nn {

// Runs its children in order.
class Sequential : public Module {
 public:
  Sequential() = default;
  explicit Sequential(const std::vector<std::shared_ptr<Module>>& modules);
  // Sequential(linear, relu, …) with any shared_ptr<Module subclass> arguments.
  template <typename... Ms>
  explicit Sequential(std::shared_ptr<Ms>... modules)
      : Sequential(std::vector<std::shared_ptr<Module>>{std::move(modules)...}) {}

  // Appends `module` under the name str(size()).
  void push_back(std::shared_ptr<Module> module);
  std::size_t size() const { return modules_.size(); }
  bool empty() const { return modules_.empty(); }
  // Negative indices count from the end, as in Python.
  const std::shared_ptr<Module>& operator[](std::int64_t index) const;

  // Feeds the input through every child in order (the identity when empty).
  Tensor forward(const Tensor& input) override;

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

// A list of submodules that are registered (parameters, state dict, train/eval) but not run:
// it has no forward; the owner iterates it.
class ModuleList : public Module {
 public:
  using Iterator = std::vector<std::shared_ptr<Module>>::const_iterator;

  ModuleList() = default;
  explicit ModuleList(const std::vector<std::shared_ptr<Module>>& modules);
  template <typename... Ms>
  explicit ModuleList(std::shared_ptr<Ms>... modules)
      : ModuleList(std::vector<std::shared_ptr<Module>>{std::move(modules)...}) {}

  // Appends `module` under the name str(size()).
  void push_back(std::shared_ptr<Module> module);
  void append(std::shared_ptr<Module> module) { push_back(std::move(module)); }
  void extend(const std::vector<std::shared_ptr<Module>>& modules);
  std::size_t size() const { return modules_.size(); }
  bool empty() const { return modules_.empty(); }
  // Negative indices count from the end, as in Python.
  const std::shared_ptr<Module>& operator[](std::int64_t index) const;
  Iterator begin() const { return modules_.begin(); }
  Iterator end() const { return modules_.end(); }

  // Throws: a ModuleList is not callable (Python's "missing the required forward").
  Tensor forward(const Tensor& input) override;

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

// Submodules under string keys, in insertion order. Like ModuleList, it has no forward.
// Keys are module names: non-empty, without '.', unique (re-assigning a key is not supported).
class ModuleDict : public Module {
 public:
  using Item = std::pair<std::string, std::shared_ptr<Module>>;
  using Iterator = std::vector<Item>::const_iterator;

  ModuleDict() = default;
  explicit ModuleDict(const std::vector<Item>& modules);

  void insert(const std::string& key, std::shared_ptr<Module> module);
  void update(const std::vector<Item>& modules);
  bool contains(const std::string& key) const;
  // Throws when the key is absent.
  const std::shared_ptr<Module>& at(const std::string& key) const;
  const std::shared_ptr<Module>& operator[](const std::string& key) const { return at(key); }
  std::vector<std::string> keys() const;
  std::vector<std::shared_ptr<Module>> values() const;
  const std::vector<Item>& items() const { return items_; }
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  Iterator begin() const { return items_.begin(); }
  Iterator end() const { return items_.end(); }

  // Throws: a ModuleDict is not callable.
  Tensor forward(const Tensor& input) override;

 private:
  std::vector<Item> items_;
};

}  // namespace weft::nn
