// Every op has a spec, and every spec agrees with the engine: shapes and dtypes it predicts are
// the ones the op produces, through the sampler and through Z3, and the two readings of each
// rule agree (a Z3 model is always accepted by the sampler).
#include <gtest/gtest.h>

#include <string>

#include "spec_check.h"
#include "weft/gen/spec.h"

namespace weft::gen {
namespace {

TEST(Spec, EveryOpHasASpec) {
  std::string missing;
  for (ir::OpKind op : ops_without_spec()) missing += " " + std::string(ir::op_name(op));
  EXPECT_TRUE(missing.empty()) << "ops without a spec:" << missing;
}

class SpecVsEngine : public ::testing::TestWithParam<ir::OpKind> {
 protected:
  void SetUp() override {
    if (!has_spec(GetParam())) GTEST_SKIP() << "no spec yet (Spec.EveryOpHasASpec fails)";
  }
};

TEST_P(SpecVsEngine, SampledShapesAndDtypesMatchTheEngine) {
  const auto check = testing::check_spec(GetParam(), 80, 1234);
  EXPECT_GT(check.accepted, 0) << "no sample satisfied the rule";
  EXPECT_EQ(check.mismatches, 0) << (check.messages.empty() ? "" : check.messages.front());
}

TEST_P(SpecVsEngine, Z3SolutionsMatchTheEngineAndTheSampler) {
  const auto check = testing::check_spec(GetParam(), 12, 99, /*samples=*/0);
  EXPECT_GT(check.by_z3, 0) << "Z3 found no solution";
  EXPECT_EQ(check.disagreements, 0) << "Z3 models that the sampler rejected";
  EXPECT_EQ(check.mismatches, 0) << (check.messages.empty() ? "" : check.messages.front());
}

std::string op_param_name(const ::testing::TestParamInfo<ir::OpKind>& info) {
  return std::string(ir::op_name(info.param));
}

INSTANTIATE_TEST_SUITE_P(Spec, SpecVsEngine, ::testing::ValuesIn(ir::kAllOps), op_param_name);

}  // namespace
}  // namespace weft::gen
