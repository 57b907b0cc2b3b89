// Campaign directories (weft/corpus/campaign.h): creation, resumption, buckets, progress and
// statistics, every file written atomically.
#include "weft/corpus/campaign.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>

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

Progress progress_from_json(const nlohmann::json& document, const std::string& source) {
  Progress progress;
  progress.done_below = field<std::uint64_t>(document, "done_below", source);
  progress.done_above = field<std::vector<std::uint64_t>>(document, "done_above", source);
  std::sort(progress.done_above.begin(), progress.done_above.end());
  progress.cases = field<std::uint64_t>(document, "cases", source);
  progress.elapsed = field<double>(document, "elapsed", source);
  return progress;
}

nlohmann::json progress_to_json(const Progress& progress) {
  return {{"done_below", progress.done_below},
          {"done_above", progress.done_above},
          {"cases", progress.cases},
          {"elapsed", progress.elapsed}};
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
          {"first_found", bucket.first_found}};
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
  return index < done_below || std::binary_search(done_above.begin(), done_above.end(), index);
}

void Progress::mark(std::uint64_t index) {
  if (done(index)) return;
  done_above.insert(std::upper_bound(done_above.begin(), done_above.end(), index), index);
  while (!done_above.empty() && done_above.front() == done_below) {
    done_above.erase(done_above.begin());
    ++done_below;
  }
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
  write_json(dir / "campaign.json", campaign.document_);
  write_json(dir / "progress.json", progress_to_json(campaign.progress_));
  return campaign;
}

Campaign Campaign::open(const fs::path& dir) {
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
  const fs::path progress = dir / "progress.json";
  if (fs::exists(progress)) {
    campaign.progress_ = progress_from_json(read_json(progress), progress.string());
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
      campaign.buckets_[bucket.name] = std::move(bucket);
    }
  }
  if (fs::exists(dir / "stats.jsonl")) campaign.stats_text_ = read_text(dir / "stats.jsonl");
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
