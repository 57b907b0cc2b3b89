// The Python paths: the emitted PyTorch program (weft/oracle/export.h's Model class) run by a
// Python interpreter with torch, in a persistent subprocess of the worker
// (src/python/runner.py), so that the interpreter and torch are imported once, not per case.
// "python" runs it eagerly on $WEFT_PYTHON, else Debian's /usr/bin/python3 (PyTorch 1.13,
// TOOLCHAIN.md). The "torch2-*" paths run on the project's PyTorch 2.x ($WEFT_TORCH2_PYTHON,
// else .venv/bin/python, installed by scripts/setup-torch2): eager, torch.compile (Inductor,
// dynamic=True, aot_eager), torch.export's ExportedProgram, and AOTInductor's package.
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
#include "weft/io/safetensors.h"
#include "weft/io/tensor_bytes.h"
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
};

// Runs `python -c code` and returns its stdout's last line, or throws with what went wrong.
std::string probe(const std::string& python, const std::string& code) {
  const std::string command = "'" + python + "' -c '" + code + "' 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw Error("cannot run " + python);
  std::string output;
  std::array<char, 512> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) output += buffer.data();
  const int status = ::pclose(pipe);
  while (!output.empty() && output.back() == '\n') output.pop_back();
  const auto last = output.rfind('\n');
  const std::string tail = last == std::string::npos ? output : output.substr(last + 1);
  if (status != 0) throw Error(python + ": " + tail);
  return tail;
}

std::string read_text_file(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) return {};
  std::string text;
  std::array<char, 512> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), file) != nullptr) text += buffer.data();
  std::fclose(file);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// Asked once per process and interpreter: importing torch takes a second or two.
Interpreter probe_interpreter(const std::string& path, const std::string& advice) {
  Interpreter found;
  found.path = path;
  if (::access(path.c_str(), X_OK) != 0) {
    found.unavailable = path + " does not exist (" + advice + ")";
    return found;
  }
  try {
    const std::string answer =
        probe(path,
              "import torch, numpy; import torch._inductor as i; print(torch.__version__, "
              "hasattr(torch, \"compile\") and hasattr(torch, \"export\"), "
              "hasattr(i, \"aoti_compile_and_package\"))");
    std::istringstream words(answer);
    std::string compile, aoti;
    words >> found.version >> compile >> aoti;
    found.compile = compile == "True";
    found.aoti = aoti == "True";
  } catch (const Error& e) {
    // PyTorch 1.13 has no torch._inductor: try the plain import.
    try {
      found.version = probe(path, "import torch, numpy; print(torch.__version__)");
    } catch (const Error& again) {
      found.unavailable = std::string("no usable Python with torch and numpy: ") + again.what() +
                          " (" + advice + ")";
    }
  }
  return found;
}

const Interpreter& debian_python() {
  static const Interpreter found = [] {
    const char* configured = std::getenv("WEFT_PYTHON");
    return probe_interpreter(
        configured != nullptr && *configured != '\0' ? configured : "/usr/bin/python3",
        "set WEFT_PYTHON to an interpreter that has them");
  }();
  return found;
}

const Interpreter& torch2_python() {
  static const Interpreter found = [] {
    const char* configured = std::getenv("WEFT_TORCH2_PYTHON");
    if (configured != nullptr && *configured != '\0') {
      return probe_interpreter(configured, "WEFT_TORCH2_PYTHON names it");
    }
    const std::string venv = WEFT_SOURCE_DIR "/.venv";
    Interpreter found = probe_interpreter(venv + "/bin/python", "run scripts/setup-torch2");
    if (const std::string why = read_text_file(venv + "/torch2-unavailable"); !why.empty()) {
      found.unavailable = "scripts/setup-torch2 could not install PyTorch 2.x: " + why;
    }
    return found;
  }();
  return found;
}

struct PythonPath {
  const char* name;
  const char* mode;  // runner.py's mode
  bool torch2;       // runs on the PyTorch 2.x interpreter
  bool gradients;
};

constexpr PythonPath kPythonPaths[] = {
    {"python", "eager", false, true},
    {"torch2-eager", "eager", true, true},
    {"torch2-inductor", "inductor", true, true},
    {"torch2-dynamic", "inductor-dynamic", true, true},
    {"torch2-aot-eager", "aot_eager", true, true},
    {"torch2-export", "export", true, true},
    {"torch2-aoti-python", "aoti-python", true, false},
};

