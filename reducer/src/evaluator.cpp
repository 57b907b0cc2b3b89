// Judging the reducer's candidates: engine checks in this process, the oracle in workers.
#include "evaluator.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <thread>

#include "weft/error.h"
#include "weft/ir/graph_json.h"
#include "weft/ir/validate.h"

namespace weft::reduce {

namespace {

bool all_finite(const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors) {
    if (!t.defined() || !t.is_floating_point()) continue;
    for (double v : t.to_vector<double>()) {
      if (!std::isfinite(v)) return false;
    }
  }
  return true;
}

}  // namespace

bool same_finding(const oracle::Finding& candidate, const oracle::Finding& target) {
  if (candidate.symptom != target.symptom || candidate.backend != target.backend) return false;
  // An exception's message is its root cause: a candidate that throws another message shows
  // another bug (an ofi assert reduced until only the unbatched-conv2d refusal was left).
  if ((target.symptom == oracle::Symptom::ExceptionMismatch ||
       target.symptom == oracle::Symptom::ShapeMismatch) &&
      !target.signature.empty()) {
    return candidate.signature == target.signature;
  }
  return target.op.empty() || candidate.op == target.op;
}

Evaluator::Evaluator(const oracle::Finding& target, const ReduceOptions& options)
    : target_(target), options_(options), start_(std::chrono::steady_clock::now()) {
  oracle::OracleOptions oracle_options;
  oracle_options.backends = {oracle::kReferenceBackend, oracle::kEngineBackend};
  // A finding on the reference is eager's disagreement that finite differences settled: eager
  // must run for it to show again.
  const std::string path =
      target.backend == oracle::kReferenceBackend ? std::string("torch") : target.backend;
  if (std::find(oracle_options.backends.begin(), oracle_options.backends.end(), path) ==
      oracle_options.backends.end()) {
    oracle_options.backends.push_back(path);
  }
  oracle_options.worker = options.worker;
  if (target.symptom == oracle::Symptom::Timeout && options.hang_time_limit_seconds > 0) {
    oracle_options.worker.time_limit_seconds =
        std::min(options.worker.time_limit_seconds, options.hang_time_limit_seconds);
  }
  oracle_options.calls = options.calls;
  const int jobs = std::max(1, options.jobs);
  for (int j = 0; j < jobs; ++j)
    oracles_.push_back(std::make_unique<oracle::Oracle>(oracle_options));
  for (int j = 1; j < jobs; ++j) {
    oracle::Oracle* extra = oracles_[static_cast<std::size_t>(j)].get();
    warming_.push_back(std::async(std::launch::async, [extra] { extra->warm_up(); }));
  }
}

Evaluator::~Evaluator() {
  for (std::future<void>& warming : warming_) {
    if (warming.valid()) warming.wait();
  }
}

double Evaluator::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

bool Evaluator::exhausted() const {
  if (options_.should_stop && options_.should_stop()) return true;
  return options_.budget_seconds > 0 && elapsed() >= options_.budget_seconds;
}

bool Evaluator::runs_on_engine(const Case& c) const {
  if (c.graph.nodes().empty() || c.graph.outputs().empty()) return false;
  try {
    ir::validate(c.graph);
    ir::execute(c.graph, c.values);  // checks every value against its declared type
    ir::ExecutionOptions f64;
    f64.floating_dtype = Dtype::Float64;
    const ir::Execution reference = ir::execute(c.graph, c.values, f64);
    return !reference_finite_ || all_finite(reference.outputs);
  } catch (const std::exception&) {
    return false;
  }
}

std::size_t Evaluator::key(const Case& c) {
  std::string text = ir::graph_to_json_text(c.graph);
  for (const auto& [name, value] : c.values) {
    const Tensor dense = value.contiguous();
    text += '\0' + name + '\0';
    text.append(static_cast<const char*>(dense.raw_data()),
                static_cast<std::size_t>(dense.numel()) * itemsize(dense.dtype()));
  }
  return std::hash<std::string>{}(text);
}

void Evaluator::visited(const Case& c) {
  try {
    visited_.insert(key(c));
  } catch (const std::exception&) {
    // A case whose graph does not serialize is never a candidate's twin: nothing to remember.
  }
}

std::optional<oracle::Finding> Evaluator::matching(const oracle::CaseReport& report) const {
  for (const oracle::Finding& finding : report.verdict.findings) {
    if (same_finding(finding, target_)) return finding;
  }
  return std::nullopt;
}

std::optional<Accepted> Evaluator::judge(const Case& c) {
  ++checks_;
  oracle::CaseReport report = oracles_.front()->check(c.graph, c.values);
  backend_runs_ += report.backend_runs;
  if (std::optional<oracle::Finding> finding = matching(report)) {
    return Accepted{0, std::move(report), std::move(*finding)};
  }
  return std::nullopt;
}

std::optional<Accepted> Evaluator::first_showing(const std::vector<Candidate>& candidates,
                                                 std::size_t start) {
  std::size_t next = start;
  while (next < candidates.size() && !exhausted()) {
    // The next batch: candidates the engine runs and that were not judged before.
    std::vector<std::size_t> batch;
    std::vector<std::size_t> keys;
    while (next < candidates.size() && batch.size() < oracles_.size()) {
      const Case& c = candidates[next].edited;
      std::size_t k = 0;
      try {
        k = key(c);  // writes graph.json text, which validates the graph
      } catch (const std::exception&) {
        ++rejected_locally_;
        ++next;
        continue;
      }
      if (rejected_.count(k) != 0 || visited_.count(k) != 0) {
        ++cache_hits_;
      } else if (!runs_on_engine(c)) {
        ++rejected_locally_;
        rejected_.insert(k);
      } else {
        batch.push_back(next);
        keys.push_back(k);
      }
      ++next;
    }
    if (batch.empty()) continue;
    for (std::size_t j = 1; j < batch.size(); ++j) {
      if (warming_[j - 1].valid()) warming_[j - 1].get();  // rethrows a failed start
    }
    std::vector<std::optional<oracle::CaseReport>> reports(batch.size());
    std::vector<std::exception_ptr> errors(batch.size());
    const auto run = [&](std::size_t j) {
      try {
        const Case& c = candidates[batch[j]].edited;
        reports[j] = oracles_[j]->check(c.graph, c.values);
      } catch (...) {
        errors[j] = std::current_exception();
      }
    };
    if (batch.size() == 1) {
      run(0);
    } else {
      std::vector<std::thread> threads;
      for (std::size_t j = 0; j < batch.size(); ++j) threads.emplace_back(run, j);
      for (std::thread& t : threads) t.join();
    }
    for (const std::exception_ptr& error : errors) {
      if (error) std::rethrow_exception(error);
    }
    for (std::size_t j = 0; j < batch.size(); ++j) {
      ++checks_;
      backend_runs_ += reports[j]->backend_runs;
    }
    for (std::size_t j = 0; j < batch.size(); ++j) {
      // Nondeterminism shows on some runs only: a candidate gets a second chance.
      std::optional<oracle::Finding> finding = matching(*reports[j]);
      if (!finding && target_.symptom == oracle::Symptom::Nondeterminism) {
        const Case& c = candidates[batch[j]].edited;
        reports[j] = oracles_.front()->check(c.graph, c.values);
        ++checks_;
        backend_runs_ += reports[j]->backend_runs;
        finding = matching(*reports[j]);
      }
      if (finding) return Accepted{batch[j], std::move(*reports[j]), std::move(*finding)};
      rejected_.insert(keys[j]);
    }
  }
  return std::nullopt;
}

}  // namespace weft::reduce
