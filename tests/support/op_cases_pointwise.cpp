// The op sweep's cases of the pointwise ops added after the first Core ATen round: the
// two-argument math (logaddexp2, xlogy, copysign, fmax, fmin), the three-tensor ops (lerp,
// addcmul, addcdiv), logit, nan_to_num, glu and prelu. Broadcasting, rank 0 and size 0 cases,
// integer promotion where PyTorch promotes, and each op's conventions (xlogy at x = 0, copysign
// of -0.0, fmax with NaN, logit at its clamp, nan_to_num's defaults) as convention cases, whose
// gradient only the torch sweep judges. Ties of fmax/fmin are left out: LibTorch 1.13 gives a
// tie's gradient to self, 2.x splits it (the engine follows 2.x; tests/engine checks it).
#include <cmath>
#include <string>

#include "support/op_case_sweep.h"

namespace weft::testing::sweep {

namespace {

bool two_argument(Sweep& s, OpKind op) {
  auto& v = s.v;
  switch (op) {
    case OpKind::Logaddexp2:
    case OpKind::Xlogy:
    case OpKind::Copysign:
    case OpKind::Fmax:
    case OpKind::Fmin:
      break;
    default:
      return false;
  }
  // Values each op is smooth at: xlogy's y positive, copysign's y away from 0, fmax's
  // operands pairwise distinct.
  auto operands = [&](const Shape& a, const Shape& b) -> std::vector<Leaf> {
    if (op == OpKind::Fmax || op == OpKind::Fmin) {
      auto [x, y] = v.distinct2(a, b);
      return {in("x", x), in("other", y)};
    }
    if (op == OpKind::Xlogy)
      return {in("x", v.uniform(a, -2.0, 2.0)), in("other", v.uniform(b, 0.2, 3.0))};
    if (op == OpKind::Copysign)
      return {in("x", v.magnitude(a, 0.2, 2.0)), in("other", v.magnitude(b, 0.2, 2.0))};
    return {in("x", v.uniform(a, -3.0, 3.0)), in("other", v.uniform(b, -3.0, 3.0))};
  };
  s.add("2x3", operands({2, 3}, {2, 3}));
  s.add("broadcast_2x1x3_4x1", operands({2, 1, 3}, {4, 1}));
  s.add("broadcast_3_2x3", operands({3}, {2, 3}));
  s.add("rank0_other", operands({2, 3}, {}));
  s.add("rank0_both", operands({}, {}));
  s.add("size0", operands({0, 3}, {1, 3}));
  switch (op) {
    case OpKind::Logaddexp2:
      s.add("far_apart", {in("x", doubles({-60.0, 50.0, 0.0}, {3})),
                          in("other", doubles({0.0, -50.0, 100.0}, {3}))});
      s.add("equal", {in("x", doubles({1.0, -2.0}, {2})), in("other", doubles({1.0, -2.0}, {2}))});
      break;
    case OpKind::Xlogy:
      // 0 * log(y) is 0 for every y but NaN (y = 0 included); x's gradient there is 0.
      add_convention(s, "zero_x",
                     {in("x", doubles({0.0, 0.0, 0.0, 1.5}, {4})),
                      in("other", doubles({0.0, 2.0, INFINITY, 0.0}, {4}))});
      s.add("int64_promotes",
            {in("x", v.ints({2, 3}, -3, 3)), in("other", v.uniform({3}, 0.5, 2.0))});
      s.add_constant("int64_both",
                     {in("x", v.ints({2, 3}, -3, 3)), in("other", v.ints({3}, 1, 4))});
      break;
    case OpKind::Copysign:
      add_convention(s, "signed_zeros",
                     {in("x", doubles({0.0, -0.0, 1.5, -2.0}, {4})),
                      in("other", doubles({-0.0, 0.0, -0.0, 0.0}, {4}))});
      s.add_constant("int64",
                     {in("x", v.ints({2, 3}, -3, 3)), in("other", v.nonzero_ints({3}, 3))});
      break;
    case OpKind::Fmax:
    case OpKind::Fmin:
      // A NaN loses to a number; two NaNs give NaN.
      add_convention(s, "nan",
                     {in("x", doubles({NAN, 1.0, NAN, 0.5}, {4})),
                      in("other", doubles({2.0, NAN, NAN, -0.5}, {4}))});
      s.add_constant("int64", {in("x", v.ints({2, 3}, -5, 5)), in("other", v.ints({3}, -5, 5))});
      s.add_constant("bool", {in("x", v.bools({2, 3})), in("other", v.bools({2, 3}))});
      break;
    default:
      break;
  }
  return true;
}

bool three_tensors(Sweep& s, OpKind op) {
  auto& v = s.v;
  if (op != OpKind::Lerp && op != OpKind::Addcmul && op != OpKind::Addcdiv) return false;
  const bool lerp = op == OpKind::Lerp;
  const char* second = lerp ? "end" : "tensor1";
  const char* third = lerp ? "weight" : "tensor2";
  auto leaves = [&](const Shape& a, const Shape& b, const Shape& c) -> std::vector<Leaf> {
    // addcdiv's divisor away from 0; lerp's weight on both sides of 0.5 and beyond [0, 1].
    const Tensor last = op == OpKind::Addcdiv ? v.magnitude(c, 0.5, 2.0) : v.uniform(c, -1.0, 2.0);
    return {in("x", v.uniform(a)), in(second, v.uniform(b, -2.0, 2.0)), in(third, last)};
  };
  const Attributes value = lerp ? attrs() : attrs().set("value", -0.75);
  s.add("2x3", leaves({2, 3}, {2, 3}, {2, 3}), value);
  s.add("broadcast_3_2x1_1x3", leaves({3}, {2, 1}, {1, 3}), value);
  s.add("broadcast_2x1x3_4x1_rank0", leaves({2, 1, 3}, {4, 1}, {}), value);
  s.add("rank0", leaves({}, {}, {}), value);
  s.add("size0", leaves({0, 3}, {1, 3}, {3}), value);
  if (lerp) {
    // Weights 0 and 1 give self and end exactly (two formulas, switched at |w| = 0.5).
    add_convention(s, "weights_0_half_1",
                   {in("x", doubles({1.5, -2.0, 3.0, 0.25}, {4})),
                    in("end", doubles({-0.5, 4.0, 1.0, 8.0}, {4})),
                    in("weight", doubles({0.0, 0.5, 1.0, -0.5}, {4}))});
  } else {
    s.add("default_value", leaves({2, 3}, {3}, {2, 1}));
    s.add("value_2", leaves({2, 3}, {2, 3}, {2, 3}), attrs().set("value", 2.0));
  }
  if (op == OpKind::Addcmul) {
    s.add_constant("int64",
                   {in("x", v.ints({2, 3}, -5, 5)), in("tensor1", v.ints({3}, -3, 3)),
                    in("tensor2", v.ints({2, 3}, -3, 3))},
                   attrs().set("value", 2.0));
  }
  return true;
}

bool unary_pointwise(Sweep& s, OpKind op) {
  auto& v = s.v;
  switch (op) {
    case OpKind::Logit:
      s.add("2x3", {in("x", v.uniform({2, 3}, 0.05, 0.95))});
      s.add("eps", {in("x", v.uniform({2, 3}, 0.15, 0.85))}, attrs().set("eps", 0.1));
      s.add("rank0", {in("x", v.uniform({}, 0.1, 0.9))});
      s.add("size0", {in("x", v.uniform({0, 3}, 0.1, 0.9))});
      // Without eps: -inf at 0, inf at 1, NaN outside [0, 1]; with eps clamped (gradient 0).
      add_convention(s, "edges", {in("x", doubles({0.0, 1.0, 1.5, -0.5, 0.5}, {5}))});
      add_convention(s, "clamped", {in("x", doubles({0.0, 0.0625, 0.125, 0.875, 1.25}, {5}))},
                     attrs().set("eps", 0.125));
      return true;
    case OpKind::NanToNum:
      s.add("finite", {in("x", v.uniform({2, 3}))});
      s.add("rank0", {in("x", v.uniform({}))});
      s.add("size0", {in("x", v.uniform({0, 3}))});
      {
        // inf becomes the float type's own largest value: float32 and float64 differ.
        OpCase& defaults =
            s.add("defaults", {in("x", doubles({NAN, INFINITY, -INFINITY, 1.5}, {4}))});
        defaults.fd_check = false;
        defaults.same_across_float_types = false;
      }
      add_convention(s, "replacements", {in("x", doubles({NAN, INFINITY, -INFINITY, -2.0}, {4}))},
                     attrs().set("nan", 0.5).set("posinf", 100.0).set("neginf", -7.0));
      s.add_constant("int64", {in("x", v.ints({2, 3}, -5, 5))}, attrs().set("nan", 1.0));
      return true;
    case OpKind::Glu:
      s.add("last_dim", {in("x", v.uniform({2, 4}, -2.0, 2.0))});
      s.add("dim1", {in("x", v.uniform({2, 6, 3}, -2.0, 2.0))}, attrs().set("dim", 1));
      s.add("negative_dim", {in("x", v.uniform({4, 3}, -2.0, 2.0))}, attrs().set("dim", -2));
      s.add("size0", {in("x", v.uniform({0, 2}))});
      return true;
    case OpKind::Prelu: {
      // Away from the kink at 0, where the input's gradient switches between 1 and the slope.
      s.add("one_slope",
            {in("x", v.magnitude({2, 3, 4}, 0.1, 2.0)), param("weight", v.uniform({1}))});
      s.add("per_channel", {in("x", v.magnitude({2, 3, 4}, 0.1, 2.0)),
                            param("weight", v.uniform({3}, -0.5, 0.5))});
      s.add("matrix", {in("x", v.magnitude({4, 5}, 0.1, 2.0)), param("weight", v.uniform({5}))});
      s.add("vector", {in("x", v.magnitude({4}, 0.1, 2.0)), param("weight", v.uniform({1}))});
      s.add("rank0", {in("x", v.magnitude({}, 0.1, 2.0)), param("weight", v.uniform({1}))});
      s.add("size0", {in("x", v.uniform({0, 3})), param("weight", v.uniform({3}))});
      add_convention(
          s, "at_zero",
          {in("x", doubles({0.0, -1.0, 2.0, 0.0}, {4})), param("weight", doubles({0.25}, {1}))});
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

bool pointwise_cases(Sweep& s, OpKind op) {
  return two_argument(s, op) || three_tensors(s, op) || unary_pointwise(s, op);
}

}  // namespace weft::testing::sweep