std::string unavailable_reason_of(const PythonPath& path) {
  const Interpreter& python = path.torch2 ? torch2_python() : debian_python();
  if (!python.unavailable.empty()) return python.unavailable;
  const std::string mode = path.mode;
  if (mode != "eager" && !python.compile) {
    return python.path + " has torch " + python.version +
           ", which has no torch.compile / torch.export (they need PyTorch >= 2.0)";
  }
  if (mode == "aoti-python" && !python.aoti) {
    return python.path + " has torch " + python.version +
           ", which has no torch._inductor.aoti_compile_and_package (PyTorch >= 2.6)";
  }
  return {};
}

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
    values_ = values;
    compile_seconds_ = 0;
    if (pid_ < 0) start();
    nlohmann::json request;
    request["op"] = "prepare";
    request["source"] = python_model_source(graph);
    request["mode"] = path_.mode;
    request["values"] = write_values({});
    request["package"] = directory_ + "/model.pt2";
    request["inputs"] = nlohmann::json::array();
    request["parameters"] = nlohmann::json::array();
    for (ir::ValueId id : graph_.inputs()) request["inputs"].push_back(graph_.value(id).name);
    for (ir::ValueId id : graph_.parameters()) {
      request["parameters"].push_back(graph_.value(id).name);
    }
    answer_of(request);
  }

  CallResult call(const std::vector<Tensor>& cotangents) override {
    const std::string out_path = directory_ + "/out.safetensors";
    std::filesystem::remove(out_path);
    nlohmann::json request;
    request["op"] = "call";
    request["values"] = write_values(cotangents);
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
  // The case's values (and cotangents) in one file for the runner; fresh copies each call.
  std::string write_values(const std::vector<Tensor>& cotangents) {
    io::SafetensorsFile file;
    for (const auto& [name, value] : values_)
      file.tensors.emplace_back("value/" + name, io::to_bytes(value));
    for (std::size_t i = 0; i < cotangents.size(); ++i) {
      file.tensors.emplace_back("cotangent/" + std::to_string(i), io::to_bytes(cotangents[i]));
    }
    const std::string path = directory_ + "/values.safetensors";
    io::write_safetensors(path, file);
    return path;
  }

  void answer_of(const nlohmann::json& request) {
    const nlohmann::json answer = exchange(request.dump());
    compile_seconds_ += answer.value("compile_seconds", 0.0);
    if (!answer.value("ok", false)) {
      throw Error("python: " + answer.value("error", std::string("?")));
    }
  }

  void start() {
    if (directory_.empty()) {
      std::string path = "/tmp/weft-python-XXXXXX";
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
    const std::string python = (path_.torch2 ? torch2_python() : debian_python()).path;
    // The runner's own compiler caches, inside its directory.
    std::vector<std::string> environment;
    for (char** variable = environ; *variable != nullptr; ++variable) {
      const std::string_view text(*variable);
      if (text.rfind("TORCHINDUCTOR_CACHE_DIR=", 0) != 0 && text.rfind("TRITON_CACHE_DIR=", 0) != 0)
        environment.emplace_back(text);
    }
    environment.push_back("TORCHINDUCTOR_CACHE_DIR=" + directory_ + "/inductor");
    environment.push_back("TRITON_CACHE_DIR=" + directory_ + "/triton");
    std::vector<char*> envp;
    for (std::string& variable : environment) envp.push_back(variable.data());
    envp.push_back(nullptr);
    std::string dash_c = "-c";
    std::string code = kPythonRunner;
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
      if (::waitpid(pid_, &status, 0) == pid_) {
        how = WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                  : "exited with status " + std::to_string(WEXITSTATUS(status));
      }
      pid_ = -1;
      stop();
      throw Error("python: the interpreter " + how + " (its stderr is the worker's)");
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
  ir::Graph graph_;
  ir::TensorMap values_;
  std::string directory_;
  pid_t pid_ = -1;
  int to_ = -1;
  FILE* from_ = nullptr;
};

}  // namespace

std::unique_ptr<Backend> make_python_backend(std::string_view name) {
  for (const PythonPath& path : kPythonPaths) {
    if (name == path.name) return std::make_unique<PythonBackend>(path);
  }
  return nullptr;
}

}  // namespace weft::oracle
