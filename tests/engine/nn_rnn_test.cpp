// nn::LSTM and nn::GRU on their own: result shapes in every layout, PyTorch's parameter names and
// init, the cell formulas, inter-layer dropout, error messages, and finite-difference gradients.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "expect_error.h"
#include "gradcheck.h"
#include "weft/autograd.h"
#include "weft/nn/rnn.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft {
namespace {

using nn::GRU;
using nn::LSTM;
using testing::expect_error;
using testing::expect_parameter_gradients_match_finite_differences;
using testing::expect_same_values;
using testing::random_tensor;

std::vector<std::string> keys_of(const nn::Module& module) {
  return module.state_dict().keys();
}

TEST(NnRnn, LstmOutputShapesFollowLayoutDirectionsAndLayers) {
  LSTM seq_first(4, 6, /*num_layers=*/2, true, false, 0.0, /*bidirectional=*/true);
  auto [out, state] = seq_first(randn({5, 3, 4}));
  EXPECT_EQ(out.sizes(), (Shape{5, 3, 12}));
  EXPECT_EQ(std::get<0>(state).sizes(), (Shape{4, 3, 6}));
  EXPECT_EQ(std::get<1>(state).sizes(), (Shape{4, 3, 6}));

  LSTM batch_first(4, 6, 3, true, /*batch_first=*/true);
  auto [out_bf, state_bf] = batch_first(randn({3, 5, 4}));
  EXPECT_EQ(out_bf.sizes(), (Shape{3, 5, 6}));
  EXPECT_EQ(std::get<0>(state_bf).sizes(), (Shape{3, 3, 6}));  // h_n stays [layers, N, H]

  auto [out_unbatched, state_unbatched] = seq_first(randn({5, 4}));
  EXPECT_EQ(out_unbatched.sizes(), (Shape{5, 12}));
  EXPECT_EQ(std::get<1>(state_unbatched).sizes(), (Shape{4, 6}));
}

TEST(NnRnn, GruOutputShapesFollowLayoutDirectionsAndLayers) {
  GRU gru(4, 6, 2, true, /*batch_first=*/true, 0.0, /*bidirectional=*/true);
  auto [out, h_n] = gru(randn({3, 5, 4}));
  EXPECT_EQ(out.sizes(), (Shape{3, 5, 12}));
  EXPECT_EQ(h_n.sizes(), (Shape{4, 3, 6}));
  auto [out_unbatched, h_unbatched] = gru(randn({5, 4}), randn({4, 6}));
  EXPECT_EQ(out_unbatched.sizes(), (Shape{5, 12}));
  EXPECT_EQ(h_unbatched.sizes(), (Shape{4, 6}));
}

TEST(NnRnn, StateDictKeysAndShapesMatchPyTorch) {
  LSTM lstm(4, 6, 2, true, false, 0.0, true);
  EXPECT_EQ(keys_of(lstm),
            (std::vector<std::string>{
                "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ih_l0_reverse",
                "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse", "weight_ih_l1",
                "weight_hh_l1", "bias_ih_l1", "bias_hh_l1", "weight_ih_l1_reverse",
                "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse"}));
  const auto sd = lstm.state_dict();
  EXPECT_EQ(sd.at("weight_ih_l0").sizes(), (Shape{24, 4}));
  EXPECT_EQ(sd.at("weight_hh_l0").sizes(), (Shape{24, 6}));
  EXPECT_EQ(sd.at("weight_ih_l1").sizes(), (Shape{24, 12}));  // both directions feed layer 1
  EXPECT_EQ(sd.at("bias_hh_l1_reverse").sizes(), (Shape{24}));

  GRU gru(4, 6, 2, /*bias=*/false);
  EXPECT_EQ(keys_of(gru), (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "weight_ih_l1",
                                                    "weight_hh_l1"}));
  EXPECT_EQ(gru.state_dict().at("weight_ih_l1").sizes(), (Shape{18, 6}));
}

TEST(NnRnn, ParametersAreUniformWithinOneOverSqrtHiddenSize) {
  manual_seed(3);
  GRU gru(5, 16);
  const double bound = 1.0 / std::sqrt(16.0);
  for (const auto& [name, p] : gru.named_parameters()) {
    const auto v = p.to_vector<double>();
    double lo = 1, hi = -1;
    for (double x : v) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    EXPECT_GE(lo, -bound) << name;
    EXPECT_LE(hi, bound) << name;
    EXPECT_LT(lo, -bound / 2) << name << " does not spread over the interval";
    EXPECT_GT(hi, bound / 2) << name << " does not spread over the interval";
  }
  manual_seed(3);
  GRU again(5, 16);
  expect_same_values(gru.state_dict().at("weight_ih_l0"), again.state_dict().at("weight_ih_l0"));
}

