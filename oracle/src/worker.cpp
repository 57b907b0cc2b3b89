// Worker processes: the parent's side (start, run, detect crashes and hangs, restart) and the
// worker's loop. Messages are safetensors documents (the case's values, cotangents, outputs
// and gradients as tensors; everything else as metadata strings), each framed by its 8-byte
// little-endian length, over a Unix socket pair.
#include "weft/oracle/worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "backends/backends.h"
#include "weft/error.h"
#include "weft/io/safetensors.h"
#include "weft/io/tensor_bytes.h"
#include "weft/ir/graph_json.h"
#include "weft/oracle/command.h"
#include "weft/oracle/torch_info.h"

namespace weft::oracle {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kMaxMessageBytes = std::uint64_t{1} << 34;  // 16 GiB: a corrupt length
constexpr const char* kProtocol = "weft-worker-3";

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// ---- framing -------------------------------------------------------------------------------

// Blocking write of the whole buffer; false when the other end is gone.
bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == ENOTSOCK) {
      const ssize_t w = ::write(fd, data, size);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      data += w;
      size -= static_cast<std::size_t>(w);
      continue;
    }
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool write_message(int fd, const std::string& payload) {
  char header[8];
  std::uint64_t length = payload.size();
  for (char& byte : header) {
    byte = static_cast<char>(length & 0xff);
    length >>= 8;
  }
  return write_all(fd, header, sizeof header) && write_all(fd, payload.data(), payload.size());
}

enum class ReadStatus { Ok, Closed, TimedOut };

// Reads exactly `size` bytes, waiting until `deadline` (none: forever).
ReadStatus read_exactly(int fd, char* data, std::size_t size,
                        std::optional<Clock::time_point> deadline) {
  while (size > 0) {
    if (deadline) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
      if (left.count() <= 0) return ReadStatus::TimedOut;
      pollfd p{fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) continue;
      if (ready < 0) return ReadStatus::Closed;
    }
    const ssize_t n = ::read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ReadStatus::Closed;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return ReadStatus::Ok;
}

ReadStatus read_message(int fd, std::string& payload, std::optional<Clock::time_point> deadline) {
  unsigned char header[8];
  if (ReadStatus s = read_exactly(fd, reinterpret_cast<char*>(header), 8, deadline);
      s != ReadStatus::Ok) {
    return s;
  }
  std::uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | header[i];
  if (length > kMaxMessageBytes) return ReadStatus::Closed;
  payload.resize(static_cast<std::size_t>(length));
  return read_exactly(fd, payload.data(), payload.size(), deadline);
}

// ---- messages ------------------------------------------------------------------------------

std::string encode_request(const std::vector<std::string>& backends, const ir::Graph& graph,
                           const ir::TensorMap& values, const RunSpec& spec) {
  io::SafetensorsFile file;
  file.metadata["protocol"] = kProtocol;
  std::string names;
  for (const std::string& name : backends) names += (names.empty() ? "" : "\n") + name;
  file.metadata["backends"] = names;
  file.metadata["graph"] = ir::graph_to_json(graph).dump();
  file.metadata["calls"] = std::to_string(spec.calls);
  file.metadata["cotangents"] = std::to_string(spec.cotangents.size());
  for (const auto& [name, value] : values)
    file.tensors.emplace_back("value/" + name, io::to_bytes(value));
  for (std::size_t i = 0; i < spec.cotangents.size(); ++i) {
    file.tensors.emplace_back("cotangent/" + std::to_string(i), io::to_bytes(spec.cotangents[i]));
  }
  file.metadata["shape_sets"] = std::to_string(spec.shape_set_cotangents.size());
  for (std::size_t k = 0; k < spec.shape_set_cotangents.size(); ++k) {
    const std::string prefix = "cotangent@" + std::to_string(k + 1) + "/";
    file.metadata[prefix + "count"] = std::to_string(spec.shape_set_cotangents[k].size());
    for (std::size_t i = 0; i < spec.shape_set_cotangents[k].size(); ++i) {
      file.tensors.emplace_back(prefix + std::to_string(i),
                                io::to_bytes(spec.shape_set_cotangents[k][i]));
    }
  }
  return io::serialize_safetensors(file);
}

