// "python": the emitted PyTorch program (weft/oracle/export.h's Model class) run by a Python
// interpreter with torch, in a persistent subprocess of the worker (src/python/runner.py),
// so that the interpreter and torch are imported once, not per case. "python-compile": the
// same with torch.compile, which needs PyTorch 2; unavailable when that Python's torch lacks it.
// The interpreter: $WEFT_PYTHON, else Debian's /usr/bin/python3 (TOOLCHAIN.md).
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
#include <string>

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

std::string interpreter() {
  const char* configured = std::getenv("WEFT_PYTHON");
  return configured != nullptr && *configured != '\0' ? configured : "/usr/bin/python3";
}

// Runs `python -c code` and returns its stdout's first line, or throws with what went wrong.
std::string probe(const std::string& code) {
  const std::string command = "'" + interpreter() + "' -c '" + code + "' 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw Error("cannot run " + interpreter());
  std::string output;
  std::array<char, 512> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) output += buffer.data();
  const int status = ::pclose(pipe);
  while (!output.empty() && output.back() == '\n') output.pop_back();
  if (status != 0) {
    const auto last = output.rfind('\n');
    throw Error(interpreter() + ": " +
                (last == std::string::npos ? output : output.substr(last + 1)));
  }
  return output;
}

// Asked once per process: importing torch takes a second or two.
const std::string& python_unavailable_reason(bool compile) {
  static std::once_flag once;
  static std::string plain;
  static std::string compiled;
  std::call_once(once, [] {
    try {
      const std::string version =
          probe("import torch, numpy; print(torch.__version__, hasattr(torch, \"compile\"))");
      if (version.find("True") == std::string::npos) {
        compiled = interpreter() + " has torch " + version.substr(0, version.find(' ')) +
                   ", which has no torch.compile (it needs PyTorch >= 2.0)";
      }
    } catch (const Error& e) {
      plain = std::string("no usable Python with torch and numpy: ") + e.what() +
              " (set WEFT_PYTHON to an interpreter that has them)";
      compiled = plain;
    }
  });
  return compile ? compiled : plain;
}

class PythonBackend final : public Backend {
 public:
  explicit PythonBackend(bool compile) : compile_(compile) {}
  ~PythonBackend() override {
    stop();
    if (!directory_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(directory_, ignored);
    }
  }

  std::string name() const override { return compile_ ? "python-compile" : "python"; }
  std::string unavailable_reason() const override { return python_unavailable_reason(compile_); }

  void prepare(const ir::Graph& graph, const ir::TensorMap& values) override {
    graph_ = graph;
    values_ = values;
    source_ = python_model_source(graph);
    if (compile_) source_ += "\n_Eager = Model\nModel = lambda p: torch.compile(_Eager(p))\n";
    if (pid_ < 0) start();
  }

  CallResult call(const std::vector<Tensor>& cotangents) override {
    io::SafetensorsFile file;
    for (const auto& [name, value] : values_)
      file.tensors.emplace_back("value/" + name, io::to_bytes(value));
    for (std::size_t i = 0; i < cotangents.size(); ++i) {
      file.tensors.emplace_back("cotangent/" + std::to_string(i), io::to_bytes(cotangents[i]));
    }
    const std::string values_path = directory_ + "/values.safetensors";
    const std::string out_path = directory_ + "/out.safetensors";
    io::write_safetensors(values_path, file);
    std::filesystem::remove(out_path);

    nlohmann::json request;
    request["source"] = source_;
    request["values"] = values_path;
    request["out"] = out_path;
    request["gradients"] = !cotangents.empty();
    request["inputs"] = nlohmann::json::array();
    request["parameters"] = nlohmann::json::array();
    for (ir::ValueId id : graph_.inputs()) request["inputs"].push_back(graph_.value(id).name);
    for (ir::ValueId id : graph_.parameters()) {
      request["parameters"].push_back(graph_.value(id).name);
    }
    const nlohmann::json answer = exchange(request.dump());
    if (!answer.value("ok", false))
      throw Error("python: " + answer.value("error", std::string("?")));

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
    const std::string python = interpreter();
    std::string dash_c = "-c";
    std::string code = kPythonRunner;
    std::array<char*, 4> argv{const_cast<char*>(python.c_str()), dash_c.data(), code.data(),
                              nullptr};
    pid_t pid = -1;
    const int failed = ::posix_spawn(&pid, python.c_str(), &actions, nullptr, argv.data(), environ);
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

  bool compile_;
  ir::Graph graph_;
  ir::TensorMap values_;
  std::string source_;
  std::string directory_;
  pid_t pid_ = -1;
  int to_ = -1;
  FILE* from_ = nullptr;
};

}  // namespace

std::unique_ptr<Backend> make_python_backend(bool compile) {
  return std::make_unique<PythonBackend>(compile);
}

}  // namespace weft::oracle
