#pragma once
// Comparing an nn::Module with the equivalent torch::nn module: copy weft's weights into the
// torch module by their dotted names, run both on the same input, and compare the outputs and
// the gradients of a fixed random-weighted sum of the output (w.r.t. input and every parameter).
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>
#include <string>
#include <vector>

#include "weft/autograd.h"
#include "weft/nn/module.h"
#include "weft/ops.h"
#include "weft/tensor.h"

namespace weft::oracle {
// Defined in oracle/src/torch_eager.cpp (the public oracle headers stay free of torch).
at::ScalarType to_torch_dtype(Dtype dtype);
at::Tensor to_torch(const Tensor& tensor);
Tensor from_torch(const at::Tensor& tensor);
}  // namespace weft::oracle

namespace weft::testing {

// Values from a fixed sine pattern in [lo, hi): identical on both sides, no RNG involved.
inline Tensor pattern_tensor(std::vector<std::int64_t> shape, double seed, double lo = -1.0,
                             double hi = 1.0, Dtype dtype = Dtype::Float32) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  std::vector<double> v;
  v.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const double u = 0.5 + 0.5 * std::sin(seed + 2.3 * static_cast<double>(i) + 0.1 * i * i);
    v.push_back(lo + (hi - lo) * u);
  }
  return tensor(v, {n}).reshape(shape).to(dtype);
}

// Copies every parameter and buffer of `from` into the torch module's tensor of the same dotted
// name; fails the test when the two modules' key sets or shapes differ.
inline void copy_weights(const nn::Module& from, torch::nn::Module& to) {
  torch::NoGradGuard no_grad;
  auto torch_params = to.named_parameters(true);
  auto torch_buffers = to.named_buffers(true);
  std::size_t copied = 0;
  for (const auto& [name, value] : from.state_dict()) {
    torch::Tensor* target = torch_params.find(name);
    if (target == nullptr) target = torch_buffers.find(name);
    if (target == nullptr) {
      ADD_FAILURE() << "torch module has no parameter or buffer '" << name << "'";
      continue;
    }
    ASSERT_EQ(target->sizes().vec(), value.sizes()) << name;
    target->copy_(oracle::to_torch(value).to(target->scalar_type()));
    ++copied;
  }
  EXPECT_EQ(copied, torch_params.size() + torch_buffers.size())
      << "torch module has state that weft's lacks";
}

// max |a - b| <= atol + rtol·|b| elementwise, with the first offending index in the message.
inline void expect_close_to_torch(const Tensor& weft_value, const torch::Tensor& torch_value,
                                  double atol, double rtol, const std::string& what) {
  ASSERT_EQ(weft_value.sizes(), torch_value.sizes().vec()) << what;
  const auto a = weft_value.to_vector<double>();
  const torch::Tensor flat = torch_value.detach().to(torch::kFloat64).contiguous().view({-1});
  const double* b = flat.data_ptr<double>();
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!(std::abs(a[i] - b[i]) <= atol + rtol * std::abs(b[i]))) {
      ADD_FAILURE() << what << ": element " << i << " is " << a[i] << " in weft and " << b[i]
                    << " in torch";
      return;
    }
  }
}

// Runs forward on both modules (weights already copied), compares the output, then
// backpropagates sum(output * cotangent) on both and compares the input's gradient and every
// parameter's gradient by name. `weft_forward` / `torch_forward` map the input to the output.
template <typename WeftForward, typename TorchForward>
void expect_module_matches_torch(nn::Module& weft_module, torch::nn::Module& torch_module,
                                 const Tensor& input, WeftForward weft_forward,
                                 TorchForward torch_forward, double atol = 1e-5,
                                 double rtol = 1e-5) {
  const bool floating_input = input.is_floating_point();
  Tensor x = input.detach();
  if (floating_input) x.requires_grad_(true);
  torch::Tensor tx = oracle::to_torch(input);
  if (floating_input) tx.requires_grad_(true);

  Tensor y = weft_forward(x);
  torch::Tensor ty = torch_forward(tx);
  expect_close_to_torch(y, ty, atol, rtol, "forward output");

  const Tensor cotangent = pattern_tensor(y.sizes(), 0.77, -1.0, 1.0, y.dtype());
  weft_module.zero_grad();
  torch_module.zero_grad();
  sum(mul(y, cotangent)).backward();
  (ty * oracle::to_torch(cotangent)).sum().backward();

  if (floating_input) expect_close_to_torch(x.grad(), tx.grad(), atol, rtol, "input gradient");
  auto torch_params = torch_module.named_parameters(true);
  for (const auto& [name, p] : weft_module.named_parameters()) {
    const torch::Tensor* tp = torch_params.find(name);
    ASSERT_NE(tp, nullptr) << name;
    if (!p.grad().defined()) {
      EXPECT_FALSE(tp->grad().defined() && tp->grad().abs().max().item<double>() > 0)
          << "weft has no gradient for " << name;
      continue;
    }
    expect_close_to_torch(p.grad(), tp->grad(), atol, rtol, "gradient of " + name);
  }
}

}  // namespace weft::testing
