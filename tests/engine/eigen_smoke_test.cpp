// Proves that Eigen links and computes: a small product checked by hand.
#include <gtest/gtest.h>

#include <Eigen/Dense>

TEST(EigenSmoke, MatrixProductMatchesHandComputation) {
  Eigen::Matrix<float, 2, 3> a;
  a << 1, 2, 3, 4, 5, 6;
  Eigen::Matrix<float, 3, 2> b;
  b << 7, 8, 9, 10, 11, 12;
  const Eigen::Matrix2f c = a * b;
  EXPECT_FLOAT_EQ(c(0, 0), 58);
  EXPECT_FLOAT_EQ(c(0, 1), 64);
  EXPECT_FLOAT_EQ(c(1, 0), 139);
  EXPECT_FLOAT_EQ(c(1, 1), 154);
}
