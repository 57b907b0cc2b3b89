// Safetensors I/O and atomic writes: round trips, the exact byte layout, rejection of every kind
// of malformed file with a message that names the field, and interop with PyTorch.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "weft/error.h"
#include "weft/io/atomic_file.h"
#include "weft/io/safetensors.h"
#include "weft/io/tensor_bytes.h"

namespace {

namespace fs = std::filesystem;
using weft::Dtype;
using weft::FormatError;
using weft::io::SafetensorsFile;
using weft::io::TensorBytes;

template <typename T>
std::string bytes_of(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

template <typename T>
std::vector<T> values_of(const std::string& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

std::string u64_le(std::uint64_t value) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
  return out;
}

// A file with the given header text (unpadded) and data buffer.
std::string raw_file(const std::string& header, const std::string& data = "") {
  return u64_le(header.size()) + header + data;
}

// Every dtype, a rank-0 tensor, two size-0 tensors and metadata that needs escaping.
SafetensorsFile sample_file() {
  SafetensorsFile file;
  file.metadata = {{"format", "pt"}, {"note", "quote \" backslash \\ newline \n tab \t é ✓"}};
  file.tensors.push_back(
      {"layer1.0.weight",
       {Dtype::Float32, {2, 3}, bytes_of<float>({0.5f, -1, 2, 3.25f, 1e-8f, 7})}});
  file.tensors.push_back(
      {"double", {Dtype::Float64, {2}, bytes_of<double>({3.141592653589793, -1e300})}});
  file.tensors.push_back({"long",
                          {Dtype::Int64,
                           {3},
                           bytes_of<std::int64_t>({std::numeric_limits<std::int64_t>::min(),
                                                   std::numeric_limits<std::int64_t>::max(), 7})}});
  file.tensors.push_back({"int", {Dtype::Int32, {2, 1}, bytes_of<std::int32_t>({-5, 2147483647})}});
  file.tensors.push_back({"mask", {Dtype::Bool, {3}, bytes_of<std::uint8_t>({1, 0, 1})}});
  file.tensors.push_back({"scalar", {Dtype::Float32, {}, bytes_of<float>({2.5f})}});
  file.tensors.push_back({"empty", {Dtype::Int32, {2, 0}, ""}});
  file.tensors.push_back({"empty.1d", {Dtype::Float64, {0}, ""}});
  // 1, -2.5, 65504 in float16 and 1, -2.5, 0.15625 in bfloat16, as bit patterns.
  file.tensors.push_back(
      {"half", {Dtype::Float16, {3}, bytes_of<std::uint16_t>({0x3C00, 0xC100, 0x7BFF})}});
  file.tensors.push_back(
      {"brain", {Dtype::BFloat16, {3}, bytes_of<std::uint16_t>({0x3F80, 0xC020, 0x3E20})}});
  return file;
}

void expect_same(const SafetensorsFile& got, const SafetensorsFile& expected) {
  EXPECT_EQ(got.metadata, expected.metadata);
  ASSERT_EQ(got.tensors.size(), expected.tensors.size());
  for (std::size_t i = 0; i < got.tensors.size(); ++i) {
    SCOPED_TRACE(expected.tensors[i].first);
    EXPECT_EQ(got.tensors[i].first, expected.tensors[i].first);
    EXPECT_EQ(got.tensors[i].second.dtype, expected.tensors[i].second.dtype);
    EXPECT_EQ(got.tensors[i].second.shape, expected.tensors[i].second.shape);
    EXPECT_EQ(got.tensors[i].second.data, expected.tensors[i].second.data);
  }
}

// Parsing `bytes` raises a FormatError for `field` whose message also contains `needle`.
void expect_rejected(const std::string& bytes, const std::string& field,
                     const std::string& needle) {
  SCOPED_TRACE("field " + field + ", expecting \"" + needle + "\"");
  try {
    weft::io::parse_safetensors(bytes, "bad.safetensors");
    ADD_FAILURE() << "accepted";
  } catch (const FormatError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.source(), "bad.safetensors") << what;
    EXPECT_EQ(e.field(), field) << what;
    EXPECT_NE(what.find("bad.safetensors: " + field + ": "), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
}

// A tensor entry's JSON text.
std::string entry(const std::string& name, const std::string& dtype, const std::string& shape,
                  const std::string& offsets) {
  return "\"" + name + "\":{\"dtype\":" + dtype + ",\"shape\":" + shape +
         ",\"data_offsets\":" + offsets + "}";
}

// A directory of its own under testing::TempDir(), removed afterwards.
class TempDirTest : public testing::Test {
 protected:
  void SetUp() override {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(testing::TempDir()) / (std::string("weft_") + info->test_suite_name() + "_" +
                                           info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.insert(e.path().filename().string());
    return names;
  }
  fs::path dir_;
};

// ---------------------------------------------------------------------------------------------
// Round trips and layout

TEST(SafetensorsTest, RoundTripsEveryDtypeRankZeroSizeZeroAndMetadata) {
  const SafetensorsFile file = sample_file();
  const std::string bytes = weft::io::serialize_safetensors(file);
  const SafetensorsFile back = weft::io::parse_safetensors(bytes, "memory");
  expect_same(back, file);
  EXPECT_EQ(weft::io::serialize_safetensors(back), bytes);
}

TEST(SafetensorsTest, RoundTripsAnEmptyFile) {
  const std::string bytes = weft::io::serialize_safetensors(SafetensorsFile{});
  EXPECT_EQ(bytes, u64_le(8) + "{}      ");
  const SafetensorsFile back = weft::io::parse_safetensors(bytes, "memory");
  EXPECT_TRUE(back.metadata.empty());
  EXPECT_TRUE(back.tensors.empty());
}

TEST(SafetensorsTest, WritesTheHandComputedByteLayout) {
  SafetensorsFile file;
  file.metadata["k"] = "v";
  file.tensors.push_back({"x", {Dtype::Float32, {2}, bytes_of<float>({1.0f, -2.0f})}});
  // 79 bytes of JSON plus one space of padding: 80 = 0x50.
  const std::string expected =
      std::string("\x50\0\0\0\0\0\0\0", 8) +
      R"({"__metadata__":{"k":"v"},"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} )" +
      std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8);
  EXPECT_EQ(weft::io::serialize_safetensors(file), expected);
}

TEST(SafetensorsTest, PadsTheHeaderWithSpacesToAMultipleOfEight) {
  for (std::size_t length = 1; length <= 16; ++length) {
    SafetensorsFile file;
    file.tensors.push_back({std::string(length, 'a'), {Dtype::Bool, {1}, std::string(1, '\1')}});
    const std::string bytes = weft::io::serialize_safetensors(file);
    std::uint64_t header_size = 0;
    for (int i = 7; i >= 0; --i)
      header_size = header_size << 8 | static_cast<unsigned char>(bytes[i]);
    EXPECT_EQ(header_size % 8, 0u);
    const std::string header = bytes.substr(8, header_size);
    const std::size_t close = header.rfind('}');
    EXPECT_EQ(header.find_first_not_of(' ', close + 1), std::string::npos) << header;
    EXPECT_LT(header.size() - close - 1, 8u);
  }
}

TEST(SafetensorsTest, LaysOutTensorsInTheGivenOrderAndReadsThemInOffsetOrder) {
  SafetensorsFile file;
  file.tensors.push_back({"z", {Dtype::Int32, {1}, bytes_of<std::int32_t>({1})}});
  file.tensors.push_back({"a", {Dtype::Int32, {0}, ""}});
  file.tensors.push_back({"m", {Dtype::Int64, {1}, bytes_of<std::int64_t>({2})}});
  const std::string bytes = weft::io::serialize_safetensors(file);
  EXPECT_NE(bytes.find(R"("z":{"dtype":"I32","shape":[1],"data_offsets":[0,4]})"),
            std::string::npos);
  EXPECT_NE(bytes.find(R"("a":{"dtype":"I32","shape":[0],"data_offsets":[4,4]})"),
            std::string::npos);
  EXPECT_NE(bytes.find(R"("m":{"dtype":"I64","shape":[1],"data_offsets":[4,12]})"),
            std::string::npos);
  expect_same(weft::io::parse_safetensors(bytes, "memory"), file);

  // A header listed in another order than the data is returned in data order.
  const std::string shuffled = raw_file("{" + entry("second", "\"I32\"", "[1]", "[4,8]") + "," +
                                            entry("first", "\"I32\"", "[1]", "[0,4]") + "}",
                                        bytes_of<std::int32_t>({10, 20}));
  const SafetensorsFile read = weft::io::parse_safetensors(shuffled, "memory");
  ASSERT_EQ(read.tensors.size(), 2u);
  EXPECT_EQ(read.tensors[0].first, "first");
  EXPECT_EQ(read.tensors[1].first, "second");
  EXPECT_EQ(values_of<std::int32_t>(read.tensors[1].second.data), std::vector<std::int32_t>{20});
}

TEST(SafetensorsTest, FindsTensorsByName) {
  const SafetensorsFile file = sample_file();
  const TensorBytes* found = file.find("double");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->dtype, Dtype::Float64);
  EXPECT_EQ(file.find("missing"), nullptr);
}

