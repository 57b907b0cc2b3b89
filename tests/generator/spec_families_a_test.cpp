// The binary, reduce, matmul, cast and shape specs on fixed bindings: valid bound shapes give
// the output PyTorch gives, invalid ones are refused by the sampler and by Z3 alike.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "spec/solve.h"
#include "weft/gen/spec.h"

namespace weft::gen {
namespace {

using Shape = std::vector<std::int64_t>;

InputBinding bound(Shape shape) {
  InputBinding b;
  b.rank = static_cast<int>(shape.size());
  b.shape = std::move(shape);
  return b;
}

InputBinding fresh(int rank) {
  InputBinding b;
  b.rank = rank;
  return b;
}

InputBinding absent() {
  InputBinding b;
  b.present = false;
  return b;
}

std::optional<RuleResult> run(ir::OpKind op, const std::vector<InputBinding>& inputs,
                              std::uint64_t seed = 1, int samples = 16, bool use_z3 = true,
                              const std::vector<Shape>& target = {}) {
  RuleSolver solver;
  std::mt19937_64 rng(seed);
  return solver.run(spec(op), inputs, rng, Bounds{}, samples, use_z3, target);
}

// Refused on every seed, by both the sampler and Z3.
void expect_refused(ir::OpKind op, const std::vector<InputBinding>& inputs,
                    const std::vector<Shape>& target = {}) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    EXPECT_FALSE(run(op, inputs, seed, 16, true, target).has_value())
        << ir::op_name(op) << " seed " << seed;
  }
}

TEST(SpecFamiliesA, BroadcastingOfBoundShapes) {
  const auto r = run(ir::OpKind::Add, {bound({3, 1, 5}), bound({4, 1})});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->output_shapes.at(0), (Shape{3, 4, 5}));
  expect_refused(ir::OpKind::Mul, {bound({3, 2}), bound({3})});
}

TEST(SpecFamiliesA, WhereBroadcastsThreeShapes) {
  const auto r = run(ir::OpKind::Where, {bound({3, 1}), bound({1, 4}), bound({4})});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->output_shapes.at(0), (Shape{3, 4}));
  expect_refused(ir::OpKind::Where, {bound({3}), bound({4}), bound({1})});
}

TEST(SpecFamiliesA, FreshOperandsFitTheBoundOneWithoutZ3) {
  // Sampler only: the fresh input is fitted to the bound one, so one draw is enough.
  int ok = 0;
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    const auto r = run(ir::OpKind::Matmul, {bound({2, 3, 4}), fresh(3)}, seed, 1, false);
    if (!r) continue;
    ++ok;
    EXPECT_EQ(r->input_shapes.at(1).at(1), 4);
  }
  EXPECT_GT(ok, 35);
}

TEST(SpecFamiliesA, MatmulRankCombinations) {
  struct Case {
    Shape a, b, out;
  };
  const std::vector<Case> cases = {
      {{4}, {4}, {}},
      {{3, 4}, {4}, {3}},
      {{4}, {4, 5}, {5}},
      {{4}, {2, 4, 5}, {2, 5}},
      {{2, 3, 4}, {4, 5}, {2, 3, 5}},
      {{2, 1, 3, 4}, {5, 4, 6}, {2, 5, 3, 6}},
  };
  for (const Case& c : cases) {
    const auto r = run(ir::OpKind::Matmul, {bound(c.a), bound(c.b)});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->output_shapes.at(0), c.out);
  }
  expect_refused(ir::OpKind::Matmul, {bound({3, 4}), bound({5, 2})});
  expect_refused(ir::OpKind::Matmul, {bound({2, 3, 4}), bound({3, 4, 5})});
  expect_refused(ir::OpKind::Matmul, {bound({}), bound({3})});
}

TEST(SpecFamiliesA, MmAndBmmRefuseOtherRanksAndMismatches) {
  const auto r = run(ir::OpKind::Mm, {bound({2, 3}), bound({3, 5})});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->output_shapes.at(0), (Shape{2, 5}));
  expect_refused(ir::OpKind::Mm, {bound({2, 3, 4}), bound({4, 5})});
  expect_refused(ir::OpKind::Mm, {bound({2, 3}), bound({4, 5})});
  expect_refused(ir::OpKind::Bmm, {bound({2, 3, 4}), bound({3, 4, 5})});
  expect_refused(ir::OpKind::Bmm, {bound({2, 3, 4}), bound({2, 5, 5})});
  expect_refused(ir::OpKind::Bmm, {bound({3, 4}), bound({4, 5})});
}

TEST(SpecFamiliesA, LinearSpellsWeightAndBias) {
  const auto r = run(ir::OpKind::Linear, {bound({2, 3, 7}), fresh(2), fresh(1)});
  ASSERT_TRUE(r);
  const Shape& w = r->input_shapes.at(1);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[1], 7);
  EXPECT_EQ(r->input_shapes.at(2), (Shape{w[0]}));
  EXPECT_EQ(r->output_shapes.at(0), (Shape{2, 3, w[0]}));
  const auto no_bias = run(ir::OpKind::Linear, {bound({7}), fresh(2), absent()});
  ASSERT_TRUE(no_bias);
  EXPECT_EQ(no_bias->output_shapes.at(0), (Shape{no_bias->input_shapes.at(1).at(0)}));
  expect_refused(ir::OpKind::Linear, {bound({2, 7}), bound({4, 6}), absent()});
}

