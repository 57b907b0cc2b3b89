// Regression losses: mse_loss, l1_loss, smooth_l1_loss, huber_loss. self and target have one
// shape (a fresh target takes self's: torch.nn.functional warns about a broadcast target, which
// models do not mean); the output is that shape with reduction "none", else 0-d. beta and
// delta are positive: smooth_l1_loss's beta = 0 is l1_loss, and huber_loss refuses delta <= 0.
#include <string>

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
  const std::string reduction = b.attr_string("reduction", {"none", "mean", "sum"});
  if (b.spec().op == ir::OpKind::SmoothL1Loss) b.attr_float("beta", 0.25, 2.0);
  if (b.spec().op == ir::OpKind::HuberLoss) b.attr_float("delta", 0.25, 2.0);
  if (reduction == "none") {
    b.output(x);
  } else {
    b.output({});
  }
}

}  // namespace

OpSpec loss_spec(ir::OpKind op) {
  OpSpec s{op, {InputDecl{"self"}, InputDecl{"target"}}};
  s.dtypes = kFloat;
  s.output_dtypes = dtypes::same;
  s.sample = &loss_rule<Sampler>;
  s.encode = &loss_rule<Encoder>;
  return s;
}

}  // namespace weft::gen
