// Checkpoints: state dicts round-trip through safetensors with keys, dtypes and metadata;
// damaged files are refused with the file named.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "expect_error.h"
#include "weft/io/atomic_file.h"
#include "weft/nn/checkpoint.h"
#include "weft/nn/container.h"
#include "weft/nn/linear.h"
#include "weft/ops.h"

namespace weft::nn {
namespace {

std::filesystem::path temp_path(const std::string& name) {
  // Per process: CTest runs tests of several files at once, and they share TempDir().
  return std::filesystem::path(::testing::TempDir()) / (std::to_string(::getpid()) + "_" + name);
}

TEST(NnCheckpoint, StateDictRoundTripsIntoAFreshModel) {
  auto model =
      std::make_shared<Sequential>(std::make_shared<Linear>(3, 4), std::make_shared<Linear>(4, 2));
  const std::filesystem::path path = temp_path("model.safetensors");
  save(model->state_dict(), path, {{"labels", "cat,dog"}, {"epoch", "3"}});

  const Checkpoint loaded = load(path);
  EXPECT_EQ(loaded.metadata.at("labels"), "cat,dog");
  EXPECT_EQ(loaded.state.keys(),
            (std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias"}));

  auto fresh =
      std::make_shared<Sequential>(std::make_shared<Linear>(3, 4), std::make_shared<Linear>(4, 2));
  fresh->load_state_dict(loaded.state);
  const Tensor x = arange(6.0, Dtype::Float32).reshape({2, 3});
  EXPECT_EQ((*model)(x).to_vector<float>(), (*fresh)(x).to_vector<float>());
}

TEST(NnCheckpoint, KeepsDtypesAndNonContiguousValues) {
  StateDict state;
  state.insert("w", arange(6.0, Dtype::Float64).reshape({2, 3}).t());
  state.insert("steps", tensor(std::vector<std::int64_t>{7}));
  state.insert("mask", tensor(std::vector<bool>{true, false}));
  const std::filesystem::path path = temp_path("mixed.safetensors");
  save(state, path);
  const Checkpoint loaded = load(path);
  EXPECT_EQ(loaded.state.at("w").dtype(), Dtype::Float64);
  EXPECT_EQ(loaded.state.at("w").to_vector<double>(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(loaded.state.at("steps").item<std::int64_t>(), 7);
  EXPECT_EQ(loaded.state.at("mask").to_vector<bool>(), (std::vector<bool>{true, false}));
}

TEST(NnCheckpoint, TruncatedFileIsRefusedWithItsName) {
  StateDict state;
  state.insert("w", ones({4, 4}));
  const std::filesystem::path path = temp_path("truncated.safetensors");
  save(state, path);
  const std::string bytes = io::read_file(path);
  io::write_file_atomically(path, std::string_view(bytes).substr(0, bytes.size() - 5));
  testing::expect_error([&] { load(path); }, "truncated.safetensors");
}

}  // namespace
}  // namespace weft::nn
