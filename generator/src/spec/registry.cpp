// Every op of the IR mapped to its family's spec factory. The switch has no default: with
// -Wall -Werror an op added to WEFT_OP_LIST without a spec does not compile.
#include <string>

#include "spec/families.h"
#include "weft/error.h"

namespace weft::gen {

namespace {

OpSpec make_spec(ir::OpKind op) {
  using K = ir::OpKind;
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
    case K::Sigmoid:
    case K::Relu:
    case K::LeakyRelu:
    case K::Elu:
    case K::Gelu:
    case K::Silu:
    case K::Softplus:
    case K::Hardtanh:
    case K::Clamp:
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
    case K::Logit:
    case K::NanToNum:
    case K::Glu:
    case K::Prelu:
    case K::Deg2rad:
    case K::Rad2deg:
    case K::Isfinite:
    case K::Signbit:
    case K::Hardswish:
    case K::Hardsigmoid:
    case K::Relu6:
    case K::Mish:
    case K::Selu:
    case K::Celu:
    case K::Softsign:
    case K::Logsigmoid:
    case K::Tanhshrink:
    case K::Threshold:
    case K::Hardshrink:
    case K::Softshrink:
      return unary_spec(op);
    case K::Add:
    case K::Sub:
    case K::Mul:
    case K::Div:
    case K::Pow:
    case K::Maximum:
    case K::Minimum:
    case K::Atan2:
    case K::Hypot:
    case K::Logaddexp:
    case K::Fmod:
    case K::Remainder:
    case K::Eq:
    case K::Ne:
    case K::Lt:
    case K::Le:
    case K::Gt:
    case K::Ge:
    case K::LogicalAnd:
    case K::LogicalOr:
    case K::LogicalXor:
    case K::LogicalNot:
    case K::BitwiseAnd:
    case K::BitwiseOr:
    case K::BitwiseXor:
    case K::BitwiseNot:
    case K::Where:
    case K::MaskedFill:
    case K::Copy:
    case K::MaskedScatter:
    case K::Logaddexp2:
    case K::Xlogy:
    case K::Copysign:
    case K::Fmax:
    case K::Fmin:
    case K::Lerp:
    case K::Addcmul:
    case K::Addcdiv:
      return binary_spec(op);
    case K::Sum:
    case K::Mean:
    case K::Prod:
    case K::Max:
    case K::Min:
    case K::Argmax:
    case K::Argmin:
    case K::Var:
    case K::Std:
    case K::VarMean:
    case K::StdMean:
    case K::Logsumexp:
    case K::Amax:
    case K::Amin:
    case K::Any:
    case K::All:
    case K::Cumsum:
    case K::Cumprod:
    case K::Logcumsumexp:
    case K::Cummax:
    case K::Cummin:
    case K::Sort:
    case K::Argsort:
    case K::Topk:
    case K::Softmax:
    case K::LogSoftmax:
      return reduce_spec(op);
    case K::Matmul:
    case K::Mm:
    case K::Bmm:
    case K::Linear:
    case K::Addmm:
    case K::Cdist:
    case K::Pdist:
    case K::Dot:
    case K::Mv:
    case K::Outer:
    case K::Trace:
    case K::Baddbmm:
      return matmul_spec(op);
    case K::Conv1d:
    case K::Conv2d:
    case K::ConvTranspose1d:
    case K::ConvTranspose2d:
      return conv_spec(op);
    case K::MaxPool1d:
    case K::MaxPool2d:
    case K::AvgPool1d:
    case K::AvgPool2d:
    case K::AdaptiveAvgPool2d:
    case K::MaxPool3d:
    case K::AvgPool3d:
    case K::AdaptiveAvgPool3d:
    case K::AdaptiveMaxPool1d:
    case K::AdaptiveMaxPool2d:
      return pool_spec(op);
    case K::BatchNorm:
    case K::LayerNorm:
    case K::GroupNorm:
    case K::InstanceNorm:
    case K::RmsNorm:
    case K::Embedding:
      return norm_spec(op);
    case K::Dropout:
    case K::FeatureDropout:
    case K::AlphaDropout:
    case K::FeatureAlphaDropout:
    case K::Rrelu:
    case K::RandLike:
    case K::RandnLike:
    case K::Rand:
    case K::Randn:
    case K::RandintLike:
    case K::Bernoulli:
    case K::Randperm:
      return random_spec(op);
    case K::Reshape:
    case K::Flatten:
    case K::Squeeze:
    case K::Unsqueeze:
    case K::Transpose:
    case K::Permute:
    case K::Expand:
    case K::Slice:
    case K::Select:
    case K::SliceScatter:
    case K::SelectScatter:
      return shape_spec(op);
    case K::Flip:
    case K::Roll:
    case K::Repeat:
    case K::Diagonal:
    case K::PixelShuffle:
    case K::PixelUnshuffle:
      return reorder_spec(op);
    case K::Cat:
    case K::Stack:
    case K::Split:
    case K::Chunk:
    case K::Pad:
    case K::Tril:
    case K::Triu:
      return join_spec(op);
    case K::Gather:
    case K::IndexSelect:
    case K::ScatterAdd:
    case K::ScatterReduce:
    case K::IndexAdd:
    case K::IndexPut:
    case K::Scatter:
      return index_spec(op);
    case K::MseLoss:
    case K::L1Loss:
    case K::SmoothL1Loss:
    case K::HuberLoss:
    case K::BinaryCrossEntropyWithLogits:
    case K::KlDiv:
      return loss_spec(op);
    case K::NllLoss:
    case K::CrossEntropyLoss:
      return classification_loss_spec(op);
    case K::Interpolate:
      return interpolate_spec(op);
    case K::Im2col:
    case K::Col2im:
      return fold_spec(op);
    case K::Cast:
    case K::Contiguous:
      return cast_spec(op);
    case K::AddScalar:
    case K::SubScalar:
    case K::RsubScalar:
    case K::MulScalar:
    case K::DivScalar:
    case K::PowScalar:
    case K::RpowScalar:
      return scalar_spec(op);
  }
  throw Error("no spec for op #" + std::to_string(static_cast<unsigned>(op)));
}

const std::vector<OpSpec>& table() {
  static const std::vector<OpSpec> specs = [] {
    std::vector<OpSpec> built;
    for (ir::OpKind op : ir::kAllOps) built.push_back(make_spec(op));
    return built;
  }();
  return specs;
}

}  // namespace

bool has_spec(ir::OpKind op) {
  const OpSpec& s = table().at(static_cast<std::size_t>(op));
  return s.op == op && s.sample != nullptr && s.encode != nullptr && s.output_dtypes != nullptr;
}

const OpSpec& spec(ir::OpKind op) {
  if (!has_spec(op)) throw Error("no spec for " + std::string(ir::op_name(op)));
  return table()[static_cast<std::size_t>(op)];
}

std::vector<ir::OpKind> ops_without_spec() {
  std::vector<ir::OpKind> missing;
  for (ir::OpKind op : ir::kAllOps) {
    if (!has_spec(op)) missing.push_back(op);
  }
  return missing;
}

}  // namespace weft::gen
