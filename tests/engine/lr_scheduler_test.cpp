// Learning-rate schedulers: hand-known StepLR/MultiStepLR values, PyTorch's messages, and the
// lr (and momentum) sequence of every scheduler over 20+ steps compared with PyTorch 1.13's,
// run through Debian's /usr/bin/python3 (skipped when it or torch is missing).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "expect_error.h"
#include "weft/ops.h"
#include "weft/optim/adagrad.h"
#include "weft/optim/adam.h"
#include "weft/optim/lr_scheduler.h"
#include "weft/optim/sgd.h"

namespace weft {
namespace {

using optim::ParamGroup;
using optim::SGD;
using optim::SGDOptions;
using testing::expect_error;
namespace S = optim;

// SGD (momentum 0.9) with two groups: lr 0.1 and lr 0.025.
std::unique_ptr<SGD> two_group_sgd() {
  std::vector<ParamGroup> groups;
  groups.push_back(ParamGroup{{tensor(std::vector<double>{0.0}).requires_grad_()}, {{"lr", 0.1}}});
  groups.push_back(
      ParamGroup{{tensor(std::vector<double>{0.0}).requires_grad_()}, {{"lr", 0.025}}});
  SGDOptions defaults(0.1);
  defaults.momentum = 0.9;
  return std::make_unique<SGD>(std::move(groups), defaults);
}

std::vector<double> lrs(const optim::Optimizer& opt) {
  std::vector<double> out;
  for (const auto& g : opt.param_groups()) out.push_back(g.options.at("lr"));
  return out;
}

void expect_lrs(const optim::Optimizer& opt, const std::vector<double>& expected, int step) {
  const std::vector<double> got = lrs(opt);
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], expected[i], 1e-15) << "step " << step << " group " << i;
  }
}

TEST(LrScheduler, StepLRHandValues) {
  auto opt = two_group_sgd();
  S::StepLR sched(*opt, 3, 0.5);
  const std::vector<double> factors = {1, 1, 1, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.125};
  for (std::size_t t = 0; t < factors.size(); ++t) {
    if (t > 0) sched.step();
    expect_lrs(*opt, {0.1 * factors[t], 0.025 * factors[t]}, static_cast<int>(t));
    EXPECT_EQ(sched.get_last_lr(), lrs(*opt));
    EXPECT_EQ(sched.last_epoch(), static_cast<std::int64_t>(t));
  }
  EXPECT_EQ(opt->param_groups()[0].options.at("initial_lr"), 0.1);
  EXPECT_EQ(sched.base_lrs(), (std::vector<double>{0.1, 0.025}));
  sched.step(std::int64_t{7});  // closed form: 0.5^(7 // 3)
  expect_lrs(*opt, {0.025, 0.00625}, 7);
}

TEST(LrScheduler, MultiStepLRHandValues) {
  auto opt = two_group_sgd();
  S::MultiStepLR sched(*opt, {4, 2, 4}, 0.1);  // 4 twice: two decays at epoch 4
  const std::vector<double> factors = {1, 1, 0.1, 0.1, 0.001, 0.001};
  for (std::size_t t = 0; t < factors.size(); ++t) {
    if (t > 0) sched.step();
    expect_lrs(*opt, {0.1 * factors[t], 0.025 * factors[t]}, static_cast<int>(t));
  }
  sched.step(std::int64_t{3});
  expect_lrs(*opt, {0.01, 0.0025}, 3);
}

