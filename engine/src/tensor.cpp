// Tensor handles: metadata, creation, copies and conversion, printing. Views and math live
// in ops/; this file holds what every op needs.
#include "weft/tensor.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "kernels/copy.h"
#include "kernels/dispatch.h"
#include "kernels/half.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ir/tracer.h"
#include "weft/memory.h"
#include "weft/ops.h"

namespace weft {

namespace {

const TensorImpl& checked(const std::shared_ptr<TensorImpl>& impl) {
  if (!impl) throw Error("the tensor is undefined (default-constructed)");
  return *impl;
}

Tensor make_tensor(IntList shape, Dtype dtype) {
  for (std::int64_t s : shape) {
    if (s < 0) {
      throw Error("Trying to create tensor with negative dimension " + std::to_string(s) + ": " +
                  shape_str(shape));
    }
  }
  auto impl = std::make_shared<TensorImpl>();
  impl->sizes = shape.vec();
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  impl->storage = std::make_shared<Storage>(numel_of(shape) * itemsize(dtype));
  return Tensor(std::move(impl));
}
}  // namespace

std::string Device::str() const {
  return type == DeviceType::CPU ? "cpu" : "cuda:" + std::to_string(index);
}

Storage::Storage(std::size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
  if (device.type != DeviceType::CPU) {
    throw Error("weft's engine allocates on the CPU only; got device " + device.str());
  }
  data_ = memory::allocate(nbytes);
}

Storage::~Storage() {
  memory::release(data_, nbytes_);
}

// ---- metadata ----
const Shape& Tensor::sizes() const {
  return checked(impl_).sizes;
}
const Shape& Tensor::strides() const {
  return checked(impl_).strides;
}
std::int64_t Tensor::size(std::int64_t d) const {
  return sizes()[wrap_dim(d, dim())];
}
std::int64_t Tensor::stride(std::int64_t d) const {
  return strides()[wrap_dim(d, dim())];
}
std::int64_t Tensor::dim() const {
  return static_cast<std::int64_t>(sizes().size());
}
std::int64_t Tensor::numel() const {
  return numel_of(sizes());
}
std::int64_t Tensor::storage_offset() const {
  return checked(impl_).offset;
}
Dtype Tensor::dtype() const {
  return checked(impl_).dtype;
}
Device Tensor::device() const {
  return checked(impl_).storage->device();
}
const std::shared_ptr<Storage>& Tensor::storage() const {
  return checked(impl_).storage;
}
std::uint32_t Tensor::version() const {
  return storage()->version();
}

void* Tensor::raw_data() const {
  const TensorImpl& t = checked(impl_);
  return static_cast<char*>(t.storage->data()) + t.offset * itemsize(t.dtype);
}

bool Tensor::is_contiguous() const {
  const TensorImpl& t = checked(impl_);
  std::int64_t expected = 1;
  for (std::size_t i = t.sizes.size(); i-- > 0;) {
    if (t.sizes[i] == 1) continue;
    if (t.sizes[i] == 0) return true;
    if (t.strides[i] != expected) return false;
    expected *= t.sizes[i];
  }
  return true;
}

// ---- values ----
double Tensor::item() const {
  if (numel() != 1) {
    throw Error("a Tensor with " + std::to_string(numel()) +
                " elements cannot be converted to Scalar");
  }
  return kernels::dispatch_storage(dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return kernels::convert_any<double>(*data<T>());
  });
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  const Tensor c = contiguous();
  std::vector<T> out(static_cast<std::size_t>(c.numel()));
  kernels::dispatch_storage(c.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    const S* p = c.data<S>();
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = kernels::convert_any<T>(p[i]);
  });
  return out;
}
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<std::int64_t> Tensor::to_vector<std::int64_t>() const;
template std::vector<std::int32_t> Tensor::to_vector<std::int32_t>() const;
template std::vector<bool> Tensor::to_vector<bool>() const;

Tensor Tensor::clone() const {
  Tensor out = make_tensor(sizes(), dtype());
  kernels::copy_into(out, *this);
  // clone is differentiable: the gradient passes through unchanged.
  autograd::record_function("CloneBackward0", {*this}, {out}, {},
                            [](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
                              return std::vector<Tensor>{g[0]};
                            });
  // A copy holds the same value: a trace keeps using the original's.
  if (ir::Tracer* tracer = ir::active_tracer()) tracer->add_alias(*this, out);
  return out;
}

