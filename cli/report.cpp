// `weft report DIR`: renders a campaign directory (corpus/campaign.h describes its files) as one
// self-contained HTML page (inline CSS and SVG, nothing fetched from the network) or as a
// Markdown summary. Reads the files directly, so it works on a campaign that is still running.
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "json_fields.h"
#include "merge.h"
#include "reduced_case.h"
#include "weft/corpus/campaign.h"
#include "weft/corpus/test_case.h"
#include "weft/error.h"
#include "weft/io/atomic_file.h"
#include "weft/ir/graph_dot.h"
#include "weft/ir/op_kind.h"

extern char** environ;

namespace weft::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr int kReadableSchema = 1;

struct ReportArgs {
  std::string dir;
  std::string format = "html";
  std::string out;
};

// ---- reading the campaign files ----

// Checks the schema marker of campaign.json: a newer schema is refused, not misread.
void check_schema(const json& document, const std::string& source) {
  const json& version = member(document, source, "weft-campaign");
  if (!version.is_number_integer()) {
    throw FormatError(source, "/weft-campaign", "expected an integer, got " + describe(version));
  }
  const auto schema = version.get<std::int64_t>();
  if (schema > kReadableSchema) {
    throw Error(source + ": written by a newer weft (campaign schema " + std::to_string(schema) +
                "; this one reads " + std::to_string(kReadableSchema) + ")");
  }
  if (schema < 1)
    throw FormatError(source, "/weft-campaign", "expected 1, got " + describe(version));
}

struct BucketInfo : BucketFile {
  std::string name;  // the directory's name
};

BucketInfo read_bucket(const fs::path& dir) {
  BucketInfo bucket;
  static_cast<BucketFile&>(bucket) = read_bucket_file(dir / "bucket.json");
  bucket.name = dir.filename().string();
  return bucket;
}

struct CampaignData {
  fs::path dir;
  fs::path shown_dir;  // what the report names: dir, or the shard root it was merged from
  json document;
  json shards = json::array();  // shards.json of a merged campaign: each shard's state
  std::optional<json> progress;
  std::vector<json> stats;
  std::vector<BucketInfo> buckets;  // most cases first
  std::vector<corpus::Gap> gaps;    // capability gaps, most cases first
};

std::string ops_text(const BucketFile& bucket) {
  if (bucket.ops.empty()) return bucket.op;
  std::string text;
  for (const std::string& op : bucket.ops) text += (text.empty() ? "" : ", ") + op;
  return text;
}

CampaignData read_campaign(const fs::path& dir) {
  CampaignData data;
  data.dir = dir;
  const fs::path campaign_path = dir / "campaign.json";
  if (!fs::exists(campaign_path)) {
    throw Error(dir.string() + ": not a campaign directory (no campaign.json)");
  }
  data.document = read_json_object(campaign_path);
  check_schema(data.document, campaign_path.string());
  for (const char* key : {"options", "versions"}) {
    if (data.document.contains(key) && !data.document[key].is_object()) {
      throw FormatError(campaign_path.string(), std::string("/") + key,
                        "expected an object, got " + describe(data.document[key]));
    }
  }

  const fs::path progress_path = dir / "progress.json";
  if (fs::exists(progress_path)) {
    json progress = read_json_object(progress_path);
    count_member(progress, progress_path.string(), "cases");
    number_member(progress, progress_path.string(), "elapsed");
    data.progress = std::move(progress);
  }

  const fs::path stats_path = dir / "stats.jsonl";
  if (fs::exists(stats_path)) {
    std::istringstream lines(io::read_file(stats_path));
    std::string line;
    int number = 0;
    while (std::getline(lines, line)) {
      ++number;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string source = stats_path.string() + ":" + std::to_string(number);
      json entry = parse_json(line, source);
      if (!entry.is_object()) {
        throw FormatError(source, "", "expected a JSON object, got " + describe(entry));
      }
      number_member(entry, source, "elapsed");
      data.stats.push_back(std::move(entry));
    }
  }

  const fs::path bugs = dir / "bugs";
  if (fs::is_directory(bugs)) {
    for (const fs::directory_entry& entry : fs::directory_iterator(bugs)) {
      // A bucket directory without bucket.json is one a killed campaign was still writing.
      if (!entry.is_directory() || !fs::exists(entry.path() / "bucket.json")) continue;
      data.buckets.push_back(read_bucket(entry.path()));
    }
  }
  std::sort(data.buckets.begin(), data.buckets.end(), [](const BucketInfo& a, const BucketInfo& b) {
    if (a.count != b.count) return a.count > b.count;
    return a.name < b.name;
  });
  if (fs::exists(dir / "unsupported.json")) {
    for (auto& [signature, gap] : corpus::read_gaps(dir / "unsupported.json")) {
      data.gaps.push_back(std::move(gap));
    }
  }
  std::sort(data.gaps.begin(), data.gaps.end(),
            [](const corpus::Gap& a, const corpus::Gap& b) { return a.count > b.count; });
  data.shown_dir = fs::absolute(dir).lexically_normal();
  if (fs::exists(dir / "shards.json")) {
    data.shards = parse_json(io::read_file(dir / "shards.json"), (dir / "shards.json").string());
    if (!data.shards.is_array()) {
      throw FormatError((dir / "shards.json").string(), "", "expected an array of shards");
    }
  }
  return data;
}

