// Proves that Z3 links and solves: a conv-like shape constraint with a known answer.
#include <gtest/gtest.h>

#include <z3++.h>

#include "weft/gen/z3_info.h"

TEST(Z3Smoke, SolvesConvOutputSizeConstraint) {
  z3::context ctx;
  z3::solver solver(ctx);
  const z3::expr in = ctx.int_const("in");
  const z3::expr kernel = ctx.int_const("kernel");
  // out = in - kernel + 1 with a 3x3 kernel must give 30: the only input size is 32.
  solver.add(kernel == 3 && in - kernel + 1 == 30 && in > 0);
  ASSERT_EQ(solver.check(), z3::sat);
  EXPECT_EQ(solver.get_model().eval(in).get_numeral_int(), 32);
  solver.add(in > 32);
  EXPECT_EQ(solver.check(), z3::unsat);
}

TEST(Z3Smoke, ReportsLinkedVersion) {
  EXPECT_EQ(weft::gen::z3_version().rfind("4.", 0), 0u) << weft::gen::z3_version();
}