Tensor Tensor::contiguous() const {
  return is_contiguous() ? *this : clone();
}

Tensor Tensor::to(Dtype target) const {
  return target == dtype() ? *this : cast(*this, target);
}

Tensor Tensor::to(Device device) const {
  if (device != kCPU) {
    throw Error("weft's engine runs on the CPU only; cannot move a tensor to " + device.str());
  }
  return *this;
}

Tensor Tensor::detach() const {
  auto impl = std::make_shared<TensorImpl>();
  const TensorImpl& t = checked(impl_);
  impl->storage = t.storage;
  impl->sizes = t.sizes;
  impl->strides = t.strides;
  impl->offset = t.offset;
  impl->dtype = t.dtype;
  impl->is_view = true;
  Tensor out(std::move(impl));
  if (ir::Tracer* tracer = ir::active_tracer()) tracer->add_alias(*this, out);
  return out;
}

namespace {
void print_values(std::ostringstream& os, const Tensor& t, std::int64_t dim,
                  std::vector<std::int64_t>& index, const std::vector<double>& flat,
                  std::int64_t& cursor) {
  if (dim == t.dim()) {
    const double v = flat[cursor++];
    if (t.dtype() == Dtype::Bool) {
      os << (v != 0 ? "True" : "False");
    } else if (is_floating(t.dtype())) {
      os << v;
    } else {
      os << static_cast<std::int64_t>(v);
    }
    return;
  }
  os << "[";
  for (std::int64_t i = 0; i < t.size(dim); ++i) {
    if (i) os << (dim + 1 == t.dim() ? ", " : ",\n" + std::string(dim + 1, ' '));
    index.push_back(i);
    print_values(os, t, dim + 1, index, flat, cursor);
    index.pop_back();
  }
  os << "]";
}
}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "Tensor(undefined)";
  std::ostringstream os;
  os << "tensor(";
  if (numel() <= 1000) {
    const std::vector<double> flat = to_vector<double>();
    std::vector<std::int64_t> index;
    std::int64_t cursor = 0;
    print_values(os, *this, 0, index, flat, cursor);
  } else {
    os << "...";
  }
  os << ", shape=" << shape_str(sizes()) << ", dtype=" << dtype_name(dtype());
  if (grad_fn())
    os << ", grad_fn=<" << grad_fn()->name() << ">";
  else if (requires_grad())
    os << ", requires_grad=True";
  os << ")";
  return os.str();
}

// ---- autograd accessors ----
bool Tensor::requires_grad() const {
  const TensorImpl& t = checked(impl_);
  autograd::refresh_view_history(*this);
  return t.requires_grad || t.grad_fn != nullptr;
}

Tensor& Tensor::requires_grad_(bool required) {
  TensorImpl& t = const_cast<TensorImpl&>(checked(impl_));
  if (t.grad_fn && !required) {
    throw Error(
        "you can only change requires_grad flags of leaf variables. If you want to use a "
        "computed variable in a subgraph that doesn't require differentiation use "
        "var_no_grad = var.detach().");
  }
  if (required && !is_floating(t.dtype)) {
    throw Error("only Tensors of floating point dtype can require gradients");
  }
  t.requires_grad = required;
  return *this;
}

bool Tensor::is_leaf() const {
  checked(impl_);
  autograd::refresh_view_history(*this);
  return impl_->grad_fn == nullptr;
}
const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  checked(impl_);
  autograd::refresh_view_history(*this);
  return impl_->grad_fn;
}
std::uint32_t Tensor::output_nr() const {
  return checked(impl_).output_nr;
}
Tensor Tensor::grad() const {
  return Tensor(checked(impl_).grad);
}
void Tensor::set_grad(const Tensor& grad) const {
  const_cast<TensorImpl&>(checked(impl_)).grad = grad.impl_ptr();
}

void Tensor::retain_grad() const {
  TensorImpl& t = const_cast<TensorImpl&>(checked(impl_));
  if (!requires_grad()) {
    throw Error("can't retain_grad on Tensor that has requires_grad=False");
  }
  if (!t.grad_fn || t.retains_grad) return;  // leaves always keep their grad
  t.retains_grad = true;
  t.grad_fn->retained().emplace_back(t.output_nr, impl_);
}

