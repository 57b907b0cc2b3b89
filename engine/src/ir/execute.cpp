// The engine's row of the op table: every OpKind mapped onto weft's ops (the switch has no
// default, so a new op without a row does not compile), and the graph interpreter.
#include "weft/ir/execute.h"

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ir/inplace.h"
#include "weft/ir/leaf_values.h"
#include "weft/ir/op_schema.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft::ir {

namespace {

Tensor optional_input(const std::vector<Tensor>& inputs, std::size_t i) {
  return i < inputs.size() ? inputs[i] : Tensor();
}

std::optional<double> optional_float(const Attributes& a, std::string_view name) {
  if (!a.has(name)) return std::nullopt;
  return a.get_float(name);
}

std::optional<std::int64_t> optional_int(const Attributes& a, std::string_view name) {
  if (!a.has(name)) return std::nullopt;
  return a.get_int(name);
}

Dtype value_dtype(Dtype declared, std::optional<Dtype> floating) {
  return floating && is_floating(declared) ? *floating : declared;
}

}  // namespace

namespace {
// A scalar operand attribute ("other") as the engine's Scalar, keeping its kind.
Scalar scalar_attribute(const Attributes& attrs) {
  const AttrValue& value = attrs.get_scalar("other");
  if (const auto* b = std::get_if<bool>(&value)) return *b;
  if (const auto* i = std::get_if<std::int64_t>(&value)) return *i;
  return std::get<double>(value);
}

std::uint64_t seed_of(const Attributes& attrs) {
  return static_cast<std::uint64_t>(attrs.get_int("seed", 0));
}
}  // namespace

const Node& with_declared_defaults(const Graph& graph, const Node& node, Node& scratch) {
  if (node.op != OpKind::RmsNorm || node.attrs.has("eps") || node.inputs.empty()) return node;
  scratch = node;
  scratch.attrs.set("eps", rms_norm_default_eps(graph.type(node.inputs[0]).dtype));
  return scratch;
}

