// Campaign directories (weft/corpus/campaign.h): creation, resumption, buckets, progress and
// statistics, every file written atomically.
#include "weft/corpus/campaign.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string_view>
#include <tuple>

#include "weft/error.h"
#include "weft/io/atomic_file.h"

namespace weft::corpus {

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::json read_json(const fs::path& path) {
  try {
    return nlohmann::json::parse(read_text(path));
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(path.string(), "", std::string("not valid JSON: ") + e.what());
  }
}

void write_json(const fs::path& path, const nlohmann::json& document) {
  io::write_file_atomically(path, document.dump(1) + "\n");
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

template <typename T>
T field(const nlohmann::json& document, const char* name, const std::string& source) {
  if (!document.is_object() || !document.contains(name)) {
    throw FormatError(source, std::string("/") + name, "missing");
  }
  try {
    return document.at(name).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw FormatError(source, std::string("/") + name, "has the wrong type");
  }
}

// "host:pid" of this process.
std::string this_process() {
  return this_host() + ":" + std::to_string(::getpid());
}

// The shard [I, N] of a campaign's options (unsharded: [0, 1]).
std::pair<std::uint64_t, std::uint64_t> shard_of(const nlohmann::json& options,
                                                 const std::string& source) {
  if (!options.contains("shard")) return {0, 1};
  const nlohmann::json& shard = options.at("shard");
  if (!shard.is_array() || shard.size() != 2 || !shard[0].is_number_integer() ||
      !shard[1].is_number_integer() || shard[0].get<std::int64_t>() < 0 ||
      shard[1].get<std::int64_t>() <= shard[0].get<std::int64_t>()) {
    throw FormatError(source, "/options/shard", "expected [I, N] with 0 <= I < N");
  }
  return {shard[0].get<std::uint64_t>(), shard[1].get<std::uint64_t>()};
}

}  // namespace

std::string bucket_name(const std::string& signature, const std::string& symptom,
                        const std::string& backend, const std::string& op) {
  std::uint32_t hash = 2166136261u;
  for (unsigned char c : signature) {
    hash ^= c;
    hash *= 16777619u;
  }
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", hash);
  // A signature that leaves the op out (a message is the root cause wherever it happened)
  // names no op: its bucket holds every op that showed it.
  std::string named = op.empty() ? "unlocalized" : op;
  const std::size_t first = signature.find('|');
  const std::size_t second = first == std::string::npos ? first : signature.find('|', first + 1);
  if (second != std::string::npos && signature.compare(second, 2, "||") == 0) named = "any-op";
  std::string name = symptom + "-" + backend + "-" + named + "-" + hex;
  for (char& c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) c = '_';
  }
  return name;
}

Progress progress_from_json(const nlohmann::json& document, const std::string& source) {
  Progress progress;
  if (document.is_object() && document.contains("shard")) {
    const auto shard = field<std::vector<std::uint64_t>>(document, "shard", source);
    if (shard.size() != 2 || shard[1] == 0 || shard[0] >= shard[1]) {
      throw FormatError(source, "/shard", "expected [I, N] with 0 <= I < N");
    }
    progress.shard_index = shard[0];
    progress.shard_count = shard[1];
  }
  progress.done_below = field<std::uint64_t>(document, "done_below", source);
  progress.done_above = field<std::vector<std::uint64_t>>(document, "done_above", source);
  std::sort(progress.done_above.begin(), progress.done_above.end());
  progress.cases = field<std::uint64_t>(document, "cases", source);
  progress.elapsed = field<double>(document, "elapsed", source);
  // Written before campaigns said how they ended: such a campaign is judged by its age alone.
  if (document.contains("state")) {
    progress.state = field<std::string>(document, "state", source);
    if (progress.state != "running" && progress.state != "finished" &&
        progress.state != "stopped") {
      throw FormatError(
          source, "/state",
          "expected \"running\", \"finished\" or \"stopped\", got \"" + progress.state + "\"");
    }
  }
  if (document.contains("updated")) progress.updated = field<double>(document, "updated", source);
  if (document.contains("owner")) progress.owner = field<std::string>(document, "owner", source);
  return progress;
}

nlohmann::json progress_to_json(const Progress& progress) {
  nlohmann::json document = {{"done_below", progress.done_below},
                             {"done_above", progress.done_above},
                             {"cases", progress.cases},
                             {"elapsed", progress.elapsed},
                             {"state", progress.state},
                             {"updated", progress.updated},
                             {"owner", progress.owner}};
  if (progress.shard_count > 1) {
    document["shard"] = {progress.shard_index, progress.shard_count};
  }
  return document;
}

