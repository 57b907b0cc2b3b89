// `weft merge A B ... -o C`: combines campaign directories (corpus/campaign.h describes their
// files) into a new one; an input that is not a campaign but holds shard directories
// (ROOT/shard-0-of-8, ... written by `weft fuzz` on a cluster) stands for all of them. Buckets
// with the same directory name have the same signature: their counts add up, they keep the
// kMaxCasesPerBucket lowest case indices of all inputs (as one campaign would) and the
// earliest first_found. `--watch` repeats the merge every few seconds while the shards run,
// copying only what is new, shows every shard's progress (a shard that stopped writing is
// "stale", not lost) and ends when every shard has finished. Inputs are read only through
// whole files (every campaign file is written atomically); every output file is written
// atomically too, and campaign.json last, so a merge that stops halfway leaves no valid
// campaign.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "commands.h"
#include "json_fields.h"
#include "merge.h"
#include "weft/corpus/campaign.h"
#include "weft/corpus/shard.h"
#include "weft/error.h"
#include "weft/io/atomic_file.h"

namespace weft::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string out;
  bool watch = false;
  double interval = 10;
  double stale = 120;
};

std::atomic<int> g_stop{0};
void on_stop_signal(int) {
  if (g_stop.fetch_add(1) >= 1) ::_exit(130);
}

std::string utc_stamp() {
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return stamp;
}

// The campaign directories an input stands for: itself, or the shard directories under it.
std::vector<fs::path> expand_input(const fs::path& input, bool watch) {
  if (fs::exists(input / "campaign.json")) return {fs::absolute(input).lexically_normal()};
  if (!fs::is_directory(input)) {
    // A watched root may not exist before the first shard starts.
    if (watch) return {};
    throw Error(input.string() + ": not a campaign directory (no campaign.json)");
  }
  std::vector<fs::path> shards;
  for (const fs::directory_entry& entry : fs::directory_iterator(input)) {
    if (entry.is_directory() && fs::exists(entry.path() / "campaign.json")) {
      shards.push_back(fs::absolute(entry.path()).lexically_normal());
    }
  }
  std::sort(shards.begin(), shards.end());
  if (shards.empty() && !watch) {
    throw Error(input.string() +
                ": not a campaign directory (no campaign.json) and no shard directories under it");
  }
  return shards;
}

struct Input {
  fs::path dir;
  corpus::Campaign campaign;  // opened without its stats
  corpus::Shard shard;
  std::uint64_t target = 0;  // the shard's cases under the campaign's --cases (0: by time)
  std::shared_ptr<const std::vector<json>> stats;  // thinned (StatsCache)
};

// The stats lines the merge keeps of one input: the last line of each run (what the report
// sums) and at most kChartLines others, evenly spaced (what it draws). Parsed again only when
// the file changed: a watcher over a night's shards would otherwise parse gigabytes a round.
class StatsCache {
 public:
  static constexpr std::size_t kChartLines = 100;

  std::shared_ptr<const std::vector<json>> lines(const fs::path& dir) {
    const fs::path path = dir / "stats.jsonl";
    std::error_code error;
    const auto size = fs::file_size(path, error);
    if (error) return std::make_shared<const std::vector<json>>();
    const auto time = fs::last_write_time(path, error);
    Entry& entry = entries_[path];
    if (entry.lines && entry.size == size && entry.time == time) return entry.lines;
    entry.size = size;
    entry.time = time;
    entry.lines = std::make_shared<const std::vector<json>>(thinned(read(path)));
    return entry.lines;
  }

 private:
  struct Entry {
    std::uintmax_t size = 0;
    fs::file_time_type time;
    std::shared_ptr<const std::vector<json>> lines;
  };

  static std::vector<json> read(const fs::path& path) {
    std::vector<json> lines;
    std::istringstream text(io::read_file(path));
    std::string line;
    int number = 0;
    while (std::getline(text, line)) {
      ++number;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      json entry = json::parse(line, nullptr, false);
      if (entry.is_discarded() || !entry.is_object() || !entry.contains("elapsed") ||
          !entry["elapsed"].is_number()) {
        throw FormatError(path.string() + ":" + std::to_string(number), "",
                          "expected one JSON object with \"elapsed\" per line");
      }
      lines.push_back(std::move(entry));
    }
    return lines;
  }

