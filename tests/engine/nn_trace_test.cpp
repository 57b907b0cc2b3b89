// Traces: a module's forward recorded into the IR runs like the module, keeps its state_dict
// keys, trains, saves and loads without the original classes, and refuses what it cannot
// replay (untraced computations, in-place edits, inputs of another shape, damaged files).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "expect_error.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ir/tracer.h"
#include "weft/nn/activation.h"
#include "weft/nn/checkpoint.h"
#include "weft/nn/container.h"
#include "weft/nn/linear.h"
#include "weft/nn/trace.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft::nn {
namespace {

using testing::expect_error;

std::filesystem::path temp_path(const std::string& name) {
  // Per process: CTest runs tests of several files at once, and they share TempDir().
  return std::filesystem::path(::testing::TempDir()) / (std::to_string(::getpid()) + "_" + name);
}

std::set<std::string> key_set(const StateDict& state) {
  const auto keys = state.keys();
  return {keys.begin(), keys.end()};
}

void expect_same_values(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.sizes(), b.sizes());
  ASSERT_EQ(a.dtype(), b.dtype());
  const auto va = a.to_vector<double>(), vb = b.to_vector<double>();
  for (std::size_t i = 0; i < va.size(); ++i) EXPECT_DOUBLE_EQ(va[i], vb[i]) << "element " << i;
}

std::shared_ptr<Sequential> make_mlp() {
  manual_seed(7);
  auto inner =
      std::make_shared<Sequential>(std::make_shared<Linear>(5, 4), std::make_shared<Tanh>());
  return std::make_shared<Sequential>(std::make_shared<Linear>(3, 5), std::make_shared<ReLU>(),
                                      inner, std::make_shared<Linear>(4, 2));
}

// A user module with a buffer, scalar arithmetic, a tensor made inside forward and a reduction.
class Scaler : public Module {
 public:
  Scaler() {
    fc = register_module("fc", std::make_shared<Linear>(3, 3));
    scale = register_buffer("scale", tensor(std::vector<double>{2.0, 0.5, -1.0}, {3}));
  }
  Tensor forward(const Tensor& x) override {
    const Tensor y = (*fc)(x)*scale + 1.5;
    const Tensor offset = ones({3}) * 0.25;  // made during forward: becomes a constant
    return softmax(y - offset, 1).sum({1}, /*keepdim=*/true) + y.mean({1}, true);
  }
  std::shared_ptr<Linear> fc;
  Tensor scale;
};

TEST(NnTrace, TracedMlpComputesWhatTheModuleComputes) {
  auto model = make_mlp();
  const Tensor x = randn({6, 3});
  auto traced = trace(*model, {x});

  std::vector<std::string> ops;
  for (const auto& node : traced->graph().nodes()) ops.emplace_back(ir::op_name(node.op));
  EXPECT_EQ(ops, (std::vector<std::string>{"linear", "relu", "linear", "tanh", "linear"}));
  expect_same_values(traced->forward(x), model->forward(x));
  const Tensor other = randn({6, 3});
  expect_same_values((*traced)(other), (*model)(other));
  EXPECT_EQ(traced->state_dict().keys(), model->state_dict().keys());
}

TEST(NnTrace, TracedModuleIsTrainable) {
  auto model = make_mlp();
  const Tensor x = randn({4, 3});
  auto traced = trace(*model, {x});
  traced->forward(x).sum().backward();
  model->forward(x).sum().backward();
  const auto traced_params = traced->named_parameters();
  const auto model_params = model->named_parameters();
  ASSERT_EQ(traced_params.size(), model_params.size());
  for (std::size_t i = 0; i < traced_params.size(); ++i) {
    EXPECT_EQ(traced_params[i].first, model_params[i].first);
    ASSERT_TRUE(traced_params[i].second.grad().defined()) << traced_params[i].first;
    expect_same_values(traced_params[i].second.grad(), model_params[i].second.grad());
  }
}

