// The reduced case directory: graph, values, verdict, repro script and the log of the steps.
#include "reduced_case.h"

#include <fmt/format.h>
#include <unistd.h>

#include "weft/corpus/test_case.h"
#include "weft/error.h"
#include "weft/io/atomic_file.h"
#include "weft/oracle/export.h"

namespace weft::cli {

namespace fs = std::filesystem;

std::string reduction_summary(const reduce::ReduceResult& result) {
  return fmt::format("{} -> {} nodes, {} -> {} elements, {:.1f} s, {} oracle checks",
                     result.nodes_before, result.nodes_after, result.elements_before,
                     result.elements_after, result.seconds, result.oracle_checks);
}

std::optional<fs::path> find_reduced_case(const fs::path& bucket_dir,
                                          const std::vector<std::string>& cases) {
  for (const std::string& name : cases) {
    const fs::path reduced = bucket_dir / name / "reduced";
    if (fs::is_directory(reduced)) return reduced;
  }
  return std::nullopt;
}

std::string reduction_text(const fs::path& bucket_dir, const std::vector<std::string>& cases) {
  const std::optional<fs::path> reduced = find_reduced_case(bucket_dir, cases);
  if (!reduced) return "-";
  try {
    const nlohmann::json document = nlohmann::json::parse(io::read_file(*reduced / "reduce.json"));
    return fmt::format("{} → {} nodes", document.at("nodes").at(0).get<int>(),
                       document.at("nodes").at(1).get<int>());
  } catch (const std::exception&) {
    return "unreadable reduce.json";
  }
}

namespace {

std::string log_text(const reduce::ReduceResult& result) {
  std::string text = fmt::format("weft reduce: {}\n", reduce::reduce_status_name(result.status));
  text += fmt::format("finding: {} in {} at {}\n", oracle::symptom_name(result.finding.symptom),
                      result.finding.backend, result.finding.op.empty() ? "?" : result.finding.op);
  text += fmt::format("signature: {}\n", result.finding.signature);
  text += "result: " + reduction_summary(result) + "\n";
  text += fmt::format(
      "oracle: {} checks, {} backend runs; {} candidates refused by the engine, {} judged "
      "before{}\n",
      result.oracle_checks, result.backend_runs, result.rejected_locally, result.cache_hits,
      result.budget_exhausted ? "; the time budget ran out" : "");
  text +=
      fmt::format("{:>4}  {:<10} {:>6} {:>9}  {}\n", "step", "pass", "nodes", "elements", "edit");
  text += fmt::format("{:>4}  {:<10} {:>6} {:>9}  {}\n", 0, "original", result.nodes_before,
                      result.elements_before, "");
  for (std::size_t k = 0; k < result.steps.size(); ++k) {
    const reduce::ReduceStep& step = result.steps[k];
    text += fmt::format("{:>4}  {:<10} {:>6} {:>9}  {}\n", k + 1, step.pass, step.nodes,
                        step.elements, step.description);
  }
  return text;
}

nlohmann::json log_json(const reduce::ReduceResult& result) {
  nlohmann::json steps = nlohmann::json::array();
  for (const reduce::ReduceStep& step : result.steps) {
    steps.push_back({{"pass", step.pass},
                     {"edit", step.description},
                     {"nodes", step.nodes},
                     {"elements", step.elements}});
  }
  return {{"status", reduce::reduce_status_name(result.status)},
          {"signature", result.finding.signature},
          {"nodes", {result.nodes_before, result.nodes_after}},
          {"elements", {result.elements_before, result.elements_after}},
          {"seconds", result.seconds},
          {"oracle_checks", result.oracle_checks},
          {"backend_runs", result.backend_runs},
          {"rejected_locally", result.rejected_locally},
          {"cache_hits", result.cache_hits},
          {"budget_exhausted", result.budget_exhausted},
          {"steps", steps}};
}

}  // namespace

void write_reduced_case(const fs::path& dir, const reduce::ReduceResult& result) {
  if (fs::exists(dir))
    throw Error(dir.string() + ": already exists; the reducer writes a new directory");
  const fs::path parent = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  fs::create_directories(parent);
  const fs::path temporary =
      parent / fmt::format(".{}.tmp-{}", dir.filename().string(), static_cast<long>(::getpid()));
  fs::remove_all(temporary);
  try {
    corpus::save_case(temporary, corpus::TestCase{result.graph, result.values});
    io::write_file_atomically(temporary / "verdict.json",
                              oracle::verdict_to_json(result.verdict).dump(1) + "\n");
    oracle::ExportOptions options;
    options.backend = result.finding.backend;
    // Small cases embed their values, so the script alone shows the bug.
    if (result.elements_after > 4096) options.values_path = corpus::kValuesFile;
    std::string script;
    try {
      script = oracle::export_python_script(result.graph, result.values, options);
    } catch (const std::exception& e) {
      script = std::string("# No standalone PyTorch script for this path: ") + e.what() +
               "\n# Replay it with: weft replay <this directory>\n";
    }
    io::write_file_atomically(temporary / "repro.py", script);
    io::write_file_atomically(temporary / "reduce.log", log_text(result));
    io::write_file_atomically(temporary / "reduce.json", log_json(result).dump(1) + "\n");
    fs::rename(temporary, dir);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(temporary, ignored);
    throw;
  }
}

}  // namespace weft::cli
