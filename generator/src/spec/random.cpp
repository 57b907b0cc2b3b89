// Random draws: the dropouts and rrelu (training and evaluation), and the samplers. What a draw
// feeds is judged by its properties (weft/oracle/random_judging.h), so the generator draws these
// ops at a lower rate than the others (generator.cpp). Every node gets a seed of its own, which
// the engine draws from; PyTorch's paths draw from their own generator, seeded per call.
#include <string>

#include "spec/builder.h"
#include "spec/families.h"

namespace weft::gen {

namespace {

template <class B>
void seed_rule_attr(B& b) {
  b.set_attr("seed", b.choose("seed", 0, 1 << 30));
}

// p: mostly strictly between 0 and 1 (a draw), at times exactly 0 or 1 (no draw: identity, zeros).
template <class B>
void dropout_probability(B& b) {
  if (b.chance("p.edge", 0.15)) {
    b.set_attr("p", b.chance("p.one", 0.5) ? 1.0 : 0.0);
  } else {
    b.attr_float("p", 0.05, 0.95);
  }
  b.set_attr("training", b.chance("training", 0.75));
  seed_rule_attr(b);
}

// Every dropout; the feature ones (F.dropout1d/2d/3d) take a batched 3-D, 4-D or 5-D input
// (their specs' minimum rank).
template <class B>
void dropout_rule(B& b) {
  dropout_probability(b);
  b.output(b.data(0));
}

template <class B>
void rrelu_rule(B& b) {
  const double lower = b.attr_float("lower", 0.0, 0.5);
  // At times one slope (lower == upper): training then draws nothing.
  const double upper =
      b.chance("upper.same", 0.1) ? lower : lower + b.draws_real("width", 0.01, 0.5);
  b.set_attr("upper", upper);
  b.set_attr("training", b.chance("training", 0.75));
  seed_rule_attr(b);
  b.output(b.data(0));
}

template <class B>
void sampler_rule(B& b) {
  seed_rule_attr(b);
  b.output(b.data(0));
}

template <class B>
void randint_like_rule(B& b) {
  const auto low = b.choose("low", 0, 5);
  b.set_attr("low", low);
  b.set_attr("high", low + b.choose("range", 1, 10));
  seed_rule_attr(b);
  b.output(b.data(0));
}

template <class B>
void bernoulli_rule(B& b) {
  // torch.bernoulli(p) with a tensor of probabilities, or torch.bernoulli(x, p) with one.
  if (b.chance("p.number", 0.4)) b.attr_float("p", 0.0, 1.0);
  seed_rule_attr(b);
  b.output(b.data(0));
}

// torch.randperm(x.size(dim)): a permutation as long as one dim of x.
template <class B>
void randperm_rule(B& b) {
  const auto x = b.data(0);
  const int rank = b.rank(0);
  const std::int64_t dim = b.attr_dim("dim", rank);
  seed_rule_attr(b);
  b.output({x[static_cast<std::size_t>(dim < 0 ? dim + rank : dim)]});
}

OpSpec make(ir::OpKind op, int min_rank, unsigned dtypes_allowed, void (*sample)(Sampler&),
            void (*encode)(Encoder&),
            std::vector<Dtype> (*out)(const std::vector<Dtype>&,
                                      const ir::Attributes&) = dtypes::same,
            int max_rank = 5) {
  OpSpec s;
  s.op = op;
  s.inputs = {InputDecl{"self", InputRole::Data, min_rank, max_rank}};
  s.dtypes = dtypes_allowed;
  s.output_dtypes = out;
  s.sample = sample;
  s.encode = encode;
  return s;
}

}  // namespace

OpSpec random_spec(ir::OpKind op) {
  using K = ir::OpKind;
  switch (op) {
    case K::Dropout:
    case K::AlphaDropout:
      return make(op, 0, kFloat, WEFT_RULE(dropout_rule));
    case K::FeatureDropout:
    case K::FeatureAlphaDropout:
      return make(op, 3, kFloat, WEFT_RULE(dropout_rule));
    case K::Rrelu:
      return make(op, 0, kFloat, WEFT_RULE(rrelu_rule));
    case K::RandLike:
    case K::RandnLike:
    case K::Rand:
    case K::Randn:
      return make(op, 0, kFloat, WEFT_RULE(sampler_rule));
    case K::RandintLike:
      return make(op, 0, kFloat | kInt, WEFT_RULE(randint_like_rule));
    case K::Bernoulli:
      return make(op, 0, kFloat, WEFT_RULE(bernoulli_rule));
    case K::Randperm:
      return make(op, 1, kAnyDtype, WEFT_RULE(randperm_rule), dtypes::int64);
    default:
      break;
  }
  return OpSpec{op, {}};
}

}  // namespace weft::gen
