#pragma once
// Judging candidates: the engine first (a candidate it refuses, or one whose reference turns
// non-finite, never reaches a worker), then the oracle on the reference, the float32 engine
// and the faulty path, with localization, in up to `jobs` isolated workers side by side.
#include <chrono>
#include <cstddef>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "edit.h"
#include "weft/oracle/oracle.h"
#include "weft/reduce/reducer.h"

namespace weft::reduce {

struct Accepted {
  std::size_t index = 0;  // in the candidate list
  oracle::CaseReport report;
  oracle::Finding finding;  // the report's finding that matches the target
};

class Evaluator {
 public:
  Evaluator(const oracle::Finding& target, const ReduceOptions& options);
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // Judges `c` with the oracle alone (the original case and the final result).
  std::optional<Accepted> judge(const Case& c);
  // Marks `c` as a case the reduction has been at: a candidate equal to it is never judged or
  // accepted again, so an edit that changes nothing (or passes that undo each other) cannot
  // make the reduction cycle.
  void visited(const Case& c);
  // The first candidate at or after `start` that still shows the target, judged in batches of
  // `jobs` in list order, so the answer does not depend on the number of jobs. Nothing when
  // none does or the budget is spent.
  std::optional<Accepted> first_showing(const std::vector<Candidate>& candidates,
                                        std::size_t start = 0);

  // Whether the reference must stay finite (it was on the original case).
  void set_reference_finite(bool finite) { reference_finite_ = finite; }
  bool exhausted() const;
  double elapsed() const;

  int checks() const { return checks_; }
  int backend_runs() const { return backend_runs_; }
  int rejected_locally() const { return rejected_locally_; }
  int cache_hits() const { return cache_hits_; }

 private:
  bool runs_on_engine(const Case& c) const;
  // The report's finding that is the target's, if any.
  std::optional<oracle::Finding> matching(const oracle::CaseReport& report) const;
  static std::size_t key(const Case& c);

  oracle::Finding target_;
  ReduceOptions options_;
  std::vector<std::unique_ptr<oracle::Oracle>> oracles_;
  // The extra oracles' workers start in the background while the first one confirms the
  // finding; a batch waits for them only when it needs them.
  std::vector<std::future<void>> warming_;
  std::unordered_set<std::size_t> rejected_;  // hashes of candidates that lost the finding
  std::unordered_set<std::size_t> visited_;   // hashes of cases the reduction has been at
  bool reference_finite_ = true;
  std::chrono::steady_clock::time_point start_;
  int checks_ = 0;
  int backend_runs_ = 0;
  int rejected_locally_ = 0;
  int cache_hits_ = 0;
};

}  // namespace weft::reduce