TEST(SafetensorsTest, AcceptsNullMetadataAndWhitespaceAsTheReferenceDoes) {
  const SafetensorsFile file = weft::io::parse_safetensors(
      raw_file(
          " { \"__metadata__\" : null , " + entry("x", "\"BOOL\"", "[ 1 ]", "[0, 1]") + "}\n\t   ",
          std::string(1, '\1')),
      "memory");
  EXPECT_TRUE(file.metadata.empty());
  ASSERT_NE(file.find("x"), nullptr);
}

// ---------------------------------------------------------------------------------------------
// Rejection of malformed files

TEST(SafetensorsTest, RejectsBadHeaderLengths) {
  expect_rejected("", "header", "expected at least 8 bytes");
  expect_rejected(std::string("\x02\0\0", 3), "header", "got 3");
  expect_rejected(u64_le(100) + "{}", "header", "header length 100 exceeds the 2 bytes");
  expect_rejected(u64_le(std::numeric_limits<std::uint64_t>::max()) + "{}", "header",
                  "at most 100000000");
  expect_rejected(u64_le(100'000'001) + "{}", "header", "got 100000001");
}

TEST(SafetensorsTest, RejectsInvalidJson) {
  expect_rejected(raw_file(""), "header", "expected valid JSON");
  expect_rejected(raw_file("{"), "header", "expected valid JSON");
  expect_rejected(raw_file("{\"a\":}"), "header", "expected valid JSON");
  expect_rejected(raw_file("{} {}"), "header", "expected valid JSON");
  expect_rejected(raw_file("{\"\xff\":1}"), "header", "expected valid JSON");
  expect_rejected(raw_file(std::string("{}\0", 3)), "header", "expected valid JSON");
  expect_rejected(raw_file(std::string(1000, '[')), "header", "expected a JSON object");
  expect_rejected(raw_file("\xEF\xBB\xBF{}"), "header", "byte order mark");
  expect_rejected(raw_file("{\"a\":1}\n"), "a", "expected an object");
  expect_rejected(raw_file("{\"\\ud800\":{}}"), "header", "expected valid JSON");
}