TEST(NnRnn, LstmStepFollowsGateFormulas) {
  LSTM lstm(3, 2);
  const Tensor x = randn({1, 2, 3});
  const Tensor h0 = randn({1, 2, 2});
  const Tensor c0 = randn({1, 2, 2});
  auto [out, state] = lstm(x, std::make_tuple(h0, c0));
  const auto sd = lstm.state_dict();
  const Tensor gates = linear(x[0], sd.at("weight_ih_l0"), sd.at("bias_ih_l0")) +
                       linear(h0[0], sd.at("weight_hh_l0"), sd.at("bias_hh_l0"));
  const auto g = chunk(gates, 4, 1);  // i, f, g, o
  const Tensor c = sigmoid(g[1]) * c0[0] + sigmoid(g[0]) * tanh(g[2]);
  const Tensor h = sigmoid(g[3]) * tanh(c);
  expect_same_values(out[0], h, 1e-6);
  expect_same_values(std::get<0>(state)[0], h, 1e-6);
  expect_same_values(std::get<1>(state)[0], c, 1e-6);
}

TEST(NnRnn, GruStepFollowsGateFormulas) {
  GRU gru(3, 2);
  const Tensor x = randn({1, 2, 3});
  const Tensor h0 = randn({1, 2, 2});
  auto [out, h_n] = gru(x, h0);
  const auto sd = gru.state_dict();
  const auto gi = chunk(linear(x[0], sd.at("weight_ih_l0"), sd.at("bias_ih_l0")), 3, 1);
  const auto gh = chunk(linear(h0[0], sd.at("weight_hh_l0"), sd.at("bias_hh_l0")), 3, 1);
  const Tensor r = sigmoid(gi[0] + gh[0]);
  const Tensor z = sigmoid(gi[1] + gh[1]);
  const Tensor n = tanh(gi[2] + r * gh[2]);
  const Tensor h = (1.0 - z) * n + z * h0[0];
  expect_same_values(out[0], h, 1e-6);
  expect_same_values(h_n[0], h, 1e-6);
}

