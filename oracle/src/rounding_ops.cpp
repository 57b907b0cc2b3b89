// The rounding model's per-op rows (rounding_ops.h): the decisions each op takes, which ops
// accumulate rounded terms, and which move values exactly. The switches have no default where a
// new op must be placed.
#include <algorithm>
#include <string>

#include "rounding_ops.h"
#include "weft/ir/op_schema.h"

namespace weft::oracle::rounding_detail {

bool reads_floating(const ir::Graph& graph, const ir::Node& node) {
  return std::any_of(node.inputs.begin(), node.inputs.end(),
                     [&](ir::ValueId id) { return is_floating(graph.type(id).dtype); });
}

Decision decision_of(const ir::Graph& graph, const ir::Node& node) {
  // The order of exact ties is a path's choice for any dtype, unless the sort is stable.
  const bool sorts = node.op == ir::OpKind::Sort || node.op == ir::OpKind::Argsort;
  if ((sorts && !node.attrs.get_bool("stable", false)) || node.op == ir::OpKind::Topk) {
    return Decision::Index;
  }
  if (!reads_floating(graph, node)) return Decision::None;
  switch (node.op) {
    case ir::OpKind::Floor:
    case ir::OpKind::Ceil:
    case ir::OpKind::Round:
    case ir::OpKind::Sign:
    case ir::OpKind::Signbit:
    case ir::OpKind::Copysign:  // b's sign, which a rounding near 0 can flip
    case ir::OpKind::Trunc:
    case ir::OpKind::Frac:
    case ir::OpKind::Fmod:
    case ir::OpKind::Remainder:
    case ir::OpKind::Threshold:
    case ir::OpKind::Hardshrink:
    case ir::OpKind::Eq:
    case ir::OpKind::Ne:
    case ir::OpKind::Lt:
    case ir::OpKind::Le:
    case ir::OpKind::Gt:
    case ir::OpKind::Ge:
    case ir::OpKind::Any:  // x != 0, reduced: a rounding can make an element zero or not
    case ir::OpKind::All:
      return Decision::Elementwise;
    case ir::OpKind::Div:
      return node.attrs.has("rounding_mode") ? Decision::Elementwise : Decision::None;
    case ir::OpKind::Logit:  // with eps: a clamp to [eps, 1 - eps]
      return node.attrs.has("eps") ? Decision::Kink : Decision::None;
    case ir::OpKind::Cast:
      return !node.outputs.empty() && !is_floating(graph.type(node.outputs[0]).dtype)
                 ? Decision::Elementwise
                 : Decision::None;
    case ir::OpKind::Argmax:
    case ir::OpKind::Argmin:
    case ir::OpKind::Sort:
    case ir::OpKind::Argsort:
    case ir::OpKind::Topk:
      return Decision::Index;
    case ir::OpKind::Max:
    case ir::OpKind::Min:
      return node.outputs.size() == 2 ? Decision::Index : Decision::None;
    case ir::OpKind::Cummax:
    case ir::OpKind::Cummin:
      return Decision::Index;
    case ir::OpKind::Relu:
    case ir::OpKind::LeakyRelu:
    case ir::OpKind::Rrelu:
    case ir::OpKind::Hardtanh:
    case ir::OpKind::Clamp:
    case ir::OpKind::Abs:
    case ir::OpKind::Maximum:
    case ir::OpKind::Minimum:
    case ir::OpKind::Fmax:
    case ir::OpKind::Fmin:
    case ir::OpKind::Prelu:
    case ir::OpKind::Hardswish:
    case ir::OpKind::Hardsigmoid:
    case ir::OpKind::Relu6:
    case ir::OpKind::Selu:
    case ir::OpKind::Softshrink:
    case ir::OpKind::L1Loss:  // |self - target|
    // A zero distance passes no gradient, and p = 1 takes the sign of each difference: a
    // rounding moves both (and PyTorch's p = 2 by matrix product, above 25 rows, puts a
    // rounding error where the distance is 0).
    case ir::OpKind::Cdist:
    case ir::OpKind::Pdist:
      return Decision::Kink;
    default:
      return Decision::None;
  }
}

// Ops whose kernels accumulate many terms: their float32 error grows with the terms' sizes,
// not the result's, so each of their floating inputs carries a rounding of its own.
bool accumulates(ir::OpKind op) {
  switch (op) {
    case ir::OpKind::Sum:
    case ir::OpKind::Mean:
    case ir::OpKind::Prod:
    case ir::OpKind::Cumsum:
    case ir::OpKind::Cumprod:
    case ir::OpKind::Logcumsumexp:
    // The losses' mean and sum (reduction "none" only rounds each element: looser than it
    // needs, not wrong).
    case ir::OpKind::MseLoss:
    case ir::OpKind::L1Loss:
    case ir::OpKind::SmoothL1Loss:
    case ir::OpKind::HuberLoss:
    // nll_loss and cross_entropy_loss: their picked scores summed (and cross_entropy's
    // log_softmax over the classes).
    case ir::OpKind::NllLoss:
    case ir::OpKind::CrossEntropyLoss:
    case ir::OpKind::BinaryCrossEntropyWithLogits:
    case ir::OpKind::KlDiv:
    case ir::OpKind::Var:
    case ir::OpKind::Std:
    case ir::OpKind::VarMean:
    case ir::OpKind::StdMean:
    case ir::OpKind::Logsumexp:
    case ir::OpKind::Softmax:
    case ir::OpKind::LogSoftmax:
    case ir::OpKind::Matmul:
    case ir::OpKind::Mm:
    case ir::OpKind::Bmm:
    case ir::OpKind::Linear:
    case ir::OpKind::Addmm:
    case ir::OpKind::Dot:
    case ir::OpKind::Mv:
    case ir::OpKind::Trace:
    case ir::OpKind::Baddbmm:
    case ir::OpKind::Cdist:
    case ir::OpKind::Pdist:
    case ir::OpKind::Conv1d:
    case ir::OpKind::Conv2d:
    case ir::OpKind::ConvTranspose1d:
    case ir::OpKind::ConvTranspose2d:
    case ir::OpKind::AvgPool1d:
    case ir::OpKind::AvgPool2d:
    case ir::OpKind::AdaptiveAvgPool2d:
    case ir::OpKind::AvgPool3d:
    case ir::OpKind::AdaptiveAvgPool3d:
    case ir::OpKind::BatchNorm:
    case ir::OpKind::LayerNorm:
    case ir::OpKind::RmsNorm:
    case ir::OpKind::GroupNorm:
    case ir::OpKind::InstanceNorm:
    case ir::OpKind::ScatterAdd:
    case ir::OpKind::IndexAdd:
    case ir::OpKind::IndexPut:  // accumulate adds repeated rows; a plain put moves values
    case ir::OpKind::Interpolate:
    case ir::OpKind::Col2im:      // overlapping blocks add up
    case ir::OpKind::Tanhshrink:  // a difference that cancels: decomposed below
    case ir::OpKind::Sinc:        // its slope is a difference that cancels: decomposed below
      return true;
    default:
      return false;
  }
}

// Ops that move, select or compare values without rounding them: no perturbation of their own.
bool exact(ir::OpKind op) {
  switch (op) {
    case ir::OpKind::Neg:
    case ir::OpKind::Abs:
    case ir::OpKind::Relu:
    case ir::OpKind::Hardtanh:
    case ir::OpKind::Clamp:
    case ir::OpKind::Maximum:
    case ir::OpKind::Minimum:
    case ir::OpKind::Fmax:
    case ir::OpKind::Fmin:
    case ir::OpKind::Copysign:
    case ir::OpKind::NanToNum:
    case ir::OpKind::Max:
    case ir::OpKind::Min:
    case ir::OpKind::Amax:
    case ir::OpKind::Amin:
    case ir::OpKind::Argmax:
    case ir::OpKind::Argmin:
    case ir::OpKind::Sort:
    case ir::OpKind::Argsort:
    case ir::OpKind::Topk:
    case ir::OpKind::MaxPool1d:
    case ir::OpKind::MaxPool2d:
    case ir::OpKind::MaxPool3d:
    case ir::OpKind::AdaptiveMaxPool1d:
    case ir::OpKind::AdaptiveMaxPool2d:
    case ir::OpKind::Where:
    case ir::OpKind::Floor:
    case ir::OpKind::Ceil:
    case ir::OpKind::Round:
    case ir::OpKind::Sign:
    case ir::OpKind::Trunc:
    case ir::OpKind::Frac:
    case ir::OpKind::Fmod:
    case ir::OpKind::Isnan:
    case ir::OpKind::Isinf:
    case ir::OpKind::Isfinite:
    case ir::OpKind::Relu6:
    case ir::OpKind::Threshold:
    case ir::OpKind::Hardshrink:
    case ir::OpKind::Eq:
    case ir::OpKind::Ne:
    case ir::OpKind::Lt:
    case ir::OpKind::Le:
    case ir::OpKind::Gt:
    case ir::OpKind::Ge:
    case ir::OpKind::Embedding:
    // Draws: their values do not depend on their input's (judged by properties, not values).
    case ir::OpKind::RandLike:
    case ir::OpKind::RandnLike:
    case ir::OpKind::Rand:
    case ir::OpKind::Randn:
    case ir::OpKind::RandintLike:
    case ir::OpKind::Randperm:
    case ir::OpKind::Reshape:
    case ir::OpKind::Flatten:
    case ir::OpKind::Squeeze:
    case ir::OpKind::Unsqueeze:
    case ir::OpKind::Transpose:
    case ir::OpKind::Permute:
    case ir::OpKind::Expand:
    case ir::OpKind::Slice:
    case ir::OpKind::Select:
    case ir::OpKind::Flip:
    case ir::OpKind::Roll:
    case ir::OpKind::Repeat:
    case ir::OpKind::Diagonal:
    case ir::OpKind::SliceScatter:
    case ir::OpKind::SelectScatter:
    case ir::OpKind::Cat:
    case ir::OpKind::Stack:
    case ir::OpKind::Split:
    case ir::OpKind::Chunk:
    case ir::OpKind::Pad:
    case ir::OpKind::Tril:
    case ir::OpKind::Triu:
    case ir::OpKind::Gather:
    case ir::OpKind::IndexSelect:
    case ir::OpKind::MaskedFill:
    case ir::OpKind::Im2col:
    case ir::OpKind::Copy:  // the generator gives src self's dtype: no rounding cast
    case ir::OpKind::MaskedScatter:
    case ir::OpKind::Scatter:
    case ir::OpKind::PixelShuffle:
    case ir::OpKind::PixelUnshuffle:
    case ir::OpKind::Cummax:
    case ir::OpKind::Cummin:
      return true;
    default:
      return false;
  }
}

// scatter_reduce takes the max or min of its terms (amax, amin: exact, as amax is) or
// accumulates them (sum, prod, mean).
bool exact(const ir::Node& node) {
  if (node.op == ir::OpKind::ScatterReduce) {
    const std::string reduce = node.attrs.get_string("reduce", "sum");
    return reduce == "amax" || reduce == "amin";
  }
  return exact(node.op);
}
bool accumulates(const ir::Node& node) {
  return node.op == ir::OpKind::ScatterReduce ? !exact(node) : accumulates(node.op);
}

}  // namespace weft::oracle::rounding_detail
