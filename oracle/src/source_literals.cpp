// Python/TorchScript literals and identifiers of the emitted source text. No torch headers.
#include "source_literals.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>

#include "weft/error.h"
#include "weft/oracle/source.h"

namespace weft::oracle {

std::string int_literal(std::int64_t value) {
  // -9223372036854775808 is a unary minus applied to a literal that does not fit an int64
  // (TorchScript's lexer refuses it).
  if (value == std::numeric_limits<std::int64_t>::min()) return "(-9223372036854775807 - 1)";
  return std::to_string(value);
}

std::string ints_literal(const std::vector<std::int64_t>& values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ", ";
    text += int_literal(values[i]);
  }
  return text + "]";
}

std::string bool_literal(bool value) {
  return value ? "True" : "False";
}

std::string string_literal(const std::string& value) {
  std::string text = "'";
  for (char c : value) {
    if (c == '\\' || c == '\'') text += '\\';
    text += c;
  }
  return text + "'";
}

std::string multiplier_literal(double value) {
  if (std::nearbyint(value) == value && std::abs(value) < 9.0e15) {
    return int_literal(static_cast<std::int64_t>(value));
  }
  return float_literal(value);
}

namespace {

bool is_python_keyword(const std::string& word) {
  static const std::set<std::string> keywords{
      "False",   "None",     "True",     "and",    "as",   "assert", "async",  "await",
      "break",   "class",    "continue", "def",    "del",  "elif",   "else",   "except",
      "finally", "for",      "from",     "global", "if",   "import", "in",     "is",
      "lambda",  "nonlocal", "not",      "or",     "pass", "raise",  "return", "try",
      "while",   "with",     "yield",    "print",  "exec"};
  return keywords.count(word) > 0;
}

}  // namespace

// Names the emitted text or its module class uses, which a leaf identifier must not shadow:
// modules and builtins the bodies call, and the attributes of torch.nn.Module (PyTorch 1.13's
// dir(torch.nn.Module), plus `training`), since parameters become attributes.
bool is_reserved_name(const std::string& word) {
  static const std::set<std::string> reserved{"self",
                                              "torch",
                                              "F",
                                              "math",
                                              "float",
                                              "int",
                                              "bool",
                                              "len",
                                              "list",
                                              "tuple",
                                              "range",
                                              "Exception",
                                              "T_destination",
                                              "add_module",
                                              "apply",
                                              "bfloat16",
                                              "buffers",
                                              "children",
                                              "cpu",
                                              "cuda",
                                              "double",
                                              "dump_patches",
                                              "eval",
                                              "extra_repr",
                                              "forward",
                                              "get_buffer",
                                              "get_extra_state",
                                              "get_parameter",
                                              "get_submodule",
                                              "half",
                                              "ipu",
                                              "load_state_dict",
                                              "modules",
                                              "named_buffers",
                                              "named_children",
                                              "named_modules",
                                              "named_parameters",
                                              "parameters",
                                              "register_backward_hook",
                                              "register_buffer",
                                              "register_forward_hook",
                                              "register_forward_pre_hook",
                                              "register_full_backward_hook",
                                              "register_load_state_dict_post_hook",
                                              "register_module",
                                              "register_parameter",
                                              "requires_grad_",
                                              "set_extra_state",
                                              "share_memory",
                                              "state_dict",
                                              "to",
                                              "to_empty",
                                              "train",
                                              "training",
                                              "type",
                                              "xpu",
                                              "zero_grad"};
  return is_python_keyword(word) || reserved.count(word) > 0;
}

// v<digits>: the names of node outputs.
bool looks_like_value_name(const std::string& word) {
  return word.size() >= 2 && word[0] == 'v' &&
         std::isdigit(static_cast<unsigned char>(word[1])) != 0;
}

namespace {

void append_scalar(std::string& text, const Tensor& flat, std::int64_t i) {
  switch (flat.dtype()) {
    case Dtype::Bool:
      text += flat.data<bool>()[i] ? "True" : "False";
      return;
    case Dtype::Int32:
      text += std::to_string(flat.data<std::int32_t>()[i]);
      return;
    case Dtype::Int64:
      text += int_literal(flat.data<std::int64_t>()[i]);
      return;
    case Dtype::Float32:
      text += float_literal(static_cast<double>(flat.data<float>()[i]));
      return;
    case Dtype::Float64:
      text += float_literal(flat.data<double>()[i]);
      return;
    case Dtype::Float16:
    case Dtype::BFloat16:
      break;  // written from their float64 values (exact), see python_tensor_literal
  }
  throw Error("python_tensor_literal: unknown dtype");
}

}  // namespace

std::string float_literal(double value) {
  if (std::isnan(value)) return "float('nan')";
  if (std::isinf(value)) return value > 0 ? "float('inf')" : "-float('inf')";
  char buffer[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  std::string text(buffer);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string sanitize_identifier(const std::string& name) {
  std::string ident;
  for (char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    ident += ok ? c : '_';
  }
  if (ident.empty() || (ident[0] >= '0' && ident[0] <= '9')) ident = "x" + ident;
  return ident;
}

std::string dtype_expression(Dtype dtype, SourceDialect dialect) {
  const bool script = dialect == SourceDialect::TorchScript;
  // c10::ScalarType codes: Int = 3, Long = 4, Half = 5, Float = 6, Double = 7, Bool = 11,
  // BFloat16 = 15.
  switch (dtype) {
    case Dtype::Bool:
      return script ? "11" : "torch.bool";
    case Dtype::Int32:
      return script ? "3" : "torch.int32";
    case Dtype::Int64:
      return script ? "4" : "torch.int64";
    case Dtype::Float16:
      return script ? "5" : "torch.float16";
    case Dtype::BFloat16:
      return script ? "15" : "torch.bfloat16";
    case Dtype::Float32:
      return script ? "6" : "torch.float32";
    case Dtype::Float64:
      return script ? "7" : "torch.float64";
  }
  throw Error("dtype_expression: unknown dtype #" + std::to_string(static_cast<int>(dtype)));
}

std::string python_tensor_literal(const Tensor& tensor) {
  Tensor flat = tensor.detach();
  if (flat.device() != kCPU) flat = flat.to(kCPU);
  flat = flat.contiguous();
  // A 16-bit float is written as its exact float64 value, which torch.tensor rounds back to it.
  const Tensor digits = is_reduced_floating(flat.dtype()) ? flat.to(Dtype::Float64) : flat;
  std::string values = "[";
  for (std::int64_t i = 0; i < flat.numel(); ++i) {
    if (i > 0) values += ", ";
    append_scalar(values, digits, i);
  }
  values += "]";
  const std::string dtype = dtype_expression(flat.dtype(), SourceDialect::Python);
  return "torch.tensor(" + values + ", dtype=" + dtype + ").reshape(" + ints_literal(flat.sizes()) +
         ")";
}

}  // namespace weft::oracle
