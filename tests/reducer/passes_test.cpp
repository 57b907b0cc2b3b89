// The reducer's passes one by one, on hand-built cases with a planted fault.
#include "passes.h"

#include <gtest/gtest.h>

#include "weft/ops.h"
#include "weft/oracle/fault.h"
#include "weft/oracle/oracle.h"

namespace weft::reduce {
namespace {

using ir::OpKind;
using ir::TensorType;

ReduceOptions options_with_budget(double seconds) {
  ReduceOptions options;
  options.jobs = 1;
  options.worker.command = {WEFT_BINARY, "worker"};
  options.worker.time_limit_seconds = 20;
  options.budget_seconds = seconds;
  return options;
}

// x[2, 1] -> min(dim 1, keepdim) -> (values v[2, 1], indices i); exp(v) and i are outputs, and
// exp is faulty. Bypassing min feeds exp x, but min stays (its indices are an output); bypassing
// it once more changes nothing. Such a no-op edit shows the finding as well as the case it copies,
// and the pass accepted it forever (a 900 s CI timeout): a case the reduction has been at is
// never a candidate again.
TEST(ReducerPasses, AnEditThatChangesNothingIsNotAcceptedAgain) {
  Case c;
  const TensorType type{Dtype::Float32, {2, 1}};
  const ir::ValueId x = c.graph.add_input("x", type);
  const std::vector<ir::ValueId> min =
      c.graph.add_node(OpKind::Min, {x}, ir::Attributes().set("dim", 1).set("keepdim", true),
                       {type, TensorType{Dtype::Int64, {2, 1}}}, "m");
  const ir::ValueId e = c.graph.add_node(OpKind::Exp, {min[0]}, {}, {type}, "e")[0];
  c.graph.mark_output(e);
  c.graph.mark_output(min[1]);
  c.values["x"] = tensor(std::vector<float>{0.5f, -0.25f}, {2, 1});

  oracle::OracleOptions oracle_options;
  oracle_options.backends = {
      oracle::fault_backend_name({oracle::FaultKind::PerturbLarge, OpKind::Exp})};
  oracle_options.worker = options_with_budget(0).worker;
  oracle::Oracle oracle(oracle_options);
  const oracle::CaseReport report = oracle.check(c.graph, c.values);
  ASSERT_FALSE(report.verdict.findings.empty());
  const oracle::Finding target = report.verdict.findings.front();

  Evaluator evaluator(target, options_with_budget(120));
  State state;
  state.current = c;
  state.finding = target;
  evaluator.visited(state.current);
  EXPECT_TRUE(bypass_pass(state, evaluator));
  EXPECT_FALSE(evaluator.exhausted());
  ASSERT_EQ(state.steps.size(), 1u);
  EXPECT_EQ(state.steps[0].pass, "bypass");
  // The second bypass of min is the current case again: never judged, let alone accepted.
  EXPECT_FALSE(bypass_pass(state, evaluator));
  EXPECT_EQ(state.steps.size(), 1u);
}

}  // namespace
}  // namespace weft::reduce
