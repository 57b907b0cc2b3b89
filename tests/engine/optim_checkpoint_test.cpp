// Training checkpoints: an optimizer and its scheduler saved mid-run with save_training_state
// (the model with nn::save) and loaded into freshly built ones continue bit-identically;
// damaged, foreign or mismatched files are refused with the file and field named, and leave
// the optimizer and scheduler as they were.
#include "weft/optim/checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "expect_error.h"
#include "weft/io/atomic_file.h"
#include "weft/io/safetensors.h"
#include "weft/nn/checkpoint.h"
#include "weft/nn/functional.h"
#include "weft/nn/linear.h"
#include "weft/ops.h"
#include "weft/optim/adam.h"
#include "weft/optim/lr_scheduler.h"
#include "weft/optim/sgd.h"
#include "weft/random.h"

namespace weft::optim {
namespace {

using testing::expect_error;

std::filesystem::path temp_path(const std::string& name) {
  // Per process: CTest runs tests of several files at once, and they share TempDir().
  return std::filesystem::path(::testing::TempDir()) / (std::to_string(::getpid()) + "_" + name);
}

// A model, its optimizer and scheduler, built afresh for every run.
struct Training {
  std::shared_ptr<nn::Linear> model;
  std::unique_ptr<Optimizer> optimizer;
  std::unique_ptr<LRScheduler> scheduler;
};
using Setup = std::function<Training(std::uint64_t seed)>;

Training sgd_step_lr(std::uint64_t seed) {
  manual_seed(seed);
  Training t;
  t.model = std::make_shared<nn::Linear>(3, 2);
  SGDOptions o(0.1);
  o.momentum = 0.9;
  o.weight_decay = 1e-3;
  t.optimizer = std::make_unique<SGD>(t.model->parameters(), o);
  t.scheduler = std::make_unique<StepLR>(*t.optimizer, 3, 0.5);
  return t;
}

Training adamw_one_cycle(std::uint64_t seed) {
  manual_seed(seed);
  Training t;
  t.model = std::make_shared<nn::Linear>(3, 2);
  t.optimizer = std::make_unique<AdamW>(t.model->parameters(), adamw_options(0.01));
  OneCycleLROptions o({0.05});
  o.total_steps = 12;
  t.scheduler = std::make_unique<OneCycleLR>(*t.optimizer, o);
  return t;
}

// One training step on fixed data; returns the parameters and lrs after it.
std::vector<double> train_step(Training& t) {
  const Tensor x = arange(12.0, Dtype::Float32).reshape({4, 3}) * 0.1;
  const Tensor y = tensor(std::vector<float>{1, -1, 0.5F, 2, -0.5F, 0, 1.5F, -2}).reshape({4, 2});
  t.optimizer->zero_grad();
  nn::functional::mse_loss((*t.model)(x), y).backward();
  t.optimizer->step();
  t.scheduler->step();
  std::vector<double> out;
  for (const Tensor& p : t.model->parameters()) {
    for (float v : p.to_vector<float>()) out.push_back(v);
  }
  for (const auto& g : t.optimizer->param_groups()) {
    for (const auto& [name, value] : g.options) out.push_back(value);
  }
  return out;
}

void expect_resumes_bit_identically(const Setup& setup, const std::string& name) {
  constexpr int kSteps = 10;
  constexpr int kSplit = 5;
  Training straight = setup(7);
  std::vector<std::vector<double>> expected;
  for (int i = 0; i < kSteps; ++i) expected.push_back(train_step(straight));

  const std::filesystem::path model_path = temp_path(name + "_model.safetensors");
  const std::filesystem::path state_path = temp_path(name + "_training.safetensors");
  {
    Training first = setup(7);
    for (int i = 0; i < kSplit; ++i) train_step(first);
    nn::save(first.model->state_dict(), model_path);
    save_training_state(state_path, *first.optimizer, first.scheduler.get(), {{"epoch", "5"}});
  }
  Training resumed = setup(99);  // other initial weights: all must come from the files
  resumed.model->load_state_dict(nn::load(model_path).state);
  const auto metadata =
      load_training_state(state_path, *resumed.optimizer, resumed.scheduler.get());
  EXPECT_EQ(metadata, (std::map<std::string, std::string>{{"epoch", "5"}}));
  EXPECT_EQ(resumed.scheduler->last_epoch(), kSplit);
  for (int i = kSplit; i < kSteps; ++i) {
    EXPECT_EQ(train_step(resumed), expected[static_cast<std::size_t>(i)])
        << name << ": step " << i + 1;
  }
}

TEST(OptimCheckpoint, SgdMomentumWithStepLRResumesBitIdentically) {
  expect_resumes_bit_identically(sgd_step_lr, "sgd_step_lr");
}

TEST(OptimCheckpoint, AdamWWithOneCycleLRResumesBitIdentically) {
  expect_resumes_bit_identically(adamw_one_cycle, "adamw_one_cycle");
}

TEST(OptimCheckpoint, StoresStateTensorsUnderParamIndexKeys) {
  Training t = adamw_one_cycle(1);
  train_step(t);
  const std::filesystem::path path = temp_path("keys.safetensors");
  save_training_state(path, *t.optimizer, t.scheduler.get());
  const io::SafetensorsFile file = io::read_safetensors(path);
  std::vector<std::string> keys;
  for (const auto& [key, bytes] : file.tensors) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"state.0.exp_avg", "state.0.exp_avg_sq",
                                            "state.1.exp_avg", "state.1.exp_avg_sq"}));
  EXPECT_EQ(file.find("state.0.exp_avg")->shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(file.metadata.at("weft.format"), "weft.optim.training_state/1");
  const auto state = nlohmann::json::parse(file.metadata.at("weft.optimizer.state"));
  EXPECT_EQ(state.at("1").at("step"), 1);
  const auto groups = nlohmann::json::parse(file.metadata.at("weft.optimizer.param_groups"));
  EXPECT_EQ(groups.at(0).at("params"), (std::vector<int>{0, 1}));
  EXPECT_EQ(groups.at(0).at("options").at("max_lr"), 0.05);
  EXPECT_EQ(nlohmann::json::parse(file.metadata.at("weft.scheduler")).at("type"), "OneCycleLR");
}

