#pragma once
// Finite-difference gradient checks for engine ops (float64): autograd's gradient of a
// random-weighted sum of the outputs must match central differences for every input element.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "weft/autograd.h"
#include "weft/nn/module.h"
#include "weft/ops.h"

namespace weft::testing {

using OpFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Random float64 tensor with values in [lo, hi), reproducible from `seed`.
inline Tensor random_tensor(IntList shape, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> values(static_cast<std::size_t>(numel_of(shape)));
  for (double& v : values) v = dist(rng);
  return tensor(values, shape.empty() ? IntList{} : shape).reshape(shape);
}

// Weighted sum of all floating outputs with fixed random weights: a scalar whose gradient
// exercises every output element.
inline Tensor weighted_sum(const std::vector<Tensor>& outputs, std::uint64_t seed) {
  Tensor total = scalar_tensor(0.0, dtype(Dtype::Float64));
  std::uint64_t s = seed;
  for (const Tensor& out : outputs) {
    if (!out.defined() || !out.is_floating_point()) continue;
    const Tensor w = random_tensor(out.sizes(), ++s, 0.5, 1.5);
    total = total + sum(mul(out.to(Dtype::Float64), w));
  }
  return total;
}

// `inputs`: float64 leaves are checked; other inputs (indices, masks) are passed through.
inline void expect_gradients_match_finite_differences(const OpFn& fn, std::vector<Tensor> inputs,
                                                      double eps = 1e-6, double atol = 1e-6,
                                                      double rtol = 1e-4) {
  std::vector<Tensor> leaves;
  for (Tensor& t : inputs) {
    if (t.defined() && t.dtype() == Dtype::Float64) {
      t = t.detach().clone();
      t.requires_grad_(true);
      leaves.push_back(t);
    }
  }
  ASSERT_FALSE(leaves.empty()) << "no float64 input to check";
  const std::uint64_t seed = 1234;
  Tensor loss = weighted_sum(fn(inputs), seed);
  if (!loss.requires_grad()) {
    // Every output is constant in the inputs: the gradient must be zero, nothing to run.
    return;
  }
  const std::vector<Tensor> analytic = autograd::grad({loss}, leaves, {}, false, false, true);
  autograd::NoGradGuard guard;
  for (std::size_t k = 0; k < leaves.size(); ++k) {
    Tensor leaf = leaves[k];
    double* data = leaf.data<double>();
    ASSERT_TRUE(leaf.is_contiguous());
    const std::vector<double> grad =
        analytic[k].defined() ? analytic[k].to_vector<double>()
                              : std::vector<double>(static_cast<std::size_t>(leaf.numel()), 0.0);
    for (std::int64_t i = 0; i < leaf.numel(); ++i) {
      const double saved = data[i];
      data[i] = saved + eps;
      const double plus = weighted_sum(fn(inputs), seed).item();
      data[i] = saved - eps;
      const double minus = weighted_sum(fn(inputs), seed).item();
      data[i] = saved;
      const double numeric = (plus - minus) / (2 * eps);
      EXPECT_NEAR(grad[static_cast<std::size_t>(i)], numeric, atol + rtol * std::fabs(numeric))
          << "input " << k << " element " << i;
    }
  }
}

// Elementwise |a - b| <= tol, with the first differing element in the message.
inline void expect_same_values(const Tensor& a, const Tensor& b, double tol = 0.0) {
  ASSERT_EQ(a.sizes(), b.sizes());
  const auto va = a.to_vector<double>();
  const auto vb = b.to_vector<double>();
  for (std::size_t i = 0; i < va.size(); ++i) EXPECT_NEAR(va[i], vb[i], tol) << "element " << i;
}

// Autograd's gradient of `loss` w.r.t. every parameter of `module` (float64) against central
// differences.
inline void expect_parameter_gradients_match_finite_differences(nn::Module& module,
                                                                const std::function<Tensor()>& loss,
                                                                double eps = 1e-6,
                                                                double tol = 1e-6) {
  module.zero_grad();
  loss().backward();
  for (const auto& [name, p] : module.named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    const auto grad = p.grad().to_vector<double>();
    autograd::NoGradGuard no_grad;
    double* data = p.data<double>();
    for (std::int64_t i = 0; i < p.numel(); ++i) {
      const double saved = data[i];
      data[i] = saved + eps;
      const double plus = loss().item();
      data[i] = saved - eps;
      const double minus = loss().item();
      data[i] = saved;
      const double numeric = (plus - minus) / (2 * eps);
      EXPECT_NEAR(grad[static_cast<std::size_t>(i)], numeric, tol + 1e-4 * std::fabs(numeric))
          << name << " element " << i;
    }
  }
}

}  // namespace weft::testing
