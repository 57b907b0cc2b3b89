// `weft export CASE --python FILE`: a standalone PyTorch script that shows the case's bug with
// stock PyTorch (weft/oracle/export.h).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "json_fields.h"
#include "weft/corpus/test_case.h"
#include "weft/error.h"
#include "weft/io/atomic_file.h"
#include "weft/oracle/export.h"
#include "weft/oracle/judge.h"

namespace weft::cli {

namespace {

namespace fs = std::filesystem;

struct ExportArgs {
  std::string case_dir;
  std::string python_file;
  std::string backend;
  std::string values = "auto";
  int calls = 3;
};

// The faulty path named by the case's verdict.json, when it has one.
std::string backend_from_verdict(const fs::path& case_dir) {
  const fs::path path = case_dir / "verdict.json";
  if (!fs::exists(path)) return {};
  const oracle::Verdict verdict = oracle::verdict_from_json(read_json_object(path), path.string());
  return verdict.findings.empty() ? std::string() : verdict.findings[0].backend;
}

void run_export(const ExportArgs& args) {
  const fs::path case_dir(args.case_dir);
  const corpus::TestCase test_case = corpus::load_case(case_dir);
  oracle::ExportOptions options;
  options.calls = args.calls;
  options.backend = args.backend;
  if (options.backend.empty()) options.backend = backend_from_verdict(case_dir);
  if (options.backend.empty()) options.backend = "torchscript-ofi";
  std::size_t elements = 0;
  for (const auto& [name, value] : test_case.values)
    elements += static_cast<std::size_t>(value.numel());
  const bool embed = args.values == "embed" || (args.values == "auto" && elements <= 4096);
  if (!embed) {
    const fs::path script_dir = fs::absolute(args.python_file).parent_path();
    options.values_path =
        fs::relative(fs::absolute(case_dir / corpus::kValuesFile), script_dir).string();
  }
  const std::string script =
      oracle::export_python_script(test_case.graph, test_case.values, options);
  io::write_file_atomically(args.python_file, script);
  std::cout << fmt::format("wrote {} ({} path, {} nodes, values {})\n", args.python_file,
                           options.backend, test_case.graph.nodes().size(),
                           embed ? "embedded" : "read from " + options.values_path);
}

}  // namespace

void add_export_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("export", "Write a standalone PyTorch script for a case");
  auto args = std::make_shared<ExportArgs>();
  cmd->add_option("case", args->case_dir, "Test-case directory")->required();
  cmd->add_option("--python", args->python_file, "The script to write")->required();
  cmd->add_option("--backend", args->backend,
                  "Path under test (default: the faulty path of verdict.json, else "
                  "torchscript-ofi)");
  cmd->add_option("--values", args->values,
                  "embed: values as literals; file: read values.safetensors; auto: embed up "
                  "to 4096 elements")
      ->check(CLI::IsMember({"auto", "embed", "file"}));
  cmd->add_option("--calls", args->calls, "Calls of the path")->check(CLI::Range(1, 100));
  cmd->callback([args] {
    run_command("export", [&] {
      run_export(*args);
      return 0;
    });
  });
}

}  // namespace weft::cli
