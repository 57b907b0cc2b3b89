// The Python paths: the emitted PyTorch program (weft/oracle/export.h's Model class) run by a
// Python interpreter with torch, in a persistent subprocess of the worker
// (src/python/runner.py), so that the interpreter and torch are imported once, not per case.
// "python" runs it eagerly on $WEFT_PYTHON, else Debian's /usr/bin/python3 (PyTorch 1.13,
// TOOLCHAIN.md). The "torch2-*" paths run on the project's PyTorch 2.x ($WEFT_TORCH2_PYTHON,
// else .venv/bin/python, installed by scripts/setup-torch2): eager, torch.compile (Inductor,
// dynamic=True, aot_eager), torch.export's ExportedProgram, and AOTInductor's package, on the
// CPU or (the "-cuda" paths) a CUDA device; and the AOTInductor packager of aoti.cpp's C++ path.
// The module is prepared (compiled, exported) once per case, then called with fresh values.
// Each runner has its own Inductor cache under its own directory: repeated shapes are cheap,
// and a crashed runner's cache dies with it instead of poisoning the next one.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/backends.h"
#include "weft/error.h"
#include "weft/io/atomic_file.h"
#include "weft/io/safetensors.h"
#include "weft/io/tensor_bytes.h"
#include "weft/ir/leaf_values.h"
#include "weft/oracle/command.h"
#include "weft/oracle/export.h"
#include "weft_python_runner.h"

extern char** environ;

