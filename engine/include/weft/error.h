#pragma once
// weft's exception types. Messages read like PyTorch's: what was expected, what was given.

#include <stdexcept>
#include <string>

namespace weft {

// Any error raised by weft (bad arguments, shape mismatches, autograd misuse, …).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file or document that does not have the expected form. The message names the file,
// the field (a JSON pointer or a tensor name) and what was expected.
class FormatError : public Error {
 public:
  FormatError(const std::string& source, const std::string& field, const std::string& problem)
      : Error(source + ": " + (field.empty() ? std::string() : field + ": ") + problem),
        source_(source),
        field_(field) {}
  const std::string& source() const { return source_; }
  const std::string& field() const { return field_; }

 private:
  std::string source_;
  std::string field_;
};

}  // namespace weft