  static std::vector<json> thinned(std::vector<json> lines) {
    const auto restarts = [&](std::size_t i) {  // line i + 1 starts another run
      return lines[i + 1]["elapsed"].get<double>() < lines[i]["elapsed"].get<double>() ||
             lines[i + 1].value("run_elapsed", 0.0) < lines[i].value("run_elapsed", 0.0);
    };
    const std::size_t step =
        std::max<std::size_t>(1, (lines.size() + kChartLines - 1) / kChartLines);
    std::vector<json> kept;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (i % step == 0 || i + 1 == lines.size() || restarts(i))
        kept.push_back(std::move(lines[i]));
    }
    return kept;
  }

  std::map<fs::path, Entry> entries_;
};

Input read_input(const fs::path& dir, StatsCache& cache) {
  Input input{dir, corpus::Campaign::open(dir, false), {}, 0, cache.lines(dir)};
  input.shard = {input.campaign.progress().shard_index, input.campaign.progress().shard_count};
  const json& options = input.campaign.options();
  if (options.contains("cases") && options["cases"].is_number_unsigned()) {
    input.target = corpus::shard_case_count(options["cases"].get<std::uint64_t>(), input.shard);
  }
  return input;
}

// The state a watcher shows for a shard.
std::string shard_state(const corpus::Progress& progress, double now, double stale) {
  if (progress.state != "running") return progress.state;
  if (progress.updated > 0 && now - progress.updated > stale) return "stale";
  return "running";
}

// Copies a case directory whole or not at all (a shard may evict it meanwhile).
bool copy_whole(const fs::path& from, const fs::path& to) {
  const fs::path temporary =
      to.parent_path() / fmt::format(".{}.tmp-{}", to.filename().string(), ::getpid());
  std::error_code error;
  fs::remove_all(temporary, error);
  fs::copy(from, temporary, fs::copy_options::recursive, error);
  if (!error) fs::rename(temporary, to, error);
  if (error) fs::remove_all(temporary, error);
  return fs::exists(to);
}

// The merged directory, rewritten round after round: case directories are copied once, and a
// file is rewritten only when its text changes.
class MergedOutput {
 public:
  explicit MergedOutput(fs::path out) : out_(std::move(out)) {}

  // C may be missing, empty, or (for a restarted watcher) an earlier merge of these inputs.
  void check(const std::vector<std::string>& merged_from) const {
    if (!fs::exists(out_)) return;
    if (!fs::is_directory(out_)) throw Error(out_.string() + ": exists and is not a directory");
    if (fs::is_empty(out_)) return;
    if (fs::exists(out_ / "campaign.json")) {
      // A restarted watcher: every input of the earlier merge is still an input.
      const json campaign = read_json_object(out_ / "campaign.json");
      const json earlier = campaign.value("merged_from", json());
      const auto input = [&](const json& dir) {
        return dir.is_string() && std::find(merged_from.begin(), merged_from.end(),
                                            dir.get<std::string>()) != merged_from.end();
      };
      if (earlier.is_array() && !earlier.empty() &&
          std::all_of(earlier.begin(), earlier.end(), input))
        return;
    }
    throw Error(out_.string() +
                ": exists and is not empty (merge writes a new campaign directory, or updates "
                "its own merge of the same inputs)");
  }

  struct Summary {
    std::size_t buckets = 0;
    std::uint64_t bugs = 0;
    std::uint64_t cases = 0;
    std::vector<std::string> lines;  // one per bucket
  };

