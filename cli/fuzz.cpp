// `weft fuzz`: the campaign loop. Jobs (threads, each with its own generator and worker
// process) take case indices from the campaign's (shard's) sequence, generate a model, judge
// it on the backends and file every finding into its bug bucket in the campaign directory
// (weft/corpus/campaign.h). Live progress on stderr; SIGINT/SIGTERM stop gracefully (a second
// one exits at once: every file is whole at any moment); --resume continues a campaign.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "arguments.h"
#include "capabilities.h"
#include "commands.h"
#include "form_rates.h"
#include "reduced_case.h"
#include "weft/corpus/campaign.h"
#include "weft/corpus/shard.h"
#include "weft/error.h"
#include "weft/gen/generator.h"
#include "weft/gen/z3_info.h"
#include "weft/oracle/export.h"
#include "weft/oracle/oracle.h"
#include "weft/oracle/torch_info.h"
#include "weft/reduce/reducer.h"
#include "weft/version.h"

namespace weft::cli {

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

struct FuzzArgs {
  double time = 0;
  std::uint64_t cases = 0;
  std::uint64_t seed = 1;
  int jobs = 0;
  std::string backends;
  std::string nodes = "5-10";
  std::string ops;
  std::string exclude;
  std::string out = "campaign";
  bool resume = false;
  std::string shard;  // empty: the scheduler's (weft/corpus/shard.h), or unsharded
  bool reduce = false;
  bool learn_gaps = true;  // learn the LibTorch's capability gaps and let the generator avoid them
  double time_limit = 20;
  double compile_limit = 180;  // more seconds for a path that compiles (WorkerOptions)
  double interval = 5;
  std::vector<std::string> rates;  // --rate FORM=R (form_rates.h)
};

std::atomic<int> g_signals{0};

void on_signal(int) {
  // The second signal ends the process at once: every file on disk is already whole.
  if (g_signals.fetch_add(1) >= 1) ::_exit(130);
}

std::pair<int, int> parse_range(const std::string& text, const char* option) {
  try {
    const auto dash = text.find('-');
    const int lo = std::stoi(text.substr(0, dash));
    const int hi = dash == std::string::npos ? lo : std::stoi(text.substr(dash + 1));
    if (lo < 1 || hi < lo) throw Error("");
    return {lo, hi};
  } catch (const std::exception&) {
    throw Error(std::string(option) + ": expected N or LO-HI with 1 <= LO <= HI, got '" + text +
                "'");
  }
}

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The model seed and node count of global case `index`: a function of the campaign seed and
// the index only, so shards, resumed runs and replays agree.
std::pair<std::uint64_t, int> case_plan(std::uint64_t campaign_seed, std::uint64_t index, int lo,
                                        int hi) {
  const std::uint64_t seed = mix(campaign_seed * 0x100000001b3ull + index);
  const int nodes = lo + static_cast<int>(mix(seed) % static_cast<std::uint64_t>(hi - lo + 1));
  return {seed, nodes};
}

std::string repro_for(const ir::Graph& graph, const ir::TensorMap& values,
                      const std::string& backend) {
  oracle::ExportOptions options;
  options.backend = backend;
  options.values_path = corpus::kValuesFile;
  try {
    return oracle::export_python_script(graph, values, options);
  } catch (const std::exception& e) {
    return std::string("# No standalone PyTorch script for this path: ") + e.what() +
           "\n# Replay it with: weft replay <this directory>\n";
  }
}

struct Totals {
  std::uint64_t cases = 0;        // judged in this run
  std::uint64_t bugs = 0;         // findings
  std::uint64_t unsupported = 0;  // cases eager refused for want of a kernel (capability gaps)
  std::map<std::string, std::uint64_t> by_symptom;
  std::map<std::string, std::uint64_t> ops;
  std::map<std::string, std::uint64_t> forms;  // cases per program form (ir::program_forms)
  double generate = 0, execute = 0, judge = 0, localize = 0, io = 0, reduce = 0;
  int worker_starts = 0;
  int reduced = 0;  // bucket cases the reducer tried
  struct PathTime {
    double seconds = 0;          // prepare + calls of every case, in its worker
    double compile_seconds = 0;  // the part spent compiling (torch.compile, export, AOTI)
  };
  std::map<std::string, PathTime> paths;  // by backend, the case's own runs (not localization)
};

// A run's stats.jsonl lines beyond which their spacing grows with the run's length.
constexpr double kStatsLinesPerRun = 500;

// Seconds the reducer may spend on one new bucket's case during a campaign.
constexpr double kReduceBudgetSeconds = 120;

class FuzzRun {
 public:
  FuzzRun(const FuzzArgs& args, corpus::Campaign campaign)
      : args_(args), campaign_(std::move(campaign)) {
    const nlohmann::json& o = campaign_.options();
    seed_ = o.at("seed").get<std::uint64_t>();
    nodes_lo_ = o.at("nodes").at(0).get<int>();
    nodes_hi_ = o.at("nodes").at(1).get<int>();
    shard_ = {o.at("shard").at(0).get<std::uint64_t>(), o.at("shard").at(1).get<std::uint64_t>()};
    // --cases counts the whole campaign's cases: this shard's share of the indices below it.
    if (args_.cases > 0) case_target_ = corpus::shard_case_count(args_.cases, shard_);
    backends_ = o.at("backends").get<std::vector<std::string>>();
    ops_ = parse_ops(o.at("ops").get<std::vector<std::string>>(), "campaign.json ops");
    exclude_ = parse_ops(o.at("exclude").get<std::vector<std::string>>(), "campaign.json exclude");
    if (o.contains("rates")) {
      // Checked here, once, rather than per case.
      gen::CaseOptions check;
      apply_form_rates(o.at("rates"),
                       (campaign_.dir() / "campaign.json").string() + " options/rates", check);
      rates_ = o.at("rates");
    }
    if (o.contains("avoid")) {
      avoid_ = gaps_from_names(o.at("avoid").get<std::vector<std::vector<std::string>>>(),
                               (campaign_.dir() / "campaign.json").string() + " options/avoid");
    }
    elapsed_before_ = campaign_.progress().elapsed;
    tty_ = ::isatty(2) != 0;
    if (args_.reduce) {
      // Buckets of an earlier run (a resumed campaign) whose first case was not reduced yet.
      for (const auto& [name, bucket] : campaign_.buckets()) {
        if (bucket.cases.empty() ||
            find_reduced_case(campaign_.dir() / "bugs" / name, bucket.cases))
          continue;
        const fs::path case_dir = campaign_.dir() / "bugs" / name / bucket.cases.front();
        oracle::Finding finding;
        finding.symptom = oracle::symptom_from_name(bucket.symptom);
        finding.backend = bucket.backend;
        finding.op = bucket.op;
        finding.message = bucket.message;
        finding.signature = bucket.signature;
        pending_reductions_.emplace_back(finding, case_dir);
      }
    }
  }

