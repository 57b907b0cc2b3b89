#include "weft/io/safetensors.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_set>

#include "weft/error.h"
#include "weft/io/atomic_file.h"

namespace weft::io {

namespace {

using Json = nlohmann::json;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr const char* kMetadataKey = "__metadata__";
constexpr const char* kDtypeChoices = "BOOL, I32, I64, F16, BF16, F32, F64";
constexpr const char* kTensorFields[] = {"dtype", "shape", "data_offsets"};

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

std::string describe(Dtype dtype, const std::vector<std::int64_t>& shape) {
  return std::string("dtype ") + safetensors_dtype_name(dtype) + " and shape " + shape_text(shape);
}

// A string from the input, quoted and cut short for messages (at a UTF-8 character boundary).
std::string shown(std::string_view s) {
  constexpr std::size_t kMaxShown = 64;
  if (s.size() <= kMaxShown) return "\"" + std::string(s) + "\"";
  std::size_t cut = kMaxShown;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return "\"" + std::string(s.substr(0, cut)) + "...\"";
}

std::string offsets_text(std::uint64_t begin, std::uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

// numel × itemsize, or nullopt when a dimension is negative or the size overflows int64. The
// nonzero dimensions must fit even when another one is zero, so whether a shape is accepted does
// not depend on where its zero is.
std::optional<std::int64_t> byte_size(Dtype dtype, const std::vector<std::int64_t>& shape) {
  std::int64_t product = static_cast<std::int64_t>(itemsize(dtype));
  bool empty = false;
  for (const std::int64_t dim : shape) {
    if (dim < 0) return std::nullopt;
    if (dim == 0) {
      empty = true;
      continue;
    }
    if (product > kInt64Max / dim) return std::nullopt;
    product *= dim;
  }
  return empty ? 0 : product;
}

// Bool tensors must hold 0 or 1: any other byte is undefined behaviour once read as a C++ bool.
void check_bool_bytes(std::string_view data, const std::string& source, const std::string& name) {
  for (std::size_t i = 0; i < data.size(); ++i) {
    const auto byte = static_cast<unsigned char>(data[i]);
    if (byte > 1) {
      throw FormatError(source, name,
                        "data: expected BOOL bytes 0 or 1, got " + std::to_string(byte) +
                            " at element " + std::to_string(i));
    }
  }
}

// One tensor entry of the JSON header, before it is checked against the data buffer.
struct HeaderEntry {
  std::string name;
  Dtype dtype = Dtype::Float32;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

// Reads the JSON header as a stream of SAX events against the one shape it may have, and stops
// at the first event that does not fit. Nothing but the accepted entries is ever stored, so a
// hostile header cannot build a deep or large document; errors name the field they concern.
class HeaderReader final : public nlohmann::json_sax<Json> {
 public:
  std::vector<HeaderEntry> entries;
  std::map<std::string, std::string> metadata;
  std::string error_field;
  std::string error_problem;
  bool done() const { return state_ == State::Done; }

  bool null() override {
    // The reference reads "__metadata__": null as no metadata.
    if (state_ == State::EntryValue && in_metadata_) {
      state_ = State::Top;
      return true;
    }
    return unexpected("null");
  }
  bool boolean(bool value) override { return unexpected(value ? "true" : "false"); }
  bool number_integer(number_integer_t value) override {  // only negative integers arrive here
    return unexpected("the number " + std::to_string(value));
  }
  bool number_unsigned(number_unsigned_t value) override {
    if (state_ == State::ShapeItems) {
      if (value > static_cast<std::uint64_t>(kInt64Max)) {
        return fail(entry_.name, "shape[" + std::to_string(entry_.shape.size()) + "]: dimension " +
                                     std::to_string(value) + " does not fit in int64");
      }
      entry_.shape.push_back(static_cast<std::int64_t>(value));
      return true;
    }
    if (state_ == State::OffsetItems) {
      if (offset_count_ == 2) {
        return fail(entry_.name, "data_offsets: expected 2 integers [begin, end], got more");
      }
      (offset_count_++ == 0 ? entry_.begin : entry_.end) = value;
      return true;
    }
    return unexpected("the number " + std::to_string(value));
  }
  bool number_float(number_float_t, const string_t& text) override {
    return unexpected("the number " + text);
  }
  bool string(string_t& value) override {
    if (state_ == State::Dtype) {
      const auto dtype = dtype_from_safetensors_name(value);
      if (!dtype) {
        return fail(entry_.name, std::string("dtype: expected one of ") + kDtypeChoices + ", got " +
                                     shown(value));
      }
      entry_.dtype = *dtype;
      state_ = State::Tensor;
      return true;
    }
    if (state_ == State::MetadataValue) {
      metadata.emplace(std::move(metadata_key_), std::move(value));
      state_ = State::Metadata;
      return true;
    }
    return unexpected("the string " + shown(value));
  }
  bool binary(binary_t&) override { return unexpected("binary data"); }

  bool start_object(std::size_t) override {
    if (state_ == State::Start) {
      state_ = State::Top;
      return true;
    }
    if (state_ == State::EntryValue) {
      state_ = in_metadata_ ? State::Metadata : State::Tensor;
      return true;
    }
    return unexpected("an object");
  }
  bool key(string_t& key) override {
    switch (state_) {
      case State::Top:
        if (!names_.insert(key).second) return fail(key, "duplicate name in the header");
        in_metadata_ = key == kMetadataKey;
        entry_ = HeaderEntry{};
        entry_.name = std::move(key);
        seen_ = 0;
        state_ = State::EntryValue;
        return true;
      case State::Metadata:
        if (metadata.count(key) != 0) return fail(kMetadataKey, "duplicate key " + shown(key));
        metadata_key_ = std::move(key);
        state_ = State::MetadataValue;
        return true;
      case State::Tensor: {
        static constexpr State kStates[] = {State::Dtype, State::Shape, State::Offsets};
        for (int i = 0; i < 3; ++i) {
          if (key != kTensorFields[i]) continue;
          if (seen_ & (1u << i)) return fail(entry_.name, "duplicate field " + shown(key));
          seen_ |= 1u << i;
          state_ = kStates[i];
          return true;
        }
        return fail(entry_.name, "unexpected field " + shown(key) +
                                     ", expected only dtype, shape and data_offsets");
      }
      default:
        return unexpected("a key");  // unreachable: the JSON grammar sends keys only in objects
    }
  }
  bool end_object() override {
    if (state_ == State::Top) {
      state_ = State::Done;
      return true;
    }
    if (state_ == State::Metadata) {
      state_ = State::Top;
      return true;
    }
    if (state_ == State::Tensor) {
      for (int i = 0; i < 3; ++i) {
        if (!(seen_ & (1u << i))) {
          return fail(entry_.name, std::string("missing field \"") + kTensorFields[i] + "\"");
        }
      }
      entries.push_back(std::move(entry_));
      state_ = State::Top;
      return true;
    }
    return unexpected("the end of an object");  // unreachable
  }
  bool start_array(std::size_t) override {
    if (state_ == State::Shape) {
      state_ = State::ShapeItems;
      return true;
    }
    if (state_ == State::Offsets) {
      offset_count_ = 0;
      state_ = State::OffsetItems;
      return true;
    }
    return unexpected("an array");
  }
  bool end_array() override {
    if (state_ == State::ShapeItems) {
      state_ = State::Tensor;
      return true;
    }
    if (state_ == State::OffsetItems) {
      if (offset_count_ != 2) {
        return fail(entry_.name, "data_offsets: expected 2 integers [begin, end], got " +
                                     std::to_string(offset_count_));
      }
      state_ = State::Tensor;
      return true;
    }
    return unexpected("the end of an array");  // unreachable
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix; keep its description.
    std::string what = ex.what();
    if (const auto bracket = what.find("] "); bracket != std::string::npos)
      what.erase(0, bracket + 2);
    // Its "last read" excerpt quotes raw input: keep messages valid UTF-8 for JSON reports.
    for (char& c : what) {
      if (static_cast<unsigned char>(c) >= 0x80) c = '?';
    }
    return fail("header", "expected valid JSON, got an error at byte " + std::to_string(position) +
                              ": " + what);
  }

 private:
  enum class State {
    Start,          // before the top-level object
    Top,            // in the top-level object, between entries
    EntryValue,     // after a top-level key
    Metadata,       // in "__metadata__", between entries
    MetadataValue,  // after a metadata key
    Tensor,         // in a tensor's object, between fields
    Dtype,
    Shape,
    ShapeItems,
    Offsets,
    OffsetItems,
    Done,
  };

  bool fail(std::string field, std::string problem) {
    error_field = std::move(field);
    error_problem = std::move(problem);
    return false;
  }

  // A value that the current position does not allow: says what it expected instead.
  bool unexpected(const std::string& given) {
    const std::string got = ", got " + given;
    switch (state_) {
      case State::Start:
        return fail(
            "header",
            "expected a JSON object mapping tensor names to {dtype, shape, data_offsets}" + got);
      case State::EntryValue:
        if (in_metadata_)
          return fail(kMetadataKey, "expected an object of strings to strings" + got);
        return fail(entry_.name,
                    "expected an object {\"dtype\", \"shape\", \"data_offsets\"}" + got);
      case State::MetadataValue:
        return fail(kMetadataKey,
                    "value of key " + shown(metadata_key_) + ": expected a string" + got);
      case State::Dtype:
        return fail(entry_.name,
                    std::string("dtype: expected a string, one of ") + kDtypeChoices + got);
      case State::Shape:
        return fail(entry_.name, "shape: expected an array of non-negative integers" + got);
      case State::ShapeItems:
        return fail(entry_.name, "shape[" + std::to_string(entry_.shape.size()) +
                                     "]: expected a non-negative integer" + got);
      case State::Offsets:
        return fail(entry_.name,
                    "data_offsets: expected an array [begin, end] of non-negative integers" + got);
      case State::OffsetItems:
        return fail(entry_.name, "data_offsets[" + std::to_string(offset_count_) +
                                     "]: expected a non-negative integer" + got);
      default:
        return fail("header", "unexpected JSON" + got);
    }
  }

  State state_ = State::Start;
  bool in_metadata_ = false;
  HeaderEntry entry_;
  unsigned seen_ = 0;  // bit i: kTensorFields[i] was given
  int offset_count_ = 0;
  std::string metadata_key_;
  std::unordered_set<std::string> names_;
};

std::uint64_t read_u64_le(std::string_view bytes) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

void append_u64_le(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
}

// A JSON string literal, escaped as serde_json (the reference's serializer) escapes it.
std::string json_string(const std::string& text, const std::string& source,
                        const std::string& field, const std::string& what) {
  try {
    return Json(text).dump();
  } catch (const Json::type_error&) {
    throw FormatError(source, field, what + ": expected valid UTF-8, got " + shown(text));
  }
}

std::string serialize(const SafetensorsFile& file, const std::string& source) {
  std::string header = "{";
  if (!file.metadata.empty()) {
    header += std::string("\"") + kMetadataKey + "\":{";
    bool first = true;
    for (const auto& [key, value] : file.metadata) {
      if (!first) header += ',';
      first = false;
      header += json_string(key, source, kMetadataKey, "key");
      header += ':';
      header += json_string(value, source, kMetadataKey, "value of key " + shown(key));
    }
    header += '}';
  }
  std::unordered_set<std::string_view> names;
  std::uint64_t offset = 0;
  for (const auto& [name, tensor] : file.tensors) {
    if (name == kMetadataKey) {
      throw FormatError(source, name, "expected a tensor name, got the reserved metadata key");
    }
    if (!names.insert(name).second) throw FormatError(source, name, "duplicate tensor name");
    if (static_cast<unsigned>(tensor.dtype) >= static_cast<unsigned>(kNumDtypes)) {
      throw FormatError(
          source, name,
          "dtype: invalid enum value " + std::to_string(static_cast<unsigned>(tensor.dtype)));
    }
    const auto nbytes = byte_size(tensor.dtype, tensor.shape);
    if (!nbytes) {
      throw FormatError(source, name,
                        "shape: expected non-negative dimensions whose byte size fits in int64, "
                        "got " +
                            shape_text(tensor.shape));
    }
    if (tensor.data.size() != static_cast<std::uint64_t>(*nbytes)) {
      throw FormatError(source, name,
                        "data: expected " + std::to_string(*nbytes) + " bytes for " +
                            describe(tensor.dtype, tensor.shape) + ", got " +
                            std::to_string(tensor.data.size()) + " bytes");
    }
    if (tensor.dtype == Dtype::Bool) check_bool_bytes(tensor.data, source, name);
    if (header.size() > 1) header += ',';
    header += json_string(name, source, name, "tensor name");
    header +=
        std::string(":{\"dtype\":\"") + safetensors_dtype_name(tensor.dtype) + "\",\"shape\":[";
    for (std::size_t i = 0; i < tensor.shape.size(); ++i) {
      if (i > 0) header += ',';
      header += std::to_string(tensor.shape[i]);
    }
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + tensor.data.size()) + "]}";
    offset += tensor.data.size();
  }
  header += '}';
  header.append((8 - header.size() % 8) % 8, ' ');  // as the reference: aligns the data to 8
  if (header.size() > kMaxSafetensorsHeaderSize) {
    throw FormatError(source, "header",
                      "expected at most " + std::to_string(kMaxSafetensorsHeaderSize) +
                          " bytes of header, got " + std::to_string(header.size()));
  }
  std::string out;
  out.reserve(8 + header.size() + offset);
  append_u64_le(out, header.size());
  out += header;
  for (const auto& [name, tensor] : file.tensors) out += tensor.data;
  return out;
}

}  // namespace

const TensorBytes* SafetensorsFile::find(std::string_view name) const {
  for (const auto& [tensor_name, tensor] : tensors) {
    if (tensor_name == name) return &tensor;
  }
  return nullptr;
}

SafetensorsFile parse_safetensors(std::string_view bytes, const std::string& source_name) {
  const std::string& source = source_name;
  if (bytes.size() < 8) {
    throw FormatError(
        source, "header",
        "expected at least 8 bytes (the header length), got " + std::to_string(bytes.size()));
  }
  const std::uint64_t header_size = read_u64_le(bytes);
  if (header_size > kMaxSafetensorsHeaderSize) {
    throw FormatError(source, "header",
                      "expected a header length of at most " +
                          std::to_string(kMaxSafetensorsHeaderSize) + " bytes, got " +
                          std::to_string(header_size));
  }
  if (header_size > bytes.size() - 8) {
    throw FormatError(source, "header",
                      "header length " + std::to_string(header_size) + " exceeds the " +
                          std::to_string(bytes.size() - 8) +
                          " bytes that follow it (truncated file?)");
  }
  const std::string_view header = bytes.substr(8, header_size);
  const std::string_view buffer = bytes.substr(8 + header_size);

  // nlohmann's lexer takes a NUL byte for the end of input and would ignore what follows; NUL
  // is never valid JSON (whitespace excludes it, strings must escape it), so refuse it here.
  if (const auto nul = header.find('\0'); nul != std::string_view::npos) {
    throw FormatError(source, "header",
                      "expected valid JSON, got a NUL byte at byte " + std::to_string(nul));
  }
  if (header.substr(0, 3) == "\xEF\xBB\xBF") {  // nlohmann skips it; the reference refuses it
    throw FormatError(source, "header", "expected valid JSON, got a UTF-8 byte order mark");
  }
  HeaderReader reader;
  const bool parsed = Json::sax_parse(header.begin(), header.end(), &reader);
  if (!parsed || !reader.done()) {
    if (reader.error_problem.empty()) throw FormatError(source, "header", "expected valid JSON");
    throw FormatError(source, reader.error_field, reader.error_problem);
  }

  // Each entry alone: its offsets lie in the buffer and span exactly its dtype and shape.
  for (const HeaderEntry& entry : reader.entries) {
    const auto nbytes = byte_size(entry.dtype, entry.shape);
    if (!nbytes) {
      throw FormatError(source, entry.name,
                        "shape: expected a byte size that fits in int64, got " +
                            describe(entry.dtype, entry.shape));
    }
    if (entry.begin > entry.end) {
      throw FormatError(
          source, entry.name,
          "data_offsets: expected begin <= end, got " + offsets_text(entry.begin, entry.end));
    }
    if (entry.end > buffer.size()) {
      throw FormatError(source, entry.name,
                        "data_offsets: expected offsets within the data buffer of " +
                            std::to_string(buffer.size()) + " bytes, got " +
                            offsets_text(entry.begin, entry.end));
    }
    if (entry.end - entry.begin != static_cast<std::uint64_t>(*nbytes)) {
      throw FormatError(source, entry.name,
                        "data_offsets: expected a span of " + std::to_string(*nbytes) +
                            " bytes for " + describe(entry.dtype, entry.shape) + ", got " +
                            offsets_text(entry.begin, entry.end) + " (" +
                            std::to_string(entry.end - entry.begin) + " bytes)");
    }
  }

  // Together, in offset order, they cover the buffer exactly: no hole, no overlap, no tail.
  std::vector<const HeaderEntry*> order;
  order.reserve(reader.entries.size());
  for (const HeaderEntry& entry : reader.entries) order.push_back(&entry);
  std::stable_sort(order.begin(), order.end(), [](const HeaderEntry* a, const HeaderEntry* b) {
    return std::pair(a->begin, a->end) < std::pair(b->begin, b->end);
  });
  std::uint64_t covered = 0;
  const HeaderEntry* previous = nullptr;
  for (const HeaderEntry* entry : order) {
    const std::string after =
        previous == nullptr
            ? std::string("the start of the data buffer")
            : "tensor " + shown(previous->name) + ", which ends at " + std::to_string(covered);
    if (entry->begin > covered) {
      throw FormatError(source, entry->name,
                        "data_offsets: expected to start right after " + after + ", got " +
                            offsets_text(entry->begin, entry->end) + " (a hole of " +
                            std::to_string(entry->begin - covered) + " bytes)");
    }
    if (entry->begin < covered) {
      throw FormatError(source, entry->name,
                        "data_offsets: expected to start right after " + after + ", got " +
                            offsets_text(entry->begin, entry->end) + " (an overlap)");
    }
    covered = entry->end;
    previous = entry;
  }
  if (covered != buffer.size()) {
    throw FormatError(source, "header",
                      "expected the tensors to cover the whole data buffer of " +
                          std::to_string(buffer.size()) + " bytes, got " + std::to_string(covered) +
                          " bytes covered (" + std::to_string(buffer.size() - covered) +
                          " trailing bytes)");
  }

  SafetensorsFile file;
  file.metadata = std::move(reader.metadata);
  file.tensors.reserve(order.size());
  for (const HeaderEntry* entry : order) {
    const std::string_view data = buffer.substr(entry->begin, entry->end - entry->begin);
    if (entry->dtype == Dtype::Bool) check_bool_bytes(data, source, entry->name);
    file.tensors.emplace_back(entry->name,
                              TensorBytes{entry->dtype, entry->shape, std::string(data)});
  }
  return file;
}

SafetensorsFile read_safetensors(const std::filesystem::path& path) {
  return parse_safetensors(read_file(path), path.string());
}

std::string serialize_safetensors(const SafetensorsFile& file) {
  return serialize(file, "serialize_safetensors");
}

void write_safetensors(const std::filesystem::path& path, const SafetensorsFile& file) {
  write_file_atomically(path, serialize(file, path.string()));
}

}  // namespace weft::io