TEST(OptimCheckpoint, ReduceLROnPlateauAndUndefinedStateRoundTrip) {
  const Tensor p = tensor(std::vector<double>{1.0, 2.0}).requires_grad_();
  SGDOptions o(0.1);
  o.momentum = 0.9;
  SGD sgd({p}, o);
  OptimizerState state = sgd.state_dict();
  state.state[0].tensors["momentum_buffer"] = Tensor();  // None in Python
  sgd.load_state_dict(state);
  ReduceLROnPlateau plateau(sgd);  // best is still +inf
  const std::filesystem::path path = temp_path("plateau.safetensors");
  save_training_state(path, sgd, &plateau);

  const Tensor q = tensor(std::vector<double>{0.0, 0.0}).requires_grad_();
  SGD fresh({q}, o);
  ReduceLROnPlateauOptions other;
  other.mode = "max";
  ReduceLROnPlateau fresh_plateau(fresh, other);
  load_training_state(path, fresh, &fresh_plateau);
  EXPECT_EQ(fresh_plateau.state_dict(), plateau.state_dict());
  ASSERT_NE(fresh.state(q), nullptr);
  EXPECT_FALSE(fresh.state(q)->tensors.at("momentum_buffer").defined());
}

// The optimizer's and scheduler's states, to check that a failed load changed neither.
std::string snapshot(const Training& t) {
  nlohmann::json out = t.scheduler->state_dict();
  const OptimizerState state = t.optimizer->state_dict();
  for (const auto& group : state.param_groups) out["groups"].push_back(group.options);
  for (const auto& [index, s] : state.state) {
    out["steps"].push_back(s.step);
    for (const auto& [name, tensor] : s.tensors) out[name].push_back(tensor.to_vector<float>());
  }
  return out.dump();
}

// A file saved from two steps of sgd_step_lr, rewritten by `edit`.
std::filesystem::path edited_file(const std::string& name,
                                  const std::function<void(io::SafetensorsFile&)>& edit) {
  Training t = sgd_step_lr(3);
  train_step(t);
  train_step(t);
  const std::filesystem::path path = temp_path(name);
  save_training_state(path, *t.optimizer, t.scheduler.get());
  io::SafetensorsFile file = io::read_safetensors(path);
  edit(file);
  io::write_safetensors(path, file);
  return path;
}

// Loading `path` into a trained sgd_step_lr raises FormatError with `file` and `fragment`, and
// changes nothing.
void expect_refused(const std::filesystem::path& path, const std::string& fragment) {
  Training t = sgd_step_lr(5);
  train_step(t);
  const std::string before = snapshot(t);
  expect_error([&] { load_training_state(path, *t.optimizer, t.scheduler.get()); },
               path.string() + ": " + fragment);
  try {
    load_training_state(path, *t.optimizer, t.scheduler.get());
  } catch (const FormatError&) {
  }
  EXPECT_EQ(snapshot(t), before) << fragment;
}

TEST(OptimCheckpoint, RefusesAnotherSchedulerType) {
  Training t = sgd_step_lr(3);
  train_step(t);
  const std::filesystem::path path = temp_path("exponential.safetensors");
  ExponentialLR exponential(*t.optimizer, 0.9);
  save_training_state(path, *t.optimizer, &exponential);
  expect_refused(path,
                 "__metadata__/weft.scheduler: StepLR.load_state_dict: the state dict is of type "
                 "ExponentialLR, expected StepLR");
}

