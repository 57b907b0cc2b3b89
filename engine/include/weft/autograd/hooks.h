#pragma once
// A per-thread hook on the backward pass: called with the gradients each recorded node
// computed for its inputs, which it may replace (same shapes and dtypes). The oracle's
// rounding model perturbs them to stand for the rounding of a float32 backward.

#include <functional>
#include <string>
#include <vector>

#include "weft/tensor.h"

namespace weft::autograd {

using BackwardHook =
    std::function<void(const std::string& node_name, std::vector<Tensor>& input_gradients)>;

// Installs `hook` on this thread for its lifetime; the previous hook comes back afterwards.
class BackwardHookGuard {
 public:
  explicit BackwardHookGuard(BackwardHook hook);
  ~BackwardHookGuard();
  BackwardHookGuard(const BackwardHookGuard&) = delete;
  BackwardHookGuard& operator=(const BackwardHookGuard&) = delete;

 private:
  BackwardHook previous_;
};

}  // namespace weft::autograd