struct Request {
  std::vector<std::string> backends;  // run in this order, one answer each
  ir::Graph graph;
  ir::TensorMap values;
  RunSpec spec;
};

const std::string& metadata(const io::SafetensorsFile& file, const std::string& key,
                            const std::string& source) {
  const auto it = file.metadata.find(key);
  if (it == file.metadata.end()) {
    throw FormatError(source, "__metadata__." + key, "missing");
  }
  return it->second;
}

int metadata_int(const io::SafetensorsFile& file, const std::string& key,
                 const std::string& source) {
  const std::string& text = metadata(file, key, source);
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    throw FormatError(source, "__metadata__." + key, "expected an integer, got '" + text + "'");
  }
}

Request decode_request(const std::string& payload) {
  const std::string source = "worker request";
  const io::SafetensorsFile file = io::parse_safetensors(payload, source);
  if (metadata(file, "protocol", source) != kProtocol) {
    throw FormatError(source, "__metadata__.protocol", std::string("expected ") + kProtocol);
  }
  Request request;
  std::stringstream names(metadata(file, "backends", source));
  for (std::string name; std::getline(names, name);) request.backends.push_back(name);
  request.graph = ir::graph_from_json(nlohmann::json::parse(metadata(file, "graph", source)),
                                      source + " graph");
  request.spec.calls = metadata_int(file, "calls", source);
  const int cotangents = metadata_int(file, "cotangents", source);
  for (const auto& [name, bytes] : file.tensors) {
    if (name.rfind("value/", 0) == 0) request.values[name.substr(6)] = io::from_bytes(bytes);
  }
  for (int i = 0; i < cotangents; ++i) {
    const io::TensorBytes* bytes = file.find("cotangent/" + std::to_string(i));
    if (bytes == nullptr) throw FormatError(source, "cotangent/" + std::to_string(i), "missing");
    request.spec.cotangents.push_back(io::from_bytes(*bytes));
  }
  const int shape_sets = metadata_int(file, "shape_sets", source);
  for (int k = 1; k <= shape_sets; ++k) {
    const std::string prefix = "cotangent@" + std::to_string(k) + "/";
    std::vector<Tensor>& set = request.spec.shape_set_cotangents.emplace_back();
    const int count = metadata_int(file, prefix + "count", source);
    for (int i = 0; i < count; ++i) {
      const io::TensorBytes* bytes = file.find(prefix + std::to_string(i));
      if (bytes == nullptr) throw FormatError(source, prefix + std::to_string(i), "missing");
      set.push_back(io::from_bytes(*bytes));
    }
  }
  return request;
}

std::string encode_result(const BackendResult& result) {
  io::SafetensorsFile file;
  file.metadata["protocol"] = kProtocol;
  file.metadata["backend"] = result.backend;
  file.metadata["outcome"] = std::string(outcome_name(result.outcome));
  file.metadata["message"] = result.message;
  file.metadata["phase"] = result.phase;
  file.metadata["seconds"] = std::to_string(result.seconds);
  file.metadata["compile_seconds"] = std::to_string(result.compile_seconds);
  file.metadata["calls"] = std::to_string(result.calls.size());
  for (std::size_t c = 0; c < result.calls.size(); ++c) {
    const std::string prefix = "call/" + std::to_string(c) + "/";
    const CallResult& call = result.calls[c];
    file.metadata[prefix + "outputs"] = std::to_string(call.outputs.size());
    file.metadata[prefix + "shape_set"] = std::to_string(call.shape_set);
    for (std::size_t i = 0; i < call.outputs.size(); ++i) {
      file.tensors.emplace_back(prefix + "output/" + std::to_string(i),
                                io::to_bytes(call.outputs[i]));
    }
    for (const auto& [name, grad] : call.gradients) {
      file.tensors.emplace_back(prefix + "grad/" + name, io::to_bytes(grad));
    }
  }
  return io::serialize_safetensors(file);
}

