#include "weft/ir/op_schema.h"

#include <array>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "weft/error.h"
#include "weft/ir/inplace.h"

namespace weft::ir {

namespace {

using Ints = std::vector<std::int64_t>;

AttrSpec required(std::string name, AttrType type) {
  return {std::move(name), type, true, std::nullopt};
}
// Absent means "none" (no bound, all dims, no rounding, …).
AttrSpec optional_attr(std::string name, AttrType type) {
  return {std::move(name), type, false, std::nullopt};
}
AttrSpec int_attr(std::string name, std::int64_t value) {
  return {std::move(name), AttrType::Int, false, AttrValue(value)};
}
AttrSpec float_attr(std::string name, double value) {
  return {std::move(name), AttrType::Float, false, AttrValue(value)};
}
AttrSpec bool_attr(std::string name, bool value) {
  return {std::move(name), AttrType::Bool, false, AttrValue(value)};
}
AttrSpec ints_attr(std::string name, Ints value) {
  return {std::move(name), AttrType::IntList, false, AttrValue(std::move(value))};
}
AttrSpec string_attr(std::string name, std::string value, std::vector<std::string> allowed) {
  return {std::move(name), AttrType::String, false, AttrValue(std::move(value)),
          std::move(allowed)};
}

// A loss's reduction over its elements, as torch.nn.functional's.
AttrSpec reduction_attr() {
  return string_attr("reduction", "mean", {"none", "mean", "sum"});
}

OpSchema row(OpKind op, std::string_view family, std::vector<std::string> inputs,
             std::vector<AttrSpec> attrs = {}, int num_outputs = 1) {
  const int count = static_cast<int>(inputs.size());
  return {op, family, std::move(inputs), count, count, num_outputs, std::move(attrs)};
}
OpSchema unary(OpKind op, std::string_view family, std::vector<AttrSpec> attrs = {}) {
  return row(op, family, {"self"}, std::move(attrs));
}
OpSchema binary(OpKind op, std::string_view family, std::vector<AttrSpec> attrs = {}) {
  return row(op, family, {"self", "other"}, std::move(attrs));
}
OpSchema with_optional_inputs(OpSchema schema, int min_inputs, std::vector<int> counts = {}) {
  schema.min_inputs = min_inputs;
  schema.input_counts = std::move(counts);
  return schema;
}
OpSchema variadic(OpKind op, std::string_view family, std::vector<AttrSpec> attrs) {
  return {op, family, {"tensors"}, 1, -1, 1, std::move(attrs)};
}

// One case per op. There is no default label: with -Wall -Werror (-Wswitch), an op added to
// WEFT_OP_LIST without a row here fails to compile.
OpSchema make_schema(OpKind op) {
  using K = OpKind;
  constexpr auto kNoEnd = std::numeric_limits<std::int64_t>::max();
  switch (op) {
    case K::Neg:
    case K::Abs:
    case K::Exp:
    case K::Log:
    case K::Log2:
    case K::Sqrt:
    case K::Rsqrt:
    case K::Reciprocal:
    case K::Sin:
    case K::Cos:
    case K::Tan:
    case K::Asin:
    case K::Acos:
    case K::Atan:
    case K::Sinh:
    case K::Cosh:
    case K::Tanh:
    case K::Erf:
    case K::Floor:
    case K::Ceil:
    case K::Round:
    case K::Sign:
    case K::Trunc:
    case K::Frac:
    case K::Log1p:
    case K::Expm1:
    case K::Log10:
    case K::Exp2:
    case K::Asinh:
    case K::Acosh:
    case K::Atanh:
    case K::Erfinv:
    case K::Lgamma:
    case K::Digamma:
    case K::Isnan:
    case K::Isinf:
    case K::Square:
    case K::Erfc:
    case K::Sinc:
    case K::Deg2rad:
    case K::Rad2deg:
    case K::Isfinite:
    case K::Signbit:
      return unary(op, "unary");
    case K::Logit:
      return unary(op, "unary", {optional_attr("eps", AttrType::Float)});
    case K::NanToNum:
      return unary(op, "unary",
                   {optional_attr("nan", AttrType::Float), optional_attr("posinf", AttrType::Float),
                    optional_attr("neginf", AttrType::Float)});

    case K::Sigmoid:
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
      return unary(op, "activation");
    case K::Celu:
      return unary(op, "activation", {float_attr("alpha", 1.0)});
    case K::Threshold:
      return unary(op, "activation",
                   {required("threshold", AttrType::Float), required("value", AttrType::Float)});
    case K::Hardshrink:
    case K::Softshrink:
      return unary(op, "activation", {float_attr("lambd", 0.5)});
    case K::Glu:
      return unary(op, "activation", {int_attr("dim", -1)});
    case K::Prelu:
      return row(op, "activation", {"self", "weight"});
    case K::LeakyRelu:
      return unary(op, "activation", {float_attr("negative_slope", 0.01)});
    case K::Elu:
      return unary(op, "activation", {float_attr("alpha", 1.0)});
    case K::Gelu:
      return unary(op, "activation", {string_attr("approximate", "none", {"none", "tanh"})});
    case K::Softplus:
      return unary(op, "activation", {float_attr("beta", 1.0), float_attr("threshold", 20.0)});
    case K::Hardtanh:
      return unary(op, "activation", {float_attr("min_val", -1.0), float_attr("max_val", 1.0)});
    case K::Clamp:
      return unary(op, "activation",
                   {optional_attr("min", AttrType::Float), optional_attr("max", AttrType::Float)});

    case K::Add:
    case K::Sub:
      return binary(op, "binary", {float_attr("alpha", 1.0)});
    case K::Div:
      return binary(op, "binary",
                    {{"rounding_mode", AttrType::String, false, std::nullopt, {"trunc", "floor"}}});
    case K::Mul:
    case K::Pow:
    case K::Maximum:
    case K::Minimum:
      return binary(op, "binary");
    case K::Atan2:
    case K::Hypot:
    case K::Logaddexp:
    case K::Fmod:
    case K::Remainder:
    case K::Logaddexp2:
    case K::Xlogy:
    case K::Copysign:
    case K::Fmax:
    case K::Fmin:
      return binary(op, "binary_math");
    case K::Lerp:
      return row(op, "pointwise3", {"self", "end", "weight"});
    case K::Addcmul:
    case K::Addcdiv:
      return row(op, "pointwise3", {"self", "tensor1", "tensor2"}, {float_attr("value", 1.0)});

    case K::AddScalar:
    case K::SubScalar:
    case K::RsubScalar:
    case K::MulScalar:
    case K::DivScalar:
    case K::PowScalar:
    case K::RpowScalar:
      // `spelling`: how the program writes it: `x * 2.5`, `torch.mul(x, 2.5)`, `x.mul(2.5)`
      // (the reversed ops have no method: theirs is the operator, `2 - x`, `2 ** x`).
      return unary(op, "scalar",
                   {required("other", AttrType::Scalar),
                    string_attr("spelling", "operator", {"operator", "function", "method"})});

    case K::Eq:
    case K::Ne:
    case K::Lt:
    case K::Le:
    case K::Gt:
    case K::Ge:
    case K::LogicalAnd:
    case K::LogicalOr:
    case K::LogicalXor:
    case K::BitwiseAnd:
    case K::BitwiseOr:
    case K::BitwiseXor:
      return binary(op, "compare");
    case K::LogicalNot:
    case K::BitwiseNot:
      return unary(op, "compare");
    case K::Where:
      return row(op, "compare", {"condition", "self", "other"});
    case K::MaskedFill:
      return row(op, "compare", {"self", "mask"}, {required("value", AttrType::Float)});

    case K::Sum:
    case K::Mean:
      return unary(op, "reduce", {ints_attr("dim", {}), bool_attr("keepdim", false)});
    case K::Prod:
      return unary(op, "reduce",
                   {optional_attr("dim", AttrType::Int), bool_attr("keepdim", false)});
    case K::Max:
    case K::Min:  // outputs: values, indices
      return row(op, "reduce", {"self"},
                 {required("dim", AttrType::Int), bool_attr("keepdim", false)}, 2);
    case K::Argmax:
    case K::Argmin:
      return unary(op, "reduce",
                   {optional_attr("dim", AttrType::Int), bool_attr("keepdim", false)});
    case K::Var:
    case K::Std:
      return unary(op, "reduce",
                   {ints_attr("dim", {}), int_attr("correction", 1), bool_attr("keepdim", false)});
    case K::Logsumexp:
      return unary(op, "reduce", {required("dim", AttrType::IntList), bool_attr("keepdim", false)});
    case K::VarMean:
    case K::StdMean:  // outputs: var (std), mean
      return row(op, "reduce", {"self"},
                 {ints_attr("dim", {}), int_attr("correction", 1), bool_attr("keepdim", false)}, 2);

    case K::Amax:
    case K::Amin:
      return unary(op, "reduce", {ints_attr("dim", {}), bool_attr("keepdim", false)});
    // Without a dim, keepdim keeps every dim as 1 (as prod): torch.any(x) has no keepdim.
    case K::Any:
    case K::All:
      return unary(op, "reduce",
                   {optional_attr("dim", AttrType::Int), bool_attr("keepdim", false)});
    case K::Cumsum:
    case K::Cumprod:
    case K::Logcumsumexp:
      return unary(op, "scan", {required("dim", AttrType::Int)});
    case K::Cummax:
    case K::Cummin:  // outputs: values, indices
      return row(op, "scan", {"self"}, {required("dim", AttrType::Int)}, 2);
    case K::Sort:  // outputs: values, indices
      return row(op, "sort", {"self"},
                 {int_attr("dim", -1), bool_attr("descending", false), bool_attr("stable", false)},
                 2);
    case K::Argsort:
      return unary(
          op, "sort",
          {int_attr("dim", -1), bool_attr("descending", false), bool_attr("stable", false)});
    case K::Topk:  // outputs: values, indices
      return row(op, "sort", {"self"},
                 {required("k", AttrType::Int), int_attr("dim", -1), bool_attr("largest", true)},
                 2);

    case K::Softmax:
    case K::LogSoftmax:
      return unary(op, "softmax", {required("dim", AttrType::Int)});

    case K::Matmul:
    case K::Mm:
    case K::Bmm:
      return binary(op, "matmul");
    case K::Linear:
      return with_optional_inputs(row(op, "matmul", {"input", "weight", "bias"}), 2);
    case K::Addmm:
      return row(op, "matmul", {"self", "mat1", "mat2"},
                 {float_attr("beta", 1.0), float_attr("alpha", 1.0)});
    case K::Dot:
      return row(op, "vector_products", {"self", "tensor"});
    case K::Mv:
      return row(op, "vector_products", {"self", "vec"});
    case K::Outer:
      return row(op, "vector_products", {"self", "vec2"});
    case K::Trace:
      return unary(op, "vector_products");
    case K::Baddbmm:
      return row(op, "vector_products", {"self", "batch1", "batch2"},
                 {float_attr("beta", 1.0), float_attr("alpha", 1.0)});
    case K::Cdist:
      return row(op, "distance", {"x1", "x2"}, {float_attr("p", 2.0)});
    case K::MseLoss:
    case K::L1Loss:
      return row(op, "loss", {"self", "target"}, {reduction_attr()});
    case K::SmoothL1Loss:
      return row(op, "loss", {"self", "target"}, {reduction_attr(), float_attr("beta", 1.0)});
    case K::HuberLoss:
      return row(op, "loss", {"self", "target"}, {reduction_attr(), float_attr("delta", 1.0)});
    // Class weights [C] (and pos_weight) are optional inputs, after the operands.
    case K::NllLoss:
      return with_optional_inputs(row(op, "loss", {"self", "target", "weight"},
                                      {reduction_attr(), int_attr("ignore_index", -100)}),
                                  2);
    case K::CrossEntropyLoss:
      return with_optional_inputs(row(op, "loss", {"self", "target", "weight"},
                                      {reduction_attr(), int_attr("ignore_index", -100),
                                       float_attr("label_smoothing", 0.0)}),
                                  2);
    case K::BinaryCrossEntropyWithLogits:
      return with_optional_inputs(
          row(op, "loss", {"self", "target", "weight", "pos_weight"}, {reduction_attr()}), 2);
    case K::KlDiv:  // torch.nn.functional's "batchmean" too: the sum over the batch size
      return row(op, "loss", {"self", "target"},
                 {string_attr("reduction", "mean", {"none", "mean", "sum", "batchmean"}),
                  bool_attr("log_target", false)});
    case K::Pdist:
      return unary(op, "distance", {float_attr("p", 2.0)});

    case K::Conv1d:
    case K::Conv2d:
      return with_optional_inputs(row(op, "conv", {"input", "weight", "bias"},
                                      {ints_attr("stride", {1}), ints_attr("padding", {0}),
                                       ints_attr("dilation", {1}), int_attr("groups", 1)}),
                                  2);
    case K::ConvTranspose1d:
    case K::ConvTranspose2d:
      return with_optional_inputs(row(op, "conv", {"input", "weight", "bias"},
                                      {ints_attr("stride", {1}), ints_attr("padding", {0}),
                                       ints_attr("output_padding", {0}), int_attr("groups", 1),
                                       ints_attr("dilation", {1})}),
                                  2);

    case K::MaxPool1d:
    case K::MaxPool2d:
    case K::MaxPool3d:
      return unary(
          op, "pool",
          {required("kernel_size", AttrType::IntList), ints_attr("stride", {}),
           ints_attr("padding", {0}), ints_attr("dilation", {1}), bool_attr("ceil_mode", false)});
    case K::AvgPool1d:
    case K::AvgPool2d:
    case K::AvgPool3d:
      return unary(op, "pool",
                   {required("kernel_size", AttrType::IntList), ints_attr("stride", {}),
                    ints_attr("padding", {0}), bool_attr("ceil_mode", false),
                    bool_attr("count_include_pad", true)});
    case K::AdaptiveAvgPool2d:
    case K::AdaptiveAvgPool3d:
    case K::AdaptiveMaxPool1d:
    case K::AdaptiveMaxPool2d:
      return unary(op, "pool", {required("output_size", AttrType::IntList)});

    case K::BatchNorm:
      return with_optional_inputs(
          row(op, "norm", {"input", "weight", "bias", "running_mean", "running_var"},
              {bool_attr("training", false), float_attr("momentum", 0.1), float_attr("eps", 1e-5)}),
          3, {3, 5});
    case K::LayerNorm:
      return with_optional_inputs(
          row(op, "norm", {"input", "weight", "bias"},
              {required("normalized_shape", AttrType::IntList), float_attr("eps", 1e-5)}),
          1, {1, 3});
    case K::RmsNorm:  // eps absent: the epsilon of the input's (float32 for 16-bit) type
      return with_optional_inputs(row(op, "norm", {"input", "weight"},
                                      {required("normalized_shape", AttrType::IntList),
                                       optional_attr("eps", AttrType::Float)}),
                                  1);
    case K::GroupNorm:
      return with_optional_inputs(
          row(op, "norm", {"input", "weight", "bias"},
              {required("num_groups", AttrType::Int), float_attr("eps", 1e-5)}),
          1, {1, 3});
    case K::InstanceNorm:
      return with_optional_inputs(
          row(op, "norm", {"input", "weight", "bias"}, {float_attr("eps", 1e-5)}), 1, {1, 3});
    case K::Dropout:
    case K::FeatureDropout:
    case K::AlphaDropout:
    case K::FeatureAlphaDropout:
      return unary(op, "random",
                   {float_attr("p", 0.5), bool_attr("training", true), int_attr("seed", 0)});
    case K::Rrelu:
      return unary(op, "random",
                   {float_attr("lower", 1.0 / 8), float_attr("upper", 1.0 / 3),
                    bool_attr("training", true), int_attr("seed", 0)});
    case K::RandLike:
    case K::RandnLike:
    case K::Rand:
    case K::Randn:
      return unary(op, "random", {int_attr("seed", 0)});
    case K::RandintLike:
      return unary(op, "random",
                   {int_attr("low", 0), required("high", AttrType::Int), int_attr("seed", 0)});
    case K::Bernoulli:  // p absent: the input holds the probabilities
      return unary(op, "random", {optional_attr("p", AttrType::Float), int_attr("seed", 0)});
    case K::Randperm:
      return unary(op, "random", {int_attr("dim", 0), int_attr("seed", 0)});
    case K::Embedding:
      return row(op, "norm", {"input", "weight"}, {optional_attr("padding_idx", AttrType::Int)});

    case K::Reshape:
      return unary(op, "shape", {required("shape", AttrType::IntList)});
    case K::Flatten:
      return unary(op, "shape", {int_attr("start_dim", 0), int_attr("end_dim", -1)});
    case K::Squeeze:
      return unary(op, "shape", {ints_attr("dim", {})});
    case K::Unsqueeze:
      return unary(op, "shape", {required("dim", AttrType::Int)});
    case K::Transpose:
      return unary(op, "shape", {required("dim0", AttrType::Int), required("dim1", AttrType::Int)});
    case K::Permute:
      return unary(op, "shape", {required("dims", AttrType::IntList)});
    case K::Expand:
      return unary(op, "shape", {required("size", AttrType::IntList)});
    case K::Slice:
      return unary(
          op, "shape",
          {int_attr("dim", 0), int_attr("start", 0), int_attr("end", kNoEnd), int_attr("step", 1)});
    case K::Select:
      return unary(op, "shape", {required("dim", AttrType::Int), required("index", AttrType::Int)});
    case K::Flip:
      return unary(op, "reorder", {required("dims", AttrType::IntList)});
    case K::Roll:
      return unary(op, "reorder", {required("shifts", AttrType::IntList), ints_attr("dims", {})});
    case K::Repeat:
      return unary(op, "reorder", {required("repeats", AttrType::IntList)});
    case K::PixelShuffle:
      return unary(op, "reorder", {required("upscale_factor", AttrType::Int)});
    case K::PixelUnshuffle:
      return unary(op, "reorder", {required("downscale_factor", AttrType::Int)});
    case K::Diagonal:
      return unary(op, "reorder",
                   {int_attr("offset", 0), int_attr("dim1", 0), int_attr("dim2", 1)});
    // "writeback": the base after an in-place write into its slice (weft/ir/inplace.h).
    case K::SliceScatter:
      return row(op, "scatter", {"self", "src"},
                 {int_attr("dim", 0), int_attr("start", 0), int_attr("end", kNoEnd),
                  int_attr("step", 1), bool_attr("writeback", false)});
    case K::SelectScatter:
      return row(op, "scatter", {"self", "src"},
                 {required("dim", AttrType::Int), required("index", AttrType::Int),
                  bool_attr("writeback", false)});
    case K::Copy:
      return row(op, "scatter", {"self", "src"});
    case K::MaskedScatter:
      return row(op, "scatter", {"self", "mask", "source"});

    case K::Cat:
    case K::Stack:
      return variadic(op, "join", {int_attr("dim", 0)});
    case K::Split:
      return row(op, "join", {"self"},
                 {required("split_size", AttrType::IntList), int_attr("dim", 0)}, -1);
    case K::Chunk:
      return row(op, "join", {"self"}, {required("chunks", AttrType::Int), int_attr("dim", 0)}, -1);
    case K::Pad:
      return unary(op, "join",
                   {required("pad", AttrType::IntList),
                    string_attr("mode", "constant", {"constant", "reflect", "replicate"}),
                    float_attr("value", 0.0)});
    case K::Tril:
    case K::Triu:
      return unary(op, "join", {int_attr("diagonal", 0)});
    case K::Gather:
    case K::IndexSelect:
      return row(op, "index", {"self", "index"}, {required("dim", AttrType::Int)});
    case K::ScatterAdd:
    case K::Scatter:
      return row(op, "scatter_reduce", {"self", "index", "src"}, {required("dim", AttrType::Int)});
    case K::ScatterReduce:
      return row(op, "scatter_reduce", {"self", "index", "src"},
                 {required("dim", AttrType::Int),
                  string_attr("reduce", "sum", {"sum", "prod", "mean", "amax", "amin"}),
                  bool_attr("include_self", true)});
    case K::IndexAdd:
      return row(op, "scatter_reduce", {"self", "index", "source"},
                 {required("dim", AttrType::Int), float_attr("alpha", 1.0)});
    case K::IndexPut:
      return row(op, "scatter_reduce", {"self", "index", "values"},
                 {bool_attr("accumulate", false)});

    case K::Interpolate:
      return unary(op, "interpolate",
                   {required("size", AttrType::IntList),
                    string_attr("mode", "nearest", {"nearest", "linear", "bilinear"}),
                    bool_attr("align_corners", false)});

    // F.unfold and F.fold: every list holds (height, width).
    case K::Im2col:
      return unary(op, "fold",
                   {required("kernel_size", AttrType::IntList), ints_attr("dilation", {1, 1}),
                    ints_attr("padding", {0, 0}), ints_attr("stride", {1, 1})});
    case K::Col2im:
      return unary(op, "fold",
                   {required("output_size", AttrType::IntList),
                    required("kernel_size", AttrType::IntList), ints_attr("dilation", {1, 1}),
                    ints_attr("padding", {0, 0}), ints_attr("stride", {1, 1})});

    case K::Cast:
      return unary(op, "cast", {required("dtype", AttrType::Dtype)});
    case K::Contiguous:
      // x.contiguous() / x.contiguous(memory_format=torch.channels_last) (rank 4).
      return unary(op, "cast",
                   {string_attr("memory_format", "contiguous_format",
                                {"contiguous_format", "channels_last"})});
  }
  throw std::logic_error("op_schema: no row for op #" + std::to_string(static_cast<unsigned>(op)));
}

const std::vector<OpSchema>& table() {
  static const std::vector<OpSchema> rows = [] {
    std::vector<OpSchema> built;
    built.reserve(kNumOps);
    for (OpKind op : kAllOps) {
      built.push_back(make_schema(op));
      // The in-place form (weft/ir/inplace.h): programs write the node's result into its first
      // input.
      if (can_run_in_place(op)) built.back().attrs.push_back(bool_attr("inplace", false));
      // Every row must describe its own op and have consistent counts.
      const OpSchema& s = built.back();
      if (s.op != op || s.input_names.empty() || s.min_inputs < 0 ||
          (s.max_inputs != -1 && s.max_inputs < s.min_inputs)) {
        throw std::logic_error("op_schema: inconsistent row for " + std::string(op_name(op)));
      }
    }
    return built;
  }();
  return rows;
}

}  // namespace

const AttrSpec* OpSchema::find_attr(std::string_view attr_name) const {
  for (const AttrSpec& spec : attrs) {
    if (spec.name == attr_name) return &spec;
  }
  return nullptr;
}

bool OpSchema::accepts_input_count(int count) const {
  if (count < min_inputs || (max_inputs != -1 && count > max_inputs)) return false;
  if (input_counts.empty()) return true;
  for (int allowed : input_counts) {
    if (allowed == count) return true;
  }
  return false;
}

std::string OpSchema::input_count_text() const {
  if (max_inputs == -1) return "at least " + std::to_string(min_inputs);
  if (!input_counts.empty()) {
    std::string text;
    for (std::size_t i = 0; i < input_counts.size(); ++i) {
      if (i > 0) text += i + 1 == input_counts.size() ? " or " : ", ";
      text += std::to_string(input_counts[i]);
    }
    return text;
  }
  if (min_inputs == max_inputs) return std::to_string(min_inputs);
  if (max_inputs == min_inputs + 1) {
    return std::to_string(min_inputs) + " or " + std::to_string(max_inputs);
  }
  return std::to_string(min_inputs) + " to " + std::to_string(max_inputs);
}

const OpSchema& schema(OpKind op) {
  const auto index = static_cast<std::size_t>(op);
  if (index >= kNumOps) throw Error("unknown op #" + std::to_string(index));
  return table()[index];
}

Attributes with_defaults(OpKind op, const Attributes& attrs) {
  Attributes filled = attrs;
  for (const AttrSpec& spec : schema(op).attrs) {
    if (spec.default_value && !filled.has(spec.name)) filled.set(spec.name, *spec.default_value);
  }
  return filled;
}

}  // namespace weft::ir
