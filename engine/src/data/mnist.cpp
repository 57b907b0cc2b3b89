#include "weft/data/mnist.h"

#include <system_error>

#include "weft/data/idx.h"
#include "weft/error.h"
#include "weft/shape.h"

namespace weft::data {

namespace {

// root/name, or root/name.gz when only that exists.
std::filesystem::path find_file(const std::filesystem::path& root, const std::string& name) {
  std::error_code ec;
  const std::filesystem::path plain = root / name;
  if (std::filesystem::exists(plain, ec)) return plain;
  std::filesystem::path gzipped = root / (name + ".gz");
  if (std::filesystem::exists(gzipped, ec)) return gzipped;
  throw FormatError(plain.string(), "",
                    "MNIST file not found (nor " + gzipped.filename().string() + ")");
}

}  // namespace

MNIST::MNIST(const std::filesystem::path& root, bool train, std::optional<Normalize> normalize) {
  const std::string prefix = train ? "train" : "t10k";
  const std::filesystem::path images_path = find_file(root, prefix + "-images-idx3-ubyte");
  const std::filesystem::path labels_path = find_file(root, prefix + "-labels-idx1-ubyte");

  IdxArray images = read_idx(images_path);
  if (images.type != IdxType::UInt8 || images.shape.size() != 3) {
    throw FormatError(
        images_path.string(), "dims",
        std::string("expected MNIST images: ubyte of shape [count, rows, cols], got ") +
            idx_type_name(images.type) + " of shape " + shape_str(images.shape));
  }
  IdxArray labels = read_idx(labels_path);
  if (labels.type != IdxType::UInt8 || labels.shape.size() != 1) {
    throw FormatError(labels_path.string(), "dims",
                      std::string("expected MNIST labels: ubyte of shape [count], got ") +
                          idx_type_name(labels.type) + " of shape " + shape_str(labels.shape));
  }
  if (images.shape[0] != labels.shape[0]) {
    throw FormatError(labels_path.string(), "dims",
                      "expected one label per image: " + images_path.filename().string() + " has " +
                          std::to_string(images.shape[0]) + " images, but this file has " +
                          std::to_string(labels.shape[0]) + " labels");
  }
  count_ = images.shape[0];
  rows_ = images.shape[1];
  cols_ = images.shape[2];
  pixels_.assign(images.data.begin(), images.data.end());
  labels_.assign(labels.data.begin(), labels.data.end());

  // The same float32 steps as ToTensor then Normalize: x / 255, then (x - mean) / std.
  const Normalize norm = normalize.value_or(Normalize{});
  if (norm.std == 0.0) throw Error("MNIST: Normalize std must be nonzero, got 0");
  const auto mean = static_cast<float>(norm.mean);
  const auto stddev = static_cast<float>(norm.std);
  for (int b = 0; b < 256; ++b) {
    const float x = static_cast<float>(b) / 255.0f;
    lookup_[static_cast<std::size_t>(b)] = normalize ? (x - mean) / stddev : x;
  }
}

std::pair<Tensor, std::int64_t> MNIST::get(std::int64_t index) const {
  const std::int64_t i = wrap_index(index, count_, "MNIST");
  const std::int64_t pixels = rows_ * cols_;
  Tensor image = empty({1, rows_, cols_});
  float* out = image.data<float>();
  const std::uint8_t* in = pixels_.data() + i * pixels;
  for (std::int64_t k = 0; k < pixels; ++k) out[k] = lookup_[in[k]];
  return {image, static_cast<std::int64_t>(labels_[static_cast<std::size_t>(i)])};
}

Tensor MNIST::targets() const {
  std::vector<std::int64_t> values(labels_.begin(), labels_.end());
  return tensor(values, {count_});
}

}  // namespace weft::data
