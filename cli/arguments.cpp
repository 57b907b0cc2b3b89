#include "arguments.h"

#include <sstream>

#include "weft/error.h"

namespace weft::cli {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

std::vector<ir::OpKind> parse_ops(const std::string& text, const char* option) {
  return parse_ops(split_list(text), option);
}

std::vector<ir::OpKind> parse_ops(const std::vector<std::string>& names, const char* option) {
  std::vector<ir::OpKind> ops;
  for (const std::string& name : names) {
    const auto op = ir::op_from_name(name);
    if (!op) throw Error(std::string(option) + ": unknown op '" + name + "' (see `weft ops`)");
    ops.push_back(*op);
  }
  return ops;
}

}  // namespace weft::cli
