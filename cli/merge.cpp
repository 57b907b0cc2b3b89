// `weft merge A B ... -o C`: combines campaign directories (corpus/campaign.h describes their
// files) into a new one. Buckets with the same directory name have the same signature: their
// counts add up, their stored cases are unioned (oldest first, at most kMaxCasesPerBucket) and
// the earliest first_found wins. Reads and writes the files directly; every file is written
// atomically, and campaign.json last, so a merge that stops halfway leaves no valid campaign.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "json_fields.h"
#include "weft/corpus/campaign.h"
#include "weft/error.h"
#include "weft/io/atomic_file.h"

namespace weft::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr int kReadableSchema = 1;

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string out;
};

struct InputBucket : BucketFile {
  std::size_t input = 0;  // index into the inputs
  fs::path dir;
};

struct Input {
  fs::path dir;
  json campaign;
  std::uint64_t cases = 0;
  double elapsed = 0;
  std::string stats;  // stats.jsonl, each line newline-terminated
  std::map<std::string, InputBucket> buckets;
};

InputBucket read_bucket(const fs::path& dir, std::size_t input) {
  InputBucket bucket;
  static_cast<BucketFile&>(bucket) = read_bucket_file(dir / "bucket.json");
  bucket.input = input;
  bucket.dir = dir;
  return bucket;
}

Input read_input(const fs::path& dir, std::size_t index) {
  Input input;
  input.dir = fs::absolute(dir).lexically_normal();
  const fs::path campaign_path = dir / "campaign.json";
  if (!fs::exists(campaign_path)) {
    throw Error(dir.string() + ": not a campaign directory (no campaign.json)");
  }
  const std::string source = campaign_path.string();
  input.campaign = read_json_object(campaign_path);
  const json& version = member(input.campaign, source, "weft-campaign");
  if (!version.is_number_integer()) {
    throw FormatError(source, "/weft-campaign", "expected an integer, got " + describe(version));
  }
  if (version.get<std::int64_t>() > kReadableSchema) {
    throw Error(source + ": written by a newer weft (campaign schema " +
                std::to_string(version.get<std::int64_t>()) + "; this one reads " +
                std::to_string(kReadableSchema) + ")");
  }
  for (const char* key : {"options", "versions"}) {
    if (input.campaign.contains(key) && !input.campaign[key].is_object()) {
      throw FormatError(source, std::string("/") + key,
                        "expected an object, got " + describe(input.campaign[key]));
    }
  }

  const fs::path progress_path = dir / "progress.json";
  if (fs::exists(progress_path)) {
    const json progress = read_json_object(progress_path);
    input.cases = count_member(progress, progress_path.string(), "cases");
    input.elapsed = number_member(progress, progress_path.string(), "elapsed");
  }

  const fs::path stats_path = dir / "stats.jsonl";
  if (fs::exists(stats_path)) {
    std::istringstream lines(io::read_file(stats_path));
    std::string line;
    int number = 0;
    while (std::getline(lines, line)) {
      ++number;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const json entry = json::parse(line, nullptr, false);
      if (entry.is_discarded() || !entry.is_object()) {
        throw FormatError(stats_path.string() + ":" + std::to_string(number), "",
                          "expected one JSON object per line");
      }
      input.stats += line + "\n";
    }
  }

  const fs::path bugs = dir / "bugs";
  if (fs::is_directory(bugs)) {
    for (const fs::directory_entry& entry : fs::directory_iterator(bugs)) {
      // A bucket directory without bucket.json is one a killed campaign was still writing.
      if (!entry.is_directory() || !fs::exists(entry.path() / "bucket.json")) continue;
      input.buckets.emplace(entry.path().filename().string(), read_bucket(entry.path(), index));
    }
  }
  return input;
}

std::string now_utc() {
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return stamp;
}

// C may be missing or an empty directory; anything else is refused before anything is read.
void check_output(const fs::path& out) {
  if (!fs::exists(out)) return;
  if (!fs::is_directory(out)) throw Error(out.string() + ": exists and is not a directory");
  if (!fs::is_empty(out)) {
    throw Error(out.string() + ": exists and is not empty (merge writes a new campaign directory)");
  }
}