std::vector<Tensor> run_node(const Node& node, const std::vector<Tensor>& in,
                             std::optional<Dtype> floating) {
  const Attributes& a = node.attrs;
  auto one = [](Tensor t) { return std::vector<Tensor>{std::move(t)}; };
  switch (node.op) {
    case OpKind::Neg:
      return one(neg(in[0]));
    case OpKind::Abs:
      return one(abs(in[0]));
    case OpKind::Exp:
      return one(exp(in[0]));
    case OpKind::Log:
      return one(log(in[0]));
    case OpKind::Log2:
      return one(log2(in[0]));
    case OpKind::Sqrt:
      return one(sqrt(in[0]));
    case OpKind::Rsqrt:
      return one(rsqrt(in[0]));
    case OpKind::Reciprocal:
      return one(reciprocal(in[0]));
    case OpKind::Sin:
      return one(sin(in[0]));
    case OpKind::Cos:
      return one(cos(in[0]));
    case OpKind::Tan:
      return one(tan(in[0]));
    case OpKind::Asin:
      return one(asin(in[0]));
    case OpKind::Acos:
      return one(acos(in[0]));
    case OpKind::Atan:
      return one(atan(in[0]));
    case OpKind::Sinh:
      return one(sinh(in[0]));
    case OpKind::Cosh:
      return one(cosh(in[0]));
    case OpKind::Tanh:
      return one(tanh(in[0]));
    case OpKind::Erf:
      return one(erf(in[0]));
    case OpKind::Floor:
      return one(floor(in[0]));
    case OpKind::Ceil:
      return one(ceil(in[0]));
    case OpKind::Round:
      return one(round(in[0]));
    case OpKind::Sign:
      return one(sign(in[0]));
    case OpKind::Trunc:
      return one(trunc(in[0]));
    case OpKind::Frac:
      return one(frac(in[0]));
    case OpKind::Log1p:
      return one(log1p(in[0]));
    case OpKind::Expm1:
      return one(expm1(in[0]));
    case OpKind::Log10:
      return one(log10(in[0]));
    case OpKind::Exp2:
      return one(exp2(in[0]));
    case OpKind::Asinh:
      return one(asinh(in[0]));
    case OpKind::Acosh:
      return one(acosh(in[0]));
    case OpKind::Atanh:
      return one(atanh(in[0]));
    case OpKind::Erfinv:
      return one(erfinv(in[0]));
    case OpKind::Lgamma:
      return one(lgamma(in[0]));
    case OpKind::Digamma:
      return one(digamma(in[0]));
    case OpKind::Isnan:
      return one(isnan(in[0]));
    case OpKind::Isinf:
      return one(isinf(in[0]));
    case OpKind::Square:
      return one(square(in[0]));
    case OpKind::Erfc:
      return one(erfc(in[0]));
    case OpKind::Sinc:
      return one(sinc(in[0]));
    case OpKind::Deg2rad:
      return one(deg2rad(in[0]));
    case OpKind::Rad2deg:
      return one(rad2deg(in[0]));
    case OpKind::Isfinite:
      return one(isfinite(in[0]));
    case OpKind::Signbit:
      return one(signbit(in[0]));
    case OpKind::Logit:
      return one(logit(in[0], optional_float(a, "eps")));
    case OpKind::NanToNum:
      return one(nan_to_num(in[0], optional_float(a, "nan"), optional_float(a, "posinf"),
                            optional_float(a, "neginf")));
    case OpKind::Glu:
      return one(glu(in[0], a.get_int("dim", -1)));
    case OpKind::Prelu:
      return one(prelu(in[0], in[1]));
    case OpKind::Logaddexp2:
      return one(logaddexp2(in[0], in[1]));
    case OpKind::Xlogy:
      return one(xlogy(in[0], in[1]));
    case OpKind::Copysign:
      return one(copysign(in[0], in[1]));
    case OpKind::Fmax:
      return one(fmax(in[0], in[1]));
    case OpKind::Fmin:
      return one(fmin(in[0], in[1]));
    case OpKind::Lerp:
      return one(lerp(in[0], in[1], in[2]));
    case OpKind::Addcmul:
      return one(addcmul(in[0], in[1], in[2], a.get_float("value", 1.0)));
    case OpKind::Addcdiv:
      return one(addcdiv(in[0], in[1], in[2], a.get_float("value", 1.0)));
    case OpKind::Dot:
      return one(dot(in[0], in[1]));
    case OpKind::Mv:
      return one(mv(in[0], in[1]));
    case OpKind::Outer:
      return one(outer(in[0], in[1]));
    case OpKind::Trace:
      return one(trace(in[0]));
    case OpKind::Baddbmm:
      return one(baddbmm(in[0], in[1], in[2], a.get_float("beta", 1.0), a.get_float("alpha", 1.0)));
    case OpKind::Hardswish:
      return one(hardswish(in[0]));
    case OpKind::Hardsigmoid:
      return one(hardsigmoid(in[0]));
    case OpKind::Relu6:
      return one(relu6(in[0]));
    case OpKind::Mish:
      return one(mish(in[0]));
    case OpKind::Selu:
      return one(selu(in[0]));
    case OpKind::Softsign:
      return one(softsign(in[0]));
    case OpKind::Logsigmoid:
      return one(logsigmoid(in[0]));
    case OpKind::Tanhshrink:
      return one(tanhshrink(in[0]));
    case OpKind::Celu:
      return one(celu(in[0], a.get_float("alpha", 1.0)));
    case OpKind::Threshold:
      return one(threshold(in[0], a.get_float("threshold"), a.get_float("value")));
    case OpKind::Hardshrink:
      return one(hardshrink(in[0], a.get_float("lambd", 0.5)));
    case OpKind::Softshrink:
      return one(softshrink(in[0], a.get_float("lambd", 0.5)));
    case OpKind::Atan2:
      return one(atan2(in[0], in[1]));
    case OpKind::Hypot:
      return one(hypot(in[0], in[1]));
    case OpKind::Logaddexp:
      return one(logaddexp(in[0], in[1]));
    case OpKind::Fmod:
      return one(fmod(in[0], in[1]));
    case OpKind::Remainder:
      return one(remainder(in[0], in[1]));
    case OpKind::Sigmoid:
      return one(sigmoid(in[0]));
    case OpKind::Relu:
      return one(relu(in[0]));
    case OpKind::LeakyRelu:
      return one(leaky_relu(in[0], a.get_float("negative_slope", 0.01)));
    case OpKind::Elu:
      return one(elu(in[0], a.get_float("alpha", 1.0)));
    case OpKind::Gelu:
      return one(gelu(in[0], a.get_string("approximate", "none")));
    case OpKind::Silu:
      return one(silu(in[0]));
    case OpKind::Softplus:
      return one(softplus(in[0], a.get_float("beta", 1.0), a.get_float("threshold", 20.0)));
    case OpKind::Hardtanh:
      return one(hardtanh(in[0], a.get_float("min_val", -1.0), a.get_float("max_val", 1.0)));
    case OpKind::Clamp:
      return one(clamp(in[0], optional_float(a, "min"), optional_float(a, "max")));
    case OpKind::Add:
      return one(add(in[0], in[1], a.get_float("alpha", 1.0)));
    case OpKind::Sub:
      return one(sub(in[0], in[1], a.get_float("alpha", 1.0)));
    case OpKind::Mul:
      return one(mul(in[0], in[1]));
    case OpKind::Div: {
      if (!a.has("rounding_mode")) return one(div(in[0], in[1]));
      return one(div(in[0], in[1], a.get_string("rounding_mode")));
    }
    case OpKind::Pow:
      return one(pow(in[0], in[1]));
    case OpKind::Maximum:
      return one(maximum(in[0], in[1]));
    case OpKind::Minimum:
      return one(minimum(in[0], in[1]));
    case OpKind::Eq:
      return one(eq(in[0], in[1]));
    case OpKind::Ne:
      return one(ne(in[0], in[1]));
    case OpKind::Lt:
      return one(lt(in[0], in[1]));
    case OpKind::Le:
      return one(le(in[0], in[1]));
    case OpKind::Gt:
      return one(gt(in[0], in[1]));
    case OpKind::Ge:
      return one(ge(in[0], in[1]));
    case OpKind::LogicalAnd:
      return one(logical_and(in[0], in[1]));
    case OpKind::LogicalOr:
      return one(logical_or(in[0], in[1]));
    case OpKind::LogicalXor:
      return one(logical_xor(in[0], in[1]));
    case OpKind::LogicalNot:
      return one(logical_not(in[0]));
    case OpKind::BitwiseAnd:
      return one(bitwise_and(in[0], in[1]));
    case OpKind::BitwiseOr:
      return one(bitwise_or(in[0], in[1]));
    case OpKind::BitwiseXor:
      return one(bitwise_xor(in[0], in[1]));
    case OpKind::BitwiseNot:
      return one(bitwise_not(in[0]));
    case OpKind::Where:
      return one(where(in[0], in[1], in[2]));
    case OpKind::MaskedFill:
      return one(masked_fill(in[0], in[1], a.get_float("value")));
    case OpKind::Sum:
      return one(sum(in[0], a.get_ints("dim", {}), a.get_bool("keepdim", false)));
    case OpKind::Mean:
      return one(mean(in[0], a.get_ints("dim", {}), a.get_bool("keepdim", false)));
    case OpKind::Prod:
      return one(prod(in[0], optional_int(a, "dim"), a.get_bool("keepdim", false)));
    case OpKind::Max: {
      auto [values, indices] = max(in[0], a.get_int("dim"), a.get_bool("keepdim", false));
      return {values, indices};
    }
    case OpKind::Min: {
      auto [values, indices] = min(in[0], a.get_int("dim"), a.get_bool("keepdim", false));
      return {values, indices};
    }
    case OpKind::Argmax:
      return one(argmax(in[0], optional_int(a, "dim"), a.get_bool("keepdim", false)));
    case OpKind::Argmin:
      return one(argmin(in[0], optional_int(a, "dim"), a.get_bool("keepdim", false)));
    case OpKind::Var:
      return one(var(in[0], a.get_ints("dim", {}), a.get_int("correction", 1),
                     a.get_bool("keepdim", false)));
    case OpKind::Std:
      return one(weft::std(in[0], a.get_ints("dim", {}), a.get_int("correction", 1),
                           a.get_bool("keepdim", false)));
    case OpKind::Logsumexp:
      return one(logsumexp(in[0], a.get_ints("dim"), a.get_bool("keepdim", false)));
    case OpKind::Amax:
      return one(amax(in[0], a.get_ints("dim", {}), a.get_bool("keepdim", false)));
    case OpKind::Amin:
      return one(amin(in[0], a.get_ints("dim", {}), a.get_bool("keepdim", false)));
    case OpKind::Any:
      return one(any(in[0], optional_int(a, "dim"), a.get_bool("keepdim", false)));
    case OpKind::All:
      return one(all(in[0], optional_int(a, "dim"), a.get_bool("keepdim", false)));
    case OpKind::Cumsum:
      return one(cumsum(in[0], a.get_int("dim")));
    case OpKind::Cumprod:
      return one(cumprod(in[0], a.get_int("dim")));
    case OpKind::Logcumsumexp:
      return one(logcumsumexp(in[0], a.get_int("dim")));
    case OpKind::VarMean: {
      auto [spread, average] = var_mean(in[0], a.get_ints("dim", {}), a.get_int("correction", 1),
                                        a.get_bool("keepdim", false));
      return {spread, average};
    }
    case OpKind::StdMean: {
      auto [spread, average] = std_mean(in[0], a.get_ints("dim", {}), a.get_int("correction", 1),
                                        a.get_bool("keepdim", false));
      return {spread, average};
    }
    case OpKind::Cummax: {
      auto [values, indices] = cummax(in[0], a.get_int("dim"));
      return {values, indices};
    }
    case OpKind::Cummin: {
      auto [values, indices] = cummin(in[0], a.get_int("dim"));
      return {values, indices};
    }
    case OpKind::Sort: {
      auto [values, indices] = sort(in[0], a.get_int("dim", -1), a.get_bool("descending", false),
                                    a.get_bool("stable", false));
      return {values, indices};
    }
    case OpKind::Argsort:
      return one(argsort(in[0], a.get_int("dim", -1), a.get_bool("descending", false),
                         a.get_bool("stable", false)));
    case OpKind::Topk: {
      auto [values, indices] =
          topk(in[0], a.get_int("k"), a.get_int("dim", -1), a.get_bool("largest", true));
      return {values, indices};
    }
    case OpKind::Softmax:
      return one(softmax(in[0], a.get_int("dim")));
    case OpKind::LogSoftmax:
      return one(log_softmax(in[0], a.get_int("dim")));
    case OpKind::Matmul:
      return one(matmul(in[0], in[1]));
    case OpKind::Mm:
      return one(mm(in[0], in[1]));
    case OpKind::Bmm:
      return one(bmm(in[0], in[1]));
    case OpKind::Linear:
      return one(linear(in[0], in[1], optional_input(in, 2)));
    case OpKind::Addmm:
      return one(addmm(in[0], in[1], in[2], a.get_float("beta", 1.0), a.get_float("alpha", 1.0)));
    case OpKind::Cdist:
      return one(cdist(in[0], in[1], a.get_float("p", 2.0)));
    case OpKind::Pdist:
      return one(pdist(in[0], a.get_float("p", 2.0)));
    case OpKind::MseLoss:
      return one(mse_loss(in[0], in[1], a.get_string("reduction", "mean")));
    case OpKind::L1Loss:
      return one(l1_loss(in[0], in[1], a.get_string("reduction", "mean")));
    case OpKind::SmoothL1Loss:
      return one(smooth_l1_loss(in[0], in[1], a.get_string("reduction", "mean"),
                                a.get_float("beta", 1.0)));
    case OpKind::HuberLoss:
      return one(
          huber_loss(in[0], in[1], a.get_string("reduction", "mean"), a.get_float("delta", 1.0)));
    case OpKind::NllLoss:
      return one(nll_loss(in[0], in[1], a.get_string("reduction", "mean"),
                          a.get_int("ignore_index", -100), optional_input(in, 2)));
    case OpKind::CrossEntropyLoss:
      return one(cross_entropy_loss(in[0], in[1], a.get_string("reduction", "mean"),
                                    a.get_int("ignore_index", -100),
                                    a.get_float("label_smoothing", 0.0), optional_input(in, 2)));
    case OpKind::BinaryCrossEntropyWithLogits:
      return one(binary_cross_entropy_with_logits(in[0], in[1], a.get_string("reduction", "mean"),
                                                  optional_input(in, 2), optional_input(in, 3)));
    case OpKind::KlDiv:
      return one(
          kl_div(in[0], in[1], a.get_string("reduction", "mean"), a.get_bool("log_target", false)));
    case OpKind::Conv1d:
    case OpKind::Conv2d: {
      const auto stride = a.get_ints("stride", {1});
      const auto padding = a.get_ints("padding", {0});
      const auto dilation = a.get_ints("dilation", {1});
      const std::int64_t groups = a.get_int("groups", 1);
      if (node.op == OpKind::Conv1d) {
        return one(conv1d(in[0], in[1], optional_input(in, 2), stride, padding, dilation, groups));
      }
      return one(conv2d(in[0], in[1], optional_input(in, 2), stride, padding, dilation, groups));
    }
    case OpKind::ConvTranspose1d:
    case OpKind::ConvTranspose2d: {
      const auto stride = a.get_ints("stride", {1});
      const auto padding = a.get_ints("padding", {0});
      const auto output_padding = a.get_ints("output_padding", {0});
      const auto dilation = a.get_ints("dilation", {1});
      const std::int64_t groups = a.get_int("groups", 1);
      const auto run = node.op == OpKind::ConvTranspose1d ? conv_transpose1d : conv_transpose2d;
      return one(run(in[0], in[1], optional_input(in, 2), stride, padding, output_padding, groups,
                     dilation));
    }
    case OpKind::MaxPool1d:
    case OpKind::MaxPool2d:
    case OpKind::MaxPool3d: {
      const auto kernel = a.get_ints("kernel_size");
      const auto stride = a.get_ints("stride", {});
      const auto padding = a.get_ints("padding", {0});
      const auto dilation = a.get_ints("dilation", {1});
      const bool ceil_mode = a.get_bool("ceil_mode", false);
      if (node.op == OpKind::MaxPool1d) {
        return one(max_pool1d(in[0], kernel, stride, padding, dilation, ceil_mode));
      }
      if (node.op == OpKind::MaxPool3d) {
        return one(max_pool3d(in[0], kernel, stride, padding, dilation, ceil_mode));
      }
      return one(max_pool2d(in[0], kernel, stride, padding, dilation, ceil_mode));
    }
    case OpKind::AvgPool1d:
    case OpKind::AvgPool2d:
    case OpKind::AvgPool3d: {
      const auto kernel = a.get_ints("kernel_size");
      const auto stride = a.get_ints("stride", {});
      const auto padding = a.get_ints("padding", {0});
      const bool ceil_mode = a.get_bool("ceil_mode", false);
      const bool include_pad = a.get_bool("count_include_pad", true);
      if (node.op == OpKind::AvgPool1d) {
        return one(avg_pool1d(in[0], kernel, stride, padding, ceil_mode, include_pad));
      }
      if (node.op == OpKind::AvgPool3d) {
        return one(avg_pool3d(in[0], kernel, stride, padding, ceil_mode, include_pad));
      }
      return one(avg_pool2d(in[0], kernel, stride, padding, ceil_mode, include_pad));
    }
    case OpKind::AdaptiveAvgPool2d:
      return one(adaptive_avg_pool2d(in[0], a.get_ints("output_size")));
    case OpKind::AdaptiveAvgPool3d:
      return one(adaptive_avg_pool3d(in[0], a.get_ints("output_size")));
    case OpKind::AdaptiveMaxPool1d:
      return one(adaptive_max_pool1d(in[0], a.get_ints("output_size")));
    case OpKind::AdaptiveMaxPool2d:
      return one(adaptive_max_pool2d(in[0], a.get_ints("output_size")));
    case OpKind::BatchNorm:
      // IR order: input, weight, bias[, running_mean, running_var]. The running stats are
      // cloned so that executing a graph never mutates the caller's values.
      return one(batch_norm(in[0], in.size() > 3 ? in[3].clone() : Tensor(),
                            in.size() > 4 ? in[4].clone() : Tensor(), in[1], in[2],
                            a.get_bool("training", false), a.get_float("momentum", 0.1),
                            a.get_float("eps", 1e-5)));
    case OpKind::LayerNorm:
      return one(layer_norm(in[0], a.get_ints("normalized_shape"), optional_input(in, 1),
                            optional_input(in, 2), a.get_float("eps", 1e-5)));
    case OpKind::RmsNorm:
      return one(rms_norm(in[0], a.get_ints("normalized_shape"), optional_input(in, 1),
                          a.has("eps") ? std::optional<double>(a.get_float("eps")) : std::nullopt));
    case OpKind::GroupNorm:
      return one(group_norm(in[0], a.get_int("num_groups"), optional_input(in, 1),
                            optional_input(in, 2), a.get_float("eps", 1e-5)));
    case OpKind::InstanceNorm:
      return one(instance_norm(in[0], optional_input(in, 1), optional_input(in, 2),
                               a.get_float("eps", 1e-5)));
    case OpKind::Dropout:
      return one(dropout(in[0], a.get_float("p", 0.5), a.get_bool("training", true), seed_of(a)));
    case OpKind::FeatureDropout:
      return one(
          feature_dropout(in[0], a.get_float("p", 0.5), a.get_bool("training", true), seed_of(a)));
    case OpKind::AlphaDropout:
      return one(
          alpha_dropout(in[0], a.get_float("p", 0.5), a.get_bool("training", true), seed_of(a)));
    case OpKind::FeatureAlphaDropout:
      return one(feature_alpha_dropout(in[0], a.get_float("p", 0.5), a.get_bool("training", true),
                                       seed_of(a)));
    case OpKind::Rrelu:
      return one(rrelu(in[0], a.get_float("lower", 1.0 / 8), a.get_float("upper", 1.0 / 3),
                       a.get_bool("training", true), seed_of(a)));
    case OpKind::RandLike:
      return one(rand_like(in[0], seed_of(a)));
    case OpKind::RandnLike:
      return one(randn_like(in[0], seed_of(a)));
    case OpKind::Rand:
      return one(rand(in[0], seed_of(a)));
    case OpKind::Randn:
      return one(randn(in[0], seed_of(a)));
    case OpKind::RandintLike:
      return one(randint_like(in[0], a.get_int("low", 0), a.get_int("high"), seed_of(a)));
    case OpKind::Bernoulli:
      if (a.has("p")) return one(bernoulli(in[0], a.get_float("p"), seed_of(a)));
      return one(bernoulli(in[0], seed_of(a)));
    case OpKind::Randperm:
      return one(randperm(in[0], a.get_int("dim", 0), seed_of(a)));
    case OpKind::Embedding:
      return one(embedding(in[0], in[1], optional_int(a, "padding_idx")));
    case OpKind::Reshape:
      return one(reshape(in[0], a.get_ints("shape")));
    case OpKind::Flatten:
      return one(flatten(in[0], a.get_int("start_dim", 0), a.get_int("end_dim", -1)));
    case OpKind::Squeeze:
      return one(squeeze(in[0], a.get_ints("dim", {})));
    case OpKind::Unsqueeze:
      return one(unsqueeze(in[0], a.get_int("dim")));
    case OpKind::Transpose:
      return one(transpose(in[0], a.get_int("dim0"), a.get_int("dim1")));
    case OpKind::Permute:
      return one(permute(in[0], a.get_ints("dims")));
    case OpKind::Expand:
      return one(expand(in[0], a.get_ints("size")));
    case OpKind::Slice:
      return one(slice(in[0], a.get_int("dim", 0), a.get_int("start", 0),
                       a.get_int("end", INT64_MAX), a.get_int("step", 1)));
    case OpKind::Select:
      return one(select(in[0], a.get_int("dim"), a.get_int("index")));
    case OpKind::Flip:
      return one(flip(in[0], a.get_ints("dims")));
    case OpKind::Roll:
      return one(roll(in[0], a.get_ints("shifts"), a.get_ints("dims", {})));
    case OpKind::Repeat:
      return one(repeat(in[0], a.get_ints("repeats")));
    case OpKind::PixelShuffle:
      return one(pixel_shuffle(in[0], a.get_int("upscale_factor")));
    case OpKind::PixelUnshuffle:
      return one(pixel_unshuffle(in[0], a.get_int("downscale_factor")));
    case OpKind::Diagonal:
      return one(
          diagonal(in[0], a.get_int("offset", 0), a.get_int("dim1", 0), a.get_int("dim2", 1)));
    case OpKind::SliceScatter:
      return one(slice_scatter(in[0], in[1], a.get_int("dim", 0), a.get_int("start", 0),
                               a.get_int("end", INT64_MAX), a.get_int("step", 1)));
    case OpKind::SelectScatter:
      return one(select_scatter(in[0], in[1], a.get_int("dim"), a.get_int("index")));
    case OpKind::Copy:
      return one(copy(in[0], in[1]));
    case OpKind::MaskedScatter:
      return one(masked_scatter(in[0], in[1], in[2]));
    case OpKind::Cat:
      return one(cat(in, a.get_int("dim", 0)));
    case OpKind::Stack:
      return one(stack(in, a.get_int("dim", 0)));
    case OpKind::Split: {
      const auto sizes = a.get_ints("split_size");
      if (sizes.size() == 1) return split(in[0], sizes[0], a.get_int("dim", 0));
      return split(in[0], IntList(sizes), a.get_int("dim", 0));
    }
    case OpKind::Chunk:
      return chunk(in[0], a.get_int("chunks"), a.get_int("dim", 0));
    case OpKind::Pad:
      return one(pad(in[0], a.get_ints("pad"), a.get_string("mode", "constant"),
                     a.get_float("value", 0.0)));
    case OpKind::Tril:
      return one(tril(in[0], a.get_int("diagonal", 0)));
    case OpKind::Triu:
      return one(triu(in[0], a.get_int("diagonal", 0)));
    case OpKind::Gather:
      return one(gather(in[0], a.get_int("dim"), in[1]));
    case OpKind::ScatterAdd:
      return one(scatter_add(in[0], a.get_int("dim"), in[1], in[2]));
    case OpKind::Scatter:
      return one(scatter(in[0], a.get_int("dim"), in[1], in[2]));
    case OpKind::ScatterReduce:
      return one(scatter_reduce(in[0], a.get_int("dim"), in[1], in[2],
                                a.get_string("reduce", "sum"), a.get_bool("include_self", true)));
    case OpKind::IndexAdd:
      return one(index_add(in[0], a.get_int("dim"), in[1], in[2], a.get_float("alpha", 1.0)));
    case OpKind::IndexPut:
      return one(index_put(in[0], in[1], in[2], a.get_bool("accumulate", false)));
    case OpKind::IndexSelect:
      return one(index_select(in[0], a.get_int("dim"), in[1]));
    case OpKind::Interpolate:
      return one(interpolate(in[0], a.get_ints("size"), a.get_string("mode", "nearest"),
                             a.get_bool("align_corners", false)));
    case OpKind::Im2col:
      return one(im2col(in[0], a.get_ints("kernel_size"), a.get_ints("dilation", {1, 1}),
                        a.get_ints("padding", {0, 0}), a.get_ints("stride", {1, 1})));
    case OpKind::Col2im:
      return one(col2im(in[0], a.get_ints("output_size"), a.get_ints("kernel_size"),
                        a.get_ints("dilation", {1, 1}), a.get_ints("padding", {0, 0}),
                        a.get_ints("stride", {1, 1})));
    case OpKind::Cast:
      return one(cast(in[0], value_dtype(a.get_dtype("dtype"), floating)));
    case OpKind::Contiguous:
      return one(contiguous(in[0], a.get_string("memory_format", "contiguous_format")));
    case OpKind::AddScalar:
      return one(add_scalar(in[0], scalar_attribute(a)));
    case OpKind::SubScalar:
      return one(sub_scalar(in[0], scalar_attribute(a)));
    case OpKind::RsubScalar:
      return one(rsub_scalar(in[0], scalar_attribute(a)));
    case OpKind::MulScalar:
      return one(mul_scalar(in[0], scalar_attribute(a)));
    case OpKind::DivScalar:
      return one(div_scalar(in[0], scalar_attribute(a)));
    case OpKind::PowScalar:
      return one(pow_scalar(in[0], scalar_attribute(a)));
    case OpKind::RpowScalar:
      return one(rpow_scalar(in[0], scalar_attribute(a)));
  }
  throw Error("run_node: unknown op kind " + std::to_string(static_cast<int>(node.op)));
}

