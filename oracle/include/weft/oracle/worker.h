#pragma once
// Isolated execution (DESIGN.md "The oracle"): every backend runs inside a persistent worker
// process, `weft worker`, started with fork+exec (never a bare fork of a process whose
// LibTorch thread pools may already run) and fed one request per backend run over a socket.
// A worker that crashes (signal, abort), does not answer within the time limit, or exceeds
// its memory cap is recorded as a result (Outcome::Crash / Timeout / OutOfMemory, with the
// signal or exit status and the tail of its stderr) and replaced on the next run. A crash of
// LibTorch is data, never the end of a campaign.

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

#include "weft/oracle/backend.h"

namespace weft::oracle {

struct WorkerOptions {
  // argv of the worker; empty: this executable (/proc/self/exe) with "worker".
  std::vector<std::string> command;
  double time_limit_seconds = 20;      // per backend run (prepare + every call)
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
    if (pid_ < 0) start();
  }

  int starts() const { return starts_; }  // processes started so far
  // The per-run limit from now on (localization shortens it while it bisects a hang).
  void set_time_limit(double seconds) { options_.time_limit_seconds = seconds; }
  double time_limit() const { return options_.time_limit_seconds; }
  pid_t pid() const { return pid_; }  // the running worker, or -1

 private:
  void start();
  void stop();  // kills the process group, reaps it
  std::string stderr_tail() const;
  BackendResult died(const std::string& backend, double seconds);

  WorkerOptions options_;
  pid_t pid_ = -1;
  int socket_ = -1;  // our end of the request/response socket
  int stderr_file_ = -1;
  std::string stderr_path_;
  int starts_ = 0;
};

// The loop of `weft worker`: reads requests from standard input, answers on standard output
// (which it then redirects to stderr, so stray prints cannot corrupt the protocol). Returns
// the process exit status when the other end closes.
int serve_worker();

}  // namespace weft::oracle
