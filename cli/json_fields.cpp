#include "json_fields.h"

#include "weft/error.h"
#include "weft/io/atomic_file.h"

namespace weft::cli {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string describe(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return std::string(value.type_name()) + " (" + text + ")";
}

json parse_json(const std::string& text, const std::string& source) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw FormatError(source, "", std::string("not valid JSON: ") + e.what());
  }
}

json read_json_object(const fs::path& path) {
  const json document = parse_json(io::read_file(path), path.string());
  if (!document.is_object()) {
    throw FormatError(path.string(), "", "expected a JSON object, got " + describe(document));
  }
  return document;
}

const json& member(const json& object, const std::string& source, const char* key) {
  auto it = object.find(key);
  if (it == object.end()) throw FormatError(source, std::string("/") + key, "missing");
  return *it;
}

std::string string_member(const json& object, const std::string& source, const char* key) {
  const json& value = member(object, source, key);
  if (!value.is_string()) {
    throw FormatError(source, std::string("/") + key, "expected a string, got " + describe(value));
  }
  return value.get<std::string>();
}

double number_member(const json& object, const std::string& source, const char* key) {
  const json& value = member(object, source, key);
  if (!value.is_number()) {
    throw FormatError(source, std::string("/") + key, "expected a number, got " + describe(value));
  }
  return value.get<double>();
}

std::uint64_t count_member(const json& object, const std::string& source, const char* key) {
  const json& value = member(object, source, key);
  if (!value.is_number_unsigned() &&
      !(value.is_number_integer() && value.get<std::int64_t>() >= 0)) {
    throw FormatError(source, std::string("/") + key,
                      "expected a non-negative integer, got " + describe(value));
  }
  return value.get<std::uint64_t>();
}

std::vector<std::string> string_list_member(const nlohmann::json& object, const std::string& source,
                                            const char* key) {
  const nlohmann::json& list = member(object, source, key);
  if (!list.is_array()) {
    throw FormatError(source, std::string("/") + key, "expected an array, got " + describe(list));
  }
  std::vector<std::string> result;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      throw FormatError(source, std::string("/") + key + "/" + std::to_string(i),
                        "expected a string, got " + describe(list[i]));
    }
    result.push_back(list[i].get<std::string>());
  }
  return result;
}

BucketFile read_bucket_file(const std::filesystem::path& path) {
  const std::string source = path.string();
  BucketFile bucket;
  bucket.document = read_json_object(path);
  const nlohmann::json& document = bucket.document;
  bucket.signature = string_member(document, source, "signature");
  bucket.symptom = string_member(document, source, "symptom");
  bucket.backend = string_member(document, source, "backend");
  bucket.op = string_member(document, source, "op");
  if (document.contains("ops")) {
    bucket.ops = string_list_member(document, source, "ops");
  } else if (!bucket.op.empty()) {
    bucket.ops = {bucket.op};
  }
  if (document.contains("message")) bucket.message = string_member(document, source, "message");
  bucket.count = count_member(document, source, "count");
  bucket.first_case = string_member(document, source, "first_case");
  bucket.first_found = number_member(document, source, "first_found");
  bucket.cases = string_list_member(document, source, "cases");
  return bucket;
}

}  // namespace weft::cli
