// Each op's expression in the emitted forward (the Emitter of source_emitter.h): every OpKind
// written as the TorchScript or PyTorch call that torch_eager.cpp's lower_node makes, with its
// attributes spelled out (defaults filled in) so that the text does not depend on PyTorch's
// defaults. The switch has no default, so a new op without a row does not compile.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "source_emitter.h"
#include "source_literals.h"
#include "weft/error.h"
#include "weft/ir/inplace.h"
#include "weft/ir/op_schema.h"
#include "weft/ops.h"  // rms_norm_default_eps

namespace weft::oracle::source_detail {

std::string Emitter::rms_norm_call(const ir::Node& node, const Attributes& a,
                                   const std::vector<std::string>& in) const {
  const std::vector<std::int64_t> shape = a.get_ints("normalized_shape");
  if (!script()) {
    std::vector<std::string> args{in[0], ints_literal(shape), optional_input(in, 1)};
    if (a.has("eps")) args.push_back("eps=" + float_literal(a.get_float("eps")));
    return call("F.rms_norm", args);
  }
  const Dtype dtype = graph_.type(node.inputs[0]).dtype;
  const bool reduced = is_reduced_floating(dtype);
  const std::string wide = reduced ? in[0] + ".float()" : in[0];
  const double eps = a.has("eps") ? a.get_float("eps") : rms_norm_default_eps(dtype);
  std::vector<std::int64_t> dims;
  for (std::size_t i = 0; i < shape.size(); ++i) dims.push_back(-1 - static_cast<std::int64_t>(i));
  std::string out = call(
      "torch.mul",
      {wide,
       call("torch.rsqrt", {call("torch.add", {call("torch.mean", {call("torch.pow", {wide, "2"}),
                                                                   ints_literal(dims), "True"}),
                                               float_literal(eps)})})});
  if (reduced) out += ".type_as(" + in[0] + ")";
  return in.size() > 1 ? call("torch.mul", {out, in[1]}) : out;
}

std::string Emitter::loss_call(OpKind kind, const std::string& op,
                               const std::vector<std::string>& in, const Attributes& a) const {
  const std::string reduction = a.get_string("reduction");
  std::vector<std::string> args = {in[0], in[1]};
  std::string extra;
  if (kind == OpKind::SmoothL1Loss) extra = "beta";
  if (kind == OpKind::HuberLoss) extra = "delta";
  if (script()) {
    args.push_back(reduction_number(a));
    if (!extra.empty()) args.push_back(float_literal(a.get_float(extra)));
    return call("torch." + op, args);
  }
  args.push_back("reduction=" + string_literal(reduction));
  if (!extra.empty()) args.push_back(extra + "=" + float_literal(a.get_float(extra)));
  return call("F." + op, args);
}

std::string Emitter::kl_div_call(const ir::Node& node, const std::vector<std::string>& in,
                                 const Attributes& a) const {
  const std::string reduction = a.get_string("reduction");
  const std::string log_target = "log_target=" + bool_literal(a.get_bool("log_target"));
  if (!script()) {
    return call("F.kl_div", {in[0], in[1], "reduction=" + string_literal(reduction), log_target});
  }
  if (reduction != "batchmean") {
    return call("torch.kl_div", {in[0], in[1], reduction_number(a), log_target});
  }
  const std::string total = call("torch.kl_div", {in[0], in[1], "2", log_target});
  if (shape_of(node.inputs.at(0)).empty()) return total;
  return "(" + total + " / " + in[0] + ".size(0))";
}

std::string Emitter::classification_loss_call(OpKind kind, const std::vector<std::string>& in,
                                              const Attributes& a) const {
  const std::string reduction = a.get_string("reduction");
  const std::string ignore_index = int_literal(a.get_int("ignore_index", -100));
  const bool cross_entropy = kind == OpKind::CrossEntropyLoss;
  const std::string smoothing = float_literal(a.get_float("label_smoothing", 0.0));
  if (script()) {
    std::vector<std::string> args = {in[0], in[1], optional_input(in, 2), reduction_number(a),
                                     ignore_index};
    if (cross_entropy) args.push_back(smoothing);
    return call(cross_entropy ? "torch.cross_entropy_loss" : "torch.nll_loss_nd", args);
  }
  std::vector<std::string> args = {in[0], in[1], "weight=" + optional_input(in, 2),
                                   "ignore_index=" + ignore_index,
                                   "reduction=" + string_literal(reduction)};
  if (cross_entropy) args.push_back("label_smoothing=" + smoothing);
  return call(cross_entropy ? "F.cross_entropy" : "F.nll_loss", args);
}

std::string Emitter::expression(std::size_t n, const ir::Node& node, const Attributes& a,
                                const std::vector<std::string>& in) const {
  const std::string op(ir::op_name(node.op));
  const std::string x = in.empty() ? std::string() : in[0];
  switch (node.op) {
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Log2:
    case OpKind::Sqrt:
    case OpKind::Rsqrt:
    case OpKind::Reciprocal:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Tan:
    case OpKind::Asin:
    case OpKind::Acos:
    case OpKind::Atan:
    case OpKind::Sinh:
    case OpKind::Cosh:
    case OpKind::Tanh:
    case OpKind::Erf:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
    case OpKind::Sign:
    case OpKind::Trunc:
    case OpKind::Frac:
    case OpKind::Log1p:
    case OpKind::Expm1:
    case OpKind::Log10:
    case OpKind::Exp2:
    case OpKind::Asinh:
    case OpKind::Acosh:
    case OpKind::Atanh:
    case OpKind::Erfinv:
    case OpKind::Lgamma:
    case OpKind::Digamma:
    case OpKind::Isnan:
    case OpKind::Isinf:
    case OpKind::Square:
    case OpKind::Erfc:
    case OpKind::Sinc:
    case OpKind::Deg2rad:
    case OpKind::Rad2deg:
    case OpKind::Isfinite:
    case OpKind::Signbit:
    case OpKind::Atan2:
    case OpKind::Hypot:
    case OpKind::Logaddexp:
    case OpKind::Fmod:
    case OpKind::Remainder:
    case OpKind::Logaddexp2:
    case OpKind::Xlogy:
    case OpKind::Copysign:
    case OpKind::Fmax:
    case OpKind::Fmin:
    case OpKind::Lerp:
    case OpKind::Dot:
    case OpKind::Mv:
    case OpKind::Outer:
    case OpKind::Trace:
    case OpKind::Sigmoid:
    case OpKind::Relu:
    case OpKind::Eq:
    case OpKind::Ne:
    case OpKind::Lt:
    case OpKind::Le:
    case OpKind::Gt:
    case OpKind::Ge:
    case OpKind::LogicalAnd:
    case OpKind::LogicalOr:
    case OpKind::LogicalXor:
    case OpKind::LogicalNot:
    case OpKind::Where:
    case OpKind::Mul:
    case OpKind::Pow:
    case OpKind::Maximum:
    case OpKind::Minimum:
    case OpKind::Matmul:
    case OpKind::Mm:
    case OpKind::Bmm:
      return call("torch." + op, in);
    // Python writes the operators users write; TorchScript the functions.
    case OpKind::BitwiseAnd:
    case OpKind::BitwiseOr:
    case OpKind::BitwiseXor: {
      if (script()) return call("torch." + op, in);
      const char* symbol = node.op == OpKind::BitwiseAnd  ? " & "
                           : node.op == OpKind::BitwiseOr ? " | "
                                                          : " ^ ";
      return "(" + in[0] + symbol + in[1] + ")";
    }
    case OpKind::BitwiseNot:
      return script() ? call("torch.bitwise_not", {x}) : "(~" + x + ")";
    case OpKind::LeakyRelu:
      return call2("torch.leaky_relu", "F.leaky_relu",
                   {x, float_literal(a.get_float("negative_slope"))});
    case OpKind::Elu:
      return call2("torch.elu", "F.elu", {x, float_literal(a.get_float("alpha"))});
    case OpKind::Gelu:
      return call2("torch.gelu", "F.gelu",
                   {x, "approximate=" + string_literal(a.get_string("approximate"))});
    case OpKind::Silu:
      return call2("torch.silu", "F.silu", {x});
    case OpKind::Hardswish:
    case OpKind::Hardsigmoid:
    case OpKind::Relu6:
    case OpKind::Mish:
    case OpKind::Selu:
      return call2("torch." + op, "F." + op, {x});
    case OpKind::Logsigmoid:
      return call2("torch.log_sigmoid", "F.logsigmoid", {x});
    case OpKind::Celu:
      return call2("torch.celu", "F.celu", {x, float_literal(a.get_float("alpha"))});
    // F.softsign and F.tanhshrink are Python functions of other ops (no ATen op of their own):
    // TorchScript defined from C++ has no F, so the script spells out their bodies.
    case OpKind::Softsign:
      if (script()) return "(" + x + " / (torch.abs(" + x + ") + 1))";
      return call("F.softsign", {x});
    case OpKind::Tanhshrink:
      if (script()) return "(" + x + " - torch.tanh(" + x + "))";
      return call("F.tanhshrink", {x});
    case OpKind::Threshold:
      return call2(
          "torch.threshold", "F.threshold",
          {x, float_literal(a.get_float("threshold")), float_literal(a.get_float("value"))});
    case OpKind::Hardshrink:
    case OpKind::Softshrink:
      return call2("torch." + op, "F." + op, {x, float_literal(a.get_float("lambd"))});
    case OpKind::Softplus:
      return call2(
          "torch.softplus", "F.softplus",
          {x, float_literal(a.get_float("beta")), float_literal(a.get_float("threshold"))});
    case OpKind::Hardtanh:
      return call2(
          "torch.hardtanh", "F.hardtanh",
          {x, float_literal(a.get_float("min_val")), float_literal(a.get_float("max_val"))});
    case OpKind::Clamp:
      // Floating bounds, as the engine's: an integral input is promoted like torch.clamp's.
      return call("torch.clamp",
                  {x, "min=" + optional_float(a, "min"), "max=" + optional_float(a, "max")});
    case OpKind::Add:
    case OpKind::Sub:
      return call("torch." + op,
                  {in[0], in[1], "alpha=" + multiplier_literal(a.get_float("alpha"))});
    case OpKind::Div:
      if (!a.has("rounding_mode")) return call("torch.div", in);
      return call("torch.div",
                  {in[0], in[1], "rounding_mode=" + string_literal(a.get_string("rounding_mode"))});
    case OpKind::Sum:
    case OpKind::Mean:
      return call("torch." + op, {x, "dim=" + optional_dims(a.get_ints("dim")),
                                  "keepdim=" + bool_literal(a.get_bool("keepdim"))});
    case OpKind::Prod: {
      if (a.has("dim")) {
        return call("torch.prod", {x, int_literal(a.get_int("dim")),
                                   "keepdim=" + bool_literal(a.get_bool("keepdim"))});
      }
      // prod without a dim ignores keepdim in PyTorch; the IR keeps every dim as size 1.
      const std::size_t rank = shape_of(node.inputs[0]).size();
      if (!a.get_bool("keepdim") || rank == 0) return call("torch.prod", {x});
      return call("torch.prod", {x}) + ".reshape(" +
             ints_literal(std::vector<std::int64_t>(rank, 1)) + ")";
    }
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Sort:
    case OpKind::Topk:
    case OpKind::Cummax:
    case OpKind::Cummin:
    case OpKind::VarMean:
    case OpKind::StdMean:
    case OpKind::Split:
    case OpKind::Chunk:
      break;  // written by emit_node
    case OpKind::Argmax:
    case OpKind::Argmin:
      return call("torch." + op, {x, "dim=" + optional_int(a, "dim"),
                                  "keepdim=" + bool_literal(a.get_bool("keepdim"))});
    case OpKind::Var:
    case OpKind::Std:
      return call("torch." + op, {x, optional_dims(a.get_ints("dim")),
                                  "correction=" + int_literal(a.get_int("correction")),
                                  "keepdim=" + bool_literal(a.get_bool("keepdim"))});
    case OpKind::Logsumexp:
      return call("torch.logsumexp", {x, ints_literal(a.get_ints("dim")),
                                      "keepdim=" + bool_literal(a.get_bool("keepdim"))});
    case OpKind::Amax:
    case OpKind::Amin: {
      // The IR's empty list is every dim: written out, so the program says what it reduces
      // ([0] for a rank-0 input).
      std::vector<std::int64_t> dims = a.get_ints("dim");
      const std::size_t rank = shape_of(node.inputs[0]).size();
      if (dims.empty()) {
        for (std::size_t d = 0; d < std::max<std::size_t>(rank, 1); ++d)
          dims.push_back(static_cast<std::int64_t>(d));
      }
      return call("torch." + op,
                  {x, ints_literal(dims), "keepdim=" + bool_literal(a.get_bool("keepdim"))});
    }
    case OpKind::Any:
    case OpKind::All: {
      if (a.has("dim")) {
        return call("torch." + op, {x, int_literal(a.get_int("dim")),
                                    "keepdim=" + bool_literal(a.get_bool("keepdim"))});
      }
      // torch.any(x) has no keepdim; the IR keeps every dim as size 1 (as prod).
      const std::size_t rank = shape_of(node.inputs[0]).size();
      if (!a.get_bool("keepdim") || rank == 0) return call("torch." + op, {x});
      return call("torch." + op, {x}) + ".reshape(" +
             ints_literal(std::vector<std::int64_t>(rank, 1)) + ")";
    }
    case OpKind::Cumsum:
    case OpKind::Cumprod:
    case OpKind::Logcumsumexp:
      return call("torch." + op, {x, int_literal(a.get_int("dim"))});
    case OpKind::Argsort:
      return call("torch.argsort",
                  {x, "dim=" + int_literal(a.get_int("dim")),
                   "descending=" + bool_literal(a.get_bool("descending")) + stable_argument(a)});
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
      return call("torch." + op, {x, int_literal(a.get_int("dim"))});
    case OpKind::Linear:
      return call2("torch.linear", "F.linear", {in[0], in[1], optional_input(in, 2)});
    case OpKind::Cdist:
      return call("torch.cdist", {in[0], in[1], float_literal(a.get_float("p"))});
    case OpKind::Pdist:
      return call2("torch.pdist", "F.pdist", {x, float_literal(a.get_float("p"))});
    case OpKind::MseLoss:
    case OpKind::L1Loss:
    case OpKind::SmoothL1Loss:
    case OpKind::HuberLoss:
      return loss_call(node.op, op, in, a);
    case OpKind::NllLoss:
    case OpKind::CrossEntropyLoss:
      return classification_loss_call(node.op, in, a);
    case OpKind::BinaryCrossEntropyWithLogits:
      if (script()) {
        return call(
            "torch.binary_cross_entropy_with_logits",
            {in[0], in[1], optional_input(in, 2), optional_input(in, 3), reduction_number(a)});
      }
      return call("F.binary_cross_entropy_with_logits",
                  {in[0], in[1], "weight=" + optional_input(in, 2),
                   "reduction=" + string_literal(a.get_string("reduction")),
                   "pos_weight=" + optional_input(in, 3)});
    case OpKind::KlDiv:
      return kl_div_call(node, in, a);
    case OpKind::Addcmul:
    case OpKind::Addcdiv:
      return call("torch." + op,
                  {in[0], in[1], in[2], "value=" + multiplier_literal(a.get_float("value", 1.0))});
    case OpKind::Baddbmm:
      return call("torch.baddbmm",
                  {in[0], in[1], in[2], "beta=" + multiplier_literal(a.get_float("beta", 1.0)),
                   "alpha=" + multiplier_literal(a.get_float("alpha", 1.0))});
    case OpKind::Logit:
      if (!a.has("eps")) return call("torch.logit", {x});
      return call("torch.logit", {x, "eps=" + float_literal(a.get_float("eps"))});
    case OpKind::NanToNum:
      return call("torch.nan_to_num",
                  {x, "nan=" + optional_float(a, "nan"), "posinf=" + optional_float(a, "posinf"),
                   "neginf=" + optional_float(a, "neginf")});
    // TorchScript defined from C++ has no F: torch.glu / torch.prelu reach the same ATen ops.
    case OpKind::Glu:
      if (script()) return call("torch.glu", {x, int_literal(a.get_int("dim", -1))});
      return call("F.glu", {x, "dim=" + int_literal(a.get_int("dim", -1))});
    case OpKind::Prelu:
      return call2("torch.prelu", "F.prelu", {in[0], in[1]});
    case OpKind::Addmm:
      return call("torch.addmm",
                  {in[0], in[1], in[2], "beta=" + multiplier_literal(a.get_float("beta")),
                   "alpha=" + multiplier_literal(a.get_float("alpha"))});
    case OpKind::Conv1d:
    case OpKind::Conv2d:
      return call("torch." + op,
                  {in[0], in[1], optional_input(in, 2), spatial(a.get_ints("stride")),
                   spatial(a.get_ints("padding")), spatial(a.get_ints("dilation")),
                   int_literal(a.get_int("groups"))});
    case OpKind::ConvTranspose1d:
    case OpKind::ConvTranspose2d:
      return call("torch." + op,
                  {in[0], in[1], optional_input(in, 2), spatial(a.get_ints("stride")),
                   spatial(a.get_ints("padding")), spatial(a.get_ints("output_padding")),
                   int_literal(a.get_int("groups")), spatial(a.get_ints("dilation"))});
    case OpKind::MaxPool1d:
    case OpKind::MaxPool2d:
    case OpKind::MaxPool3d:
      // An empty stride means stride = kernel_size.
      return call("torch." + op,
                  {x, spatial(a.get_ints("kernel_size")), spatial(a.get_ints("stride")),
                   spatial(a.get_ints("padding")), spatial(a.get_ints("dilation")),
                   bool_literal(a.get_bool("ceil_mode"))});
    case OpKind::AvgPool1d:
    case OpKind::AvgPool2d:
    case OpKind::AvgPool3d:
      return call2("torch." + op, node.op == OpKind::AvgPool1d ? "torch.avg_pool1d" : "F." + op,
                   {x, spatial(a.get_ints("kernel_size")), spatial(a.get_ints("stride")),
                    spatial(a.get_ints("padding")), bool_literal(a.get_bool("ceil_mode")),
                    bool_literal(a.get_bool("count_include_pad"))});
    case OpKind::AdaptiveAvgPool2d:
    case OpKind::AdaptiveAvgPool3d:
      return call2("torch." + op, "F." + op, {x, ints_literal(a.get_ints("output_size"))});
    // ATen's adaptive max pools return (values, indices); F's return the values alone.
    case OpKind::AdaptiveMaxPool1d:
    case OpKind::AdaptiveMaxPool2d:
      if (script())
        return call("torch." + op, {x, ints_literal(a.get_ints("output_size"))}) + "[0]";
      return call("F." + op, {x, ints_literal(a.get_ints("output_size"))});
    case OpKind::BatchNorm: {
      // IR order: input, weight, bias[, running_mean, running_var]. Running stats are
      // detached copies: ATen updates them in place in training mode and gives them no
      // gradient.
      auto stat = [&](std::size_t i) {
        return i < in.size() ? in[i] + ".detach().clone()" : std::string("None");
      };
      return call(
          "torch.batch_norm",
          {in[0], in[1], in[2], stat(3), stat(4), bool_literal(a.get_bool("training")),
           float_literal(a.get_float("momentum")), float_literal(a.get_float("eps")), "True"});
    }
    case OpKind::LayerNorm:
      return call("torch.layer_norm",
                  {x, ints_literal(a.get_ints("normalized_shape")), optional_input(in, 1),
                   optional_input(in, 2), float_literal(a.get_float("eps"))});
    case OpKind::RmsNorm:
      return rms_norm_call(node, a, in);
    case OpKind::GroupNorm:
      return script() ? call("torch.group_norm",
                             {x, int_literal(a.get_int("num_groups")), optional_input(in, 1),
                              optional_input(in, 2), float_literal(a.get_float("eps")), "True"})
                      : call("F.group_norm",
                             {x, int_literal(a.get_int("num_groups")), optional_input(in, 1),
                              optional_input(in, 2), float_literal(a.get_float("eps"))});
    case OpKind::InstanceNorm:
      // The input's statistics, no running statistics (F.instance_norm's defaults).
      return script() ? call("torch.instance_norm",
                             {x, optional_input(in, 1), optional_input(in, 2), "None", "None",
                              "True", "0.1", float_literal(a.get_float("eps")), "True"})
                      : call("F.instance_norm",
                             {x, "None", "None", optional_input(in, 1), optional_input(in, 2),
                              "True", "0.1", float_literal(a.get_float("eps"))});
    // Random draws: the framework's generator, which every path seeds before each call.
    case OpKind::Dropout:
    case OpKind::AlphaDropout:
    case OpKind::FeatureAlphaDropout:
      return call2("torch." + op, "F." + op,
                   {x, float_literal(a.get_float("p")), bool_literal(a.get_bool("training"))});
    case OpKind::FeatureDropout: {
      // F.dropout1d/2d/3d on a batched (N, C, *) input are feature_dropout.
      const std::size_t rank = shape_of(node.inputs[0]).size();
      const std::string python = rank >= 3 && rank <= 5
                                     ? "F.dropout" + std::to_string(rank - 2) + "d"
                                     : std::string("torch.feature_dropout");
      return call2("torch.feature_dropout", python,
                   {x, float_literal(a.get_float("p")), bool_literal(a.get_bool("training"))});
    }
    case OpKind::Rrelu:
      return call2("torch.rrelu", "F.rrelu",
                   {x, float_literal(a.get_float("lower")), float_literal(a.get_float("upper")),
                    bool_literal(a.get_bool("training"))});
    case OpKind::RandLike:
    case OpKind::RandnLike:
      return call("torch." + op, {x});
    case OpKind::Rand:
    case OpKind::Randn:  // the factory, as programs write it: torch.rand(x.shape, ...)
      return call("torch." + op, {x + (script() ? ".size()" : ".shape"), "dtype=" + x + ".dtype",
                                  "device=" + x + ".device"});
    case OpKind::RandintLike:
      return call("torch.randint_like",
                  {x, int_literal(a.get_int("low")), int_literal(a.get_int("high"))});
    case OpKind::Bernoulli:
      if (a.has("p")) return call("torch.bernoulli", {x, float_literal(a.get_float("p"))});
      return call("torch.bernoulli", {x});
    case OpKind::Randperm:
      return call("torch.randperm",
                  {x + ".size(" + int_literal(a.get_int("dim")) + ")", "device=" + x + ".device"});
    case OpKind::Embedding: {
      // torch.nn.functional.embedding: padding_idx checked and wrapped in Python, -1 = none.
      const ir::Shape& weight = shape_of(node.inputs[1]);
      std::int64_t pad = -1;
      if (a.has("padding_idx")) {
        const std::int64_t rows = weight.empty() ? 0 : weight[0];
        const std::int64_t idx = a.get_int("padding_idx");
        if (idx >= rows || idx < -rows) refuse(n, "Padding_idx must be within num_embeddings");
        pad = idx < 0 ? idx + rows : idx;
      }
      if (script()) return call("torch.embedding", {in[1], in[0], int_literal(pad)});
      if (!a.has("padding_idx")) return call("F.embedding", {in[0], in[1]});
      return call("F.embedding", {in[0], in[1], "padding_idx=" + int_literal(pad)});
    }
    case OpKind::Reshape:
      return call("torch.reshape", {x, ints_literal(a.get_ints("shape"))});
    case OpKind::Flatten:
      return call("torch.flatten",
                  {x, int_literal(a.get_int("start_dim")), int_literal(a.get_int("end_dim"))});
    case OpKind::Squeeze:
      return squeeze(n, x, a.get_ints("dim"), shape_of(node.inputs[0]).size());
    case OpKind::Unsqueeze:
      return call("torch.unsqueeze", {x, int_literal(a.get_int("dim"))});
    case OpKind::Transpose:
      return call("torch.transpose",
                  {x, int_literal(a.get_int("dim0")), int_literal(a.get_int("dim1"))});
    case OpKind::Permute:
      return x + ".permute(" + ints_literal(a.get_ints("dims")) + ")";
    case OpKind::Expand:
      return x + ".expand(" + ints_literal(a.get_ints("size")) + ")";
    case OpKind::Slice:
      return slice(x, a, static_cast<std::int64_t>(shape_of(node.inputs[0]).size()));
    case OpKind::Select:
      return call("torch.select",
                  {x, int_literal(a.get_int("dim")), int_literal(a.get_int("index"))});
    case OpKind::SliceScatter:
      return call("torch.slice_scatter",
                  {x, in[1], int_literal(a.get_int("dim")), int_literal(a.get_int("start")),
                   int_literal(a.get_int("end")), int_literal(a.get_int("step"))});
    case OpKind::SelectScatter:
      return call("torch.select_scatter",
                  {x, in[1], int_literal(a.get_int("dim")), int_literal(a.get_int("index"))});
    // copy_ has no out-of-place function: a fresh copy of self is written.
    case OpKind::Copy:
      return x + ".clone().copy_(" + in[1] + ")";
    case OpKind::MaskedScatter:
      return call("torch.masked_scatter", in);
    case OpKind::Cat:
    case OpKind::Stack: {
      std::string list = "[";
      for (std::size_t i = 0; i < in.size(); ++i) list += (i > 0 ? ", " : "") + in[i];
      return call("torch." + op, {list + "]", int_literal(a.get_int("dim"))});
    }
    case OpKind::Pad: {
      // The non-constant modes take no value: the IR's default 0.0 is passed as None there
      // (a non-zero value stays, and ATen refuses it), as torch_eager.cpp does.
      const std::string mode = a.get_string("mode");
      const double value = a.get_float("value");
      const std::string fill =
          mode != "constant" && value == 0.0 ? std::string("None") : float_literal(value);
      if (script()) {
        return call("torch.pad", {x, ints_literal(a.get_ints("pad")), string_literal(mode), fill});
      }
      return call("F.pad", {x, ints_literal(a.get_ints("pad")), "mode=" + string_literal(mode),
                            "value=" + fill});
    }
    case OpKind::Flip:
      return call("torch.flip", {x, ints_literal(a.get_ints("dims"))});
    case OpKind::PixelShuffle:
      return call2("torch.pixel_shuffle", "F.pixel_shuffle",
                   {x, int_literal(a.get_int("upscale_factor"))});
    case OpKind::PixelUnshuffle:
      return call2("torch.pixel_unshuffle", "F.pixel_unshuffle",
                   {x, int_literal(a.get_int("downscale_factor"))});
    case OpKind::Roll: {
      // No dims: the argument left at its default (the flattened tensor rolls).
      const std::vector<std::int64_t> dims = a.get_ints("dims");
      if (dims.empty()) return call("torch.roll", {x, ints_literal(a.get_ints("shifts"))});
      return call("torch.roll", {x, ints_literal(a.get_ints("shifts")), ints_literal(dims)});
    }
    case OpKind::Repeat:
      return x + ".repeat(" + ints_literal(a.get_ints("repeats")) + ")";
    case OpKind::Diagonal:
      return call("torch.diagonal",
                  {x, int_literal(a.get_int("offset")), int_literal(a.get_int("dim1")),
                   int_literal(a.get_int("dim2"))});
    case OpKind::Tril:
    case OpKind::Triu:
      return call("torch." + op, {x, int_literal(a.get_int("diagonal"))});
    case OpKind::Gather:
    case OpKind::IndexSelect:
      return call("torch." + op, {in[0], int_literal(a.get_int("dim")), in[1]});
    case OpKind::ScatterAdd:
      return call("torch.scatter_add", {in[0], int_literal(a.get_int("dim")), in[1], in[2]});
    case OpKind::Scatter:
      return call("torch.scatter", {in[0], int_literal(a.get_int("dim")), in[1], in[2]});
    case OpKind::ScatterReduce:
      return call("torch.scatter_reduce",
                  {in[0], int_literal(a.get_int("dim")), in[1], in[2],
                   string_literal(a.get_string("reduce")),
                   "include_self=" + bool_literal(a.get_bool("include_self"))});
    case OpKind::IndexAdd:
      return call("torch.index_add", {in[0], int_literal(a.get_int("dim")), in[1], in[2],
                                      "alpha=" + float_literal(a.get_float("alpha"))});
    case OpKind::IndexPut:
      return call("torch.index_put",
                  {in[0], index_list(in[1]), in[2], accumulate_argument(a.get_bool("accumulate"))});
    case OpKind::MaskedFill:
      return call("torch.masked_fill", {in[0], in[1], float_literal(a.get_float("value"))});
    case OpKind::Interpolate:
      return interpolate(n, x, a, shape_of(node.inputs[0]));
    // F.unfold / F.fold; TorchScript defined from C++ has no F (nor torch._C._nn): its torch.*
    // names every ATen op, so it calls aten::im2col / aten::col2im (same argument order).
    case OpKind::Im2col:
    case OpKind::Col2im: {
      const bool fold = node.op == OpKind::Col2im;
      std::vector<std::string> args{x};
      for (const char* name : {"output_size", "kernel_size", "dilation", "padding", "stride"}) {
        if (!fold && std::string_view(name) == "output_size") continue;
        const std::string list = ints_literal(a.get_ints(name));
        args.push_back(script() ? list : std::string(name) + "=" + list);
      }
      if (script()) return call(fold ? "torch.col2im" : "torch.im2col", args);
      return call(fold ? "F.fold" : "F.unfold", args);
    }
    case OpKind::Cast:
      return x + ".to(" + dtype_expression(a.get_dtype("dtype"), dialect_) + ")";
    case OpKind::Contiguous:
      if (a.get_string("memory_format") == "contiguous_format") return x + ".contiguous()";
      // TorchScript defined from C++ has no torch.channels_last: memory formats are the
      // c10::MemoryFormat codes there (ChannelsLast = 2), as dtypes are ScalarType codes.
      return x + ".contiguous(memory_format=" + (script() ? "2" : "torch.channels_last") + ")";
    case OpKind::AddScalar:
    case OpKind::SubScalar:
    case OpKind::RsubScalar:
    case OpKind::MulScalar:
    case OpKind::DivScalar:
    case OpKind::PowScalar:
    case OpKind::RpowScalar:
      return scalar_operation(node.op, x, a, graph_.type(node.inputs[0]).dtype);
  }
  refuse(n, "no source row for op #" + std::to_string(static_cast<int>(node.op)));
}

std::string Emitter::script_bool_operation(OpKind op, const std::string& x, bool value,
                                           Dtype input) const {
  if (input != Dtype::Bool) return "";
  if (op == OpKind::AddScalar) return value ? "torch.ones_like(" + x + ")" : x + ".clone()";
  if (op == OpKind::MulScalar) return value ? x + ".clone()" : "torch.zeros_like(" + x + ")";
  return "";
}

std::string Emitter::scalar_operation(OpKind op, const std::string& x, const Attributes& a,
                                      Dtype input) const {
  const ir::AttrValue& other = a.get_scalar("other");
  std::string s = scalar_literal(other);
  if (const auto* b = std::get_if<bool>(&other); b != nullptr && script()) {
    const std::string replaced = script_bool_operation(op, x, *b, input);
    if (!replaced.empty()) return replaced;
    s = *b ? "1" : "0";
  }
  const std::string spelling = a.get_string("spelling");
  struct Names {
    OpKind op;
    const char* symbol;
    const char* function;
  };
  static const Names kNames[] = {
      {OpKind::AddScalar, "+", "add"},   {OpKind::SubScalar, "-", "sub"},
      {OpKind::RsubScalar, "-", "rsub"}, {OpKind::MulScalar, "*", "mul"},
      {OpKind::DivScalar, "/", "div"},   {OpKind::PowScalar, "**", "pow"},
      {OpKind::RpowScalar, "**", "pow"}};
  const Names* names = nullptr;
  for (const Names& entry : kNames) {
    if (entry.op == op) names = &entry;
  }
  const bool reversed = op == OpKind::RsubScalar || op == OpKind::RpowScalar;
  if (spelling == "function") {
    const std::string fn = std::string("torch.") + names->function;
    return op == OpKind::RpowScalar ? call(fn, {s, x}) : call(fn, {x, s});
  }
  if (spelling == "method" && !reversed) return call(x + "." + names->function, {s});
  // `-2 ** x` is -(2 ** x): a negative left operand is parenthesized.
  if (reversed && !s.empty() && s[0] == '-') s = "(" + s + ")";
  return reversed ? s + " " + names->symbol + " " + x : x + " " + names->symbol + " " + s;
}

std::string Emitter::squeeze(std::size_t n, const std::string& x,
                             const std::vector<std::int64_t>& dims, std::size_t rank) const {
  if (dims.empty()) return call("torch.squeeze", {x});
  const auto r = static_cast<std::int64_t>(std::max<std::size_t>(rank, 1));
  std::vector<std::int64_t> wrapped;
  for (std::int64_t d : dims) wrapped.push_back(d >= -r && d < 0 ? d + r : d);
  std::sort(wrapped.begin(), wrapped.end(), std::greater<>());
  const auto repeat = std::adjacent_find(wrapped.begin(), wrapped.end());
  if (repeat != wrapped.end()) {
    refuse(n, "dim " + std::to_string(*repeat) + " appears multiple times in the list of dims");
  }
  std::string text = x;
  for (std::int64_t d : wrapped) text = call("torch.squeeze", {text, int_literal(d)});
  return text;
}

std::string Emitter::slice(const std::string& x, const Attributes& a, std::int64_t rank) const {
  const std::int64_t dim = a.get_int("dim"), start = a.get_int("start"), end = a.get_int("end"),
                     step = a.get_int("step");
  const std::vector<std::string> args{x, int_literal(dim), int_literal(start), int_literal(end),
                                      int_literal(step)};
  if (script()) return call("torch.slice", args);
  const std::int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank || step <= 0) return call("torch.ops.aten.slice.Tensor", args);
  std::string text = x + "[";
  for (std::int64_t i = 0; i < d; ++i) text += ":, ";
  if (start != 0) text += int_literal(start);
  text += ":";
  if (end != std::numeric_limits<std::int64_t>::max()) text += int_literal(end);
  if (step != 1) text += ":" + int_literal(step);
  return text + "]";
}