std::string this_host() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return host;
}

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::optional<std::uint64_t> case_index(const std::string& case_dir_name) {
  constexpr std::string_view prefix = "case-";
  if (case_dir_name.size() <= prefix.size() || case_dir_name.compare(0, prefix.size(), prefix) != 0)
    return std::nullopt;
  std::uint64_t index = 0;
  for (std::size_t i = prefix.size(); i < case_dir_name.size(); ++i) {
    const char c = case_dir_name[i];
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return index;
}

std::string case_name(std::uint64_t index) {
  char text[32];
  std::snprintf(text, sizeof text, "case-%012llu", static_cast<unsigned long long>(index));
  return text;
}

nlohmann::json bucket_to_json(const Bucket& bucket) {
  return {{"signature", bucket.signature},
          {"symptom", bucket.symptom},
          {"backend", bucket.backend},
          {"op", bucket.op},
          {"ops", bucket.ops},
          {"message", bucket.message},
          {"count", bucket.count},
          {"first_case", bucket.cases.empty() ? std::string() : bucket.cases.front()},
          {"cases", bucket.cases},
          {"first_found", bucket.first_found},
          {"last_counted", bucket.last_counted}};
}

Bucket bucket_from_json(const nlohmann::json& document, const std::string& source) {
  Bucket bucket;
  bucket.signature = field<std::string>(document, "signature", source);
  bucket.symptom = field<std::string>(document, "symptom", source);
  bucket.backend = field<std::string>(document, "backend", source);
  bucket.op = field<std::string>(document, "op", source);
  if (document.is_object() && document.contains("ops")) {
    bucket.ops = field<std::vector<std::string>>(document, "ops", source);
  } else if (!bucket.op.empty()) {
    bucket.ops = {bucket.op};  // written before buckets listed their ops
  }
  bucket.message = field<std::string>(document, "message", source);
  bucket.count = field<std::uint64_t>(document, "count", source);
  bucket.cases = field<std::vector<std::string>>(document, "cases", source);
  bucket.first_found = field<double>(document, "first_found", source);
  if (document.contains("last_counted")) {
    bucket.last_counted = field<std::string>(document, "last_counted", source);
  }
  return bucket;
}

nlohmann::json gaps_to_json(const std::map<std::string, Gap>& gaps) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [signature, gap] : gaps) {
    list.push_back({{"signature", gap.signature},
                    {"backend", gap.backend},
                    {"op", gap.op},
                    {"dtypes", gap.dtypes},
                    {"message", gap.message},
                    {"count", gap.count},
                    {"first_case", gap.first_case}});
  }
  return list;
}

std::map<std::string, Gap> gaps_from_json(const nlohmann::json& document,
                                          const std::string& source) {
  if (!document.is_array()) throw FormatError(source, "", "expected an array of gaps");
  std::map<std::string, Gap> gaps;
  for (std::size_t i = 0; i < document.size(); ++i) {
    const std::string at = source + " entry " + std::to_string(i);
    Gap gap;
    gap.signature = field<std::string>(document[i], "signature", at);
    gap.backend = field<std::string>(document[i], "backend", at);
    gap.op = field<std::string>(document[i], "op", at);
    gap.dtypes = field<std::vector<std::string>>(document[i], "dtypes", at);
    gap.message = field<std::string>(document[i], "message", at);
    gap.count = field<std::uint64_t>(document[i], "count", at);
    gap.first_case = field<std::string>(document[i], "first_case", at);
    gaps[gap.signature] = std::move(gap);
  }
  return gaps;
}

std::map<std::string, Gap> read_gaps(const fs::path& path) {
  return gaps_from_json(read_json(path), path.string());
}

bool Progress::done(std::uint64_t index) const {
  if (index < shard_index || (index - shard_index) % shard_count != 0) return false;
  const std::uint64_t position = (index - shard_index) / shard_count;
  return position < done_below ||
         std::binary_search(done_above.begin(), done_above.end(), position);
}

void Progress::mark(std::uint64_t index) {
  if (index < shard_index || (index - shard_index) % shard_count != 0) {
    throw Error("case " + std::to_string(index) + " is not in shard " +
                std::to_string(shard_index) + "/" + std::to_string(shard_count));
  }
  if (done(index)) return;
  const std::uint64_t position = (index - shard_index) / shard_count;
  done_above.insert(std::upper_bound(done_above.begin(), done_above.end(), position), position);
  while (!done_above.empty() && done_above.front() == done_below) {
    done_above.erase(done_above.begin());
    ++done_below;
  }
}