BackendResult decode_result(const std::string& payload) {
  const std::string source = "worker answer";
  const io::SafetensorsFile file = io::parse_safetensors(payload, source);
  BackendResult result;
  result.backend = metadata(file, "backend", source);
  result.outcome = outcome_from_name(metadata(file, "outcome", source));
  result.message = metadata(file, "message", source);
  result.phase = metadata(file, "phase", source);
  result.seconds = std::atof(metadata(file, "seconds", source).c_str());
  result.compile_seconds = std::atof(metadata(file, "compile_seconds", source).c_str());
  const int calls = metadata_int(file, "calls", source);
  result.calls.resize(static_cast<std::size_t>(calls));
  for (int c = 0; c < calls; ++c) {
    const std::string prefix = "call/" + std::to_string(c) + "/";
    const int outputs = metadata_int(file, prefix + "outputs", source);
    CallResult& call = result.calls[static_cast<std::size_t>(c)];
    call.shape_set = metadata_int(file, prefix + "shape_set", source);
    for (int i = 0; i < outputs; ++i) {
      const io::TensorBytes* bytes = file.find(prefix + "output/" + std::to_string(i));
      if (bytes == nullptr) {
        throw FormatError(source, prefix + "output/" + std::to_string(i), "missing");
      }
      call.outputs.push_back(io::from_bytes(*bytes));
    }
    const std::string grad_prefix = prefix + "grad/";
    for (const auto& [name, bytes] : file.tensors) {
      if (name.rfind(grad_prefix, 0) == 0) {
        call.gradients[name.substr(grad_prefix.size())] = io::from_bytes(bytes);
      }
    }
  }
  return result;
}

std::string fmt_seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return "killed by signal " + std::string(name != nullptr ? "SIG" + std::string(name) : "?") +
           " (" + std::to_string(sig) + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped (wait status " + std::to_string(status) + ")";
}

}  // namespace

// ---- the parent's side ---------------------------------------------------------------------

SiblingWorker sibling_worker(int libtorch) {
  SiblingWorker sibling;
  if (libtorch == torch_major()) return sibling;
  const std::string variable = "WEFT_LIBTORCH" + std::to_string(libtorch) + "_WORKER";
  const char* configured = std::getenv(variable.c_str());
  const std::string preset = libtorch == 1 ? "default" : "torch2";
  const std::string path = configured != nullptr && *configured != '\0'
                               ? std::string(configured)
                               : std::string(WEFT_SOURCE_DIR) + "/build/" + preset + "/cli/weft";
  if (::access(path.c_str(), X_OK) != 0) {
    sibling.unavailable = "no weft built against LibTorch " + std::to_string(libtorch) +
                          ".x: " + path + " does not exist (scripts/build " + preset + ", or set " +
                          variable + ")";
    return sibling;
  }
  sibling.command = {path, "worker"};
  return sibling;
}

std::map<std::string, std::string> sibling_availability(int libtorch) {
  std::map<std::string, std::string> answers;
  const SiblingWorker sibling = sibling_worker(libtorch);
  std::string failure = sibling.unavailable;
  if (failure.empty() && !sibling.command.empty()) {
    // One line per path: name, a tab, and why it is unavailable (nothing when it is available).
    const CommandOutput run = run_command(shell_quoted(sibling.command[0]) + " backends --local");
    if (run.status != 0) failure = sibling.command[0] + " backends --local failed: " + run.output;
    std::stringstream lines(run.output);
    for (std::string line; failure.empty() && std::getline(lines, line);) {
      const auto tab = line.find('\t');
      if (tab != std::string::npos) answers[line.substr(0, tab)] = line.substr(tab + 1);
    }
  }
  if (!failure.empty()) {
    for (const std::string& name : backend_names()) {
      if (path_traits(name).libtorch == libtorch) answers[name] = failure;
    }
  }
  return answers;
}