  int run() {
    start_ = Clock::now();
    campaign_.set_state("running");
    campaign_.save_progress();  // a watcher sees the run start (and a requeued shard resume)
    const int jobs =
        args_.jobs > 0 ? args_.jobs : std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> threads;
    for (int j = 0; j < jobs; ++j) threads.emplace_back([this] { job(); });
    double next_stats = args_.interval;       // progress.json, the progress line
    double next_stats_line = args_.interval;  // stats.jsonl
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait_for(lock, std::chrono::milliseconds(tty_ ? 250 : 500),
                       [this] { return active_ == 0 && started_; });
        if (active_ == 0 && started_) break;
      }
      const double elapsed = seconds();
      if (elapsed >= next_stats) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (elapsed >= next_stats_line) {
          write_stats(elapsed);
          // stats.jsonl is rewritten whole at each line: a night's campaign spaces its lines
          // out (at most ~kStatsLinesPerRun per run) rather than rewrite megabytes every
          // interval onto a shared filesystem.
          next_stats_line = elapsed + std::max(args_.interval, elapsed / kStatsLinesPerRun);
        }
        campaign_.save_progress();
        if (!tty_) print_progress(false);
        next_stats += args_.interval;
      }
      if (tty_) {
        std::lock_guard<std::mutex> lock(mutex_);
        print_progress(true);
      }
    }
    for (std::thread& t : threads) t.join();
    std::lock_guard<std::mutex> lock(mutex_);
    write_stats(seconds());
    // Finished: its --time or --cases was reached; stopped: a signal or an error came first.
    campaign_.set_state(g_signals.load() == 0 && failure_.empty() &&
                                (args_.time > 0 || args_.cases > 0)
                            ? "finished"
                            : "stopped");
    campaign_.save_progress();
    if (tty_) std::cerr << "\n";
    print_progress(false);
    print_summary();
    return failure_.empty() ? 0 : 2;
  }

 private:
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  double campaign_seconds() const { return elapsed_before_ + seconds(); }

  bool should_stop() const {
    if (g_signals.load() > 0 || !failure_.empty()) return true;
    if (args_.time > 0 && seconds() >= args_.time) return true;
    if (args_.cases > 0 && campaign_.progress().cases + in_flight_ >= case_target_) return true;
    return false;
  }

  // The next case index of this shard that is not done yet, or nothing when the run stops.
  std::optional<std::uint64_t> next_index() {
    std::lock_guard<std::mutex> lock(mutex_);
    while (!should_stop()) {
      const std::uint64_t index = shard_.index + next_local_++ * shard_.count;
      if (campaign_.progress().done(index)) continue;
      ++in_flight_;
      return index;
    }
    return std::nullopt;
  }

  void job() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++active_;
      started_ = true;
    }
    try {
      gen::Generator generator;
      oracle::OracleOptions options;
      options.backends = backends_;
      options.worker.time_limit_seconds = args_.time_limit;
      options.worker.compile_limit_seconds = args_.compile_limit;
      oracle::Oracle oracle(options);
      while (true) {
        std::optional<std::pair<oracle::Finding, fs::path>> pending;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          if (pending_reductions_.empty() || g_signals.load() > 0) break;
          pending = pending_reductions_.back();
          pending_reductions_.pop_back();
        }
        reduce_bucket_case(pending->first, pending->second);
      }
      while (const std::optional<std::uint64_t> index = next_index()) {
        run_case(*index, generator, oracle);
      }
      std::lock_guard<std::mutex> lock(mutex_);
      totals_.worker_starts += oracle.worker_starts();
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (failure_.empty()) failure_ = e.what();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    --active_;
    wake_.notify_all();
  }

  void run_case(std::uint64_t index, gen::Generator& generator, oracle::Oracle& oracle) {
    const auto [seed, nodes] = case_plan(seed_, index, nodes_lo_, nodes_hi_);
    const auto t0 = Clock::now();
    gen::CaseOptions options;
    options.generator.seed = seed;
    options.generator.nodes = nodes;
    options.generator.ops = ops_;
    options.generator.exclude = exclude_;
    options.generator.avoid = avoid_;
    if (!rates_.is_null()) apply_form_rates(rates_, "campaign.json options/rates", options);
    const gen::GeneratedCase generated = gen::generate_case(generator, options);
    const auto t1 = Clock::now();
    const oracle::CaseReport report = oracle.check(generated.graph, generated.values.values);
    const auto t2 = Clock::now();

    std::vector<std::pair<oracle::Finding, fs::path>> to_reduce;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopped_from_outside(report)) {
        // Judged again when the campaign resumes; never filed as a crash.
        --in_flight_;
        return;
      }
      record_case(index, generated, report, t0, t1, t2, to_reduce);
    }
    // New buckets are reduced outside the lock: the other jobs keep fuzzing meanwhile.
    for (const auto& [finding, case_dir] : to_reduce) reduce_bucket_case(finding, case_dir);
  }

  // A stopping campaign whose worker died of the stop signal too (a terminal's Ctrl-C reaching
  // the process group, a scheduler signalling every process of the job): not PyTorch's crash.
  static bool stopped_from_outside(const oracle::CaseReport& report) {
    if (g_signals.load() == 0) return false;
    for (const oracle::Finding& finding : report.verdict.findings) {
      for (const char* name : {"SIGTERM", "SIGINT", "SIGHUP"}) {
        if (finding.message.find(std::string("killed by signal ") + name) != std::string::npos)
          return true;
      }
    }
    return false;
  }

  void record_case(std::uint64_t index, const gen::GeneratedCase& generated,
                   const oracle::CaseReport& report, Clock::time_point t0, Clock::time_point t1,
                   Clock::time_point t2,
                   std::vector<std::pair<oracle::Finding, fs::path>>& to_reduce) {
    --in_flight_;
    totals_.generate += std::chrono::duration<double>(t1 - t0).count();
    totals_.execute += report.run_seconds;
    totals_.judge += report.judge_seconds;
    totals_.localize += report.localize_seconds;
    for (const oracle::BackendResult& result : report.results) {
      Totals::PathTime& path = totals_.paths[result.backend];
      path.seconds += result.seconds;
      path.compile_seconds += result.compile_seconds;
    }
    for (const ir::Node& node : generated.graph.nodes())
      ++totals_.ops[std::string(ir::op_name(node.op))];
    for (const std::string& form : ir::program_forms(generated.graph)) ++totals_.forms[form];
    ++totals_.cases;
    bool gap_seen = false;
    for (const oracle::Unsupported& gap : report.verdict.unsupported) {
      ++totals_.unsupported;
      corpus::Gap entry{gap.signature,           gap.backend, gap.op, gap.dtypes, gap.message, 1,
                        corpus::case_name(index)};
      gap_seen = campaign_.record_gap(entry) || gap_seen;
    }
    if (gap_seen) campaign_.save_progress();  // a new gap is written at once
    if (report.verdict.bug()) {
      const corpus::TestCase test_case{generated.graph, generated.values.values};
      const nlohmann::json verdict = oracle::verdict_to_json(report.verdict);
      for (const oracle::Finding& finding : report.verdict.findings) {
        ++totals_.bugs;
        ++totals_.by_symptom[std::string(oracle::symptom_name(finding.symptom))];
        corpus::Bucket bucket;
        bucket.signature = finding.signature;
        bucket.symptom = std::string(oracle::symptom_name(finding.symptom));
        bucket.backend = finding.backend;
        bucket.op = finding.op;
        if (!finding.op.empty()) bucket.ops = {finding.op};
        bucket.message = finding.message;
        bucket.first_found = campaign_seconds();
        const bool fresh = campaign_.record(
            bucket, corpus::case_name(index), test_case, verdict,
            [&] { return repro_for(generated.graph, generated.values.values, finding.backend); });
        if (fresh) {
          announce(bucket, index);
          if (args_.reduce) {
            const std::string name =
                corpus::bucket_name(bucket.signature, bucket.symptom, bucket.backend, bucket.op);
            to_reduce.emplace_back(finding,
                                   campaign_.dir() / "bugs" / name / corpus::case_name(index));
          }
        }
      }
      campaign_.mark_done(index, campaign_seconds());
      campaign_.save_progress();  // a bug's case is never judged twice
    } else {
      campaign_.mark_done(index, campaign_seconds());
    }
    totals_.io += std::chrono::duration<double>(Clock::now() - t2).count();
  }

  // Minimizes a new bucket's first case into <case>/reduced (weft/reduce/reducer.h), with
  // one worker and the campaign's time limit. A case that does not reproduce is left as it is.
  void reduce_bucket_case(const oracle::Finding& finding, const fs::path& case_dir) {
    const fs::path reduced = case_dir / "reduced";
    const auto start = Clock::now();
    std::string line;
    try {
      if (fs::exists(reduced) || !fs::exists(case_dir)) return;
      const corpus::TestCase test_case = corpus::load_case(case_dir);
      reduce::ReduceOptions options;
      options.worker.time_limit_seconds = args_.time_limit;
      options.worker.compile_limit_seconds = args_.compile_limit;
      options.budget_seconds = kReduceBudgetSeconds;
      // A stopping campaign keeps what the reduction has reached so far.
      options.should_stop = [this] {
        return g_signals.load() > 0 || (args_.time > 0 && seconds() >= args_.time);
      };
      const reduce::ReduceResult result =
          reduce::reduce_case(test_case.graph, test_case.values, finding, options);
      if (result.status == reduce::ReduceStatus::Reduced && result.steps.empty() &&
          result.budget_exhausted) {
        line = fmt::format(
            "not reduced {}: the campaign stopped first (a --resume --reduce "
            "reduces it)",
            case_dir.parent_path().filename().string());
      } else if (result.status == reduce::ReduceStatus::Reduced) {
        write_reduced_case(reduced, result);
        line = fmt::format("reduced {}: {}", case_dir.parent_path().filename().string(),
                           reduction_summary(result));
      } else {
        line = fmt::format("not reduced {}: {}", case_dir.parent_path().filename().string(),
                           reduce::reduce_status_name(result.status));
      }
    } catch (const std::exception& e) {
      line =
          fmt::format("not reduced {}: {}", case_dir.parent_path().filename().string(), e.what());
    }
    std::lock_guard<std::mutex> lock(mutex_);
    ++totals_.reduced;
    totals_.reduce += std::chrono::duration<double>(Clock::now() - start).count();
    if (tty_) std::cerr << "\r\033[K";
    std::cerr << line << "\n";
  }

  void announce(const corpus::Bucket& bucket, std::uint64_t index) {
    if (tty_) std::cerr << "\r\033[K";
    std::string message = bucket.message;
    if (message.size() > 100) message = message.substr(0, 97) + "...";
    std::cerr << fmt::format("new bug: {} in {} at {} ({}): {}\n", bucket.symptom, bucket.backend,
                             bucket.op.empty() ? "?" : bucket.op, corpus::case_name(index),
                             message);
  }

  void print_progress(bool redraw) {
    const double elapsed = seconds();
    const double rate = elapsed > 0 ? static_cast<double>(totals_.cases) / elapsed : 0.0;
    std::string symptoms;
    for (const auto& [name, count] : totals_.by_symptom) {
      symptoms += fmt::format("{}{} {}", symptoms.empty() ? "" : ", ", name, count);
    }
    std::string left;
    if (args_.time > 0) left = fmt::format(", {:.0f} s left", std::max(0.0, args_.time - elapsed));
    const std::string line =
        fmt::format("[{:6.1f} s] {} cases ({:.1f}/s), {} buckets, {} bugs{}, {} unsupported{}{}",
                    elapsed, campaign_.progress().cases, rate, campaign_.buckets().size(),
                    totals_.bugs, symptoms.empty() ? "" : " (" + symptoms + ")",
                    totals_.unsupported, left, g_signals.load() > 0 ? ", stopping" : "");
    if (redraw) {
      std::cerr << "\r\033[K" << line << std::flush;
    } else {
      std::cerr << line << "\n";
    }
  }

  void write_stats(double elapsed) {
    nlohmann::json line;
    line["elapsed"] = campaign_seconds();
    line["run_elapsed"] = elapsed;
    line["cases"] = campaign_.progress().cases;
    line["cases_per_second"] = elapsed > 0 ? static_cast<double>(totals_.cases) / elapsed : 0.0;
    line["buckets"] = campaign_.buckets().size();
    line["bugs"] = totals_.bugs;
    line["by_symptom"] = totals_.by_symptom;
    line["unsupported"] = totals_.unsupported;
    line["capability_gaps"] = campaign_.gaps().size();
    line["worker_restarts"] = totals_.worker_starts;
    line["ops"] = totals_.ops;
    line["forms"] = totals_.forms;
    line["phases"] = {
        {"generate", totals_.generate}, {"execute", totals_.execute}, {"judge", totals_.judge},
        {"localize", totals_.localize}, {"io", totals_.io},           {"reduce", totals_.reduce}};
    // Per path: its seconds in this run, the compiling share, and the cases per second it
    // would judge if it ran alone (cases / its seconds).
    nlohmann::json paths = nlohmann::json::object();
    for (const auto& [name, time] : totals_.paths) {
      paths[name] = {{"seconds", time.seconds},
                     {"compile_seconds", time.compile_seconds},
                     {"cases_per_second",
                      time.seconds > 0 ? static_cast<double>(totals_.cases) / time.seconds : 0.0}};
    }
    line["paths"] = paths;
    campaign_.append_stats(line);
  }

  void print_summary() {
    const double total = totals_.generate + totals_.execute + totals_.judge + totals_.localize +
                         totals_.io + totals_.reduce;
    const auto share = [total](double part) { return total > 0 ? 100 * part / total : 0.0; };
    std::cout << fmt::format(
        "campaign {}: {} cases in this run ({} in all), {} bug buckets; time: generation "
        "{:.0f}%, execution {:.0f}%, judging {:.0f}%, localization {:.0f}%, I/O {:.0f}%{}\n",
        campaign_.dir().string(), totals_.cases, campaign_.progress().cases,
        campaign_.buckets().size(), share(totals_.generate), share(totals_.execute),
        share(totals_.judge), share(totals_.localize), share(totals_.io),
        totals_.reduced > 0
            ? fmt::format(", reduction {:.0f}% ({} cases)", share(totals_.reduce), totals_.reduced)
            : std::string());
    if (!failure_.empty()) std::cout << "stopped by an error: " << failure_ << "\n";
    if (!campaign_.gaps().empty()) {
      std::cout << fmt::format(
          "capability gaps (not bugs: eager refused what the engine ran), "
          "in {}/unsupported.json:\n",
          campaign_.dir().string());
      for (const auto& [signature, gap] : campaign_.gaps()) {
        std::string dtypes;
        for (const std::string& d : gap.dtypes) dtypes += (dtypes.empty() ? "" : ",") + d;
        std::string message = gap.message;
        if (message.size() > 80) message = message.substr(0, 77) + "...";
        std::cout << fmt::format("  {:<20} {:<16} {:>6}  {}\n", gap.op.empty() ? "?" : gap.op,
                                 dtypes, gap.count, message);
      }
    }
    if (campaign_.buckets().empty()) {
      std::cout << "no bugs found\n";
      return;
    }
    std::vector<const corpus::Bucket*> buckets;
    for (const auto& entry : campaign_.buckets()) buckets.push_back(&entry.second);
    std::sort(buckets.begin(), buckets.end(), [](const corpus::Bucket* a, const corpus::Bucket* b) {
      return a->first_found < b->first_found;
    });
    std::cout << fmt::format("{:<20} {:<26} {:<20} {:>6}  {:<14} {}\n", "symptom", "path", "op",
                             "count", "reduced", "first case");
    for (const corpus::Bucket* b : buckets) {
      const std::string reduced = reduction_text(campaign_.dir() / "bugs" / b->name, b->cases);
      std::string ops;
      for (const std::string& op : b->ops) ops += (ops.empty() ? "" : ",") + op;
      if (ops.empty()) ops = b->op.empty() ? "?" : b->op;
      if (ops.size() > 20) ops = ops.substr(0, 17) + "...";
      std::cout << fmt::format("{:<20} {:<26} {:<20} {:>6}  {:<14} bugs/{}/{}\n", b->symptom,
                               b->backend, ops, b->count, reduced, b->name,
                               b->cases.empty() ? std::string("-") : b->cases.front());
    }
  }

  const FuzzArgs& args_;
  corpus::Campaign campaign_;
  std::uint64_t seed_ = 1;
  int nodes_lo_ = 5;
  int nodes_hi_ = 10;
  corpus::Shard shard_;
  std::uint64_t case_target_ = 0;  // this shard's cases under --cases
  std::vector<std::string> backends_;
  std::vector<ir::OpKind> ops_;
  std::vector<ir::OpKind> exclude_;
  CapabilityGaps avoid_;  // the PyTorch's capability gaps, from campaign.json
  nlohmann::json rates_;  // the program forms' rates, from campaign.json (null: the defaults)
  double elapsed_before_ = 0;
  bool tty_ = false;

  std::mutex mutex_;
  std::condition_variable wake_;
  int active_ = 0;
  bool started_ = false;
  std::uint64_t next_local_ = 0;
  std::uint64_t in_flight_ = 0;
  Totals totals_;
  std::vector<std::pair<oracle::Finding, fs::path>> pending_reductions_;
  std::string failure_;
  Clock::time_point start_;
};