  Summary write(const std::vector<Input>& inputs, const json& shards, bool all_finished) {
    Summary summary;
    fs::create_directories(out_ / "bugs");
    std::map<std::string, std::vector<std::pair<const Input*, const corpus::Bucket*>>> by_name;
    for (const Input& input : inputs) {
      for (const auto& [name, bucket] : input.campaign.buckets())
        by_name[name].emplace_back(&input, &bucket);
    }
    for (const auto& [name, parts] : by_name) {
      summary.bugs += write_bucket(name, parts, summary.lines);
    }
    summary.buckets = by_name.size();

    std::map<std::string, corpus::Gap> gaps;
    std::string stats;
    corpus::Progress progress;
    json per_input = json::array();
    std::vector<std::string> merged_from;
    for (const Input& input : inputs) {
      for (const auto& [signature, gap] : input.campaign.gaps()) {
        auto [it, fresh] = gaps.emplace(signature, gap);
        if (fresh) continue;
        it->second.count += gap.count;
        if (gap.first_case < it->second.first_case) {
          it->second.first_case = gap.first_case;
          it->second.dtypes = gap.dtypes;
        }
      }
      // Each line says which input's series it belongs to (weft report draws them summed).
      for (json line : *input.stats) {
        line["input"] = per_input.size();
        stats += line.dump() + "\n";
      }
      progress.cases += input.campaign.progress().cases;
      progress.elapsed = std::max(progress.elapsed, input.campaign.progress().elapsed);
      json entry = corpus::progress_to_json(input.campaign.progress());
      entry["dir"] = input.dir.string();
      per_input.push_back(entry);
      merged_from.push_back(input.dir.string());
    }
    progress.done_below = done_below(inputs);
    progress.state = all_finished ? "finished" : "running";
    progress.updated = corpus::unix_seconds();
    summary.cases = progress.cases;

    if (!gaps.empty()) update("unsupported.json", corpus::gaps_to_json(gaps).dump(1) + "\n");
    if (!stats.empty()) update("stats.jsonl", stats);
    json progress_json = corpus::progress_to_json(progress);
    progress_json["inputs"] = per_input;
    io::write_file_atomically(out_ / "progress.json", progress_json.dump(1) + "\n");
    update("shards.json", shards.dump(1) + "\n");
    if (!inputs.empty()) {
      const json& first = inputs.front().campaign.document();
      json options = first.value("options", json::object());
      if (options.contains("shard")) options["shard"] = {0, 1};
      options.erase("shard_from");
      if (created_.empty()) created_ = utc_stamp();
      const json campaign = {{"weft-campaign", corpus::kCampaignVersion},
                             {"created", created_},
                             {"merged_from", merged_from},
                             {"options", options},
                             {"versions", first.value("versions", json::object())}};
      update("campaign.json", campaign.dump(2) + "\n");
    }
    return summary;
  }

 private:
  // Writes OUT/name when its text differs from what this merge wrote there last.
  void update(const std::string& name, const std::string& text) {
    std::string& last = written_[name];
    if (last == text && fs::exists(out_ / name)) return;
    io::write_file_atomically(out_ / name, text);
    last = text;
  }

