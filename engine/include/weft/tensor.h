#pragma once
// Tensor: a strided view of shared storage, with the autograd metadata that lets results
// remember how they were made. Copies of a Tensor share everything (like torch.Tensor).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weft/dtype.h"
#include "weft/shape.h"

namespace weft {

enum class DeviceType : std::uint8_t { CPU, CUDA };
struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;
};
inline const Device kCPU{};

// A byte buffer shared by a tensor and its views, with the version counter that lets
// autograd detect in-place changes to saved tensors.
class Storage {
 public:
  explicit Storage(std::size_t nbytes, Device device = kCPU);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  std::size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  std::uint32_t version() const { return version_; }
  void bump_version() { ++version_; }

 private:
  void* data_ = nullptr;
  std::size_t nbytes_ = 0;
  Device device_;
  std::uint32_t version_ = 0;
};

namespace autograd {
class Node;
}
struct TensorImpl;

class Tensor {
 public:
  Tensor() = default;  // undefined: no storage, like an empty torch::Tensor
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

  // Metadata.
  const Shape& sizes() const;
  const Shape& shape() const { return sizes(); }
  const Shape& strides() const;
  std::int64_t size(std::int64_t dim) const;
  std::int64_t stride(std::int64_t dim) const;
  std::int64_t dim() const;
  std::int64_t numel() const;
  std::int64_t storage_offset() const;
  Dtype dtype() const;
  Device device() const;
  bool is_contiguous() const;
  bool is_floating_point() const { return weft::is_floating(dtype()); }
  const std::shared_ptr<Storage>& storage() const;
  // Address of element [0, 0, …] (storage data + offset).
  void* raw_data() const;
  template <typename T>
  T* data() const {
    return static_cast<T*>(raw_data());
  }
  std::uint32_t version() const;

  // Values.
  double item() const;  // a one-element tensor's value, converted to double
  template <typename T>
  T item() const {
    return static_cast<T>(item());
  }
  template <typename T>
  std::vector<T> to_vector() const;  // elements in row-major order, converted to T
  Tensor clone() const;
  Tensor contiguous() const;
  Tensor to(Dtype dtype) const;
  Tensor to(Device device) const;
  Tensor detach() const;  // shares storage, no history
  std::string str() const;

  // Autograd.
  bool requires_grad() const;
  Tensor& requires_grad_(bool required = true);  // "requires" is a C++20 keyword
  bool is_leaf() const;
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  std::uint32_t output_nr() const;
  Tensor grad() const;  // undefined until a backward reaches this tensor
  void set_grad(const Tensor& grad) const;
  void retain_grad() const;
  bool retains_grad() const;
  // Accumulates d(this)/d(leaves) · gradient into leaves' .grad (implicit 1 for scalars).
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false,
                bool create_graph = false) const;

  // Views (no copy; share storage and version counter).
  Tensor view(IntList shape) const;
  Tensor reshape(IntList shape) const;
  Tensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1) const;
  Tensor squeeze() const;
  Tensor squeeze(IntList dims) const;
  Tensor unsqueeze(std::int64_t dim) const;
  Tensor transpose(std::int64_t dim0, std::int64_t dim1) const;
  Tensor t() const;
  Tensor permute(IntList dims) const;
  Tensor expand(IntList sizes) const;
  Tensor expand_as(const Tensor& other) const { return expand(other.sizes()); }
  Tensor slice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step = 1) const;
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const;
  Tensor select(std::int64_t dim, std::int64_t index) const;
  Tensor operator[](std::int64_t index) const { return select(0, index); }

  // Common ops as methods (the free functions in ops.h are the full set).
  Tensor sum() const;
  Tensor sum(IntList dims, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(IntList dims, bool keepdim = false) const;
  Tensor exp() const;
  Tensor log() const;
  Tensor relu() const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor abs() const;
  Tensor sqrt() const;
  Tensor neg() const;
  Tensor pow(double exponent) const;
  Tensor matmul(const Tensor& other) const;
  Tensor argmax(std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor softmax(std::int64_t dim) const;
  Tensor log_softmax(std::int64_t dim) const;

  // In-place (bump the version counter; refuse leaves that require grad).
  Tensor& zero_();
  Tensor& fill_(double value);
  Tensor& copy_(const Tensor& source);  // broadcasts and converts source
  Tensor& add_(const Tensor& other, double alpha = 1.0);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(double factor);
  Tensor& clamp_(std::optional<double> min, std::optional<double> max);
  // More in-place ops, each computed out of place and written back through copy_ (so on a view
  // they rewrite the base's history). A result PyTorch cannot cast to this tensor's dtype (a
  // float result into an int tensor) is refused with PyTorch's message.
  Tensor& sub_(const Tensor& other, double alpha = 1.0);
  Tensor& div_(const Tensor& other);
  Tensor& relu_();
  Tensor& sigmoid_();
  Tensor& tanh_();
  Tensor& exp_();
  Tensor& neg_();
  Tensor& masked_fill_(const Tensor& mask, double value);
  Tensor& index_put_(const Tensor& index, const Tensor& values, bool accumulate = false);

 private:
  std::shared_ptr<TensorImpl> impl_;
};

// The shared state behind a Tensor handle.
struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape sizes;
  Shape strides;
  std::int64_t offset = 0;  // in elements
  Dtype dtype = Dtype::Float32;
  bool is_wrapped_number = false;  // a Python-style scalar turned into a 0-dim tensor

  // Autograd metadata. A leaf requires grad by flag; a non-leaf by having a grad_fn.
  bool requires_grad = false;
  std::shared_ptr<autograd::Node> grad_fn;
  std::uint32_t output_nr = 0;
  std::shared_ptr<TensorImpl> grad;
  std::weak_ptr<autograd::Node> grad_accumulator;
  bool retains_grad = false;
  bool is_view = false;  // shares storage with a tensor it was derived from
  // A differentiable view (made by a view op, not by detach): the root tensor whose history an
  // in-place write through the view rewrites (autograd's CopySlices), and the storage version
  // at which this view's own history was last made. A view whose storage was written since
  // takes a fresh history from its base when next used (as PyTorch regenerates a view's
  // grad_fn).
  std::shared_ptr<TensorImpl> view_base;
  std::uint32_t view_version = 0;
};