TEST(LrScheduler, ErrorsReadLikePyTorch) {
  auto opt = two_group_sgd();
  expect_error([&] { (void)S::LinearLR(*opt, 1.5); },
               "Starting multiplicative factor expected to be between 0 and 1.");
  expect_error([&] { (void)S::LinearLR(*opt, 0.5, -1.0); },
               "Ending multiplicative factor expected to be between 0 and 1.");
  S::OneCycleLROptions one({1.0});
  expect_error([&] { (void)S::OneCycleLR(*opt, one); },
               "You must define either total_steps OR (epochs AND steps_per_epoch)");
  one.total_steps = 0;
  expect_error([&] { (void)S::OneCycleLR(*opt, one); },
               "Expected positive integer total_steps, but got 0");
  one.total_steps = 3;
  one.pct_start = 1.5;
  expect_error([&] { (void)S::OneCycleLR(*opt, one); },
               "Expected float between 0 and 1 pct_start, but got 1.5");
  one.pct_start = 0.3;
  one.anneal_strategy = "step";
  expect_error([&] { (void)S::OneCycleLR(*opt, one); },
               "anneal_strategy must by one of 'cos' or 'linear', instead got step");
  one.anneal_strategy = "cos";
  one.max_lr = {1.0, 2.0, 3.0};
  expect_error([&] { (void)S::OneCycleLR(*opt, one); }, "expected 2 values for max_lr, got 3");
  one.max_lr = {1.0};
  {
    S::OneCycleLR sched(*opt, one);
    for (int i = 0; i < 3; ++i) sched.step();
    expect_error([&] { sched.step(); },
                 "Tried to step 5 times. The specified number of total steps is 3");
  }
  optim::Adagrad adagrad({tensor(std::vector<double>{0.0}).requires_grad_()},
                         optim::AdagradOptions(0.1));
  expect_error([&] { (void)S::OneCycleLR(adagrad, one); },
               "optimizer must support momentum with `cycle_momentum` option enabled");

  auto first = std::make_shared<S::ExponentialLR>(*opt, 0.9);
  auto other = std::make_shared<S::ExponentialLR>(adagrad, 0.9);
  expect_error([&] { (void)S::SequentialLR(*opt, {first}, {3}); },
               "Sequential Schedulers expects number of schedulers provided to be one more than "
               "the number of milestone points, but got number of schedulers 1 and the number of "
               "milestones to be equal to 1");
  expect_error(
      [&] {
        S::SequentialLR(*opt, {first, other}, {3});
      },
      "Sequential Schedulers expects all schedulers to belong to the same optimizer, but "
      "got schedulers at index 1 to be different than the optimizer passed in.");

  S::ReduceLROnPlateauOptions plateau;
  plateau.factor = 1.0;
  expect_error([&] { (void)S::ReduceLROnPlateau(*opt, plateau); }, "Factor should be < 1.0.");
  plateau.factor = 0.1;
  plateau.min_lr = {0.0, 0.0, 0.0};
  expect_error([&] { (void)S::ReduceLROnPlateau(*opt, plateau); }, "expected 2 min_lrs, got 3");
  plateau.min_lr = {0.0};
  plateau.mode = "median";
  expect_error([&] { (void)S::ReduceLROnPlateau(*opt, plateau); }, "mode median is unknown!");
  plateau.mode = "min";
  plateau.threshold_mode = "pct";
  expect_error([&] { (void)S::ReduceLROnPlateau(*opt, plateau); },
               "threshold mode pct is unknown!");
}

TEST(LrScheduler, OneCycleCyclesAdamBeta1) {
  optim::Adam adam({tensor(std::vector<double>{0.0}).requires_grad_()}, optim::AdamOptions(0.1));
  S::OneCycleLROptions o({1.0});
  o.total_steps = 10;
  S::OneCycleLR sched(adam, o);
  EXPECT_DOUBLE_EQ(adam.param_groups()[0].options.at("beta1"), 0.95);
  EXPECT_NEAR(adam.param_groups()[0].options.at("lr"), 0.04, 1e-15);
  for (int i = 0; i < 2; ++i) sched.step();  // the peak: end of phase one (0.3 * 10 - 1)
  EXPECT_DOUBLE_EQ(adam.param_groups()[0].options.at("beta1"), 0.85);
  EXPECT_NEAR(adam.param_groups()[0].options.at("lr"), 1.0, 1e-15);
}

// ----- Comparison with PyTorch -----

// One row per step (after construction, then after each step): lr and momentum per group.
using Trace = std::vector<std::vector<double>>;

std::vector<double> row(const optim::Optimizer& opt) {
  std::vector<double> out;
  for (const auto& g : opt.param_groups()) {
    out.push_back(g.options.at("lr"));
    out.push_back(g.options.at("momentum"));
  }
  return out;
}