// ---- small formatting helpers ----

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string md_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// A JSON value as a person reads it: strings without quotes, the rest compact.
std::string plain(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string seconds_text(double seconds) {
  if (seconds < 120) return fmt::format("{:.1f} s", seconds);
  const auto total = static_cast<long long>(std::llround(seconds));
  if (total < 3600) return fmt::format("{}m {:02}s", total / 60, total % 60);
  return fmt::format("{}h {:02}m {:02}s", total / 3600, (total / 60) % 60, total % 60);
}

std::string number_text(double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return fmt::format("{}", static_cast<long long>(value));
  }
  return fmt::format("{:.3g}", value);
}

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

std::uint64_t total_bugs(const CampaignData& data) {
  std::uint64_t total = 0;
  for (const BucketInfo& bucket : data.buckets) total += bucket.count;
  return total;
}

std::map<std::string, double> summed_counts(const std::vector<json>& stats, const char* key);

// Symptom → summed bucket counts (buckets are authoritative; the last stats line otherwise).
std::vector<std::pair<std::string, double>> symptom_counts(const CampaignData& data) {
  std::map<std::string, double> counts;
  for (const BucketInfo& bucket : data.buckets) counts[bucket.symptom] += bucket.count;
  if (counts.empty()) counts = summed_counts(data.stats, "by_symptom");
  std::vector<std::pair<std::string, double>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return sorted;
}

double field_or(const json& line, const char* key, double otherwise) {
  auto it = line.find(key);
  return it != line.end() && it->is_number() ? it->get<double>() : otherwise;
}

// The last stats line of each series: a run's counts (ops, forms) start again at every run of a
// campaign (a resumed run's run_elapsed restarts) and every merged input ("input").
std::vector<const json*> last_lines(const std::vector<json>& stats) {
  std::vector<const json*> lasts;
  for (std::size_t i = 0; i < stats.size(); ++i) {
    const bool ends =
        i + 1 == stats.size() ||
        stats[i + 1]["elapsed"].get<double>() < stats[i]["elapsed"].get<double>() ||
        field_or(stats[i + 1], "input", 0) != field_or(stats[i], "input", 0) ||
        field_or(stats[i + 1], "run_elapsed", 0) < field_or(stats[i], "run_elapsed", 0);
    if (ends) lasts.push_back(&stats[i]);
  }
  return lasts;
}

// The lines the time charts draw. A merged campaign's inputs (shards) ran side by side: at each
// moment, their cases and throughputs add up, and its buckets are at least the largest
// input's (the same bug in two shards is one bucket).
std::vector<json> chart_lines(const std::vector<json>& stats) {
  std::map<double, std::vector<const json*>> by_input;
  for (const json& line : stats) by_input[field_or(line, "input", 0)].push_back(&line);
  if (by_input.size() < 2) return stats;
  std::vector<double> times;
  for (const json& line : stats) times.push_back(line["elapsed"].get<double>());
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  std::vector<json> combined;
  for (double time : times) {
    double cases = 0, rate = 0, buckets = 0;
    for (const auto& [input, lines] : by_input) {
      const json* latest = nullptr;
      for (const json* line : lines) {
        if ((*line)["elapsed"].get<double>() <= time) latest = line;
      }
      if (latest == nullptr) continue;
      cases += field_or(*latest, "cases", 0);
      // A shard whose last line lies behind has stopped judging.
      const bool ended = latest == lines.back() && time > (*latest)["elapsed"].get<double>();
      if (!ended) rate += field_or(*latest, "cases_per_second", 0);
      buckets = std::max(buckets, field_or(*latest, "buckets", 0));
    }
    combined.push_back(
        {{"elapsed", time}, {"cases", cases}, {"cases_per_second", rate}, {"buckets", buckets}});
  }
  return combined;
}

// Field `key` (an object of counts) summed over the last line of each series.
std::map<std::string, double> summed_counts(const std::vector<json>& stats, const char* key) {
  std::map<std::string, double> counts;
  for (const json* last : last_lines(stats)) {
    auto it = last->find(key);
    if (it == last->end() || !it->is_object()) continue;
    for (const auto& [name, value] : it->items()) {
      if (value.is_number()) counts[name] += value.get<double>();
    }
  }
  return counts;
}

