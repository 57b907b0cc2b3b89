// Negative checks of the conv, pool, norm, join, index and interpolate specs: their rules
// reject bindings and attributes that the engine (and PyTorch) refuse, in the sampler and in
// every Z3 solution. spec_test.cpp checks the positive side against the engine.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "spec/builder.h"
#include "spec/solve.h"
#include "weft/gen/spec.h"

namespace weft::gen {
namespace {

using K = ir::OpKind;
using Pins = std::map<std::string, std::int64_t>;

InputBinding bound(std::vector<std::int64_t> shape) {
  InputBinding b;
  b.rank = static_cast<int>(shape.size());
  b.shape = std::move(shape);
  return b;
}

InputBinding fresh(int rank, bool present = true) {
  InputBinding b;
  b.rank = rank;
  b.present = present;
  return b;
}

// Concrete choices fixed ahead of the rule (Draws memoizes by name), e.g. ceil_mode = 0.
void fix(Draws& draws, const Pins& choices) {
  for (const auto& [name, value] : choices) draws.integer(name, value, value);
}

// Runs the sampler with some unknowns pinned; true when the rule accepts.
bool sampler_accepts(K op, const std::vector<InputBinding>& inputs, const Pins& pins,
                     std::uint64_t seed, const Pins& choices = {}) {
  std::mt19937_64 rng(seed);
  Draws draws(rng);
  fix(draws, choices);
  Sampler sampler(spec(op), inputs, draws, Bounds{}, &pins);
  try {
    spec(op).sample(sampler);
  } catch (const Rejected&) {
    return false;
  }
  return true;
}

// Solves the encoded rule with some unknowns pinned: sat, unsat (or a concrete rejection).
z3::check_result z3_check(K op, const std::vector<InputBinding>& inputs, const Pins& pins,
                          std::uint64_t seed, const Pins& choices = {}) {
  z3::context ctx;
  std::mt19937_64 rng(seed);
  Draws draws(rng);
  fix(draws, choices);
  Encoder encoder(ctx, spec(op), inputs, draws, Bounds{});
  try {
    spec(op).encode(encoder);
  } catch (const Rejected&) {
    return z3::unsat;
  }
  z3::solver solver(ctx);
  for (const z3::expr& c : encoder.constraints()) solver.add(c);
  for (const auto& [name, value] : pins) {
    const auto found = encoder.unknowns().find(name);
    if (found == encoder.unknowns().end()) {
      ADD_FAILURE() << "no unknown named " << name;
      return z3::unknown;
    }
    solver.add(found->second == ctx.int_val(static_cast<int64_t>(value)));
  }
  return solver.check();
}

// Every result of `runs` solver runs (sampler first, then Z3 when samples = 0).
std::vector<RuleResult> results(K op, const std::vector<InputBinding>& inputs, int runs,
                                int samples) {
  RuleSolver solver;
  std::mt19937_64 rng(5);
  std::vector<RuleResult> out;
  for (int i = 0; i < runs; ++i) {
    if (auto r = solver.run(spec(op), inputs, rng, Bounds{}, samples, true)) out.push_back(*r);
  }
  EXPECT_EQ(solver.stats().disagreements, 0);
  return out;
}

TEST(SpecFamiliesB, ConvGroupsMustDivideTheInputChannels) {
  const std::vector<InputBinding> in{bound({2, 3, 6, 6}), fresh(4), fresh(1, false)};
  EXPECT_FALSE(sampler_accepts(K::Conv2d, in, {{"groups", 2}}, 1));
  EXPECT_TRUE(sampler_accepts(K::Conv2d, in, {{"groups", 3}}, 1) ||
              sampler_accepts(K::Conv2d, in, {{"groups", 3}}, 2));
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    EXPECT_EQ(z3_check(K::Conv2d, in, {{"groups", 2}}, seed), z3::unsat) << seed;
  }
  for (int samples : {8, 0}) {
    const auto got = results(K::Conv2d, in, 30, samples);
    EXPECT_FALSE(got.empty());
    for (const RuleResult& r : got) {
      const std::int64_t groups = r.attrs.get_int("groups", 1);
      EXPECT_TRUE(groups == 1 || groups == 3) << groups;
      EXPECT_EQ(r.input_shapes[1][1] * groups, 3);  // weight [out, C/groups, kh, kw]
    }
  }
}

TEST(SpecFamiliesB, ConvKernelMustFitThePaddedInput) {
  const std::vector<InputBinding> in{bound({1, 2, 3}), fresh(3), fresh(1, false)};
  // Padded length 3 + 2*1 = 5 < kernel 6.
  const Pins too_big{{"kernel.0", 6}, {"padding.0", 1}, {"dilation.0", 1}};
  EXPECT_FALSE(sampler_accepts(K::Conv1d, in, too_big, 3));
  // Dilation 2 spans 2*(3-1)+1 = 5 > 3 + 0.
  EXPECT_FALSE(
      sampler_accepts(K::Conv1d, in, {{"kernel.0", 3}, {"padding.0", 0}, {"dilation.0", 2}}, 3));
  EXPECT_TRUE(
      sampler_accepts(K::Conv1d, in, {{"kernel.0", 5}, {"padding.0", 1}, {"dilation.0", 1}}, 3));
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    EXPECT_EQ(z3_check(K::Conv1d, in, too_big, seed), z3::unsat) << seed;
  }
}

