// In-place writes in the graph IR (weft/ir/inplace.h): the same values run as written and as
// dataflow, hand-derived results, and the rules that keep both readings the same.
#include <gtest/gtest.h>

#include "weft/ir/execute.h"
#include "weft/ir/inplace.h"
#include "weft/ir/op_schema.h"
#include "weft/ir/validate.h"
#include "weft/ops.h"

namespace weft::ir {
namespace {

constexpr Dtype kF = Dtype::Float32;

Attributes in_place() {
  return Attributes().set("inplace", true);
}

Attributes rows_1_to_3(bool writeback) {
  Attributes a = Attributes().set("dim", std::int64_t{0}).set("start", std::int64_t{1});
  a.set("end", std::int64_t{3});
  if (writeback) a.set("writeback", true);
  return a;
}

// a = x + w; a[1:3].relu_(); out = a * v: the write through the slice reaches a's reader.
Graph write_through_slice() {
  Graph g;
  const ValueId x = g.add_input("x", {kF, {4, 2}});
  const ValueId w = g.add_parameter("w", {kF, {2}});
  const ValueId v = g.add_input("v", {kF, {4, 2}});
  const ValueId a = g.add_node(OpKind::Add, {x, w}, {}, {{kF, {4, 2}}})[0];
  const ValueId s = g.add_node(OpKind::Slice, {a}, rows_1_to_3(false), {{kF, {2, 2}}})[0];
  const ValueId r = g.add_node(OpKind::Relu, {s}, in_place(), {{kF, {2, 2}}})[0];
  const ValueId b = g.add_node(OpKind::SliceScatter, {a, r}, rows_1_to_3(true), {{kF, {4, 2}}})[0];
  g.mark_output(g.add_node(OpKind::Mul, {b, v}, {}, {{kF, {4, 2}}})[0]);
  return g;
}

// a = x + w; a[1:3] = y; out = a * v.
Graph copy_into_slot() {
  Graph g;
  const ValueId x = g.add_input("x", {kF, {4, 2}});
  const ValueId w = g.add_parameter("w", {kF, {2}});
  const ValueId v = g.add_input("v", {kF, {4, 2}});
  const ValueId y = g.add_input("y", {kF, {2, 2}});
  const ValueId a = g.add_node(OpKind::Add, {x, w}, {}, {{kF, {4, 2}}})[0];
  const ValueId b = g.add_node(OpKind::SliceScatter, {a, y}, rows_1_to_3(true), {{kF, {4, 2}}})[0];
  g.mark_output(g.add_node(OpKind::Mul, {b, v}, {}, {{kF, {4, 2}}})[0]);
  return g;
}

TensorMap values() {
  return {{"rows", tensor(std::vector<std::int64_t>{3, 0, 3})},
          {"mask",
           tensor(std::vector<bool>{true, false, false, false, true, true, false, true}, {4, 2})},
          {"x", tensor(std::vector<float>{1, -2, -3, 4, -5, 6, 7, -8}, {4, 2})},
          {"w", tensor(std::vector<float>{0.5, -0.5})},
          {"v", tensor(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}, {4, 2})},
          {"y", tensor(std::vector<float>{10, 20, 30, 40}, {2, 2})}};
}

GradientExecution run(const Graph& graph, bool as_written) {
  ExecutionOptions options;
  options.as_written = as_written;
  return execute_with_gradients(graph, values(), {ones({4, 2})}, options);
}

void expect_same_both_ways(const Graph& graph) {
  const GradientExecution written = run(graph, true), dataflow = run(graph, false);
  EXPECT_EQ(written.forward.outputs[0].to_vector<float>(),
            dataflow.forward.outputs[0].to_vector<float>());
  ASSERT_EQ(written.gradients.size(), dataflow.gradients.size());
  for (const auto& [name, g] : dataflow.gradients) {
    EXPECT_EQ(written.gradients.at(name).to_vector<float>(), g.to_vector<float>()) << name;
  }
}

TEST(IrInPlace, WriteThroughASliceReachesTheBasesReaders) {
  const Graph g = write_through_slice();
  validate(g);
  EXPECT_EQ(program_forms(g), std::vector<std::string>{"in-place"});
  EXPECT_FALSE(writes_into_slot(g, g.nodes()[3]));
  const GradientExecution r = run(g, true);
  // a = [1.5,-2.5, -2.5,3.5, -4.5,5.5, 7.5,-8.5]; rows 1 and 2 relu'd.
  EXPECT_EQ(r.forward.outputs[0].to_vector<float>(),
            (std::vector<float>{1.5, -5, 0, 14, 0, 33, 52.5, -68}));
  // d/dx: v where the relu passes (rows 0 and 3 always, rows 1-2 where a > 0).
  EXPECT_EQ(r.gradients.at("x").to_vector<float>(), (std::vector<float>{1, 2, 0, 4, 0, 6, 7, 8}));
  EXPECT_EQ(r.gradients.at("w").to_vector<float>(), (std::vector<float>{8, 20}));
  expect_same_both_ways(g);
}

TEST(IrInPlace, CopyIntoASlotReplacesItAndRoutesGradients) {
  const Graph g = copy_into_slot();
  validate(g);
  EXPECT_TRUE(writes_into_slot(g, g.nodes()[1]));
  const GradientExecution r = run(g, true);
  EXPECT_EQ(r.forward.outputs[0].to_vector<float>(),
            (std::vector<float>{1.5, -5, 30, 80, 150, 240, 52.5, -68}));
  EXPECT_EQ(r.gradients.at("x").to_vector<float>(), (std::vector<float>{1, 2, 0, 0, 0, 0, 7, 8}));
  EXPECT_EQ(r.gradients.at("y").to_vector<float>(), (std::vector<float>{3, 4, 5, 6}));
  expect_same_both_ways(g);
}

TEST(IrInPlace, PlainInPlaceOpsMatchTheirDataflow) {
  for (OpKind op : {OpKind::Relu, OpKind::Sigmoid, OpKind::Tanh, OpKind::Exp, OpKind::Neg,
                    OpKind::Clamp, OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div,
                    OpKind::MaskedFill, OpKind::IndexPut, OpKind::Copy}) {
    Graph g;
    const ValueId x = g.add_input("x", {kF, {4, 2}});
    const ValueId w = g.add_parameter("w", {kF, {2}});
    const ValueId mask = g.add_input("mask", {Dtype::Bool, {4, 2}});
    const ValueId rows = g.add_input("rows", {Dtype::Int64, {3}});
    const ValueId a = g.add_node(OpKind::Mul, {x, w}, {}, {{kF, {4, 2}}})[0];
    Attributes attrs = in_place();
    if (op == OpKind::Clamp) attrs.set("min", -1.0).set("max", 2.0);
    if (op == OpKind::Sub) attrs.set("alpha", 2.0);
    if (op == OpKind::MaskedFill) attrs.set("value", -0.5);
    std::vector<ValueId> inputs{a};
    if (op == OpKind::IndexPut) attrs.set("accumulate", true);
    if (op == OpKind::MaskedFill) {
      inputs.push_back(mask);
    } else if (op == OpKind::IndexPut) {
      inputs.insert(inputs.end(), {rows, w});  // rows 3, 0 and 3 again, w added to each
    } else if (schema(op).input_names.size() == 2) {
      inputs.push_back(w);
    }
    const ValueId b = g.add_node(op, inputs, attrs, {{kF, {4, 2}}})[0];
    g.mark_output(g.add_node(OpKind::Mul, {b, x}, {}, {{kF, {4, 2}}})[0]);
    SCOPED_TRACE(std::string(op_name(op)));
    validate(g);
    expect_same_both_ways(g);
  }
}

// Each graph breaks one rule; validate names the node and the rule.
void expect_refused(const Graph& g, const std::string& phrase) {
  try {
    validate(g);
    ADD_FAILURE() << "validated a graph whose writes " << phrase;
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find(phrase), std::string::npos) << e.what();
  }
}