bool Tensor::retains_grad() const {
  return checked(impl_).retains_grad;
}

void Tensor::backward(const Tensor& gradient, bool retain_graph, bool create_graph) const {
  autograd::backward({*this}, {gradient}, retain_graph, create_graph);
}

// ---- method forms of ops ----
Tensor Tensor::view(IntList shape) const {
  return weft::view(*this, shape);
}
Tensor Tensor::reshape(IntList shape) const {
  return weft::reshape(*this, shape);
}
Tensor Tensor::flatten(std::int64_t s, std::int64_t e) const {
  return weft::flatten(*this, s, e);
}
Tensor Tensor::squeeze() const {
  return weft::squeeze(*this);
}
Tensor Tensor::squeeze(IntList dims) const {
  return weft::squeeze(*this, dims);
}
Tensor Tensor::unsqueeze(std::int64_t d) const {
  return weft::unsqueeze(*this, d);
}
Tensor Tensor::transpose(std::int64_t a, std::int64_t b) const {
  return weft::transpose(*this, a, b);
}
Tensor Tensor::t() const {
  if (dim() > 2)
    throw Error("t() expects a tensor with <= 2 dimensions, but self is " + std::to_string(dim()) +
                "D");
  return dim() < 2 ? *this : weft::transpose(*this, 0, 1);
}
Tensor Tensor::permute(IntList dims) const {
  return weft::permute(*this, dims);
}
Tensor Tensor::expand(IntList s) const {
  return weft::expand(*this, s);
}
Tensor Tensor::slice(std::int64_t d, std::int64_t s, std::int64_t e, std::int64_t step) const {
  return weft::slice(*this, d, s, e, step);
}
Tensor Tensor::narrow(std::int64_t d, std::int64_t start, std::int64_t length) const {
  const std::int64_t wrapped = wrap_dim(d, dim());
  if (start < 0) start += size(wrapped);
  if (start < 0 || length < 0 || start + length > size(wrapped)) {
    throw Error("start (" + std::to_string(start) + ") + length (" + std::to_string(length) +
                ") exceeds dimension size (" + std::to_string(size(wrapped)) + ").");
  }
  return weft::slice(*this, wrapped, start, start + length, 1);
}
Tensor Tensor::select(std::int64_t d, std::int64_t i) const {
  return weft::select(*this, d, i);
}
Tensor Tensor::sum() const {
  return weft::sum(*this);
}
Tensor Tensor::sum(IntList dims, bool keepdim) const {
  return weft::sum(*this, dims, keepdim);
}
Tensor Tensor::mean() const {
  return weft::mean(*this);
}
Tensor Tensor::mean(IntList dims, bool keepdim) const {
  return weft::mean(*this, dims, keepdim);
}
Tensor Tensor::exp() const {
  return weft::exp(*this);
}
Tensor Tensor::log() const {
  return weft::log(*this);
}
Tensor Tensor::relu() const {
  return weft::relu(*this);
}
Tensor Tensor::sigmoid() const {
  return weft::sigmoid(*this);
}
Tensor Tensor::tanh() const {
  return weft::tanh(*this);
}
Tensor Tensor::abs() const {
  return weft::abs(*this);
}
Tensor Tensor::sqrt() const {
  return weft::sqrt(*this);
}
Tensor Tensor::neg() const {
  return weft::neg(*this);
}
Tensor Tensor::pow(double e) const {
  return weft::pow(*this, e);
}
Tensor Tensor::matmul(const Tensor& o) const {
  return weft::matmul(*this, o);
}
Tensor Tensor::argmax(std::optional<std::int64_t> d, bool k) const {
  return weft::argmax(*this, d, k);
}
Tensor Tensor::softmax(std::int64_t d) const {
  return weft::softmax(*this, d);
}
Tensor Tensor::log_softmax(std::int64_t d) const {
  return weft::log_softmax(*this, d);
}

// ---- in-place ----
Tensor& Tensor::zero_() {
  return fill_(0.0);
}

Tensor& Tensor::fill_(double value) {
  // Through copy_, so a non-leaf's history is cut (its old value no longer matters).
  return copy_(wrapped_scalar(value));
}