Execution execute(const Graph& graph, const TensorMap& leaves, const ExecutionOptions& options) {
  std::vector<Tensor> values(graph.values().size());
  for (LeafKind kind : {LeafKind::Input, LeafKind::Parameter}) {
    for (ValueId id : graph.leaves(kind)) {
      const Tensor& t = leaf_value(graph, leaves, id);
      const Dtype run_dtype = value_dtype(t.dtype(), options.floating_dtype);
      values[id] = t.to(run_dtype);  // a differentiable cast when t requires grad
      const Value& leaf = graph.value(id);
      if (leaf.has_layout()) {
        // The input in its layout, as the paths build it (a copy into a strided buffer).
        Tensor laid_out = empty_strided(leaf.type.shape, leaf.strides, dtype(run_dtype));
        laid_out.copy_(values[id]);
        values[id] = laid_out;
      }
    }
  }
  Node scratch;  // a node given its declared defaults
  for (std::size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& node = graph.nodes()[n];
    std::vector<Tensor> inputs;
    inputs.reserve(node.inputs.size());
    for (ValueId id : node.inputs) inputs.push_back(values[id]);
    std::vector<Tensor> outputs;
    try {
      outputs = options.as_written && (is_in_place(node) || is_writeback(node))
                    ? run_node_as_written(node, inputs)
                    : run_node(with_declared_defaults(graph, node, scratch), inputs,
                               options.floating_dtype);
    } catch (const Error& e) {
      throw Error(node_label(graph, n) + ": " + e.what());
    }
    if (options.after_node) options.after_node(n, inputs, outputs);
    if (outputs.size() != node.outputs.size()) {
      throw Error(node_label(graph, n) + ": produced " + std::to_string(outputs.size()) +
                  " outputs, the graph declares " + std::to_string(node.outputs.size()));
    }
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const TensorType& declared = graph.type(node.outputs[k]);
      const Dtype expected_dtype = value_dtype(declared.dtype, options.floating_dtype);
      // An op that turns integers into the default float (sqrt of an int64) makes float32
      // even in a float64 run: the shadow keeps every floating value in its own dtype.
      if (options.floating_dtype && is_floating(declared.dtype) && outputs[k].is_floating_point() &&
          outputs[k].dtype() != expected_dtype) {
        outputs[k] = outputs[k].to(expected_dtype);
      }
      if (outputs[k].sizes() != declared.shape || outputs[k].dtype() != expected_dtype) {
        throw Error(node_label(graph, n) + ": output " + std::to_string(k) + " is " +
                    dtype_name(outputs[k].dtype()) + shape_str(outputs[k].sizes()) +
                    ", but the graph declares " + dtype_name(expected_dtype) +
                    shape_str(declared.shape));
      }
      values[node.outputs[k]] = outputs[k];
    }
  }
  Execution result;
  for (ValueId id : graph.outputs()) result.outputs.push_back(values[id]);
  if (options.keep_values) result.values = std::move(values);
  return result;
}