TEST(NnRnn, ReverseDirectionReadsTheSequenceBackwards) {
  // The reverse half of a bidirectional layer equals a forward layer run on the reversed input.
  GRU bi(3, 4, 1, true, false, 0.0, true);
  GRU uni(3, 4);
  const auto sd = bi.state_dict();
  nn::StateDict reverse_only;
  for (const char* name : {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"}) {
    reverse_only.insert(name, sd.at(std::string(name) + "_reverse"));
  }
  uni.load_state_dict(reverse_only);
  const Tensor x = randn({4, 2, 3});
  const Tensor reversed = stack({x[3], x[2], x[1], x[0]}, 0);
  auto [out_bi, h_bi] = bi(x);
  auto [out_uni, h_uni] = uni(reversed);
  for (std::int64_t t = 0; t < 4; ++t) {
    expect_same_values(out_bi[t].slice(1, 4, 8), out_uni[3 - t], 1e-6);
  }
  expect_same_values(h_bi[1], h_uni[0], 1e-6);
}

TEST(NnRnn, UnbatchedAndBatchFirstInputsMatchTheSeqFirstBatch) {
  LSTM lstm(3, 4, 2, true, false, 0.0, true);
  const Tensor x = randn({5, 1, 3});
  auto [out, state] = lstm(x);
  auto [out_unbatched, state_unbatched] = lstm(x.squeeze({1}));
  expect_same_values(out_unbatched, out.squeeze({1}), 1e-6);
  expect_same_values(std::get<1>(state_unbatched), std::get<1>(state).squeeze({1}), 1e-6);

  LSTM lstm_bf(3, 4, 2, true, /*batch_first=*/true, 0.0, true);
  lstm_bf.load_state_dict(lstm.state_dict());
  const Tensor xb = randn({5, 2, 3});
  auto [out_seq, state_seq] = lstm(xb);
  auto [out_bf, state_bf] = lstm_bf(xb.transpose(0, 1));
  expect_same_values(out_bf.transpose(0, 1), out_seq, 1e-6);
  expect_same_values(std::get<0>(state_bf), std::get<0>(state_seq), 1e-6);
}

TEST(NnRnn, DropoutActsBetweenLayersOnlyInTraining) {
  LSTM lstm(3, 8, 2, true, false, /*dropout=*/0.5);
  const Tensor x = randn({4, 2, 3});
  manual_seed(11);
  const Tensor a = std::get<0>(lstm(x));
  manual_seed(11);
  const Tensor b = std::get<0>(lstm(x));
  expect_same_values(a, b);  // reproducible from the default generator

  lstm.eval();
  const Tensor eval_out = std::get<0>(lstm(x));
  lstm.train();
  lstm.dropout = 0.0;
  const Tensor no_dropout = std::get<0>(lstm(x));
  expect_same_values(eval_out, no_dropout);
  EXPECT_GT(max(abs(a - eval_out)).item(), 1e-3);
}

TEST(NnRnn, RejectsBadArgumentsWithPyTorchMessages) {
  LSTM lstm(4, 6, 2);
  expect_error(
      [&] {
        lstm(randn({2, 3, 4, 5}));
      },
      "LSTM: Expected input to be 2-D or 3-D but received 4-D tensor");
  expect_error(
      [&] {
        lstm(randn({5, 3, 7}));
      },
      "input.size(-1) must be equal to input_size. Expected 4, got 7");
  expect_error(
      [&] {
        lstm(randn({5, 3, 4}), std::make_tuple(randn({1, 3, 6}), randn({2, 3, 6})));
      },
      "Expected hidden[0] size (2, 3, 6), got [1, 3, 6]");
  expect_error(
      [&] {
        lstm(randn({5, 3, 4}), std::make_tuple(randn({2, 3, 6}), randn({2, 3, 5})));
      },
      "Expected hidden[1] size (2, 3, 6), got [2, 3, 5]");
  expect_error(
      [&] {
        lstm(randn({5, 3, 4}), std::make_tuple(randn({2, 6}), randn({2, 3, 6})));
      },
      "For batched 3-D input, hx and cx should also be 3-D but got (2-D, 3-D) tensors");
  expect_error(
      [&] {
        lstm(randn({5, 3, 4}, dtype(Dtype::Float64)));
      },
      "input must have the type torch.float32, got type torch.float64");

  GRU gru(4, 6);
  expect_error(
      [&] {
        gru(randn({5, 4}), randn({1, 3, 6}));
      },
      "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor");
  expect_error(
      [&] {
        gru(randn({5, 3, 4}), randn({1, 2, 6}));
      },
      "Expected hidden size (1, 3, 6), got [1, 2, 6]");
  expect_error([] { GRU(4, 6, 1, true, false, 1.5); },
               "dropout should be a number in range [0, 1]");
  expect_error([] { LSTM(4, 0); }, "hidden_size must be greater than zero");
}

TEST(NnRnn, LstmGradientsMatchFiniteDifferences) {
  manual_seed(5);
  LSTM lstm(3, 2, 2, true, false, 0.0, true);
  lstm.to(Dtype::Float64);
  const Tensor x = random_tensor({3, 2, 3}, 1);
  const Tensor h0 = random_tensor({4, 2, 2}, 2);
  const Tensor c0 = random_tensor({4, 2, 2}, 3);
  testing::expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& in) {
        auto [out, state] = lstm(in[0], std::make_tuple(in[1], in[2]));
        return std::vector<Tensor>{out, std::get<0>(state), std::get<1>(state)};
      },
      {x, h0, c0});
  expect_parameter_gradients_match_finite_differences(lstm, [&] {
    auto [out, state] = lstm(x, std::make_tuple(h0, c0));
    return testing::weighted_sum({out, std::get<0>(state), std::get<1>(state)}, 7);
  });
}

TEST(NnRnn, GruGradientsMatchFiniteDifferences) {
  manual_seed(6);
  GRU gru(3, 2, 2, true, /*batch_first=*/true, 0.0, true);
  gru.to(Dtype::Float64);
  const Tensor x = random_tensor({2, 3, 3}, 4);
  const Tensor h0 = random_tensor({4, 2, 2}, 5);
  testing::expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& in) {
        auto [out, h_n] = gru(in[0], in[1]);
        return std::vector<Tensor>{out, h_n};
      },
      {x, h0});
  expect_parameter_gradients_match_finite_differences(gru, [&] {
    auto [out, h_n] = gru(x, h0);
    return testing::weighted_sum({out, h_n}, 8);
  });
}

}  // namespace
}  // namespace weft
