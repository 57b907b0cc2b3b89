#pragma once
// A campaign directory (DESIGN.md "Data at rest"): what `weft fuzz` writes, `weft report`
// renders and `weft merge` combines. Every file is written to a temporary name and renamed
// into place, so a campaign killed at any moment (SIGKILL included) leaves only whole files,
// and `--resume` continues without losing or duplicating a bucket or a case.
//
//   DIR/campaign.json   {"weft-campaign": 1, "created": "2026-11-29T23:40:00Z",
//                        "versions": {"weft": "0.1.0", "libtorch": "1.13.0", "z3": "4.8.12"},
//                        "options": {"seed": 1, "nodes": [5, 10], "backends": [...],
//                                    "ops": [...], "exclude": [...], "shard": [0, 1],
//                                    "cases": 0, "time": 60, "jobs": 2, "reduce": false}}
//   DIR/progress.json   {"done_below": 120, "done_above": [122, 125], "cases": 123,
//                        "elapsed": 61.5, "state": "running", "updated": 1796316432.5}:
//                        positions < done_below are all done, plus those listed; a position
//                        is the case index itself, or in a shard I/N (then "shard": [I, N]
//                        is written too) the k of its k-th index I + k*N, so that a shard's
//                        file stays small; cases = how many were judged; elapsed = seconds
//                        of campaign time before this run (a resumed run adds its own);
//                        state = "running", "finished" (its stopping rule was met) or
//                        "stopped" (a signal or an error); updated = Unix time of the write
//                        (a "running" campaign whose updated lies far back has died); owner =
//                        "host:pid" of the writer.
//   DIR/stats.jsonl     one JSON object per line, one line per interval:
//                        {"elapsed": 10.0, "cases": 500, "cases_per_second": 50.0,
//                         "buckets": 3, "bugs": 7, "by_symptom": {"wrong-output": 5, ...},
//                         "worker_restarts": 1, "ops": {"conv2d": 40, ...},
//                         "forms": {"forward-only": 90, ...} (cases per ir::program_forms),
//                         "phases": {"generate": 1.2, "execute": 7.5, "judge": 0.4, "io": 0.1}}
//                        (phases: seconds summed over jobs since the start)
//   DIR/bugs/<bucket>/bucket.json
//                       {"signature": "wrong-output|torchscript-ofi|conv2d|", "symptom":
//                        "wrong-output", "backend": "torchscript-ofi", "op": "conv2d",
//                        "ops": ["conv2d"] (every op its cases were localized to),
//                        "message": "...", "count": 4, "first_case": "case-000000000017",
//                        "cases": ["case-000000000017", ...], "first_found": 12.5,
//                        "last_counted": "case-000000000031"}
//                        (count = every case that showed it; cases = those stored: the
//                        kMaxCasesPerBucket lowest case indices, sorted; first_found =
//                        campaign seconds; last_counted = the case of the last count: when
//                        progress.json does not list it as done, the campaign died between
//                        the two writes, and open() takes the count back, since the case will
//                        be judged and counted again)
//   DIR/bugs/<bucket>/<case>/graph.json, values.safetensors, verdict.json, repro.py
//                       (+ reduced/ with the same files when the case was reduced)
//   DIR/unsupported.json [{"signature": ..., "backend": "torch", "op": "pad", "dtypes":
//                        ["int64"], "message": ..., "count": 3, "first_case": "case-..."}]:
//                        capability gaps (eager refused what the engine ran), not bugs;
//                        written with progress.json
//   DIR/report.html     written by `weft report`
//
// <bucket> = "<symptom>-<backend>-<op>-<8 hex digits of FNV-1a of the signature>", with
// characters outside [A-Za-z0-9_.-] replaced by '_' ("wrong-output-torchscript-ofi-conv2d-
// 1a2b3c4d"); <case> = "case-" + the case index, 12 digits.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "weft/corpus/test_case.h"

