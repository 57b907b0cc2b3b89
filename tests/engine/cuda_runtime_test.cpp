// CUDA probing must work on machines without a GPU, and kernels must run where one exists.
#include <gtest/gtest.h>

#include <stdexcept>

#include "weft/cuda.h"

TEST(CudaRuntime, AvailabilityIsConsistentAndExplained) {
  const weft::cuda::Availability& gpu = weft::cuda::availability();
  if (gpu.available) {
    EXPECT_TRUE(gpu.compiled);
    EXPECT_GT(gpu.device_count, 0);
    EXPECT_TRUE(gpu.reason.empty());
  } else {
    EXPECT_EQ(gpu.device_count, 0);
    EXPECT_FALSE(gpu.reason.empty()) << "an unavailable device must say why";
  }
#ifdef WEFT_WITH_CUDA
  EXPECT_TRUE(gpu.compiled);
#else
  EXPECT_FALSE(gpu.compiled);
#endif
}

TEST(CudaRuntime, FillKernelRoundTripsThroughDevice) {
  const weft::cuda::Availability& gpu = weft::cuda::availability();
  if (!gpu.available) {
    EXPECT_THROW(weft::cuda::fill_on_device(4, 1.0f), std::runtime_error);
    GTEST_SKIP() << "no CUDA device: " << gpu.reason;
  }
  const std::vector<float> values = weft::cuda::fill_on_device(1000, 2.5f);
  ASSERT_EQ(values.size(), 1000u);
  for (float v : values) EXPECT_EQ(v, 2.5f);
}