TEST(SpecFamiliesB, ConvTransposeOutputPaddingStaysBelowTheStrideOrTheDilation) {
  const std::vector<InputBinding> in{bound({1, 2, 4}), fresh(3), fresh(1, false)};
  // output_padding 2 with stride 2 and dilation 1: PyTorch refuses it.
  const Pins refused{{"stride.0", 2}, {"output_padding.0", 2}, {"dilation.0", 1}};
  EXPECT_FALSE(sampler_accepts(K::ConvTranspose1d, in, refused, 3));
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    EXPECT_EQ(z3_check(K::ConvTranspose1d, in, refused, seed), z3::unsat) << seed;
  }
  for (int samples : {8, 0}) {
    const auto got = results(K::ConvTranspose1d, in, 30, samples);
    EXPECT_FALSE(got.empty());
    for (const RuleResult& r : got) {
      const auto stride = r.attrs.get_ints("stride");
      const auto output_padding = r.attrs.get_ints("output_padding");
      const auto dilation = r.attrs.get_ints("dilation");
      const auto padding = r.attrs.get_ints("padding");
      EXPECT_TRUE(output_padding[0] < stride[0] || output_padding[0] < dilation[0]);
      EXPECT_EQ(r.input_shapes[1][0], 2);  // weight [in, out/groups, k]
      const std::int64_t k = r.input_shapes[1][2];
      EXPECT_EQ(r.output_shapes[0][2],
                3 * stride[0] - 2 * padding[0] + dilation[0] * (k - 1) + output_padding[0] + 1);
    }
  }
}

TEST(SpecFamiliesB, ConvRejectsInputsOfTheWrongRank) {
  EXPECT_TRUE(results(K::Conv2d, {bound({4, 4}), fresh(4), fresh(1)}, 5, 0).empty());
  EXPECT_TRUE(results(K::Conv1d, {bound({1, 1, 4, 4}), fresh(3), fresh(1)}, 5, 0).empty());
}

TEST(SpecFamiliesB, PoolKernelMustFitThePaddedInputAndPaddingHalfTheKernel) {
  const std::vector<InputBinding> in{bound({1, 2, 3})};
  // Without ceil_mode, kernel 8 over length 3 needs padding 3 or 4 (at most 8/2). (With
  // ceil_mode a large stride lets a window start inside and overhang, as in PyTorch.)
  const Pins floor_mode{{"ceil_mode", 0}};
  EXPECT_FALSE(
      sampler_accepts(K::MaxPool1d, in, {{"kernel_size.0", 8}, {"padding.0", 0}}, 1, floor_mode));
  EXPECT_FALSE(
      sampler_accepts(K::AvgPool1d, in, {{"kernel_size.0", 8}, {"padding.0", 2}}, 1, floor_mode));
  EXPECT_TRUE(sampler_accepts(
      K::AvgPool1d, in, {{"kernel_size.0", 8}, {"padding.0", 3}, {"stride.0", 1}}, 1, floor_mode));
  EXPECT_FALSE(sampler_accepts(K::MaxPool1d, in, {{"kernel_size.0", 3}, {"padding.0", 2}}, 1));
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    EXPECT_EQ(
        z3_check(K::MaxPool1d, in, {{"kernel_size.0", 8}, {"padding.0", 0}}, seed, floor_mode),
        z3::unsat);
    EXPECT_EQ(z3_check(K::AvgPool1d, in, {{"kernel_size.0", 5}, {"padding.0", 3}}, seed),
              z3::unsat);
  }
  for (int samples : {8, 0}) {
    for (const RuleResult& r : results(K::MaxPool2d, {bound({1, 3, 5})}, 30, samples)) {
      const auto k = r.attrs.get_ints("kernel_size");
      const auto p = r.attrs.get_ints("padding");
      for (std::size_t i = 0; i < p.size(); ++i) EXPECT_LE(2 * p[i], k[k.size() == 1 ? 0 : i]);
    }
  }
}