TEST(IrInPlace, WritesThatWouldChangeTheGraphsMeaningAreRefused) {
  {  // into a leaf
    Graph g;
    const ValueId x = g.add_input("x", {kF, {2}});
    g.mark_output(g.add_node(OpKind::Relu, {x}, in_place(), {{kF, {2}}})[0]);
    expect_refused(g, "storage of leaf 'x'");
  }
  {  // a reader of the value from before the write
    Graph g;
    const ValueId x = g.add_input("x", {kF, {2}});
    const ValueId a = g.add_node(OpKind::Neg, {x}, {}, {{kF, {2}}})[0];
    const ValueId r = g.add_node(OpKind::Relu, {a}, in_place(), {{kF, {2}}})[0];
    g.mark_output(g.add_node(OpKind::Add, {a, r}, {}, {{kF, {2}}})[0]);
    expect_refused(g, "read the written result instead");
  }
  {  // index_put_ whose values are the written tensor itself (campaign seed 1610, case 273)
    Graph g;
    const ValueId x = g.add_input("x", {kF, {2}});
    const ValueId i = g.add_input("i", {Dtype::Int64, {1}});
    const ValueId a = g.add_node(OpKind::Neg, {x}, {}, {{kF, {2}}})[0];
    g.mark_output(g.add_node(OpKind::IndexPut, {a, i, a}, in_place(), {{kF, {2}}})[0]);
    expect_refused(g, "index_put_ reads value 2, which shares the storage it writes");
    // The engine refuses the call as PyTorch does.
    Tensor t = tensor(std::vector<float>{1, 2});
    EXPECT_THROW(t.index_put_(tensor(std::vector<std::int64_t>{0}), t), Error);
  }
  {  // the result of exp, which its backward reads
    Graph g;
    const ValueId x = g.add_input("x", {kF, {2}});
    const ValueId a = g.add_node(OpKind::Exp, {x}, {}, {{kF, {2}}})[0];
    g.mark_output(g.add_node(OpKind::Relu, {a}, in_place(), {{kF, {2}}})[0]);
    expect_refused(g, "result of exp");
  }
  {  // a value another op read before the write (mul saved it)
    Graph g;
    const ValueId x = g.add_input("x", {kF, {2}});
    const ValueId a = g.add_node(OpKind::Neg, {x}, {}, {{kF, {2}}})[0];
    const ValueId m = g.add_node(OpKind::Mul, {a, x}, {}, {{kF, {2}}})[0];
    const ValueId r = g.add_node(OpKind::Relu, {a}, in_place(), {{kF, {2}}})[0];
    g.mark_output(m);
    g.mark_output(r);
    expect_refused(g, "read before the write");
  }
  {  // twice into one storage
    Graph g;
    const ValueId x = g.add_input("x", {kF, {2}});
    const ValueId a = g.add_node(OpKind::Neg, {x}, {}, {{kF, {2}}})[0];
    const ValueId r = g.add_node(OpKind::Neg, {a}, in_place(), {{kF, {2}}})[0];
    g.mark_output(g.add_node(OpKind::Relu, {r}, in_place(), {{kF, {2}}})[0]);
    expect_refused(g, "second time");
  }
  {  // a result of another type than its target's
    Graph g;
    const ValueId x = g.add_input("x", {kF, {2}});
    const ValueId y = g.add_input("y", {Dtype::Float64, {2}});
    const ValueId a = g.add_node(OpKind::Neg, {x}, {}, {{kF, {2}}})[0];
    g.mark_output(g.add_node(OpKind::Add, {a, y}, in_place(), {{Dtype::Float64, {2}}})[0]);
    expect_refused(g, "keep its target's type");
  }
  {  // returning the value from before the write
    Graph g;
    const ValueId x = g.add_input("x", {kF, {2}});
    const ValueId a = g.add_node(OpKind::Neg, {x}, {}, {{kF, {2}}})[0];
    g.mark_output(a);
    g.mark_output(g.add_node(OpKind::Relu, {a}, in_place(), {{kF, {2}}})[0]);
    expect_refused(g, "the graph returns");
  }
}

TEST(IrInPlace, ClearingTheMarksKeepsTheValues) {
  Graph g = write_through_slice();
  const std::vector<float> before = run(g, true).forward.outputs[0].to_vector<float>();
  EXPECT_EQ(count_in_place(g), 1u);
  clear_in_place(g);
  validate(g);
  EXPECT_EQ(count_in_place(g), 0u);
  EXPECT_TRUE(program_forms(g).empty());
  EXPECT_EQ(run(g, true).forward.outputs[0].to_vector<float>(), before);
}

}  // namespace
}  // namespace weft::ir
