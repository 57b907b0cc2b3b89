#pragma once
// Shapes, strides and the small helpers every op needs (dim wrapping, broadcasting).

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace weft {

using Shape = std::vector<std::int64_t>;

// A read-only view of integers, built from a vector or a braced list: x.reshape({2, -1}).
class IntList {
 public:
  IntList() = default;
  IntList(const std::vector<std::int64_t>& values) : data_(values.data()), size_(values.size()) {}
// Like ArrayRef: a braced list lives until the end of the full expression that passes it.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  IntList(std::initializer_list<std::int64_t> values)
      : data_(values.begin()), size_(values.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  IntList(const std::int64_t* data, std::size_t size) : data_(data), size_(size) {}
  const std::int64_t* begin() const {
    return data_;
  }
  const std::int64_t* end() const {
    return data_ + size_;
  }
  std::size_t size() const {
    return size_;
  }
  bool empty() const {
    return size_ == 0;
  }
  std::int64_t operator[](std::size_t i) const {
    return data_[i];
  }
  std::vector<std::int64_t> vec() const {
    return {begin(), end()};
  }

 private:
  const std::int64_t* data_ = nullptr;
  std::size_t size_ = 0;
};

std::int64_t numel_of(IntList shape);
Shape contiguous_strides(IntList shape);
// "[2, 3, 4]"
std::string shape_str(IntList shape);
// Python's tuple formatting, as PyTorch's messages print sizes: "(2, 3)", "(5,)", "()".
std::string tuple_str(IntList shape);

// Wraps a possibly negative dim into [0, rank); rank 0 accepts -1 and 0 like PyTorch.
// Throws "Dimension out of range (expected to be in range of [-2, 1], but got 3)".
std::int64_t wrap_dim(std::int64_t dim, std::int64_t rank);
// Wraps each dim and rejects repeats; an empty list means every dim when `empty_is_all`.
std::vector<std::int64_t> wrap_dims(IntList dims, std::int64_t rank, bool empty_is_all = true);

// NumPy broadcasting of two shapes; throws PyTorch's message when they do not broadcast.
Shape broadcast_shapes(IntList a, IntList b);

}  // namespace weft