Tensor& Tensor::copy_(const Tensor& source) {
  // source must broadcast to this tensor's own shape, not merely with it: a [3] into a 0-dim
  // tensor broadcasts with it but would write three elements (found by the reducer's shape pass).
  if (broadcast_shapes(sizes(), source.sizes()) != sizes()) {
    throw Error("output with shape " + shape_str(sizes()) + " doesn't match the broadcast shape " +
                shape_str(broadcast_shapes(sizes(), source.sizes())));
  }
  if (const ir::Tracer* tracer = ir::active_tracer()) tracer->check_not_traced(*this, "copy_");
  const bool needs_history =
      autograd::grad_enabled() && (requires_grad() || source.requires_grad());
  autograd::check_inplace(*this);
  if (needs_history && impl_->is_view && !impl_->view_base) {
    // An alias made by detach(): not a differentiable view, its base's history is not ours.
    throw Error(
        "in-place operations that need gradients are not supported on detached aliases in weft; "
        "clone() the tensor first or use the out-of-place op");
  }
  if (needs_history && is_floating_point() && impl_->view_base) {
    // A write through a view: the base's history is rewritten (autograd/views.cpp).
    autograd::record_write_through_view(*this, source);
    kernels::copy_into(*this, source);
    return *this;
  }
  kernels::copy_into(*this, source);
  if (needs_history && is_floating_point()) {
    // The old value is overwritten entirely: the gradient flows to `source` only.
    const Shape source_shape = source.sizes();
    const Dtype source_dtype = source.dtype();
    auto node = std::make_shared<autograd::FunctionNode>(
        "CopyBackwards", std::vector<autograd::SavedTensor>{},
        [source_shape, source_dtype](const std::vector<Tensor>& g, const std::vector<Tensor>&) {
          return std::vector<Tensor>{autograd::sum_to(g[0], source_shape).to(source_dtype)};
        });
    autograd::record(node, {source}, {*this});
  }
  return *this;
}

namespace {
// In-place updates compute out of place, then copy back. With history, the op reads a clone
// so that what it saves for backward is not the tensor being overwritten.
Tensor inplace_operand(const Tensor& self, const Tensor& other) {
  const bool needs_history = autograd::grad_enabled() &&
                             (self.requires_grad() || (other.defined() && other.requires_grad()));
  return needs_history ? self.clone() : self;
}

// PyTorch's can_cast: an in-place result may not be of a higher category than the tensor it
// is written into (float into integer, integer into bool).
const Tensor& castable_into(const Tensor& result, Dtype self) {
  const auto category = [](Dtype d) { return d == Dtype::Bool ? 0 : is_floating(d) ? 2 : 1; };
  if (category(result.dtype()) > category(self)) {
    throw Error(std::string("result type ") + torch_scalar_type_name(result.dtype()) +
                " can't be cast to the desired output type " + torch_scalar_type_name(self));
  }
  return result;
}
}  // namespace

Tensor& Tensor::add_(const Tensor& other, double alpha) {
  return copy_(castable_into(weft::add(inplace_operand(*this, other), other, alpha), dtype()));
}

Tensor& Tensor::sub_(const Tensor& other, double alpha) {
  return copy_(castable_into(weft::sub(inplace_operand(*this, other), other, alpha), dtype()));
}

Tensor& Tensor::div_(const Tensor& other) {
  return copy_(castable_into(weft::div(inplace_operand(*this, other), other), dtype()));
}

Tensor& Tensor::relu_() {
  return copy_(weft::relu(inplace_operand(*this, Tensor())));
}

Tensor& Tensor::sigmoid_() {
  return copy_(castable_into(weft::sigmoid(inplace_operand(*this, Tensor())), dtype()));
}

Tensor& Tensor::tanh_() {
  return copy_(castable_into(weft::tanh(inplace_operand(*this, Tensor())), dtype()));
}

Tensor& Tensor::exp_() {
  return copy_(castable_into(weft::exp(inplace_operand(*this, Tensor())), dtype()));
}

Tensor& Tensor::neg_() {
  return copy_(weft::neg(inplace_operand(*this, Tensor())));
}

Tensor& Tensor::masked_fill_(const Tensor& mask, double value) {
  if (mask.dtype() != Dtype::Bool) {
    throw Error(std::string("masked_fill_ only supports boolean masks, but got mask with dtype ") +
                dtype_name(mask.dtype()));
  }
  const Tensor self = inplace_operand(*this, Tensor());
  return copy_(weft::where(mask, full_like(self, value), self));
}

