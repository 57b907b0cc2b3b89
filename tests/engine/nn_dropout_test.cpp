// The random modules beyond nn::Dropout (nn_layers_test.cpp): Dropout1d/2d/3d drop whole
// channels of batched and unbatched inputs, AlphaDropout and FeatureAlphaDropout, RReLU; the
// identity (or the mean slope) in eval, reproducible after manual_seed, PyTorch's messages.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "expect_error.h"
#include "gradcheck.h"
#include "weft/nn/activation.h"
#include "weft/nn/dropout.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft {
namespace {

using testing::expect_error;
using testing::random_tensor;

// Whether every channel (contiguous run of `inner` elements) of y is all zero or all x * scale.
bool whole_channels(const Tensor& x, const Tensor& y, std::size_t inner, double scale) {
  const std::vector<double> in = x.to_vector<double>();
  const std::vector<double> out = y.to_vector<double>();
  for (std::size_t start = 0; start < out.size(); start += inner) {
    const bool dropped = out[start] == 0.0;
    for (std::size_t i = start; i < start + inner; ++i) {
      if (std::abs(out[i] - (dropped ? 0.0 : in[i] * scale)) > 1e-12) return false;
    }
  }
  return true;
}

TEST(NnDropout, ChannelDropoutDropsWholeChannelsBatchedOrNot) {
  manual_seed(3);
  nn::Dropout2d dropout(0.5);
  const Tensor batched = random_tensor({4, 6, 3, 2}, 1, 0.5, 1.5);
  EXPECT_TRUE(whole_channels(batched, dropout(batched), 6, 2.0));
  const Tensor unbatched = random_tensor({6, 3, 2}, 2, 0.5, 1.5);
  const Tensor y = dropout(unbatched);
  EXPECT_EQ(y.sizes(), unbatched.sizes());
  EXPECT_TRUE(whole_channels(unbatched, y, 6, 2.0));
  nn::Dropout1d one(0.25);
  const Tensor sequence = random_tensor({2, 5, 7}, 4, 0.5, 1.5);
  EXPECT_TRUE(whole_channels(sequence, one(sequence), 7, 1.0 / 0.75));
  dropout.eval();
  EXPECT_EQ(dropout(batched).to_vector<double>(), batched.to_vector<double>());
  expect_error(
      [&] {
        nn::Dropout3d()(batched.reshape({4, 6, 6}));
      },
      "dropout3d: Expected 4D or 5D input, but received a 3D input");
  expect_error([] { nn::Dropout2d(2.0); }, "dropout probability has to be between 0 and 1");
}

TEST(NnDropout, AlphaDropoutIsTheIdentityInEvalAndReproducibleInTraining) {
  const Tensor x = random_tensor({3, 4, 5}, 5);
  nn::AlphaDropout alpha(0.2);
  nn::FeatureAlphaDropout feature(0.2);
  manual_seed(7);
  const std::vector<double> first = alpha(x).to_vector<double>();
  const std::vector<double> channels = feature(x).to_vector<double>();
  EXPECT_NE(first, x.to_vector<double>());
  manual_seed(7);
  EXPECT_EQ(alpha(x).to_vector<double>(), first);
  EXPECT_EQ(feature(x).to_vector<double>(), channels);
  alpha.eval();
  feature.eval();
  EXPECT_EQ(alpha(x).to_vector<double>(), x.to_vector<double>());
  EXPECT_EQ(feature(x).to_vector<double>(), x.to_vector<double>());
}

TEST(NnDropout, RReLUDrawsSlopesInTrainingAndTakesTheMeanInEval) {
  const Tensor x = random_tensor({20, 30}, 8);
  nn::RReLU rrelu(0.1, 0.3);
  const std::vector<double> in = x.to_vector<double>();
  const std::vector<double> out = rrelu(x).to_vector<double>();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] > 0) {
      EXPECT_EQ(out[i], in[i]);
    } else if (in[i] < 0) {
      EXPECT_GE(out[i] / in[i], 0.1 - 1e-12);
      EXPECT_LE(out[i] / in[i], 0.3 + 1e-12);
    }
  }
  rrelu.eval();
  EXPECT_EQ(rrelu(x).to_vector<double>(), leaky_relu(x, 0.2).to_vector<double>());
  EXPECT_TRUE(rrelu.state_dict().empty());
}

}  // namespace
}  // namespace weft