namespace weft::oracle {

namespace {

struct Interpreter {
  std::string path;
  std::string unavailable;  // why it cannot run any Python path; empty when it can
  std::string version;      // its torch.__version__
  bool compile = false;     // torch.compile, torch.export (PyTorch >= 2)
  bool aoti = false;        // torch._inductor.aoti_compile_and_package (PyTorch >= 2.6)
  bool cuda = false;        // torch.cuda.is_available()
};

// Runs `python -c code` and returns its stdout's last line, or throws with what went wrong.
std::string probe(const std::string& python, const std::string& code) {
  CommandOutput run = run_command(shell_quoted(python) + " -c " + shell_quoted(code));
  std::string& output = run.output;
  while (!output.empty() && output.back() == '\n') output.pop_back();
  const auto last = output.rfind('\n');
  const std::string tail = last == std::string::npos ? output : output.substr(last + 1);
  if (run.status != 0) throw Error(python + ": " + (tail.empty() ? "cannot run it" : tail));
  return tail;
}

// Which interpreter runs the Python paths of Debian's PyTorch 1.13 (`torch2` false) or of 2.x:
// $WEFT_PYTHON / $WEFT_TORCH2_PYTHON, else /usr/bin/python3 / .venv's. `marked` says why
// scripts/setup-torch2 could not install .venv's (its torch2-unavailable file); empty otherwise.
struct ChosenInterpreter {
  std::string path;
  std::string advice;  // what to do when it has no torch
  std::string marked;
};

ChosenInterpreter chosen_interpreter(bool torch2) {
  const char* variable = torch2 ? "WEFT_TORCH2_PYTHON" : "WEFT_PYTHON";
  const char* configured = std::getenv(variable);
  if (configured != nullptr && *configured != '\0') {
    return {configured, std::string(variable) + " names it", ""};
  }
  if (!torch2) return {"/usr/bin/python3", "set WEFT_PYTHON to an interpreter that has them", ""};
  ChosenInterpreter chosen{WEFT_SOURCE_DIR "/.venv/bin/python", "run scripts/setup-torch2", ""};
  const std::string why = WEFT_SOURCE_DIR "/.venv/torch2-unavailable";
  if (std::filesystem::exists(why)) {
    chosen.marked = io::read_file(why);
    while (!chosen.marked.empty() && chosen.marked.back() == '\n') chosen.marked.pop_back();
    chosen.marked = "scripts/setup-torch2 could not install PyTorch 2.x: " + chosen.marked;
  }
  return chosen;
}

// The interpreter's torch: importing it takes a second or two.
Interpreter probe_interpreter(const ChosenInterpreter& chosen) {
  Interpreter found;
  const std::string& path = chosen.path;
  const std::string& advice = chosen.advice;
  found.path = path;
  if (!chosen.marked.empty()) {
    found.unavailable = chosen.marked;
    return found;
  }
  if (::access(path.c_str(), X_OK) != 0) {
    found.unavailable = path + " does not exist (" + advice + ")";
    return found;
  }
  try {
    // One import of torch (2-4 s); AOTInductor's packaging is known by version, since
    // importing torch._inductor to look would double the cost.
    const std::string answer =
        probe(path,
              "import torch, numpy; print(torch.__version__, hasattr(torch, \"compile\") and "
              "hasattr(torch, \"export\"), torch.cuda.is_available())");
    std::istringstream words(answer);
    std::string compile, cuda;
    words >> found.version >> compile >> cuda;
    found.compile = compile == "True";
    found.cuda = cuda == "True";
    int major = 0, minor = 0;
    std::sscanf(found.version.c_str(), "%d.%d", &major, &minor);
    found.aoti = found.compile && (major > 2 || (major == 2 && minor >= 6));
  } catch (const Error& e) {
    found.unavailable =
        std::string("no usable Python with torch and numpy: ") + e.what() + " (" + advice + ")";
  }
  return found;
}

// Probed once per process: importing torch takes seconds.
const Interpreter& interpreter(bool torch2) {
  if (torch2) {
    static const Interpreter current = probe_interpreter(chosen_interpreter(true));
    return current;
  }
  static const Interpreter debian = probe_interpreter(chosen_interpreter(false));
  return debian;
}

struct PythonPath {
  const char* name;
  const char* mode;  // runner.py's mode
  bool torch2;       // runs on the PyTorch 2.x interpreter
  bool gradients;
  bool cuda;  // on the first CUDA device
};

constexpr PythonPath kPythonPaths[] = {
    {"python", "eager", false, true, false},
    {"torch2-eager", "eager", true, true, false},
    {"torch2-inductor", "inductor", true, true, false},
    {"torch2-dynamic", "inductor-dynamic", true, true, false},
    {"torch2-aot-eager", "aot_eager", true, true, false},
    {"torch2-export", "export", true, true, false},
    {"torch2-aoti-python", "aoti-python", true, false, false},
    {"torch2-eager-cuda", "eager", true, true, true},
    {"torch2-inductor-cuda", "inductor", true, true, true},
};
// Not a path of its own: the packaging half of aoti.cpp's C++ paths.
constexpr PythonPath kAotiPackage{"torch2-aoti-package", "aoti-package", true, false, false};
constexpr PythonPath kAotiPackageCuda{"torch2-aoti-package", "aoti-package", true, false, true};

std::string unavailable_reason_of(const PythonPath& path) {
  const Interpreter& python = interpreter(path.torch2);
  if (!python.unavailable.empty()) return python.unavailable;
  const std::string mode = path.mode;
  if (mode != "eager" && !python.compile) {
    return python.path + " has torch " + python.version +
           ", which has no torch.compile / torch.export (they need PyTorch >= 2.0)";
  }
  if (path.cuda && !python.cuda) {
    return python.path + " has torch " + python.version + ", which finds no CUDA device here";
  }
  if ((mode == "aoti-python" || mode == "aoti-package") && !python.aoti) {
    return python.path + " has torch " + python.version +
           ", which has no torch._inductor.aoti_compile_and_package (PyTorch >= 2.6)";
  }
  return {};
}

// Runner directories are named after the worker process; a worker killed by its pool (or a
// crash) never runs the destructor that removes its directory and Inductor cache, so each new
// runner removes the directories of processes that no longer exist.
constexpr const char* kDirectoryPrefix = "/tmp/weft-python-";

void remove_directories_of_dead_processes() {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/tmp", error)) {
    const std::string name = entry.path().filename().string();
    const std::string prefix = std::filesystem::path(kDirectoryPrefix).filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    // Without a pid (an older name: weft-python-XXXXXX) or with a dead one: nobody uses it.
    const bool named_by_pid = pid > 0 && end != nullptr && *end == '-';
    if (!named_by_pid || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
      std::filesystem::remove_all(entry.path(), error);
    }
  }
}

}  // namespace

void remove_runner_directories_of(pid_t worker) {
  const std::string prefix =
      std::filesystem::path(kDirectoryPrefix).filename().string() + std::to_string(worker) + "-";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/tmp", error)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) {
      std::filesystem::remove_all(entry.path(), error);
    }
  }
}

