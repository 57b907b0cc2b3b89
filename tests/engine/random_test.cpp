// Seeded random tensors: reproducible, in range, with the right moments.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "weft/error.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft {
namespace {

TEST(Random, SameSeedGivesSameTensors) {
  manual_seed(42);
  const Tensor a = randn({100});
  manual_seed(42);
  const Tensor b = randn({100});
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
  Generator g1(7), g2(7);
  EXPECT_EQ(rand({10}, {}, &g1).to_vector<float>(), rand({10}, {}, &g2).to_vector<float>());
  EXPECT_NE(rand({10}, {}, &g1).to_vector<float>(), randn({10}, {}, &g2).to_vector<float>());
}

TEST(Random, UniformAndNormalHaveExpectedMoments) {
  Generator g(1);
  const Tensor u = rand({20000}, dtype(Dtype::Float64), &g);
  EXPECT_GE(min(u).item(), 0.0);
  EXPECT_LT(max(u).item(), 1.0);
  EXPECT_NEAR(mean(u).item(), 0.5, 0.01);
  const Tensor n = randn({20000}, dtype(Dtype::Float64), &g);
  EXPECT_NEAR(mean(n).item(), 0.0, 0.03);
  EXPECT_NEAR(weft::std(n).item(), 1.0, 0.03);
}

TEST(Random, RandintStaysInHalfOpenRange) {
  Generator g(3);
  const std::vector<std::int64_t> v =
      randint(-2, 3, {1000}, dtype(Dtype::Int64), &g).to_vector<std::int64_t>();
  const std::set<std::int64_t> seen(v.begin(), v.end());
  EXPECT_EQ(seen, (std::set<std::int64_t>{-2, -1, 0, 1, 2}));
  EXPECT_THROW(randint(3, 3, {1}), Error);
}

TEST(Random, RandpermIsAPermutation) {
  Generator g(5);
  std::vector<std::int64_t> p = randperm(50, &g).to_vector<std::int64_t>();
  std::sort(p.begin(), p.end());
  for (std::int64_t i = 0; i < 50; ++i) EXPECT_EQ(p[i], i);
}

TEST(Random, InPlaceFillsRespectBoundsAndRejectBadArguments) {
  Tensor t = empty({3, 4}).t();  // non-contiguous
  uniform_(t, -2.0, -1.0);
  EXPECT_GE(min(t).item(), -2.0);
  EXPECT_LT(max(t).item(), -1.0);
  EXPECT_THROW(uniform_(t, 1.0, 0.0), Error);
  EXPECT_THROW(normal_(t, 0.0, -1.0), Error);
  Tensor i = zeros({2}, dtype(Dtype::Int64));
  EXPECT_THROW(uniform_(i), Error);
}

}  // namespace
}  // namespace weft
