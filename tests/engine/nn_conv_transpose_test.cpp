// nn::ConvTranspose1d / ConvTranspose2d on their own: parameter shapes and state-dict keys,
// PyTorch's default initialisation bounds, forward(input, output_size), argument errors and
// finite-difference gradients in float64.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "expect_error.h"
#include "gradcheck.h"
#include "weft/nn/conv_transpose.h"
#include "weft/ops.h"

namespace weft {
namespace {

using testing::expect_error;
using testing::expect_gradients_match_finite_differences;
using testing::random_tensor;

TEST(NnConvTranspose, ParametersHavePyTorchsShapesKeysAndBounds) {
  nn::ConvTranspose2d layer(nn::ConvTranspose2dOptions(4, 6, {3, 2}).groups(2));
  EXPECT_EQ(layer.weight.sizes(), (Shape{4, 3, 3, 2}));
  EXPECT_EQ(layer.bias.sizes(), (Shape{6}));
  EXPECT_EQ(layer.state_dict().keys(), (std::vector<std::string>{"weight", "bias"}));
  // PyTorch reads the fan-in from this weight: out/groups (3) times the kernel (6).
  const double bound = 1.0 / std::sqrt(18.0);
  for (const Tensor& p : {layer.weight, layer.bias}) {
    for (double v : p.to_vector<double>()) EXPECT_LE(std::abs(v), bound + 1e-7);
  }
  nn::ConvTranspose1d no_bias(nn::ConvTranspose1dOptions(2, 3, 4).bias(false));
  EXPECT_FALSE(no_bias.bias.defined());
  EXPECT_EQ(no_bias.state_dict().keys(), (std::vector<std::string>{"weight"}));
}

TEST(NnConvTranspose, ForwardIsTheOpAndOutputSizeChoosesTheOutputPadding) {
  nn::ConvTranspose2d layer(nn::ConvTranspose2dOptions(2, 3, 3).stride(2).padding(1));
  layer.to(Dtype::Float64);
  const Tensor x = random_tensor({1, 2, 4, 5}, 1);
  const Tensor expected = conv_transpose2d(x, layer.weight, layer.bias, {2}, {1});
  EXPECT_EQ(layer(x).to_vector<double>(), expected.to_vector<double>());
  EXPECT_EQ(layer(x).sizes(), (Shape{1, 3, 7, 9}));
  // Stride 2 reaches 7 or 8 rows and 9 or 10 columns.
  const Tensor wider = layer.forward(x, {8, 10});
  EXPECT_EQ(wider.sizes(), (Shape{1, 3, 8, 10}));
  EXPECT_EQ(wider.to_vector<double>(),
            conv_transpose2d(x, layer.weight, layer.bias, {2}, {1}, {1}).to_vector<double>());
  EXPECT_EQ(layer.forward(x, {1, 3, 7, 10}).sizes(), (Shape{1, 3, 7, 10}));
  expect_error(
      [&] {
        layer.forward(x, {9, 9});
      },
      "requested an output size of [9, 9], but valid sizes range from 7 to 8 (for an "
      "input of [4, 5])");
  expect_error([&] { layer.forward(x, {9}); }, "output_size must have 2 or 4 elements (got 1)");
}

TEST(NnConvTranspose, ArgumentErrorsArePyTorchs) {
  expect_error([] { nn::ConvTranspose2d(nn::ConvTranspose2dOptions(3, 4, 3).groups(2)); },
               "in_channels must be divisible by groups");
  expect_error([] { nn::ConvTranspose2d(nn::ConvTranspose2dOptions(4, 3, 3).groups(2)); },
               "out_channels must be divisible by groups");
  expect_error(
      [] { nn::ConvTranspose1d(nn::ConvTranspose1dOptions(2, 2, 3).padding_mode("reflect")); },
      "Only \"zeros\" padding mode is supported for ConvTranspose1d");
}

TEST(NnConvTranspose, GradientsMatchFiniteDifferences) {
  nn::ConvTranspose1d layer(
      nn::ConvTranspose1dOptions(2, 4, 3).stride(2).output_padding(1).groups(2).dilation(2));
  layer.to(Dtype::Float64);
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{conv_transpose1d(in[0], in[1], in[2], {2}, {0}, {1}, 2, {2})};
      },
      {random_tensor({2, 2, 4}, 3), layer.weight.detach(), layer.bias.detach()});
}

}  // namespace
}  // namespace weft