Worker::Worker(WorkerOptions options) : options_(std::move(options)) {
  if (options_.command.empty()) options_.command = {"/proc/self/exe", "worker"};
  own_.command = options_.command;
}

Worker::~Worker() {
  auto close_process = [](Process& process) {
    stop(process);
    if (process.stderr_file >= 0) ::close(process.stderr_file);
    if (!process.stderr_path.empty()) ::unlink(process.stderr_path.c_str());
  };
  close_process(own_);
  for (auto& [libtorch, process] : siblings_) close_process(process);
}

Worker::Process& Worker::process_for(const std::string& backend) {
  const int libtorch = path_traits(backend).libtorch;
  if (libtorch == 0 || libtorch == torch_major()) return own_;
  auto found = siblings_.find(libtorch);
  if (found == siblings_.end()) {
    SiblingWorker sibling = sibling_worker(libtorch);
    Process process;
    process.command = std::move(sibling.command);
    process.unavailable = std::move(sibling.unavailable);
    found = siblings_.emplace(libtorch, std::move(process)).first;
  }
  return found->second;
}

void Worker::start(Process& process) {
  if (process.stderr_file < 0) {
    std::string path = "/tmp/weft-worker-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0)
      throw Error("worker: cannot create a stderr file in /tmp: " +
                  std::string(std::strerror(errno)));
    ::close(fd);
    // O_APPEND: the worker's writes land at the end even after we truncate the file.
    process.stderr_file = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    process.stderr_path = path;
    if (process.stderr_file < 0) throw Error("worker: cannot open " + path);
  }
  if (::ftruncate(process.stderr_file, 0) != 0) {
    throw Error("worker: cannot truncate " + process.stderr_path);
  }
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    throw Error("worker: socketpair failed: " + std::string(std::strerror(errno)));
  }
  // Everything the child needs is prepared before fork: between fork and exec only
  // async-signal-safe calls are allowed (the parent may run threads).
  std::vector<char*> argv;
  for (std::string& arg : process.command) argv.push_back(arg.data());
  argv.push_back(nullptr);
  rlimit memory{};
  memory.rlim_cur = memory.rlim_max = static_cast<rlim_t>(options_.memory_limit_mb) * 1024 * 1024;
  const bool cap_memory = options_.memory_limit_mb > 0;
  const int child_end = pair[1];
  const int err = process.stderr_file;

  pid_t pid = -1;
  {
    // One fork at a time in this process: libz3's pthread_atfork handler deadlocked when two
    // jobs started their workers at the same moment (both threads blocked in its prepare
    // handler, seen under load in `weft fuzz --jobs 2`).
    static std::mutex fork_mutex;
    std::lock_guard<std::mutex> lock(fork_mutex);
    pid = ::fork();
  }
  if (pid < 0) {
    ::close(pair[0]);
    ::close(pair[1]);
    throw Error("worker: fork failed: " + std::string(std::strerror(errno)));
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // its own process group: a timeout kills what it started too
    // A scheduler stopping the campaign (Slurm's cancel or preemption signals every process of
    // the job) must not look like a crash of PyTorch: the worker ignores SIGTERM and SIGINT
    // (kept across exec) and finishes its run; weft stops it when the campaign stops.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGTERM, &ignore, nullptr);
    ::sigaction(SIGINT, &ignore, nullptr);
    ::dup2(child_end, 0);
    ::dup2(child_end, 1);
    ::dup2(err, 2);
    if (cap_memory) ::setrlimit(RLIMIT_AS, &memory);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(pair[1]);
  process.pid = pid;
  process.socket = pair[0];
  ++starts_;

  // The worker says it is ready once LibTorch is loaded; a worker that cannot start at all is
  // an error of the setup, not a result.
  std::string hello;
  const ReadStatus status = read_message(
      process.socket, hello,
      Clock::now() +
          std::chrono::milliseconds(static_cast<long long>(options_.startup_limit_seconds * 1000)));
  if (status != ReadStatus::Ok || hello != kProtocol) {
    const std::string tail = stderr_tail(process);
    stop(process);
    throw Error("worker '" + process.command[0] + "' did not start" +
                (status == ReadStatus::TimedOut ? " within the startup limit" : "") +
                (status == ReadStatus::Ok ? " (it speaks another protocol: rebuild it)" : "") +
                (tail.empty() ? std::string() : ": " + tail));
  }
}