TEST(SpecFamiliesB, BatchNormTrainingNeedsMoreThanOneValuePerChannel) {
  // Without running statistics the op must train, and [1, 4] has one value per channel.
  const std::vector<InputBinding> in{bound({1, 4}), fresh(1), fresh(1), fresh(1, false),
                                     fresh(1, false)};
  EXPECT_TRUE(results(K::BatchNorm, in, 5, 8).empty());
  EXPECT_TRUE(results(K::BatchNorm, in, 5, 0).empty());
  // With them it may evaluate, and then it must.
  const std::vector<InputBinding> with_stats{bound({1, 4}), fresh(1), fresh(1), fresh(1), fresh(1)};
  const auto got = results(K::BatchNorm, with_stats, 10, 8);
  EXPECT_FALSE(got.empty());
  for (const RuleResult& r : got) EXPECT_FALSE(r.attrs.get_bool("training", true));
}

TEST(SpecFamiliesB, PadRespectsReflectAndNegativePadLimits) {
  for (int samples : {8, 0}) {
    const auto got = results(K::Pad, {bound({2, 3})}, 60, samples);
    EXPECT_FALSE(got.empty());
    const std::vector<std::int64_t> shape{2, 3};
    for (const RuleResult& r : got) {
      const auto pads = r.attrs.get_ints("pad");
      const std::string mode = r.attrs.get_string("mode", "constant");
      for (std::size_t j = 0; j < pads.size() / 2; ++j) {
        const std::int64_t size = shape[shape.size() - 1 - j];
        const std::int64_t l = pads[2 * j], right = pads[2 * j + 1];
        if (mode == "reflect") {
          EXPECT_LT(l, size);
          EXPECT_LT(right, size);
        }
        if (mode != "constant") {
          EXPECT_GE(l, 0);
          EXPECT_GE(right, 0);
          // Non-constant modes pad 1..3 trailing dims of a (k+1)- or (k+2)-d input.
          EXPECT_EQ(pads.size(), 2u);
        }
        EXPECT_GE(size + l, 1);
        EXPECT_GE(size + l + right, 1);
      }
    }
  }
}

TEST(SpecFamiliesB, GatherIndexNoLargerThanTheInputOutsideDim) {
  // Index [3, 3] on [2, 3] only fits along dim 0.
  const std::vector<InputBinding> in{bound({2, 3}), bound({3, 3})};
  for (int samples : {8, 0}) {
    const auto got = results(K::Gather, in, 30, samples);
    EXPECT_FALSE(got.empty());
    for (const RuleResult& r : got) {
      const std::int64_t dim = r.attrs.get_int("dim");
      EXPECT_TRUE(dim == 0 || dim == -2) << dim;
    }
  }
  EXPECT_TRUE(results(K::Gather, {bound({2, 3}), bound({3, 4})}, 5, 0).empty());
}

TEST(SpecFamiliesB, SplitAndChunkPiecesCoverTheDim) {
  for (K op : {K::Split, K::Chunk}) {
    for (int samples : {8, 0}) {
      for (const RuleResult& r : results(op, {bound({7, 5})}, 30, samples)) {
        const std::int64_t dim = r.attrs.get_int("dim", 0);
        const std::size_t d = static_cast<std::size_t>(dim < 0 ? dim + 2 : dim);
        std::int64_t total = 0;
        for (const auto& piece : r.output_shapes) total += piece[d];
        EXPECT_EQ(total, d == 0 ? 7 : 5);
      }
    }
  }
}

TEST(SpecFamiliesB, InterpolateNeedsASpatialInput) {
  EXPECT_TRUE(results(K::Interpolate, {bound({4, 4})}, 5, 0).empty());
  for (const RuleResult& r : results(K::Interpolate, {bound({1, 2, 3, 3, 3})}, 20, 8)) {
    EXPECT_EQ(r.attrs.get_string("mode", "nearest"), "nearest");  // 5-d: nearest only
    EXPECT_FALSE(r.attrs.has("align_corners"));
  }
}

}  // namespace
}  // namespace weft::gen
