// Autograd semantics: accumulation, retain_graph, version counters, no_grad, detach,
// retain_grad, diamonds, broadcasting, autograd::grad.
#include <gtest/gtest.h>

#include <cmath>

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {
namespace {

Tensor leaf(std::vector<double> values, IntList shape = {}) {
  Tensor t = tensor(values, shape);
  t.requires_grad_();
  return t;
}

TEST(Autograd, GradientsAccumulateAcrossBackwardCalls) {
  Tensor x = leaf({1.0, 2.0});
  (x * x).sum().backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{2, 4}));
  (x * 3.0).sum().backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{5, 7}));
}

TEST(Autograd, SecondBackwardWithoutRetainGraphFails) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = (x.exp() * x).sum();
  y.backward();
  try {
    y.backward();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("backward through the graph a second time"),
              std::string::npos);
  }
}

TEST(Autograd, RetainGraphAllowsASecondBackward) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = (x * x).sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{4, 8}));
}

TEST(Autograd, InPlaceChangeOfSavedTensorIsDetected) {
  Tensor x = leaf({1.0, 2.0});
  Tensor e = x.exp();
  Tensor y = e.sum();
  Tensor z = (e * 2.0).sum();  // mul saves nothing of e's value? it saves e for the scalar side
  (void)z;
  Tensor h = x * 1.0;      // non-leaf
  Tensor s = h.sigmoid();  // saves its output
  s.mul_(2.0);
  try {
    s.sum().backward();
    FAIL() << "expected a version-counter error";
  } catch (const Error& e2) {
    EXPECT_NE(std::string(e2.what()).find("modified by an inplace operation"), std::string::npos)
        << e2.what();
  }
  (void)y;
}

TEST(Autograd, InPlaceOnLeafRequiringGradIsRejected) {
  Tensor x = leaf({1.0});
  EXPECT_THROW(x.add_(ones({1}, dtype(Dtype::Float64))), Error);
  autograd::NoGradGuard guard;
  x.add_(ones({1}, dtype(Dtype::Float64)));  // allowed under no_grad (optimizer steps)
  EXPECT_EQ(x.item(), 2.0);
}

TEST(Autograd, InPlaceOnNonLeafKeepsCorrectGradient) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 2.0;
  y.mul_(x);  // y = 2x^2
  y.sum().backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{4, 8}));
}

TEST(Autograd, NoGradGuardStopsRecording) {
  Tensor x = leaf({1.0});
  Tensor y;
  {
    autograd::NoGradGuard guard;
    y = x * 2.0;
  }
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(y.grad_fn(), nullptr);
}

TEST(Autograd, DetachCutsHistoryButSharesStorage) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 2.0;
  Tensor d = y.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_EQ(d.storage(), y.storage());
  (d * x).sum().backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{2, 4}));
}

TEST(Autograd, RetainGradKeepsNonLeafGradient) {
  Tensor x = leaf({1.0, 2.0});
  Tensor h = x * 3.0;
  h.retain_grad();
  Tensor other = x * 5.0;
  (h * h).sum().backward();
  EXPECT_EQ(h.grad().to_vector<double>(), (std::vector<double>{6, 12}));
  EXPECT_FALSE(other.grad().defined());
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{18, 36}));
}

TEST(Autograd, DiamondGraphSumsBothPaths) {
  Tensor x = leaf({2.0});
  Tensor a = x * x;    // 2x
  Tensor b = a.exp();  // e^{x^2}
  Tensor c = a * 3.0;  // 3x^2
  (b + c).sum().backward();
  const double expected = 2 * 2.0 * std::exp(4.0) + 6 * 2.0;
  EXPECT_NEAR(x.grad().item(), expected, 1e-9);
}

TEST(Autograd, BroadcastGradientsAreReduced) {
  Tensor a = leaf({1.0, 2.0, 3.0}, {3, 1});
  Tensor b = leaf({10.0, 20.0}, {2});
  (a * b).sum().backward();
  EXPECT_EQ(a.grad().sizes(), (Shape{3, 1}));
  EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{30, 30, 30}));
  EXPECT_EQ(b.grad().to_vector<double>(), (std::vector<double>{6, 6}));
}

TEST(Autograd, ImplicitGradientOnlyForScalars) {
  Tensor x = leaf({1.0, 2.0});
  EXPECT_THROW((x * 2.0).backward(), Error);
  EXPECT_THROW(ones({2}).backward(), Error);  // does not require grad
}

TEST(Autograd, GradFunctionReturnsWithoutTouchingLeaves) {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = (x * x * x).sum();
  const std::vector<Tensor> g = autograd::grad({y}, {x});
  EXPECT_EQ(g[0].to_vector<double>(), (std::vector<double>{3, 12}));
  EXPECT_FALSE(x.grad().defined());
}

TEST(Autograd, GradOfUnusedInputNeedsAllowUnused) {
  Tensor x = leaf({1.0});
  Tensor unused = leaf({1.0});
  Tensor y = (x * 2.0).sum();
  EXPECT_THROW(autograd::grad({y}, {unused}, {}, true), Error);
  const std::vector<Tensor> g = autograd::grad({y}, {unused}, {}, false, false, true);
  EXPECT_FALSE(g[0].defined());
}

TEST(Autograd, CastBetweenFloatsCarriesGradientBack) {
  Tensor x = leaf({1.5});
  Tensor y = x.to(Dtype::Float32);
  EXPECT_EQ(y.dtype(), Dtype::Float32);
  (y * y).sum().backward();
  EXPECT_EQ(x.grad().dtype(), Dtype::Float64);
  EXPECT_DOUBLE_EQ(x.grad().item(), 3.0);
}

TEST(Autograd, ViewsPropagateGradients) {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = x.t().slice(0, 1, 3).select(1, 0).reshape({1, 2}).expand({3, 2});
  y.sum().backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0, 3, 3, 0, 0, 0}));
}

TEST(Autograd, OnlyFloatingTensorsRequireGrad) {
  Tensor i = arange(3);
  EXPECT_THROW(i.requires_grad_(), Error);
}

}  // namespace
}  // namespace weft