std::vector<std::pair<std::string, double>> op_counts(const CampaignData& data) {
  const std::map<std::string, double> summed = summed_counts(data.stats, "ops");
  std::vector<std::pair<std::string, double>> counts(summed.begin(), summed.end());
  std::stable_sort(counts.begin(), counts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return counts;
}

// The ops the campaign draws from (campaign.json's options: ops, else the whole vocabulary,
// less exclude) that no generated node used: ops the campaign cannot find bugs in.
std::vector<std::string> drawable_ops(const CampaignData& data) {
  const auto strings = [&](const char* key) {
    std::vector<std::string> names;
    const json* options = data.document.contains("options") ? &data.document["options"] : nullptr;
    if (options == nullptr || !options->contains(key) || !(*options)[key].is_array()) return names;
    for (const json& name : (*options)[key]) {
      if (name.is_string()) names.push_back(name.get<std::string>());
    }
    return names;
  };
  std::vector<std::string> drawn = strings("ops");
  if (drawn.empty()) {
    for (ir::OpKind op : ir::kAllOps) drawn.emplace_back(ir::op_name(op));
  }
  const std::vector<std::string> excluded = strings("exclude");
  std::vector<std::string> kept;
  for (const std::string& name : drawn) {
    if (std::find(excluded.begin(), excluded.end(), name) == excluded.end()) kept.push_back(name);
  }
  return kept;
}

std::vector<std::string> ops_never_generated(
    const CampaignData& data, const std::vector<std::pair<std::string, double>>& ops) {
  std::vector<std::string> never;
  for (const std::string& name : drawable_ops(data)) {
    const bool seen =
        std::any_of(ops.begin(), ops.end(), [&](const auto& count) { return count.first == name; });
    if (!seen) never.push_back(name);
  }
  return never;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// Nodes per op (stats.jsonl "ops"), most frequent first, and the ops never generated.
std::string ops_table_markdown(const CampaignData& data) {
  const auto ops = op_counts(data);
  if (ops.empty()) return "none recorded\n";
  double nodes = 0;
  for (const auto& [op, count] : ops) nodes += count;
  std::string text = "| op | nodes | share |\n|---|---:|---:|\n";
  for (const auto& [op, count] : ops) {
    text += fmt::format("| {} | {} | {:.2f} % |\n", md_escape(op), number_text(count),
                        100.0 * count / nodes);
  }
  const std::vector<std::string> never = ops_never_generated(data, ops);
  text += fmt::format("\n{} of the {} ops the campaign draws from generated",
                      drawable_ops(data).size() - never.size(), drawable_ops(data).size());
  return text + (never.empty() ? ".\n" : "; never: " + md_escape(joined(never)) + ".\n");
}

// Cases per program form (stats.jsonl "forms"), most frequent first, with their share of the
// judged cases.
std::string forms_table(const CampaignData& data, std::uint64_t cases, bool markdown) {
  const std::map<std::string, double> summed = summed_counts(data.stats, "forms");
  std::vector<std::pair<std::string, double>> forms(summed.begin(), summed.end());
  std::stable_sort(forms.begin(), forms.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (forms.empty()) return markdown ? "none recorded\n" : "<p class=\"muted\">none recorded</p>\n";
  const auto share = [&](double count) {
    return cases > 0 ? fmt::format("{:.1f} %", 100.0 * count / static_cast<double>(cases)) : "-";
  };
  std::string text = markdown ? "| form | cases | share |\n|---|---:|---:|\n"
                              : "<table><tr><th>form</th><th>cases</th><th>share</th></tr>\n";
  for (const auto& [form, count] : forms) {
    text += markdown ? fmt::format("| {} | {} | {} |\n", form, number_text(count), share(count))
                     : fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                                   html_escape(form), number_text(count), share(count));
  }
  return markdown ? text : text + "</table>\n";
}

// ---- SVG charts ----

std::string symptom_color(const std::string& symptom) {
  static const std::map<std::string, std::string> colors = {
      {"crash", "#d62728"},          {"exception-mismatch", "#9467bd"},
      {"timeout", "#8c564b"},        {"wrong-output", "#1f77b4"},
      {"wrong-gradient", "#ff7f0e"}, {"nan-inf-mismatch", "#2ca02c"},
      {"nondeterminism", "#e377c2"},
  };
  auto it = colors.find(symptom);
  return it == colors.end() ? "#7f7f7f" : it->second;
}

// A line chart of y over campaign time (the `elapsed` field of each stats line).
std::string line_chart(const std::string& title, const std::vector<json>& stats, const char* field,
                       const std::string& color) {
  constexpr double kWidth = 370, kHeight = 220, kLeft = 52, kRight = 16, kTop = 28, kBottom = 34;
  std::vector<std::pair<double, double>> points;
  for (const json& line : stats) {
    auto it = line.find(field);
    if (it == line.end() || !it->is_number()) continue;
    points.emplace_back(line["elapsed"].get<double>(), it->get<double>());
  }
  std::string svg = fmt::format(
      "<svg class=\"chart\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "role=\"img\"><title>{2}</title>\n<text x=\"{3}\" y=\"18\" class=\"title\">{2}</text>\n",
      kWidth, kHeight, html_escape(title), kLeft);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" stroke=\"#ccc\"/>\n",
      kLeft, kTop, plot_w, plot_h);
  if (points.empty()) {
    svg += fmt::format(
        "<text x=\"{}\" y=\"{}\" class=\"empty\" text-anchor=\"middle\">no data "
        "yet</text>\n</svg>",
        kLeft + plot_w / 2, kTop + plot_h / 2);
    return svg;
  }
  double max_x = 0, max_y = 0;
  for (const auto& [x, y] : points) {
    max_x = std::max(max_x, x);
    max_y = std::max(max_y, y);
  }
  if (max_x <= 0) max_x = 1;
  if (max_y <= 0) max_y = 1;
  const auto px = [&](double x) { return kLeft + plot_w * x / max_x; };
  const auto py = [&](double y) { return kTop + plot_h * (1 - y / max_y); };
  // Grid lines and labels at 0, half and the maximum.
  for (double f : {0.0, 0.5, 1.0}) {
    const double y = kTop + plot_h * (1 - f);
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#e5e5e5\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" class=\"tick\" text-anchor=\"end\">{5}</text>\n",
        kLeft, y, kLeft + plot_w, kLeft - 4, y + 4, number_text(max_y * f));
    const double x = kLeft + plot_w * f;
    const char* anchor = f == 0 ? "start" : f == 1 ? "end" : "middle";
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"{}\">{}</text>\n",
                       x, kTop + plot_h + 14, anchor, html_escape(seconds_text(max_x * f)));
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">campaign "
      "time</text>\n",
      kLeft + plot_w / 2, kHeight - 4);
  // A merged campaign concatenates its inputs' stats: time going backwards starts a new series.
  std::string polyline;
  double previous = -1;
  const auto flush = [&] {
    if (polyline.empty()) return;
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n",
                       color, polyline);
    polyline.clear();
  };
  for (const auto& [x, y] : points) {
    if (x < previous) flush();
    polyline += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    previous = x;
  }
  flush();
  if (points.size() <= 40) {
    for (const auto& [x, y] : points) {
      svg += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"><title>{}: {}"
          "</title></circle>\n",
          px(x), py(y), color, html_escape(seconds_text(x)), number_text(y));
    }
  }
  svg += "</svg>";
  return svg;
}