Tensor& Tensor::index_put_(const Tensor& index, const Tensor& values, bool accumulate) {
  if (values.storage() == storage()) {
    throw Error(
        "unsupported operation: some elements of the input tensor and the written-to tensor refer "
        "to a single memory location. Please clone() the tensor before performing the operation.");
  }
  return copy_(weft::index_put(inplace_operand(*this, values), index, values, accumulate));
}

Tensor& Tensor::mul_(const Tensor& other) {
  return copy_(castable_into(weft::mul(inplace_operand(*this, other), other), dtype()));
}

Tensor& Tensor::mul_(double factor) {
  return copy_(weft::mul(inplace_operand(*this, Tensor()), wrapped_scalar(factor)));
}

Tensor& Tensor::clamp_(std::optional<double> min, std::optional<double> max) {
  return copy_(weft::clamp(inplace_operand(*this, Tensor()), min, max));
}

// ---- creation ----
Tensor empty(IntList shape, TensorOptions options) {
  Tensor t = make_tensor(shape, options.dtype);
  if (options.requires_grad) t.requires_grad_();
  return t;
}

Tensor empty_strided(IntList shape, IntList strides, TensorOptions options) {
  if (shape.size() != strides.size()) {
    throw Error("empty_strided: shape " + shape_str(shape) + " and strides " + shape_str(strides) +
                " differ in length");
  }
  std::int64_t extent = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) extent = 0;
    if (strides[i] < 0) throw Error("empty_strided: negative strides are not supported");
  }
  if (extent) {
    for (std::size_t i = 0; i < shape.size(); ++i) extent += (shape[i] - 1) * strides[i];
  }
  Tensor t = make_tensor({extent}, options.dtype);
  t.impl()->sizes = shape.vec();
  t.impl()->strides = strides.vec();
  if (options.requires_grad) t.requires_grad_();
  return t;
}

Tensor full(IntList shape, double value, TensorOptions options) {
  Tensor t = make_tensor(shape, options.dtype);
  kernels::copy_into(t, wrapped_scalar(value).to(options.dtype));
  if (options.requires_grad) t.requires_grad_();
  return t;
}

Tensor zeros(IntList shape, TensorOptions options) {
  Tensor t = make_tensor(shape, options.dtype);
  std::memset(t.raw_data(), 0, t.numel() * itemsize(t.dtype()));
  if (options.requires_grad) t.requires_grad_();
  return t;
}

Tensor ones(IntList shape, TensorOptions options) {
  return full(shape, 1.0, options);
}
Tensor zeros_like(const Tensor& t) {
  return zeros(t.sizes(), dtype(t.dtype()));
}
Tensor ones_like(const Tensor& t) {
  return ones(t.sizes(), dtype(t.dtype()));
}
Tensor empty_like(const Tensor& t) {
  return empty(t.sizes(), dtype(t.dtype()));
}
Tensor full_like(const Tensor& t, double value) {
  return full(t.sizes(), value, dtype(t.dtype()));
}

Tensor scalar_tensor(double value, TensorOptions options) {
  return full({}, value, options);
}

Tensor wrapped_scalar(double value) {
  // A C++ double is a floating scalar (like a Python float): float64 storage, float32 in
  // promotion, so int_tensor * 2.0 is float32 as in LibTorch.
  Tensor t = make_tensor({}, Dtype::Float64);
  *t.data<double>() = value;
  t.impl()->is_wrapped_number = true;
  return t;
}

Tensor wrapped_scalar(std::int64_t value) {
  Tensor t = make_tensor({}, Dtype::Int64);
  *t.data<std::int64_t>() = value;
  t.impl()->is_wrapped_number = true;
  return t;
}

Tensor wrapped_scalar(bool value) {
  Tensor t = make_tensor({}, Dtype::Bool);
  *t.data<bool>() = value;
  t.impl()->is_wrapped_number = true;
  return t;
}

Tensor arange(double end, std::optional<Dtype> dtype) {
  return arange(0.0, end, 1.0, dtype);
}

