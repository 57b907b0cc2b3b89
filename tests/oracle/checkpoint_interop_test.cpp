// Checkpoint interop with PyTorch itself: a checkpoint weft writes loads into the equivalent
// torch.nn model in Debian's /usr/bin/python3 and gives the same outputs, and a checkpoint
// torch writes loads into weft's model and gives torch's outputs. The Python side reads and
// writes safetensors with the standard library and torch only (checkpoint_interop.py).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "weft/nn/activation.h"
#include "weft/nn/checkpoint.h"
#include "weft/nn/container.h"
#include "weft/nn/conv.h"
#include "weft/nn/linear.h"
#include "weft/nn/normalization.h"
#include "weft/nn/pooling.h"
#include "weft/nn/shape.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft::nn {
namespace {

namespace fs = std::filesystem;

const char* const kPython = "/usr/bin/python3";

// The architecture of checkpoint_interop.py's Net, with the same module names.
std::shared_ptr<Module> make_net() {
  auto net = std::make_shared<Module>();
  net->register_module("features", std::make_shared<Sequential>(
                                       std::make_shared<Conv2d>(Conv2dOptions(1, 4, 3).padding(1)),
                                       std::make_shared<BatchNorm2d>(4), std::make_shared<ReLU>(),
                                       std::make_shared<MaxPool2d>(2)));
  net->register_module(
      "classifier",
      std::make_shared<Sequential>(std::make_shared<Flatten>(), std::make_shared<Linear>(64, 10)));
  return net;
}

Tensor run(Module& net, const Tensor& x) {
  Tensor h = x;
  for (const auto& child : net.children()) h = child->forward(h);
  return h;
}

class CheckpointInterop : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kPython)) GTEST_SKIP() << kPython << " is not installed";
    if (std::system((std::string(kPython) + " -c 'import torch' 2>/dev/null").c_str()) != 0) {
      GTEST_SKIP() << kPython << " cannot import torch (Debian package python3-torch)";
    }
    dir_ = fs::path(::testing::TempDir()) / "weft_checkpoint_interop";
    fs::create_directories(dir_);
  }
  int python(const std::string& command) const {
    const fs::path script = fs::path(WEFT_SOURCE_DIR) / "tests/oracle/checkpoint_interop.py";
    return std::system(
        (std::string(kPython) + " " + script.string() + " " + command + " " + dir_.string())
            .c_str());
  }
  fs::path dir_;
};

TEST_F(CheckpointInterop, WeftCheckpointLoadsIntoTorchWithTheSameOutputs) {
  manual_seed(5);
  auto net = make_net();
  run(*net, randn({4, 1, 8, 8}));  // a training step moves the batch-norm statistics
  net->eval();
  const Tensor x = randn({2, 1, 8, 8});
  save(net->state_dict(), dir_ / "weft.safetensors", {{"labels", "a,b,c"}});
  StateDict input, output;
  input.insert("input", x);
  output.insert("output", run(*net, x));
  save(input, dir_ / "input.safetensors");
  save(output, dir_ / "weft_output.safetensors");
  EXPECT_EQ(python("check"), 0);
}

TEST_F(CheckpointInterop, TorchCheckpointLoadsIntoWeftWithTheSameOutputs) {
  ASSERT_EQ(python("make"), 0);
  const Checkpoint checkpoint = load(dir_ / "torch.safetensors");
  EXPECT_EQ(checkpoint.metadata.at("epoch"), "1");
  auto net = make_net();
  EXPECT_EQ(checkpoint.state.keys(), net->state_dict().keys());
  net->load_state_dict(checkpoint.state);
  net->eval();
  const Checkpoint io = load(dir_ / "torch_io.safetensors");
  const Tensor got = run(*net, io.state.at("input"));
  const auto a = got.to_vector<double>(), b = io.state.at("output").to_vector<double>();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5) << "element " << i;
}

}  // namespace
}  // namespace weft::nn
