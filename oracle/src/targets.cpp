// `weft --version`'s list of every PyTorch this weft can test (weft/oracle/torch_info.h): its
// own LibTorch, the sibling build of the other LibTorch, and the Python paths' interpreters.
#include <string>
#include <vector>

#include "backends/backends.h"
#include "weft/oracle/command.h"
#include "weft/oracle/torch_info.h"
#include "weft/oracle/worker.h"

namespace weft::oracle {

namespace {

// The names of the paths of LibTorch `libtorch`, or of the Python paths of the PyTorch that
// `prefix` starts ("python" or "torch2-").
std::string path_names(int libtorch, const std::string& prefix) {
  std::string names;
  for (const std::string& name : backend_names()) {
    const PathTraits& traits = path_traits(name);
    const bool matches = libtorch != 0 ? traits.libtorch == libtorch
                                       : traits.libtorch == 0 && name.rfind(prefix, 0) == 0;
    if (matches) names += (names.empty() ? "" : ", ") + name;
  }
  return names;
}

// "2.15.0": what the sibling says of its LibTorch (`weft backends --libtorch-version`, which
// asks no sibling in turn: `weft --version` would ask this weft again, and so on).
std::string sibling_version(const std::string& binary, std::string& why_not) {
  CommandOutput run = run_command(shell_quoted(binary) + " backends --libtorch-version");
  std::string& output = run.output;
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  if (run.status != 0 || output.empty() || output.find('\n') != std::string::npos) {
    why_not = binary + " backends --libtorch-version failed: " + output;
    return {};
  }
  return output;
}

TorchTarget python_target(bool torch2) {
  const InterpreterFacts facts = python_interpreter_facts(torch2);
  return {torch2 ? "Python, PyTorch 2.x" : "Python, Debian's PyTorch", facts.path, facts.version,
          facts.why_not, path_names(0, torch2 ? "torch2-" : "python")};
}

}  // namespace

std::vector<TorchTarget> torch_targets() {
  std::vector<TorchTarget> targets;
  targets.push_back(
      {"LibTorch (this build)", "", torch_version(), "", path_names(torch_major(), "")});
  for (int libtorch : {1, 2}) {
    if (libtorch == torch_major()) continue;
    const SiblingWorker sibling = sibling_worker(libtorch);
    TorchTarget target{"LibTorch " + std::to_string(libtorch) + ".x (sibling build)", "", "",
                       sibling.unavailable, path_names(libtorch, "")};
    if (!sibling.command.empty()) {
      target.where = sibling.command[0];
      target.version = sibling_version(target.where, target.why_not);
    }
    targets.push_back(std::move(target));
  }
  for (bool torch2 : {false, true}) targets.push_back(python_target(torch2));
  return targets;
}

TorchTarget python_for_backend(const std::string& backend) {
  return python_target(backend.rfind("torch2-", 0) == 0);
}

}  // namespace weft::oracle