Tensor arange(double start, double end, double step, std::optional<Dtype> dtype) {
  if (step == 0) throw Error("arange: step must be nonzero");
  if ((end - start) / step < 0) {
    throw Error("arange: upper bound and larger bound inconsistent with step sign");
  }
  const bool whole =
      std::nearbyint(start) == start && std::nearbyint(end) == end && std::nearbyint(step) == step;
  const Dtype d = dtype.value_or(whole ? Dtype::Int64 : Dtype::Float32);
  // 16-bit floats: the values in float32, rounded once.
  if (is_reduced_floating(d)) return arange(start, end, step, Dtype::Float32).to(d);
  const auto n = static_cast<std::int64_t>(std::ceil((end - start) / step));
  Tensor t = make_tensor({n}, d);
  kernels::dispatch(d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (std::int64_t i = 0; i < n; ++i)
      p[i] = static_cast<T>(start + static_cast<double>(i) * step);
  });
  return t;
}

Tensor linspace(double start, double end, std::int64_t steps, TensorOptions options) {
  if (steps < 0) throw Error("linspace: number of steps must be non-negative");
  if (is_reduced_floating(options.dtype)) {
    Tensor t = linspace(start, end, steps, dtype(Dtype::Float32)).to(options.dtype);
    if (options.requires_grad) t.requires_grad_();
    return t;
  }
  Tensor t = make_tensor({steps}, options.dtype);
  const double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  kernels::dispatch(options.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    // Like PyTorch: fill from both ends so the last value is exactly `end`.
    const std::int64_t half = steps / 2;
    for (std::int64_t i = 0; i < steps; ++i) {
      p[i] = static_cast<T>(i < half ? start + step * static_cast<double>(i)
                                     : end - step * static_cast<double>(steps - i - 1));
    }
  });
  if (options.requires_grad) t.requires_grad_();
  return t;
}

Tensor eye(std::int64_t n, std::optional<std::int64_t> m, TensorOptions options) {
  const std::int64_t cols = m.value_or(n);
  if (is_reduced_floating(options.dtype)) {
    Tensor t = eye(n, cols, dtype(Dtype::Float32)).to(options.dtype);
    if (options.requires_grad) t.requires_grad_();
    return t;
  }
  Tensor t = zeros({n, cols}, dtype(options.dtype));
  kernels::dispatch(options.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (std::int64_t i = 0; i < std::min(n, cols); ++i) p[i * cols + i] = T(1);
  });
  if (options.requires_grad) t.requires_grad_();
  return t;
}

namespace {
template <typename T>
Tensor tensor_from(const std::vector<T>& values, IntList shape, Dtype d) {
  Shape s = shape.empty() ? Shape{static_cast<std::int64_t>(values.size())} : shape.vec();
  if (numel_of(s) != static_cast<std::int64_t>(values.size())) {
    throw Error("tensor: shape " + shape_str(s) + " is invalid for input of size " +
                std::to_string(values.size()));
  }
  Tensor t = make_tensor(s, d);
  T* p = t.data<T>();
  for (std::size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return t;
}
}  // namespace

Tensor tensor(const std::vector<float>& v, IntList s) {
  return tensor_from(v, s, Dtype::Float32);
}
Tensor tensor(const std::vector<double>& v, IntList s) {
  return tensor_from(v, s, Dtype::Float64);
}
Tensor tensor(const std::vector<std::int64_t>& v, IntList s) {
  return tensor_from(v, s, Dtype::Int64);
}
Tensor tensor(const std::vector<std::int32_t>& v, IntList s) {
  return tensor_from(v, s, Dtype::Int32);
}
Tensor tensor(const std::vector<bool>& v, IntList s) {
  Shape shape = s.empty() ? Shape{static_cast<std::int64_t>(v.size())} : s.vec();
  if (numel_of(shape) != static_cast<std::int64_t>(v.size())) {
    throw Error("tensor: shape " + shape_str(shape) + " is invalid for input of size " +
                std::to_string(v.size()));
  }
  Tensor t = make_tensor(shape, Dtype::Bool);
  bool* p = t.data<bool>();
  for (std::size_t i = 0; i < v.size(); ++i) p[i] = v[i];
  return t;
}

Tensor from_blob(const void* data, IntList shape, Dtype d) {
  Tensor t = make_tensor(shape, d);
  if (t.numel() > 0) std::memcpy(t.raw_data(), data, t.numel() * itemsize(d));
  return t;
}

bool identical(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.sizes() == b.sizes() &&
         a.to_vector<double>() == b.to_vector<double>();
}

}  // namespace weft