GradientExecution execute_with_gradients(const Graph& graph, const TensorMap& leaves,
                                         const std::vector<Tensor>& cotangents,
                                         const ExecutionOptions& options) {
  // Fresh leaves that require grad, so the caller's tensors are never touched.
  TensorMap tracked;
  std::vector<std::string> names;
  for (const auto& [name, value] : leaves) {
    Tensor leaf = value.detach();
    if (leaf.is_floating_point()) {
      leaf.requires_grad_(true);
      names.push_back(name);
    }
    tracked.emplace(name, leaf);
  }
  GradientExecution result;
  result.forward = execute(graph, tracked, options);
  if (cotangents.size() != result.forward.outputs.size()) {
    throw Error("execute_with_gradients: " + std::to_string(cotangents.size()) +
                " cotangents for " + std::to_string(result.forward.outputs.size()) + " outputs");
  }
  Tensor objective;
  for (std::size_t i = 0; i < cotangents.size(); ++i) {
    const Tensor& out = result.forward.outputs[i];
    if (!out.is_floating_point() || !out.requires_grad()) continue;
    const Tensor term = sum(mul(out, cotangents[i].to(out.dtype())));
    objective = objective.defined() ? add(objective, term) : term;
  }
  std::vector<Tensor> sources;
  for (const std::string& name : names) sources.push_back(tracked.at(name));
  if (!objective.defined() || sources.empty()) {
    for (const std::string& name : names) result.gradients[name] = zeros_like(tracked.at(name));
    return result;
  }
  const std::vector<Tensor> grads =
      autograd::grad({objective}, sources, {}, false, false, /*allow_unused=*/true);
  for (std::size_t i = 0; i < names.size(); ++i) {
    result.gradients[names[i]] = grads[i].defined() ? grads[i] : zeros_like(sources[i]);
  }
  // Gradients are reported in each leaf's own dtype.
  for (const std::string& name : names) {
    const Dtype original = leaves.at(name).dtype();
    result.gradients[name] = result.gradients[name].to(original);
  }
  return result;
}