namespace {

class PythonBackend final : public Backend {
 public:
  explicit PythonBackend(const PythonPath& path) : path_(path) {}
  ~PythonBackend() override {
    stop();
    if (!directory_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(directory_, ignored);
    }
  }

  std::string name() const override { return path_.name; }
  std::string unavailable_reason() const override { return unavailable_reason_of(path_); }
  bool has_gradients() const override { return path_.gradients; }
  double compile_seconds() const override { return compile_seconds_; }

  void prepare(const ir::Graph& graph, const ir::TensorMap& values) override {
    graph_ = graph;
    compile_seconds_ = 0;
    cotangents_written_ = false;
    if (pid_ < 0) start();
    nlohmann::json request;
    request["op"] = "prepare";
    request["source"] = python_model_source(graph);
    request["mode"] = path_.mode;
    request["device"] = path_.cuda ? "cuda" : "cpu";
    request["values"] = write_tensors("values.safetensors", "value/", values);
    request["package"] = package_path();
    request["inputs"] = nlohmann::json::array();
    request["parameters"] = nlohmann::json::array();
    request["layouts"] = nlohmann::json::object();
    for (ir::ValueId id : graph_.inputs()) {
      const ir::Value& leaf = graph_.value(id);
      request["inputs"].push_back(leaf.name);
      if (leaf.has_layout()) {
        request["layouts"][leaf.name] = {{"strides", leaf.strides},
                                         {"storage_offset", leaf.storage_offset}};
      }
    }
    for (ir::ValueId id : graph_.parameters()) {
      request["parameters"].push_back(graph_.value(id).name);
    }
    // Dynamic shapes: what an export marks dynamic, and which later sets its program takes.
    request["shape_sets"] = nlohmann::json::object();
    for (ir::ValueId id : graph_.inputs()) {
      const ir::Value& leaf = graph_.value(id);
      if (!leaf.shape_sets.empty()) request["shape_sets"][leaf.name] = leaf.shape_sets;
    }
    rebinds_ = 0;
    runs_shape_sets_.clear();
    const nlohmann::json answer = answer_of(request);
    if (const auto it = answer.find("runs_shape_sets"); it != answer.end() && it->is_array()) {
      for (const nlohmann::json& runs : *it) runs_shape_sets_.push_back(runs.is_boolean() && runs);
    }
  }

  // Whether later shape set `set` can be called: always for the modes that are not exported;
  // for an export, when its program kept the dims that change dynamic (runner.py).
  bool runs_shape_set(std::size_t set) const {
    const std::string_view mode = path_.mode;
    if (mode != "export" && mode != "aoti-python" && mode != "aoti-package") return true;
    return set >= 1 && set <= runs_shape_sets_.size() && runs_shape_sets_[set - 1];
  }

  // Dynamic shapes: the runner's module takes the new inputs (torch.compile recompiles or runs
  // its dynamic graph; an export runs its program, where it kept the changing dims dynamic).
  bool rebind(const ir::Graph& graph, const ir::TensorMap& values) override {
    if (!runs_shape_set(++rebinds_) || path_.mode == std::string_view("aoti-package")) {
      return false;
    }
    graph_ = graph;
    cotangents_written_ = false;
    nlohmann::json request;
    request["op"] = "rebind";
    ir::TensorMap inputs;
    request["layouts"] = nlohmann::json::object();
    for (ir::ValueId id : graph_.inputs()) {
      const ir::Value& leaf = graph_.value(id);
      inputs[leaf.name] = ir::leaf_value(graph_, values, id);
      if (leaf.has_layout()) {
        request["layouts"][leaf.name] = {{"strides", leaf.strides},
                                         {"storage_offset", leaf.storage_offset}};
      }
    }
    request["values"] = write_tensors("inputs.safetensors", "value/", inputs);
    answer_of(request);
    return true;
  }

  // Where prepare asks the runner to write an AOTInductor package.
  std::string package_path() const { return directory_ + "/model.pt2"; }

