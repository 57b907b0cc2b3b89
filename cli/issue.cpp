// `weft issue BUCKET`: a GitHub issue for PyTorch's tracker, in Markdown: a title, the minimal
// repro (the bucket's reduced case, else its first case, as `weft export` writes it, which
// follows PyTorch's pt2 fuzzing rules for the torch2 paths), that script's output on the
// PyTorch it targets, an ablation (which paths of the same model show the bug), and versions.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "commands.h"
#include "json_fields.h"
#include "reduced_case.h"
#include "weft/corpus/test_case.h"
#include "weft/error.h"
#include "weft/io/atomic_file.h"
#include "weft/oracle/command.h"
#include "weft/oracle/export.h"
#include "weft/oracle/oracle.h"
#include "weft/oracle/torch_info.h"
#include "weft/version.h"

namespace weft::cli {

namespace {

namespace fs = std::filesystem;

struct IssueArgs {
  std::string bucket_dir;
  std::string output;
  std::string backends;
  double time_limit = 60;
};

// How PyTorch's maintainers name a path.
std::string path_label(const std::string& backend) {
  static const std::pair<const char*, const char*> labels[] = {
      {"torch", "eager (LibTorch 1.13)"},
      {"torchscript", "TorchScript (torch.jit.script)"},
      {"torchscript-frozen", "TorchScript torch.jit.freeze"},
      {"torchscript-ofi", "TorchScript torch.jit.optimize_for_inference"},
      {"torchscript-nnc", "TorchScript NNC fuser"},
      {"torchscript-legacy", "TorchScript legacy fuser"},
      {"python", "eager (PyTorch 1.13, Python)"},
      {"torch2-eager", "eager"},
      {"torch2-libtorch", "eager (LibTorch C++ API)"},
      {"torch2-inductor", "torch.compile (inductor)"},
      {"torch2-dynamic", "torch.compile(dynamic=True)"},
      {"torch2-aot-eager", "torch.compile(backend=\"aot_eager\")"},
      {"torch2-export", "torch.export"},
      {"torch2-aoti-python", "AOTInductor (aoti_load_package)"},
      {"torch2-aoti", "AOTInductor (C++ AOTIModelPackageLoader)"},
      {"torch2-eager-cuda", "eager (CUDA)"},
      {"torch2-cuda", "eager (CUDA, LibTorch C++ API)"},
      {"torch2-inductor-cuda", "torch.compile (inductor, CUDA)"},
      {"torch2-aoti-cuda", "AOTInductor (CUDA, C++ loader)"},
  };
  for (const auto& [name, label] : labels) {
    if (backend == name) return label;
  }
  return backend;
}

std::string symptom_words(const std::string& symptom) {
  if (symptom == "wrong-output") return "gives wrong results";
  if (symptom == "wrong-gradient") return "gives wrong gradients";
  if (symptom == "exception-mismatch") return "raises an error";
  if (symptom == "nan-inf-mismatch") return "gives NaN/Inf";
  if (symptom == "shape-mismatch") return "gives outputs of the wrong shape";
  if (symptom == "crash") return "crashes";
  if (symptom == "timeout") return "hangs";
  if (symptom == "nondeterminism") return "gives different results from call to call";
  return symptom;
}

// The paths that tell where a bug lives: eager and the compiler stages of each PyTorch.
std::vector<std::string> ablation_paths(const std::string& faulty) {
  std::vector<std::string> wanted = {
      "torch",          "torch2-eager",  "torch2-aot-eager",   "torch2-inductor",
      "torch2-dynamic", "torch2-export", "torch2-aoti-python", "torch2-aoti"};
  if (faulty.size() > 5 && faulty.compare(faulty.size() - 5, 5, "-cuda") == 0) {
    wanted = {"torch2-eager-cuda", "torch2-cuda",  "torch2-inductor-cuda",
              "torch2-aoti-cuda",  "torch2-eager", "torch2-inductor"};
  } else if (faulty.rfind("fault:", 0) == 0) {
    wanted = {"torch"};  // a planted fault: nothing to ablate
  } else if (faulty.rfind("torchscript", 0) == 0 || faulty == "torch" || faulty == "python") {
    wanted = {"torch",           "torchscript",  "torchscript-frozen", "torchscript-ofi",
              "torchscript-nnc", "torch2-eager", "torch2-inductor"};
  }
  const std::vector<std::string> available = oracle::default_backends(true);
  std::vector<std::string> paths;
  for (const std::string& name : wanted) {
    const bool here = std::find(available.begin(), available.end(), name) != available.end();
    if (here || name == faulty) paths.push_back(name);
  }
  if (std::find(paths.begin(), paths.end(), faulty) == paths.end()) paths.push_back(faulty);
  return paths;
}

// What each path did with the case: whether it shows the bucket's symptom.
std::string ablation_table(const oracle::CaseReport& report, const std::string& symptom) {
  std::string table = "| path | weft backend | result |\n|---|---|---|\n";
  for (const oracle::BackendSummary& row : report.verdict.backends) {
    if (row.backend == oracle::kReferenceBackend || row.backend == oracle::kEngineBackend) continue;
    std::string result = "right (within float32 rounding of the float64 reference)";
    for (const oracle::Finding& finding : report.verdict.findings) {
      std::vector<std::string> paths = finding.also;
      paths.push_back(finding.backend);
      if (std::find(paths.begin(), paths.end(), row.backend) == paths.end()) continue;
      const std::string name(oracle::symptom_name(finding.symptom));
      result = name == symptom ? "**shows the bug** (" + name + ")" : "other finding: " + name;
    }
    if (row.outcome == oracle::Outcome::Unavailable) result = "not run: " + row.message;
    const bool gradients =
        std::any_of(report.results.begin(), report.results.end(), [&](const auto& r) {
          return r.backend == row.backend && !r.calls.empty() && !r.calls[0].gradients.empty();
        });
    if (symptom == "wrong-gradient" && !gradients && row.outcome == oracle::Outcome::Ok) {
      result = "outputs right; forward only, no gradients to compare";
    }
    table += fmt::format("| {} | `{}` | {} |\n", path_label(row.backend), row.backend, result);
  }
  return table;
}

int run_issue(const IssueArgs& args) {
  const fs::path bucket_dir(args.bucket_dir);
  const BucketFile bucket = read_bucket_file(bucket_dir / "bucket.json");
  if (bucket.cases.empty()) throw Error((bucket_dir / "bucket.json").string() + ": no stored case");
  const std::optional<fs::path> reduced = find_reduced_case(bucket_dir, bucket.cases);
  const fs::path case_dir = reduced ? *reduced : bucket_dir / bucket.cases.front();
  const corpus::TestCase test_case = corpus::load_case(case_dir);

  oracle::OracleOptions options;
  std::string paths = args.backends;
  if (paths.empty()) {
    for (const std::string& name : ablation_paths(bucket.backend)) paths += name + ",";
  }
  options.backends = oracle::parse_backend_list(paths);
  options.worker.time_limit_seconds = args.time_limit;
  options.localize = false;
  oracle::Oracle oracle(options);
  std::cerr << "weft issue: running " << case_dir.string() << " on " << options.backends.size()
            << " paths for the ablation\n";
  const oracle::CaseReport report = oracle.check(test_case.graph, test_case.values);

  // The repro, next to the case, then run on the PyTorch the path belongs to.
  oracle::ExportOptions export_options;
  export_options.backend = bucket.backend;
  const std::string script =
      oracle::export_python_script(test_case.graph, test_case.values, export_options);
  const fs::path script_path = case_dir / "issue_repro.py";
  io::write_file_atomically(script_path, script);
  const oracle::TorchTarget python = oracle::python_for_backend(bucket.backend);
  oracle::CommandOutput run{"(not run: " + python.why_not + ")", -1};
  if (python.why_not.empty()) {
    run = oracle::run_command(oracle::shell_quoted(python.where) + " " +
                              oracle::shell_quoted(script_path.string()));
  }

  std::set<std::string> ops;
  for (const ir::Node& node : test_case.graph.nodes())
    ops.insert(std::string(ir::op_name(node.op)));
  std::string op_list;
  for (const std::string& op : ops) op_list += (op_list.empty() ? "" : ", ") + op;
  const std::string label = path_label(bucket.backend);
  std::string text =
      fmt::format("# {} {} for {} ({} node{})\n\n", label, symptom_words(bucket.symptom),
                  bucket.op.empty() ? op_list : bucket.op, test_case.graph.nodes().size(),
                  test_case.graph.nodes().size() == 1 ? "" : "s");
  text += "### 🐛 Describe the bug\n\n";
  text += fmt::format(
      "{} {} for a {}-node model ({}). Found by weft, a differential fuzzer{}. The check follows "
      "the pt2 fuzzing rules: the reference is eager float64, and a "
      "path counts as wrong only where it is farther from that reference than eager float32 "
      "is; random ops fall back to eager's generator, seeds are reset before every run, and "
      "indices of max/min are not compared.\n\n",
      label, symptom_words(bucket.symptom), test_case.graph.nodes().size(), op_list,
      reduced ? ", and minimized by its reducer" : "");
  text += "weft's finding: " + bucket.message + "\n\n";
  text += "Standalone repro (exits 1 when the bug shows):\n\n```python\n" + script + "```\n\n";
  text += fmt::format("Its output ({}, torch {}, exit status {}):\n\n```\n{}```\n\n", python.where,
                      python.version.empty() ? "?" : python.version, run.status, run.output);
  text += "Ablation: the same model on each path, judged against the float64 reference.\n\n";
  text += ablation_table(report, bucket.symptom) + "\n";
  text += "### Versions\n\n";
  for (const oracle::TorchTarget& target : oracle::torch_targets()) {
    if (!target.version.empty()) text += fmt::format("- {}: {}\n", target.what, target.version);
  }
  text += fmt::format("- found with weft {} (bucket `{}`)\n\n", kVersion,
                      bucket_dir.filename().string());
  text += "`python -m torch.utils.collect_env` on the reporting machine gives the rest.\n";

  if (args.output.empty()) {
    std::cout << text;
  } else {
    io::write_file_atomically(args.output, text);
    std::cerr << "weft issue: wrote " << args.output << "\n";
  }
  return 0;
}

}  // namespace

void add_issue_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "issue",
      "Print a GitHub issue (Markdown) for a campaign's bug bucket: repro, output, ablation");
  auto args = std::make_shared<IssueArgs>();
  cmd->add_option("bucket", args->bucket_dir, "A campaign's bugs/<bucket> directory")->required();
  cmd->add_option("-o,--output", args->output, "Write the Markdown here instead of stdout");
  cmd->add_option("--backends", args->backends,
                  "Paths of the ablation (default: eager and the compiler stages that exist here)");
  cmd->add_option("--time-limit", args->time_limit, "Seconds per path run")
      ->check(CLI::PositiveNumber);
  cmd->callback([args] { run_command("issue", [&] { return run_issue(*args); }); });
}

}  // namespace weft::cli