std::string python_list(const std::vector<double>& values) {
  std::string out = "[";
  char buf[64];
  for (double v : values) {
    std::snprintf(buf, sizeof buf, "%.17g,", v);
    out += buf;
  }
  return out + "]";
}

// Runs `scheduler` (a Python expression over `opt` and `S`, torch.optim.lr_scheduler) for
// `steps` steps in PyTorch; `step_arg` is the argument of sched.step (may use i and metrics).
// Sets `skip` instead when Python or torch is missing.
Trace pytorch_trace(const std::string& scheduler, int steps, const std::string& step_arg,
                    const std::vector<double>& metrics, std::string* skip) {
  const char* python = "/usr/bin/python3";
  if (access(python, X_OK) != 0) {
    *skip = "/usr/bin/python3 is not available";
    return {};
  }
  const std::string script =
      "import sys, warnings\n"
      "warnings.simplefilter('ignore')\n"
      "try:\n"
      "    import torch\n"
      "except Exception as e:\n"
      "    print('SKIP torch is not importable by /usr/bin/python3:', e)\n"
      "    sys.exit(0)\n"
      "import torch.optim.lr_scheduler as S\n"
      "p1 = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))\n"
      "p2 = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))\n"
      "opt = torch.optim.SGD([{'params': [p1], 'lr': 0.1}, {'params': [p2], 'lr': 0.025}],\n"
      "                      lr=0.1, momentum=0.9)\n"
      "metrics = " +
      python_list(metrics) +
      "\n"
      "sched = " +
      scheduler +
      "\n"
      "def row():\n"
      "    print('ROW', ' '.join('%.17g' % g[k] for g in opt.param_groups\n"
      "                          for k in ('lr', 'momentum')))\n"
      "row()\n"
      "for i in range(" +
      std::to_string(steps) +
      "):\n"
      "    opt.step()\n"
      "    sched.step(" +
      step_arg +
      ")\n"
      "    row()\n";
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path path =
      std::filesystem::path(::testing::TempDir()) /
      ("weft_" + std::string(info->name()) + "_" + std::to_string(getpid()) + ".py");
  std::ofstream(path) << script;
  FILE* pipe = popen((std::string("'") + python + "' '" + path.string() + "' 2>&1").c_str(), "r");
  std::string output;
  if (pipe != nullptr) {
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
    pclose(pipe);
  }
  std::filesystem::remove(path);
  if (output.rfind("SKIP ", 0) == 0) {
    *skip = output.substr(5);
    return {};
  }
  Trace trace;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("ROW ", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    std::vector<double> values;
    for (std::string field; fields >> field;) values.push_back(std::strtod(field.c_str(), nullptr));
    trace.push_back(values);
  }
  EXPECT_EQ(trace.size(), static_cast<std::size_t>(steps) + 1) << "PyTorch said:\n" << output;
  return trace;
}

// Builds a scheduler on `opt` and returns its step function (step index → step).
using Factory = std::function<std::function<void(int)>(SGD&)>;

template <typename Scheduler>
Factory plain(std::function<std::shared_ptr<Scheduler>(SGD&)> make) {
  return [make](SGD& opt) {
    std::shared_ptr<Scheduler> sched = make(opt);
    return std::function<void(int)>([sched](int) { sched->step(); });
  };
}

void expect_matches_pytorch(const Factory& factory, const std::string& python, int steps,
                            const std::string& step_arg = "",
                            const std::vector<double>& metrics = {}) {
  std::string skip;
  const Trace expected = pytorch_trace(python, steps, step_arg, metrics, &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  auto opt = two_group_sgd();
  Trace got;
  const std::function<void(int)> step = factory(*opt);
  got.push_back(row(*opt));
  for (int i = 0; i < steps; ++i) {
    opt->step();
    step(i);
    got.push_back(row(*opt));
  }
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t t = 0; t < got.size(); ++t) {
    ASSERT_EQ(got[t].size(), expected[t].size()) << "step " << t;
    for (std::size_t k = 0; k < got[t].size(); ++k) {
      const double tol = 1e-12 * std::max(std::abs(got[t][k]), std::abs(expected[t][k]));
      EXPECT_NEAR(got[t][k], expected[t][k], tol)
          << python << "\nstep " << t << (k % 2 == 0 ? " lr" : " momentum") << " of group "
          << k / 2;
    }
  }
}

