#pragma once
// EXPECT a tensor's elements to equal reference values: NaN matches NaN, infinities match
// exactly, finite values within a relative tolerance.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "weft/tensor.h"

namespace weft::testing {

inline void expect_values(const Tensor& t, const std::vector<double>& expected, double tol,
                          const std::string& what) {
  const std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " element " << i << ": " << got[i];
    } else if (std::isinf(expected[i])) {
      EXPECT_EQ(got[i], expected[i]) << what << " element " << i;
    } else {
      EXPECT_NEAR(got[i], expected[i], tol * (1 + std::fabs(expected[i])))
          << what << " element " << i;
    }
  }
}

}  // namespace weft::testing