TEST(SpecFamiliesA, AddmmSelfMustBroadcastToTheProduct) {
  const auto r = run(ir::OpKind::Addmm, {bound({5}), bound({2, 3}), bound({3, 5})});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->output_shapes.at(0), (Shape{2, 5}));
  expect_refused(ir::OpKind::Addmm, {bound({4}), bound({2, 3}), bound({3, 5})});
}

TEST(SpecFamiliesA, ReshapeKeepsTheElementCount) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const auto r = run(ir::OpKind::Reshape, {bound({2, 3, 4})}, seed);
    ASSERT_TRUE(r) << "seed " << seed;
    const Shape& out = r->output_shapes.at(0);
    std::int64_t n = 1;
    for (std::int64_t d : out) n *= d;
    EXPECT_EQ(n, 24);
    // The attribute is the output, with at most one -1 standing for its entry.
    const auto& shape = r->attrs.get_ints("shape");
    ASSERT_EQ(shape.size(), out.size());
    EXPECT_LE(std::count(shape.begin(), shape.end(), -1), 1);
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] != -1) {
        EXPECT_EQ(shape[i], out[i]);
      }
    }
  }
  expect_refused(ir::OpKind::Reshape, {bound({2, 3, 4})}, {{5, 5}});
}

TEST(SpecFamiliesA, ReshapeSamplesWithoutZ3) {
  int ok = 0;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    if (run(ir::OpKind::Reshape, {bound({4, 6, 2})}, seed, 1, false)) ++ok;
  }
  EXPECT_GT(ok, 50);
}

// Python's len(range(size)[start:end:step]).
std::int64_t python_slice_length(std::int64_t size, std::int64_t start, std::int64_t end,
                                 std::int64_t step) {
  const auto clip = [size](std::int64_t v) {
    if (v < 0) v += size;
    return std::clamp<std::int64_t>(v, 0, size);
  };
  const std::int64_t first = clip(start), last = std::max(clip(end), first);
  return (last - first + step - 1) / step;
}

TEST(SpecFamiliesA, SliceBoundsFollowPython) {
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const auto r = run(ir::OpKind::Slice, {bound({7, 5})}, seed);
    if (!r) continue;  // an empty slice, refused while zero-sized dims are off
    const auto& a = r->attrs;
    const std::int64_t dim = a.get_int("dim");
    const std::int64_t d = dim < 0 ? dim + 2 : dim;
    const std::int64_t size = d == 0 ? 7 : 5;
    const std::int64_t want = python_slice_length(
        size, a.get_int("start", 0), a.get_int("end", INT64_MAX), a.get_int("step", 1));
    EXPECT_EQ(r->output_shapes.at(0).at(static_cast<std::size_t>(d)), want) << "seed " << seed;
  }
  expect_refused(ir::OpKind::Slice, {bound({})});
}

TEST(SpecFamiliesA, SqueezeDropsOnlySizeOneDims) {
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const auto r = run(ir::OpKind::Squeeze, {bound({1, 3, 1})}, seed);
    ASSERT_TRUE(r);
    const Shape& out = r->output_shapes.at(0);
    EXPECT_EQ(std::count(out.begin(), out.end(), 3), 1);
  }
}

TEST(SpecFamiliesA, ExpandRefusesANonSingletonChange) {
  expect_refused(ir::OpKind::Expand, {bound({3, 4})}, {{2, 3, 5}});
  const auto r = run(ir::OpKind::Expand, {bound({3, 1})}, 3, 16, true, {{2, 3, 6}});
  if (r) {
    EXPECT_EQ(r->output_shapes.at(0), (Shape{2, 3, 6}));
  }
}

TEST(SpecFamiliesA, ReductionsNeedANonEmptyDim) {
  // max/argmax over an empty dim is an error in PyTorch.
  RuleSolver solver;
  std::mt19937_64 rng(5);
  Bounds bounds;
  bounds.allow_zero_dims = true;
  for (int i = 0; i < 20; ++i) {
    const auto r = solver.run(spec(ir::OpKind::Max), {bound({0, 3})}, rng, bounds, 8, true);
    if (!r) continue;
    const std::int64_t dim = r->attrs.get_int("dim");
    EXPECT_TRUE(dim == 1 || dim == -1);
  }
}

TEST(SpecFamiliesA, CastOutputsTheAttributeDtype) {
  const auto r = run(ir::OpKind::Cast, {bound({2, 2})});
  ASSERT_TRUE(r);
  const auto out = spec(ir::OpKind::Cast).output_dtypes({Dtype::Float32}, r->attrs);
  EXPECT_EQ(out.at(0), r->attrs.get_dtype("dtype"));
}

}  // namespace
}  // namespace weft::gen