TEST(LrScheduler, StepLRMatchesPyTorch) {
  expect_matches_pytorch(
      plain<S::StepLR>([](SGD& o) { return std::make_shared<S::StepLR>(o, 3, 0.5); }),
      "S.StepLR(opt, step_size=3, gamma=0.5)", 25);
  expect_matches_pytorch(plain<S::StepLR>([](SGD& o) { return std::make_shared<S::StepLR>(o, 1); }),
                         "S.StepLR(opt, step_size=1)", 20);
}

TEST(LrScheduler, MultiStepLRMatchesPyTorch) {
  expect_matches_pytorch(
      plain<S::MultiStepLR>([](SGD& o) {
        return std::make_shared<S::MultiStepLR>(o, std::vector<std::int64_t>{2, 5, 5, 11}, 0.3);
      }),
      "S.MultiStepLR(opt, milestones=[2, 5, 5, 11], gamma=0.3)", 22);
}

TEST(LrScheduler, ExponentialLRMatchesPyTorch) {
  expect_matches_pytorch(
      plain<S::ExponentialLR>([](SGD& o) { return std::make_shared<S::ExponentialLR>(o, 0.9); }),
      "S.ExponentialLR(opt, gamma=0.9)", 30);
}

TEST(LrScheduler, LinearLRMatchesPyTorch) {
  expect_matches_pytorch(
      plain<S::LinearLR>([](SGD& o) { return std::make_shared<S::LinearLR>(o); }),
      "S.LinearLR(opt)", 20);
  expect_matches_pytorch(
      plain<S::LinearLR>([](SGD& o) { return std::make_shared<S::LinearLR>(o, 0.25, 0.75, 8); }),
      "S.LinearLR(opt, start_factor=0.25, end_factor=0.75, total_iters=8)", 20);
}

TEST(LrScheduler, CosineAnnealingLRMatchesPyTorch) {
  expect_matches_pytorch(plain<S::CosineAnnealingLR>(
                             [](SGD& o) { return std::make_shared<S::CosineAnnealingLR>(o, 10); }),
                         "S.CosineAnnealingLR(opt, T_max=10)", 45);
  expect_matches_pytorch(plain<S::CosineAnnealingLR>([](SGD& o) {
                           return std::make_shared<S::CosineAnnealingLR>(o, 7, 0.001);
                         }),
                         "S.CosineAnnealingLR(opt, T_max=7, eta_min=0.001)", 30);
}

TEST(LrScheduler, OneCycleLRMatchesPyTorch) {
  expect_matches_pytorch(plain<S::OneCycleLR>([](SGD& o) {
                           S::OneCycleLROptions options({1.0});
                           options.total_steps = 30;
                           return std::make_shared<S::OneCycleLR>(o, options);
                         }),
                         "S.OneCycleLR(opt, max_lr=1.0, total_steps=30)", 30);
  expect_matches_pytorch(
      plain<S::OneCycleLR>([](SGD& o) {
        S::OneCycleLROptions options({0.5, 2.0});
        options.total_steps = 25;
        options.pct_start = 0.4;
        options.anneal_strategy = "linear";
        options.three_phase = true;
        options.div_factor = 10.0;
        options.final_div_factor = 100.0;
        options.base_momentum = {0.8, 0.7};
        options.max_momentum = {0.9, 0.99};
        return std::make_shared<S::OneCycleLR>(o, options);
      }),
      "S.OneCycleLR(opt, max_lr=[0.5, 2.0], total_steps=25, pct_start=0.4, "
      "anneal_strategy='linear', three_phase=True, div_factor=10.0, final_div_factor=100.0, "
      "base_momentum=[0.8, 0.7], max_momentum=[0.9, 0.99])",
      25);
  expect_matches_pytorch(plain<S::OneCycleLR>([](SGD& o) {
                           S::OneCycleLROptions options({0.3});
                           options.epochs = 4;
                           options.steps_per_epoch = 6;
                           options.cycle_momentum = false;
                           return std::make_shared<S::OneCycleLR>(o, options);
                         }),
                         "S.OneCycleLR(opt, max_lr=0.3, epochs=4, steps_per_epoch=6, "
                         "cycle_momentum=False)",
                         24);
}

