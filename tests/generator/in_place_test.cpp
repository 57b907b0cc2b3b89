// In-place writes of generated cases (generator/src/in_place.h): valid, the same values run as
// written and as dataflow (outputs and gradients, bit for bit), all three kinds of write drawn,
// and a rate of 0 turns them off.
#include <gtest/gtest.h>

#include <map>

#include "weft/gen/generator.h"
#include "weft/ir/execute.h"
#include "weft/ir/inplace.h"
#include "weft/ir/validate.h"

namespace weft::gen {
namespace {

ir::GradientExecution run(const ir::Graph& graph, const ir::TensorMap& values,
                          const std::vector<Tensor>& cotangents,
                          const ir::ExecutionOptions& options) {
  if (!cotangents.empty()) return ir::execute_with_gradients(graph, values, cotangents, options);
  ir::GradientExecution result;
  result.forward = ir::execute(graph, values, options);
  return result;
}

TEST(GeneratedInPlace, WritesKeepTheCasesMeaningAndValues) {
  Generator generator;
  CaseOptions options;
  options.generator.nodes = 8;
  options.in_place_rate = 1;
  options.dynamic_shapes_rate = 0;
  std::map<std::string, int> kinds;
  int with_writes = 0;
  // At least 60 cases, and more (up to 240) until every kind of write has shown: the draws
  // spread over every op, so each op added makes a rarer kind (copy_) rarer still.
  const auto every_kind_seen = [&] {
    for (const char* kind :
         {"slice_scatter", "select_scatter", "slot", "masked_fill_", "index_put_", "copy_"}) {
      if (kinds[kind] == 0) return false;
    }
    return true;
  };
  int cases = 0;
  for (std::uint64_t seed = 0; seed < 240 && (seed < 60 || !every_kind_seen()); ++seed) {
    ++cases;
    options.generator.seed = seed;
    const GeneratedCase c = generate_case(generator, options);
    if (ir::count_in_place(c.graph) == 0) continue;
    ++with_writes;
    ASSERT_NO_THROW(ir::validate(c.graph)) << "seed " << seed;
    EXPECT_TRUE(c.values.finite) << "seed " << seed;
    for (const ir::Node& node : c.graph.nodes()) {
      if (ir::is_writeback(node)) {
        ++kinds[ir::writes_into_slot(c.graph, node) ? "slot" : std::string(ir::op_name(node.op))];
      } else if (ir::is_in_place(node)) {
        ++kinds["in-place"];
        if (node.op == ir::OpKind::MaskedFill) ++kinds["masked_fill_"];
        if (node.op == ir::OpKind::IndexPut) ++kinds["index_put_"];
        if (node.op == ir::OpKind::Copy) ++kinds["copy_"];
      }
    }
    // Forward-only cases record no history: outputs alone.
    const std::vector<Tensor> cotangents =
        c.graph.requires_grad() ? ir::random_cotangents(c.graph, seed) : std::vector<Tensor>{};
    ir::ExecutionOptions written;
    written.as_written = true;
    const ir::GradientExecution a = run(c.graph, c.values.values, cotangents, written);
    const ir::GradientExecution b = run(c.graph, c.values.values, cotangents, {});
    for (std::size_t k = 0; k < a.forward.outputs.size(); ++k) {
      EXPECT_EQ(a.forward.outputs[k].to_vector<double>(), b.forward.outputs[k].to_vector<double>())
          << "seed " << seed << " output " << k;
    }
    for (const auto& [name, g] : b.gradients) {
      EXPECT_EQ(a.gradients.at(name).to_vector<double>(), g.to_vector<double>())
          << "seed " << seed << " gradient of " << name;
    }
  }
  std::printf(
      "%d / %d cases with writes; in-place %d (masked_fill_ %d, index_put_ %d, copy_ %d), through "
      "slice %d, through select %d, into a slot %d\n",
      with_writes, cases, kinds["in-place"], kinds["masked_fill_"], kinds["index_put_"],
      kinds["copy_"], kinds["slice_scatter"], kinds["select_scatter"], kinds["slot"]);
  EXPECT_GT(with_writes, cases / 2);
  EXPECT_GT(kinds["slice_scatter"], 0);
  EXPECT_GT(kinds["select_scatter"], 0);
  EXPECT_GT(kinds["slot"], 0);
  EXPECT_GT(kinds["masked_fill_"], 0);
  EXPECT_GT(kinds["index_put_"], 0);
  EXPECT_GT(kinds["copy_"], 0);

  options.in_place_rate = 0;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    options.generator.seed = seed;
    EXPECT_EQ(ir::count_in_place(generate_case(generator, options).graph), 0u);
  }
}

}  // namespace
}  // namespace weft::gen
