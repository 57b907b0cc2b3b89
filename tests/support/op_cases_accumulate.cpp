// The op sweep's cases of group_norm and instance_norm, and of the index-driven writes:
// scatter_add, scatter_reduce (every reduction, with and without self), index_add, index_put,
// masked_fill, masked_scatter and copy. Indices repeat on purpose (several sources per target);
// amax/amin take pairwise distinct values so that finite differences see no tie (ties are
// convention cases), and prod's values stay away from zero except in its zero cases, where the
// gradient is PyTorch's exclusive product.
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "support/op_case_sweep.h"

namespace weft::testing::sweep {

namespace {

bool normalizations(Sweep& s, OpKind op) {
  auto& v = s.v;
  if (op == OpKind::GroupNorm) {
    s.add("two_groups_affine",
          {in("input", v.uniform({2, 4, 3}, -2.0, 2.0)), param("weight", v.uniform({4}, 0.5, 1.5)),
           param("bias", v.uniform({4}))},
          attrs().set("num_groups", 2));
    s.add("one_group_4d", {in("input", v.uniform({2, 3, 2, 2}, -2.0, 2.0))},
          attrs().set("num_groups", 1).set("eps", 1e-3));
    s.add("group_per_channel",
          {in("input", v.uniform({1, 3, 4}, -2.0, 2.0)), param("weight", v.uniform({3}, 0.5, 1.5)),
           param("bias", v.uniform({3}))},
          attrs().set("num_groups", 3));
    s.add("rank2", {in("input", v.uniform({3, 6}, -2.0, 2.0))}, attrs().set("num_groups", 2));
    s.add("rank5",
          {in("input", v.uniform({1, 4, 2, 2, 2}, -2.0, 2.0)),
           param("weight", v.uniform({4}, 0.5, 1.5)), param("bias", v.uniform({4}))},
          attrs().set("num_groups", 4));
    s.add("size0_batch", {in("input", v.uniform({0, 4, 3}))}, attrs().set("num_groups", 2));
    return true;
  }
  if (op == OpKind::InstanceNorm) {
    s.add("affine_3d", {in("input", v.uniform({2, 3, 4}, -2.0, 2.0)),
                        param("weight", v.uniform({3}, 0.5, 1.5)), param("bias", v.uniform({3}))});
    s.add("plain_4d", {in("input", v.uniform({2, 2, 3, 2}, -2.0, 2.0))}, attrs().set("eps", 1e-3));
    // Two positions normalize to about +-1 whatever the input, so the gradient is eps's effect
    // alone: a large eps keeps it above 16-bit rounding.
    s.add("two_spatial", {in("input", v.uniform({1, 3, 2}, -2.0, 2.0))}, attrs().set("eps", 0.5));
    s.add("rank5", {in("input", v.uniform({1, 2, 2, 2, 2}, -2.0, 2.0)),
                    param("weight", v.uniform({2}, 0.5, 1.5)), param("bias", v.uniform({2}))});
    s.add("size0_batch", {in("input", v.uniform({0, 3, 4}))});
    return true;
  }
  return false;
}

// Indices along `dim` of a tensor of `shape` that differ within every line along it (a
// repeated one would leave which write stays undefined), each below `bound`.
Tensor line_permutations(const Shape& shape, std::size_t dim, std::int64_t bound,
                         std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::int64_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < dim; ++i) outer *= shape[i];
  for (std::size_t i = dim + 1; i < shape.size(); ++i) inner *= shape[i];
  std::vector<std::int64_t> values(static_cast<std::size_t>(outer * shape[dim] * inner));
  std::vector<std::int64_t> order(static_cast<std::size_t>(bound));
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      for (std::int64_t k = 0; k < shape[dim]; ++k) {
        values[static_cast<std::size_t>((o * shape[dim] + k) * inner + i)] =
            order[static_cast<std::size_t>(k)];
      }
    }
  }
  return int64s(values, shape);
}

