// IDX files (plain and gzipped) and the MNIST dataset: every element type read back, every kind
// of damaged file rejected with a FormatError naming it, and the real Fashion-MNIST when present.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "expect_error.h"
#include "weft/data/dataloader.h"
#include "weft/data/idx.h"
#include "weft/data/mnist.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace {

namespace fs = std::filesystem;
using weft::Dtype;
using weft::FormatError;
using weft::Shape;
using weft::data::IdxType;
using weft::data::MNIST;

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() / ("weft_idx_" + std::to_string(::getpid()) + "_" +
                                         info->test_suite_name() + "_" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string be(std::uint64_t value, int bytes) {
  std::string out;
  for (int i = bytes - 1; i >= 0; --i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
  return out;
}

// The IDX header for `type` and `dims`; the caller appends the big-endian data.
std::string header(std::uint8_t type, const std::vector<std::uint32_t>& dims) {
  std::string out{'\0', '\0', static_cast<char>(type), static_cast<char>(dims.size())};
  for (const std::uint32_t d : dims) out += be(d, 4);
  return out;
}

std::string gzip(const std::string& bytes) {
  z_stream stream{};
  EXPECT_EQ(
      deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
      Z_OK);
  std::string out(deflateBound(&stream, bytes.size()) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

// An IDX file of every type, its expected tensor values (as doubles) and its dtype in weft.
struct Case {
  std::uint8_t code;
  std::string file;
  Dtype dtype;
  std::vector<double> values;
};

std::vector<Case> every_type() {
  std::vector<Case> cases;
  cases.push_back({0x08,
                   header(0x08, {2, 3}) + std::string("\x00\x01\x7f\x80\xfe\xff", 6),
                   Dtype::Int32,
                   {0, 1, 127, 128, 254, 255}});
  cases.push_back(
      {0x09, header(0x09, {3}) + std::string("\xff\x80\x05", 3), Dtype::Int32, {-1, -128, 5}});
  cases.push_back({0x0B, header(0x0B, {2}) + be(0xFFFE, 2) + be(300, 2), Dtype::Int32, {-2, 300}});
  cases.push_back(
      {0x0C,
       header(0x0C, {1, 2}) + be(static_cast<std::uint32_t>(-70000), 4) + be(123456789, 4),
       Dtype::Int32,
       {-70000, 123456789}});
  std::uint32_t f1 = 0;
  std::uint32_t f2 = 0;
  const float a = 1.5f;
  const float b = -2.25f;
  std::memcpy(&f1, &a, 4);
  std::memcpy(&f2, &b, 4);
  cases.push_back({0x0D, header(0x0D, {2}) + be(f1, 4) + be(f2, 4), Dtype::Float32, {1.5, -2.25}});
  std::uint64_t d1 = 0;
  const double c = -1e300;
  std::memcpy(&d1, &c, 8);
  cases.push_back({0x0E, header(0x0E, {1}) + be(d1, 8), Dtype::Float64, {-1e300}});
  return cases;
}

TEST(Idx, ReadsEveryElementTypePlainAndGzipped) {
  TempDir dir;
  for (const Case& c : every_type()) {
    for (const bool gzipped : {false, true}) {
      const fs::path path = dir.path() / ("t" + std::to_string(c.code) + (gzipped ? ".gz" : ""));
      write(path, gzipped ? gzip(c.file) : c.file);
      const weft::data::IdxArray array = weft::data::read_idx(path);
      EXPECT_EQ(static_cast<int>(array.type), c.code);
      EXPECT_EQ(array.numel(), static_cast<std::int64_t>(c.values.size()));
      const weft::Tensor t = weft::data::to_tensor(array);
      EXPECT_EQ(t.dtype(), c.dtype) << path;
      EXPECT_EQ(t.to_vector<double>(), c.values) << path;
    }
  }
}

TEST(Idx, ShapeAndHostOrderBytesAreKept) {
  const std::string file = header(0x0C, {2, 1, 3}) + be(1, 4) + be(2, 4) + be(3, 4) + be(4, 4) +
                           be(5, 4) + be(0x01020304, 4);
  const weft::data::IdxArray array = weft::data::parse_idx(file, "memory");
  EXPECT_EQ(array.shape, (std::vector<std::int64_t>{2, 1, 3}));
  ASSERT_EQ(array.data.size(), 24u);
  std::int32_t last = 0;
  std::memcpy(&last, array.data.data() + 20, 4);
  EXPECT_EQ(last, 0x01020304);
  EXPECT_EQ(weft::data::to_tensor(array).sizes(), (Shape{2, 1, 3}));
}

TEST(Idx, ConcatenatedGzipMembersReadAsOneFile) {
  TempDir dir;
  const std::string file = header(0x08, {4}) + std::string("\x01\x02\x03\x04", 4);
  write(dir.path() / "two.gz", gzip(file.substr(0, 6)) + gzip(file.substr(6)));
  EXPECT_EQ(weft::data::to_tensor(weft::data::read_idx(dir.path() / "two.gz")).to_vector<int>(),
            (std::vector<int>{1, 2, 3, 4}));
}

// read_idx(path) must throw a FormatError whose source is `path`, in `field`, saying `fragment`.
void expect_format_error(const fs::path& path, const std::string& field,
                         const std::string& fragment) {
  try {
    weft::data::read_idx(path);
    ADD_FAILURE() << "expected FormatError for " << path;
  } catch (const FormatError& e) {
    EXPECT_EQ(e.source(), path.string());
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

TEST(Idx, DamagedFilesRaiseFormatErrorNamingTheFile) {
  TempDir dir;
  const std::string good = header(0x08, {2, 2}) + std::string("\x01\x02\x03\x04", 4);
  const std::map<std::string, std::string> files{
      {"empty", ""},
      {"short", std::string("\x00\x00", 2)},
      {"magic", std::string("\x01\x00\x08\x01\x00\x00\x00\x01\x05", 9)},
      {"type", header(0x0A, {1}) + "x"},
      {"dims", header(0x08, {2, 2}).substr(0, 9)},
      {"truncated", good.substr(0, good.size() - 1)},
      {"long", good + "!"},
      {"overflow", header(0x0E, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF})},
      {"zero_dim_with_data", header(0x08, {0, 5}) + "x"},
  };
  for (const auto& [name, bytes] : files) write(dir.path() / name, bytes);
  expect_format_error(dir.path() / "empty", "magic", "file is 0 bytes long");
  expect_format_error(dir.path() / "short", "magic", "file is 2 bytes long");
  expect_format_error(dir.path() / "magic", "magic", "expected an IDX magic starting with 00 00");
  expect_format_error(dir.path() / "type", "type", "unknown IDX type code 0x0A");
  expect_format_error(dir.path() / "dims", "dims", "2 dimensions need 12 header bytes");
  expect_format_error(dir.path() / "truncated", "data",
                      "truncated: shape [2, 2] of ubyte needs 4 data bytes, but the file has 3");
  expect_format_error(dir.path() / "long", "data", "too long");
  expect_format_error(dir.path() / "overflow", "dims", "more bytes than fit in int64");
  expect_format_error(dir.path() / "zero_dim_with_data", "data", "needs 0 data bytes");
  expect_format_error(dir.path() / "missing", "", "cannot open: No such file or directory");
  expect_format_error(dir.path(), "", "is a directory");
}

TEST(Idx, DamagedGzipRaisesFormatErrorNamingTheFile) {
  TempDir dir;
  std::string payload = header(0x08, {1000});
  for (int i = 0; i < 1000; ++i) payload += static_cast<char>(i * 7 % 251);
  const std::string packed = gzip(payload);

  std::string corrupt = packed;
  for (std::size_t i = 12; i < 40 && i < corrupt.size() - 8; ++i) corrupt[i] = '\xAA';
  write(dir.path() / "corrupt.gz", corrupt);
  expect_format_error(dir.path() / "corrupt.gz", "gzip", "corrupt gzip data");

  std::string bad_crc = packed;
  bad_crc[bad_crc.size() - 6] ^= 0x55;  // inside the CRC-32 trailer
  write(dir.path() / "crc.gz", bad_crc);
  expect_format_error(dir.path() / "crc.gz", "gzip", "corrupt gzip data");

  write(dir.path() / "truncated.gz", packed.substr(0, packed.size() / 2));
  expect_format_error(dir.path() / "truncated.gz", "gzip", "truncated");

  write(dir.path() / "trailing.gz", packed + "garbage");
  expect_format_error(dir.path() / "trailing.gz", "gzip", "unexpected data after the gzip stream");

  // A valid gzip of a damaged IDX file is reported as the IDX problem.
  write(dir.path() / "inner.gz", gzip(payload.substr(0, 500)));
  expect_format_error(dir.path() / "inner.gz", "data", "truncated");
}

// A small MNIST-format directory: `count` images of 2×3 pixels, pixel k of image i = 40 i + k.
void write_mnist(const fs::path& dir, const std::string& prefix, std::uint32_t images,
                 std::uint32_t labels, bool gzipped) {
  std::string pixels = header(0x08, {images, 2, 3});
  for (std::uint32_t i = 0; i < images; ++i) {
    for (int k = 0; k < 6; ++k) pixels += static_cast<char>(40 * i + static_cast<std::uint32_t>(k));
  }
  std::string targets = header(0x08, {labels});
  for (std::uint32_t i = 0; i < labels; ++i) targets += static_cast<char>(9 - i % 10);
  const std::string suffix = gzipped ? ".gz" : "";
  write(dir / (prefix + "-images-idx3-ubyte" + suffix), gzipped ? gzip(pixels) : pixels);
  write(dir / (prefix + "-labels-idx1-ubyte" + suffix), gzipped ? gzip(targets) : targets);
}

TEST(MNIST, SamplesAreScaledFloatImagesAndInt64Labels) {
  TempDir dir;
  write_mnist(dir.path(), "train", 4, 4, /*gzipped=*/false);
  write_mnist(dir.path(), "t10k", 2, 2, /*gzipped=*/true);
  const MNIST train(dir.path());
  const MNIST test(dir.path(), /*train=*/false);
  EXPECT_EQ(train.size(), 4);
  EXPECT_EQ(test.size(), 2);
  EXPECT_EQ(train.rows(), 2);
  EXPECT_EQ(train.cols(), 3);
  const auto [image, label] = train.get(3);
  EXPECT_EQ(image.sizes(), (Shape{1, 2, 3}));
  EXPECT_EQ(image.dtype(), Dtype::Float32);
  EXPECT_FALSE(image.requires_grad());
  const std::vector<float> values = image.to_vector<float>();
  for (int k = 0; k < 6; ++k) EXPECT_EQ(values[k], static_cast<float>(120 + k) / 255.0f);
  EXPECT_EQ(label, 6);
  EXPECT_EQ(train.targets().to_vector<std::int64_t>(), (std::vector<std::int64_t>{9, 8, 7, 6}));
  EXPECT_EQ(test.get(-1).second, 8);
}

TEST(MNIST, NormalizeMatchesToTensorThenNormalize) {
  TempDir dir;
  write_mnist(dir.path(), "train", 2, 2, /*gzipped=*/false);
  const MNIST train(dir.path(), true, weft::data::Normalize{0.1307, 0.3081});
  const std::vector<float> values = train.get(1).first.to_vector<float>();
  for (int k = 0; k < 6; ++k) {
    const float x = static_cast<float>(40 + k) / 255.0f;
    EXPECT_EQ(values[k], (x - 0.1307f) / 0.3081f);
  }
}

TEST(MNIST, MissingOrMismatchedFilesRaiseFormatError) {
  TempDir dir;
  try {
    MNIST(dir.path(), true);
    ADD_FAILURE() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.source(), (dir.path() / "train-images-idx3-ubyte").string());
    EXPECT_NE(std::string(e.what()).find("not found (nor train-images-idx3-ubyte.gz)"),
              std::string::npos)
        << e.what();
  }
  write_mnist(dir.path(), "train", 3, 2, /*gzipped=*/true);
  try {
    MNIST(dir.path(), true);
    ADD_FAILURE() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.source(), (dir.path() / "train-labels-idx1-ubyte.gz").string());
    EXPECT_NE(std::string(e.what()).find("has 3 images, but this file has 2 labels"),
              std::string::npos)
        << e.what();
  }
  write(dir.path() / "t10k-images-idx3-ubyte", header(0x08, {2, 6}) + std::string(12, '\0'));
  write(dir.path() / "t10k-labels-idx1-ubyte", header(0x08, {2}) + std::string(2, '\0'));
  weft::testing::expect_error([&] { MNIST(dir.path(), false); },
                              "expected MNIST images: ubyte of shape [count, rows, cols]");
}

const fs::path kFashionMnist = "/usr/share/datasets/fashion-mnist";

TEST(MNIST, RealFashionMnistHasTenBalancedClasses) {
  if (!fs::exists(kFashionMnist / "train-images-idx3-ubyte.gz") &&
      !fs::exists(kFashionMnist / "train-images-idx3-ubyte")) {
    GTEST_SKIP() << "Fashion-MNIST is not installed at " << kFashionMnist;
  }
  auto train = std::make_shared<weft::data::FashionMNIST>(kFashionMnist, true);
  auto test = std::make_shared<weft::data::FashionMNIST>(kFashionMnist, false);
  ASSERT_EQ(train->size(), 60000);
  ASSERT_EQ(test->size(), 10000);
  EXPECT_EQ(train->rows(), 28);
  EXPECT_EQ(train->cols(), 28);

  std::array<std::int64_t, 10> train_counts{};
  for (const std::uint8_t label : train->labels()) {
    ASSERT_LT(label, 10);
    ++train_counts[label];
  }
  for (const std::int64_t n : train_counts) EXPECT_EQ(n, 6000);

  const auto [image, label] = train->get(0);
  EXPECT_EQ(image.sizes(), (Shape{1, 28, 28}));
  EXPECT_GE(weft::min(image).item<float>(), 0.0f);
  EXPECT_LE(weft::max(image).item<float>(), 1.0f);
  EXPECT_GT(weft::max(image).item<float>(), 0.5f);
  EXPECT_GE(label, 0);

  // One epoch of the test set through worker threads: 1000 images of each class.
  weft::data::DataLoader loader(
      test,
      weft::data::DataLoaderOptions{}.with_batch_size(256).with_shuffle().with_num_workers(2));
  EXPECT_EQ(loader.size(), 40);
  std::array<std::int64_t, 10> test_counts{};
  std::int64_t seen = 0;
  for (auto& [images, labels] : loader) {
    EXPECT_EQ(images.size(1), 1);
    EXPECT_EQ(images.size(0), labels.size(0));
    for (const std::int64_t l : labels.to_vector<std::int64_t>()) {
      ASSERT_GE(l, 0);
      ASSERT_LT(l, 10);
      ++test_counts[static_cast<std::size_t>(l)];
    }
    seen += labels.size(0);
  }
  EXPECT_EQ(seen, 10000);
  for (const std::int64_t n : test_counts) EXPECT_EQ(n, 1000);
}

}  // namespace
