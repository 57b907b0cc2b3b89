// Containers keep their own list of children next to Module's registry, for O(1) indexing
// and typed iteration.
#include "weft/nn/container.h"

#include <string>

#include "weft/error.h"

namespace weft::nn {

namespace {
std::size_t checked_index(std::int64_t index, std::size_t size, const std::string& kind) {
  const auto n = static_cast<std::int64_t>(size);
  if (index < -n || index >= n) {
    throw Error("index " + std::to_string(index) + " is out of range for " + kind + " of size " +
                std::to_string(n));
  }
  return static_cast<std::size_t>(index < 0 ? index + n : index);
}

[[noreturn]] void missing_forward(const std::string& name) {
  throw Error("Module [" + name + "] is missing the required \"forward\" function");
}
}  // namespace

Sequential::Sequential(const std::vector<std::shared_ptr<Module>>& modules) {
  for (const auto& m : modules) push_back(m);
}

void Sequential::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

const std::shared_ptr<Module>& Sequential::operator[](std::int64_t index) const {
  return modules_[checked_index(index, modules_.size(), "Sequential")];
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& m : modules_) x = (*m)(x);
  return x;
}

ModuleList::ModuleList(const std::vector<std::shared_ptr<Module>>& modules) {
  extend(modules);
}

void ModuleList::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

void ModuleList::extend(const std::vector<std::shared_ptr<Module>>& modules) {
  for (const auto& m : modules) push_back(m);
}

const std::shared_ptr<Module>& ModuleList::operator[](std::int64_t index) const {
  return modules_[checked_index(index, modules_.size(), "ModuleList")];
}

Tensor ModuleList::forward(const Tensor& /*input*/) {
  missing_forward(name());
}

ModuleDict::ModuleDict(const std::vector<Item>& modules) {
  update(modules);
}

void ModuleDict::insert(const std::string& key, std::shared_ptr<Module> module) {
  register_module(key, module);  // checks the key
  items_.emplace_back(key, std::move(module));
}

void ModuleDict::update(const std::vector<Item>& modules) {
  for (const auto& [key, module] : modules) insert(key, module);
}

bool ModuleDict::contains(const std::string& key) const {
  for (const auto& item : items_) {
    if (item.first == key) return true;
  }
  return false;
}

const std::shared_ptr<Module>& ModuleDict::at(const std::string& key) const {
  for (const auto& item : items_) {
    if (item.first == key) return item.second;
  }
  throw Error("ModuleDict has no key '" + key + "'");
}

std::vector<std::string> ModuleDict::keys() const {
  std::vector<std::string> out;
  for (const auto& item : items_) out.push_back(item.first);
  return out;
}

std::vector<std::shared_ptr<Module>> ModuleDict::values() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& item : items_) out.push_back(item.second);
  return out;
}

Tensor ModuleDict::forward(const Tensor& /*input*/) {
  missing_forward(name());
}

}  // namespace weft::nn
