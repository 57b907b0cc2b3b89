#include "weft/data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <system_error>

#include "weft/error.h"
#include "weft/shape.h"

namespace weft::data {

namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr const char* kTypeChoices =
    "0x08 (ubyte), 0x09 (byte), 0x0B (short), 0x0C (int), 0x0D (float), 0x0E (double)";

bool known_type(std::uint8_t code) {
  return code == 0x08 || code == 0x09 || (code >= 0x0B && code <= 0x0E);
}

std::string hex_byte(std::uint8_t b) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02X", b);
  return text;
}

std::string hex_bytes(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) {
    char text[4];
    std::snprintf(text, sizeof text, "%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
    if (!out.empty()) out += ' ';
    out += text;
  }
  return out;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

std::string read_whole_file(const std::filesystem::path& path) {
  const std::string source = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw FormatError(source, "", "cannot read: is a directory");
  }
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(source.c_str(), "rb"));
  if (!file) {
    throw FormatError(source, "", "cannot open: " + std::generic_category().message(errno));
  }
  std::string out;
  char buffer[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) out.append(buffer, n);
  if (std::ferror(file.get())) {
    throw FormatError(source, "", "cannot read: " + std::generic_category().message(errno));
  }
  return out;
}

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1F &&
         static_cast<unsigned char>(bytes[1]) == 0x8B;
}

// Inflates every gzip member in `bytes` (gzip allows several, concatenated).
std::string gunzip(std::string_view bytes, const std::string& source) {
  z_stream stream{};
  // 16 + MAX_WBITS: expect a gzip wrapper (header and CRC-32 trailer), not raw zlib.
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) {
    throw FormatError(source, "gzip", "cannot initialise zlib");
  }
  struct End {
    z_stream* s;
    ~End() { inflateEnd(s); }
  } end{&stream};

  std::string out(std::max<std::size_t>(bytes.size() * 4, 1 << 16), '\0');
  std::size_t produced = 0;
  std::size_t consumed = 0;
  while (true) {
    const std::size_t in_chunk =
        std::min<std::size_t>(bytes.size() - consumed, std::numeric_limits<uInt>::max());
    if (produced == out.size()) out.resize(out.size() * 2);
    const std::size_t out_chunk =
        std::min<std::size_t>(out.size() - produced, std::numeric_limits<uInt>::max());
    // zlib's API takes non-const input; it does not write to it.
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + consumed));
    stream.avail_in = static_cast<uInt>(in_chunk);
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    stream.avail_out = static_cast<uInt>(out_chunk);
    const int rc = inflate(&stream, Z_NO_FLUSH);
    consumed += in_chunk - stream.avail_in;
    produced += out_chunk - stream.avail_out;
    if (rc == Z_STREAM_END) {
      if (consumed == bytes.size()) break;
      if (!is_gzip(bytes.substr(consumed))) {
        throw FormatError(source, "gzip",
                          "unexpected data after the gzip stream at byte " +
                              std::to_string(consumed) + " of the compressed file");
      }
      if (inflateReset(&stream) != Z_OK) throw FormatError(source, "gzip", "cannot reset zlib");
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && stream.avail_out == 0) continue;  // grow the output and go on
    if (rc == Z_BUF_ERROR && consumed == bytes.size()) {
      throw FormatError(source, "gzip",
                        "truncated: the gzip stream ends after " + std::to_string(bytes.size()) +
                            " compressed bytes without its end marker");
    }
    throw FormatError(source, "gzip",
                      std::string("corrupt gzip data: ") +
                          (stream.msg ? stream.msg : "zlib error") + " (zlib code " +
                          std::to_string(rc) + ")");
  }
  out.resize(produced);
  return out;
}

