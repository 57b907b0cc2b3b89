// The op sweep's cases of logcumsumexp, cummax, cummin and the losses (mse_loss, l1_loss,
// smooth_l1_loss, huber_loss, nll_loss, cross_entropy_loss, binary_cross_entropy_with_logits,
// kl_div). cummax and cummin take distinct values (a tie names
// the last position, which the gradient follows: a case of its own, judged by the torch sweep
// alone), a NaN that takes over the running value, integers and bool; logcumsumexp large
// values (the stable form) and -inf; the losses each reduction, differences on both sides of
// beta and delta, and an empty input (mean of nothing is NaN). nll_loss and cross_entropy_loss:
// scores of rank 1, 2 and 4, an ignored class (and every target ignored: NaN for "mean"),
// label smoothing, and a batch of none. binary_cross_entropy_with_logits: soft and hard targets;
// kl_div: each reduction (with "batchmean"), log_target, targets away from 0 (there 1.13's own
// target gradient is 0, 2.x's composite one NaN).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "support/op_case_sweep.h"

namespace weft::testing::sweep {

namespace {

void running_extremes(Sweep& s) {
  auto& v = s.v;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  s.add("dim1", {in("x", v.distinct({3, 5}))}, attrs().set("dim", 1));
  s.add("dim0", {in("x", v.distinct({4, 3}))}, attrs().set("dim", 0));
  s.add("rank3_dim-2", {in("x", v.distinct({2, 4, 3}))}, attrs().set("dim", -2));
  s.add("rank0", {in("x", v.uniform({}))}, attrs().set("dim", 0));
  s.add("size0", {in("x", v.uniform({0, 3}))}, attrs().set("dim", 1));
  add_convention(s, "ties", {in("x", doubles({1.0, 2.0, 2.0, 0.5, 2.0, -1.0}, {6}))},
                 attrs().set("dim", 0));
  s.add("nan", {in("x", doubles({0.5, 1.5, nan, 2.0, -1.0}, {5}))}, attrs().set("dim", 0))
      .fd_check = false;
  s.add_constant("int64", {in("x", v.ints({3, 4}, -3, 3))}, attrs().set("dim", 1));
  s.add_constant("bool", {in("x", v.bools({2, 5}))}, attrs().set("dim", -1));
}

void logcumsumexps(Sweep& s) {
  auto& v = s.v;
  const double inf = std::numeric_limits<double>::infinity();
  s.add("dim1", {in("x", v.uniform({3, 5}, -3.0, 3.0))}, attrs().set("dim", 1));
  s.add("dim0_rank3", {in("x", v.uniform({4, 2, 3}, -3.0, 3.0))}, attrs().set("dim", 0));
  // Past exp's float32 range. Not in 16-bit types: there a result near 100 is off by up to a
  // quarter, and PyTorch's gradient, which reads that rounded result (exp(x - out)), by a third.
  const Tensor large = v.uniform({2, 4}, 80.0, 120.0);
  if (!is_reduced_floating(s.float_dtype()))
    s.add("large", {in("x", large)}, attrs().set("dim", -1));
  s.add("rank0", {in("x", v.uniform({}))}, attrs().set("dim", 0));
  s.add("size0", {in("x", v.uniform({3, 0}))}, attrs().set("dim", 1));
  s.add("minus_inf", {in("x", doubles({-inf, 0.5, -inf, 1.0}, {4}))}, attrs().set("dim", 0))
      .fd_check = false;
}

// self + offset as a float32 value, as every drawn value is: the float32 and float64 sweeps then
// hold the same case.
Tensor shifted(const Tensor& self, const Tensor& offset) {
  return add(self, offset).to(Dtype::Float32);
}

void losses(Sweep& s, OpKind op) {
  auto& v = s.v;
  const bool piecewise = op == OpKind::SmoothL1Loss || op == OpKind::HuberLoss;
  const char* bound = op == OpKind::HuberLoss ? "delta" : "beta";
  for (const char* reduction : {"none", "mean", "sum"}) {
    Attributes a = attrs().set("reduction", std::string(reduction));
    // Differences away from 0 (l1's kink) and, for smooth_l1 and huber, from the bound.
    const Tensor self = v.uniform({3, 4}, -2.0, 2.0);
    const Tensor offset = v.magnitude({3, 4}, 0.1, 0.4);
    const Tensor far = v.magnitude({3, 4}, 1.3, 2.5);
    s.add(std::string(reduction) + "/near", {in("x", self), in("target", shifted(self, offset))},
          a);
    s.add(std::string(reduction) + "/far", {in("x", self), in("target", shifted(self, far))}, a);
  }
  s.add("rank0", {in("x", v.uniform({})), in("target", v.uniform({}))});
  s.add("rank3_sum", {in("x", v.uniform({2, 3, 2})), in("target", v.uniform({2, 3, 2}))},
        attrs().set("reduction", std::string("sum")));
  s.add("size0_mean", {in("x", v.uniform({0, 3})), in("target", v.uniform({0, 3}))});
  s.add("size0_sum", {in("x", v.uniform({0, 3})), in("target", v.uniform({0, 3}))},
        attrs().set("reduction", std::string("sum")));
  if (piecewise) {
    const Tensor self = v.uniform({4, 3}, -2.0, 2.0);
    const Tensor offset = v.magnitude({4, 3}, 0.05, 1.2);
    s.add("small_bound", {in("x", self), in("target", shifted(self, offset))},
          attrs().set(bound, 0.25).set("reduction", std::string("none")));
    s.add("large_bound", {in("x", self), in("target", shifted(self, offset))},
          attrs().set(bound, 2.0));
  }
}

void classification_losses(Sweep& s, OpKind op) {
  auto& v = s.v;
  const bool cross_entropy = op == OpKind::CrossEntropyLoss;
  for (const char* reduction : {"none", "mean", "sum"}) {
    const Attributes a = attrs().set("reduction", std::string(reduction));
    s.add(std::string(reduction),
          {in("x", v.uniform({4, 5}, -3.0, 1.0)), in("target", v.ints({4}, 0, 4))}, a);
    s.add(std::string(reduction) + "/ignored_class",
          {in("x", v.uniform({6, 3}, -3.0, 1.0)), in("target", int64s({0, 2, 1, 2, 2, 0}, {6}))},
          attrs().set("reduction", std::string(reduction)).set("ignore_index", 2));
  }
  s.add("rank1", {in("x", v.uniform({5}, -3.0, 1.0)), in("target", int64s({3}, {}))});
  s.add("rank4_sum",
        {in("x", v.uniform({2, 3, 2, 2}, -3.0, 1.0)), in("target", v.ints({2, 2, 2}, 0, 2))},
        attrs().set("reduction", std::string("sum")));
  // 0 / 0: NaN with a zero gradient (no finite differences of a NaN; the torch sweep checks it).
  s.add("all_ignored_mean",
        {in("x", v.uniform({3, 4}, -3.0, 1.0)), in("target", int64s({1, 1, 1}, {3}))},
        attrs().set("ignore_index", 1))
      .fd_check = false;
  s.add("size0_mean", {in("x", v.uniform({0, 4})), in("target", v.ints({0}, 0, 3))});
  s.add("one_class", {in("x", v.uniform({3, 1})), in("target", v.ints({3}, 0, 0))},
        attrs().set("reduction", std::string("none")));
  if (cross_entropy) {
    for (const char* reduction : {"none", "mean", "sum"}) {
      s.add(std::string(reduction) + "/label_smoothing",
            {in("x", v.uniform({4, 6}, -2.0, 2.0)), in("target", int64s({5, 0, 3, 5}, {4}))},
            attrs()
                .set("reduction", std::string(reduction))
                .set("ignore_index", 3)
                .set("label_smoothing", 0.3));
    }
    s.add("rank3_label_smoothing",
          {in("x", v.uniform({2, 4, 3}, -2.0, 2.0)), in("target", v.ints({2, 3}, 0, 3))},
          attrs().set("label_smoothing", 0.1));
  }
}

void divergences(Sweep& s, OpKind op) {
  auto& v = s.v;
  const bool kl = op == OpKind::KlDiv;
  std::vector<std::string> reductions = {"none", "mean", "sum"};
  if (kl) reductions.push_back("batchmean");
  for (const std::string& reduction : reductions) {
    const Attributes a = attrs().set("reduction", reduction);
    const Tensor self = kl ? v.uniform({3, 4}, -3.0, 0.0) : v.uniform({3, 4}, -3.0, 3.0);
    s.add(reduction, {in("x", self), in("target", v.uniform({3, 4}, 0.05, 0.95))}, a);
    if (kl) {
      s.add(reduction + "/log_target", {in("x", self), in("target", v.uniform({3, 4}, -3.0, 0.0))},
            attrs().set("reduction", reduction).set("log_target", true));
    }
  }
  s.add("rank0", {in("x", v.uniform({})), in("target", v.uniform({}, 0.1, 0.9))});
  s.add("rank3_sum", {in("x", v.uniform({2, 3, 2})), in("target", v.uniform({2, 3, 2}, 0.1, 0.9))},
        attrs().set("reduction", std::string("sum")));
  s.add("size0_mean", {in("x", v.uniform({0, 3})), in("target", v.uniform({0, 3}, 0.1, 0.9))});
  if (kl) {
    s.add("rank0_batchmean", {in("x", v.uniform({})), in("target", v.uniform({}, 0.1, 0.9))},
          attrs().set("reduction", std::string("batchmean")));
  } else {
    s.add("hard_targets", {in("x", v.uniform({2, 3}, -3.0, 3.0)),
                           in("target", doubles({0.0, 1.0, 1.0, 0.0, 0.0, 1.0}, {2, 3}))});
    s.add("large_logits",
          {in("x", doubles({30.0, -30.0, 80.0, -80.0}, {4})),
           in("target", doubles({0.25, 0.75, 0.5, 0.5}, {4}))},
          attrs().set("reduction", std::string("none")));
  }
}

}  // namespace

bool scan_loss_cases(Sweep& s, OpKind op) {
  switch (op) {
    case OpKind::Cummax:
    case OpKind::Cummin:
      running_extremes(s);
      return true;
    case OpKind::Logcumsumexp:
      logcumsumexps(s);
      return true;
    case OpKind::MseLoss:
    case OpKind::L1Loss:
    case OpKind::SmoothL1Loss:
    case OpKind::HuberLoss:
      losses(s, op);
      return true;
    case OpKind::NllLoss:
    case OpKind::CrossEntropyLoss:
      classification_losses(s, op);
      return true;
    case OpKind::BinaryCrossEntropyWithLogits:
    case OpKind::KlDiv:
      divergences(s, op);
      return true;
    default:
      return false;
  }
}

}  // namespace weft::testing::sweep
