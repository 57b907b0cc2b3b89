#include "weft/ir/attributes.h"

#include <array>
#include <charconv>
#include <cmath>

#include "weft/error.h"

namespace weft::ir {

namespace {
struct AttrTypeInfo {
  const char* name;
  const char* phrase;
};
constexpr std::array<AttrTypeInfo, 7> kTypeInfo{{
    {"int", "an int"},
    {"float", "a float"},
    {"bool", "a bool"},
    {"string", "a string"},
    {"int list", "an int list"},
    {"dtype", "a dtype"},
    {"scalar", "a scalar (an int, a float or a bool)"},
}};
static_assert(std::variant_size_v<AttrValue> + 1 == kTypeInfo.size());

std::string format_double(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  std::array<char, 64> buffer{};
  auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), x);
  std::string text(buffer.data(), result.ptr);
  // Keep floats recognizable as floats: 1 → 1.0.
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}
}  // namespace

AttrType attr_type(const AttrValue& value) {
  return static_cast<AttrType>(value.index());
}
bool attr_type_accepts(AttrType declared, AttrType value) {
  if (declared == AttrType::Scalar) {
    return value == AttrType::Int || value == AttrType::Float || value == AttrType::Bool;
  }
  return declared == value;
}
const char* attr_type_name(AttrType type) {
  return kTypeInfo[static_cast<std::size_t>(type)].name;
}
const char* attr_type_phrase(AttrType type) {
  return kTypeInfo[static_cast<std::size_t>(type)].phrase;
}

std::string attr_value_to_string(const AttrValue& value) {
  struct Visitor {
    std::string operator()(std::int64_t x) const { return std::to_string(x); }
    std::string operator()(double x) const { return format_double(x); }
    std::string operator()(bool x) const { return x ? "true" : "false"; }
    std::string operator()(const std::string& x) const { return "\"" + x + "\""; }
    std::string operator()(const std::vector<std::int64_t>& xs) const {
      std::string text = "[";
      for (std::size_t i = 0; i < xs.size(); ++i) {
        if (i > 0) text += ", ";
        text += std::to_string(xs[i]);
      }
      return text + "]";
    }
    std::string operator()(Dtype x) const { return dtype_name(x); }
  };
  return std::visit(Visitor{}, value);
}

Attributes& Attributes::set(std::string name, AttrValue value) {
  auto it = map_.find(name);
  if (it == map_.end()) {
    map_.emplace(std::move(name), std::move(value));
  } else {
    it->second = std::move(value);
  }
  return *this;
}

const AttrValue* Attributes::find(std::string_view name) const {
  auto it = map_.find(name);
  return it == map_.end() ? nullptr : &it->second;
}

bool Attributes::erase(std::string_view name) {
  auto it = map_.find(name);
  if (it == map_.end()) return false;
  map_.erase(it);
  return true;
}

std::string Attributes::describe(std::string_view name) const {
  std::string text = "attribute '" + std::string(name) + "'";
  if (!owner_.empty()) text += " of " + owner_;
  return text;
}

void Attributes::type_error(std::string_view name, AttrType expected, const AttrValue& got) const {
  throw Error(describe(name) + ": expected " + attr_type_phrase(expected) + ", got " +
              attr_type_phrase(attr_type(got)));
}

const AttrValue& Attributes::require(std::string_view name, AttrType expected) const {
  const AttrValue* value = find(name);
  if (value == nullptr) {
    throw Error(describe(name) + ": missing (expected " + attr_type_phrase(expected) + ")");
  }
  if (!attr_type_accepts(expected, attr_type(*value))) type_error(name, expected, *value);
  return *value;
}

const AttrValue& Attributes::get_scalar(std::string_view name) const {
  return require(name, AttrType::Scalar);
}

std::int64_t Attributes::get_int(std::string_view name) const {
  return std::get<std::int64_t>(require(name, AttrType::Int));
}
std::int64_t Attributes::get_int(std::string_view name, std::int64_t default_value) const {
  return has(name) ? get_int(name) : default_value;
}

double Attributes::get_float(std::string_view name) const {
  const AttrValue* value = find(name);
  if (value != nullptr) {
    if (const auto* i = std::get_if<std::int64_t>(value)) return static_cast<double>(*i);
  }
  return std::get<double>(require(name, AttrType::Float));
}
double Attributes::get_float(std::string_view name, double default_value) const {
  return has(name) ? get_float(name) : default_value;
}

bool Attributes::get_bool(std::string_view name) const {
  return std::get<bool>(require(name, AttrType::Bool));
}
bool Attributes::get_bool(std::string_view name, bool default_value) const {
  return has(name) ? get_bool(name) : default_value;
}

const std::string& Attributes::get_string(std::string_view name) const {
  return std::get<std::string>(require(name, AttrType::String));
}
std::string Attributes::get_string(std::string_view name, std::string default_value) const {
  return has(name) ? get_string(name) : std::move(default_value);
}

const std::vector<std::int64_t>& Attributes::get_ints(std::string_view name) const {
  return std::get<std::vector<std::int64_t>>(require(name, AttrType::IntList));
}
std::vector<std::int64_t> Attributes::get_ints(std::string_view name,
                                               std::vector<std::int64_t> default_value) const {
  return has(name) ? get_ints(name) : std::move(default_value);
}

Dtype Attributes::get_dtype(std::string_view name) const {
  return std::get<Dtype>(require(name, AttrType::Dtype));
}
Dtype Attributes::get_dtype(std::string_view name, Dtype default_value) const {
  return has(name) ? get_dtype(name) : default_value;
}

}  // namespace weft::ir