std::uint64_t read_be(const unsigned char* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

std::size_t idx_itemsize(IdxType type) {
  switch (type) {
    case IdxType::UInt8:
    case IdxType::Int8:
      return 1;
    case IdxType::Int16:
      return 2;
    case IdxType::Int32:
    case IdxType::Float32:
      return 4;
    case IdxType::Float64:
      return 8;
  }
  throw Error("idx_itemsize: unknown IDX type code " + hex_byte(static_cast<std::uint8_t>(type)));
}

const char* idx_type_name(IdxType type) {
  switch (type) {
    case IdxType::UInt8:
      return "ubyte";
    case IdxType::Int8:
      return "byte";
    case IdxType::Int16:
      return "short";
    case IdxType::Int32:
      return "int";
    case IdxType::Float32:
      return "float";
    case IdxType::Float64:
      return "double";
  }
  return "unknown";
}

std::int64_t IdxArray::numel() const {
  return numel_of(shape);
}

IdxArray parse_idx(std::string_view bytes, const std::string& source) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < 4) {
    throw FormatError(source, "magic",
                      "file is " + std::to_string(bytes.size()) +
                          " bytes long; expected at least the 4-byte IDX magic");
  }
  if (p[0] != 0 || p[1] != 0) {
    throw FormatError(source, "magic",
                      "expected an IDX magic starting with 00 00, got " +
                          hex_bytes(bytes.substr(0, 4)) +
                          (is_gzip(bytes) ? " (gzip data inside gzip?)" : ""));
  }
  if (!known_type(p[2])) {
    throw FormatError(
        source, "type",
        "unknown IDX type code " + hex_byte(p[2]) + "; expected one of " + kTypeChoices);
  }
  IdxArray array;
  array.type = static_cast<IdxType>(p[2]);
  const std::size_t rank = p[3];
  const std::size_t header = 4 + 4 * rank;
  if (bytes.size() < header) {
    throw FormatError(source, "dims",
                      "truncated: " + std::to_string(rank) + " dimensions need " +
                          std::to_string(header) + " header bytes, but the file has " +
                          std::to_string(bytes.size()));
  }
  const std::size_t item = idx_itemsize(array.type);
  // Every nonzero size must fit even when another is zero, so whether a shape is accepted does
  // not depend on where its zero is.
  std::int64_t nonzero_bytes = static_cast<std::int64_t>(item);
  bool empty = false;
  for (std::size_t d = 0; d < rank; ++d) {
    const auto size = static_cast<std::int64_t>(read_be(p + 4 + 4 * d, 4));
    array.shape.push_back(size);
    if (size == 0) {
      empty = true;
    } else if (nonzero_bytes > kInt64Max / size) {
      throw FormatError(
          source, "dims",
          "sizes " + shape_str(array.shape) + "... hold more bytes than fit in int64");
    } else {
      nonzero_bytes *= size;
    }
  }
  const std::uint64_t expected = empty ? 0 : static_cast<std::uint64_t>(nonzero_bytes);
  const std::uint64_t actual = bytes.size() - header;
  if (actual != expected) {
    throw FormatError(source, "data",
                      std::string(actual < expected ? "truncated: " : "too long: ") + "shape " +
                          shape_str(array.shape) + " of " + idx_type_name(array.type) + " needs " +
                          std::to_string(expected) + " data bytes, but the file has " +
                          std::to_string(actual));
  }
  array.data.assign(bytes.substr(header));
  if (item > 1) {
    char* data = array.data.data();
    for (std::size_t offset = 0; offset < array.data.size(); offset += item) {
      const std::uint64_t v = read_be(reinterpret_cast<const unsigned char*>(data + offset), item);
      switch (item) {
        case 2: {
          const auto x = static_cast<std::uint16_t>(v);
          std::memcpy(data + offset, &x, 2);
          break;
        }
        case 4: {
          const auto x = static_cast<std::uint32_t>(v);
          std::memcpy(data + offset, &x, 4);
          break;
        }
        default:
          std::memcpy(data + offset, &v, 8);
      }
    }
  }
  return array;
}

IdxArray read_idx(const std::filesystem::path& path) {
  const std::string source = path.string();
  std::string bytes = read_whole_file(path);
  if (is_gzip(bytes)) bytes = gunzip(bytes, source);
  return parse_idx(bytes, source);
}

Tensor to_tensor(const IdxArray& array) {
  const std::int64_t n = array.numel();
  if (static_cast<std::uint64_t>(array.data.size()) !=
      static_cast<std::uint64_t>(n) * idx_itemsize(array.type)) {
    throw Error("to_tensor: IDX data holds " + std::to_string(array.data.size()) +
                " bytes, but shape " + shape_str(array.shape) + " of " + idx_type_name(array.type) +
                " needs " +
                std::to_string(static_cast<std::uint64_t>(n) * idx_itemsize(array.type)));
  }
  switch (array.type) {
    case IdxType::Int32:
      return from_blob(array.data.data(), array.shape, Dtype::Int32);
    case IdxType::Float32:
      return from_blob(array.data.data(), array.shape, Dtype::Float32);
    case IdxType::Float64:
      return from_blob(array.data.data(), array.shape, Dtype::Float64);
    default:
      break;
  }
  Tensor out = empty(array.shape, dtype(Dtype::Int32));
  std::int32_t* dst = out.data<std::int32_t>();
  const char* src = array.data.data();
  for (std::int64_t i = 0; i < n; ++i) {
    if (array.type == IdxType::UInt8) {
      dst[i] = static_cast<unsigned char>(src[i]);
    } else if (array.type == IdxType::Int8) {
      dst[i] = static_cast<signed char>(src[i]);
    } else {
      std::int16_t v;
      std::memcpy(&v, src + 2 * i, 2);
      dst[i] = v;
    }
  }
  return out;
}

}  // namespace weft::data
