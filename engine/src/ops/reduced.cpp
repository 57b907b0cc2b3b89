// float16 and bfloat16 through every op: the op runs on float32 copies of its 16-bit inputs
// and its floating results are rounded to the op's result type, as PyTorch's CPU kernels
// compute in their "opmath" type (float32) and round once per op. The casts are the
// differentiable ones, so a gradient is computed in float32 inside each op and stored in the
// 16-bit type between ops, as in PyTorch.
#include <algorithm>
#include <optional>

#include "kernels/elementwise.h"
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ir/execute.h"
#include "weft/ir/random.h"
#include "weft/ops.h"

namespace weft::ops_detail {

namespace {

// Ops that only move or convert elements, or draw them: they run on the 16-bit storage itself
// (views stay views, and a cast converts once).
bool moves_only(ir::OpKind op) {
  switch (op) {
    case ir::OpKind::Cast:
    case ir::OpKind::Contiguous:
    case ir::OpKind::Reshape:
    case ir::OpKind::Flatten:
    case ir::OpKind::Squeeze:
    case ir::OpKind::Unsqueeze:
    case ir::OpKind::Transpose:
    case ir::OpKind::Permute:
    case ir::OpKind::Expand:
    case ir::OpKind::Slice:
    case ir::OpKind::Select:
    case ir::OpKind::SliceScatter:
    case ir::OpKind::SelectScatter:
    case ir::OpKind::Split:
    case ir::OpKind::Chunk:
    case ir::OpKind::Cat:
    case ir::OpKind::Stack:
    case ir::OpKind::Copy:  // the result is self's dtype, whatever src's
      return true;
    default:
      // Samplers draw in the 16-bit type itself: U[0, 1) rounded from float32 could reach 1.
      return ir::is_sampler(op);
  }
}

// Ops whose kernels refuse operands of different floating types ("expected m1 and m2 to have
// the same dtype"): with such operands they run as they are, and refuse as PyTorch does.
bool needs_one_dtype(ir::OpKind op) {
  switch (op) {
    case ir::OpKind::Matmul:
    case ir::OpKind::Mm:
    case ir::OpKind::Bmm:
    case ir::OpKind::Linear:
    case ir::OpKind::Addmm:
    case ir::OpKind::Conv1d:
    case ir::OpKind::Conv2d:
    case ir::OpKind::ConvTranspose1d:
    case ir::OpKind::ConvTranspose2d:
      return true;
    default:
      return false;
  }
}

// The dtype the op's floating results take: the input's for the normalizations (PyTorch's
// mixed-precision norms keep the activation's type), else PyTorch's result type.
Dtype result_dtype(ir::OpKind op, const std::vector<Tensor>& inputs) {
  if ((op == ir::OpKind::BatchNorm || op == ir::OpKind::LayerNorm || op == ir::OpKind::GroupNorm ||
       op == ir::OpKind::InstanceNorm) &&
      !inputs.empty()) {
    return inputs[0].dtype();
  }
  return kernels::result_type(inputs);
}

}  // namespace

bool runs_in_float32(ir::OpKind op, const std::vector<Tensor>& inputs) {
  if (moves_only(op)) return false;
  if (needs_one_dtype(op)) {
    std::optional<Dtype> seen;
    for (const Tensor& t : inputs) {
      if (!t.defined() || !t.is_floating_point()) continue;
      if (seen && *seen != t.dtype()) return false;
      seen = t.dtype();
    }
  }
  return true;
}

std::vector<Tensor> run_in_float32(ir::OpKind op, const std::vector<Tensor>& inputs,
                                   const ir::Attributes& attrs) {
  std::vector<Tensor> widened;
  widened.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    widened.push_back(t.defined() && is_reduced_floating(t.dtype()) ? t.to(Dtype::Float32) : t);
  }
  std::vector<Tensor> outputs;
  if (op == ir::OpKind::BatchNorm) {
    // Not through run_node, which leaves the running statistics as they were.
    const auto input = [&](std::size_t i) { return i < widened.size() ? widened[i] : Tensor(); };
    outputs.push_back(batch_norm(input(0), input(3), input(4), input(1), input(2),
                                 attrs.get_bool("training", false),
                                 attrs.get_float("momentum", 0.1), attrs.get_float("eps", 1e-5)));
  } else {
    ir::Node node;
    node.op = op;
    node.attrs = attrs;
    // nan_to_num's default replacements for inf are the 16-bit type's own largest values.
    if (op == ir::OpKind::NanToNum && !inputs.empty() && inputs[0].defined()) {
      const double big = dtype_max(inputs[0].dtype());
      if (!attrs.has("posinf")) node.attrs.set("posinf", big);
      if (!attrs.has("neginf")) node.attrs.set("neginf", -big);
    }
    outputs = ir::run_node(node, widened, std::nullopt);
  }
  const Dtype target = result_dtype(op, inputs);
  if (is_reduced_floating(target)) {
    for (Tensor& out : outputs) {
      if (out.defined() && out.dtype() == Dtype::Float32) out = out.to(target);
    }
  }
  // batch_norm updates its running statistics in place: on the copies, so back to the
  // originals (the update is not differentiated, as in PyTorch).
  if (op == ir::OpKind::BatchNorm) {
    autograd::NoGradGuard guard;
    for (std::size_t i = 3; i < inputs.size(); ++i) {
      if (inputs[i].defined() && !widened[i].is_same(inputs[i])) {
        Tensor(inputs[i]).detach().copy_(widened[i]);
      }
    }
  }
  return outputs;
}

}  // namespace weft::ops_detail
