// `weft replay CASE`: runs a test case on the backends, prints a table (status, errors against
// the reference, time) and the verdict. Exit status: 0 no bug, 1 bug reproduced, 2 error.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "weft/corpus/test_case.h"
#include "weft/oracle/oracle.h"
#include "weft/oracle/torch_info.h"

namespace weft::cli {

namespace {

struct ReplayArgs {
  std::string case_dir;
  std::string backends;
  double time_limit = 20;
  double compile_limit = 180;  // more seconds for a path that compiles (WorkerOptions)
  int calls = 3;
  bool no_localize = false;
};

std::string error_text(double value) {
  return value == 0 ? std::string("0") : fmt::format("{:.3g}", value);
}

int replay(const ReplayArgs& args) {
  const corpus::TestCase test_case = corpus::load_case(args.case_dir);
  oracle::OracleOptions options;
  options.backends = args.backends.empty() ? oracle::default_backends(true)
                                           : oracle::parse_backend_list(args.backends);
  options.worker.time_limit_seconds = args.time_limit;
  options.worker.compile_limit_seconds = args.compile_limit;
  options.calls = args.calls;
  options.localize = !args.no_localize;
  oracle::Oracle oracle(options);
  const oracle::CaseReport report = oracle.check(test_case.graph, test_case.values);
  const oracle::Verdict& verdict = report.verdict;

  std::cout << fmt::format("{:<22} {:<13} {:>12} {:>12} {:>9}  {}\n", "backend", "status",
                           "max abs err", "max rel err", "time", "note");
  for (const oracle::BackendSummary& row : verdict.backends) {
    std::string note = row.message;
    if (note.size() > 100) note = note.substr(0, 97) + "...";
    const std::string status = row.outcome == oracle::Outcome::Ok && !row.agrees
                                   ? "DISAGREES"
                                   : std::string(oracle::outcome_name(row.outcome));
    std::cout << fmt::format("{:<22} {:<13} {:>12} {:>12} {:>7.1f}ms  {}\n", row.backend, status,
                             error_text(row.max_abs_error), error_text(row.max_rel_error),
                             row.seconds * 1e3, note);
  }
  if (!verdict.reference_finite) {
    std::cout << "note: the reference is not finite (value search failed); NaN/Inf differences "
                 "are not reported\n";
  }
  if (!verdict.note.empty()) std::cout << "note: " << verdict.note << "\n";
  for (const oracle::Unsupported& gap : verdict.unsupported) {
    std::string dtypes;
    for (const std::string& d : gap.dtypes) dtypes += (dtypes.empty() ? "" : ", ") + d;
    std::cout << fmt::format("capability gap (not a bug): {} refuses {}{}: {}\n", gap.backend,
                             gap.op.empty() ? "the case" : gap.op,
                             dtypes.empty() ? "" : " of " + dtypes, gap.message);
  }
  if (!verdict.bug()) {
    std::cout << "verdict: no bug (" << report.results.size() << " backends, "
              << report.backend_runs << " runs)\n";
    return 0;
  }
  for (const oracle::Finding& finding : verdict.findings) {
    std::cout << fmt::format(
        "verdict: {} in {}{}: {}\n  signature: {}\n", oracle::symptom_name(finding.symptom),
        finding.backend,
        finding.node ? fmt::format(" at node {} ({})", *finding.node, finding.op) : std::string(),
        finding.message, finding.signature);
    if (!finding.also.empty()) {
      std::string also;
      for (const std::string& b : finding.also) also += (also.empty() ? "" : ", ") + b;
      std::cout << "  also shown by: " << also << "\n";
    }
  }
  return 1;
}

}  // namespace

void add_replay_command(CLI::App& app) {
  CLI::App* cmd =
      app.add_subcommand("replay", "Run a test case on the backends and judge the results");
  auto args = std::make_shared<ReplayArgs>();
  cmd->add_option("case", args->case_dir, "Test-case directory (graph.json + values.safetensors)")
      ->required();
  cmd->add_option("--backends", args->backends,
                  "Comma-separated backends (default: every available one; see `weft backends`)");
  cmd->add_option("--compile-limit", args->compile_limit,
                  "Seconds a compiling path (torch.compile, export, AOTInductor) gets on top")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--time-limit", args->time_limit, "Seconds per backend run before a timeout")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--calls", args->calls, "Calls per backend (compiled paths warm up)")
      ->check(CLI::Range(1, 100));
  cmd->add_flag("--no-localize", args->no_localize, "Do not bisect for the faulty node");
  cmd->callback([args] { run_command("replay", [&] { return replay(*args); }); });
}

void add_backends_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("backends", "List the oracle's backends and availability");
  auto local = std::make_shared<bool>(false);
  auto libtorch_version = std::make_shared<bool>(false);
  // What another weft asks of this one about its LibTorch (worker.h's siblings); neither asks a
  // sibling in turn.
  cmd->add_flag("--local", *local, "Only this build's own answers, as name<TAB>reason lines")
      ->group("");
  cmd->add_flag("--libtorch-version", *libtorch_version, "The version of the LibTorch it links")
      ->group("");
  cmd->callback([local, libtorch_version] {
    if (*libtorch_version) {
      std::cout << oracle::torch_version() << "\n";
      return;
    }
    if (*local) {
      for (const oracle::BackendInfo& info : oracle::list_local_backends()) {
        std::cout << info.name << "\t" << info.unavailable_reason << "\n";
      }
      return;
    }
    for (const oracle::BackendInfo& info : oracle::list_backends()) {
      std::cout << fmt::format(
          "{:<22} {:<12} {}\n", info.name,
          info.unavailable_reason.empty() ? "available" : "unavailable",
          info.unavailable_reason.empty() ? info.description : info.unavailable_reason);
    }
  });
}

}  // namespace weft::cli
