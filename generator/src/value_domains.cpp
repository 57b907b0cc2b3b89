// The value-domain row of the op table (weft/gen/value_search.h's domain_hints): per op, the
// input values that keep it finite and well-conditioned (logs above zero, acos inside [-1, 1],
// the poles of lgamma and digamma avoided), which the value search steers the leaves into. The
// switch has no default, so a new op without a row does not compile.
#include <string>
#include <vector>

#include "weft/error.h"
#include "weft/gen/value_search.h"
#include "weft/ir/op_kind.h"

namespace weft::gen {

using ir::OpKind;

std::vector<DomainHint> domain_hints(const ir::Graph& graph, const ir::Node& node) {
  const bool floating_exponent = node.op == OpKind::Pow && node.inputs.size() > 1 &&
                                 is_floating(graph.type(node.inputs[1]).dtype);
  return domain_hints(node.op, floating_exponent);
}

std::vector<DomainHint> domain_hints(ir::OpKind op, bool floating_exponent) {
  using K = DomainKind;
  switch (op) {
    case OpKind::Log:
    case OpKind::Log2:
    case OpKind::Log10:
    case OpKind::Rsqrt:
      return {{0, K::Above, 1e-3}};
    case OpKind::Log1p:
      return {{0, K::Above, -1.0 + 1e-3}};
    case OpKind::Lgamma:
    case OpKind::Digamma:
      return {{0, K::Above, 0.1}};  // poles at 0 and the negative integers
    case OpKind::Acosh:
      return {{0, K::Above, 1.0 + 1e-2}};  // the gradient is infinite at 1
    case OpKind::Atanh:
    case OpKind::Erfinv:
      return {{0, K::Within, 0.95}};  // infinite at ±1
    case OpKind::Expm1:
      return {{0, K::Below, 10.0}};
    case OpKind::Exp2:
      return {{0, K::Below, 14.0}};
    case OpKind::Atan2:
      return {{1, K::AwayFromZero, 1e-2}};  // the gradients are NaN at (0, 0)
    case OpKind::Hypot:
      return {{0, K::AwayFromZero, 1e-2}};  // likewise
    case OpKind::Xlogy:
      return {{1, K::Above, 1e-2}};  // log(y)
    case OpKind::BinaryCrossEntropyWithLogits:
      return {{1, K::InsideUnit, 1e-3}};  // a probability
    case OpKind::KlDiv:
      return {{1, K::Above, 1e-2}};  // log(target); its gradient is infinite at 0
    case OpKind::Copysign:
      return {{1, K::AwayFromZero, 1e-2}};  // a rounding must not flip the sign taken
    case OpKind::Addcdiv:
      return {{2, K::AwayFromZero, 1e-2}};  // the divisor
    case OpKind::Logit:
      return {{0, K::InsideUnit, 2e-2}};  // infinite at 0 and 1
    case OpKind::Bernoulli:
      return {{0, K::InsideUnit, 1e-3}};  // probabilities (refused outside [0, 1])
    case OpKind::Fmod:
    case OpKind::Remainder:
      return {{1, K::AwayFromZero, 1e-2}};
    case OpKind::Sqrt:
      return {{0, K::Above, 1e-4}};  // the gradient is infinite at 0
    case OpKind::Reciprocal:
      return {{0, K::AwayFromZero, 1e-2}};
    case OpKind::Tan:
      return {{0, K::AwayFromPole, 0.1}};
    case OpKind::Asin:
    case OpKind::Acos:
      return {{0, K::Within, 0.95}};  // the gradient is infinite at ±1
    case OpKind::Exp:
      return {{0, K::Below, 10.0}};
    case OpKind::Sinh:
    case OpKind::Cosh:
      return {{0, K::Within, 10.0}};
    case OpKind::Div:
      return {{1, K::AwayFromZero, 1e-2}};
    case OpKind::Pow: {
      // A floating exponent needs a positive base (and log(base) for its own gradient); an
      // integral one may be negative, so the base must not be zero.
      if (floating_exponent) return {{0, K::Above, 1e-2}, {1, K::Within, 4.0}};
      return {{0, K::AwayFromZero, 1e-2}};
    }
    case OpKind::BatchNorm:
      return {{4, K::Above, 1e-2}};  // running_var, when given
    case OpKind::PowScalar:
      return {{0, K::Above, 1e-2}};  // fractional and negative exponents
    case OpKind::RpowScalar:
      return {{0, K::Within, 4.0}};  // 10 ** x
    case OpKind::AddScalar:
    case OpKind::SubScalar:
    case OpKind::RsubScalar:
    case OpKind::MulScalar:
    case OpKind::DivScalar:  // the divisor is a non-zero scalar
    case OpKind::Contiguous:
    // Finite wherever their inputs are (the magnitude bound covers overflow).
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Atan:
    case OpKind::Tanh:
    case OpKind::Erf:
    case OpKind::Trunc:
    case OpKind::Frac:
    case OpKind::Asinh:
    case OpKind::Isnan:
    case OpKind::Isinf:
    case OpKind::Square:
    case OpKind::Erfc:
    case OpKind::Sinc:
    case OpKind::Deg2rad:
    case OpKind::Rad2deg:
    case OpKind::Isfinite:
    case OpKind::Signbit:
    case OpKind::Hardswish:
    case OpKind::Hardsigmoid:
    case OpKind::Relu6:
    case OpKind::Mish:
    case OpKind::Selu:
    case OpKind::Celu:
    case OpKind::Softsign:
    case OpKind::Logsigmoid:
    case OpKind::Tanhshrink:
    case OpKind::Threshold:
    case OpKind::Hardshrink:
    case OpKind::Softshrink:
    case OpKind::Logaddexp:
    case OpKind::Logaddexp2:
    case OpKind::Fmax:
    case OpKind::Fmin:
    case OpKind::Lerp:
    case OpKind::Addcmul:
    case OpKind::NanToNum:
    case OpKind::Glu:
    case OpKind::Prelu:
    case OpKind::Dot:
    case OpKind::Mv:
    case OpKind::Outer:
    case OpKind::Trace:
    case OpKind::Baddbmm:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
    case OpKind::Sign:
    case OpKind::Sigmoid:
    case OpKind::Relu:
    case OpKind::LeakyRelu:
    case OpKind::Elu:
    case OpKind::Gelu:
    case OpKind::Silu:
    case OpKind::Softplus:
    case OpKind::Hardtanh:
    case OpKind::Clamp:
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Maximum:
    case OpKind::Minimum:
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
    case OpKind::BitwiseAnd:
    case OpKind::BitwiseOr:
    case OpKind::BitwiseXor:
    case OpKind::BitwiseNot:
    case OpKind::Where:
    case OpKind::MaskedFill:
    case OpKind::ScatterAdd:
    case OpKind::ScatterReduce:
    case OpKind::IndexAdd:
    case OpKind::IndexPut:
    case OpKind::Sum:
    case OpKind::Mean:
    case OpKind::Prod:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Argmax:
    case OpKind::Argmin:
    case OpKind::Var:
    case OpKind::Std:
    case OpKind::VarMean:
    case OpKind::StdMean:
    case OpKind::Logsumexp:
    case OpKind::Amax:
    case OpKind::Amin:
    case OpKind::Any:
    case OpKind::All:
    case OpKind::Cumsum:
    case OpKind::Cumprod:
    case OpKind::Sort:
    case OpKind::Argsort:
    case OpKind::Topk:
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
    case OpKind::Matmul:
    case OpKind::Mm:
    case OpKind::Bmm:
    case OpKind::Linear:
    case OpKind::Addmm:
    case OpKind::Conv1d:
    case OpKind::Conv2d:
    case OpKind::ConvTranspose1d:
    case OpKind::ConvTranspose2d:
    case OpKind::MaxPool1d:
    case OpKind::MaxPool2d:
    case OpKind::AvgPool1d:
    case OpKind::AvgPool2d:
    case OpKind::AdaptiveAvgPool2d:
    case OpKind::MaxPool3d:
    case OpKind::AvgPool3d:
    case OpKind::AdaptiveAvgPool3d:
    case OpKind::AdaptiveMaxPool1d:
    case OpKind::AdaptiveMaxPool2d:
    case OpKind::Cdist:
    case OpKind::Pdist:
    case OpKind::LayerNorm:
    case OpKind::RmsNorm:
    case OpKind::GroupNorm:
    case OpKind::InstanceNorm:
    case OpKind::Dropout:
    case OpKind::FeatureDropout:
    case OpKind::AlphaDropout:
    case OpKind::FeatureAlphaDropout:
    case OpKind::Rrelu:
    case OpKind::RandLike:
    case OpKind::RandnLike:
    case OpKind::Rand:
    case OpKind::Randn:
    case OpKind::RandintLike:
    case OpKind::Randperm:
    case OpKind::Embedding:
    case OpKind::Reshape:
    case OpKind::Flatten:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
    case OpKind::Transpose:
    case OpKind::Permute:
    case OpKind::Expand:
    case OpKind::Slice:
    case OpKind::Select:
    case OpKind::Flip:
    case OpKind::Roll:
    case OpKind::Repeat:
    case OpKind::Diagonal:
    case OpKind::Im2col:
    case OpKind::Col2im:
    case OpKind::Copy:
    case OpKind::MaskedScatter:
    case OpKind::SliceScatter:
    case OpKind::SelectScatter:
    case OpKind::Cat:
    case OpKind::Stack:
    case OpKind::Split:
    case OpKind::Chunk:
    case OpKind::Pad:
    case OpKind::Tril:
    case OpKind::Triu:
    case OpKind::Gather:
    case OpKind::IndexSelect:
    case OpKind::Interpolate:
    case OpKind::Cast:
    case OpKind::Scatter:
    case OpKind::Cummax:
    case OpKind::Cummin:
    case OpKind::Logcumsumexp:  // computed stably
    case OpKind::PixelShuffle:
    case OpKind::PixelUnshuffle:
    case OpKind::MseLoss:
    case OpKind::L1Loss:
    case OpKind::SmoothL1Loss:
    case OpKind::HuberLoss:
    case OpKind::NllLoss:
    case OpKind::CrossEntropyLoss:
      return {};
  }
  throw Error("domain_hints: unknown op kind " + std::to_string(static_cast<int>(op)));
}

}  // namespace weft::gen