// A campaign another weft process is still writing is not resumed: two writers would interleave
// their progress (say, an array resubmitted while the first still runs). On this machine its
// writer's pid tells; from another machine, a progress.json "running" whose time still moves
// within kLiveWriterSeconds. A writer that died (SIGKILL, a lost node) is waited out.
constexpr double kLiveWriterSeconds = 60;

// The campaign's progress as its files say now (a damaged file is refused, naming it).
corpus::Progress read_progress(const fs::path& dir) {
  return corpus::Campaign::open(dir, false).progress();
}

bool weft_alive(long pid) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0) return false;
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  return !comm || (std::getline(comm, name) && name.rfind("weft", 0) == 0);
}

void refuse_a_live_writer(const fs::path& dir) {
  corpus::Progress progress = read_progress(dir);
  if (progress.state != "running" || progress.owner.empty()) return;
  const std::size_t colon = progress.owner.rfind(':');
  if (progress.owner.substr(0, colon) == corpus::this_host()) {
    const long pid = std::atol(progress.owner.c_str() + colon + 1);
    if (pid != ::getpid() && weft_alive(pid)) {
      throw Error(
          fmt::format("{}: weft (pid {}) on this machine is still writing this campaign; "
                      "a campaign has one writer: wait for it or stop it",
                      dir.string(), pid));
    }
    return;
  }
  const double last = progress.updated;
  if (corpus::unix_seconds() - last >= kLiveWriterSeconds) return;
  std::cerr << fmt::format(
      "{}: last written by {} {:.0f} s ago; waiting until it has been quiet for {:.0f} s\n",
      dir.string(), progress.owner, corpus::unix_seconds() - last, kLiveWriterSeconds);
  while (corpus::unix_seconds() - last < kLiveWriterSeconds) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    progress = read_progress(dir);
    if (progress.state != "running") return;
    if (progress.updated != last) {
      throw Error(fmt::format("{}: {} is still writing this campaign; a campaign has one writer",
                              dir.string(), progress.owner));
    }
  }
}