TEST(OptimCheckpoint, RefusesAnotherNumberOfGroupsWithTheSchedulerRolledBack) {
  Training t = sgd_step_lr(3);
  std::vector<ParamGroup> groups;
  for (const Tensor& p : t.model->parameters()) groups.push_back(ParamGroup{{p}, {}});
  SGD two_groups(groups, SGDOptions(0.1));
  StepLR step(two_groups, 3, 0.5);
  const std::filesystem::path path = temp_path("two_groups.safetensors");
  save_training_state(path, two_groups, &step);
  // The scheduler state fails too (two base_lrs); without it the optimizer is what refuses.
  Training fresh = sgd_step_lr(5);
  const std::string before = snapshot(fresh);
  expect_error([&] { load_training_state(path, *fresh.optimizer); },
               path.string() +
                   ": __metadata__/weft.optimizer.param_groups: loaded state dict has a different "
                   "number of parameter groups (expected 1, got 2)");
  expect_refused(path, "__metadata__/weft.scheduler: StepLR.load_state_dict: field 'base_lrs'");
  EXPECT_EQ(snapshot(fresh), before);

  // A scheduler that loads, then an optimizer that refuses: the scheduler is put back.
  const std::filesystem::path mixed = edited_file("mixed.safetensors", [&](io::SafetensorsFile& f) {
    auto saved = nlohmann::json::parse(f.metadata.at("weft.optimizer.param_groups"));
    saved.push_back(saved.at(0));
    f.metadata["weft.optimizer.param_groups"] = saved.dump();
  });
  expect_refused(mixed,
                 "__metadata__/weft.optimizer.param_groups: loaded state dict has a different "
                 "number of parameter groups (expected 1, got 2)");
}

TEST(OptimCheckpoint, RefusesATruncatedFile) {
  const std::filesystem::path path = edited_file("truncated.safetensors", [](auto&) {});
  const std::string bytes = io::read_file(path);
  io::write_file_atomically(path, std::string_view(bytes).substr(0, bytes.size() - 7));
  expect_refused(path, "");
}

TEST(OptimCheckpoint, RefusesMissingOrDamagedMetadata) {
  expect_refused(
      edited_file("no_state.safetensors",
                  [](io::SafetensorsFile& f) { f.metadata.erase("weft.optimizer.state"); }),
      "__metadata__/weft.optimizer.state: missing");
  expect_refused(edited_file("no_scheduler.safetensors",
                             [](io::SafetensorsFile& f) { f.metadata.erase("weft.scheduler"); }),
                 "__metadata__/weft.scheduler: missing");
  expect_refused(edited_file("bad_json.safetensors",
                             [](io::SafetensorsFile& f) {
                               f.metadata["weft.optimizer.param_groups"] = "[{\"options\": ";
                             }),
                 "__metadata__/weft.optimizer.param_groups: expected a JSON document");
  expect_refused(edited_file("bad_step.safetensors",
                             [](io::SafetensorsFile& f) {
                               auto state =
                                   nlohmann::json::parse(f.metadata.at("weft.optimizer.state"));
                               state["0"]["step"] = "two";
                               f.metadata["weft.optimizer.state"] = state.dump();
                             }),
                 "__metadata__/weft.optimizer.state/0/step: expected an integer, got \"two\"");
  expect_refused(
      edited_file("no_tensor.safetensors", [](io::SafetensorsFile& f) { f.tensors.pop_back(); }),
      "state.1.momentum_buffer: missing: weft.optimizer.state lists it but the file "
      "has no such tensor");
  expect_refused(edited_file("bad_shape.safetensors",
                             [](io::SafetensorsFile& f) {
                               f.tensors[0].second.shape = {3, 2};
                             }),
                 "state.0.momentum_buffer: has shape [3,2], but its parameter has shape [2,3]");
}

TEST(OptimCheckpoint, RefusesAForeignFile) {
  Training t = sgd_step_lr(3);
  const std::filesystem::path path = temp_path("model_only.safetensors");
  nn::save(t.model->state_dict(), path);
  expect_refused(path,
                 "__metadata__/weft.format: missing: not a training state written by "
                 "save_training_state");
}

TEST(OptimCheckpoint, ReservesWeftMetadataKeys) {
  Training t = sgd_step_lr(3);
  expect_error(
      [&] {
        save_training_state(temp_path("reserved.safetensors"), *t.optimizer, nullptr,
                            {{"weft.format", "mine"}});
      },
      "save_training_state: metadata key 'weft.format' is reserved");
  Training other = sgd_step_lr(3);
  expect_error(
      [&] {
        save_training_state(temp_path("other.safetensors"), *t.optimizer, other.scheduler.get());
      },
      "save_training_state: the scheduler drives another optimizer");
}

}  // namespace
}  // namespace weft::optim