TEST(LrScheduler, SequentialLRMatchesPyTorch) {
  expect_matches_pytorch(plain<S::SequentialLR>([](SGD& o) {
                           auto warmup = std::make_shared<S::LinearLR>(o, 0.1, 1.0, 4);
                           auto decay = std::make_shared<S::CosineAnnealingLR>(o, 12);
                           return std::make_shared<S::SequentialLR>(
                               o, std::vector<std::shared_ptr<S::LRScheduler>>{warmup, decay},
                               std::vector<std::int64_t>{4});
                         }),
                         "S.SequentialLR(opt, [S.LinearLR(opt, start_factor=0.1, total_iters=4), "
                         "S.CosineAnnealingLR(opt, T_max=12)], milestones=[4])",
                         25);
  expect_matches_pytorch(
      plain<S::SequentialLR>([](SGD& o) {
        auto a = std::make_shared<S::ExponentialLR>(o, 0.8);
        auto b = std::make_shared<S::StepLR>(o, 3, 0.5);
        auto c = std::make_shared<S::MultiStepLR>(o, std::vector<std::int64_t>{2, 4}, 0.1);
        return std::make_shared<S::SequentialLR>(
            o, std::vector<std::shared_ptr<S::LRScheduler>>{a, b, c},
            std::vector<std::int64_t>{5, 12});
      }),
      "S.SequentialLR(opt, [S.ExponentialLR(opt, gamma=0.8), S.StepLR(opt, 3, 0.5), "
      "S.MultiStepLR(opt, [2, 4])], milestones=[5, 12])",
      24);
}

Factory plateau(const S::ReduceLROnPlateauOptions& options, const std::vector<double>& metrics) {
  return [options, metrics](SGD& opt) {
    auto sched = std::make_shared<S::ReduceLROnPlateau>(opt, options);
    return std::function<void(int)>(
        [sched, metrics](int i) { sched->step(metrics[static_cast<std::size_t>(i)]); });
  };
}

TEST(LrScheduler, ReduceLROnPlateauMatchesPyTorch) {
  const std::vector<double> falling = {1.0,  0.9,  0.95, 0.92, 0.91, 0.8999, 0.85, 0.86,
                                       0.87, 0.87, 0.9,  0.7,  0.71, 0.72,   0.73, 0.74,
                                       0.6,  0.61, 0.62, 0.63, 0.64, 0.65,   0.66, 0.67};
  S::ReduceLROnPlateauOptions a;
  a.patience = 2;
  expect_matches_pytorch(plateau(a, falling), "S.ReduceLROnPlateau(opt, patience=2)", 24,
                         "metrics[i]", falling);

  const std::vector<double> rising = {0.1, 0.2,  0.25, 0.26, 0.27, 0.5,  0.55, 0.58, 0.59,
                                      0.6, 0.61, 0.9,  0.95, 0.96, 0.97, 0.98, 0.99, 1.0,
                                      1.0, 1.0,  1.0,  1.0,  1.0,  1.0,  1.0,  1.0};
  S::ReduceLROnPlateauOptions b;
  b.mode = "max";
  b.factor = 0.5;
  b.patience = 1;
  b.threshold = 0.1;
  b.threshold_mode = "abs";
  b.cooldown = 2;
  b.min_lr = {0.01, 0.001};
  expect_matches_pytorch(plateau(b, rising),
                         "S.ReduceLROnPlateau(opt, mode='max', factor=0.5, patience=1, "
                         "threshold=0.1, threshold_mode='abs', cooldown=2, min_lr=[0.01, 0.001])",
                         26, "metrics[i]", rising);
}

// ----- state_dict / load_state_dict -----