  std::uint64_t write_bucket(
      const std::string& name,
      const std::vector<std::pair<const Input*, const corpus::Bucket*>>& parts,
      std::vector<std::string>& lines) {
    const corpus::Bucket& first = *parts.front().second;
    corpus::Bucket merged = first;
    merged.count = 0;
    merged.cases.clear();
    merged.last_counted.clear();
    std::map<std::string, fs::path> candidates;  // case name -> the input's case directory
    std::string sum;
    for (const auto& [input, part] : parts) {
      if (part->signature != first.signature) {
        throw Error(fmt::format("{}: signature '{}' differs from '{}' in {} for the same bucket",
                                (input->dir / "bugs" / name / "bucket.json").string(),
                                part->signature, first.signature,
                                (parts.front().first->dir / "bugs" / name).string()));
      }
      merged.count += part->count;
      sum += (sum.empty() ? "" : "+") + std::to_string(part->count);
      if (part->first_found < merged.first_found) merged.first_found = part->first_found;
      for (const std::string& op : part->ops) {
        if (std::find(merged.ops.begin(), merged.ops.end(), op) == merged.ops.end())
          merged.ops.push_back(op);
      }
      for (const std::string& case_name : part->cases)
        candidates.emplace(case_name, input->dir / "bugs" / name / case_name);
    }
    const fs::path bucket_dir = out_ / "bugs" / name;
    fs::create_directories(bucket_dir);
    // The lowest case indices of all inputs (case names sort by index), as one campaign keeps.
    for (const auto& [case_name, from] : candidates) {
      if (merged.cases.size() >= corpus::kMaxCasesPerBucket) break;
      const fs::path to = bucket_dir / case_name;
      if (!fs::exists(to) && !copy_whole(from, to)) continue;  // gone: the next round sees why
      // A campaign reducing the case writes reduced/ after storing it.
      if (fs::is_directory(from / "reduced") && !fs::exists(to / "reduced"))
        copy_whole(from / "reduced", to / "reduced");
      merged.cases.push_back(case_name);
    }
    update("bugs/" + name + "/bucket.json", corpus::bucket_to_json(merged).dump(2) + "\n");
    // Cases no longer among the lowest go once bucket.json no longer lists them, and so do
    // the half-copied directories of a watcher that was killed.
    for (const fs::directory_entry& entry : fs::directory_iterator(bucket_dir)) {
      const std::string case_name = entry.path().filename().string();
      const bool unlisted =
          corpus::case_index(case_name) &&
          std::find(merged.cases.begin(), merged.cases.end(), case_name) == merged.cases.end();
      const bool half_copied = case_name.rfind(".case-", 0) == 0;
      if (entry.is_directory() && (unlisted || half_copied)) fs::remove_all(entry.path());
    }
    std::string line =
        fmt::format("{}  count {} ({} from {} input{})  {} case{} stored  first found {:.1f} s",
                    name, merged.count, sum, parts.size(), parts.size() == 1 ? "" : "s",
                    merged.cases.size(), merged.cases.size() == 1 ? "" : "s", merged.first_found);
    lines.push_back(line);
    return merged.count;
  }

  // The first case index that no input has judged: every index below it is done.
  static std::uint64_t done_below(const std::vector<Input>& inputs) {
    if (inputs.empty()) return 0;
    std::map<std::uint64_t, std::vector<const corpus::Progress*>> by_count;  // N -> by I
    for (const Input& input : inputs) {
      std::vector<const corpus::Progress*>& shards = by_count[input.shard.count];
      shards.resize(input.shard.count, nullptr);
      if (shards[input.shard.index] == nullptr)
        shards[input.shard.index] = &input.campaign.progress();
    }
    for (std::uint64_t index = 0;; ++index) {
      bool done = false;
      for (const auto& [count, shards] : by_count) {
        const corpus::Progress* owner = shards[index % count];
        if (owner != nullptr && owner->done(index)) {
          done = true;
          break;
        }
      }
      if (!done) return index;
    }
  }

  fs::path out_;
  std::string created_;
  std::map<std::string, std::string> written_;
};

struct Round {
  std::vector<Input> inputs;
  json shards = json::array();  // each input's and each missing shard's status
  bool all_finished = false;
  std::vector<std::string> status_lines;
};

Round read_round(const MergeArgs& args, StatsCache& cache) {
  Round round;
  std::set<fs::path> seen;
  for (const std::string& input : args.inputs) {
    for (const fs::path& dir : expand_input(input, args.watch)) {
      if (!seen.insert(dir).second) {
        throw Error(dir.string() + ": given twice (its bugs would be counted twice)");
      }
      round.inputs.push_back(read_input(dir, cache));
    }
  }
  // The shards every sharded campaign should have: the ones with no directory have not started.
  const double now = corpus::unix_seconds();
  std::map<std::uint64_t, std::set<std::uint64_t>> present;  // N -> indices
  bool all_finished = !round.inputs.empty();
  for (const Input& input : round.inputs) {
    const corpus::Progress& progress = input.campaign.progress();
    const std::string state = shard_state(progress, now, args.stale);
    all_finished = all_finished && state == "finished";
    present[input.shard.count].insert(input.shard.index);
    const double age = progress.updated > 0 ? now - progress.updated : -1;
    round.shards.push_back({{"dir", input.dir.string()},
                            {"shard", {input.shard.index, input.shard.count}},
                            {"state", state},
                            {"cases", progress.cases},
                            {"target", input.target},
                            {"elapsed", progress.elapsed},
                            {"updated", progress.updated}});
    const double rate =
        progress.elapsed > 0 ? static_cast<double>(progress.cases) / progress.elapsed : 0.0;
    std::string line =
        fmt::format("  shard {}/{}  {:<11} {} cases{}  {:.1f}/s  {} buckets", input.shard.index,
                    input.shard.count, state, progress.cases,
                    input.target > 0 ? fmt::format(" of {}", input.target) : std::string(), rate,
                    input.campaign.buckets().size());
    if (state == "stale") {
      line += fmt::format(
          "  (no update for {:.0f} s: its task died or hangs; a requeued task or "
          "`weft fuzz --resume --out {}` continues it)",
          age, input.dir.string());
    } else if (state == "stopped") {
      line += "  (stopped early; a requeued task or `weft fuzz --resume` continues it)";
    }
    round.status_lines.push_back(line);
  }
  for (const auto& [count, indices] : present) {
    if (count < 2) continue;
    for (std::uint64_t index = 0; index < count; ++index) {
      if (indices.count(index)) continue;
      all_finished = false;
      round.shards.push_back({{"shard", {index, count}}, {"state", "not started"}});
      round.status_lines.push_back(fmt::format("  shard {}/{}  not started", index, count));
    }
  }
  round.all_finished = all_finished;
  return round;
}

