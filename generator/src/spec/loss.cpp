// Regression losses and divergences: mse_loss, l1_loss, smooth_l1_loss, huber_loss,
// binary_cross_entropy_with_logits, kl_div (with F.kl_div's "batchmean"). self and target have one
// shape (a fresh target takes self's: torch.nn.functional warns about a broadcast target, which
// models do not mean); the output is that shape with reduction "none", else 0-d. beta and
// delta are positive: smooth_l1_loss's beta = 0 is l1_loss, and huber_loss refuses delta <= 0.
// Classification losses: nll_loss, cross_entropy_loss. Scores [C], [N, C] or [N, C, d...] with
// at least one class; a fresh int64 target of the scores' shape without the class dim, which
// the value search keeps among the classes; ignore_index is PyTorch's -100 or, a third of the
// time, one of the classes (its targets then count for nothing); label_smoothing is 0 or in
// (0, 0.5].
#include <string>
#include <vector>

#include "spec/builder.h"
#include "spec/families.h"

namespace weft::gen {

namespace {

template <class B>
void loss_rule(B& b) {
  const auto x = b.data(0);
  if (b.bound(1)) {
    b.require_that(b.rank(1) == b.rank(0), "loss: target rank");
    const auto target = b.data(1);
    for (std::size_t i = 0; i < x.size(); ++i) b.require(target[i] == x[i]);
  } else {
    b.shape_input(1, x);
  }
  // A copy: a later attribute may move the string attr_string refers to.
  const std::string reduction =
      b.spec().op == ir::OpKind::KlDiv
          ? b.attr_string("reduction", {"none", "mean", "sum", "batchmean"})
          : b.attr_string("reduction", {"none", "mean", "sum"});
  if (b.spec().op == ir::OpKind::KlDiv) b.attr_bool("log_target");
  if (b.spec().op == ir::OpKind::SmoothL1Loss) b.attr_float("beta", 0.25, 2.0);
  if (b.spec().op == ir::OpKind::HuberLoss) b.attr_float("delta", 0.25, 2.0);
  if (reduction == "none") {
    b.output(x);
  } else {
    b.output({});
  }
}

template <class B>
void classification_rule(B& b) {
  using Int = typename B::Int;
  const int rank = b.rank(0);
  const auto x = b.data(0);
  const std::size_t class_dim = rank == 1 ? 0 : 1;
  b.require(x[class_dim] >= b.lit(1));
  std::vector<Int> target(x.begin(), x.end());
  target.erase(target.begin() + static_cast<std::ptrdiff_t>(class_dim));
  if (b.bound(1)) {
    b.require_that(static_cast<std::size_t>(b.rank(1)) == target.size(), "loss: target rank");
    const auto bound = b.data(1);
    for (std::size_t i = 0; i < target.size(); ++i) b.require(bound[i] == target[i]);
  } else {
    b.shape_input(1, target);
  }
  if (b.chance("ignore_a_class", 0.3)) {
    const auto ignored = b.attr_int("ignore_index", 0, hint(x[class_dim], b.bounds().max_dim));
    b.require(ignored < x[class_dim]);
  } else {
    b.set_attr("ignore_index", std::int64_t{-100});
  }
  if (b.spec().op == ir::OpKind::CrossEntropyLoss && b.chance("label_smoothing", 0.4)) {
    b.attr_float("label_smoothing", 0.05, 0.5);
  }
  const std::string reduction = b.attr_string("reduction", {"none", "mean", "sum"});
  if (reduction == "none") {
    b.output(target);
  } else {
    b.output({});
  }
}

}  // namespace

OpSpec classification_loss_spec(ir::OpKind op) {
  OpSpec s{op, {InputDecl{"self", InputRole::Data, 1, 4}, InputDecl{"target", InputRole::Index}}};
  s.dtypes = kFloat;
  s.output_dtypes = dtypes::same;
  s.sample = &classification_rule<Sampler>;
  s.encode = &classification_rule<Encoder>;
  return s;
}

OpSpec loss_spec(ir::OpKind op) {
  OpSpec s{op, {InputDecl{"self"}, InputDecl{"target"}}};
  s.dtypes = kFloat;
  s.output_dtypes = dtypes::same;
  s.sample = &loss_rule<Sampler>;
  s.encode = &loss_rule<Encoder>;
  return s;
}

}  // namespace weft::gen