int fuzz(FuzzArgs args) {
  // Before anything is written, so that a signal never finds the default action.
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // On a cluster the scheduler names the shard, and --out is the campaign's shared root.
  std::optional<corpus::ScheduledShard> scheduled;
  if (args.shard.empty()) {
    scheduled = corpus::shard_from_environment([](const char* name) { return std::getenv(name); });
  }
  if (scheduled) {
    const fs::path dir = fs::path(args.out) / corpus::shard_directory_name(scheduled->shard);
    std::cerr << fmt::format("shard {}/{} from the {} environment: {}\n", scheduled->shard.index,
                             scheduled->shard.count, scheduled->scheduler, dir.string());
    args.out = dir.string();
    // A requeued, preempted or restarted task continues its shard where it stopped.
    if (fs::exists(dir / "campaign.json")) args.resume = true;
  }
  corpus::Campaign campaign = [&] {
    if (args.resume) {
      refuse_a_live_writer(args.out);
      corpus::Campaign existing = corpus::Campaign::open(args.out);
      if (scheduled) {
        const corpus::Shard stored{existing.progress().shard_index,
                                   existing.progress().shard_count};
        if (stored.index != scheduled->shard.index || stored.count != scheduled->shard.count) {
          throw Error(fmt::format(
              "{}/campaign.json: shard {}/{}, but the scheduler assigns {}/{}; a campaign root "
              "holds one campaign's shards: give another --out",
              args.out, stored.index, stored.count, scheduled->shard.index,
              scheduled->shard.count));
        }
      }
      // The stopping rule and job count of the campaign, unless given again.
      const nlohmann::json& stored = existing.options();
      if (args.cases == 0) args.cases = stored.value("cases", std::uint64_t{0});
      const double stored_time = stored.value("time", 0.0);
      if (args.time <= 0 && stored_time > 0) {
        // What is left of the campaign's time; a campaign whose time is spent ends at once.
        args.time = std::max(1e-3, stored_time - existing.progress().elapsed);
      }
      if (args.jobs <= 0) args.jobs = stored.value("jobs", 0);
      args.time_limit = stored.value("time_limit", args.time_limit);
      args.compile_limit = stored.value("compile_limit", args.compile_limit);
      std::cerr << fmt::format("resuming {}: {} cases done, {} buckets\n", args.out,
                               existing.progress().cases, existing.buckets().size());
      return existing;
    }
    const auto [lo, hi] = parse_range(args.nodes, "--nodes");
    const corpus::Shard shard = scheduled            ? scheduled->shard
                                : args.shard.empty() ? corpus::Shard{}
                                                     : corpus::parse_shard(args.shard);
    const std::vector<std::string> backends = args.backends.empty()
                                                  ? oracle::default_backends(true)
                                                  : oracle::parse_backend_list(args.backends);
    std::vector<std::string> ops, exclude;
    for (ir::OpKind op : parse_ops(args.ops, "--ops")) ops.emplace_back(ir::op_name(op));
    for (ir::OpKind op : parse_ops(args.exclude, "--exclude"))
      exclude.emplace_back(ir::op_name(op));
    // The probe learns the gaps of the LibTorch weft is built on: they matter only where a path
    // of that PyTorch (eager "torch") runs, not to planted faults or PyTorch 2.x's paths.
    const bool runs_torch = std::any_of(backends.begin(), backends.end(), [](const std::string& b) {
      return oracle::path_traits(b).eager == "torch";
    });
    const CapabilityGaps gaps =
        args.learn_gaps && runs_torch ? learn_capability_gaps(args.time_limit) : CapabilityGaps{};
    nlohmann::json options = {{"seed", args.seed},
                              {"nodes", {lo, hi}},
                              {"backends", backends},
                              {"ops", ops},
                              {"exclude", exclude},
                              {"shard", {shard.index, shard.count}},
                              {"cases", args.cases},
                              {"time", args.time},
                              {"jobs", args.jobs},
                              {"reduce", args.reduce},
                              {"avoid", gaps_to_names(gaps)},
                              {"rates", parse_form_rates(args.rates)},
                              {"time_limit", args.time_limit},
                              {"compile_limit", args.compile_limit}};
    if (scheduled) {
      options["shard_from"] = {{"scheduler", scheduled->scheduler},
                               {"environment", scheduled->environment}};
    }
    const nlohmann::json versions = {{"weft", std::string(kVersion)},
                                     {"libtorch", oracle::torch_version()},
                                     {"z3", gen::z3_version()}};
    return corpus::Campaign::create(args.out, options, versions);
  }();
  FuzzRun run(args, std::move(campaign));
  return run.run();
}

}  // namespace