// scatter: self [3, 4] written along dim 0 or 1, a narrower src, rank 3 with a negative dim,
// rank 0, an empty index; no line names a position twice.
void plain_scatters(Sweep& s) {
  auto& v = s.v;
  s.add("dim0",
        {in("self", v.uniform({3, 4})), in("index", line_permutations({3, 4}, 0, 3, 1)),
         in("src", v.uniform({3, 4}))},
        attrs().set("dim", 0));
  s.add("dim1_narrow",
        {in("self", v.uniform({3, 5})), in("index", line_permutations({2, 3}, 1, 5, 2)),
         in("src", v.uniform({2, 3}))},
        attrs().set("dim", 1));
  s.add("rank3_dim-2",
        {in("self", v.uniform({2, 4, 3})), in("index", line_permutations({2, 2, 3}, 1, 4, 3)),
         in("src", v.uniform({2, 2, 3}))},
        attrs().set("dim", -2));
  s.add("rank0",
        {in("self", v.uniform({})), in("index", int64s({0}, {})), in("src", v.uniform({}))},
        attrs().set("dim", 0));
  s.add("size0_index",
        {in("self", v.uniform({2, 3})), in("index", v.ints({0, 3}, 0, 1)),
         in("src", v.uniform({0, 3}))},
        attrs().set("dim", 0));
  s.add_constant(
      "int64",
      {in("self", v.ints({3, 2}, -5, 5)), in("index", line_permutations({2, 2}, 0, 3, 4)),
       in("src", v.ints({2, 2}, -5, 5))},
      attrs().set("dim", 0));
}

// scatter_add and scatter_reduce: self [3, 4]; index and src [4, 4] along dim 0 or [3, 3]
// along dim 1, with repeated targets.
void scatters(Sweep& s, OpKind op) {
  auto& v = s.v;
  const bool reduce = op == OpKind::ScatterReduce;
  const auto add_reduction = [&](const std::string& how, bool include_self) {
    const bool extremum = how == "amax" || how == "amin";
    const bool product = how == "prod";
    const std::string what = how + (include_self ? "" : "_without_self");
    Attributes base = attrs().set("reduce", how).set("include_self", include_self);
    const auto values = [&](const Shape& self_shape, const Shape& src_shape) {
      if (extremum) return v.distinct2(self_shape, src_shape);
      if (product)
        return std::pair{v.magnitude(self_shape, 0.5, 1.5), v.magnitude(src_shape, 0.5, 1.5)};
      return std::pair{v.uniform(self_shape, -2.0, 2.0), v.uniform(src_shape, -2.0, 2.0)};
    };
    {
      auto [self, src] = values({3, 4}, {4, 4});
      s.add(what + "/dim0", {in("self", self), in("index", v.ints({4, 4}, 0, 2)), in("src", src)},
            Attributes(base).set("dim", 0));
    }
    {
      auto [self, src] = values({3, 4}, {3, 3});
      s.add(what + "/dim-1", {in("self", self), in("index", v.ints({3, 3}, 0, 3)), in("src", src)},
            Attributes(base).set("dim", -1));
    }
    if (product) {
      // One zero, and two zeros, scattered to one target (exclusive products), and a zero self.
      s.add(what + "/one_zero",
            {in("self", doubles({1.5, -0.75, 1.25}, {3})), in("index", int64s({0, 0, 1, 2}, {4})),
             in("src", doubles({0.0, 1.25, -1.5, 0.5}, {4}))},
            Attributes(base).set("dim", 0));
      add_convention(
          s, what + "/two_zeros",
          {in("self", doubles({1.5, -0.75, 0.0}, {3})), in("index", int64s({0, 0, 1, 2}, {4})),
           in("src", doubles({0.0, 0.0, -1.5, 0.5}, {4}))},
          Attributes(base).set("dim", 0));
    }
    if (extremum) {
      add_convention(s, what + "/ties",
                     {in("self", v.grid({2, 3}, -1, 1)), in("index", v.ints({3, 3}, 0, 1)),
                      in("src", v.grid({3, 3}, -1, 1))},
                     Attributes(base).set("dim", 0));
    }
  };
  if (!reduce) {
    s.add("dim0",
          {in("self", v.uniform({3, 4})), in("index", v.ints({4, 4}, 0, 2)),
           in("src", v.uniform({4, 4}))},
          attrs().set("dim", 0));
    s.add("dim1_narrow",
          {in("self", v.uniform({2, 5})), in("index", v.ints({2, 3}, 0, 4)),
           in("src", v.uniform({2, 3}))},
          attrs().set("dim", 1));
    s.add("rank3_dim-2",
          {in("self", v.uniform({2, 3, 2})), in("index", v.ints({2, 4, 1}, 0, 2)),
           in("src", v.uniform({2, 4, 1}))},
          attrs().set("dim", -2));
    s.add("rank0",
          {in("self", v.uniform({})), in("index", int64s({0}, {})), in("src", v.uniform({}))},
          attrs().set("dim", 0));
    s.add("size0_index",
          {in("self", v.uniform({2, 3})), in("index", v.ints({0, 3}, 0, 1)),
           in("src", v.uniform({0, 3}))},
          attrs().set("dim", 0));
    s.add_constant("int64",
                   {in("self", v.ints({3, 2}, -5, 5)), in("index", v.ints({4, 2}, 0, 2)),
                    in("src", v.ints({4, 2}, -5, 5))},
                   attrs().set("dim", 0));
    return;
  }
  for (const char* how : {"sum", "prod", "mean", "amax", "amin"}) {
    add_reduction(how, true);
    add_reduction(how, false);
  }
  // Integer means round down; integer products wrap.
  s.add_constant("mean_int64_floor",
                 {in("self", int64s({-5, 7, 8}, {3})), in("index", int64s({0, 0, 1}, {3})),
                  in("src", int64s({2, -4, 3}, {3}))},
                 attrs().set("dim", 0).set("reduce", std::string("mean")));
  s.add_constant("prod_int64",
                 {in("self", v.ints({3, 2}, -3, 3)), in("index", v.ints({4, 2}, 0, 2)),
                  in("src", v.ints({4, 2}, -3, 3))},
                 attrs().set("dim", 0).set("reduce", std::string("prod")));
  s.add_constant(
      "amax_int64_without_self",
      {in("self", v.ints({3, 2}, -3, 3)), in("index", v.ints({2, 2}, 0, 2)),
       in("src", v.ints({2, 2}, -3, 3))},
      attrs().set("dim", 0).set("reduce", std::string("amax")).set("include_self", false));
}