TEST(SafetensorsTest, RejectsWrongJsonTypes) {
  expect_rejected(raw_file("[]"), "header", "expected a JSON object");
  expect_rejected(raw_file("{\"x\":[1]}"), "x", "expected an object {\"dtype\"");
  expect_rejected(raw_file("{" + entry("x", "32", "[1]", "[0,4]") + "}", std::string(4, '\0')), "x",
                  "dtype: expected a string");
  expect_rejected(raw_file("{" + entry("x", "\"F32\"", "2", "[0,8]") + "}", std::string(8, '\0')),
                  "x", "shape: expected an array");
  expect_rejected(raw_file("{" + entry("x", "\"F32\"", "[[2]]", "[0,8]") + "}"), "x",
                  "shape[0]: expected a non-negative integer, got an array");
  expect_rejected(raw_file("{" + entry("x", "\"F32\"", "[1.5]", "[0,4]") + "}"), "x",
                  "shape[0]: expected a non-negative integer, got the number 1.5");
  expect_rejected(raw_file("{" + entry("x", "\"F32\"", "[\"2\"]", "[0,8]") + "}"), "x",
                  "got the string \"2\"");
  expect_rejected(raw_file("{" + entry("x", "\"F32\"", "[2]", "{}") + "}"), "x",
                  "data_offsets: expected an array");
  expect_rejected(raw_file("{" + entry("x", "\"F32\"", "[2]", "[0,true]") + "}"), "x",
                  "data_offsets[1]: expected a non-negative integer, got true");
  expect_rejected(raw_file("{" + entry("x", "\"F32\"", "[2]", "[-1,7]") + "}"), "x",
                  "data_offsets[0]: expected a non-negative integer, got the number -1");
}