// Horizontal bars, one per (label, value), longest first as given.
std::string bar_chart(const std::vector<std::pair<std::string, double>>& items,
                      const std::function<std::string(const std::string&)>& color_of) {
  if (items.empty()) return "<p class=\"muted\">none yet</p>";
  constexpr double kWidth = 640, kLabel = 170, kRow = 20, kValue = 60;
  double max_value = 0;
  for (const auto& item : items) max_value = std::max(max_value, item.second);
  if (max_value <= 0) max_value = 1;
  const double height = kRow * static_cast<double>(items.size()) + 6;
  std::string svg = fmt::format(
      "<svg class=\"bars\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\">\n",
      kWidth, height);
  double y = 3;
  for (const auto& [label, value] : items) {
    const double bar = (kWidth - kLabel - kValue) * value / max_value;
    std::string shown = label.size() > 26 ? label.substr(0, 25) + "\u2026" : label;
    svg += fmt::format(
        "<text x=\"{0}\" y=\"{1:.1f}\" class=\"label\" text-anchor=\"end\">{2}<title>{3}</title>"
        "</text><rect x=\"{4}\" y=\"{5:.1f}\" width=\"{6:.1f}\" height=\"{7}\" fill=\"{8}\"/>"
        "<text x=\"{9:.1f}\" y=\"{1:.1f}\" class=\"value\">{10}</text>\n",
        kLabel - 6, y + 13, html_escape(shown), html_escape(label), kLabel, y + 2,
        std::max(bar, 1.0), kRow - 5, color_of(label), kLabel + bar + 5, number_text(value));
    y += kRow;
  }
  svg += "</svg>";
  return svg;
}

// ---- one case: verdict, graph, repro ----

std::string verdict_html(const fs::path& case_dir) {
  const fs::path path = case_dir / "verdict.json";
  if (!fs::exists(path)) return "<p class=\"muted\">no verdict.json</p>";
  json verdict;
  try {
    verdict = read_json_object(path);
  } catch (const Error& e) {
    std::cerr << "weft report: warning: " << e.what() << "\n";
    return "<p class=\"error\">" + html_escape(e.what()) + "</p>";
  }
  std::string html;
  const json findings = verdict.value("findings", json::array());
  if (findings.is_array() && !findings.empty()) {
    html += "<h4>Findings</h4><ul class=\"findings\">";
    for (const json& finding : findings) {
      if (!finding.is_object()) continue;
      const std::string symptom = plain(finding.value("symptom", json("?")));
      html += fmt::format("<li><span class=\"tag\" style=\"background:{}\">{}</span> in <b>{}</b>",
                          symptom_color(symptom), html_escape(symptom),
                          html_escape(plain(finding.value("backend", json("?")))));
      if (finding.contains("node")) {
        html += fmt::format(" at node {} ({})", html_escape(plain(finding["node"])),
                            html_escape(plain(finding.value("op", json("")))));
      }
      html += ": " + html_escape(plain(finding.value("message", json(""))));
      if (finding.contains("signature")) {
        html += "<br><span class=\"muted\">signature: <code>" +
                html_escape(plain(finding["signature"])) + "</code></span>";
      }
      html += "</li>";
    }
    html += "</ul>";
  }
  const json backends = verdict.value("backends", json::array());
  if (backends.is_array() && !backends.empty()) {
    html +=
        "<h4>Backends</h4><table class=\"grid\"><tr><th>backend</th><th>outcome</th>"
        "<th>agrees</th><th>max abs err</th><th>max rel err</th><th>error ratio</th>"
        "<th>time</th><th>message</th></tr>";
    for (const json& row : backends) {
      if (!row.is_object()) continue;
      const auto num = [&](const char* key) {
        auto it = row.find(key);
        return it != row.end() && it->is_number() ? fmt::format("{:.3g}", it->get<double>())
                                                  : std::string("");
      };
      const bool agrees = row.value("agrees", true);
      std::string time;
      if (row.contains("seconds") && row["seconds"].is_number()) {
        time = fmt::format("{:.1f} ms", row["seconds"].get<double>() * 1e3);
      }
      html += fmt::format(
          "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
          "<td class=\"msg\">{}</td></tr>",
          agrees ? "" : "bad", html_escape(plain(row.value("backend", json("?")))),
          html_escape(plain(row.value("outcome", json("?")))), agrees ? "yes" : "NO",
          num("max_abs_error"), num("max_rel_error"), num("max_error_ratio"), time,
          html_escape(plain(row.value("message", json("")))));
    }
    html += "</table>";
  }
  if (verdict.contains("reference_finite") && verdict["reference_finite"] == false) {
    html +=
        "<p class=\"muted\">The reference is not finite: NaN/Inf differences are not "
        "reported.</p>";
  }
  if (verdict.contains("note") && !plain(verdict["note"]).empty()) {
    html += "<p>note: " + html_escape(plain(verdict["note"])) + "</p>";
  }
  // Whatever else the verdict records (versions, …), as key: value lines.
  std::string extra;
  for (const auto& [key, value] : verdict.items()) {
    if (key == "findings" || key == "backends" || key == "reference_finite" || key == "note") {
      continue;
    }
    extra += "<tr><th>" + html_escape(key) + "</th><td>" + html_escape(plain(value)) + "</td></tr>";
  }
  if (!extra.empty()) html += "<table class=\"kv\">" + extra + "</table>";
  return html;
}