namespace weft::corpus {

inline constexpr int kCampaignVersion = 1;
inline constexpr std::size_t kMaxCasesPerBucket = 5;

// "wrong-output-torchscript-ofi-conv2d-1a2b3c4d" for a signature and its parts.
std::string bucket_name(const std::string& signature, const std::string& symptom,
                        const std::string& backend, const std::string& op);
// "case-000000000017".
std::string case_name(std::uint64_t index);

struct Bucket {
  std::string name;  // directory name
  std::string signature;
  std::string symptom;
  std::string backend;
  std::string op;                // the op of the first case
  std::vector<std::string> ops;  // every op a case of the bucket was localized to, first seen first
  std::string message;
  std::uint64_t count = 0;
  std::vector<std::string> cases;  // stored case directories, oldest first
  double first_found = 0;
  std::string last_counted;  // the case of the last count (see bucket.json above)
};

nlohmann::json bucket_to_json(const Bucket& bucket);
Bucket bucket_from_json(const nlohmann::json& document, const std::string& source);

// One capability gap of the PyTorch under test (weft/oracle/judge.h Unsupported): eager
// refused a case the engine ran, for want of a kernel. Not a bug: kept in unsupported.json.
struct Gap {
  std::string signature;  // "unsupported|torch|reflection_pad|<normalized message>"
  std::string backend;
  std::string op;
  std::vector<std::string> dtypes;  // the first case's input dtypes of the op
  std::string message;
  std::uint64_t count = 0;
  std::string first_case;
};
// A campaign's unsupported.json, by signature; FormatError naming the file, the entry and the
// field when it is malformed.
std::map<std::string, Gap> read_gaps(const std::filesystem::path& path);
// unsupported.json's array, in signature order.
nlohmann::json gaps_to_json(const std::map<std::string, Gap>& gaps);

// Which case indices are done. A shard I/N judges indices I, I + N, I + 2N, ...: its k-th is
// at position k, and positions are what done_below and done_above count.
struct Progress {
  std::uint64_t shard_index = 0;
  std::uint64_t shard_count = 1;
  std::uint64_t done_below = 0;           // positions
  std::vector<std::uint64_t> done_above;  // positions, sorted
  std::uint64_t cases = 0;
  double elapsed = 0;
  std::string state = "running";  // "running", "finished" or "stopped"
  double updated = 0;             // Unix seconds of the last write
  std::string owner;              // "host:pid" of the process that wrote it

  bool done(std::uint64_t index) const;  // false for an index of another shard
  void mark(std::uint64_t index);        // and advances done_below over contiguous positions
  std::vector<std::uint64_t> done_indices() const;  // every done case index, ascending
};
nlohmann::json progress_to_json(const Progress& progress);
// FormatError naming `source` and the field when malformed.
Progress progress_from_json(const nlohmann::json& document, const std::string& source);

// Seconds since the Unix epoch, as progress.json's "updated" counts them.
double unix_seconds();
// This machine's host name: progress.json's "owner" is "<this_host()>:<pid>".
std::string this_host();

// The index of a case directory name ("case-000000000017" -> 17), or nothing.
std::optional<std::uint64_t> case_index(const std::string& case_dir_name);

class Campaign {
 public:
  // Creates DIR (which must not hold a campaign.json) with `options` in campaign.json.
  // Throws weft::Error naming the directory when it already holds a campaign.
  static Campaign create(const std::filesystem::path& dir, const nlohmann::json& options,
                         const nlohmann::json& versions);
  // Opens an existing campaign to resume or read it. Throws weft::FormatError naming the file
  // and field for a damaged campaign.json/progress.json/bucket.json, and weft::Error for one
  // written by a newer schema ("written by a newer weft (campaign schema 2; this one reads 1)").
  // `with_stats` false leaves stats.jsonl unread (stats() is then empty).
  static Campaign open(const std::filesystem::path& dir, bool with_stats = true);

  const std::filesystem::path& dir() const { return dir_; }
  const nlohmann::json& document() const { return document_; }  // campaign.json
  const nlohmann::json& options() const { return document_.at("options"); }
  const Progress& progress() const { return progress_; }
  const std::map<std::string, Bucket>& buckets() const { return buckets_; }  // by name
  const std::map<std::string, Gap>& gaps() const { return gaps_; }           // by signature

  // Records one case that showed `signature`: bumps the bucket's count and, when the case is
  // among the kMaxCasesPerBucket lowest indices of the bucket, writes the case directory
  // (graph, values, verdict, repro script) before bucket.json. Returns true when the bucket
  // is new. Idempotent for a case already stored (a resumed campaign re-judging it).
  // `repro_script` is called only when the case is stored (most findings only count).
  bool record(const Bucket& finding, const std::string& case_dir_name, const TestCase& test_case,
              const nlohmann::json& verdict, const std::function<std::string()>& repro_script);
  // Counts one case that showed capability gap `gap` (in memory; save_progress writes
  // unsupported.json). Returns true when the gap is new.
  bool record_gap(const Gap& gap);
  // Marks case `index` done (after its findings were recorded), in memory.
  void mark_done(std::uint64_t index, double elapsed);
  // Writes progress.json. The loop calls it after every case with a finding and every few
  // seconds: a campaign killed in between judges the cases since then again, which record()
  // makes harmless.
  void save_progress();
  // What progress.json will say of this run ("running", "finished", "stopped"), in memory.
  void set_state(const std::string& state) { progress_.state = state; }
  // Appends one line to stats.jsonl (rewritten atomically).
  void append_stats(const nlohmann::json& line);
  // The lines of stats.jsonl.
  std::vector<nlohmann::json> stats() const;

 private:
  std::filesystem::path dir_;
  nlohmann::json document_;
  Progress progress_;
  std::map<std::string, Bucket> buckets_;
  std::map<std::string, Gap> gaps_;
  std::string stats_text_;
};

}  // namespace weft::corpus
