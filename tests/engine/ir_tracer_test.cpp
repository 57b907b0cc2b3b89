// The tracer against the op table: for every case of the op sweep, calling the op while
// tracing records exactly the case's node (same op, same attributes up to defaults, same
// inputs), and the traced graph computes the same outputs. This checks each op's trace line
// in engine/src/ops/*.cpp against the attributes ir::run_node reads.
#include <gtest/gtest.h>

#include <string>

#include "support/op_cases.h"
#include "weft/ir/execute.h"
#include "weft/ir/op_schema.h"
#include "weft/ir/tracer.h"
#include "weft/ops.h"

namespace weft::ir {
namespace {

using testing::OpCase;

class TracerSweep : public ::testing::TestWithParam<OpKind> {};

TEST_P(TracerSweep, TracingAnOpRecordsItsNode) {
  const OpKind op = GetParam();
  int checked = 0;
  for (const OpCase& c : testing::op_cases(op, Dtype::Float64)) {
    if (!c.engine_error.empty() || c.graph.nodes().size() != 1) continue;
    SCOPED_TRACE(c.label);
    const Node& node = c.graph.nodes().front();
    std::vector<Tensor> inputs;
    Graph traced;
    {
      Tracer tracer;
      for (LeafKind kind : {LeafKind::Input, LeafKind::Parameter}) {
        for (ValueId id : c.graph.leaves(kind)) {
          const std::string& name = c.graph.value(id).name;
          if (kind == LeafKind::Input) tracer.add_input(name, c.values.at(name));
          if (kind == LeafKind::Parameter) tracer.add_parameter(name, c.values.at(name));
        }
      }
      for (ValueId id : node.inputs) inputs.push_back(c.values.at(c.graph.value(id).name));
      traced = tracer.finish(run_node(node, inputs));
    }
    ASSERT_EQ(traced.nodes().size(), 1u);
    const Node& got = traced.nodes().front();
    EXPECT_EQ(got.op, node.op);
    // How a program spells a scalar operation (`x * 2`, `torch.mul(x, 2)`) is not part of the
    // computation a trace sees: traces record the default spelling.
    ir::Attributes expected_attrs = with_defaults(op, node.attrs);
    if (expected_attrs.has("spelling")) expected_attrs.set("spelling", "operator");
    EXPECT_EQ(with_defaults(op, got.attrs), expected_attrs);
    ASSERT_EQ(got.inputs.size(), node.inputs.size());
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      EXPECT_EQ(traced.value(got.inputs[i]).name, c.graph.value(node.inputs[i]).name);
    }
    const auto expected = execute(c.graph, c.values).outputs;
    const auto replayed = execute(traced, c.values).outputs;
    ASSERT_EQ(replayed.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const auto mismatch = testing::compare_tensors(replayed[i], expected[i], 0.0, 0.0);
      EXPECT_TRUE(mismatch.ok) << "output " << i << ": " << mismatch.message;
    }
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no case of " << op_name(op) << " could be traced";
}

std::string op_param_name(const ::testing::TestParamInfo<OpKind>& info) {
  return std::string(op_name(info.param));
}

INSTANTIATE_TEST_SUITE_P(Tracer, TracerSweep, ::testing::ValuesIn(kAllOps), op_param_name);

}  // namespace
}  // namespace weft::ir