// A scheduler on `opt` and its step function (step index → step).
struct Resumable {
  std::shared_ptr<S::CheckpointableScheduler> scheduler;
  std::function<void(int)> step;
};
using ResumableFactory = std::function<Resumable(SGD&)>;

template <typename Scheduler>
ResumableFactory resumable(std::function<std::shared_ptr<Scheduler>(SGD&)> make) {
  return [make](SGD& opt) {
    std::shared_ptr<Scheduler> sched = make(opt);
    return Resumable{sched, [sched](int) { sched->step(); }};
  };
}

const std::vector<double> kPlateauMetrics = {1.0,  0.9, 0.95, 0.92, 0.91, 0.93, 0.94,
                                             0.95, 0.7, 0.71, 0.72, 0.73, 0.74, 0.75,
                                             0.76, 0.6, 0.61, 0.62, 0.63, 0.64};

ResumableFactory plateau_resumable() {
  return [](SGD& opt) {
    S::ReduceLROnPlateauOptions o;
    o.patience = 1;
    o.cooldown = 2;
    o.factor = 0.5;
    auto sched = std::make_shared<S::ReduceLROnPlateau>(opt, o);
    return Resumable{sched,
                     [sched](int i) { sched->step(kPlateauMetrics[static_cast<std::size_t>(i)]); }};
  };
}

// Runs 20 steps without a break, then 7 steps, a state_dict round trip (through JSON text)
// into a freshly built optimizer and scheduler (PyTorch's recipe: optimizer first), and the
// remaining 13: the lrs and momenta must be the same to the last bit.
void expect_resumes_exactly(const ResumableFactory& factory, const std::string& what) {
  constexpr int kSteps = 20;
  constexpr int kSplit = 7;
  auto straight_opt = two_group_sgd();
  Resumable straight = factory(*straight_opt);
  Trace expected;
  for (int i = 0; i < kSteps; ++i) {
    straight.step(i);
    expected.push_back(row(*straight_opt));
  }

  auto first_opt = two_group_sgd();
  Resumable first = factory(*first_opt);
  Trace got;
  for (int i = 0; i < kSplit; ++i) {
    first.step(i);
    got.push_back(row(*first_opt));
  }
  const optim::OptimizerState opt_state = first_opt->state_dict();
  const std::string text = first.scheduler->state_dict().dump();

  auto resumed_opt = two_group_sgd();
  Resumable resumed = factory(*resumed_opt);
  resumed_opt->load_state_dict(opt_state);
  resumed.scheduler->load_state_dict(S::SchedulerState::parse(text));
  EXPECT_EQ(resumed.scheduler->state_dict().dump(), text) << what;
  for (int i = kSplit; i < kSteps; ++i) {
    resumed.step(i);
    got.push_back(row(*resumed_opt));
  }
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t t = 0; t < got.size(); ++t) {
    EXPECT_EQ(got[t], expected[t]) << what << ": step " << t + 1;
  }
}

TEST(LrSchedulerState, EveryEpochSchedulerResumesExactly) {
  expect_resumes_exactly(
      resumable<S::StepLR>([](SGD& o) { return std::make_shared<S::StepLR>(o, 3, 0.5); }),
      "StepLR");
  expect_resumes_exactly(
      resumable<S::MultiStepLR>([](SGD& o) {
        return std::make_shared<S::MultiStepLR>(o, std::vector<std::int64_t>{9, 3, 9, 15}, 0.3);
      }),
      "MultiStepLR");
  expect_resumes_exactly(resumable<S::ExponentialLR>(
                             [](SGD& o) { return std::make_shared<S::ExponentialLR>(o, 0.9); }),
                         "ExponentialLR");
  expect_resumes_exactly(resumable<S::LinearLR>([](SGD& o) {
                           return std::make_shared<S::LinearLR>(o, 0.25, 0.75, 10);
                         }),
                         "LinearLR");
  // T_max 5: the split falls in the second period, past a bottom.
  expect_resumes_exactly(resumable<S::CosineAnnealingLR>([](SGD& o) {
                           return std::make_shared<S::CosineAnnealingLR>(o, 5, 0.001);
                         }),
                         "CosineAnnealingLR");
}