TEST(SafetensorsTest, RejectsMissingDuplicateAndUnknownFields) {
  expect_rejected(raw_file(R"({"x":{"dtype":"F32","shape":[1]}})"), "x",
                  "missing field \"data_offsets\"");
  expect_rejected(
      raw_file(R"({"x":{"dtype":"F32","dtype":"F64","shape":[1],"data_offsets":[0,4]}})"), "x",
      "duplicate field \"dtype\"");
  expect_rejected(
      raw_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"offsets":[0,4]}})"), "x",
      "unexpected field \"offsets\"");
  expect_rejected(raw_file("{" + entry("x", "\"F32\"", "[1]", "[0,4]") + "," +
                               entry("x", "\"F32\"", "[1]", "[4,8]") + "}",
                           std::string(8, '\0')),
                  "x", "duplicate name");
}

TEST(SafetensorsTest, RejectsUnknownDtypes) {
  // Types safetensors has and weft does not (8-bit floats, unsigned integers) are refused.
  expect_rejected(raw_file("{" + entry("w", "\"F8_E4M3\"", "[1]", "[0,1]") + "}", "\0"), "w",
                  "expected one of BOOL, I32, I64, F16, BF16, F32, F64, got \"F8_E4M3\"");
  expect_rejected(raw_file("{" + entry("w", "\"f32\"", "[1]", "[0,4]") + "}"), "w", "\"f32\"");
}

TEST(SafetensorsTest, RejectsNegativeAndOverflowingShapes) {
  expect_rejected(raw_file("{" + entry("s", "\"F32\"", "[-2]", "[0,8]") + "}"), "s",
                  "shape[0]: expected a non-negative integer, got the number -2");
  expect_rejected(raw_file("{" + entry("s", "\"F32\"", "[1, 9223372036854775808]", "[0,4]") + "}"),
                  "s", "shape[1]: dimension 9223372036854775808 does not fit in int64");
  expect_rejected(raw_file("{" + entry("s", "\"F32\"", "[99999999999999999999999]", "[0,4]") + "}"),
                  "s", "shape[0]: expected a non-negative integer");
  expect_rejected(raw_file("{" + entry("s", "\"I64\"", "[4294967296,4294967296]", "[0,0]") + "}"),
                  "s", "byte size that fits in int64");
  // Still refused when another dimension is zero: the shape itself is unrepresentable.
  expect_rejected(raw_file("{" + entry("s", "\"I64\"", "[4294967296,4294967296,0]", "[0,0]") + "}"),
                  "s", "byte size that fits in int64");
  expect_rejected(raw_file("{" + entry("s", "\"I64\"", "[1152921504606846976]", "[0,0]") + "}"),
                  "s", "byte size that fits in int64");
}

TEST(SafetensorsTest, RejectsBadDataOffsets) {
  const std::string eight(8, '\0');
  expect_rejected(raw_file("{" + entry("t", "\"F32\"", "[2]", "[8,0]") + "}", eight), "t",
                  "expected begin <= end, got [8, 0]");
  expect_rejected(raw_file("{" + entry("t", "\"F32\"", "[2]", "[0,16]") + "}", eight), "t",
                  "within the data buffer of 8 bytes, got [0, 16]");
  expect_rejected(
      raw_file("{" + entry("t", "\"F32\"", "[2]", "[0,18446744073709551615]") + "}", eight), "t",
      "within the data buffer");
  expect_rejected(raw_file("{" + entry("t", "\"F32\"", "[3]", "[0,8]") + "}", eight), "t",
                  "expected a span of 12 bytes for dtype F32 and shape [3], got [0, 8] (8 bytes)");
  expect_rejected(raw_file("{" + entry("t", "\"F64\"", "[]", "[0,4]") + "}", eight), "t",
                  "expected a span of 8 bytes");
  expect_rejected(raw_file("{" + entry("t", "\"F32\"", "[2]", "[0]") + "}", eight), "t",
                  "expected 2 integers [begin, end], got 1");
  expect_rejected(raw_file("{" + entry("t", "\"F32\"", "[2]", "[0,8,8]") + "}", eight), "t",
                  "expected 2 integers [begin, end], got more");
}

