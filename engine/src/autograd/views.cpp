// In-place writes through views, as PyTorch's autograd handles them: the base's history is
// rewritten (CopySlices) so that a gradient of the base reaches both the base's old value
// (outside the written region) and the source written into it, and every view of the base is
// again a view of its new history. Gradients are mapped between a view and its base through
// their geometry in the shared storage, so any view (slice, select, transpose, permute,
// reshape of a contiguous tensor, views of views) is handled the same way.
#include <algorithm>

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft::autograd {

namespace {

struct Geometry {
  Shape sizes;
  Shape strides;
  std::int64_t offset = 0;
};

Geometry geometry_of(const Tensor& t) {
  return {t.sizes(), t.strides(), t.storage_offset()};
}

// One past the last storage element `g` reaches (0 when it has no element).
std::int64_t extent_of(const Geometry& g) {
  std::int64_t last = g.offset;
  for (std::size_t d = 0; d < g.sizes.size(); ++d) {
    if (g.sizes[d] == 0) return 0;
    last += (g.sizes[d] - 1) * g.strides[d];
  }
  return last + 1;
}

// `g` laid over the elements of a 1-d `buffer`; no history.
Tensor over(const Tensor& buffer, const Geometry& g) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = buffer.storage();
  impl->sizes = g.sizes;
  impl->strides = g.strides;
  impl->offset = buffer.storage_offset() + g.offset;
  impl->dtype = buffer.dtype();
  impl->is_view = true;
  return Tensor(std::move(impl));
}

// Storage-space buffer for moving gradients between the geometries of a base and its views.
Tensor buffer_for(const Tensor& like, const Geometry& a, const Geometry& b) {
  return zeros({std::max(extent_of(a), extent_of(b))}, dtype(like.dtype()));
}

void refuse_double_backward() {
  if (grad_enabled()) {
    throw Error(
        "weft: a double backward through an in-place write into a view is not supported "
        "(create_graph=True over CopySlices)");
  }
}

// The gradient of a view's value with respect to its base: the view's region of a zero base.
std::shared_ptr<Node> view_of_base_node(const Geometry& base, const Geometry& view) {
  return std::make_shared<FunctionNode>(
      "AsStridedBackward0", std::vector<SavedTensor>{},
      [base, view](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
        refuse_double_backward();
        const Tensor buffer = buffer_for(g[0], base, view);
        over(buffer, view).copy_(g[0]);
        return std::vector<Tensor>{over(buffer, base).clone()};
      });
}

// A handle to `base`'s present history (its edge), for recording a node that replaces it.
Tensor history_of(const Tensor& base) {
  auto impl = std::make_shared<TensorImpl>(*base.impl());
  impl->grad = nullptr;
  impl->view_base = nullptr;
  return Tensor(std::move(impl));
}

}  // namespace

void record_write_through_view(const Tensor& view, const Tensor& source) {
  const Tensor base(view.impl()->view_base);
  if (base.is_leaf() && base.requires_grad()) {
    throw Error(
        "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
  for (std::size_t d = 0; d < view.sizes().size(); ++d) {
    if (view.strides()[d] == 0 && view.sizes()[d] > 1) {
      throw Error(
          "unsupported operation: more than one element of the written-to tensor refers to a "
          "single memory location. Please clone() the tensor before performing the operation.");
    }
  }
  const Geometry base_geometry = geometry_of(base);
  const Geometry view_geometry = geometry_of(view);
  const Shape source_shape = source.sizes();
  const Dtype source_dtype = source.dtype();
  // The base's gradient: outside the region to its old value, inside to the source.
  auto copy_slices = std::make_shared<FunctionNode>(
      "CopySlices", std::vector<SavedTensor>{},
      [base_geometry, view_geometry, source_shape, source_dtype](const std::vector<Tensor>& g,
                                                                 const std::vector<Tensor>&) {
        refuse_double_backward();
        const Tensor buffer = buffer_for(g[0], base_geometry, view_geometry);
        over(buffer, base_geometry).copy_(g[0]);
        Tensor region = over(buffer, view_geometry);
        Tensor to_source = sum_to(region.clone(), source_shape).to(source_dtype);
        region.zero_();
        return std::vector<Tensor>{over(buffer, base_geometry).clone(), to_source};
      });
  record(copy_slices, {history_of(base), source}, {base});
  record(view_of_base_node(base_geometry, view_geometry), {base}, {view});
  view.impl()->view_version = view.version();
}

void refresh_view_history(const Tensor& tensor) {
  TensorImpl* impl = tensor.impl();
  if (!impl->view_base || impl->view_version == tensor.version()) return;
  impl->view_version = tensor.version();
  const Tensor base(impl->view_base);
  if (!base.requires_grad()) return;
  record(view_of_base_node(geometry_of(base), geometry_of(tensor)), {base}, {tensor});
}

}  // namespace weft::autograd
