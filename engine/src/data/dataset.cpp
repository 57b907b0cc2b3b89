#include "weft/data/dataset.h"

#include <cmath>

#include "weft/shape.h"

namespace weft::data {

TensorDataset::TensorDataset(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {
  if (tensors_.empty()) throw Error("TensorDataset expects at least one tensor");
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    if (!tensors_[i].defined()) {
      throw Error("TensorDataset: tensor " + std::to_string(i) + " is undefined");
    }
    if (tensors_[i].dim() == 0) {
      throw Error("TensorDataset: tensor " + std::to_string(i) +
                  " is 0-dimensional; expected a first dimension to index samples by");
    }
  }
  size_ = tensors_[0].size(0);
  for (std::size_t i = 1; i < tensors_.size(); ++i) {
    if (tensors_[i].size(0) != size_) {
      throw Error("Size mismatch between tensors: tensor 0 has shape " +
                  shape_str(tensors_[0].sizes()) + " but tensor " + std::to_string(i) +
                  " has shape " + shape_str(tensors_[i].sizes()) +
                  "; expected the same size in dimension 0");
    }
  }
}

std::vector<Tensor> TensorDataset::get(std::int64_t index) const {
  const std::int64_t row = wrap_index(index, size_, "TensorDataset");
  std::vector<Tensor> sample;
  sample.reserve(tensors_.size());
  for (const Tensor& t : tensors_) sample.push_back(t.select(0, row));
  return sample;
}

namespace detail {

std::vector<std::int64_t> split_lengths(std::int64_t dataset_size,
                                        const std::vector<std::int64_t>& lengths) {
  std::int64_t total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i] < 0) {
      throw Error("random_split: length at index " + std::to_string(i) +
                  " must be non-negative, but got " + std::to_string(lengths[i]));
    }
    total += lengths[i];
  }
  if (total != dataset_size) {
    throw Error(
        "Sum of input lengths does not equal the length of the input dataset! (lengths sum to " +
        std::to_string(total) + ", dataset has " + std::to_string(dataset_size) + " samples)");
  }
  return lengths;
}

std::vector<std::int64_t> split_lengths(std::int64_t dataset_size,
                                        const std::vector<double>& lengths) {
  double sum = 0.0;
  for (const double l : lengths) sum += l;
  // Python's math.isclose(sum, 1) with its default rel_tol = 1e-9, and sum <= 1.
  const bool fractions = std::abs(sum - 1.0) <= 1e-9 * std::max(std::abs(sum), 1.0) && sum <= 1.0;
  std::vector<std::int64_t> sizes;
  sizes.reserve(lengths.size());
  if (fractions) {
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      if (!(lengths[i] >= 0.0 && lengths[i] <= 1.0)) {
        throw Error("Fraction at index " + std::to_string(i) + " is not between 0 and 1");
      }
      sizes.push_back(
          static_cast<std::int64_t>(std::floor(static_cast<double>(dataset_size) * lengths[i])));
    }
    std::int64_t assigned = 0;
    for (const std::int64_t s : sizes) assigned += s;
    const std::int64_t remainder = dataset_size - assigned;
    for (std::int64_t i = 0; i < remainder; ++i) {
      ++sizes[static_cast<std::size_t>(i % static_cast<std::int64_t>(sizes.size()))];
    }
    return split_lengths(dataset_size, sizes);
  }
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i] != std::floor(lengths[i]) || !std::isfinite(lengths[i])) {
      throw Error(
          "random_split: expected whole-number lengths or fractions summing to 1, but got " +
          std::to_string(lengths[i]) + " at index " + std::to_string(i));
    }
    sizes.push_back(static_cast<std::int64_t>(lengths[i]));
  }
  return split_lengths(dataset_size, sizes);
}

std::vector<std::int64_t> permutation(std::int64_t n, std::uint64_t seed) {
  Generator generator(seed);
  return randperm(n, &generator).to_vector<std::int64_t>();
}

}  // namespace detail

}  // namespace weft::data