TEST(SafetensorsTest, RejectsOverlapsHolesAndUncoveredBytes) {
  expect_rejected(raw_file("{" + entry("a", "\"I32\"", "[2]", "[0,8]") + "," +
                               entry("b", "\"I32\"", "[2]", "[4,12]") + "}",
                           std::string(12, '\0')),
                  "b", "after tensor \"a\", which ends at 8, got [4, 12] (an overlap)");
  expect_rejected(raw_file("{" + entry("a", "\"I32\"", "[1]", "[0,4]") + "," +
                               entry("b", "\"I32\"", "[1]", "[8,12]") + "}",
                           std::string(12, '\0')),
                  "b", "(a hole of 4 bytes)");
  expect_rejected(raw_file("{" + entry("a", "\"I32\"", "[1]", "[4,8]") + "}", std::string(8, '\0')),
                  "a", "right after the start of the data buffer, got [4, 8] (a hole of 4 bytes)");
  expect_rejected(raw_file("{" + entry("a", "\"I32\"", "[1]", "[0,4]") + "}", std::string(9, '\0')),
                  "header", "whole data buffer of 9 bytes, got 4 bytes covered (5 trailing bytes)");
  expect_rejected(raw_file("{}", "x"), "header", "1 trailing bytes");
  // The same bytes claimed twice.
  expect_rejected(raw_file("{" + entry("a", "\"I32\"", "[1]", "[0,4]") + "," +
                               entry("b", "\"I32\"", "[1]", "[0,4]") + "}",
                           std::string(4, '\0')),
                  "b", "(an overlap)");
}

TEST(SafetensorsTest, RejectsBadMetadata) {
  expect_rejected(raw_file(R"({"__metadata__":{"a":1}})"), "__metadata__",
                  "value of key \"a\": expected a string, got the number 1");
  expect_rejected(raw_file(R"({"__metadata__":{"a":{"b":"c"}}})"), "__metadata__",
                  "expected a string, got an object");
  expect_rejected(raw_file(R"({"__metadata__":{"a":null}})"), "__metadata__", "got null");
  expect_rejected(raw_file(R"({"__metadata__":["a"]})"), "__metadata__",
                  "expected an object of strings to strings, got an array");
  expect_rejected(raw_file(R"({"__metadata__":"a"})"), "__metadata__", "got the string \"a\"");
  expect_rejected(raw_file(R"({"__metadata__":{"a":"1","a":"2"}})"), "__metadata__",
                  "duplicate key \"a\"");
  expect_rejected(raw_file(R"({"__metadata__":{},"__metadata__":{}})"), "__metadata__",
                  "duplicate name");
}

TEST(SafetensorsTest, RejectsBoolBytesOtherThanZeroAndOne) {
  expect_rejected(
      raw_file("{" + entry("m", "\"BOOL\"", "[3]", "[0,3]") + "}", std::string("\1\0\2", 3)), "m",
      "expected BOOL bytes 0 or 1, got 2 at element 2");
}

TEST(SafetensorsTest, RejectsEveryTruncation) {
  const std::string bytes = weft::io::serialize_safetensors(sample_file());
  for (std::size_t length = 0; length < bytes.size(); ++length) {
    const std::string prefix = bytes.substr(0, length);
    EXPECT_THROW(weft::io::parse_safetensors(prefix, "cut"), FormatError) << "length " << length;
  }
}

TEST(SafetensorsTest, SurvivesEverySingleByteMutation) {
  const std::string bytes = weft::io::serialize_safetensors(sample_file());
  int accepted = 0;
  int rejected = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    for (const char replacement :
         {'\0', '\xff', '{', '"', '9', ']', ' ', static_cast<char>(bytes[i] ^ 1)}) {
      std::string mutated = bytes;
      mutated[i] = replacement;
      try {
        weft::io::parse_safetensors(mutated, "mutated");
        ++accepted;
      } catch (const FormatError&) {
        ++rejected;
      }
    }
  }
  EXPECT_GT(accepted, 0);  // mutations of tensor data stay valid
  EXPECT_GT(rejected, 0);
}

// ---------------------------------------------------------------------------------------------
// Serialization refuses what it cannot store

