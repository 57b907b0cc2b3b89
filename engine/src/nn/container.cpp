// nn::Sequential: keeps its own list of children next to Module's registry for O(1) indexing.
#include "weft/nn/container.h"

#include <string>

#include "weft/error.h"

namespace weft::nn {

Sequential::Sequential(const std::vector<std::shared_ptr<Module>>& modules) {
  for (const auto& m : modules) push_back(m);
}

void Sequential::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

const std::shared_ptr<Module>& Sequential::operator[](std::int64_t index) const {
  const auto n = static_cast<std::int64_t>(modules_.size());
  if (index < -n || index >= n) {
    throw Error("index " + std::to_string(index) + " is out of range for Sequential of size " +
                std::to_string(n));
  }
  return modules_[static_cast<std::size_t>(index < 0 ? index + n : index)];
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& m : modules_) x = (*m)(x);
  return x;
}

}  // namespace weft::nn