std::vector<std::uint64_t> Progress::done_indices() const {
  std::vector<std::uint64_t> indices;
  indices.reserve(done_below + done_above.size());
  for (std::uint64_t position = 0; position < done_below; ++position)
    indices.push_back(shard_index + position * shard_count);
  for (std::uint64_t position : done_above) indices.push_back(shard_index + position * shard_count);
  return indices;
}

Campaign Campaign::create(const fs::path& dir, const nlohmann::json& options,
                          const nlohmann::json& versions) {
  if (fs::exists(dir / "campaign.json")) {
    throw Error(dir.string() +
                " already holds a campaign (campaign.json); use --resume to "
                "continue it or choose another --out");
  }
  fs::create_directories(dir / "bugs");
  Campaign campaign;
  campaign.dir_ = dir;
  campaign.document_ = {{"weft-campaign", kCampaignVersion},
                        {"created", utc_now()},
                        {"versions", versions},
                        {"options", options}};
  std::tie(campaign.progress_.shard_index, campaign.progress_.shard_count) =
      shard_of(options, (dir / "campaign.json").string());
  campaign.progress_.updated = unix_seconds();
  campaign.progress_.owner = this_process();
  write_json(dir / "campaign.json", campaign.document_);
  write_json(dir / "progress.json", progress_to_json(campaign.progress_));
  return campaign;
}

Campaign Campaign::open(const fs::path& dir, bool with_stats) {
  const fs::path path = dir / "campaign.json";
  if (!fs::exists(path)) throw Error(dir.string() + " holds no campaign (no campaign.json)");
  Campaign campaign;
  campaign.dir_ = dir;
  campaign.document_ = read_json(path);
  const int version = field<int>(campaign.document_, "weft-campaign", path.string());
  if (version > kCampaignVersion) {
    throw Error(path.string() + ": written by a newer weft (campaign schema " +
                std::to_string(version) + "; this one reads " + std::to_string(kCampaignVersion) +
                "); refusing to touch it");
  }
  if (!campaign.document_.contains("options") || !campaign.document_["options"].is_object()) {
    throw FormatError(path.string(), "/options", "missing or not an object");
  }
  const auto [shard_index, shard_count] = shard_of(campaign.document_["options"], path.string());
  campaign.progress_.shard_index = shard_index;
  campaign.progress_.shard_count = shard_count;
  const fs::path progress = dir / "progress.json";
  if (fs::exists(progress)) {
    const nlohmann::json document = read_json(progress);
    Progress read = progress_from_json(document, progress.string());
    if (!document.contains("shard") && shard_count > 1) {
      // Written when a shard's progress counted case indices: re-count them in positions.
      Progress positions = read;
      positions.shard_index = shard_index;
      positions.shard_count = shard_count;
      positions.done_below = 0;
      positions.done_above.clear();
      for (std::uint64_t index = shard_index; index < read.done_below; index += shard_count)
        positions.mark(index);
      for (std::uint64_t index : read.done_above) {
        if (index >= shard_index && (index - shard_index) % shard_count == 0) positions.mark(index);
      }
      read = std::move(positions);
    } else if (read.shard_index != shard_index || read.shard_count != shard_count) {
      throw FormatError(progress.string(), "/shard",
                        "shard " + std::to_string(read.shard_index) + "/" +
                            std::to_string(read.shard_count) + " differs from campaign.json's " +
                            std::to_string(shard_index) + "/" + std::to_string(shard_count));
    }
    campaign.progress_ = std::move(read);
  }
  if (fs::exists(dir / "bugs")) {
    for (const fs::directory_entry& entry : fs::directory_iterator(dir / "bugs")) {
      if (!entry.is_directory()) continue;
      const fs::path bucket_file = entry.path() / "bucket.json";
      // A bucket directory without bucket.json was being created when the campaign died:
      // its case will be judged again and recorded then.
      if (!fs::exists(bucket_file)) continue;
      Bucket bucket = bucket_from_json(read_json(bucket_file), bucket_file.string());
      bucket.name = entry.path().filename().string();
      // Counted, but the campaign died before progress.json said the case was done: it will
      // be judged and counted again (a stored case is not: record() knows it).
      const std::optional<std::uint64_t> last = case_index(bucket.last_counted);
      const bool stored = std::find(bucket.cases.begin(), bucket.cases.end(),
                                    bucket.last_counted) != bucket.cases.end();
      if (last && !stored && !campaign.progress_.done(*last) && bucket.count > 0) {
        --bucket.count;
        bucket.last_counted.clear();
      }
      campaign.buckets_[bucket.name] = std::move(bucket);
    }
  }
  if (with_stats && fs::exists(dir / "stats.jsonl")) {
    campaign.stats_text_ = read_text(dir / "stats.jsonl");
  }
  const fs::path gaps = dir / "unsupported.json";
  if (fs::exists(gaps)) campaign.gaps_ = gaps_from_json(read_json(gaps), gaps.string());
  return campaign;
}