TEST(SafetensorsTest, SerializationRejectsInconsistentContents) {
  auto expect_refused = [](const SafetensorsFile& file, const std::string& field,
                           const std::string& needle) {
    SCOPED_TRACE(needle);
    try {
      weft::io::serialize_safetensors(file);
      ADD_FAILURE() << "accepted";
    } catch (const FormatError& e) {
      EXPECT_EQ(e.field(), field) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  SafetensorsFile file;
  file.tensors.push_back({"x", {Dtype::Float32, {2, 2}, std::string(12, '\0')}});
  expect_refused(file, "x", "data: expected 16 bytes for dtype F32 and shape [2, 2], got 12 bytes");

  file.tensors = {{"x", {Dtype::Int32, {1}, std::string(4, '\0')}},
                  {"x", {Dtype::Int32, {1}, std::string(4, '\0')}}};
  expect_refused(file, "x", "duplicate tensor name");

  file.tensors = {{"__metadata__", {Dtype::Int32, {1}, std::string(4, '\0')}}};
  expect_refused(file, "__metadata__", "reserved");

  file.tensors = {{"neg", {Dtype::Int32, {-1}, ""}}};
  expect_refused(file, "neg", "non-negative dimensions");

  file.tensors = {{"huge", {Dtype::Float64, {1LL << 31, 1LL << 31, 1LL << 31}, ""}}};
  expect_refused(file, "huge", "fits in int64");

  file.tensors = {{"mask", {Dtype::Bool, {1}, std::string(1, '\3')}}};
  expect_refused(file, "mask", "expected BOOL bytes 0 or 1");

  file.tensors = {{"bad\xff", {Dtype::Int32, {0}, ""}}};
  expect_refused(file, "bad\xff", "expected valid UTF-8");

  file.tensors.clear();
  file.metadata = {{"k", "\xc3"}};
  expect_refused(file, "__metadata__", "expected valid UTF-8");
}

// ---------------------------------------------------------------------------------------------
// Files

class SafetensorsFileTest : public TempDirTest {};

TEST_F(SafetensorsFileTest, WritesAndReadsFiles) {
  const fs::path path = dir_ / "values.safetensors";
  weft::io::write_safetensors(path, sample_file());
  expect_same(weft::io::read_safetensors(path), sample_file());
  EXPECT_EQ(entries(), std::set<std::string>{"values.safetensors"});
}

TEST_F(SafetensorsFileTest, ErrorsNameThePath) {
  const fs::path path = dir_ / "broken.safetensors";
  weft::io::write_file_atomically(path, "garbage");
  try {
    weft::io::read_safetensors(path);
    FAIL() << "accepted";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.source(), path.string());
    EXPECT_EQ(e.field(), "header");
  }
  // A file that cannot be serialized is not written at all.
  SafetensorsFile bad;
  bad.tensors.push_back({"x", {Dtype::Float32, {1}, ""}});
  EXPECT_THROW(weft::io::write_safetensors(dir_ / "new.safetensors", bad), FormatError);
  EXPECT_EQ(entries(), std::set<std::string>{"broken.safetensors"});
}

// ---------------------------------------------------------------------------------------------
// Interop with PyTorch through a minimal reader and writer (struct + json + torch)

bool python_torch_available() {
  return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
}

int run_python(const fs::path& script, const std::string& arguments) {
  const std::string command = "/usr/bin/python3 " + script.string() + " " + arguments;
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

constexpr const char* kPythonReader = R"PY(
import json, struct, sys, torch
DTYPES = {"F32": torch.float32, "F64": torch.float64, "I32": torch.int32, "I64": torch.int64,
          "BOOL": torch.bool, "F16": torch.float16, "BF16": torch.bfloat16}
with open(sys.argv[1], "rb") as f:
    data = f.read()
(n,) = struct.unpack("<Q", data[:8])
assert (8 + n) % 8 == 0, "header not padded to a multiple of 8"
header = json.loads(data[8:8 + n].decode("utf-8"))
buffer = data[8 + n:]
out = {"__metadata__": header.pop("__metadata__", None), "__order__": list(header)}
for name, info in header.items():
    begin, end = info["data_offsets"]
    dtype = DTYPES[info["dtype"]]
    if end > begin:
        t = torch.frombuffer(bytearray(buffer[begin:end]), dtype=dtype).reshape(info["shape"])
    else:
        t = torch.empty(info["shape"], dtype=dtype)
    out[name] = {"dtype": str(t.dtype), "shape": list(t.shape), "values": t.flatten().tolist()}
with open(sys.argv[2], "w") as f:
    json.dump(out, f)
)PY";

constexpr const char* kPythonWriter = R"PY(
import json, struct, sys, torch
tensors = {
    "layer1.0.weight": torch.tensor([[0.5, -1, 2], [3.25, 1e-8, 7]], dtype=torch.float32),
    "double": torch.tensor([3.141592653589793, -1e300], dtype=torch.float64),
    "long": torch.tensor([-(2**63), 2**63 - 1, 7], dtype=torch.int64),
    "int": torch.tensor([[-5], [2**31 - 1]], dtype=torch.int32),
    "mask": torch.tensor([True, False, True]),
    "scalar": torch.tensor(2.5, dtype=torch.float32),
    "empty": torch.empty((2, 0), dtype=torch.int32),
    "empty.1d": torch.empty((0,), dtype=torch.float64),
    "half": torch.tensor([1.0, -2.5, 65504], dtype=torch.float16),
    "brain": torch.tensor([1.0, -2.5, 0.15625], dtype=torch.bfloat16),
}
NAMES = {torch.float32: "F32", torch.float64: "F64", torch.int32: "I32", torch.int64: "I64",
         torch.bool: "BOOL", torch.float16: "F16", torch.bfloat16: "BF16"}
header = {"__metadata__": {"format": "pt", "note": "quote \" backslash \\ newline \n tab \t é ✓"}}
chunks, offset = [], 0
for name, t in tensors.items():
    raw = bytes(t.contiguous().reshape(-1).view(torch.uint8).tolist())
    header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape),
                    "data_offsets": [offset, offset + len(raw)]}
    chunks.append(raw)
    offset += len(raw)
