#pragma once
// Isolated execution (DESIGN.md "The oracle"): every backend runs inside a persistent worker
// process, `weft worker`, started with fork+exec (never a bare fork of a process whose
// LibTorch thread pools may already run) and fed one request per backend run over a socket.
// A worker that crashes (signal, abort), does not answer within the time limit, or exceeds
// its memory cap is recorded as a result (Outcome::Crash / Timeout / OutOfMemory, with the
// signal or exit status and the tail of its stderr) and replaced on the next run. A crash of
// LibTorch is data, never the end of a campaign.
//
// One weft links one LibTorch. The C++ paths of another (PathTraits::libtorch) run in a worker
// of the weft built against that one, its "sibling": a campaign can judge LibTorch 1.13's and
// 2.x's paths side by side, each in its own process.

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "weft/oracle/backend.h"

namespace weft::oracle {

struct WorkerOptions {
  // argv of the worker for the paths this weft runs; empty: this executable (/proc/self/exe)
  // with "worker". Paths of another LibTorch go to sibling_worker()'s command.
  std::vector<std::string> command;
  double time_limit_seconds = 20;  // per backend run (prepare + every call)
  // Added to the limit of a path that compiles (PathTraits::compiles): Inductor's g++ or
  // Triton, export, packaging. Its compile seconds are reported apart (BackendResult).
  double compile_limit_seconds = 180;
  double startup_limit_seconds = 60;   // until a fresh worker says it is ready
  std::size_t memory_limit_mb = 8192;  // the worker's address-space cap; 0: none
};

class Worker {
 public:
  explicit Worker(WorkerOptions options = {});
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Runs `backend` on the case in the worker, starting one first when none runs. Never
  // throws for failures of the backend or the worker process; throws weft::Error only when
  // no worker can be started at all (missing executable, one that dies before it is ready).
  BackendResult run(const std::string& backend, const ir::Graph& graph, const ir::TensorMap& values,
                    const RunSpec& spec);

  // Runs every backend of `backends` on the case, in order, sending the case once. A backend
  // that kills or hangs the worker gets its Crash/Timeout result and a fresh worker runs the
  // rest. One result per backend, in order.
  std::vector<BackendResult> run_all(const std::vector<std::string>& backends,
                                     const ir::Graph& graph, const ir::TensorMap& values,
                                     const RunSpec& spec);

  // Starts the worker process now when none runs (it would start on the first run anyway):
  // lets a caller overlap the start-up with other work. Throws like run() when it cannot.
  void warm_up() {
    if (own_.pid < 0) start(own_);
  }

  int starts() const { return starts_; }  // processes started so far, siblings included
  // The per-run limit from now on (localization shortens it while it bisects a hang).
  void set_time_limit(double seconds) { options_.time_limit_seconds = seconds; }
  double time_limit() const { return options_.time_limit_seconds; }
  pid_t pid() const { return own_.pid; }  // the running worker of this weft's paths, or -1

 private:
  struct Process {
    std::vector<std::string> command;
    std::string unavailable;  // a sibling that cannot run here, and why
    pid_t pid = -1;
    int socket = -1;  // our end of the request/response socket
    int stderr_file = -1;
    std::string stderr_path;
  };

  Process& process_for(const std::string& backend);
  // The results of `backends`, all served by `process`, in order.
  std::vector<BackendResult> run_on(Process& process, const std::vector<std::string>& backends,
                                    const ir::Graph& graph, const ir::TensorMap& values,
                                    const RunSpec& spec);
  void start(Process& process);
  static void stop(Process& process);  // kills the process group, reaps it
  static std::string stderr_tail(const Process& process);
  BackendResult died(Process& process, const std::string& backend, double seconds);

  WorkerOptions options_;
  Process own_;
  std::map<int, Process> siblings_;  // by LibTorch major version, made when first needed
  int starts_ = 0;
};

// The weft built against LibTorch `libtorch` (a major version) whose worker runs that
// LibTorch's C++ paths: $WEFT_LIBTORCH<major>_WORKER, else the source tree's build/default (1)
// or build/torch2 (2). `unavailable` says why there is none; for this weft's own LibTorch,
// both are empty (its own worker runs them).
struct SiblingWorker {
  std::vector<std::string> command;
  std::string unavailable;
};
SiblingWorker sibling_worker(int libtorch);

// What the sibling for `libtorch` says of its own paths (`weft backends --local`): backend
// name -> why it is unavailable (empty: available). Without a sibling, every path of that
// LibTorch with the reason there is none.
std::map<std::string, std::string> sibling_availability(int libtorch);

// The loop of `weft worker`: reads requests from standard input, answers on standard output
// (which it then redirects to stderr, so stray prints cannot corrupt the protocol). Returns
// the process exit status when the other end closes.
int serve_worker();

}  // namespace weft::oracle