int run_merge(const MergeArgs& args) {
  const fs::path out(args.out);
  check_output(out);
  std::vector<Input> inputs;
  std::set<fs::path> seen;
  for (std::size_t i = 0; i < args.inputs.size(); ++i) {
    inputs.push_back(read_input(args.inputs[i], i));
    if (!seen.insert(inputs.back().dir).second) {
      throw Error(args.inputs[i] + ": given twice (its bugs would be counted twice)");
    }
  }

  // Every bucket name, with the inputs that hold it in input order.
  std::map<std::string, std::vector<const InputBucket*>> by_name;
  for (const Input& input : inputs) {
    for (const auto& [name, bucket] : input.buckets) by_name[name].push_back(&bucket);
  }

  fs::create_directories(out / "bugs");
  std::uint64_t total = 0;
  for (const auto& [name, parts] : by_name) {
    const InputBucket& first = *parts.front();
    fs::create_directories(out / "bugs" / name);
    const std::string signature = first.document["signature"].get<std::string>();
    json merged = first.document;
    std::uint64_t count = 0;
    double first_found = first.first_found;
    const InputBucket* earliest = &first;
    std::vector<std::string> cases;
    std::vector<std::string> per_input;
    for (const InputBucket* part : parts) {
      const std::string other = part->document["signature"].get<std::string>();
      if (other != signature) {
        throw Error(fmt::format("{}: signature '{}' differs from '{}' in {} for the same bucket",
                                (part->dir / "bucket.json").string(), other, signature,
                                (first.dir / "bucket.json").string()));
      }
      count += part->count;
      per_input.push_back(std::to_string(part->count));
      if (part->first_found < first_found) {
        first_found = part->first_found;
        earliest = part;
      }
      for (const std::string& case_name : part->cases) {
        if (cases.size() >= corpus::kMaxCasesPerBucket) break;
        if (std::find(cases.begin(), cases.end(), case_name) != cases.end()) continue;
        const fs::path from = part->dir / case_name;
        if (!fs::is_directory(from)) {
          std::cerr << "weft merge: warning: " << from.string() << ": listed in bucket.json but "
                    << "missing; skipped\n";
          continue;
        }
        fs::copy(from, out / "bugs" / name / case_name, fs::copy_options::recursive);
        cases.push_back(case_name);
      }
    }
    const bool earliest_stored =
        std::find(cases.begin(), cases.end(), earliest->first_case) != cases.end();
    merged["count"] = count;
    merged["cases"] = cases;
    merged["first_found"] = first_found;
    merged["first_case"] =
        earliest_stored ? earliest->first_case : (cases.empty() ? first.first_case : cases.front());
    io::write_file_atomically(out / "bugs" / name / "bucket.json", merged.dump(2) + "\n");
    total += count;
    std::string sum;
    for (const std::string& part : per_input) sum += (sum.empty() ? "" : "+") + part;
    std::cout << fmt::format(
        "{}  count {} ({} from {} input{})  {} case{} stored  first found "
        "{:.1f} s\n",
        name, count, sum, parts.size(), parts.size() == 1 ? "" : "s", cases.size(),
        cases.size() == 1 ? "" : "s", first_found);
  }

  std::string stats;
  json progress = {
      {"done_below", 0}, {"done_above", json::array()}, {"cases", 0}, {"elapsed", 0.0}};
  std::uint64_t cases = 0;
  double elapsed = 0;
  json merged_from = json::array();
  for (const Input& input : inputs) {
    stats += input.stats;
    cases += input.cases;
    elapsed = std::max(elapsed, input.elapsed);
    merged_from.push_back(input.dir.string());
  }
  progress["cases"] = cases;
  progress["elapsed"] = elapsed;
  if (!stats.empty()) io::write_file_atomically(out / "stats.jsonl", stats);
  io::write_file_atomically(out / "progress.json", progress.dump(2) + "\n");
  const json campaign = {{"weft-campaign", corpus::kCampaignVersion},
                         {"created", now_utc()},
                         {"merged_from", merged_from},
                         {"options", inputs.front().campaign.value("options", json::object())},
                         {"versions", inputs.front().campaign.value("versions", json::object())}};
  io::write_file_atomically(out / "campaign.json", campaign.dump(2) + "\n");
  std::cout << fmt::format(
      "merged {} campaigns into {}: {} buckets, {} buggy cases, {} cases "
      "judged\n",
      inputs.size(), out.string(), by_name.size(), total, cases);
  return 0;
}

}  // namespace

void add_merge_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("merge", "Merge campaign directories into a new one");
  auto args = std::make_shared<MergeArgs>();
  cmd->add_option("inputs", args->inputs, "Campaign directories to merge")->required();
  cmd->add_option("-o,--output", args->out, "The new campaign directory (missing or empty)")
      ->required();
  cmd->callback([args] { run_command("merge", [&] { return run_merge(*args); }); });
}

}  // namespace weft::cli
