// Writes through views, functionalized: slice_scatter and select_scatter return a copy of the
// base with the slice (the selected index) replaced by src. They are how an in-place write
// into a view of a value reads in a pure graph (PyTorch's functionalization writes the same
// ops), so the oracle's reference and rounding model see a write through a view as dataflow.
// Backward: the base's gradient with the written region zeroed, and src's the region itself.
#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {

namespace {

// out = base with make_slot(out) replaced by src; gradients as described above.
template <typename MakeSlot>
Tensor scatter_through(const char* op_name, const Tensor& base, const Tensor& src,
                       MakeSlot make_slot) {
  Tensor out;
  {
    autograd::NoGradGuard guard;
    out = base.detach().clone();
    Tensor slot = make_slot(out);
    if (slot.sizes() != src.sizes()) {
      throw Error(std::string(op_name) + ": expected src to have a size equal to the slice of " +
                  "self. src size = " + shape_str(src.sizes()) +
                  ", slice size = " + shape_str(slot.sizes()));
    }
    slot.copy_(src.detach());
  }
  const Dtype src_dtype = src.dtype();
  autograd::record_function(
      std::string(op_name) == "slice_scatter" ? "SliceScatterBackward0" : "SelectScatterBackward0",
      {base, src}, {out}, {},
      [make_slot, src_dtype](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
        autograd::NoGradGuard guard;
        Tensor grad_base = g[0].clone();
        make_slot(grad_base).zero_();
        Tensor grad_src = make_slot(g[0]).contiguous().to(src_dtype);
        return std::vector<Tensor>{grad_base, grad_src};
      });
  return out;
}

}  // namespace

Tensor slice_scatter(const Tensor& base, const Tensor& src, std::int64_t dim, std::int64_t start,
                     std::int64_t end, std::int64_t step) {
  WEFT_TRACE_OP(
      SliceScatter, (base, src),
      ir::Attributes().set("dim", dim).set("start", start).set("end", end).set("step", step),
      slice_scatter(base, src, dim, start, end, step));
  return scatter_through("slice_scatter", base, src, [dim, start, end, step](const Tensor& t) {
    return slice(t, dim, start, end, step);
  });
}

Tensor select_scatter(const Tensor& base, const Tensor& src, std::int64_t dim, std::int64_t index) {
  WEFT_TRACE_OP(SelectScatter, (base, src), ir::Attributes().set("dim", dim).set("index", index),
                select_scatter(base, src, dim, index));
  return scatter_through("select_scatter", base, src,
                         [dim, index](const Tensor& t) { return select(t, dim, index); });
}

}  // namespace weft
