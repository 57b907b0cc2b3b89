// Optimizers: hand-computed first steps of SGD, Adam, AdamW, RMSprop and Adagrad per option
// combination, parameter groups, zero_grad, state dict round trips and PyTorch's messages.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/optim/adagrad.h"
#include "weft/optim/adam.h"
#include "weft/optim/rmsprop.h"
#include "weft/optim/sgd.h"

namespace weft {
namespace {

using optim::Adagrad;
using optim::AdagradOptions;
using optim::Adam;
using optim::AdamOptions;
using optim::AdamW;
using optim::ParamGroup;
using optim::RMSprop;
using optim::RMSpropOptions;
using optim::SGD;
using optim::SGDOptions;

// p = [1, -2] (float64, requires grad).
Tensor param() {
  return tensor(std::vector<double>{1.0, -2.0}).requires_grad_();
}
void set_grad(const Tensor& p, const std::vector<double>& g) {
  p.set_grad(tensor(g));
}

void expect_values(const Tensor& t, const std::vector<double>& expected) {
  const auto values = t.to_vector<double>();
  ASSERT_EQ(values.size(), expected.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_NEAR(values[i], expected[i], 1e-12) << "element " << i;
  }
}

void expect_error(const std::function<void()>& fn, const std::string& message) {
  try {
    fn();
    ADD_FAILURE() << "expected an error containing: " << message;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(Optim, SGDPlainStep) {
  Tensor p = param();
  SGD opt({p}, SGDOptions(0.1));
  set_grad(p, {0.5, 1.0});
  opt.step();
  expect_values(p, {0.95, -2.1});
  EXPECT_TRUE(p.is_leaf());
  EXPECT_TRUE(p.requires_grad());
}

TEST(Optim, SGDMaximizeAscends) {
  Tensor p = param();
  SGDOptions o(0.1);
  o.maximize = true;
  SGD opt({p}, o);
  set_grad(p, {0.5, 1.0});
  opt.step();
  expect_values(p, {1.05, -1.9});
}

TEST(Optim, SGDMomentumDampeningWeightDecay) {
  Tensor p = param();
  SGDOptions o(0.1);
  o.momentum = 0.9;
  o.dampening = 0.5;
  o.weight_decay = 0.1;
  SGD opt({p}, o);
  set_grad(p, {0.5, 1.0});
  opt.step();  // d = g + 0.1·p = [0.6, 0.8]; the first buffer is d itself (no dampening)
  expect_values(p, {0.94, -2.08});
  expect_values(opt.state(p)->tensors.at("momentum_buffer"), {0.6, 0.8});
  opt.step();  // d = [0.594, 0.792]; buf = 0.9·[0.6, 0.8] + 0.5·d = [0.837, 1.116]
  expect_values(opt.state(p)->tensors.at("momentum_buffer"), {0.837, 1.116});
  expect_values(p, {0.8563, -2.1916});
}

TEST(Optim, SGDNesterov) {
  Tensor p = param();
  SGDOptions o(0.1);
  o.momentum = 0.9;
  o.nesterov = true;
  SGD opt({p}, o);
  set_grad(p, {0.5, 1.0});
  opt.step();  // buf = g; d = g + 0.9·buf = [0.95, 1.9]
  expect_values(p, {0.905, -2.19});
  opt.step();  // buf = 0.9·g + g = [0.95, 1.9]; d = g + 0.9·buf = [1.355, 2.71]
  expect_values(p, {0.7695, -2.461});
}

TEST(Optim, SGDSkipsParametersWithoutGrad) {
  Tensor p = param();
  Tensor q = param();
  SGDOptions o(0.1);
  o.momentum = 0.9;
  SGD opt({p, q}, o);
  set_grad(p, {0.5, 1.0});
  opt.step();
  expect_values(p, {0.95, -2.1});
  expect_values(q, {1.0, -2.0});
  EXPECT_EQ(opt.state(q), nullptr);
}

// Adam's first step: m̂ = g and v̂ = g², so p -= lr · g / (|g| + ε).
TEST(Optim, AdamFirstStep) {
  Tensor p = param();
  Adam opt({p}, AdamOptions(0.1));
  set_grad(p, {0.5, 1.0});
  opt.step();
  expect_values(p, {1.0 - 0.1 * 0.5 / (0.5 + 1e-8), -2.0 - 0.1 * 1.0 / (1.0 + 1e-8)});
  EXPECT_EQ(opt.state(p)->step, 1);
  expect_values(opt.state(p)->tensors.at("exp_avg"), {0.05, 0.1});
  expect_values(opt.state(p)->tensors.at("exp_avg_sq"), {0.00025, 0.001});
}

TEST(Optim, AdamWeightDecayAddsToGrad) {
  Tensor p = param();
  AdamOptions o(0.1);
  o.weight_decay = 0.1;
  Adam opt({p}, o);
  set_grad(p, {0.5, 1.0});
  opt.step();  // g = [0.6, 0.8]
  expect_values(p, {1.0 - 0.1 * 0.6 / (0.6 + 1e-8), -2.0 - 0.1 * 0.8 / (0.8 + 1e-8)});
}

TEST(Optim, AdamWDecaysWeightsBeforeTheUpdate) {
  Tensor p = param();
  AdamOptions o(0.1);
  o.weight_decay = 0.1;
  AdamW opt({p}, o);
  set_grad(p, {0.5, 1.0});
  opt.step();  // p *= 0.99, then the plain Adam step
  expect_values(p, {0.99 - 0.1 * 0.5 / (0.5 + 1e-8), -1.98 - 0.1 * 1.0 / (1.0 + 1e-8)});
  EXPECT_DOUBLE_EQ(optim::adamw_options().weight_decay, 1e-2);
}

// Two steps of Adam on one scalar, written out, with and without AMSGrad.
double adam_two_steps(double p, double g1, double g2, double lr, bool amsgrad) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  double m = 0, v = 0, vmax = 0;
  const double grads[] = {g1, g2};
  for (int t = 1; t <= 2; ++t) {
    const double g = grads[t - 1];
    m = b1 * m + (1 - b1) * g;
    v = b2 * v + (1 - b2) * g * g;
    vmax = std::max(vmax, v);
    const double second = amsgrad ? vmax : v;
    const double denom = std::sqrt(second) / std::sqrt(1 - std::pow(b2, t)) + eps;
    p -= lr / (1 - std::pow(b1, t)) * m / denom;
  }
  return p;
}

TEST(Optim, AdamAmsgradUsesTheLargestSecondMoment) {
  for (bool amsgrad : {false, true}) {
    Tensor p = param();
    AdamOptions o(0.1);
    o.amsgrad = amsgrad;
    Adam opt({p}, o);
    set_grad(p, {0.5, 1.0});
    opt.step();
    set_grad(p, {0.01, -0.02});  // v shrinks, so the max keeps step 1's value
    opt.step();
    expect_values(p, {adam_two_steps(1.0, 0.5, 0.01, 0.1, amsgrad),
                      adam_two_steps(-2.0, 1.0, -0.02, 0.1, amsgrad)});
    EXPECT_EQ(opt.state(p)->tensors.count("max_exp_avg_sq"), amsgrad ? 1u : 0u);
  }
  EXPECT_NE(adam_two_steps(1.0, 0.5, 0.01, 0.1, true), adam_two_steps(1.0, 0.5, 0.01, 0.1, false));
}

TEST(Optim, RMSpropFirstStep) {
  Tensor p = param();
  RMSprop opt({p}, RMSpropOptions(0.01));
  set_grad(p, {0.5, 1.0});
  opt.step();  // v = 0.01·g², so p -= 0.01 · g / (0.1·|g| + ε)
  expect_values(p, {1.0 - 0.01 * 0.5 / (0.05 + 1e-8), -2.0 - 0.01 * 1.0 / (0.1 + 1e-8)});
}

TEST(Optim, RMSpropCenteredWithMomentum) {
  Tensor p = param();
  RMSpropOptions o(0.01);
  o.centered = true;
  o.momentum = 0.5;
  RMSprop opt({p}, o);
  set_grad(p, {0.5, 1.0});
  opt.step();  // v − ḡ² = 0.01·g² − 0.0001·g² = 0.0099·g²; b = g / a
  const double s = std::sqrt(0.0099);
  double b0 = 0.5 / (s * 0.5 + 1e-8), b1 = 1.0 / (s * 1.0 + 1e-8);
  expect_values(p, {1.0 - 0.01 * b0, -2.0 - 0.01 * b1});
  opt.step();  // same grad: v = 0.0199·g², ḡ = 0.0199·g, b = 0.5·b + g / a
  const double s2 = std::sqrt(0.0199 - 0.0199 * 0.0199);
  b0 = 0.5 * b0 + 0.5 / (s2 * 0.5 + 1e-8);
  b1 = 0.5 * b1 + 1.0 / (s2 * 1.0 + 1e-8);
  expect_values(p, {1.0 - 0.01 * 0.5 / (s * 0.5 + 1e-8) - 0.01 * b0,
                    -2.0 - 0.01 * 1.0 / (s * 1.0 + 1e-8) - 0.01 * b1});
}

TEST(Optim, AdagradStepsAndLrDecay) {
  Tensor p = param();
  AdagradOptions o(0.1);
  o.lr_decay = 0.5;
  o.initial_accumulator_value = 0.25;
  Adagrad opt({p}, o);
  ASSERT_NE(opt.state(p), nullptr);  // created eagerly, as PyTorch
  expect_values(opt.state(p)->tensors.at("sum"), {0.25, 0.25});
  set_grad(p, {0.5, 1.0});
  opt.step();  // sum = [0.5, 1.25]
  const double a0 = 1.0 - 0.1 * 0.5 / (std::sqrt(0.5) + 1e-10);
  const double a1 = -2.0 - 0.1 * 1.0 / (std::sqrt(1.25) + 1e-10);
  expect_values(p, {a0, a1});
  opt.step();  // clr = 0.1 / 1.5; sum = [0.75, 2.25]
  expect_values(
      p, {a0 - 0.1 / 1.5 * 0.5 / (std::sqrt(0.75) + 1e-10), a1 - 0.1 / 1.5 * 1.0 / (1.5 + 1e-10)});
}

TEST(Optim, ParamGroupsHaveTheirOwnOptions) {
  Tensor p = param();
  Tensor q = param();
  Tensor r = param();
  SGD opt({ParamGroup{{p}, {{"lr", 0.1}}}, ParamGroup{{q, r}, {}}}, SGDOptions(0.01));
  ASSERT_EQ(opt.param_groups().size(), 2u);
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].options.at("lr"), 0.1);
  EXPECT_DOUBLE_EQ(opt.param_groups()[1].options.at("lr"), 0.01);
  EXPECT_DOUBLE_EQ(opt.param_groups()[1].options.at("momentum"), 0.0);
  for (const Tensor& t : {p, q, r}) set_grad(t, {1.0, 1.0});
  opt.step();
  expect_values(p, {0.9, -2.1});
  expect_values(q, {0.99, -2.01});
  opt.param_groups()[1].options["lr"] = 1.0;  // like a scheduler
  opt.step();
  expect_values(r, {0.99 - 1.0, -2.01 - 1.0});
  opt.add_param_group(ParamGroup{{param()}, {{"momentum", 0.9}}});
  EXPECT_EQ(opt.param_groups().size(), 3u);
}

TEST(Optim, ZeroGradSetsToNoneOrZeroes) {
  Tensor p = param();
  Tensor q = param();
  SGD opt({p, q}, SGDOptions(0.1));
  (p * p).sum().backward();
  (q * q).sum().backward();
  opt.zero_grad(false);
  ASSERT_TRUE(p.grad().defined());
  expect_values(p.grad(), {0.0, 0.0});
  expect_values(q.grad(), {0.0, 0.0});
  opt.zero_grad();
  EXPECT_FALSE(p.grad().defined());
  EXPECT_FALSE(q.grad().defined());
  opt.zero_grad(false);  // nothing to zero
  EXPECT_FALSE(p.grad().defined());
}

// loss = Σ (p − c)² · w, on two parameters.
void quadratic_step(optim::Optimizer& opt, const Tensor& p, const Tensor& q) {
  opt.zero_grad();
  const Tensor c = tensor(std::vector<double>{0.3, -0.7});
  const Tensor w = tensor(std::vector<double>{1.5, 0.25});
  (((p - c) * (p - c) * w).sum() + (q * q * q).sum()).backward();
  opt.step();
}

template <typename Opt, typename Options>
void expect_round_trip(const Options& options) {
  Tensor p = param();
  Tensor q = tensor(std::vector<double>{0.5, 0.75}).requires_grad_();
  Opt a({ParamGroup{{p}, {}}, ParamGroup{{q}, {{"lr", options.lr / 2}}}}, options);
  for (int i = 0; i < 3; ++i) quadratic_step(a, p, q);
  const optim::OptimizerState saved = a.state_dict();

  Tensor p2 = p.detach().clone().requires_grad_();
  Tensor q2 = q.detach().clone().requires_grad_();
  Opt b({ParamGroup{{p2}, {}}, ParamGroup{{q2}, {}}}, options);
  b.load_state_dict(saved);
  EXPECT_DOUBLE_EQ(b.param_groups()[1].options.at("lr"), options.lr / 2);
  for (int i = 0; i < 3; ++i) {
    quadratic_step(a, p, q);
    quadratic_step(b, p2, q2);
    EXPECT_EQ(p.to_vector<double>(), p2.to_vector<double>());
    EXPECT_EQ(q.to_vector<double>(), q2.to_vector<double>());
  }
  // The snapshot is a copy: later steps did not change it.
  const optim::OptimizerState after = a.state_dict();
  ASSERT_EQ(saved.state.size(), after.state.size());
  const auto& [name, before] = *saved.state.at(0).tensors.begin();
  EXPECT_NE(before.to_vector<double>(), after.state.at(0).tensors.at(name).to_vector<double>())
      << name;
}

TEST(Optim, StateDictRoundTripContinuesIdentically) {
  SGDOptions sgd(0.05);
  sgd.momentum = 0.9;
  sgd.nesterov = true;
  expect_round_trip<SGD>(sgd);
  AdamOptions adam(0.05);
  adam.amsgrad = true;
  expect_round_trip<Adam>(adam);
  expect_round_trip<AdamW>(adam);
  RMSpropOptions rms(0.01);
  rms.momentum = 0.5;
  rms.centered = true;
  expect_round_trip<RMSprop>(rms);
  AdagradOptions ada(0.1);
  ada.lr_decay = 0.1;
  expect_round_trip<Adagrad>(ada);
}

TEST(Optim, LoadStateDictChecksGroups) {
  Tensor p = param();
  Tensor q = param();
  Adam a({p, q});
  Adam b({ParamGroup{{p}, {}}, ParamGroup{{q}, {}}});
  expect_error([&] { b.load_state_dict(a.state_dict()); },
               "loaded state dict has a different number of parameter groups");
  Adam c({p});
  expect_error([&] { c.load_state_dict(a.state_dict()); },
               "loaded state dict contains a parameter group that doesn't match the size of "
               "optimizer's group");
}

TEST(Optim, InvalidOptionsHavePyTorchMessages) {
  const std::vector<Tensor> ps{param()};
  expect_error([&] { SGD(ps, SGDOptions(-1)); }, "Invalid learning rate: -1");
  SGDOptions sgd(0.1);
  sgd.momentum = -0.5;
  expect_error([&] { SGD(ps, sgd); }, "Invalid momentum value: -0.5");
  sgd.momentum = 0.0;
  sgd.nesterov = true;
  expect_error([&] { SGD(ps, sgd); }, "Nesterov momentum requires a momentum and zero dampening");
  sgd.momentum = 0.9;
  sgd.dampening = 0.1;
  expect_error([&] { SGD(ps, sgd); }, "Nesterov momentum requires a momentum and zero dampening");
  AdamOptions adam;
  adam.beta1 = 1.0;
  expect_error([&] { Adam(ps, adam); }, "Invalid beta parameter at index 0: 1");
  adam.beta1 = 0.9;
  adam.beta2 = -0.1;
  expect_error([&] { AdamW(ps, adam); }, "Invalid beta parameter at index 1: -0.1");
  adam.beta2 = 0.999;
  adam.eps = -1e-8;
  expect_error([&] { Adam(ps, adam); }, "Invalid epsilon value: -1e-08");
  adam.eps = 1e-8;
  adam.weight_decay = -1;
  expect_error([&] { Adam(ps, adam); }, "Invalid weight_decay value: -1");
  RMSpropOptions rms;
  rms.alpha = -1;
  expect_error([&] { RMSprop(ps, rms); }, "Invalid alpha value: -1");
  AdagradOptions ada;
  ada.lr_decay = -1;
  expect_error([&] { Adagrad(ps, ada); }, "Invalid lr_decay value: -1");
  // A group's own options are checked too, and unknown names are refused.
  expect_error(
      [&] {
        SGD({ParamGroup{ps, {{"lr", -1}}}}, SGDOptions(0.1));
      },
      "Invalid learning rate: -1");
  expect_error([&] { SGD({ParamGroup{ps, {{"betas", 0.5}}}}, SGDOptions(0.1)); }, "betas");
  expect_error([&] { SGD(std::vector<Tensor>{}, SGDOptions(0.1)); },
               "optimizer got an empty parameter list");
  expect_error(
      [&] {
        SGD({ParamGroup{ps, {}}, ParamGroup{ps, {}}}, SGDOptions(0.1));
      },
      "some parameters appear in more than one parameter group");
  const Tensor nonleaf = ps[0] * 2.0;
  expect_error([&] { SGD({nonleaf}, SGDOptions(0.1)); }, "can't optimize a non-leaf Tensor");
}

}  // namespace
}  // namespace weft