  CallResult call(const std::vector<Tensor>& cotangents) override {
    const std::string out_path = directory_ + "/out.safetensors";
    std::filesystem::remove(out_path);
    nlohmann::json request;
    request["op"] = "call";
    // The runner keeps the values of prepare and the first call's cotangents (run_backend
    // gives every call the same ones), and gives each call fresh copies.
    if (!cotangents.empty() && !cotangents_written_) {
      ir::TensorMap named;
      for (std::size_t i = 0; i < cotangents.size(); ++i) named[std::to_string(i)] = cotangents[i];
      write_tensors("cotangents.safetensors", "cotangent/", named);
      cotangents_written_ = true;
    }
    request["cotangents"] = directory_ + "/cotangents.safetensors";
    request["out"] = out_path;
    request["gradients"] = !cotangents.empty();
    answer_of(request);

    const io::SafetensorsFile result = io::read_safetensors(out_path);
    CallResult call;
    for (std::size_t i = 0; i < graph_.outputs().size(); ++i) {
      const io::TensorBytes* bytes = result.find("output/" + std::to_string(i));
      if (bytes == nullptr) throw Error("python: output " + std::to_string(i) + " is missing");
      call.outputs.push_back(io::from_bytes(*bytes));
    }
    for (const auto& [name, bytes] : result.tensors) {
      if (name.rfind("grad/", 0) == 0) call.gradients[name.substr(5)] = io::from_bytes(bytes);
    }
    return call;
  }

 private:
  // `tensors` as `prefix` + name in one file of the runner's directory; returns its path.
  std::string write_tensors(const char* file_name, const char* prefix,
                            const ir::TensorMap& tensors) {
    io::SafetensorsFile file;
    for (const auto& [name, value] : tensors) {
      file.tensors.emplace_back(prefix + name, io::to_bytes(value));
    }
    const std::string path = directory_ + "/" + file_name;
    io::write_safetensors(path, file);
    return path;
  }

  nlohmann::json answer_of(const nlohmann::json& request) {
    nlohmann::json answer = exchange(request.dump());
    compile_seconds_ += answer.value("compile_seconds", 0.0);
    if (!answer.value("ok", false)) {
      throw Error("python: " + answer.value("error", std::string("?")));
    }
    return answer;
  }

