#pragma once
// Map-style datasets, as torch.utils.data: Dataset (size + get by index), TensorDataset,
// Subset and random_split. Datasets are shared by pointer, so loaders and subsets keep them alive.

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "weft/error.h"
#include "weft/random.h"
#include "weft/tensor.h"

namespace weft::data {

// A collection of samples fetched one index at a time (PyTorch's __len__ and __getitem__).
// get() must be safe to call from several threads at once: DataLoader workers share a dataset.
template <typename Sample>
class Dataset {
 public:
  using sample_type = Sample;
  virtual ~Dataset() = default;
  virtual std::int64_t size() const = 0;
  virtual Sample get(std::int64_t index) const = 0;
};

// Wraps a Python-style index (negative counts from the end) into [0, size), or throws
// PyTorch's IndexError wording.
inline std::int64_t wrap_index(std::int64_t index, std::int64_t size, const char* what) {
  if (index < -size || index >= size) {
    throw Error(std::string(what) + ": index " + std::to_string(index) +
                " is out of bounds for size " + std::to_string(size));
  }
  return index < 0 ? index + size : index;
}

// Rows of tensors that share their first dimension; sample i is row i of each tensor (views).
class TensorDataset final : public Dataset<std::vector<Tensor>> {
 public:
  explicit TensorDataset(std::vector<Tensor> tensors);
  std::int64_t size() const override { return size_; }
  std::vector<Tensor> get(std::int64_t index) const override;
  const std::vector<Tensor>& tensors() const { return tensors_; }

 private:
  std::vector<Tensor> tensors_;
  std::int64_t size_ = 0;
};

// The samples of `dataset` at `indices`, in that order.
template <typename Sample>
class Subset final : public Dataset<Sample> {
 public:
  Subset(std::shared_ptr<const Dataset<Sample>> dataset, std::vector<std::int64_t> indices)
      : dataset_(std::move(dataset)), indices_(std::move(indices)) {
    if (!dataset_) throw Error("Subset: dataset is null");
    const std::int64_t n = dataset_->size();
    for (std::int64_t& index : indices_) index = wrap_index(index, n, "Subset");
  }
  std::int64_t size() const override { return static_cast<std::int64_t>(indices_.size()); }
  Sample get(std::int64_t index) const override {
    return dataset_->get(indices_[static_cast<std::size_t>(wrap_index(index, size(), "Subset"))]);
  }
  const std::shared_ptr<const Dataset<Sample>>& dataset() const { return dataset_; }
  const std::vector<std::int64_t>& indices() const { return indices_; }

 private:
  std::shared_ptr<const Dataset<Sample>> dataset_;
  std::vector<std::int64_t> indices_;
};

template <typename D>
Subset(std::shared_ptr<D>, std::vector<std::int64_t>) -> Subset<typename D::sample_type>;

namespace detail {
// PyTorch's split sizes: lengths as given, or fractions (summing to 1) turned into lengths by
// flooring and then handing out the remainder one at a time, round-robin from the first split.
std::vector<std::int64_t> split_lengths(std::int64_t dataset_size,
                                        const std::vector<double>& lengths);
std::vector<std::int64_t> split_lengths(std::int64_t dataset_size,
                                        const std::vector<std::int64_t>& lengths);
// A random permutation of 0..n-1 drawn from Generator(seed) (the default generator is untouched).
std::vector<std::int64_t> permutation(std::int64_t n, std::uint64_t seed);
}  // namespace detail

// Splits `dataset` into non-overlapping random subsets of the given lengths, or of the given
// fractions of its size (torch.utils.data.random_split with a generator seeded by `seed`).
template <typename D, typename Lengths>
std::vector<std::shared_ptr<Subset<typename D::sample_type>>> random_split(
    std::shared_ptr<D> dataset, const Lengths& lengths, std::uint64_t seed = 0) {
  using Sample = typename D::sample_type;
  if (!dataset) throw Error("random_split: dataset is null");
  const std::vector<std::int64_t> sizes = detail::split_lengths(dataset->size(), lengths);
  std::int64_t total = 0;
  for (const std::int64_t s : sizes) total += s;
  const std::vector<std::int64_t> order = detail::permutation(total, seed);
  std::vector<std::shared_ptr<Subset<Sample>>> out;
  std::int64_t offset = 0;
  for (const std::int64_t s : sizes) {
    std::vector<std::int64_t> indices(order.begin() + offset, order.begin() + offset + s);
    out.push_back(std::make_shared<Subset<Sample>>(dataset, std::move(indices)));
    offset += s;
  }
  return out;
}

// Braced lists ({800, 200} or {0.8, 0.2}) go through the fraction-or-length rule, as in Python.
template <typename D>
std::vector<std::shared_ptr<Subset<typename D::sample_type>>> random_split(
    std::shared_ptr<D> dataset, std::initializer_list<double> lengths, std::uint64_t seed = 0) {
  return random_split(std::move(dataset), std::vector<double>(lengths), seed);
}

}  // namespace weft::data