text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
text += b" " * ((8 - len(text) % 8) % 8)
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))
)PY";

class SafetensorsInterop : public TempDirTest {};

TEST_F(SafetensorsInterop, PyTorchReadsWhatWeftWrites) {
  if (!python_torch_available()) GTEST_SKIP() << "/usr/bin/python3 with torch is not available";
  const SafetensorsFile file = sample_file();
  weft::io::write_safetensors(dir_ / "weft.safetensors", file);
  write_text(dir_ / "read.py", kPythonReader);
  ASSERT_EQ(run_python(dir_ / "read.py",
                       (dir_ / "weft.safetensors").string() + " " + (dir_ / "out.json").string()),
            0);
  const nlohmann::json out = nlohmann::json::parse(weft::io::read_file(dir_ / "out.json"));

  using StringMap = std::map<std::string, std::string>;
  EXPECT_EQ(out["__metadata__"].get<StringMap>(), file.metadata);
  std::vector<std::string> order;
  for (const auto& [name, tensor] : file.tensors) order.push_back(name);
  EXPECT_EQ(out["__order__"].get<std::vector<std::string>>(), order);
  const char* torch_names[] = {"torch.bool",     "torch.int32",   "torch.int64",  "torch.float16",
                               "torch.bfloat16", "torch.float32", "torch.float64"};
  for (const auto& [name, tensor] : file.tensors) {
    SCOPED_TRACE(name);
    const nlohmann::json& t = out.at(name);
    EXPECT_EQ(t["dtype"], torch_names[static_cast<int>(tensor.dtype)]);
    EXPECT_EQ(t["shape"].get<std::vector<std::int64_t>>(), tensor.shape);
    const nlohmann::json& values = t["values"];
    switch (tensor.dtype) {
      case Dtype::Float32: {
        std::vector<double> expected;
        for (float v : values_of<float>(tensor.data)) expected.push_back(v);
        EXPECT_EQ(values.get<std::vector<double>>(), expected);
        break;
      }
      case Dtype::Float64:
        EXPECT_EQ(values.get<std::vector<double>>(), values_of<double>(tensor.data));
        break;
      case Dtype::Float16:
      case Dtype::BFloat16:
        EXPECT_EQ(values.get<std::vector<double>>(),
                  weft::io::from_bytes(tensor).to_vector<double>());
        break;
      case Dtype::Int32:
        EXPECT_EQ(values.get<std::vector<std::int32_t>>(), values_of<std::int32_t>(tensor.data));
        break;
      case Dtype::Int64:
        EXPECT_EQ(values.get<std::vector<std::int64_t>>(), values_of<std::int64_t>(tensor.data));
        break;
      case Dtype::Bool: {
        std::vector<bool> expected;
        for (std::uint8_t v : values_of<std::uint8_t>(tensor.data)) expected.push_back(v != 0);
        EXPECT_EQ(values.get<std::vector<bool>>(), expected);
        break;
      }
    }
  }
}