TEST(NnTrace, SavedTraceLoadsWithoutTheOriginalClasses) {
  auto model = std::make_shared<Scaler>();
  const Tensor x = randn({2, 3});
  auto traced = trace(*model, {x});
  const auto path = temp_path("scaler.trace.safetensors");
  save_trace(*traced, path);

  auto loaded = load_trace(path);
  expect_same_values(loaded->forward(x), model->forward(x));
  EXPECT_EQ(key_set(loaded->state_dict()), key_set(traced->state_dict()));
  // Buffers and constants are saved, not trained.
  std::set<std::string> params;
  for (const auto& [name, p] : loaded->named_parameters()) params.insert(name);
  EXPECT_EQ(params, (std::set<std::string>{"fc.weight", "fc.bias"}));
  EXPECT_TRUE(key_set(loaded->state_dict()).count("scale"));
  // The file is also an ordinary checkpoint.
  EXPECT_TRUE(load(path).state.contains("fc.weight"));
}

TEST(NnTrace, MultipleInputsAndOutputsThroughATraceFunction) {
  manual_seed(3);
  auto fc = std::make_shared<Linear>(4, 4);
  auto fn = [&](const std::vector<Tensor>& in) {
    const Tensor h = (*fc)(in[0]) + in[1];
    return std::vector<Tensor>{h, std::get<0>(max(h, 1)), argmax(h, 1)};
  };
  const Tensor a = randn({3, 4}), b = randn({3, 4});
  auto traced = trace(*fc, {a, b}, fn);
  const auto out = traced->forward(std::vector<Tensor>{a, b});
  const auto expected = fn({a, b});
  ASSERT_EQ(out.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) expect_same_values(out[i], expected[i]);
  expect_error([&] { (*traced)(a); }, "returns 3 outputs");
}

TEST(NnTrace, InputsOfAnotherShapeAreRefusedByName) {
  auto model = make_mlp();
  auto traced = trace(*model, {randn({6, 3})});
  expect_error([&] { (*traced)(randn({5, 3})); }, "'input0'");
}

TEST(NnTrace, ComputationsTheTracerCannotSeeAreErrors) {
  auto model = make_mlp();
  // A custom autograd function made outside weft's ops has history but no IR op.
  auto custom = [](const Tensor& x) {
    Tensor out = from_blob(x.contiguous().raw_data(), x.sizes(), x.dtype());
    autograd::record_function("MyOpBackward", {x}, {out}, {},
                              [](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
                                return std::vector<Tensor>{g[0]};
                              });
    return out;
  };
  expect_error(
      [&] {
        trace(*model, {randn({2, 3})}, [&](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{relu(custom((*model)(in[0])))};
        });
      },
      "MyOpBackward");
  expect_error(
      [&] {
        trace(*model, {randn({2, 3})}, [&](const std::vector<Tensor>& in) {
          Tensor y = (*model)(in[0]);
          y.add_(ones({2, 2}));
          return std::vector<Tensor>{y};
        });
      },
      "in-place");
  // A failed trace leaves no recorder behind.
  EXPECT_EQ(ir::active_tracer(), nullptr);
  EXPECT_NO_THROW(trace(*model, {randn({2, 3})}));
}

TEST(NnTrace, DamagedTraceFilesAreFormatErrors) {
  auto model = make_mlp();
  auto traced = trace(*model, {randn({2, 3})});
  const auto good = temp_path("good.trace.safetensors");
  save_trace(*traced, good);

  // An ordinary checkpoint is not a trace.
  const auto plain = temp_path("plain.safetensors");
  save(model->state_dict(), plain);
  EXPECT_THROW(load_trace(plain), FormatError);
  expect_error([&] { load_trace(plain); }, "__metadata__/format");

  // A truncated file.
  std::ifstream in(good, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto truncated = temp_path("truncated.trace.safetensors");
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EXPECT_THROW(load_trace(truncated), FormatError);

  // A graph that is not JSON, and a weight the graph needs that is missing.
  save(model->state_dict(), plain,
       {{"format", "weft.trace"}, {"weft.graph", "{nope"}, {"weft.buffers", "[]"}});
  expect_error([&] { load_trace(plain); }, "weft.graph");
  StateDict partial;
  for (const auto& [key, value] : traced->state_dict()) {
    if (key != "0.bias") partial.insert(key, value);
  }
  const auto graph_text = load(good).metadata.at("weft.graph");
  save(partial, plain,
       {{"format", "weft.trace"}, {"weft.graph", graph_text}, {"weft.buffers", "[]"}});
  expect_error([&] { load_trace(plain); }, "0.bias");
}

}  // namespace
}  // namespace weft::nn
