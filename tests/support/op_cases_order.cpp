// The op sweep's cases of the reductions without indices (amax, amin, any, all), the scans
// (cumsum, cumprod), the reordering ops (flip, roll, repeat, diagonal) and sorting (sort,
// argsort, topk: distinct values, and ties with stable=True). amax/amin take
// distinct values (a tie shares its gradient, a convention case below); cumprod's gradient is
// checked with zeros in the line, where the quotient formula fails.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "support/op_case_sweep.h"

namespace weft::testing::sweep {

namespace {

bool reductions(Sweep& s, OpKind op) {
  auto& v = s.v;
  switch (op) {
    case OpKind::Amax:
    case OpKind::Amin:
      s.add("all", {in("x", v.distinct({2, 3}))});
      s.add("dim1", {in("x", v.distinct({2, 3, 4}))}, attrs().set("dim", Ints{1}));
      s.add("dims_0_2_keepdim", {in("x", v.distinct({2, 3, 4}))},
            attrs().set("dim", Ints{0, -1}).set("keepdim", true));
      s.add("rank0", {in("x", v.distinct({}))});
      s.add("size0_other_dim", {in("x", v.uniform({0, 3}))}, attrs().set("dim", Ints{1}));
      s.add_constant("int64", {in("x", v.ints({3, 4}, -5, 5))}, attrs().set("dim", Ints{0}));
      // Ties share the gradient evenly (max(dim) gives it to one index).
      add_convention(s, "ties", {in("x", v.grid({3, 4}, -1, 1))}, attrs().set("dim", Ints{1}));
      return true;
    case OpKind::Any:
    case OpKind::All: {
      Tensor some_zeros = v.grid({3, 4}, -1, 1);
      s.add_constant("all_elements", {in("x", some_zeros)});
      s.add_constant("dim1", {in("x", some_zeros)}, attrs().set("dim", 1));
      s.add_constant("dim0_keepdim", {in("x", some_zeros)},
                     attrs().set("dim", 0).set("keepdim", true));
      s.add_constant("flat_keepdim", {in("x", some_zeros)}, attrs().set("keepdim", true));
      s.add_constant("size0", {in("x", v.uniform({0, 3}))}, attrs().set("dim", 0));
      s.add_constant("nan_is_true", {in("x", doubles({0.0, std::nan(""), 0.0, 1.0}, {2, 2}))},
                     attrs().set("dim", 1));
      s.add_constant("int64", {in("x", v.ints({3, 4}, 0, 1))}, attrs().set("dim", 1));
      s.add_constant("bool", {in("x", v.bools({3, 4}))});
      return true;
    }
    default:
      return false;
  }
}

bool scans(Sweep& s, OpKind op) {
  auto& v = s.v;
  if (op != OpKind::Cumsum && op != OpKind::Cumprod) return false;
  const bool product = op == OpKind::Cumprod;
  const double lo = product ? 0.5 : -2.0;
  const double hi = product ? 1.5 : 2.0;
  s.add("dim0", {in("x", v.uniform({4, 3}, lo, hi))}, attrs().set("dim", 0));
  s.add("dim-1", {in("x", v.uniform({2, 3, 5}, lo, hi))}, attrs().set("dim", -1));
  s.add("dim1_of_3d", {in("x", v.uniform({2, 4, 3}, lo, hi))}, attrs().set("dim", 1));
  s.add("rank0", {in("x", v.uniform({}, lo, hi))}, attrs().set("dim", 0));
  s.add("size0", {in("x", v.uniform({0, 3}, lo, hi))}, attrs().set("dim", 0));
  s.add_constant("int64", {in("x", v.ints({3, 4}, -3, 3))}, attrs().set("dim", 1));
  s.add_constant("bool", {in("x", v.bools({3, 4}))}, attrs().set("dim", 0));
  if (product) {
    // Zeros in a line: the gradient of the elements before, at and after the first zero.
    s.add("zeros", {in("x", doubles({1.5, 0.0, 2.0, 0.5, 0.0, 0.0, 1.25, 0.75}, {2, 4}))},
          attrs().set("dim", 1));
  }
  return true;
}

bool reorder(Sweep& s, OpKind op) {
  auto& v = s.v;
  switch (op) {
    case OpKind::Flip:
      s.add("dim0", {in("x", v.uniform({3, 4}))}, attrs().set("dims", Ints{0}));
      s.add("dims_0_2", {in("x", v.uniform({2, 3, 4}))}, attrs().set("dims", Ints{0, -1}));
      s.add("all", {in("x", v.uniform({2, 3, 2}))}, attrs().set("dims", Ints{2, 0, 1}));
      s.add("size0", {in("x", v.uniform({0, 3}))}, attrs().set("dims", Ints{1}));
      s.add_constant("int64", {in("x", v.ints({3, 4}, -5, 5))}, attrs().set("dims", Ints{1}));
      return true;
    case OpKind::Roll:
      s.add("one_dim", {in("x", v.uniform({3, 4}))},
            attrs().set("shifts", Ints{1}).set("dims", Ints{1}));
      s.add("two_dims_negative", {in("x", v.uniform({2, 3, 4}))},
            attrs().set("shifts", Ints{-2, 5}).set("dims", Ints{0, -1}));
      s.add("same_dim_twice", {in("x", v.uniform({5, 2}))},
            attrs().set("shifts", Ints{2, 4}).set("dims", Ints{0, 0}));
      s.add("flattened", {in("x", v.uniform({3, 4}))}, attrs().set("shifts", Ints{5}));
      s.add("rank0", {in("x", v.uniform({}))}, attrs().set("shifts", Ints{3}));
      s.add("size0", {in("x", v.uniform({0, 3}))},
            attrs().set("shifts", Ints{1}).set("dims", Ints{1}));
      s.add_constant("int64", {in("x", v.ints({3, 4}, -5, 5))},
                     attrs().set("shifts", Ints{-1}).set("dims", Ints{0}));
      return true;
    case OpKind::Repeat:
      s.add("same_rank", {in("x", v.uniform({2, 3}))}, attrs().set("repeats", Ints{2, 3}));
      s.add("new_leading_dims", {in("x", v.uniform({3}))}, attrs().set("repeats", Ints{2, 1, 2}));
      s.add("ones", {in("x", v.uniform({2, 3}))}, attrs().set("repeats", Ints{1, 1}));
      s.add("zero_count", {in("x", v.uniform({2, 3}))}, attrs().set("repeats", Ints{0, 2}));
      s.add("rank0", {in("x", v.uniform({}))}, attrs().set("repeats", Ints{3}));
      s.add_constant("bool", {in("x", v.bools({2, 2}))}, attrs().set("repeats", Ints{2, 1}));
      return true;
    case OpKind::PixelShuffle:
      s.add("r2", {in("x", v.uniform({1, 8, 2, 3}))}, attrs().set("upscale_factor", 2));
      s.add("r3_rank3", {in("x", v.uniform({9, 2, 1}))}, attrs().set("upscale_factor", 3));
      s.add("r1", {in("x", v.uniform({2, 3, 2, 2}))}, attrs().set("upscale_factor", 1));
      s.add("rank5", {in("x", v.uniform({2, 1, 4, 1, 2}))}, attrs().set("upscale_factor", 2));
      s.add("size0_batch", {in("x", v.uniform({0, 4, 2, 2}))}, attrs().set("upscale_factor", 2));
      s.add_constant("int64", {in("x", v.ints({1, 4, 2, 2}, -5, 5))},
                     attrs().set("upscale_factor", 2));
      return true;
    case OpKind::PixelUnshuffle:
      s.add("r2", {in("x", v.uniform({1, 2, 4, 6}))}, attrs().set("downscale_factor", 2));
      s.add("r3_rank3", {in("x", v.uniform({1, 3, 6}))}, attrs().set("downscale_factor", 3));
      s.add("rank5", {in("x", v.uniform({2, 1, 2, 2, 4}))}, attrs().set("downscale_factor", 2));
      s.add("size0_batch", {in("x", v.uniform({0, 1, 2, 2}))}, attrs().set("downscale_factor", 2));
      s.add_constant("int64", {in("x", v.ints({1, 1, 4, 2}, -5, 5))},
                     attrs().set("downscale_factor", 2));
      return true;
    case OpKind::Diagonal:
      s.add("main", {in("x", v.uniform({3, 4}))});
      s.add("above", {in("x", v.uniform({3, 4}))}, attrs().set("offset", 1));
      s.add("below", {in("x", v.uniform({4, 3}))}, attrs().set("offset", -2));
      s.add("past_the_edge", {in("x", v.uniform({3, 4}))}, attrs().set("offset", 5));
      s.add("dims_2_0", {in("x", v.uniform({3, 2, 4}))},
            attrs().set("dim1", 2).set("dim2", 0).set("offset", -1));
      s.add("negative_dims", {in("x", v.uniform({2, 3, 3}))},
            attrs().set("dim1", -1).set("dim2", -2));
      s.add_constant("int64", {in("x", v.ints({3, 3}, -5, 5))});
      return true;
    default:
      return false;
  }
}

// int64 values without ties: 37 * i mod 101 over the elements, shifted by 50.
Tensor distinct_ints(IntList shape) {
  std::int64_t count = 1;
  for (std::int64_t size : shape) count *= size;
  std::vector<std::int64_t> values;
  for (std::int64_t i = 0; i < count; ++i) values.push_back(37 * i % 101 - 50);
  return tensor(values, shape);
}

bool sorting(Sweep& s, OpKind op) {
  auto& v = s.v;
  switch (op) {
    case OpKind::Sort:
    case OpKind::Argsort: {
      const auto add = [&](const std::string& what, const std::vector<Leaf>& leaves, Attributes a) {
        if (op == OpKind::Argsort) {
          s.add_constant(what, leaves, std::move(a));
        } else {
          s.add(what, leaves, std::move(a));
        }
      };
      add("last_dim", {in("x", v.distinct({3, 4}))}, attrs());
      add("dim0_descending", {in("x", v.distinct({4, 3}))},
          attrs().set("dim", 0).set("descending", true));
      add("dim1_of_3d_stable", {in("x", v.distinct({2, 4, 3}))},
          attrs().set("dim", 1).set("stable", true));
      add("rank0", {in("x", v.distinct({}))}, attrs().set("dim", 0));
      add("size0", {in("x", v.uniform({2, 0}))}, attrs());
      add("size1_line", {in("x", v.distinct({3, 1}))}, attrs().set("dim", 1));
      add("size0_after_dim", {in("x", v.uniform({3, 0}))}, attrs().set("dim", 0));
      s.add_constant("int64", {in("x", distinct_ints({3, 5}))}, attrs().set("descending", true));
      // Ties keep their order only with stable=True (without it PyTorch promises none).
      const auto ties = [&](const std::string& what, Attributes a) {
        if (op == OpKind::Argsort) {
          s.add_constant(what, {in("x", v.grid({3, 6}, -1, 1))}, std::move(a));
        } else {
          add_convention(s, what, {in("x", v.grid({3, 6}, -1, 1))}, std::move(a));
        }
      };
      ties("ties_stable", attrs().set("stable", true));
      ties("ties_stable_descending", attrs().set("stable", true).set("descending", true));
      return true;
    }
    case OpKind::Topk:
      s.add("largest_2", {in("x", v.distinct({3, 5}))}, attrs().set("k", 2));
      s.add("smallest_dim0", {in("x", v.distinct({4, 3}))},
            attrs().set("k", 3).set("dim", 0).set("largest", false));
      s.add("all_of_the_line", {in("x", v.distinct({2, 3, 4}))}, attrs().set("k", 3).set("dim", 1));
      s.add("k0", {in("x", v.distinct({3, 4}))}, attrs().set("k", 0));
      s.add("size0_after_dim", {in("x", v.uniform({3, 0}))}, attrs().set("k", 2).set("dim", 0));
      s.add("rank0", {in("x", v.distinct({}))}, attrs().set("k", 1));
      s.add("rank0_k0", {in("x", v.distinct({}))}, attrs().set("k", 0));
      s.add_constant("int64", {in("x", distinct_ints({3, 6}))}, attrs().set("k", 4));
      return true;
    default:
      return false;
  }
}

}  // namespace

bool order_cases(Sweep& s, OpKind op) {
  return reductions(s, op) || scans(s, op) || reorder(s, op) || sorting(s, op);
}

}  // namespace weft::testing::sweep
