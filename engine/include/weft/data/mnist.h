#pragma once
// The MNIST dataset (torchvision.datasets.MNIST), which also reads Fashion-MNIST: both ship as
// {train,t10k}-{images-idx3,labels-idx1}-ubyte, plain or with a .gz suffix, in one directory.

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "weft/data/dataset.h"
#include "weft/tensor.h"

namespace weft::data {

// Per-channel normalization of [0, 1] pixels, (x - mean) / std (torchvision.transforms.Normalize
// after ToTensor). MNIST's usual values are {0.1307, 0.3081}.
struct Normalize {
  double mean = 0.0;
  double std = 1.0;
};

// Sample i is (image, label): a float32 [1, rows, cols] tensor of pixels scaled to [0, 1] (then
// normalized, if asked), and the class as a plain int64_t, like torchvision's int target. The
// pixels stay in memory as bytes; each get() converts one image.
class MNIST final : public Dataset<std::pair<Tensor, std::int64_t>> {
 public:
  // Loads root/{train,t10k}-images-idx3-ubyte[.gz] and the matching labels file. Missing or
  // malformed files, and images and labels that disagree in count, raise weft::FormatError.
  explicit MNIST(const std::filesystem::path& root, bool train = true,
                 std::optional<Normalize> normalize = std::nullopt);

  std::int64_t size() const override { return count_; }
  std::pair<Tensor, std::int64_t> get(std::int64_t index) const override;

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  // Every label, int64 [size()] (torchvision's .targets).
  Tensor targets() const;
  // Pixels of every image, row-major [size(), rows(), cols()] bytes (torchvision's .data).
  const std::vector<std::uint8_t>& pixels() const { return pixels_; }
  const std::vector<std::uint8_t>& labels() const { return labels_; }

 private:
  std::int64_t count_ = 0;
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  std::vector<std::uint8_t> pixels_;
  std::vector<std::uint8_t> labels_;
  std::array<float, 256> lookup_{};  // the float every byte value becomes
};

// torchvision.datasets.FashionMNIST: the same files and layout.
using FashionMNIST = MNIST;

}  // namespace weft::data
