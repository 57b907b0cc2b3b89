// weft's optimizers against torch::optim: 20 steps of a tiny linear regression in float64,
// from identical parameters, agree after every step for each optimizer and option combination.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "weft/ops.h"
#include "weft/optim/adagrad.h"
#include "weft/optim/adam.h"
#include "weft/optim/rmsprop.h"
#include "weft/optim/sgd.h"

namespace weft {
namespace {

constexpr int kSteps = 20;
constexpr double kRtol = 1e-12;

// Deterministic data: X is 6×3, y is 6, w starts at 3 values, b at one.
std::vector<double> values(int n, double seed) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(std::sin(seed + 1.7 * i) * 1.3 + 0.1 * i);
  return out;
}

torch::Tensor to_torch(const std::vector<double>& v, std::vector<std::int64_t> shape) {
  return torch::tensor(v, torch::kFloat64).reshape(shape);
}

using WeftFactory =
    std::function<std::unique_ptr<optim::Optimizer>(const Tensor& w, const Tensor& b)>;
using TorchFactory = std::function<std::unique_ptr<torch::optim::Optimizer>(
    const torch::Tensor& w, const torch::Tensor& b)>;

// Runs both optimizers on loss = ±mean((X·w + b − y)²) and compares w and b after each step.
// `negate_torch_loss` lets a weft `maximize` run be checked against torch minimizing −loss.
void expect_same_trajectory(const WeftFactory& make_weft, const TorchFactory& make_torch,
                            bool negate_torch_loss = false) {
  const auto xs = values(18, 0.3), ys = values(6, 2.1), w0 = values(3, 4.2), b0 = values(1, 5.5);
  const Tensor X = tensor(xs, {6, 3}), y = tensor(ys, {6});
  Tensor w = tensor(w0, {3}).requires_grad_(), b = tensor(b0, {1}).requires_grad_();
  const torch::Tensor tX = to_torch(xs, {6, 3}), ty = to_torch(ys, {6});
  torch::Tensor tw = to_torch(w0, {3}).requires_grad_(), tb = to_torch(b0, {1}).requires_grad_();

  auto opt = make_weft(w, b);
  auto topt = make_torch(tw, tb);
  for (int step = 1; step <= kSteps; ++step) {
    opt->zero_grad();
    const Tensor r = matmul(X, w) + b - y;
    (r * r).mean().backward();
    opt->step();

    topt->zero_grad();
    const torch::Tensor tr = torch::matmul(tX, tw) + tb - ty;
    torch::Tensor tloss = (tr * tr).mean();
    if (negate_torch_loss) tloss = -tloss;
    tloss.backward();
    topt->step();

    for (const auto& [ours, theirs] : {std::make_pair(w, tw), std::make_pair(b, tb)}) {
      const auto a = ours.to_vector<double>();
      const torch::Tensor t = theirs.detach().contiguous();
      ASSERT_EQ(static_cast<std::int64_t>(a.size()), t.numel());
      for (std::size_t i = 0; i < a.size(); ++i) {
        const double e = t.data_ptr<double>()[i];
        ASSERT_LE(std::abs(a[i] - e), kRtol * std::max(std::abs(a[i]), std::abs(e)) + 1e-300)
            << "step " << step << " element " << i << ": weft " << a[i] << " torch " << e;
      }
    }
  }
}

struct SgdCase {
  double lr, momentum, dampening, weight_decay;
  bool nesterov;
};

TEST(OptimVsTorch, SGDMatchesTorch) {
  const SgdCase cases[] = {{0.05, 0, 0, 0, false},
                           {0.05, 0.9, 0, 0, false},
                           {0.05, 0.9, 0.3, 0.01, false},
                           {0.05, 0.9, 0, 0.05, true},
                           {0.02, 0.5, 0, 0, true}};
  for (const SgdCase& c : cases) {
    SCOPED_TRACE("momentum " + std::to_string(c.momentum) + " nesterov " +
                 std::to_string(c.nesterov));
    optim::SGDOptions o(c.lr);
    o.momentum = c.momentum;
    o.dampening = c.dampening;
    o.weight_decay = c.weight_decay;
    o.nesterov = c.nesterov;
    torch::optim::SGDOptions to(c.lr);
    to.momentum(c.momentum)
        .dampening(c.dampening)
        .weight_decay(c.weight_decay)
        .nesterov(c.nesterov);
    expect_same_trajectory(
        [&](const Tensor& w, const Tensor& b) {
          return std::make_unique<optim::SGD>(std::vector<Tensor>{w, b}, o);
        },
        [&](const torch::Tensor& w, const torch::Tensor& b) {
          return std::make_unique<torch::optim::SGD>(std::vector<torch::Tensor>{w, b}, to);
        });
  }
}

TEST(OptimVsTorch, SGDMaximizeMatchesTorchOnNegatedLoss) {
  optim::SGDOptions o(0.01);
  o.momentum = 0.9;
  o.maximize = true;
  expect_same_trajectory(
      [&](const Tensor& w, const Tensor& b) {
        return std::make_unique<optim::SGD>(std::vector<Tensor>{w, b}, o);
      },
      [&](const torch::Tensor& w, const torch::Tensor& b) {
        return std::make_unique<torch::optim::SGD>(std::vector<torch::Tensor>{w, b},
                                                   torch::optim::SGDOptions(0.01).momentum(0.9));
      },
      /*negate_torch_loss=*/true);
}

TEST(OptimVsTorch, SGDParamGroupsMatchTorch) {
  optim::SGDOptions o(0.05);
  o.momentum = 0.8;
  expect_same_trajectory(
      [&](const Tensor& w, const Tensor& b) {
        return std::make_unique<optim::SGD>(
            std::vector<optim::ParamGroup>{{{w}, {}}, {{b}, {{"lr", 0.2}, {"momentum", 0.5}}}}, o);
      },
      [&](const torch::Tensor& w, const torch::Tensor& b) {
        std::vector<torch::optim::OptimizerParamGroup> groups;
        groups.emplace_back(std::vector<torch::Tensor>{w},
                            std::make_unique<torch::optim::SGDOptions>(
                                torch::optim::SGDOptions(0.05).momentum(0.8)));
        groups.emplace_back(std::vector<torch::Tensor>{b},
                            std::make_unique<torch::optim::SGDOptions>(
                                torch::optim::SGDOptions(0.2).momentum(0.5)));
        return std::make_unique<torch::optim::SGD>(std::move(groups),
                                                   torch::optim::SGDOptions(0.05));
      });
}

struct AdamCase {
  double lr, beta1, beta2, eps, weight_decay;
  bool amsgrad;
};
const AdamCase kAdamCases[] = {{0.05, 0.9, 0.999, 1e-8, 0, false},
                               {0.05, 0.9, 0.999, 1e-8, 0, true},
                               {0.1, 0.8, 0.99, 1e-6, 0.05, false},
                               {0.1, 0.5, 0.9, 1e-3, 0.1, true}};

optim::AdamOptions weft_adam(const AdamCase& c) {
  optim::AdamOptions o(c.lr);
  o.beta1 = c.beta1;
  o.beta2 = c.beta2;
  o.eps = c.eps;
  o.weight_decay = c.weight_decay;
  o.amsgrad = c.amsgrad;
  return o;
}

TEST(OptimVsTorch, AdamMatchesTorch) {
  for (const AdamCase& c : kAdamCases) {
    SCOPED_TRACE("wd " + std::to_string(c.weight_decay) + " amsgrad " + std::to_string(c.amsgrad));
    const optim::AdamOptions o = weft_adam(c);
    const auto to = torch::optim::AdamOptions(c.lr)
                        .betas(std::make_tuple(c.beta1, c.beta2))
                        .eps(c.eps)
                        .weight_decay(c.weight_decay)
                        .amsgrad(c.amsgrad);
    expect_same_trajectory(
        [&](const Tensor& w, const Tensor& b) {
          return std::make_unique<optim::Adam>(std::vector<Tensor>{w, b}, o);
        },
        [&](const torch::Tensor& w, const torch::Tensor& b) {
          return std::make_unique<torch::optim::Adam>(std::vector<torch::Tensor>{w, b}, to);
        });
  }
}

TEST(OptimVsTorch, AdamWMatchesTorch) {
  for (const AdamCase& c : kAdamCases) {
    SCOPED_TRACE("wd " + std::to_string(c.weight_decay) + " amsgrad " + std::to_string(c.amsgrad));
    const optim::AdamOptions o = weft_adam(c);
    const auto to = torch::optim::AdamWOptions(c.lr)
                        .betas(std::make_tuple(c.beta1, c.beta2))
                        .eps(c.eps)
                        .weight_decay(c.weight_decay)
                        .amsgrad(c.amsgrad);
    expect_same_trajectory(
        [&](const Tensor& w, const Tensor& b) {
          return std::make_unique<optim::AdamW>(std::vector<Tensor>{w, b}, o);
        },
        [&](const torch::Tensor& w, const torch::Tensor& b) {
          return std::make_unique<torch::optim::AdamW>(std::vector<torch::Tensor>{w, b}, to);
        });
  }
}

TEST(OptimVsTorch, RMSpropMatchesTorch) {
  struct Case {
    double lr, alpha, eps, weight_decay, momentum;
    bool centered;
  };
  const Case cases[] = {{0.01, 0.99, 1e-8, 0, 0, false},
                        {0.01, 0.9, 1e-6, 0.05, 0.5, false},
                        {0.005, 0.95, 1e-8, 0, 0, true},
                        {0.005, 0.9, 1e-8, 0.1, 0.9, true}};
  for (const Case& c : cases) {
    SCOPED_TRACE("momentum " + std::to_string(c.momentum) + " centered " +
                 std::to_string(c.centered));
    optim::RMSpropOptions o(c.lr);
    o.alpha = c.alpha;
    o.eps = c.eps;
    o.weight_decay = c.weight_decay;
    o.momentum = c.momentum;
    o.centered = c.centered;
    const auto to = torch::optim::RMSpropOptions(c.lr)
                        .alpha(c.alpha)
                        .eps(c.eps)
                        .weight_decay(c.weight_decay)
                        .momentum(c.momentum)
                        .centered(c.centered);
    expect_same_trajectory(
        [&](const Tensor& w, const Tensor& b) {
          return std::make_unique<optim::RMSprop>(std::vector<Tensor>{w, b}, o);
        },
        [&](const torch::Tensor& w, const torch::Tensor& b) {
          return std::make_unique<torch::optim::RMSprop>(std::vector<torch::Tensor>{w, b}, to);
        });
  }
}

TEST(OptimVsTorch, AdagradMatchesTorch) {
  struct Case {
    double lr, lr_decay, weight_decay, initial_accumulator_value, eps;
  };
  const Case cases[] = {
      {0.1, 0, 0, 0, 1e-10}, {0.1, 0.05, 0.01, 0.1, 1e-10}, {0.3, 0.1, 0, 0.5, 1e-6}};
  for (const Case& c : cases) {
    SCOPED_TRACE("lr_decay " + std::to_string(c.lr_decay));
    optim::AdagradOptions o(c.lr);
    o.lr_decay = c.lr_decay;
    o.weight_decay = c.weight_decay;
    o.initial_accumulator_value = c.initial_accumulator_value;
    o.eps = c.eps;
    const auto to = torch::optim::AdagradOptions(c.lr)
                        .lr_decay(c.lr_decay)
                        .weight_decay(c.weight_decay)
                        .initial_accumulator_value(c.initial_accumulator_value)
                        .eps(c.eps);
    expect_same_trajectory(
        [&](const Tensor& w, const Tensor& b) {
          return std::make_unique<optim::Adagrad>(std::vector<Tensor>{w, b}, o);
        },
        [&](const torch::Tensor& w, const torch::Tensor& b) {
          return std::make_unique<torch::optim::Adagrad>(std::vector<torch::Tensor>{w, b}, to);
        });
  }
}

}  // namespace
}  // namespace weft