TEST(LrSchedulerState, OneCycleLRResumesExactly) {
  expect_resumes_exactly(resumable<S::OneCycleLR>([](SGD& o) {
                           S::OneCycleLROptions options({1.0});
                           options.total_steps = 20;
                           return std::make_shared<S::OneCycleLR>(o, options);
                         }),
                         "OneCycleLR cos");
  expect_resumes_exactly(resumable<S::OneCycleLR>([](SGD& o) {
                           S::OneCycleLROptions options({0.5, 2.0});
                           options.total_steps = 21;
                           options.pct_start = 0.4;
                           options.anneal_strategy = "linear";
                           options.three_phase = true;
                           options.base_momentum = {0.8, 0.7};
                           return std::make_shared<S::OneCycleLR>(o, options);
                         }),
                         "OneCycleLR linear three-phase");
}

TEST(LrSchedulerState, SequentialLRResumesWithItsChildren) {
  for (std::int64_t milestone : {4, 7, 10}) {
    expect_resumes_exactly(resumable<S::SequentialLR>([milestone](SGD& o) {
                             auto warmup = std::make_shared<S::LinearLR>(o, 0.1, 1.0, milestone);
                             auto decay = std::make_shared<S::CosineAnnealingLR>(o, 6);
                             return std::make_shared<S::SequentialLR>(
                                 o, std::vector<std::shared_ptr<S::LRScheduler>>{warmup, decay},
                                 std::vector<std::int64_t>{milestone});
                           }),
                           "SequentialLR, milestone " + std::to_string(milestone));
  }
}

TEST(LrSchedulerState, ReduceLROnPlateauResumesExactly) {
  expect_resumes_exactly(plateau_resumable(), "ReduceLROnPlateau");
}

TEST(LrSchedulerState, HoldsPythonsAttributeNames) {
  auto opt = two_group_sgd();
  S::StepLR step(*opt, 3, 0.5);
  step.step();
  const S::SchedulerState state = step.state_dict();
  EXPECT_EQ(state.at("type"), "StepLR");
  EXPECT_EQ(state.at("last_epoch"), 1);
  EXPECT_EQ(state.at("_step_count"), 2);
  EXPECT_EQ(state.at("base_lrs"), (std::vector<double>{0.1, 0.025}));
  EXPECT_EQ(state.at("_last_lr"), (std::vector<double>{0.1, 0.025}));
  EXPECT_EQ(state.at("step_size"), 3);
  EXPECT_EQ(state.at("gamma"), 0.5);

  auto other = two_group_sgd();
  auto warmup = std::make_shared<S::LinearLR>(*other, 0.5, 1.0, 2);
  auto decay = std::make_shared<S::ExponentialLR>(*other, 0.9);
  S::SequentialLR seq(*other, {warmup, decay}, {2});
  const S::SchedulerState seq_state = seq.state_dict();
  EXPECT_EQ(seq_state.at("_milestones"), (std::vector<std::int64_t>{2}));
  ASSERT_EQ(seq_state.at("_schedulers").size(), 2u);
  EXPECT_EQ(seq_state.at("_schedulers")[1].at("type"), "ExponentialLR");

  // best starts at +inf, which JSON spells as Python's json module does.
  S::ReduceLROnPlateau plateau(*opt);
  EXPECT_EQ(plateau.state_dict().at("best"), "Infinity");
  EXPECT_EQ(plateau.state_dict().at("mode"), "min");
}

