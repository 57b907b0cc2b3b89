#pragma once
// Reading IDX files (http://yann.lecun.com/exdb/mnist/), the format of MNIST and Fashion-MNIST,
// plain or gzipped (as torchvision's read_sn3_pascalvincent_tensor).
//
// Layout: two zero bytes, a type code, the number of dimensions d; d big-endian uint32 sizes;
// then the elements, big-endian, in row-major order, exactly as many as the sizes say.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "weft/tensor.h"

namespace weft::data {

// The element types of IDX; the values are the type codes in the file.
enum class IdxType : std::uint8_t {
  UInt8 = 0x08,    // unsigned byte
  Int8 = 0x09,     // signed byte
  Int16 = 0x0B,    // short
  Int32 = 0x0C,    // int
  Float32 = 0x0D,  // float
  Float64 = 0x0E,  // double
};

std::size_t idx_itemsize(IdxType type);
const char* idx_type_name(IdxType type);  // "ubyte", "byte", "short", "int", "float", "double"

// An IDX array as stored, with its elements converted to this machine's byte order.
struct IdxArray {
  IdxType type = IdxType::UInt8;
  std::vector<std::int64_t> shape;
  std::string data;  // numel(shape) * idx_itemsize(type) bytes, host byte order
  std::int64_t numel() const;
};

// Parses a whole (already decompressed) IDX file held in memory. Malformed input raises
// weft::FormatError naming `source`, the field ("magic", "type", "dims", "data") and the problem.
IdxArray parse_idx(std::string_view bytes, const std::string& source);
// Reads an IDX file, gunzipping it first when it starts with the gzip magic (1f 8b). A missing,
// unreadable, corrupt or truncated file raises weft::FormatError naming the path.
IdxArray read_idx(const std::filesystem::path& path);

// The array as a tensor of the same shape. weft has no 8- or 16-bit types, so ubyte, byte and
// short widen losslessly to int32 (torchvision gives uint8, int8 and int16); int → int32,
// float → float32, double → float64.
Tensor to_tensor(const IdxArray& array);

}  // namespace weft::data
