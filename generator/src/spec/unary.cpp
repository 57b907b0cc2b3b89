// Unary math and activations: one input of any rank, the output of the same shape. What
// differs per op is the dtypes it takes, its attributes and where it is finite.
#include "spec/builder.h"
#include "spec/families.h"

namespace weft::gen {

namespace {

template <class B>
void elementwise_rule(B& b) {
  b.output(b.data(0));
}

// Activation attributes are drawn here (they do not enter shape arithmetic); the rule itself
// is the elementwise one.
template <class B>
void leaky_relu_rule(B& b) {
  b.attr_float("negative_slope", -0.5, 0.5);
  elementwise_rule(b);
}
template <class B>
void elu_rule(B& b) {
  b.attr_float("alpha", 0.1, 2.0);
  elementwise_rule(b);
}
template <class B>
void gelu_rule(B& b) {
  b.attr_string("approximate", {"none", "tanh"});
  elementwise_rule(b);
}
template <class B>
void softplus_rule(B& b) {
  b.attr_float("beta", 0.5, 3.0);
  b.attr_float("threshold", 5.0, 30.0);
  elementwise_rule(b);
}
template <class B>
void hardtanh_rule(B& b) {
  const double lo = b.attr_float("min_val", -2.0, 0.0);
  b.set_attr("max_val", lo + b.draws_real("max_val.width", 0.1, 3.0));
  elementwise_rule(b);
}
template <class B>
void celu_rule(B& b) {
  b.attr_float("alpha", 0.1, 2.0);
  elementwise_rule(b);
}
template <class B>
void threshold_rule(B& b) {
  b.attr_float("threshold", -1.5, 1.5);
  b.attr_float("value", -2.0, 2.0);
  elementwise_rule(b);
}
template <class B>
void lambd_rule(B& b) {
  b.attr_float("lambd", 0.0, 1.5);
  elementwise_rule(b);
}
template <class B>
void clamp_rule(B& b) {
  // Either bound may be absent (None), never both.
  const std::int64_t which = b.choose("clamp.bounds", 0, 2);  // 0: min, 1: max, 2: both
  const double lo = b.draws_real("clamp.min", -2.0, 0.5);
  if (which != 1) b.set_attr("min", lo);
  if (which != 0) b.set_attr("max", lo + b.draws_real("clamp.width", 0.0, 3.0));
  elementwise_rule(b);
}

// logit: eps absent (the values stay inside (0, 1)) or small.
template <class B>
void logit_rule(B& b) {
  if (b.chance("eps.present", 0.5)) b.attr_float("eps", 1e-6, 0.2);
  elementwise_rule(b);
}
// nan_to_num: each replacement absent (0 and the dtype's extremes) or drawn.
template <class B>
void nan_to_num_rule(B& b) {
  if (b.chance("nan.present", 0.5)) b.attr_float("nan", -2.0, 2.0);
  if (b.chance("posinf.present", 0.3)) b.attr_float("posinf", 1.0, 1e4);
  if (b.chance("neginf.present", 0.3)) b.attr_float("neginf", -1e4, -1.0);
  elementwise_rule(b);
}
// glu(x, dim): dim's size is even; the output has half of it.
template <class B>
void glu_rule(B& b) {
  using Int = typename B::Int;
  const int rank = b.rank(0);
  b.require_that(rank >= 1, "glu: scalar input");
  auto x = b.data(0);
  const std::int64_t dim = b.attr_dim("dim", rank);
  const std::size_t d = static_cast<std::size_t>(dim < 0 ? dim + rank : dim);
  const Int half = x[d] / 2;
  b.require(x[d] >= 2 && x[d] == half * 2);
  x[d] = half;
  b.output(x);
}
// prelu(x, weight): one slope, or one per channel (dim 1 of an input of 2 dims or more).
template <class B>
void prelu_rule(B& b) {
  const auto x = b.data(0);
  b.require_that(b.rank(1) == 1, "prelu: weight is 1-D");
  const bool per_channel = x.size() >= 2 && b.chance("prelu.per_channel", 0.6);
  if (!b.bound(1)) b.shape_input(1, {per_channel ? x[1] : b.lit(1)});
  const auto w = b.data(1);
  b.require(w[0] == b.lit(1) || (x.size() >= 2 ? w[0] == x[1] : w[0] == b.lit(1)));
  b.output(x);
}

OpSpec one_input(ir::OpKind op, unsigned dtypes_allowed,
                 std::vector<Dtype> (*out)(const std::vector<Dtype>&, const ir::Attributes&),
                 ValueHint hint = ValueHint::None) {
  OpSpec s;
  s.op = op;
  s.inputs = {InputDecl{"self"}};
  s.dtypes = dtypes_allowed;
  s.hint = hint;
  s.output_dtypes = out;
  s.sample = &elementwise_rule<Sampler>;
  s.encode = &elementwise_rule<Encoder>;
  return s;
}

}  // namespace

OpSpec unary_spec(ir::OpKind op) {
  using K = ir::OpKind;
  constexpr unsigned kNumber = kFloat | kInt;
  switch (op) {
    case K::Neg:
      return one_input(op, kNumber, dtypes::same);
    case K::Abs:
    case K::Floor:
    case K::Ceil:
    case K::Round:
    case K::Sign:
      return one_input(op, kNumber, dtypes::same);
    case K::Trunc:
      return one_input(op, kNumber, dtypes::same);
    case K::Frac:
      return one_input(op, kFloat, dtypes::same);
    case K::Isnan:
    case K::Isinf:
    case K::Isfinite:
    case K::Signbit:
      return one_input(op, kNumber, dtypes::boolean);
    case K::Square:
      return one_input(op, kNumber, dtypes::same, ValueHint::Bounded);
    case K::Erfc:
    case K::Sinc:
    case K::Deg2rad:
    case K::Rad2deg:
      return one_input(op, kNumber, dtypes::floating);
    case K::Expm1:
    case K::Exp2:
    case K::Exp:
    case K::Sinh:
    case K::Cosh:
    case K::Tan:
      return one_input(op, kNumber, dtypes::floating, ValueHint::Bounded);
    case K::Log:
    case K::Log2:
    case K::Log10:
    case K::Log1p:
    case K::Acosh:
    case K::Rsqrt:
    case K::Lgamma:  // poles at 0 and the negative integers
    case K::Digamma:
      return one_input(op, kNumber, dtypes::floating, ValueHint::Positive);
    case K::Sqrt:
      return one_input(op, kNumber, dtypes::floating, ValueHint::NonNegative);
    case K::Reciprocal:
      return one_input(op, kNumber, dtypes::floating, ValueHint::NonZero);
    case K::Asin:
    case K::Acos:
    case K::Atanh:
    case K::Erfinv:
      return one_input(op, kNumber, dtypes::floating, ValueHint::UnitInterval);
    case K::Sin:
    case K::Cos:
    case K::Atan:
    case K::Tanh:
    case K::Erf:
    case K::Asinh:
    case K::Sigmoid:
      return one_input(op, kNumber, dtypes::floating);
    case K::Relu:
    case K::Silu:
    case K::Hardswish:
    case K::Hardsigmoid:
    case K::Relu6:
    case K::Mish:
    case K::Selu:
    case K::Softsign:
    case K::Logsigmoid:
    case K::Tanhshrink:
      return one_input(op, kFloat, dtypes::same);
    case K::Celu:
      return with_rule<&celu_rule<Sampler>, &celu_rule<Encoder>>(
          one_input(op, kFloat, dtypes::same));
    case K::Threshold:
      return with_rule<&threshold_rule<Sampler>, &threshold_rule<Encoder>>(
          one_input(op, kFloat, dtypes::same));
    case K::Hardshrink:
    case K::Softshrink:
      return with_rule<&lambd_rule<Sampler>, &lambd_rule<Encoder>>(
          one_input(op, kFloat, dtypes::same));
    case K::LeakyRelu:
      return with_rule<&leaky_relu_rule<Sampler>, &leaky_relu_rule<Encoder>>(
          one_input(op, kFloat, dtypes::same));
    case K::Elu:
      return with_rule<&elu_rule<Sampler>, &elu_rule<Encoder>>(one_input(op, kFloat, dtypes::same));
    case K::Gelu:
      return with_rule<&gelu_rule<Sampler>, &gelu_rule<Encoder>>(
          one_input(op, kFloat, dtypes::same));
    case K::Softplus:
      return with_rule<&softplus_rule<Sampler>, &softplus_rule<Encoder>>(
          one_input(op, kFloat, dtypes::same));
    case K::Hardtanh:
      return with_rule<&hardtanh_rule<Sampler>, &hardtanh_rule<Encoder>>(
          one_input(op, kFloat, dtypes::same));
    case K::Clamp:
      return with_rule<&clamp_rule<Sampler>, &clamp_rule<Encoder>>(
          one_input(op, kFloat, dtypes::same));
    case K::Logit:
      return with_rule<&logit_rule<Sampler>, &logit_rule<Encoder>>(
          one_input(op, kFloat, dtypes::same));
    case K::NanToNum:
      return with_rule<&nan_to_num_rule<Sampler>, &nan_to_num_rule<Encoder>>(
          one_input(op, kNumber, dtypes::same));
    case K::Glu: {
      OpSpec s =
          with_rule<&glu_rule<Sampler>, &glu_rule<Encoder>>(one_input(op, kFloat, dtypes::same));
      s.inputs[0].min_rank = 1;
      return s;
    }
    case K::Prelu: {
      OpSpec s = with_rule<&prelu_rule<Sampler>, &prelu_rule<Encoder>>(
          one_input(op, kFloat, dtypes::same));
      s.inputs.push_back(InputDecl{"weight", InputRole::Weight, 1, 1});
      return s;
    }
    default:
      break;
  }
  return OpSpec{op, {}};
}

}  // namespace weft::gen
