// `weft ops`: the op vocabulary, one row per op, with its family, arity, attributes and the
// backends that implement it.
#include <fmt/format.h>

#include <iostream>
#include <string>

#include "commands.h"
#include "weft/ir/op_schema.h"

namespace weft::cli {

namespace {

std::string attributes_text(const ir::OpSchema& schema) {
  std::string text;
  for (const ir::AttrSpec& attr : schema.attrs) {
    if (!text.empty()) text += ", ";
    text += attr.name + ":" + ir::attr_type_name(attr.type);
    if (attr.required) text += "!";
  }
  return text;
}

void print_ops(const std::string& family) {
  std::cout << fmt::format("{:<22} {:<12} {:<12} {:<8} {}\n", "op", "family", "inputs", "engine",
                           "attributes (! = required)");
  int shown = 0;
  for (ir::OpKind op : ir::kAllOps) {
    const ir::OpSchema& schema = ir::schema(op);
    if (!family.empty() && schema.family != family) continue;
    // Every op of the list has an engine kernel: ir/execute.cpp's switch has no default.
    std::cout << fmt::format("{:<22} {:<12} {:<12} {:<8} {}\n", schema.name(), schema.family,
                             schema.input_count_text(), "yes", attributes_text(schema));
    ++shown;
  }
  std::cout << fmt::format("{} ops\n", shown);
}

}  // namespace

void add_ops_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("ops", "List the op vocabulary and backend support");
  auto family = std::make_shared<std::string>();
  cmd->add_option("--family", *family, "Only ops of this family (e.g. conv, unary)");
  cmd->callback([family] { print_ops(*family); });
}

}  // namespace weft::cli