  void start() {
    if (directory_.empty()) {
      remove_directories_of_dead_processes();
      std::string path = std::string(kDirectoryPrefix) + std::to_string(::getpid()) + "-XXXXXX";
      if (::mkdtemp(path.data()) == nullptr)
        throw Error("python: cannot create a temporary directory");
      directory_ = path;
    }
    int to_child[2];
    int from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0) {
      throw Error("python: pipe failed");
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    const std::string python = interpreter(path_.torch2).path;
    // The runner's own compiler caches, inside its directory.
    std::vector<std::string> environment;
    for (char** variable = environ; *variable != nullptr; ++variable) {
      const std::string_view text(*variable);
      if (text.rfind("TORCHINDUCTOR_CACHE_DIR=", 0) != 0 &&
          text.rfind("TRITON_CACHE_DIR=", 0) != 0 && text.rfind("TMPDIR=", 0) != 0)
        environment.emplace_back(text);
    }
    environment.push_back("TORCHINDUCTOR_CACHE_DIR=" + directory_ + "/inductor");
    environment.push_back("TRITON_CACHE_DIR=" + directory_ + "/triton");
    // Inductor keeps its precompiled headers under the temporary directory whatever its cache
    // directory is: give each runner its own, so a crash cannot leave one half-written.
    std::filesystem::create_directories(directory_ + "/tmp");
    environment.push_back("TMPDIR=" + directory_ + "/tmp");
    std::vector<char*> envp;
    for (std::string& variable : environment) envp.push_back(variable.data());
    envp.push_back(nullptr);
    std::string dash_c = "-c";
    std::string code =
        std::string(kLaidOutPython) + "\n\n" + kDynamicExportPython + "\n\n" + kPythonRunner;
    std::array<char*, 4> argv{const_cast<char*>(python.c_str()), dash_c.data(), code.data(),
                              nullptr};
    pid_t pid = -1;
    const int failed =
        ::posix_spawn(&pid, python.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(to_child[0]);
    ::close(from_child[1]);
    if (failed != 0) {
      ::close(to_child[1]);
      ::close(from_child[0]);
      throw Error("python: cannot start " + python + ": " + std::strerror(failed));
    }
    pid_ = pid;
    to_ = to_child[1];
    from_ = ::fdopen(from_child[0], "r");
    const nlohmann::json ready = read_answer();
    if (!ready.contains("ready")) throw Error("python: the runner did not start");
  }

  void stop() {
    if (to_ >= 0) ::close(to_);
    if (from_ != nullptr) std::fclose(from_);
    if (pid_ > 0) {
      int status = 0;
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
    to_ = -1;
    from_ = nullptr;
    pid_ = -1;
  }

  nlohmann::json read_answer() {
    std::string line;
    for (int c = std::fgetc(from_); c != EOF && c != '\n'; c = std::fgetc(from_)) {
      line += static_cast<char>(c);
    }
    if (line.empty()) {
      int status = 0;
      std::string how = "closed its output";
      bool signaled = false;
      if (::waitpid(pid_, &status, 0) == pid_) {
        signaled = WIFSIGNALED(status);
        if (signaled) {
          const char* name = sigabbrev_np(WTERMSIG(status));
          how = "was killed by signal " + (name != nullptr ? "SIG" + std::string(name) : "?") +
                " (" + std::to_string(WTERMSIG(status)) + ")";
        } else {
          how = "exited with status " + std::to_string(WEXITSTATUS(status));
        }
      }
      pid_ = -1;
      stop();
      const std::string message =
          "python: the interpreter " + how + " (its stderr is the worker's)";
      if (signaled) throw ProcessCrashed(message);
      throw Error(message);
    }
    return nlohmann::json::parse(line);
  }

  nlohmann::json exchange(const std::string& request) {
    const std::string line = request + "\n";
    std::size_t written = 0;
    while (written < line.size()) {
      const ssize_t n = ::write(to_, line.data() + written, line.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      written += static_cast<std::size_t>(n);
    }
    return read_answer();
  }

  PythonPath path_;
  double compile_seconds_ = 0;
  bool cotangents_written_ = false;
  std::size_t rebinds_ = 0;            // later shape sets called since prepare()
  std::vector<bool> runs_shape_sets_;  // per later set, from an export's prepare
  ir::Graph graph_;
  std::string directory_;
  pid_t pid_ = -1;
  int to_ = -1;
  FILE* from_ = nullptr;
};

}  // namespace

namespace {

class PythonAotiPackager final : public AotiPackager {
 public:
  explicit PythonAotiPackager(bool cuda) : runner_(cuda ? kAotiPackageCuda : kAotiPackage) {}
  std::string unavailable_reason() const override { return runner_.unavailable_reason(); }
  std::string package(const ir::Graph& graph, const ir::TensorMap& values) override {
    runner_.prepare(graph, values);
    return runner_.package_path();
  }
  double compile_seconds() const override { return runner_.compile_seconds(); }
  bool runs_shape_set(std::size_t set) const override { return runner_.runs_shape_set(set); }

 private:
  PythonBackend runner_;
};

}  // namespace

std::unique_ptr<Backend> make_python_backend(std::string_view name) {
  for (const PythonPath& path : kPythonPaths) {
    if (name == path.name) return std::make_unique<PythonBackend>(path);
  }
  return nullptr;
}

InterpreterFacts python_interpreter_facts(bool torch2) {
  InterpreterFacts facts;
  const ChosenInterpreter chosen = chosen_interpreter(torch2);
  facts.path = chosen.path;
  if (!chosen.marked.empty()) {
    facts.why_not = chosen.marked;
    return facts;
  }
  if (::access(facts.path.c_str(), X_OK) != 0) {
    facts.why_not = facts.path + " does not exist";
    return facts;
  }
  try {
    facts.version =
        probe(facts.path, "import importlib.metadata as m; print(m.version(\"torch\"))");
  } catch (const Error& e) {
    facts.why_not = std::string("no torch package: ") + e.what();
  }
  return facts;
}

bool torch2_interpreter_present() {
  const ChosenInterpreter chosen = chosen_interpreter(true);
  return chosen.marked.empty() && ::access(chosen.path.c_str(), X_OK) == 0;
}

std::unique_ptr<AotiPackager> make_aoti_packager(bool cuda) {
  return std::make_unique<PythonAotiPackager>(cuda);
}

}  // namespace weft::oracle
