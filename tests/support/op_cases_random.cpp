// The op sweep's cases of the random draws (ops/random.cpp): each dropout in evaluation mode, with
// p = 0 and p = 1 (no draw: compared with LibTorch by value), and drawing (p strictly inside, of
// every rank they take, an empty input); rrelu in evaluation, with one slope (lower == upper: no
// draw) and drawing; the samplers over floating (and, for randint_like, integer) inputs of rank 0,
// 2 and an empty one; bernoulli with probabilities that are 0 and 1 only; randperm along each dim
// and of an empty dim. A drawing case's values are the engine's own (the sweeps against LibTorch
// check its shape, dtype, support and repeatability), its gradients the engine's with the draws
// fixed (finite differences hold).
#include <string>

#include "support/op_case_sweep.h"

namespace weft::testing::sweep {

namespace {

void dropouts(Sweep& s, OpKind op) {
  auto& v = s.v;
  const bool feature = op == OpKind::FeatureDropout || op == OpKind::FeatureAlphaDropout;
  const Shape shape = feature ? Shape{2, 3, 4} : Shape{2, 3};
  s.add("eval", {in("x", v.uniform(shape))}, attrs().set("training", false).set("p", 0.4));
  s.add("train_p0", {in("x", v.uniform(shape))}, attrs().set("training", true).set("p", 0.0));
  s.add("train_p1", {in("x", v.uniform(shape))}, attrs().set("training", true).set("p", 1.0));
  s.add("train", {in("x", v.uniform(shape))},
        attrs().set("training", true).set("p", 0.3).set("seed", 7));
  if (feature) {
    s.add("train_4d", {in("x", v.uniform({2, 3, 2, 2}))},
          attrs().set("training", true).set("p", 0.5).set("seed", 11));
    s.add("train_5d", {in("x", v.uniform({1, 4, 2, 1, 2}))},
          attrs().set("training", true).set("p", 0.25).set("seed", 3));
    s.add("train_size0", {in("x", v.uniform({0, 3, 2}))},
          attrs().set("training", true).set("p", 0.5));
  } else {
    s.add("rank0_eval", {in("x", v.uniform({}))}, attrs().set("training", false));
    s.add("train_rank0", {in("x", v.uniform({}))},
          attrs().set("training", true).set("p", 0.5).set("seed", 5));
    s.add("train_size0", {in("x", v.uniform({0, 3}))}, attrs().set("training", true).set("p", 0.5));
  }
}

void rrelu(Sweep& s) {
  auto& v = s.v;
  const auto away_from_kink = [&](const Shape& shape) {
    return doubles({-0.875, 0.375, -0.25, 0.75, -0.625, 0.125}, shape);
  };
  s.add("eval", {in("x", away_from_kink({2, 3}))}, attrs().set("training", false));
  s.add("eval_bounds", {in("x", away_from_kink({3, 2}))},
        attrs().set("training", false).set("lower", 0.05).set("upper", 0.45));
  s.add("train_one_slope", {in("x", away_from_kink({6}))},
        attrs().set("training", true).set("lower", 0.2).set("upper", 0.2));
  s.add("train", {in("x", away_from_kink({2, 3}))}, attrs().set("training", true).set("seed", 9));
  s.add("train_size0", {in("x", v.uniform({0, 2}))}, attrs().set("training", true));
}

void samplers(Sweep& s, OpKind op) {
  auto& v = s.v;
  const auto draw = [&](const std::string& what, const Leaf& leaf, Attributes a) {
    s.add_constant(what, {leaf}, std::move(a));
  };
  if (op == OpKind::RandintLike) {
    draw("float", in("x", v.uniform({3, 4})), attrs().set("high", 5).set("seed", 1));
    draw("int64", in("x", v.ints({2, 5}, 0, 9)),
         attrs().set("low", 2).set("high", 7).set("seed", 2));
    draw("rank0", in("x", v.uniform({})), attrs().set("low", 3).set("high", 4));
    draw("size0", in("x", v.uniform({0, 2})), attrs().set("high", 3));
    return;
  }
  if (op == OpKind::Bernoulli) {
    draw("probabilities", in("p", v.uniform({3, 4}, 0.0, 1.0)), attrs().set("seed", 4));
    draw("zeros_and_ones", in("p", doubles({0.0, 1.0, 1.0, 0.0, 1.0, 0.0}, {2, 3})), attrs());
    draw("number_p", in("x", v.uniform({2, 5})), attrs().set("p", 0.3).set("seed", 6));
    draw("size0", in("p", v.uniform({0, 3}, 0.0, 1.0)), attrs());
    return;
  }
  if (op == OpKind::Randperm) {
    draw("dim0", in("x", v.uniform({5, 3})), attrs().set("dim", 0).set("seed", 8));
    draw("dim1", in("x", v.uniform({2, 4})), attrs().set("dim", 1));
    draw("negative_dim", in("x", v.ints({3, 6}, 0, 4)), attrs().set("dim", -1).set("seed", 10));
    draw("size0", in("x", v.uniform({0, 3})), attrs().set("dim", 0));
    return;
  }
  draw("matrix", in("x", v.uniform({3, 4})), attrs().set("seed", 12));
  draw("rank0", in("x", v.uniform({})), attrs());
  draw("size0", in("x", v.uniform({2, 0})), attrs());
  draw("rank4", in("x", v.uniform({2, 1, 3, 2})), attrs().set("seed", 13));
}

}  // namespace

bool random_cases(Sweep& s, OpKind op) {
  switch (op) {
    case OpKind::Dropout:
    case OpKind::FeatureDropout:
    case OpKind::AlphaDropout:
    case OpKind::FeatureAlphaDropout:
      dropouts(s, op);
      return true;
    case OpKind::Rrelu:
      rrelu(s);
      return true;
    case OpKind::RandLike:
    case OpKind::RandnLike:
    case OpKind::Rand:
    case OpKind::Randn:
    case OpKind::RandintLike:
    case OpKind::Bernoulli:
    case OpKind::Randperm:
      samplers(s, op);
      return true;
    default:
      return false;
  }
}

}  // namespace weft::testing::sweep
