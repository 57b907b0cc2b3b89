// Per-op facts of the value search (value_op_facts.h): element pass-through, index bounds,
// distinct indices, straight-through gradients and fan-in.
#include "value_op_facts.h"

#include <cstdint>
#include <optional>

#include "weft/shape.h"

namespace weft::gen {

using ir::OpKind;

// Ops whose outputs hold some of their input's elements unchanged, so that an integer leaf
// that flows through them still reaches an index slot as indices.
bool passes_elements(OpKind op, std::size_t slot) {
  switch (op) {
    case OpKind::Reshape:
    case OpKind::Flatten:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
    case OpKind::Transpose:
    case OpKind::Permute:
    case OpKind::Expand:
    case OpKind::Slice:
    case OpKind::Select:
    case OpKind::SliceScatter:
    case OpKind::SelectScatter:
    case OpKind::Cat:
    case OpKind::Stack:
    case OpKind::Split:
    case OpKind::Chunk:
    case OpKind::Tril:
    case OpKind::Triu:
    case OpKind::Pad:
    case OpKind::Maximum:
    case OpKind::Minimum:
    case OpKind::Fmax:
    case OpKind::Fmin:
    case OpKind::NanToNum:
    case OpKind::Amax:
    case OpKind::Amin:
    case OpKind::Flip:
    case OpKind::Roll:
    case OpKind::Repeat:
    case OpKind::Diagonal:
    case OpKind::Cast:
    case OpKind::Sort:
    case OpKind::Topk:
      return true;
    case OpKind::Where:
      return slot >= 1;
    case OpKind::MaskedFill:
      return slot == 0;
    case OpKind::Copy:
      return slot == 1;
    case OpKind::MaskedScatter:
      return slot != 1;
    case OpKind::Gather:
    case OpKind::IndexSelect:
      return slot == 0;
    default:
      return false;
  }
}

// The exclusive upper bound of the indices that `node` reads from its input `slot`, if that
// slot holds indices.

std::optional<std::int64_t> index_bound(const ir::Graph& graph, const ir::Node& node,
                                        std::size_t slot) {
  if (node.op == OpKind::Embedding && slot == 0 && node.inputs.size() > 1) {
    const ir::Shape& weight = graph.type(node.inputs[1]).shape;
    return weight.empty() ? 1 : weight[0];
  }
  const bool indexes_self = node.op == OpKind::Gather || node.op == OpKind::IndexSelect ||
                            node.op == OpKind::ScatterAdd || node.op == OpKind::ScatterReduce ||
                            node.op == OpKind::IndexAdd || node.op == OpKind::Scatter;
  if ((node.op == OpKind::NllLoss || node.op == OpKind::CrossEntropyLoss) && slot == 1) {
    const ir::Shape& scores = graph.type(node.inputs[0]).shape;  // [C] or [N, C, ...]
    if (scores.empty()) return std::nullopt;
    return scores[scores.size() == 1 ? 0 : 1];
  }
  if (node.op == OpKind::IndexPut && slot == 1) {
    const ir::Shape& x = graph.type(node.inputs[0]).shape;
    return x.empty() ? 1 : x[0];
  }
  if (indexes_self && slot == 1) {
    const ir::Shape& x = graph.type(node.inputs[0]).shape;
    if (x.empty()) return 1;  // a scalar indexes like a one-element dim
    const auto rank = static_cast<std::int64_t>(x.size());
    std::int64_t dim = node.attrs.get_int("dim");
    if (dim < 0) dim += rank;
    if (dim < 0 || dim >= rank) return std::nullopt;
    return x[static_cast<std::size_t>(dim)];
  }
  return std::nullopt;
}

// Whether the indices in `slot` of `node` must differ from each other: index_put without
// accumulate and scatter write a repeated index twice, and which write stays is undefined in
// PyTorch. scatter's must differ within each line along its dim (distinct_dim).
bool needs_distinct_indices(const ir::Node& node, std::size_t slot) {
  if (node.op == OpKind::Scatter) return slot == 1;
  return node.op == OpKind::IndexPut && slot == 1 && !node.attrs.get_bool("accumulate", false);
}
std::optional<std::int64_t> distinct_dim(const ir::Node& node, std::size_t rank) {
  if (node.op != OpKind::Scatter || rank == 0) return std::nullopt;
  const std::int64_t dim = node.attrs.get_int("dim");
  return dim < 0 ? dim + static_cast<std::int64_t>(rank) : dim;
}

// Ops that are flat or clipped in places; the search's loss passes gradients straight
// through them (the value is the op's, the gradient the identity's).
bool straight_through(OpKind op) {
  switch (op) {
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
    case OpKind::Sign:
    case OpKind::Trunc:
    case OpKind::Relu:
    case OpKind::Relu6:
    case OpKind::Hardswish:
    case OpKind::Hardsigmoid:
    case OpKind::Threshold:
    case OpKind::Hardshrink:
    case OpKind::Softshrink:
    case OpKind::Clamp:
    case OpKind::Hardtanh:
      return true;
    default:
      return false;
  }
}

// The fan-in of a weight feeding `slot` of `node`, if the slot is a weight's.
std::optional<std::int64_t> fan_in(const ir::Node& node, std::size_t slot, const ir::Shape& w) {
  if (w.empty()) return std::nullopt;
  switch (node.op) {
    case OpKind::Linear:
      if (slot == 1) return w.back();
      break;
    case OpKind::Conv1d:
    case OpKind::Conv2d:
      if (slot == 1) return numel_of(ir::Shape(w.begin() + 1, w.end()));
      break;
    case OpKind::ConvTranspose1d:
    case OpKind::ConvTranspose2d:
      // weight [in, out/groups, *kernel]: an output sums in/groups channels over the kernel.
      if (slot == 1 && w.size() >= 2) {
        const std::int64_t groups = std::max<std::int64_t>(1, node.attrs.get_int("groups", 1));
        return std::max<std::int64_t>(1, w[0] / groups) *
               numel_of(ir::Shape(w.begin() + 2, w.end()));
      }
      break;
    case OpKind::Mm:
    case OpKind::Bmm:
    case OpKind::Matmul:
      if (slot == 1) return w.size() >= 2 ? w[w.size() - 2] : w[0];
      break;
    case OpKind::Addmm:
      if (slot == 2) return w[0];
      break;
    default:
      break;
  }
  return std::nullopt;
}

}  // namespace weft::gen
