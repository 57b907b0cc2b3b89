// Writes through views, functionalized: slice_scatter and select_scatter return a copy of the
// base with the slice (the selected index) replaced by src. They are how an in-place write
// into a view of a value reads in a pure graph (PyTorch's functionalization writes the same
// ops), so the oracle's reference and rounding model see a write through a view as dataflow.
// Backward: the base's gradient with the written region zeroed, and src's the region itself.
// copy (what `x.copy_(src)` functionalizes to) and masked_scatter write src over all of self,
// or over the elements a mask selects, in the same way.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/elementwise.h"
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

// src broadcast to self's shape in self's dtype; self passes a zero gradient (its values are
// overwritten), src receives g summed over its broadcast dims.
Tensor copy(const Tensor& self, const Tensor& src) {
  WEFT_TRACE_OP(Copy, (self, src), ir::Attributes(), copy(self, src));
  Tensor out;
  {
    autograd::NoGradGuard guard;
    out = self.detach().contiguous().clone();
    out.copy_(src.detach());
  }
  if (self.is_floating_point()) {
    const Shape src_shape = src.sizes();
    const Dtype src_dtype = src.dtype();
    autograd::record_function(
        "CopyBackwards", {self, src}, {out}, {},
        [src_shape, src_dtype](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
          return std::vector<Tensor>{zeros_like(g[0]),
                                     autograd::sum_to(g[0], src_shape).to(src_dtype)};
        });
  }
  return out;
}

// self (broadcast with mask) with its masked elements replaced, in row-major order, by the
// leading elements of source. Backward: self's gradient with the masked elements zeroed, and
// source's the masked elements of g at the positions they were read from (the rest zero).
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  WEFT_TRACE_OP(MaskedScatter, (self, mask, source), ir::Attributes(),
                masked_scatter(self, mask, source));
  if (mask.dtype() != Dtype::Bool) {
    throw Error(std::string("masked_scatter_ only supports boolean masks, but got mask with ") +
                "dtype " + torch_scalar_type_name(mask.dtype()));
  }
  if (source.dtype() != self.dtype()) {
    // PyTorch's message, its missing space included.
    throw Error(std::string("masked_scatter: expected self and source to have same dtypes but ") +
                "got" + torch_scalar_type_name(self.dtype()) + " and " +
                torch_scalar_type_name(source.dtype()));
  }
  const Shape shape = broadcast_shapes(self.sizes(), mask.sizes());
  // The flat positions of the masked elements, in row-major order.
  const Tensor full_mask = expand(mask, shape).contiguous();
  std::vector<std::int64_t> positions;
  {
    const std::vector<bool> selected = full_mask.to_vector<bool>();
    for (std::size_t i = 0; i < selected.size(); ++i) {
      if (selected[i]) positions.push_back(static_cast<std::int64_t>(i));
    }
  }
  if (static_cast<std::int64_t>(positions.size()) > source.numel()) {
    throw Error("Number of elements of source < number of ones in mask");
  }
  Tensor out;
  {
    autograd::NoGradGuard guard;
    out = expand(self.detach(), shape).contiguous().clone();
    const Tensor from = source.detach().contiguous();
    kernels::dispatch(self.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* op = out.data<T>();
      const T* sp = from.data<T>();
      for (std::size_t k = 0; k < positions.size(); ++k) op[positions[k]] = sp[k];
    });
  }
  if (self.is_floating_point()) {
    const Shape self_shape = self.sizes(), source_shape = source.sizes();
    const std::int64_t source_numel = source.numel();
    const auto count = static_cast<std::int64_t>(positions.size());
    std::vector<std::int64_t> reads(positions.size());
    for (std::size_t k = 0; k < reads.size(); ++k) reads[k] = static_cast<std::int64_t>(k);
    autograd::record_function(
        "MaskedScatterBackward0", {self, source}, {out},
        {full_mask, tensor(positions), tensor(reads)},
        [self_shape, source_shape, source_numel, count](const std::vector<Tensor>& g,
                                                        const std::vector<Tensor>& s) {
          const Tensor zero = zeros_like(g[0]);
          const Tensor grad_self = autograd::sum_to(where(s[0], zero, g[0]), self_shape);
          Tensor grad_source = zeros({source_numel}, dtype(g[0].dtype()));
          if (count > 0) {
            grad_source =
                index_put(grad_source, s[2], index_select(reshape(g[0], {-1}), 0, s[1]), false);
          }
          return std::vector<Tensor>{grad_self, reshape(grad_source, source_shape)};
        });
  }
  return out;
}

}  // namespace weft