void add_fuzz_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("fuzz", "Run a fuzz campaign");
  auto args = std::make_shared<FuzzArgs>();
  cmd->add_option("--time", args->time, "Stop after this many seconds (0: no limit)");
  cmd->add_option("--cases", args->cases,
                  "Stop when the campaign has judged this many cases (a shard: its share of them)");
  cmd->add_option("--seed", args->seed, "Campaign seed");
  cmd->add_option("--jobs", args->jobs, "Parallel jobs, one worker process each (default: cores)");
  cmd->add_option("--backends", args->backends,
                  "Comma-separated backends (default: `weft backends` available)");
  cmd->add_option("--nodes", args->nodes, "Nodes per model: N or LO-HI");
  cmd->add_option("--ops", args->ops, "Only these ops (comma-separated)");
  cmd->add_option("--exclude", args->exclude, "Never these ops");
  cmd->add_option("--out", args->out, "Campaign directory");
  cmd->add_flag("--resume", args->resume, "Continue the campaign in --out");
  cmd->add_option("--shard", args->shard,
                  "I/N: this machine's disjoint share of the case indices (default: the Slurm "
                  "array task or Kubernetes Indexed Job index, in a directory under --out)");
  cmd->add_flag("--reduce", args->reduce, "Minimize each new bucket's first case");
  std::string forms;
  for (const std::string& name : rate_form_names()) forms += (forms.empty() ? "" : ", ") + name;
  cmd->add_option("--rate", args->rates,
                  "FORM=R: the share of cases that use a program form (" + forms +
                      "), e.g. half-precision=1; repeatable");
  cmd->add_flag("!--no-learn-gaps", args->learn_gaps,
                "Do not learn the LibTorch's capability gaps (op x dtype) for the generator to "
                "avoid");
  cmd->add_option("--compile-limit", args->compile_limit,
                  "Seconds a compiling path (torch.compile, export, AOTInductor) gets on top")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--time-limit", args->time_limit, "Seconds per backend run before a timeout");
  cmd->add_option("--interval", args->interval, "Seconds between stats lines");
  cmd->callback([args] {
    run_command("fuzz", [&] {
      if (args->time <= 0 && args->cases == 0 && !::isatty(0)) {
        std::cerr << "weft fuzz: no --time or --cases: running until interrupted (Ctrl-C)\n";
      }
      return fuzz(*args);
    });
  });
}

}  // namespace weft::cli