void Worker::stop(Process& process) {
  if (process.pid > 0) {
    ::kill(-process.pid, SIGKILL);
    ::kill(process.pid, SIGKILL);
    int status = 0;
    while (::waitpid(process.pid, &status, 0) < 0 && errno == EINTR) {
    }
    remove_runner_directories_of(process.pid);
  }
  if (process.socket >= 0) ::close(process.socket);
  process.pid = -1;
  process.socket = -1;
}

std::string Worker::stderr_tail(const Process& process) {
  if (process.stderr_path.empty()) return {};
  const int fd = ::open(process.stderr_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  struct stat info {};
  std::string text;
  if (::fstat(fd, &info) == 0 && info.st_size > 0) {
    const off_t size = std::min<off_t>(info.st_size, 2000);
    text.resize(static_cast<std::size_t>(size));
    const ssize_t n = ::pread(fd, text.data(), text.size(), info.st_size - size);
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  }
  ::close(fd);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

BackendResult Worker::died(Process& process, const std::string& backend, double seconds) {
  BackendResult result;
  result.backend = backend;
  result.seconds = seconds;
  ::kill(-process.pid, SIGKILL);  // whatever it started (compilers, interpreters) goes with it
  int status = 0;
  pid_t reaped = 0;
  while ((reaped = ::waitpid(process.pid, &status, 0)) < 0 && errno == EINTR) {
  }
  const std::string tail = stderr_tail(process);
  result.outcome = Outcome::Crash;
  result.message = reaped == process.pid ? describe_status(status) : "the worker vanished";
  const bool memory = tail.find("bad_alloc") != std::string::npos ||
                      tail.find("out of memory") != std::string::npos ||
                      tail.find("Cannot allocate memory") != std::string::npos;
  if (memory) result.outcome = Outcome::OutOfMemory;
  if (!tail.empty()) result.message += "; stderr: " + tail;
  remove_runner_directories_of(process.pid);
  process.pid = -1;
  stop(process);
  return result;
}

BackendResult Worker::run(const std::string& backend, const ir::Graph& graph,
                          const ir::TensorMap& values, const RunSpec& spec) {
  return run_all({backend}, graph, values, spec)[0];
}

std::vector<BackendResult> Worker::run_all(const std::vector<std::string>& backends,
                                           const ir::Graph& graph, const ir::TensorMap& values,
                                           const RunSpec& spec) {
  // Consecutive backends of the same worker go in one request.
  std::vector<BackendResult> results;
  for (std::size_t first = 0; first < backends.size();) {
    Process& process = process_for(backends[first]);
    std::size_t last = first + 1;
    while (last < backends.size() && &process_for(backends[last]) == &process) ++last;
    const std::vector<std::string> group(backends.begin() + static_cast<std::ptrdiff_t>(first),
                                         backends.begin() + static_cast<std::ptrdiff_t>(last));
    for (BackendResult& result : run_on(process, group, graph, values, spec)) {
      results.push_back(std::move(result));
    }
    first = last;
  }
  return results;
}

std::vector<BackendResult> Worker::run_on(Process& process,
                                          const std::vector<std::string>& backends,
                                          const ir::Graph& graph, const ir::TensorMap& values,
                                          const RunSpec& spec) {
  std::vector<BackendResult> results;
  if (!process.unavailable.empty()) {
    for (const std::string& backend : backends) {
      BackendResult result;
      result.backend = backend;
      result.outcome = Outcome::Unavailable;
      result.message = process.unavailable;
      results.push_back(std::move(result));
    }
    return results;
  }
  std::vector<std::string> pending = backends;
  while (!pending.empty()) {
    const std::string request = encode_request(pending, graph, values, spec);
    if (process.pid < 0) start(process);
    if (::ftruncate(process.stderr_file, 0) != 0) {
      // Only the stderr tail would be stale; not worth failing the run for.
    }
    auto begin = Clock::now();
    const bool sent = write_message(process.socket, request);
    std::size_t answered = 0;
    // One answer per backend, each within the time limit from the previous one; a worker that
    // dies or hangs is recorded against the backend it was running, and a fresh worker takes
    // the rest.
    while (answered < pending.size()) {
      const std::string& backend = pending[answered];
      if (!sent) {
        results.push_back(died(process, backend, seconds_since(begin)));
        ++answered;
        break;
      }
      std::string answer;
      const double limit = options_.time_limit_seconds +
                           (path_traits(backend).compiles ? options_.compile_limit_seconds : 0);
      const ReadStatus status =
          read_message(process.socket, answer,
                       begin + std::chrono::milliseconds(static_cast<long long>(limit * 1000)));
      if (status == ReadStatus::Closed) {
        results.push_back(died(process, backend, seconds_since(begin)));
        ++answered;
        break;
      }
      if (status == ReadStatus::TimedOut) {
        BackendResult result;
        result.backend = backend;
        result.outcome = Outcome::Timeout;
        result.seconds = seconds_since(begin);
        result.message = "no answer within " + fmt_seconds(limit) + " s";
        stop(process);
        if (const std::string tail = stderr_tail(process); !tail.empty()) {
          result.message += "; stderr: " + tail;
        }
        results.push_back(std::move(result));
        ++answered;
        break;
      }
      try {
        results.push_back(decode_result(answer));
      } catch (const std::exception& e) {
        stop(process);
        BackendResult result;
        result.backend = backend;
        result.outcome = Outcome::Crash;
        result.message = std::string("garbled answer from the worker: ") + e.what();
        results.push_back(std::move(result));
        ++answered;
        break;
      }
      ++answered;
      begin = Clock::now();
    }
    pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(answered));
  }
  return results;
}

// ---- the worker's side ---------------------------------------------------------------------

int serve_worker() {
  // Keep the protocol on a private descriptor; stray prints to stdout go to stderr instead.
  const int in = 0;
  const int out = ::dup(1);
  if (out < 0 || ::dup2(2, 1) < 0) return 2;
  if (!write_message(out, kProtocol)) return 2;
  std::map<std::string, std::unique_ptr<Backend>> backends;
  std::string payload;
  while (read_message(in, payload, std::nullopt) == ReadStatus::Ok) {
    Request request;
    std::string refused;
    try {
      request = decode_request(payload);
    } catch (const std::exception& e) {
      refused = std::string("worker: ") + e.what();
      if (request.backends.empty()) request.backends.push_back("?");
    }
    for (const std::string& name : request.backends) {
      BackendResult result;
      result.backend = name;
      if (!refused.empty()) {
        // A request this worker cannot read is a harness fault (a worker binary built from
        // other sources than the campaign's weft, e.g. rebuilt mid-campaign), not an exception
        // of the path: the path is unavailable for this case, and judging it would file a bug.
        result.outcome = Outcome::Unavailable;
        result.phase = "request";
        result.message = refused + " (is the worker built from the same sources as weft?)";
        if (!write_message(out, encode_result(result))) return 0;
        continue;
      }
      try {
        auto& backend = backends[name];
        if (!backend) backend = make_backend(name);
        result = run_backend(*backend, request.graph, request.values, request.spec);
      } catch (const std::exception& e) {
        result.outcome = Outcome::Exception;
        result.phase = "request";
        result.message = std::string("worker: ") + e.what();
      }
      if (!write_message(out, encode_result(result))) return 0;
    }
  }
  return 0;
}

}  // namespace weft::oracle
