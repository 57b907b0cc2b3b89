#pragma once
// nn::Sequential: runs its children in order (torch.nn.Sequential). Children are named
// "0", "1", … so state-dict keys match Python's ("0.weight").

#include <cstdint>
#include <memory>
#include <vector>

#include "weft/nn/module.h"

namespace weft::nn {

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

}  // namespace weft::nn