TEST_F(SafetensorsInterop, WeftReadsWhatPyTorchWrites) {
  if (!python_torch_available()) GTEST_SKIP() << "/usr/bin/python3 with torch is not available";
  write_text(dir_ / "write.py", kPythonWriter);
  ASSERT_EQ(run_python(dir_ / "write.py", (dir_ / "torch.safetensors").string()), 0);
  const SafetensorsFile read = weft::io::read_safetensors(dir_ / "torch.safetensors");
  expect_same(read, sample_file());
}

// ---------------------------------------------------------------------------------------------
// Atomic writes

class AtomicFileTest : public TempDirTest {};

TEST_F(AtomicFileTest, WritesAndReplacesWithoutLeavingTemporaryFiles) {
  const fs::path path = dir_ / "campaign.json";
  weft::io::write_file_atomically(path, "first");
  EXPECT_EQ(weft::io::read_file(path), "first");
  weft::io::write_file_atomically(path, std::string("second\0with nul", 15));
  EXPECT_EQ(weft::io::read_file(path), std::string("second\0with nul", 15));
  weft::io::write_file_atomically(path, "");
  EXPECT_EQ(weft::io::read_file(path), "");
  EXPECT_EQ(entries(), std::set<std::string>{"campaign.json"});
}

TEST_F(AtomicFileTest, WritesRelativeToTheCurrentDirectory) {
  const fs::path previous = fs::current_path();
  fs::current_path(dir_);
  weft::io::write_file_atomically("plain.txt", "here");
  fs::current_path(previous);
  EXPECT_EQ(weft::io::read_file(dir_ / "plain.txt"), "here");
  EXPECT_EQ(entries(), std::set<std::string>{"plain.txt"});
}

TEST_F(AtomicFileTest, FailureNamesThePathAndErrnoAndRemovesTheTemporaryFile) {
  // Renaming a file over a non-empty directory fails after the temporary file was written.
  const fs::path path = dir_ / "occupied";
  fs::create_directories(path / "inside");
  try {
    weft::io::write_file_atomically(path, "data");
    FAIL() << "accepted";
  } catch (const weft::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path.string()), std::string::npos) << what;
    EXPECT_NE(what.find("Is a directory"), std::string::npos) << what;
  }
  EXPECT_EQ(entries(), std::set<std::string>{"occupied"});

  const fs::path missing = dir_ / "no" / "such" / "dir.json";
  try {
    weft::io::write_file_atomically(missing, "data");
    FAIL() << "accepted";
  } catch (const weft::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(missing.string()), std::string::npos) << what;
    EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
  }
}

TEST_F(AtomicFileTest, ReadFileNamesThePathAndErrno) {
  const fs::path path = dir_ / "absent.bin";
  try {
    weft::io::read_file(path);
    FAIL() << "accepted";
  } catch (const weft::Error& e) {
    EXPECT_EQ(std::string(e.what()), path.string() + ": cannot open: No such file or directory");
  }
}

TEST_F(AtomicFileTest, ReadsLargeFilesWhole) {
  std::string big(3 << 20, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + (i >> 13));
  weft::io::write_file_atomically(dir_ / "big.bin", big);
  EXPECT_EQ(weft::io::read_file(dir_ / "big.bin"), big);
}

TEST_F(AtomicFileTest, ConcurrentReadersSeeOnlyWholeVersions) {
  const fs::path path = dir_ / "shared.bin";
  constexpr std::size_t kSize = 256 << 10;
  weft::io::write_file_atomically(path, std::string(kSize, 'a'));
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0};
  std::atomic<int> reads{0};
  std::thread reader([&] {
    while (!stop) {
      const std::string content = weft::io::read_file(path);
      ++reads;
      if (content.size() != kSize ||
          content.find_first_not_of(content.empty() ? 'a' : content[0]) != std::string::npos) {
        ++torn;
      }
    }
  });
  std::vector<std::thread> writers;
  for (const char c : {'b', 'c'}) {
    writers.emplace_back([&path, c] {
      for (int i = 0; i < 20; ++i) weft::io::write_file_atomically(path, std::string(kSize, c));
    });
  }
  for (auto& writer : writers) writer.join();
  stop = true;
  reader.join();
  EXPECT_EQ(torn, 0);
  EXPECT_GT(reads, 0);
  const std::string last = weft::io::read_file(path);
  EXPECT_TRUE(last == std::string(kSize, 'b') || last == std::string(kSize, 'c'));
  EXPECT_EQ(entries(), std::set<std::string>{"shared.bin"});
}

}  // namespace
