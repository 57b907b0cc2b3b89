#pragma once
// Reading the JSON files of campaign directories with messages that name the file, the field
// and what was found instead (`weft report`, `weft merge`).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace weft::cli {

// "string ("abc")": a value's type and its text, cut to 40 characters.
std::string describe(const nlohmann::json& value);
// Throws weft::FormatError naming `source` when `text` is not JSON.
nlohmann::json parse_json(const std::string& text, const std::string& source);
// The file's JSON object; FormatError naming the file otherwise.
nlohmann::json read_json_object(const std::filesystem::path& path);
// Fields of `object`, each a FormatError naming `source` and "/key" when missing or mistyped.
const nlohmann::json& member(const nlohmann::json& object, const std::string& source,
                             const char* key);
std::string string_member(const nlohmann::json& object, const std::string& source, const char* key);
double number_member(const nlohmann::json& object, const std::string& source, const char* key);
std::uint64_t count_member(const nlohmann::json& object, const std::string& source,
                           const char* key);

// A campaign's bucket.json with its fields checked (FormatError naming the file and the field):
// what `weft report` shows and `weft merge` combines.
struct BucketFile {
  nlohmann::json document;
  std::string signature;
  std::string symptom;
  std::string backend;
  std::string op;
  std::vector<std::string> ops;  // every op of its cases ([op] for files written before)
  std::string message;           // empty when absent
  std::uint64_t count = 0;
  std::string first_case;
  std::vector<std::string> cases;
  double first_found = 0;
};
BucketFile read_bucket_file(const std::filesystem::path& path);

// A string array member; FormatError naming the file and the element otherwise.
std::vector<std::string> string_list_member(const nlohmann::json& object, const std::string& source,
                                            const char* key);

}  // namespace weft::cli