std::optional<std::string> find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::istringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return std::nullopt;
}

// Runs `dot -Tsvg` on the graph's Graphviz text; nullopt when dot is missing or fails.
std::optional<std::string> render_with_dot(const ir::Graph& graph, const std::string& dot_program) {
  static int counter = 0;
  const fs::path work = fs::temp_directory_path() /
                        fmt::format("weft-report-{}-{}", static_cast<long>(::getpid()), counter++);
  fs::create_directories(work);
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{work};
  const fs::path dot_file = work / "graph.dot";
  const fs::path svg_file = work / "graph.svg";
  io::write_file_atomically(dot_file, ir::graph_to_dot(graph));

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> args = {dot_program, "-Tsvg", "-o", svg_file.string(),
                                   dot_file.string()};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned =
      posix_spawn(&pid, dot_program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return std::nullopt;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return std::nullopt;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !fs::exists(svg_file)) return std::nullopt;
  std::string svg = io::read_file(svg_file);
  // Drop the XML prolog and DOCTYPE (its DTD URL): inline SVG in HTML starts at <svg.
  const auto start = svg.find("<svg");
  if (start == std::string::npos) return std::nullopt;
  return svg.substr(start);
}

std::string graph_listing(const ir::Graph& graph) {
  std::string text;
  for (ir::ValueId id : graph.inputs()) {
    const ir::Value& value = graph.value(id);
    text += fmt::format("input     %{} {}: {}\n", id, value.name, ir::to_string(value.type));
  }
  for (ir::ValueId id : graph.parameters()) {
    const ir::Value& value = graph.value(id);
    text += fmt::format("parameter %{} {}: {}\n", id, value.name, ir::to_string(value.type));
  }
  for (std::size_t i = 0; i < graph.nodes().size(); ++i) {
    const ir::Node& node = graph.nodes()[i];
    std::string outputs, inputs, attrs;
    for (ir::ValueId id : node.outputs) {
      outputs += fmt::format("{}%{}: {}", outputs.empty() ? "" : ", ", id,
                             ir::to_string(graph.value(id).type));
    }
    for (ir::ValueId id : node.inputs)
      inputs += fmt::format("{}%{}", inputs.empty() ? "" : ", ", id);
    for (const auto& [name, value] : node.attrs) {
      attrs +=
          fmt::format("{}{}={}", attrs.empty() ? "" : ", ", name, ir::attr_value_to_string(value));
    }
    text += fmt::format("{} = {}({}){}\n", outputs, ir::op_name(node.op), inputs,
                        attrs.empty() ? "" : " {" + attrs + "}");
  }
  std::string outputs;
  for (ir::ValueId id : graph.outputs()) outputs += fmt::format(" %{}", id);
  text += "outputs:" + outputs + "\n";
  return text;
}

std::string graph_html(const fs::path& case_dir, const std::optional<std::string>& dot_program) {
  if (!fs::exists(case_dir / corpus::kGraphFile)) return "<p class=\"muted\">no graph.json</p>";
  std::optional<corpus::TestCase> test_case;
  try {
    test_case = corpus::load_case(case_dir);
  } catch (const Error& e) {
    std::cerr << "weft report: warning: " << e.what() << "\n";
    return "<p class=\"error\">" + html_escape(e.what()) + "</p>";
  }
  const ir::Graph& graph = test_case->graph;
  std::string html =
      fmt::format("<p class=\"muted\">{} inputs, {} parameters, {} nodes</p>",
                  graph.inputs().size(), graph.parameters().size(), graph.nodes().size());
  if (dot_program) {
    if (auto svg = render_with_dot(graph, *dot_program)) {
      return html + "<div class=\"graph\">" + *svg + "</div>";
    }
  }
  return html + "<pre>" + html_escape(graph_listing(graph)) + "</pre>";
}

std::string case_html(const fs::path& case_dir, const std::optional<std::string>& dot_program) {
  std::string html = "<div class=\"verdict\">" + verdict_html(case_dir) + "</div>";
  html += "<h4>Graph</h4>" + graph_html(case_dir, dot_program);
  const fs::path repro = case_dir / "repro.py";
  if (fs::exists(repro)) {
    html += "<details class=\"inner\"><summary>repro.py</summary><pre>" +
            html_escape(io::read_file(repro)) + "</pre></details>";
  }
  const fs::path log = case_dir / "reduce.log";  // a reduced case: the reducer's steps
  if (fs::exists(log)) {
    html += "<details class=\"inner\"><summary>reduction steps</summary><pre>" +
            html_escape(io::read_file(log)) + "</pre></details>";
  }
  return html;
}

// ---- the HTML page ----

constexpr const char* kStyle = R"(
body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #222;
       margin: 0 auto; max-width: 1200px; padding: 16px 24px; }