bool Campaign::record_gap(const Gap& gap) {
  auto it = gaps_.find(gap.signature);
  if (it == gaps_.end()) {
    Gap fresh = gap;
    fresh.count = 1;
    gaps_.emplace(gap.signature, std::move(fresh));
    return true;
  }
  ++it->second.count;
  if (!gap.first_case.empty() && gap.first_case < it->second.first_case) {
    it->second.first_case = gap.first_case;
    it->second.dtypes = gap.dtypes;
  }
  return false;
}

bool Campaign::record(const Bucket& finding, const std::string& case_dir_name,
                      const TestCase& test_case, const nlohmann::json& verdict,
                      const std::function<std::string()>& repro_script) {
  const std::string name =
      bucket_name(finding.signature, finding.symptom, finding.backend, finding.op);
  auto it = buckets_.find(name);
  const bool fresh = it == buckets_.end();
  Bucket bucket = fresh ? finding : it->second;
  bucket.name = name;
  const bool stored =
      std::find(bucket.cases.begin(), bucket.cases.end(), case_dir_name) != bucket.cases.end();
  if (stored) return false;  // a resumed campaign judging a case again
  for (const std::string& op :
       finding.ops.empty() ? std::vector<std::string>{finding.op} : finding.ops) {
    if (!op.empty() && std::find(bucket.ops.begin(), bucket.ops.end(), op) == bucket.ops.end()) {
      bucket.ops.push_back(op);
    }
  }
  ++bucket.count;
  if (fresh) bucket.count = 1;
  bucket.last_counted = case_dir_name;
  const fs::path bucket_dir = dir_ / "bugs" / name;
  // A bucket keeps the cases with the lowest indices (case names sort by index), so which
  // cases it stores does not depend on the order parallel jobs finish in, nor on resumptions.
  std::string evicted;
  const bool room = bucket.cases.size() < kMaxCasesPerBucket;
  if (!room && case_dir_name < bucket.cases.back()) evicted = bucket.cases.back();
  if (room || !evicted.empty()) {
    const fs::path case_dir = bucket_dir / case_dir_name;
    fs::create_directories(case_dir);
    save_case(case_dir, test_case);
    write_json(case_dir / "verdict.json", verdict);
    io::write_file_atomically(case_dir / "repro.py", repro_script());
    if (!evicted.empty()) bucket.cases.pop_back();
    bucket.cases.insert(std::upper_bound(bucket.cases.begin(), bucket.cases.end(), case_dir_name),
                        case_dir_name);
  }
  fs::create_directories(bucket_dir);
  write_json(bucket_dir / "bucket.json", bucket_to_json(bucket));
  // Removed only once bucket.json no longer lists it: a crash in between leaves an unlisted
  // directory, never a listed one that is missing.
  if (!evicted.empty()) fs::remove_all(bucket_dir / evicted);
  buckets_[name] = std::move(bucket);
  return fresh;
}

void Campaign::mark_done(std::uint64_t index, double elapsed) {
  if (progress_.done(index)) return;
  progress_.mark(index);
  ++progress_.cases;
  progress_.elapsed = elapsed;
}

void Campaign::save_progress() {
  progress_.updated = unix_seconds();
  progress_.owner = this_process();
  if (!gaps_.empty()) write_json(dir_ / "unsupported.json", gaps_to_json(gaps_));
  write_json(dir_ / "progress.json", progress_to_json(progress_));
}

void Campaign::append_stats(const nlohmann::json& line) {
  stats_text_ += line.dump() + "\n";
  io::write_file_atomically(dir_ / "stats.jsonl", stats_text_);
}

std::vector<nlohmann::json> Campaign::stats() const {
  std::vector<nlohmann::json> lines;
  std::istringstream in(stats_text_);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    try {
      lines.push_back(nlohmann::json::parse(line));
    } catch (const nlohmann::json::exception&) {
      throw FormatError((dir_ / "stats.jsonl").string(), "line " + std::to_string(number),
                        "not valid JSON");
    }
  }
  return lines;
}

}  // namespace weft::corpus