void index_adds(Sweep& s) {
  auto& v = s.v;
  s.add("dim0",
        {in("self", v.uniform({3, 2})), in("index", int64s({2, 0, 2, 1}, {4})),
         in("source", v.uniform({4, 2}))},
        attrs().set("dim", 0));
  s.add("dim1_alpha",
        {in("self", v.uniform({2, 3})), in("index", int64s({1, 1}, {2})),
         in("source", v.uniform({2, 2}))},
        attrs().set("dim", 1).set("alpha", 2.5));
  s.add("rank3_negative_alpha",
        {in("self", v.uniform({2, 2, 3})), in("index", int64s({0, 1, 1}, {3})),
         in("source", v.uniform({2, 2, 3}))},
        attrs().set("dim", -1).set("alpha", -0.5));
  s.add("size0_index",
        {in("self", v.uniform({3, 2})), in("index", v.ints({0}, 0, 1)),
         in("source", v.uniform({0, 2}))},
        attrs().set("dim", 0));
}

// index_put: distinct rows without accumulate (a repeated row is undefined), repeated ones with
// it; values of the indexed rows, of one row, or 0-d; negative indices count from the end.
void index_puts(Sweep& s) {
  auto& v = s.v;
  const auto put = [](bool accumulate) { return attrs().set("accumulate", accumulate); };
  s.add("rows",
        {in("self", v.uniform({4, 3})), in("index", int64s({2, 0}, {2})),
         in("values", v.uniform({2, 3}))},
        put(false));
  s.add("accumulate_repeated",
        {in("self", v.uniform({3, 2})), in("index", int64s({2, 0, 2, 1, 2}, {5})),
         in("values", v.uniform({5, 2}))},
        put(true));
  s.add("one_row_broadcast",
        {in("self", v.uniform({4, 2, 3})), in("index", int64s({3, 1}, {2})),
         in("values", v.uniform({2, 3}))},
        put(false));
  s.add("scalar_value_negative_index",
        {in("self", v.uniform({5})), in("index", int64s({-1, 0, -3}, {3})),
         in("values", v.uniform({}))},
        put(false));
  s.add("accumulate_broadcast",
        {in("self", v.uniform({3, 4})), in("index", int64s({1, 1}, {2})),
         in("values", v.uniform({4}))},
        put(true));
  s.add("size0_index",
        {in("self", v.uniform({3, 2})), in("index", v.ints({0}, 0, 1)),
         in("values", v.uniform({0, 2}))},
        put(true));
  s.add("size0_rows",
        {in("self", v.uniform({2, 0})), in("index", int64s({1}, {1})),
         in("values", v.uniform({1, 0}))},
        put(false));
  s.add_constant("int64_accumulate",
                 {in("self", v.ints({3, 2}, -5, 5)), in("index", int64s({0, 2, 0}, {3})),
                  in("values", v.ints({3, 2}, -5, 5))},
                 put(true));
  s.add_constant(
      "bool",
      {in("self", v.bools({4})), in("index", int64s({3, 1}, {2})), in("values", v.bools({2}))},
      put(false));
}