// ---- Creation (TensorOptions-lite: dtype, requires_grad) ----
struct TensorOptions {
  Dtype dtype = Dtype::Float32;
  bool requires_grad = false;
  TensorOptions& with_dtype(Dtype d) {
    dtype = d;
    return *this;
  }
  TensorOptions& with_requires_grad(bool r = true) {
    requires_grad = r;
    return *this;
  }
};
inline TensorOptions dtype(Dtype d) {
  return TensorOptions{}.with_dtype(d);
}

Tensor empty(IntList shape, TensorOptions options = {});
Tensor empty_strided(IntList shape, IntList strides, TensorOptions options = {});
Tensor zeros(IntList shape, TensorOptions options = {});
Tensor ones(IntList shape, TensorOptions options = {});
Tensor full(IntList shape, double value, TensorOptions options = {});
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor empty_like(const Tensor& t);  // contiguous, same dtype
Tensor full_like(const Tensor& t, double value);
// Same dtype, shape and values (compared as doubles, so NaN never equals NaN).
bool identical(const Tensor& a, const Tensor& b);
Tensor scalar_tensor(double value, TensorOptions options = {});
// A Python-number-like 0-dim tensor that takes part in type promotion as a scalar: a double
// acts as a Python float (int tensor + 2.0 → float32), an int64 as a Python int.
Tensor wrapped_scalar(double value);
Tensor wrapped_scalar(std::int64_t value);
Tensor wrapped_scalar(bool value);
// Like torch.arange: int64 when start, end and step are whole numbers, else float32.
Tensor arange(double end, std::optional<Dtype> dtype = std::nullopt);
Tensor arange(double start, double end, double step = 1.0,
              std::optional<Dtype> dtype = std::nullopt);
Tensor linspace(double start, double end, std::int64_t steps, TensorOptions options = {});
Tensor eye(std::int64_t n, std::optional<std::int64_t> m = std::nullopt,
           TensorOptions options = {});
Tensor tensor(const std::vector<float>& values, IntList shape = {});
Tensor tensor(const std::vector<double>& values, IntList shape = {});
Tensor tensor(const std::vector<std::int64_t>& values, IntList shape = {});
Tensor tensor(const std::vector<std::int32_t>& values, IntList shape = {});
Tensor tensor(const std::vector<bool>& values, IntList shape = {});
// Copies `numel(shape) * itemsize(dtype)` bytes from `data`.
Tensor from_blob(const void* data, IntList shape, Dtype dtype);

}  // namespace weft