TEST(LrSchedulerState, RefusesAnotherSchedulersStateAndChangesNothing) {
  auto opt = two_group_sgd();
  S::StepLR step(*opt, 3, 0.5);
  step.step();
  const std::string before = step.state_dict().dump();
  auto other_opt = two_group_sgd();
  S::ExponentialLR exponential(*other_opt, 0.9);
  expect_error([&] { step.load_state_dict(exponential.state_dict()); },
               "StepLR.load_state_dict: the state dict is of type ExponentialLR, expected StepLR");
  S::ReduceLROnPlateau plateau(*opt);
  expect_error([&] { plateau.load_state_dict(step.state_dict()); },
               "ReduceLROnPlateau.load_state_dict: the state dict is of type StepLR");
  expect_error([&] { step.load_state_dict(S::SchedulerState::array()); },
               "StepLR.load_state_dict: expected a state dict (a JSON object), got []");

  S::SchedulerState missing = S::StepLR(*two_group_sgd(), 5, 0.1).state_dict();
  missing.erase("gamma");
  expect_error([&] { step.load_state_dict(missing); },
               "StepLR.load_state_dict: field 'gamma': missing");
  S::SchedulerState ill_typed = S::StepLR(*two_group_sgd(), 5, 0.1).state_dict();
  ill_typed["step_size"] = "five";
  expect_error([&] { step.load_state_dict(ill_typed); },
               "field 'step_size': expected an integer, got \"five\"");
  EXPECT_EQ(step.state_dict().dump(), before);
}

TEST(LrSchedulerState, RefusesAnotherNumberOfParamGroups) {
  SGD one_group({tensor(std::vector<double>{0.0}).requires_grad_()}, SGDOptions(0.1));
  S::CosineAnnealingLR small(one_group, 10);
  auto opt = two_group_sgd();
  S::CosineAnnealingLR sched(*opt, 10);
  expect_error([&] { sched.load_state_dict(small.state_dict()); },
               "CosineAnnealingLR.load_state_dict: field 'base_lrs': has 1 values, one per param "
               "group, but the optimizer has 2 param groups");
  S::ReduceLROnPlateau small_plateau(one_group);
  S::ReduceLROnPlateau plateau(*opt);
  expect_error([&] { plateau.load_state_dict(small_plateau.state_dict()); },
               "ReduceLROnPlateau.load_state_dict: field 'min_lrs': has 1 values");
}

TEST(LrSchedulerState, SequentialLRRollsBackItsChildrenWhenOneRefuses) {
  auto opt = two_group_sgd();
  auto warmup = std::make_shared<S::LinearLR>(*opt, 0.5, 1.0, 2);
  auto decay = std::make_shared<S::ExponentialLR>(*opt, 0.9);
  S::SequentialLR seq(*opt, {warmup, decay}, {2});
  for (int i = 0; i < 3; ++i) seq.step();
  const std::string before = seq.state_dict().dump();

  S::SchedulerState changed = seq.state_dict();
  changed["_schedulers"][0]["last_epoch"] = 100;  // valid
  changed["_schedulers"][1]["type"] = "StepLR";   // refused after the first child loaded
  expect_error([&] { seq.load_state_dict(changed); },
               "SequentialLR.load_state_dict: field '_schedulers[1]': "
               "ExponentialLR.load_state_dict: the state dict is of type StepLR");
  EXPECT_EQ(seq.state_dict().dump(), before);
  EXPECT_EQ(warmup->last_epoch(), 1);
}

TEST(LrSchedulerState, OneCycleLRRefusesAMomentumTheOptimizerLacks) {
  optim::Adam adam({tensor(std::vector<double>{0.0}).requires_grad_()}, optim::AdamOptions(0.1));
  S::OneCycleLROptions o({1.0});
  o.total_steps = 10;
  S::OneCycleLR with_beta1(adam, o);
  SGD sgd({tensor(std::vector<double>{0.0}).requires_grad_()}, [] {
    SGDOptions d(0.1);
    d.momentum = 0.9;
    return d;
  }());
  S::OneCycleLR with_momentum(sgd, o);
  // SGD has no beta1.
  expect_error([&] { with_momentum.load_state_dict(with_beta1.state_dict()); },
               "OneCycleLR.load_state_dict: field 'use_beta1': the state cycles 'beta1', which "
               "the optimizer lacks");
  S::SchedulerState bad_phase = with_momentum.state_dict();
  bad_phase["_schedule_phases"][1]["end_lr"] = "peak_lr";
  expect_error([&] { with_momentum.load_state_dict(bad_phase); },
               "OneCycleLR.load_state_dict: field '_schedule_phases[1].end_lr': expected "
               "initial_lr, max_lr, min_lr, max_momentum or base_momentum, got \"peak_lr\"");
}

}  // namespace
}  // namespace weft