void masked_fills(Sweep& s) {
  auto& v = s.v;
  s.add("same_shape", {in("self", v.uniform({2, 3})), in("mask", v.bools({2, 3}))},
        attrs().set("value", 1.5));
  s.add("mask_broadcasts", {in("self", v.uniform({2, 3})), in("mask", v.bools({3}))},
        attrs().set("value", -1e4));
  s.add("self_broadcasts", {in("self", v.uniform({3})), in("mask", v.bools({2, 3}))},
        attrs().set("value", 0.0));
  s.add("rank0_mask",
        {in("self", v.uniform({2, 2})), in("mask", tensor(std::vector<bool>{true}).reshape({}))},
        attrs().set("value", -0.25));
  s.add_constant("int64_truncates",
                 {in("self", v.ints({2, 3}, -5, 5)), in("mask", v.bools({2, 3}))},
                 attrs().set("value", -2.75));
  s.add_constant("bool", {in("self", v.bools({4})), in("mask", v.bools({4}))},
                 attrs().set("value", 1.0));
  s.add("size0", {in("self", v.uniform({0, 3})), in("mask", v.bools({3}))},
        attrs().set("value", 2.0));
}

// Source holds exactly the masked count, or more (the rest is never read); self broadcasts to
// the mask. (Too small a source is PyTorch's error: an engine test.)
void masked_scatters(Sweep& s) {
  auto& v = s.v;
  const Tensor mask23 = tensor(std::vector<bool>{true, false, true, false, true, true}, {2, 3});
  s.add("same_shape",
        {in("self", v.uniform({2, 3})), in("mask", mask23), in("source", v.uniform({2, 3}))});
  s.add("exact_count",
        {in("self", v.uniform({2, 3})), in("mask", mask23), in("source", v.uniform({4}))});
  s.add("mask_broadcasts",
        {in("self", v.uniform({2, 3})), in("mask", v.bools({3})), in("source", v.uniform({3, 3}))});
  s.add("self_broadcasts",
        {in("self", v.uniform({3})), in("mask", mask23), in("source", v.uniform({2, 3}))});
  s.add("rank0", {in("self", v.uniform({})), in("mask", tensor(std::vector<bool>{true}, {})),
                  in("source", v.uniform({2}))});
  s.add("size0",
        {in("self", v.uniform({0, 3})), in("mask", v.bools({3})), in("source", v.uniform({0, 3}))});
  s.add_constant("int64", {in("self", v.ints({2, 3}, -5, 5)), in("mask", v.bools({2, 3})),
                           in("source", v.ints({2, 3}, -5, 5))});
  s.add_constant("bool",
                 {in("self", v.bools({4})), in("mask", v.bools({4})), in("source", v.bools({4}))});
}

// src broadcasts into self's shape and takes self's dtype (a float into an integer self
// truncates); self's own values never reach the result.
void copies(Sweep& s) {
  auto& v = s.v;
  s.add("same_shape", {in("self", v.uniform({2, 3})), in("src", v.uniform({2, 3}))});
  s.add("broadcast_row", {in("self", v.uniform({2, 1, 3})), in("src", v.uniform({3}))});
  s.add("broadcast_rank0", {in("self", v.uniform({2, 2})), in("src", v.uniform({}))});
  s.add("size0", {in("self", v.uniform({0, 3})), in("src", v.uniform({1, 3}))});
  s.add("float_self_int64_src", {in("self", v.uniform({2, 3})), in("src", v.ints({3}, -4, 4))});
  s.add_constant("int64_self_float_src",
                 {in("self", v.ints({2, 3}, -5, 5)), in("src", v.uniform({2, 3}, -3.0, 3.0))});
  s.add_constant("bool", {in("self", v.bools({2, 2})), in("src", v.bools({2}))});
}

}  // namespace

bool accumulate_cases(Sweep& s, OpKind op) {
  if (normalizations(s, op)) return true;
  switch (op) {
    case OpKind::ScatterAdd:
    case OpKind::ScatterReduce:
      scatters(s, op);
      return true;
    case OpKind::IndexAdd:
      index_adds(s);
      return true;
    case OpKind::Scatter:
      plain_scatters(s);
      return true;
    case OpKind::MaskedFill:
      masked_fills(s);
      return true;
    case OpKind::IndexPut:
      index_puts(s);
      return true;
    case OpKind::MaskedScatter:
      masked_scatters(s);
      return true;
    case OpKind::Copy:
      copies(s);
      return true;
    default:
      return false;
  }
}

}  // namespace weft::testing::sweep
