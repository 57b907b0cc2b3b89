// `weft reduce CASE -o OUT`: minimizes a failing case while it keeps its finding (symptom,
// faulty path, localized op kind) and writes the reduced case, its repro.py and the log of
// the steps (weft/reduce/reducer.h). Exit status: 0 reduced, 1 the finding does not reproduce
// (flaky: nothing is written), 2 error.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "commands.h"
#include "json_fields.h"
#include "reduced_case.h"
#include "weft/corpus/test_case.h"
#include "weft/error.h"
#include "weft/oracle/oracle.h"
#include "weft/reduce/reducer.h"

namespace weft::cli {

namespace {

namespace fs = std::filesystem;

struct ReduceArgs {
  std::string case_dir;
  std::string out;
  int jobs = 0;
  double time_limit = 20;
  double compile_limit = 180;  // more seconds for a path that compiles (WorkerOptions)
  double budget = 600;
  std::optional<std::size_t> finding;
  std::string backends;
  bool quiet = false;
};

// The findings of the case's verdict.json, or of a fresh judgement when it has none.
std::vector<oracle::Finding> findings_of(const ReduceArgs& args,
                                         const corpus::TestCase& test_case) {
  const fs::path path = fs::path(args.case_dir) / "verdict.json";
  if (fs::exists(path) && args.backends.empty()) {
    return oracle::verdict_from_json(read_json_object(path), path.string()).findings;
  }
  oracle::OracleOptions options;
  if (!args.backends.empty()) options.backends = oracle::parse_backend_list(args.backends);
  options.worker.time_limit_seconds = args.time_limit;
  options.worker.compile_limit_seconds = args.compile_limit;
  oracle::Oracle oracle(options);
  std::cerr << "judging the case on " << options.backends.size() << " backends\n";
  return oracle.check(test_case.graph, test_case.values).verdict.findings;
}

int run_reduce(const ReduceArgs& args) {
  const corpus::TestCase test_case = corpus::load_case(args.case_dir);
  if (fs::exists(args.out)) {
    throw Error(args.out + ": already exists; give a new directory to -o");
  }
  const std::vector<oracle::Finding> findings = findings_of(args, test_case);
  if (findings.empty()) {
    std::cout << "the case shows no bug: nothing to reduce\n";
    return 1;
  }
  std::size_t index = 0;
  if (args.finding) {
    index = *args.finding;
    if (index >= findings.size()) {
      throw Error(fmt::format("--finding {}: the case has {} finding{}", index, findings.size(),
                              findings.size() == 1 ? "" : "s"));
    }
  } else {
    // A case stored in a campaign's bucket: the bucket's finding, which need not be the first.
    fs::path case_path = fs::absolute(args.case_dir).lexically_normal();
    if (!case_path.has_filename()) case_path = case_path.parent_path();  // "case/"
    const fs::path bucket = case_path.parent_path() / "bucket.json";
    if (fs::exists(bucket) && args.backends.empty()) {
      const std::string signature = read_bucket_file(bucket).signature;
      for (std::size_t k = 0; k < findings.size(); ++k) {
        if (findings[k].signature == signature) index = k;
      }
    }
  }
  const oracle::Finding& target = findings[index];
  std::cerr << fmt::format("reducing {} ({} nodes): {} in {} at {}\n", args.case_dir,
                           test_case.graph.nodes().size(), oracle::symptom_name(target.symptom),
                           target.backend, target.op.empty() ? "?" : target.op);

  reduce::ReduceOptions options;
  options.jobs = args.jobs > 0 ? args.jobs : std::max(1u, std::thread::hardware_concurrency());
  options.worker.time_limit_seconds = args.time_limit;
  options.worker.compile_limit_seconds = args.compile_limit;
  options.budget_seconds = args.budget;
  if (!args.quiet) options.progress = [](const std::string& line) { std::cerr << line << "\n"; };
  const reduce::ReduceResult result =
      reduce::reduce_case(test_case.graph, test_case.values, target, options);
  switch (result.status) {
    case reduce::ReduceStatus::Flaky:
      std::cout << fmt::format(
          "flaky: the finding did not show in {} judgements of the original case; nothing was "
          "reduced or written\n",
          result.oracle_checks);
      return 1;
    case reduce::ReduceStatus::Unstable:
      std::cout << "unstable: the reduced case showed the finding once but not when judged "
                   "again; nothing was written\n";
      return 1;
    case reduce::ReduceStatus::Reduced:
      break;
  }
  write_reduced_case(args.out, result);
  std::cout << fmt::format(
      "reduced: {}\nsignature: {}\nwrote {} (graph.json, values.safetensors, "
      "verdict.json, repro.py, reduce.log)\n",
      reduction_summary(result), result.finding.signature, args.out);
  return 0;
}

}  // namespace

void add_reduce_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("reduce", "Minimize a failing case while it keeps its bug");
  auto args = std::make_shared<ReduceArgs>();
  cmd->add_option("case", args->case_dir, "Test-case directory")->required();
  cmd->add_option("-o,--out", args->out, "The reduced case directory to write (must not exist)")
      ->required();
  cmd->add_option("--jobs", args->jobs,
                  "Parallel oracles, one worker process each (default: cores)");
  cmd->add_option("--compile-limit", args->compile_limit,
                  "Seconds a compiling path (torch.compile, export, AOTInductor) gets on top")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--time-limit", args->time_limit, "Seconds per backend run before a timeout");
  cmd->add_option(
      "--budget", args->budget,
      "Seconds for the whole reduction; then the smallest case so far is kept (0: none)");
  cmd->add_option("--finding", args->finding,
                  "Which finding of the verdict to keep (default: the bucket's when the case is in "
                  "a campaign bucket, else 0)");
  cmd->add_option("--backends", args->backends,
                  "Judge the case on these backends first instead of reading its verdict.json");
  cmd->add_flag("--quiet", args->quiet, "No step-by-step progress");
  cmd->callback([args] { run_command("reduce", [&] { return run_reduce(*args); }); });
}

}  // namespace weft::cli