h1 { font-size: 22px; margin: 8px 0 4px; } h2 { font-size: 17px; margin: 26px 0 8px;
     border-bottom: 1px solid #ddd; padding-bottom: 3px; } h4 { margin: 10px 0 4px; }
code, pre { font: 12px/1.4 "SFMono-Regular", Menlo, Consolas, monospace; }
pre { background: #f6f8fa; border: 1px solid #e1e4e8; padding: 8px; overflow: auto;
      max-height: 480px; }
.muted { color: #777; } .error { color: #b00020; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 10px 0; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: 8px 14px; min-width: 110px; }
.card .big { font-size: 22px; font-weight: 600; } .card .small { color: #666; font-size: 12px; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
svg.chart text, svg.bars text { font: 11px sans-serif; fill: #444; }
svg.chart text.title { font-size: 13px; font-weight: 600; fill: #222; }
svg.chart text.empty { fill: #999; font-size: 13px; }
table.kv th { text-align: left; padding: 2px 12px 2px 0; color: #555; font-weight: 600;
     vertical-align: top; } table.kv td { padding: 2px 0; word-break: break-word; }
table.grid { border-collapse: collapse; width: 100%; }
table.grid th, table.grid td { border: 1px solid #ddd; padding: 4px 6px; text-align: left;
     vertical-align: top; }
table.grid th { background: #f3f3f3; } table.grid td.num { text-align: right; font-variant-numeric:
     tabular-nums; } td.msg { font-size: 12px; color: #555; word-break: break-word; }
tr.bad td { background: #fff0f0; }
tr.detail > td { background: #fcfcfc; padding: 2px 8px; }
details > summary { cursor: pointer; color: #0a58ca; }
details.inner { margin: 6px 0; }
.tag { color: #fff; border-radius: 3px; padding: 0 5px; font-size: 12px; }
.graph { overflow: auto; max-height: 700px; border: 1px solid #eee; background: #fff; }
.graph svg { max-width: 100%; height: auto; }
ul.findings { margin: 4px 0; padding-left: 18px; }
)";

std::string options_table(const json& document) {
  std::string rows;
  const auto add = [&](const std::string& key, const std::string& value) {
    rows += "<tr><th>" + html_escape(key) + "</th><td>" + html_escape(value) + "</td></tr>";
  };
  if (document.contains("created")) add("created", plain(document["created"]));
  if (document.contains("merged_from")) add("merged from", plain(document["merged_from"]));
  const json options = document.value("options", json::object());
  if (options.contains("seed")) add("seed", plain(options["seed"]));
  if (options.contains("shard") && options["shard"].is_array() && options["shard"].size() == 2) {
    add("shard", fmt::format("{} of {}", plain(options["shard"][0]), plain(options["shard"][1])));
  }
  for (const auto& [key, value] : options.items()) {
    if (key == "seed" || key == "shard") continue;
    add(key, plain(value));
  }
  const json versions = document.value("versions", json::object());
  std::string version_text;
  for (const auto& [key, value] : versions.items()) {
    version_text += (version_text.empty() ? "" : ", ") + key + " " + plain(value);
  }
  if (!version_text.empty()) add("versions", version_text);
  return "<table class=\"kv\">" + rows + "</table>";
}

// Every shard of a merged campaign with its state (shards.json, written by `weft merge`).
std::string shards_table(const json& shards, bool markdown) {
  if (shards.empty()) return "";
  std::string text = markdown ? "\n## Shards\n\n| shard | state | cases | campaign time | "
                                "directory |\n|---|---|---:|---:|---|\n"
                              : "<h2>Shards</h2>\n<table class=\"grid\"><tr><th>shard</th>"
                                "<th>state</th><th>cases</th><th>campaign time</th>"
                                "<th>directory</th></tr>\n";
  for (const json& shard : shards) {
    const json where = shard.value("shard", json::array());
    const std::string name =
        where.is_array() && where.size() == 2 ? plain(where[0]) + "/" + plain(where[1]) : "?";
    const std::string state = plain(shard.value("state", json("?")));
    std::string cases = plain(shard.value("cases", json("-")));
    if (shard.value("target", 0) > 0) cases += " of " + plain(shard["target"]);
    const std::string time = shard.contains("elapsed") && shard["elapsed"].is_number()
                                 ? seconds_text(shard["elapsed"].get<double>())
                                 : std::string("-");
    const std::string dir = plain(shard.value("dir", json("-")));
    text += markdown ? fmt::format("| {} | {} | {} | {} | `{}` |\n", name, md_escape(state), cases,
                                   time, md_escape(dir))
                     : fmt::format(
                           "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td "
                           "class=\"num\">{}</td><td><code>{}</code></td></tr>\n",
                           html_escape(name), html_escape(state), html_escape(cases),
                           html_escape(time), html_escape(dir));
  }
  return markdown ? text : text + "</table>\n";
}

std::string card(const std::string& big, const std::string& small) {
  return "<div class=\"card\"><div class=\"big\">" + html_escape(big) +
         "</div><div class=\"small\">" + html_escape(small) + "</div></div>";
}

std::string render_html(const CampaignData& data) {
  const std::optional<std::string> dot_program = find_program("dot");
  const std::string title = "weft campaign " + data.shown_dir.string();
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" +
                     html_escape(title) + "</title>\n<style>" + kStyle +
                     "</style></head>\n<body>\n";
  html += "<h1>weft campaign report</h1>\n<p class=\"muted\"><code>" +
          html_escape(data.shown_dir.string()) + "</code></p>\n";

  // Totals.
  double elapsed = 0;
  std::uint64_t cases = 0;
  if (data.progress) {
    cases = (*data.progress)["cases"].get<std::uint64_t>();
    elapsed = (*data.progress)["elapsed"].get<double>();
  }
  if (!data.stats.empty()) {
    const json& last = data.stats.back();
    elapsed = std::max(elapsed, last["elapsed"].get<double>());
    if (last.contains("cases") && last["cases"].is_number()) {
      cases = std::max(cases, last["cases"].get<std::uint64_t>());
    }
  }
  html += "<div class=\"cards\">" + card(std::to_string(cases), "cases judged") +
          card(seconds_text(elapsed), "campaign time") +
          card(elapsed > 0 ? fmt::format("{:.1f}", static_cast<double>(cases) / elapsed) : "-",
               "cases / s") +
          card(std::to_string(data.buckets.size()), "bug buckets") +
          card(std::to_string(total_bugs(data)), "buggy cases") + "</div>\n";

  html += "<h2>Campaign</h2>\n" + options_table(data.document) + "\n";

  const std::vector<json> charted = chart_lines(data.stats);
  const bool summed = charted.size() != data.stats.size() || data.shards.size() > 1;
  html += "<h2>Over time</h2>\n<div class=\"charts\">" +
          line_chart(summed ? "Cases judged (all shards)" : "Cases judged", charted, "cases",
                     "#1f77b4") +
          line_chart(summed ? "Bug buckets (at least: the largest shard's)" : "Bug buckets",
                     charted, "buckets", "#d62728") +
          line_chart(summed ? "Throughput (cases/s, all shards)" : "Throughput (cases/s)", charted,
                     "cases_per_second", "#2ca02c") +
          "</div>\n";
  html += shards_table(data.shards, false);

  html += "<h2>Symptoms</h2>\n" + bar_chart(symptom_counts(data), symptom_color) + "\n";
  // The most frequent ops, then the rest folded away (the vocabulary has ~100 ops).
  const auto op_color = [](const std::string&) { return std::string("#6b8fc7"); };
  auto ops = op_counts(data);
  constexpr std::size_t kShownOps = 20;
  html += "<h2>Op frequency</h2>\n";
  const std::vector<std::string> never = ops_never_generated(data, ops);
  if (!ops.empty() && !never.empty()) {
    html += "<p class=\"muted\">never generated: " + html_escape(joined(never)) + "</p>\n";
  }
  if (ops.size() <= kShownOps + 5) {
    html += bar_chart(ops, op_color) + "\n";
  } else {
    const std::vector<std::pair<std::string, double>> rest(ops.begin() + kShownOps, ops.end());
    ops.resize(kShownOps);
    html += bar_chart(ops, op_color) + "\n<details class=\"inner\"><summary>" +
            std::to_string(rest.size()) + " more ops</summary>" + bar_chart(rest, op_color) +
            "</details>\n";
  }

  html += "<h2>Program forms</h2>\n" + forms_table(data, cases, false);

  html += "<h2>Bug buckets</h2>\n";
  if (data.buckets.empty()) {
    html += "<p class=\"muted\">No bugs found (yet).</p>\n";
  } else {
    html +=
        "<table class=\"grid\"><tr><th>bucket</th><th>symptom</th><th>backend</th><th>op</th>"
        "<th>count</th><th>first case</th><th>first found</th><th>reduced</th></tr>\n";
    for (const BucketInfo& bucket : data.buckets) {
      const fs::path bucket_dir = data.dir / "bugs" / bucket.name;
      html += fmt::format(
          "<tr id=\"{0}\"><td><a href=\"#{0}\"><code>{0}</code></a></td><td><span class=\"tag\" "
          "style=\"background:{1}\">{2}</span></td><td>{3}</td><td>{4}</td><td class=\"num\">{5}"
          "</td><td><code>{6}</code></td><td class=\"num\">{7}</td><td>{8}</td></tr>\n",
          html_escape(bucket.name), symptom_color(bucket.symptom), html_escape(bucket.symptom),
          html_escape(bucket.backend), html_escape(ops_text(bucket)), bucket.count,
          html_escape(bucket.first_case), html_escape(seconds_text(bucket.first_found)),
          html_escape(reduction_text(data.dir / "bugs" / bucket.name, bucket.cases)));
      std::string detail;
      if (!bucket.message.empty()) detail += "<p>" + html_escape(bucket.message) + "</p>";
      detail += "<p class=\"muted\">signature <code>" + html_escape(bucket.signature) +
                "</code>; stored cases: " + html_escape(join(bucket.cases)) + "</p>";
      const fs::path case_dir = bucket_dir / bucket.first_case;
      if (!bucket.first_case.empty() && fs::is_directory(case_dir)) {
        detail += case_html(case_dir, dot_program);
        if (const std::optional<fs::path> reduced =
                find_reduced_case(data.dir / "bugs" / bucket.name, bucket.cases)) {
          detail += "<details class=\"inner\"><summary>reduced case (from " +
                    html_escape(reduced->parent_path().filename().string()) + ")</summary>" +
                    case_html(*reduced, dot_program) + "</details>";
        }
      } else {
        detail += "<p class=\"muted\">case directory <code>" + html_escape(bucket.first_case) +
                  "</code> is missing</p>";
      }
      html += "<tr class=\"detail\"><td colspan=\"8\"><details><summary>first case " +
              html_escape(bucket.first_case) + ": verdict, graph, repro.py</summary>" + detail +
              "</details></td></tr>\n";
    }
    html += "</table>\n";
  }
  html += "<h2>Capability gaps</h2>\n";
  if (data.gaps.empty()) {
    html += "<p class=\"muted\">None: eager ran every case the engine ran.</p>\n";
  } else {
    html +=
        "<p class=\"muted\">Not bugs: the PyTorch under test refused these cases for want of a "
        "kernel, where the engine ran them.</p>\n<table class=\"grid\"><tr><th>op</th>"
        "<th>dtypes</th><th>path</th><th>count</th><th>first case</th><th>message</th></tr>\n";
    for (const corpus::Gap& gap : data.gaps) {
      html += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td><code>{}</code>"
          "</td><td>{}</td></tr>\n",
          html_escape(gap.op), html_escape(join(gap.dtypes)), html_escape(gap.backend), gap.count,
          html_escape(gap.first_case), html_escape(gap.message));
    }
    html += "</table>\n";
  }
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  html += std::string("<p class=\"muted\">written by weft report at ") + stamp + "</p>\n";
  html += "</body></html>\n";
  return html;
}

// ---- the Markdown summary ----

std::string render_markdown(const CampaignData& data) {
  std::string md = "# weft campaign report\n\n`" + data.shown_dir.string() + "`\n\n## Campaign\n\n";
  const json& document = data.document;
  if (document.contains("created"))
    md += "- created: " + md_escape(plain(document["created"])) + "\n";
  if (document.contains("merged_from")) {
    md += "- merged from: " + md_escape(plain(document["merged_from"])) + "\n";
  }
  const json options = document.value("options", json::object());
  const json versions = document.value("versions", json::object());
  for (const auto& [key, value] : options.items()) {
    md += "- " + md_escape(key) + ": " + md_escape(plain(value)) + "\n";
  }
  for (const auto& [key, value] : versions.items()) {
    md += "- " + md_escape(key) + " version: " + md_escape(plain(value)) + "\n";
  }
  std::uint64_t cases = 0;
  double elapsed = 0;
  if (data.progress) {
    cases = (*data.progress)["cases"].get<std::uint64_t>();
    elapsed = (*data.progress)["elapsed"].get<double>();
  }
  if (!data.stats.empty()) elapsed = std::max(elapsed, data.stats.back()["elapsed"].get<double>());
  md += fmt::format(
      "\n## Totals\n\n- cases judged: {}\n- campaign time: {}\n- bug buckets: {}\n"
      "- buggy cases: {}\n",
      cases, seconds_text(elapsed), data.buckets.size(), total_bugs(data));
  md += "\n## Symptoms\n\n";
  const auto symptoms = symptom_counts(data);
  if (symptoms.empty()) {
    md += "none yet\n";
  } else {
    md += "| symptom | count |\n|---|---:|\n";
    for (const auto& [symptom, count] : symptoms) {
      md += "| " + md_escape(symptom) + " | " + number_text(count) + " |\n";
    }
  }
  md += shards_table(data.shards, true);
  md += "\n## Op frequency\n\n" + ops_table_markdown(data);
  md += "\n## Program forms\n\n" + forms_table(data, cases, true);
  md += "\n## Bug buckets\n\n";
  if (data.buckets.empty()) {
    md += "No bugs found (yet).\n";
  } else {
    md +=
        "| bucket | symptom | backend | op | count | first case | first found | reduced |\n"
        "|---|---|---|---|---:|---|---:|---|\n";
    for (const BucketInfo& bucket : data.buckets) {
      const std::string reduced = reduction_text(data.dir / "bugs" / bucket.name, bucket.cases);
      md += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} |\n", md_escape(bucket.name),
                        md_escape(bucket.symptom), md_escape(bucket.backend),
                        md_escape(ops_text(bucket)), bucket.count, md_escape(bucket.first_case),
                        seconds_text(bucket.first_found), reduced);
    }
  }
  md += "\n## Capability gaps (not bugs)\n\n";
  if (data.gaps.empty()) {
    md += "None: eager ran every case the engine ran.\n";
  } else {
    md += "| op | dtypes | path | count | first case | message |\n|---|---|---|---:|---|---|\n";
    for (const corpus::Gap& gap : data.gaps) {
      md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", md_escape(gap.op),
                        md_escape(join(gap.dtypes)), md_escape(gap.backend), gap.count,
                        md_escape(gap.first_case), md_escape(gap.message));
    }
  }
  return md;
}

// A temporary directory removed when it goes out of scope.
struct TemporaryDirectory {
  fs::path path;
  TemporaryDirectory() {
    std::string pattern = (fs::temp_directory_path() / "weft-report-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw Error("cannot create a temporary directory");
    path = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

int run_report(const ReportArgs& args) {
  const fs::path dir(args.dir);
  if (!fs::is_directory(dir)) throw Error(args.dir + ": no such campaign directory");
  // A root of shard directories is reported as their merge, as it stands now.
  std::optional<TemporaryDirectory> merged;
  if (holds_shards(dir)) {
    merged.emplace();
    merge_into({args.dir}, merged->path / "merged");
  }
  CampaignData data = read_campaign(merged ? merged->path / "merged" : dir);
  if (merged) data.shown_dir = fs::absolute(dir).lexically_normal();
  const bool markdown = args.format == "md";
  const fs::path out =
      args.out.empty() ? dir / (markdown ? "report.md" : "report.html") : fs::path(args.out);
  io::write_file_atomically(out, markdown ? render_markdown(data) : render_html(data));
  std::cout << fmt::format("wrote {} ({} buckets, {} buggy cases)\n", out.string(),
                           data.buckets.size(), total_bugs(data));
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "report", "Render a campaign directory as a self-contained HTML page or a Markdown summary");
  auto args = std::make_shared<ReportArgs>();
  cmd->add_option("dir", args->dir, "Campaign directory (written by `weft fuzz` or `weft merge`)")
      ->required();
  cmd->add_option("--format", args->format, "html (default) or md")
      ->check(CLI::IsMember({"html", "md"}));
  cmd->add_option("-o,--output", args->out,
                  "Output file (default DIR/report.html or DIR/report.md)");
  cmd->callback([args] { run_command("report", [&] { return run_report(*args); }); });
}

}  // namespace weft::cli