TensorMap project_to_layouts(const Graph& graph, TensorMap values) {
  for (ValueId id : graph.inputs()) {
    const Value& leaf = graph.value(id);
    const auto it = values.find(leaf.name);
    if (!leaf.has_layout() || it == values.end() || !it->second.defined()) continue;
    Tensor projected = it->second.detach();
    bool repeated = false;
    for (std::size_t d = 0; d < leaf.strides.size(); ++d) {
      const std::int64_t size = leaf.type.shape[d];
      if (leaf.strides[d] != 0 || size <= 1) continue;
      const auto dim = static_cast<std::int64_t>(d);
      projected = projected.narrow(dim, 0, 1).expand(leaf.type.shape);
      repeated = true;
    }
    if (repeated) it->second = projected.contiguous();
  }
  return values;
}

std::vector<Tensor> random_cotangents(const Graph& graph, std::uint64_t seed) {
  Generator gen(seed);
  std::vector<Tensor> result;
  for (ValueId id : graph.outputs()) {
    const TensorType& type = graph.type(id);
    if (!is_floating(type.dtype)) {
      result.push_back(zeros(type.shape, dtype(type.dtype)));
      continue;
    }
    std::vector<double> v(graph.num_elements(id));
    for (double& x : v) x = static_cast<double>(static_cast<float>(2.0 * gen.uniform() - 1.0));
    result.push_back(from_blob(v.data(), type.shape, Dtype::Float64).to(type.dtype));
  }
  return result;
}

const Tensor& leaf_value(const Graph& graph, const TensorMap& leaves, ValueId id) {
  const Value& leaf = graph.value(id);
  const std::optional<LeafKind> kind = graph.leaf_kind(id);
  const auto it = leaves.find(leaf.name);
  if (it == leaves.end() || !it->second.defined()) {
    throw Error(std::string(kind == LeafKind::Parameter ? "parameter" : "input") + " '" +
                leaf.name + "' has no value");
  }
  const Tensor& t = it->second;
  if (t.sizes() != leaf.type.shape || t.dtype() != leaf.type.dtype) {
    throw Error("value of '" + leaf.name + "' is " + dtype_name(t.dtype()) + shape_str(t.sizes()) +
                ", but the graph declares " + to_string(leaf.type));
  }
  return t;
}

}  // namespace weft::ir
