#pragma once
// The attributes of a graph node (PyTorch's non-tensor arguments: dim, stride, eps, …):
// a sorted name → value map with typed getters whose errors read like PyTorch's.

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "weft/dtype.h"

namespace weft::ir {

// One attribute value. The alternatives are in AttrType's order.
using AttrValue =
    std::variant<std::int64_t, double, bool, std::string, std::vector<std::int64_t>, Dtype>;

enum class AttrType : std::uint8_t { Int, Float, Bool, String, IntList, Dtype, Scalar };

// A schema type, never a value's: a Python scalar operand (`x * 2.5`, `x + True`), held as an
// int, a float or a bool, the literal's own type.
bool attr_type_accepts(AttrType declared, AttrType value);

AttrType attr_type(const AttrValue& value);
// "int", "float", "bool", "string", "int list", "dtype".
const char* attr_type_name(AttrType type);
// The same with an article, for messages: "an int", "a float", "an int list", …
const char* attr_type_phrase(AttrType type);
// A short rendering for messages and dumps: 3, 0.5, true, "tanh", [1, 2], float32.
std::string attr_value_to_string(const AttrValue& value);

// Sorted by name, so iteration (and therefore serialization) is deterministic.
class Attributes {
 public:
  using Map = std::map<std::string, AttrValue, std::less<>>;

  Attributes() = default;
  Attributes(std::initializer_list<std::pair<const std::string, AttrValue>> init) : map_(init) {}

  // Adds or replaces; returns *this so that calls chain: Attributes().set("dim", 1).
  // The overloads pin literals to their intended type (0 is an int, not a null string).
  Attributes& set(std::string name, AttrValue value);
  Attributes& set(std::string name, int value) {
    return set(std::move(name), AttrValue(std::int64_t{value}));
  }
  Attributes& set(std::string name, std::int64_t value) {
    return set(std::move(name), AttrValue(value));
  }
  Attributes& set(std::string name, double value) { return set(std::move(name), AttrValue(value)); }
  Attributes& set(std::string name, bool value) { return set(std::move(name), AttrValue(value)); }
  Attributes& set(std::string name, const char* value) {
    return set(std::move(name), AttrValue(std::string(value)));
  }
  Attributes& set(std::string name, std::string value) {
    return set(std::move(name), AttrValue(std::move(value)));
  }
  Attributes& set(std::string name, std::vector<std::int64_t> value) {
    return set(std::move(name), AttrValue(std::move(value)));
  }
  Attributes& set(std::string name, std::initializer_list<std::int64_t> ints) {
    return set(std::move(name), AttrValue(std::vector<std::int64_t>(ints)));
  }
  Attributes& set(std::string name, Dtype value) { return set(std::move(name), AttrValue(value)); }
  bool has(std::string_view name) const { return map_.find(name) != map_.end(); }
  // nullptr when absent.
  const AttrValue* find(std::string_view name) const;
  // Returns whether the attribute was present.
  bool erase(std::string_view name);

  // Typed getters. Without a default, a missing attribute is an error; with one, the
  // default is returned. A present value of another type is always an error, except that
  // get_float accepts an int.
  std::int64_t get_int(std::string_view name) const;
  std::int64_t get_int(std::string_view name, std::int64_t default_value) const;
  double get_float(std::string_view name) const;
  double get_float(std::string_view name, double default_value) const;
  bool get_bool(std::string_view name) const;
  bool get_bool(std::string_view name, bool default_value) const;
  const std::string& get_string(std::string_view name) const;
  std::string get_string(std::string_view name, std::string default_value) const;
  const std::vector<std::int64_t>& get_ints(std::string_view name) const;
  std::vector<std::int64_t> get_ints(std::string_view name,
                                     std::vector<std::int64_t> default_value) const;
  // An int, float or bool attribute as it is (Scalar attributes).
  const AttrValue& get_scalar(std::string_view name) const;
  Dtype get_dtype(std::string_view name) const;
  Dtype get_dtype(std::string_view name, Dtype default_value) const;

  const Map& map() const { return map_; }
  Map::const_iterator begin() const { return map_.begin(); }
  Map::const_iterator end() const { return map_.end(); }
  std::size_t size() const { return map_.size(); }
  bool empty() const { return map_.empty(); }

  // Who these attributes belong to ("conv2d"), named in error messages. Not part of the
  // value: two attribute sets with equal entries compare equal whatever their owners.
  const std::string& owner() const { return owner_; }
  void set_owner(std::string owner) { owner_ = std::move(owner); }

  friend bool operator==(const Attributes& a, const Attributes& b) { return a.map_ == b.map_; }
  friend bool operator!=(const Attributes& a, const Attributes& b) { return !(a == b); }

 private:
  const AttrValue& require(std::string_view name, AttrType expected) const;
  [[noreturn]] void type_error(std::string_view name, AttrType expected,
                               const AttrValue& got) const;
  std::string describe(std::string_view name) const;

  Map map_;
  std::string owner_;
};

}  // namespace weft::ir