std::string Emitter::interpolate(std::size_t n, const std::string& x, const Attributes& a,
                                 const ir::Shape& shape) const {
  const auto& size = a.get_ints("size");
  const std::string mode = a.get_string("mode");
  const bool align_corners = a.get_bool("align_corners");
  const auto rank = static_cast<std::int64_t>(shape.size());
  if (mode == "nearest" && align_corners) {
    refuse(n,
           "align_corners option can only be set with the interpolating modes: linear | "
           "bilinear | bicubic | trilinear");
  }
  if (static_cast<std::int64_t>(size.size()) != rank - 2) {
    std::vector<std::int64_t> spatial;
    for (std::int64_t d = 2; d < rank; ++d) spatial.push_back(shape[static_cast<std::size_t>(d)]);
    refuse(n,
           "Input and output must have the same number of spatial dimensions, but got input "
           "with spatial dimensions of " +
               ints_literal(spatial) + " and output size of " + ints_literal(size) +
               ". Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size "
               "in (o1, o2, ...,oK) format.");
  }
  const bool supported = (mode == "nearest" && rank >= 3 && rank <= 5) ||
                         (mode == "linear" && rank == 3) || (mode == "bilinear" && rank == 4);
  if (!supported) {
    if ((mode == "linear" || mode == "bilinear") && rank >= 3 && rank <= 5) {
      refuse(n, "Got " + std::to_string(rank) + "D input, but " + mode + " mode needs " +
                    (mode == "linear" ? "3D" : "4D") + " input");
    }
    refuse(n, "Input Error: Only 3D, 4D and 5D input Tensors supported (got " +
                  std::to_string(rank) +
                  "D) for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                  "nearest-exact (got " +
                  mode + ")");
  }
  const std::string sizes = ints_literal(size);
  if (!script()) {
    std::vector<std::string> args{x, "size=" + sizes, "mode=" + string_literal(mode)};
    if (mode != "nearest") args.push_back("align_corners=" + bool_literal(align_corners));
    return call("F.interpolate", args);
  }
  if (mode == "nearest") {
    return call("torch.upsample_nearest" + std::to_string(rank - 2) + "d", {x, sizes, "None"});
  }
  const char* fn = mode == "linear" ? "torch.upsample_linear1d" : "torch.upsample_bilinear2d";
  return call(fn, {x, sizes, bool_literal(align_corners), "None"});
}

}  // namespace weft::oracle::source_detail