int run_merge(const MergeArgs& args) {
  if (args.watch) {
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
  }
  MergedOutput output{fs::path(args.out)};
  StatsCache cache;
  bool checked = false;
  while (true) {
    Round round = read_round(args, cache);
    if (!checked) {
      std::vector<std::string> merged_from;
      for (const Input& input : round.inputs) merged_from.push_back(input.dir.string());
      output.check(merged_from);
      checked = true;
    }
    if (round.inputs.empty()) {
      std::cerr << fmt::format("[{}] no shard directory yet\n", utc_stamp());
    } else {
      const MergedOutput::Summary summary =
          output.write(round.inputs, round.shards, round.all_finished);
      if (!args.watch) {
        for (const std::string& line : summary.lines) std::cout << line << "\n";
        std::cout << fmt::format(
            "merged {} campaigns into {}: {} buckets, {} buggy cases, {} cases judged\n",
            round.inputs.size(), args.out, summary.buckets, summary.bugs, summary.cases);
        return 0;
      }
      std::cout << fmt::format("[{}] {} shards, {} cases, {} buckets, {} buggy cases -> {}{}\n",
                               utc_stamp(), round.shards.size(), summary.cases, summary.buckets,
                               summary.bugs, args.out,
                               round.all_finished ? " (every shard finished)" : "");
      for (const std::string& line : round.status_lines) std::cout << line << "\n";
      std::cout << std::flush;
    }
    if (round.all_finished || g_stop.load() > 0) return 0;
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(args.interval);
    while (g_stop.load() == 0 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

}  // namespace

bool holds_shards(const fs::path& dir) {
  return fs::is_directory(dir) && !fs::exists(dir / "campaign.json") &&
         !expand_input(dir, true).empty();
}

void merge_into(const std::vector<std::string>& inputs, const fs::path& out) {
  MergeArgs args;
  args.inputs = inputs;
  args.out = out.string();
  StatsCache cache;
  Round round = read_round(args, cache);
  MergedOutput output{out};
  output.check({});
  output.write(round.inputs, round.shards, round.all_finished);
}

void add_merge_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "merge", "Merge campaign directories (or roots of shard directories) into one");
  auto args = std::make_shared<MergeArgs>();
  cmd->add_option("inputs", args->inputs,
                  "Campaign directories, or roots holding a sharded campaign's shard directories")
      ->required();
  cmd->add_option("-o,--output", args->out,
                  "The merged campaign directory (missing, empty, or this merge's own)")
      ->required();
  cmd->add_flag("--watch", args->watch,
                "Merge again every --interval seconds while the shards run, showing each shard; "
                "ends when every shard has finished (or on Ctrl-C)");
  cmd->add_option("--interval", args->interval, "Seconds between two merges under --watch")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--stale", args->stale,
                  "A running shard whose progress is older than this many seconds is stale")
      ->check(CLI::PositiveNumber);
  cmd->callback([args] { run_command("merge", [&] { return run_merge(*args); }); });
}

}  // namespace weft::cli
