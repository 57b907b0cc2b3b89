#pragma once
// Parsing of list-valued command-line options shared by several subcommands.
#include <string>
#include <vector>

#include "weft/ir/op_kind.h"

namespace weft::cli {

// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> split_list(const std::string& text);
// Op names (see `weft ops`); throws weft::Error naming `option` and the unknown name.
std::vector<ir::OpKind> parse_ops(const std::string& text, const char* option);
std::vector<ir::OpKind> parse_ops(const std::vector<std::string>& names, const char* option);

}  // namespace weft::cli
