// `weft ops`: the op vocabulary, one row per op, with its family, arity, attributes and the
// backends that implement it; `--coverage`: which ops of PyTorch's Core ATen opset weft's IR
// ops reach (scripts/core-aten/), and why the rest are left out.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "commands.h"
#include "weft/error.h"
#include "weft/ir/op_schema.h"
#include "weft_core_aten.h"

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

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// The first few, then how many more: `sum` is in nearly every gradient.
std::string some_of(const std::vector<std::string>& items) {
  constexpr std::size_t kShown = 8;
  if (items.size() <= kShown) return joined(items);
  return joined({items.begin(), items.begin() + kShown}) +
         fmt::format(" and {} more", items.size() - kShown);
}

// One row per Core ATen op: the IR ops whose programs reach it (forward, or only through
// their gradient), the reason it is left out, or "not yet". Returns the exit status: 1 when
// coverage.json is stale (an IR op it does not know, or one it names that is gone).
int print_coverage() {
  using json = nlohmann::json;
  const json coverage = json::parse(kCoreAtenCoverage);
  const json left_out = json::parse(kCoreAtenLeftOut);
  std::set<std::string> known;
  for (ir::OpKind op : ir::kAllOps) known.insert(std::string(ir::op_name(op)));
  const std::set<std::string> derived = coverage.at("ir_ops").get<std::set<std::string>>();
  std::cout << fmt::format(
      "{:<34} {:<9} {}\n",
      "core ATen op (PyTorch " + coverage.at("pytorch").get<std::string>() + ")", "status",
      "through weft's IR ops, or why not");
  int covered = 0, excluded = 0, missing = 0, overloads = 0;
  for (const auto& [name, names] : coverage.at("core").items()) {
    overloads += static_cast<int>(names.size());
    const json forward = coverage.at("forward").value(name, json::array());
    const json gradient = coverage.at("gradient").value(name, json::array());
    std::string status, detail;
    if (!forward.empty() || !gradient.empty()) {
      ++covered;
      status = "covered";
      if (!forward.empty()) detail = some_of(forward.get<std::vector<std::string>>());
      if (!gradient.empty()) {
        detail += (detail.empty() ? "" : "; ") + std::string("gradient of ") +
                  some_of(gradient.get<std::vector<std::string>>());
      }
    } else if (left_out.contains(name)) {
      ++excluded;
      status = "left out";
      detail = left_out.at(name).get<std::string>();
    } else {
      ++missing;
      status = "not yet";
      detail = "no IR op reaches it yet (issue 17)";
    }
    std::cout << fmt::format("{:<34} {:<9} {}\n", name, status, detail);
  }
  const int total = covered + excluded + missing;
  std::cout << fmt::format(
      "{} core ATen ops ({} overloads): {} covered ({:.0f} %), {} left out with a reason, {} not "
      "yet; covered or left out: {:.0f} %; {} IR ops\n",
      total, overloads, covered, 100.0 * covered / total, excluded, missing,
      100.0 * (covered + excluded) / total, known.size());
  std::vector<std::string> unknown, gone;
  for (const std::string& op : known)
    if (!derived.count(op)) unknown.push_back(op);
  for (const std::string& op : derived)
    if (!known.count(op)) gone.push_back(op);
  if (unknown.empty() && gone.empty()) return 0;
  std::cerr << fmt::format(
      "scripts/core-aten/coverage.json is stale: it does not know the IR ops [{}] and names the "
      "gone ones [{}]; run scripts/core-aten/derive\n",
      joined(unknown), joined(gone));
  return 1;
}

}  // namespace

void add_ops_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("ops", "List the op vocabulary and backend support");
  auto family = std::make_shared<std::string>();
  auto coverage = std::make_shared<bool>(false);
  cmd->add_option("--family", *family, "Only ops of this family (e.g. conv, unary)");
  cmd->add_flag("--coverage", *coverage,
                "Which ops of PyTorch's Core ATen opset the IR ops reach, and why the rest not");
  cmd->callback([family, coverage] {
    if (*coverage) {
      run_command("ops", [] { return print_coverage(); });
    } else {
      print_ops(*family);
    }
  });
}

}  // namespace weft::cli
