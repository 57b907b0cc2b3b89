// The oracle's judge: compares every call of every path with the float64 reference, with a
// tolerance measured on the honest float32 engine run of the same graph.
//
// The rule, per output or gradient tensor T and element i, with r = the reference (float64),
// e = the engine in the case's own dtypes (float32, float16, bfloat16: each op computed in
// float32 and rounded to its dtype, as PyTorch's CPU kernels do), b = the path judged,
// F = JudgeOptions::error_factor, eps = float32 epsilon (the largest epsilon of the case's
// dtypes when it computes in float16 or bfloat16), compared in float64:
//   d_i = max(|e_i - r_i|, m_i)  the honest float32 error at i: the float32 engine's, or the
//                                largest of the rounding model's runs (m_i, weft/oracle/
//                                rounding.h: Monte Carlo arithmetic and moved decisions)
//   D   = upper quartile of d    the typical honest error in T: where e happens to round
//                                exactly, another honest order of operations need not; a
//                                quantile, not the maximum, so that one discrete decision
//                                flipped by rounding (round of .5, argmax of a near-tie)
//                                does not widen the tolerance of the whole tensor
//   S   = max_i |r_i|            T's scale: cancellation inside the graph leaves errors of
//                                eps * S even on elements much smaller than S (a tensor
//                                that is exactly zero takes the largest S of the case)
//   G   = max S over every floating output and gradient of the case: terms that cancel inside the
//                                graph (a gradient summed over a broadcast) leave residues of
//                                eps * |intermediates|, which the judge cannot see; the case's
//                                largest tensor is the best hint of their size (1 when
//                                every floating result is exactly zero)
//   tol_i = F * (d_i + D) + F * eps * (|r_i| + S + G)
//   b_i is accepted when |b_i - r_i| <= tol_i or |b_i - e_i| <= tol_i.
// Elements where r, e or a model run is not finite are skipped, and so are those that an
// undecided decision reaches (a decision run differs from the reference there). Integer and
// bool tensors compare exactly, except that a value the float32 engine or a model run took
// there (a tie or a rounding flip) is accepted too.
// Without an engine result (or one of another shape) d and D are zero: the floor alone.
//
// The float32 engine passes that rule by construction, so it is judged on a generous bound:
// a floating tensor of the engine is wrong when max_i d_i / (eps * (|r_i| + S + G)) exceeds
// JudgeOptions::engine_error_factor while another path's same measure is F times smaller,
// unless the graph takes a discrete decision (round, floor, comparison, argmax, ...) that
// float32 rounding may have flipped.
#include "weft/oracle/judge.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <regex>
#include <sstream>
#include <utility>

#include "weft/error.h"
#include "weft/ir/validate.h"
#include "weft/oracle/random_judging.h"

namespace weft::oracle {

using nlohmann::json;

namespace {

constexpr double kEps32 = 1.1920928955078125e-07;  // FLT_EPSILON

constexpr Symptom kSymptoms[] = {Symptom::Crash,         Symptom::Timeout,
                                 Symptom::OutOfMemory,   Symptom::ExceptionMismatch,
                                 Symptom::ShapeMismatch, Symptom::NanInfMismatch,
                                 Symptom::WrongOutput,   Symptom::WrongGradient,
                                 Symptom::Nondeterminism};

std::string shape_text(const Shape& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return text + "]";
}

std::string number_text(double value) {
  std::ostringstream out;
  out.precision(9);
  out << value;
  return out.str();
}

// "node 3 'conv' (conv2d)" in a message: the node index and op.
std::optional<std::pair<std::size_t, std::string>> node_from_message(const std::string& message) {
  static const std::regex label(R"(node (\d+)(?: '[^']*')? \(([A-Za-z0-9_]+)\))");
  std::smatch match;
  if (!std::regex_search(message, match, label)) return std::nullopt;
  return std::make_pair(static_cast<std::size_t>(std::stoull(match[1].str())), match[2].str());
}

std::string signal_name(const std::string& message) {
  static const std::regex signal(R"(SIG[A-Z0-9]+)");
  std::smatch match;
  if (std::regex_search(message, match, signal)) return match[0].str();
  return "crash";
}

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// Whole words that name a dtype (LibTorch's "Float", "Long", PyTorch's "float32", ...) become
// <dtype> and words that name an op of the IR or an aten op become <op>: one missing kernel or
// one broken pass is one message whichever dtype or op it met.
std::string without_dtype_and_op_names(const std::string& text) {
  static const std::regex aten(R"(\b(aten|prim|mkldnn)::[A-Za-z0-9_.]+)");
  static const std::regex dtype(
      R"(\b(Float|Double|Long|Int|Short|Char|Byte|Bool|Half|BFloat16|ComplexFloat|ComplexDouble|)"
      R"(float16|float32|float64|bfloat16|int8|int16|int32|int64|uint8|bool|float|double|long|)"
      R"(int|half)\b)");
  std::string out = std::regex_replace(text, aten, "<op>");
  out = std::regex_replace(out, dtype, "<dtype>");
  std::string result;
  std::size_t i = 0;
  while (i < out.size()) {
    if (!is_word_char(out[i]) || (i > 0 && is_word_char(out[i - 1]))) {
      result += out[i++];
      continue;
    }
    std::size_t j = i;
    while (j < out.size() && is_word_char(out[j])) ++j;
    const std::string word = out.substr(i, j - i);
    result += ir::op_from_name(word) ? std::string("<op>") : word;
    i = j;
  }
  return result;
}

// Numbers → N, quoted names → '?', bracketed lists → [N], node labels removed, dtype and op
// names → <dtype>/<op>, whitespace collapsed, at most 120 characters.
std::string normalize_message(const std::string& message) {
  static const std::regex label(R"(node \d+(?: '[^']*')? \([A-Za-z0-9_]+\):?)");
  const std::string text = std::regex_replace(message, label, "");
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    const bool word_before = i > 0 && is_word_char(text[i - 1]);
    if (c == '[') {
      int depth = 0;
      std::size_t j = i;
      for (; j < text.size(); ++j) {
        if (text[j] == '[') ++depth;
        if (text[j] == ']' && --depth == 0) break;
      }
      out += "[N]";
      i = j + 1;
    } else if ((c == '\'' || c == '"') && !word_before) {
      const std::size_t close = text.find(c, i + 1);
      if (close == std::string::npos) {
        out += c;
        ++i;
      } else {
        out += "'?'";
        i = close + 1;
      }
    } else if (!word_before && (std::isdigit(static_cast<unsigned char>(c)) ||
                                (c == '-' && i + 1 < text.size() &&
                                 std::isdigit(static_cast<unsigned char>(text[i + 1]))))) {
      std::size_t j = i + 1;
      while (j < text.size() &&
             (is_word_char(text[j]) || text[j] == '.' ||
              ((text[j] == '-' || text[j] == '+') && (text[j - 1] == 'e' || text[j - 1] == 'E')))) {
        ++j;
      }
      out += 'N';
      i = j;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
      ++i;
    } else {
      out += c;
      ++i;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  const std::size_t start = out.find_first_not_of(" :");
  out = start == std::string::npos ? std::string() : out.substr(start);
  out = without_dtype_and_op_names(out);
  if (out.size() > 120) out.resize(120);
  return out;
}

// One output or gradient of the reference, with what the tolerance needs.
struct Item {
  std::string what;  // "output 1", "gradient of 'w'"
  bool gradient = false;
  std::size_t output = 0;  // for outputs
  std::string leaf;        // for gradients
  Shape shape;
  bool floating = false;
  std::optional<Dtype> declared;  // the dtype a path must return (not checked for the reference)
  std::vector<double> r;
  std::vector<double> e;       // empty without an honest float32 value
  std::vector<double> m;       // the rounding model's largest distance; empty without a model
  std::vector<double> lo, hi;  // the hull of the reference and the decision runs
  std::vector<std::vector<double>> runs;  // integer items: every model run's values
  double scale = 0;                       // S
  double honest = 0;                      // D: the upper quartile of |e - r|
  double case_scale = 0;                  // G: the largest S of every output and gradient
  double eps = kEps32;  // eps: float32's, or the widest of the case's 16-bit floats
  // Computed from a random draw (random_judging.h): judged by shape, dtype, repeatability
  // and, for a sampler's own result (`sampler`), the values its distribution allows.
  bool drawn = false;
  const ir::Node* sampler = nullptr;
  std::string sampler_label;  // "node 2 'noise' (rand_like)"
};

double honest_error(const Item& item, std::size_t i) {
  const double d = item.e.empty() ? 0.0 : std::abs(item.e[i] - item.r[i]);
  return item.m.empty() ? d : std::max(d, item.m[i]);
}

double tolerance(const Item& item, std::size_t i, double factor) {
  return factor * (honest_error(item, i) + item.honest) +
         factor * item.eps * (std::abs(item.r[i]) + item.scale + item.case_scale);
}

bool skipped(const Item& item, std::size_t i) {
  return !std::isfinite(item.r[i]) || (!item.e.empty() && !std::isfinite(item.e[i])) ||
         (!item.m.empty() && !std::isfinite(item.m[i]));
}

// An integer element's value that an honest run took: the reference's, the float32 engine's,
// or a rounding model run's.
bool honest_integer(const Item& item, std::size_t i, double value) {
  if (value == item.r[i] || (!item.e.empty() && value == item.e[i])) return true;
  return std::any_of(item.runs.begin(), item.runs.end(), [&](const std::vector<double>& run) {
    return i < run.size() && run[i] == value;
  });
}

const Tensor* find_tensor(const CallResult& call, const Item& item) {
  if (!item.gradient)
    return item.output < call.outputs.size() ? &call.outputs[item.output] : nullptr;
  auto it = call.gradients.find(item.leaf);
  return it == call.gradients.end() ? nullptr : &it->second;
}

struct Problem {
  Problem(Symptom symptom, std::string message, std::optional<int> call = std::nullopt)
      : symptom(symptom), message(std::move(message)), call(call) {}
  Symptom symptom;
  std::string message;
  std::optional<int> call;  // a call after the first that switched to wrong values
};

struct Errors {
  double abs = 0;
  double rel = 0;
  double ratio = 0;
};

// Compares one tensor of a path with the reference item: nullopt when it agrees.
std::optional<Problem> compare(const Item& item, const Tensor& tensor, bool check_dtype,
                               bool reference_finite, double factor, const JudgeOptions& options,
                               Errors& errors) {
  if (!tensor.defined()) return Problem{Symptom::ShapeMismatch, item.what + " is missing"};
  if (tensor.sizes() != item.shape) {
    return Problem{Symptom::ShapeMismatch, item.what + " has shape " + shape_text(tensor.sizes()) +
                                               ", expected " + shape_text(item.shape)};
  }
  if (is_floating(tensor.dtype()) != item.floating ||
      (check_dtype && item.declared && tensor.dtype() != *item.declared)) {
    return Problem{Symptom::ShapeMismatch,
                   item.what + " has dtype " + dtype_name(tensor.dtype()) + ", expected " +
                       (item.declared ? dtype_name(*item.declared) : "a floating type")};
  }
  if (item.drawn) {
    if (!item.sampler) return std::nullopt;
    const auto impossible = random_judging::impossible_draw(*item.sampler, tensor);
    if (!impossible) return std::nullopt;
    return Problem{Symptom::WrongOutput, item.what + " " + shape_text(item.shape) +
                                             ", the draw of " + item.sampler_label + ": " +
                                             *impossible};
  }
  const std::vector<double> b = tensor.to_vector<double>();
  std::optional<std::size_t> nan_at;
  std::optional<std::size_t> worst;
  double worst_ratio = 1;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (skipped(item, i)) continue;
    if (!std::isfinite(b[i])) {
      if (reference_finite && !nan_at) nan_at = i;
      continue;
    }
    const double err = std::abs(b[i] - item.r[i]);
    errors.abs = std::max(errors.abs, err);
    errors.rel = std::max(errors.rel, err / std::max(std::abs(item.r[i]), item.eps * item.scale));
    double ratio = 0;
    if (item.floating) {
      double distance = err;
      if (!item.e.empty()) distance = std::min(distance, std::abs(b[i] - item.e[i]));
      ratio = distance / tolerance(item, i, factor);
      errors.ratio = std::max(errors.ratio, ratio);
    } else {
      const bool ok = honest_integer(item, i, b[i]) || (!item.gradient && options.accept_tie &&
                                                        options.accept_tie(item.output, i, b[i]));
      ratio = ok ? 0 : std::numeric_limits<double>::infinity();
    }
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = i;
    }
  }
  const std::string where = item.what + " " + shape_text(item.shape);
  if (nan_at) {
    return Problem{Symptom::NanInfMismatch, where + ": " + number_text(b[*nan_at]) +
                                                " at element " + std::to_string(*nan_at) +
                                                " where the reference is " +
                                                number_text(item.r[*nan_at])};
  }
  if (!worst) return std::nullopt;
  const std::size_t i = *worst;
  std::string message = where + ": error " + number_text(std::abs(b[i] - item.r[i])) +
                        " at element " + std::to_string(i) + " (got " + number_text(b[i]) +
                        ", expected " + number_text(item.r[i]);
  if (item.floating) message += ", tolerance " + number_text(tolerance(item, i, factor));
  if (!item.e.empty()) message += ", float32 engine " + number_text(item.e[i]);
  return Problem{item.gradient ? Symptom::WrongGradient : Symptom::WrongOutput, message + ")"};
}

// Whether a later call of a path differs from its first call beyond the item's tolerance.
std::optional<std::string> differs(const Item& item, const Tensor& first, const Tensor& later,
                                   bool reference_finite, double factor,
                                   const JudgeOptions& options) {
  // Two calls that pick different but equally valid answers to a tie do not disagree.
  const auto valid_tie = [&](std::size_t i, double v) {
    return honest_integer(item, i, v) ||
           (!item.gradient && options.accept_tie && options.accept_tie(item.output, i, v));
  };
  if (first.sizes() != later.sizes() || first.dtype() != later.dtype()) {
    return item.what + " has shape " + shape_text(later.sizes()) + " " + dtype_name(later.dtype()) +
           ", the call before " + shape_text(first.sizes()) + " " + dtype_name(first.dtype());
  }
  if (first.sizes() != item.shape) return std::nullopt;  // reported as a shape mismatch
  const std::vector<double> a = first.to_vector<double>();
  const std::vector<double> b = later.to_vector<double>();
  if (item.drawn) {
    // Drawn under the same seed on every call: the same numbers, up to the rounding of what a
    // later (fused) graph computes from them (seed 1401: torchscript-nnc's gradient through a
    // dropout mask, 1.5e-7 apart). Another draw differs by the values' own size.
    double scale = 0;
    for (double v : a) {
      if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]))) continue;
      if (item.floating && std::isfinite(a[i]) && std::isfinite(b[i]) &&
          std::abs(a[i] - b[i]) <= factor * item.eps * (std::abs(a[i]) + scale + item.case_scale)) {
        continue;
      }
      return item.what + " " + shape_text(item.shape) +
             ", drawn under the same seed: " + number_text(b[i]) + " at element " +
             std::to_string(i) + ", the call before gave " + number_text(a[i]);
    }
    return std::nullopt;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]))) continue;
    if (!item.floating && valid_tie(i, a[i]) && valid_tie(i, b[i])) continue;
    if (item.floating) {
      const bool finite = std::isfinite(a[i]) && std::isfinite(b[i]);
      if (skipped(item, i) || (!finite && !reference_finite)) continue;
      if (finite && std::abs(a[i] - b[i]) <= tolerance(item, i, factor)) continue;
    }
    return item.what + " " + shape_text(item.shape) + ": " + number_text(b[i]) + " at element " +
           std::to_string(i) + ", the call before gave " + number_text(a[i]);
  }
  return std::nullopt;
}

// max_i |x_i - r_i| / (eps * (|r_i| + S + G)) over the compared elements of a floating item.
double relative_error(const Item& item, const std::vector<double>& x) {
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (skipped(item, i)) continue;
    if (!std::isfinite(x[i])) return std::numeric_limits<double>::infinity();
    const double floor = item.eps * (std::abs(item.r[i]) + item.scale + item.case_scale);
    if (floor == 0) {
      if (x[i] != item.r[i]) return std::numeric_limits<double>::infinity();
      continue;
    }
    worst = std::max(worst, std::abs(x[i] - item.r[i]) / floor);
  }
  return worst;
}

bool all_finite(const BackendResult& result) {
  auto finite = [](const Tensor& t) {
    if (!t.defined() || !t.is_floating_point()) return true;
    for (double v : t.to_vector<double>()) {
      if (!std::isfinite(v)) return false;
    }
    return true;
  };
  for (const CallResult& call : result.calls) {
    for (const Tensor& t : call.outputs) {
      if (!finite(t)) return false;
    }
    for (const auto& [name, t] : call.gradients) {
      if (!finite(t)) return false;
    }
  }
  return true;
}

std::optional<Dtype> leaf_dtype(const ir::Graph& graph, const std::string& name) {
  for (ir::LeafKind kind : {ir::LeafKind::Input, ir::LeafKind::Parameter}) {
    if (auto id = graph.find_leaf(kind, name)) return graph.type(*id).dtype;
  }
  return std::nullopt;
}

// The rounding model's runs for `item`: m, the Monte Carlo runs' largest distance, infinite
// where a run is not finite or where a decision run differs from the reference (an element
// that an undecided decision reaches is not judged, nor is anything computed from it: which
// way float32 took the decision, and what a consumer made of it, cannot be told apart from a
// bug); integer items keep every run's values. Returns m.
std::vector<double> add_model(Item& item, const RoundingModel& model) {
  item.m.assign(item.r.size(), 0.0);
  if (!item.gradient &&
      std::count(model.undecided_outputs.begin(), model.undecided_outputs.end(), item.output) > 0) {
    item.m.assign(item.r.size(), std::numeric_limits<double>::infinity());
    return item.m;
  }
  for (std::size_t k = 0; k < model.runs.size(); ++k) {
    const Tensor* t = find_tensor(model.runs[k], item);
    if (!t || !t->defined() || t->sizes() != item.shape) continue;
    const std::vector<double> x = t->to_vector<double>();
    if (!item.floating) item.runs.push_back(x);
    const bool monte_carlo = static_cast<int>(k) < model.monte_carlo_runs;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double r = item.r[i];
      if (!item.floating) {
        if (!monte_carlo && x[i] != r) item.m[i] = std::numeric_limits<double>::infinity();
        continue;
      }
      if (!std::isfinite(r)) continue;  // skipped anyway
      if (!std::isfinite(x[i])) {
        item.m[i] = std::numeric_limits<double>::infinity();
      } else if (monte_carlo) {
        item.m[i] = std::max(item.m[i], std::abs(x[i] - r));
      } else if (std::abs(x[i] - r) >
                 64 * std::numeric_limits<double>::epsilon() * (std::abs(x[i]) + std::abs(r))) {
        item.m[i] = std::numeric_limits<double>::infinity();
      }
    }
  }
  return item.m;
}

std::vector<Item> reference_items(const ir::Graph& graph, const CallResult& ref,
                                  const CallResult* engine, const RoundingModel* model) {
  std::vector<Item> items;
  for (std::size_t k = 0; k < ref.outputs.size(); ++k) {
    Item item;
    item.what = "output " + std::to_string(k);
    item.output = k;
    if (k < graph.outputs().size()) item.declared = graph.type(graph.outputs()[k]).dtype;
    items.push_back(std::move(item));
  }
  for (const auto& [name, gradient] : ref.gradients) {
    Item item;
    item.what = "gradient of '" + name + "'";
    item.gradient = true;
    item.leaf = name;
    item.declared = leaf_dtype(graph, name);
    items.push_back(std::move(item));
  }
  items.erase(std::remove_if(items.begin(), items.end(),
                             [&](const Item& item) { return !find_tensor(ref, item)->defined(); }),
              items.end());
  const random_judging::DrawnResults drawn = random_judging::drawn_results(graph);
  for (Item& item : items) {
    if (item.gradient) {
      item.drawn = drawn.gradients.count(item.leaf) > 0;
    } else if (item.output < drawn.outputs.size()) {
      item.drawn = drawn.outputs[item.output];
      if (const auto node = drawn.sampler[item.output]) {
        item.sampler = &graph.nodes()[*node];
        item.sampler_label = "node " + std::to_string(*node) +
                             (item.sampler->name.empty() ? "" : " '" + item.sampler->name + "'") +
                             " (" + std::string(ir::op_name(item.sampler->op)) + ")";
      }
    }
  }
  for (Item& item : items) {
    const Tensor& r = *find_tensor(ref, item);
    item.shape = r.sizes();
    item.floating = r.is_floating_point();
    item.r = r.to_vector<double>();
    const Tensor* e = engine ? find_tensor(*engine, item) : nullptr;
    if (e && e->defined() && e->sizes() == item.shape && e->is_floating_point() == item.floating) {
      item.e = e->to_vector<double>();
    }
    std::vector<double> monte_carlo;
    if (model && !model->empty()) monte_carlo = add_model(item, *model);
    std::vector<double> honest;
    for (std::size_t i = 0; i < item.r.size(); ++i) {
      if (skipped(item, i)) continue;
      item.scale = std::max(item.scale, std::abs(item.r[i]));
      const double d = item.e.empty() ? 0.0 : std::abs(item.e[i] - item.r[i]);
      if (!item.e.empty() || !monte_carlo.empty()) {
        honest.push_back(monte_carlo.empty() ? d : std::max(d, monte_carlo[i]));
      }
    }
    if (!honest.empty()) {
      auto quartile = honest.begin() + static_cast<std::ptrdiff_t>(3 * (honest.size() - 1) / 4);
      std::nth_element(honest.begin(), quartile, honest.end());
      item.honest = *quartile;
    }
  }
  // A tensor that is exactly zero (terms that cancel exactly in both engine runs) gets the
  // largest scale of the case: another order of the same terms leaves eps-sized residues of
  // intermediates whose size only the other tensors hint at.
  double largest = 0;
  for (const Item& item : items) {
    if (item.floating && !item.drawn) largest = std::max(largest, item.scale);
  }
  // Every floating result exactly zero: no hint at all; leaf values are of order one.
  if (largest == 0) largest = 1;
  // A case that computes in float16 or bfloat16 anywhere has their rounding in every result
  // downstream: the floor takes the widest epsilon of the case (float32's at least).
  double eps = kEps32;
  for (const ir::Value& value : graph.values())
    eps = std::max(eps, dtype_epsilon(value.type.dtype));
  for (Item& item : items) {
    if (item.scale == 0) item.scale = largest;
    item.case_scale = largest;
    item.eps = eps;
  }
  return items;
}

Finding make_finding(Symptom symptom, const std::string& backend, const std::string& message) {
  Finding finding{symptom, backend, message, std::nullopt, {}, {}, std::nullopt, {}, std::nullopt};
  if (auto node = node_from_message(message)) {
    finding.node = node->first;
    finding.op = node->second;
  }
  return finding;
}

// The value symptom of one path over all its calls, or nullopt when it agrees. Wrong values
// from a later call on, after a first call that was right, are a wrong output (or gradient)
// "at call N" when the calls after the switch agree with each other (a warm-up switched to a
// wrong graph); nondeterminism is left for calls that disagree with no warm-up to explain it.
std::optional<Problem> judge_values(const BackendResult& result, const std::vector<Item>& items,
                                    bool reference, bool reference_finite, double factor,
                                    const JudgeOptions& options, Errors& errors) {
  std::optional<Problem> shape, nan, unstable;
  std::vector<std::optional<Problem>> wrong(result.calls.size());
  const bool warm_up = path_traits(result.backend).warm_up;
  for (std::size_t c = 0; c < result.calls.size(); ++c) {
    const CallResult& call = result.calls[c];
    const std::string prefix = c == 0 ? "" : "call " + std::to_string(c) + ": ";
    auto note = [&](std::optional<Problem>& slot, Symptom symptom, const std::string& message) {
      if (slot) return;
      slot = Problem{symptom, prefix + message, std::nullopt};
      if (c > 0) slot->call = static_cast<int>(c);
    };
    std::size_t expected_outputs = 0;
    for (const Item& item : items) expected_outputs += item.gradient ? 0 : 1;
    if (call.outputs.size() != expected_outputs) {
      note(shape, Symptom::ShapeMismatch,
           "returned " + std::to_string(call.outputs.size()) + " outputs, expected " +
               std::to_string(expected_outputs));
      continue;
    }
    for (const Item& item : items) {
      // A path without gradients (forward only) returns none at all.
      if (item.gradient && call.gradients.empty()) continue;
      const Tensor* tensor = find_tensor(call, item);
      if (!tensor) {
        note(shape, Symptom::ShapeMismatch, item.what + " is missing");
        continue;
      }
      if (!reference) {
        Errors seen;
        if (auto problem = compare(item, *tensor, true, reference_finite, factor, options, seen)) {
          if (problem->symptom == Symptom::ShapeMismatch) {
            note(shape, problem->symptom, problem->message);
          } else if (problem->symptom == Symptom::NanInfMismatch) {
            note(nan, problem->symptom, problem->message);
          } else if (!wrong[c] || (wrong[c]->symptom == Symptom::WrongGradient &&
                                   problem->symptom == Symptom::WrongOutput)) {
            wrong[c] = Problem{problem->symptom, prefix + problem->message, std::nullopt};
            if (c > 0) wrong[c]->call = static_cast<int>(c);
          }
        }
        errors.abs = std::max(errors.abs, seen.abs);
        errors.rel = std::max(errors.rel, seen.rel);
        errors.ratio = std::max(errors.ratio, seen.ratio);
      }
      // Each call against the one before it: a warm-up path may switch once, after call 0.
      if (c > 0 && !(c == 1 && warm_up)) {
        const Tensor* previous = find_tensor(result.calls[c - 1], item);
        if (previous && previous->defined() && tensor->defined()) {
          if (auto message = differs(item, *previous, *tensor, reference_finite, factor, options)) {
            if (!unstable) {
              unstable = Problem{Symptom::Nondeterminism,
                                 "call " + std::to_string(c) + " differs from call " +
                                     std::to_string(c - 1) + ": " + *message,
                                 std::nullopt};
            }
          }
        }
      }
    }
  }
  if (shape) return shape;
  if (nan) return nan;
  if (!wrong.empty() && wrong[0]) return wrong[0];
  if (unstable) return unstable;
  for (const std::optional<Problem>& problem : wrong) {
    if (problem) return problem;
  }
  return std::nullopt;
}

// Whether the graph takes a discrete decision on floating values (rounding, comparison,
// argmax, a cast to an integer): float32 rounding may flip it, and the float32 engine then
// lands far from the reference without a bug, while another path may flip it the other way.
// Only the nodes `value` depends on count; without a value, the whole graph.
bool has_discrete_decision(const ir::Graph& graph, std::optional<ir::ValueId> value) {
  std::vector<bool> needed(graph.values().size(), !value.has_value());
  if (value && graph.has_value(*value)) needed[static_cast<std::size_t>(*value)] = true;
  for (std::size_t n = graph.nodes().size(); n-- > 0;) {
    const ir::Node& node = graph.nodes()[n];
    bool used = false;
    for (ir::ValueId out : node.outputs) {
      used = used || (graph.has_value(out) && needed[static_cast<std::size_t>(out)]);
    }
    if (!used) continue;
    for (ir::ValueId in : node.inputs) {
      if (graph.has_value(in)) needed[static_cast<std::size_t>(in)] = true;
    }
    if (is_discrete_decision(graph, node)) return true;
  }
  return false;
}

// The engine's generous check: a floating tensor far from the reference where another path
// lands much closer. Not applied when a flipped discrete decision could explain it.
std::optional<Problem> judge_engine(const ir::Graph& graph,
                                    const std::vector<BackendResult>& results,
                                    const std::vector<Item>& items, const JudgeOptions& options) {
  for (const Item& item : items) {
    if (!item.floating || item.e.empty() || item.drawn) continue;
    std::optional<ir::ValueId> value;
    if (!item.gradient && item.output < graph.outputs().size()) {
      value = graph.outputs()[item.output];
    } else if (!item.gradient) {
      continue;
    }
    if (has_discrete_decision(graph, value)) continue;
    const double engine_error = relative_error(item, item.e);
    if (!(engine_error > options.engine_error_factor)) continue;
    for (const BackendResult& other : results) {
      if (other.backend == kReferenceBackend || other.backend == kEngineBackend ||
          other.outcome != Outcome::Ok || other.calls.empty()) {
        continue;
      }
      const Tensor* tensor = find_tensor(other.calls[0], item);
      if (!tensor || !tensor->defined() || tensor->sizes() != item.shape) continue;
      const double other_error = relative_error(item, tensor->to_vector<double>());
      if (other_error * options.error_factor <= engine_error) {
        return Problem{item.gradient ? Symptom::WrongGradient : Symptom::WrongOutput,
                       item.what + " " + shape_text(item.shape) + ": the float32 engine is " +
                           number_text(engine_error) + " float32 epsilons of the scale " +
                           number_text(item.scale) + " from the reference, '" + other.backend +
                           "' only " + number_text(other_error)};
      }
    }
  }
  return std::nullopt;
}

// PyTorch's own words in a refusal, whoever reported it: without the node label a C++ path
// adds ("node 1 (interpolate): "), the phase it adds to a backward's ("backward: ") and the
// exception type a Python path adds ("python: RuntimeError: "), so that LibTorch from C++ and
// PyTorch in Python refusing the same case read the same (seed 1208: 1.13's torch refused a
// bfloat16 hardshrink backward as a gap, and the python path's same refusal was a bucket).
std::string refusal_text(const std::string& message) {
  static const std::regex python_prefix(R"(^\s*python: [A-Za-z_.]+: )");
  static const std::regex backward_prefix(R"(^\s*backward: )");
  std::string text = std::regex_replace(normalize_message(message), python_prefix, "");
  text = std::regex_replace(text, backward_prefix, "");
  const auto start = text.find_first_not_of(' ');
  return start == std::string::npos ? std::string() : text.substr(start);
}

// Eager refusing a case the reference ran, for want of a kernel: a capability gap, recorded
// apart. Other paths of the same PyTorch that refuse it with the same message share the gap.
void separate_capability_gaps(const ir::Graph& graph, const std::vector<BackendResult>& results,
                              std::map<std::string, Finding>& found, Verdict& verdict) {
  const auto ran = [&](const std::string& backend) {
    return std::any_of(results.begin(), results.end(),
                       [&](const BackendResult& r) { return r.backend == backend; });
  };
  // An eager path, or an eager execution of the same PyTorch standing in for its eager path
  // when that did not run (torch2-libtorch without torch2-eager): not compiled, built on
  // nothing, no warm-up.
  const auto speaks_for_eager = [&](const std::string& backend) {
    const PathTraits& traits = path_traits(backend);
    if (traits.eager == backend) return true;
    return !traits.eager.empty() && !ran(traits.eager) && traits.bases.empty() && !traits.warm_up &&
           !traits.compiles;
  };
  for (const BackendResult& result : results) {
    if (result.outcome != Outcome::Exception || !speaks_for_eager(result.backend) ||
        !is_capability_message(result.message)) {
      continue;
    }
    Unsupported gap;
    gap.backend = result.backend;
    gap.message = result.message;
    if (auto node = node_from_message(result.message)) {
      gap.op = node->second;
      if (node->first < graph.nodes().size()) {
        for (ir::ValueId id : graph.nodes()[node->first].inputs) {
          gap.dtypes.emplace_back(dtype_name(graph.type(id).dtype));
        }
      }
    }
    const std::string normalized = normalize_message(result.message);
    gap.signature = "unsupported|" + gap.backend + "|" + gap.op + "|" + normalized;
    for (const BackendResult& other : results) {
      if (other.outcome != Outcome::Exception) continue;
      // The eager path itself, or a path of the same PyTorch whose eager refused the case: in
      // whatever words it refuses too (a compiler wraps the refusal: torch.compile's
      // "BackendCompilerFailed" over 2.x's missing bernoulli.p derivative, seed 1400), it is not
      // judged against an eager that cannot run the case. Or its eager did not run and another
      // eager refused it in the same words (torch2-libtorch judged without torch2-eager, beside
      // 1.13's torch).
      const std::string& its_eager = path_traits(other.backend).eager;
      if (other.backend == gap.backend || its_eager == gap.backend ||
          (!ran(its_eager) && refusal_text(other.message) == refusal_text(result.message))) {
        found.erase(other.backend);
      }
    }
    verdict.unsupported.push_back(std::move(gap));
  }
}

// A compiled path that fails as its eager path does shows eager's bug, not one of its own.
void fold_into_eager(std::map<std::string, Finding>& found) {
  for (auto it = found.begin(); it != found.end();) {
    const std::string& eager = path_traits(it->first).eager;
    auto root = eager.empty() || eager == it->first ? found.end() : found.find(eager);
    const bool same =
        root != found.end() && root->second.symptom == it->second.symptom &&
        (it->second.symptom != Symptom::ExceptionMismatch ||
         normalize_message(root->second.message) == normalize_message(it->second.message));
    if (!same) {
      ++it;
      continue;
    }
    root->second.also.push_back(it->first);
    it = found.erase(it);
  }
}

}  // namespace

bool is_capability_message(const std::string& message) {
  static const std::regex gap(
      R"(not implemented for|is not implemented|not supported|[Uu]nsupported|does not support|)"
      R"(only supports|no kernel|Could not run '[^']*' with arguments from the|)"
      R"(out of range for tensor of size \[0\]|Non-empty [^ ]+ (data )?tensor expected)");
  return std::regex_search(message, gap);
}

std::string_view symptom_name(Symptom symptom) {
  switch (symptom) {
    case Symptom::Crash:
      return "crash";
    case Symptom::Timeout:
      return "timeout";
    case Symptom::OutOfMemory:
      return "out-of-memory";
    case Symptom::ExceptionMismatch:
      return "exception-mismatch";
    case Symptom::ShapeMismatch:
      return "shape-mismatch";
    case Symptom::NanInfMismatch:
      return "nan-inf-mismatch";
    case Symptom::WrongOutput:
      return "wrong-output";
    case Symptom::WrongGradient:
      return "wrong-gradient";
    case Symptom::Nondeterminism:
      return "nondeterminism";
  }
  return "unknown";
}

Symptom symptom_from_name(std::string_view name) {
  std::string known;
  for (Symptom symptom : kSymptoms) {
    if (symptom_name(symptom) == name) return symptom;
    known += (known.empty() ? "" : ", ") + std::string(symptom_name(symptom));
  }
  throw Error("unknown symptom '" + std::string(name) + "' (expected one of " + known + ")");
}

std::string make_signature(const Finding& finding) {
  // A finding that shows only at a later shape set of a dynamic-shape case is a bug of the
  // path's dynamic shapes (recompilation, dynamic-dim code): a bucket of its own.
  const std::string dynamic = finding.shape_set && *finding.shape_set > 0 ? "|dynamic shapes" : "";
  std::string detail;
  switch (finding.symptom) {
    case Symptom::Crash:
      detail = signal_name(finding.message);
      break;
    case Symptom::ExceptionMismatch:
    case Symptom::ShapeMismatch:
      // The message is the root cause, whichever op it happened at.
      return std::string(symptom_name(finding.symptom)) + "|" + finding.backend + "||" +
             normalize_message(finding.message) + dynamic;
    default:
      // Values and time: symptom, backend and op are the bug, and the call a warm-up broke.
      if (finding.call && *finding.call > 0) detail = "call " + std::to_string(*finding.call);
      break;
  }
  return std::string(symptom_name(finding.symptom)) + "|" + finding.backend + "|" + finding.op +
         "|" + detail + dynamic;
}

Verdict judge(const ir::Graph& graph, const std::vector<BackendResult>& results,
              const JudgeOptions& options) {
  Verdict verdict;
  const BackendResult* ref = nullptr;
  const BackendResult* engine = nullptr;
  for (const BackendResult& result : results) {
    if (result.backend == kReferenceBackend) ref = &result;
    if (result.backend == kEngineBackend) engine = &result;
    BackendSummary summary;
    summary.backend = result.backend;
    summary.outcome = result.outcome;
    summary.message = result.message;
    summary.seconds = result.seconds;
    summary.compile_seconds = result.compile_seconds;
    verdict.backends.push_back(std::move(summary));
  }
  for (const BackendResult& result : results) {
    for (const CallResult& call : result.calls) {
      if (call.shape_set != 0) {
        throw Error("judge: " + result.backend + " ran later shape sets of a dynamic-shape " +
                    "case; judge_run (weft/oracle/oracle.h) judges each at its own shapes");
      }
    }
  }
  if (!ref) {
    throw Error(std::string("judge: no result of the reference path '") + kReferenceBackend +
                "' among " + std::to_string(results.size()) + " results");
  }

  // Per backend, the first symptom found of the highest precedence.
  std::map<std::string, Finding> found;
  auto report = [&](Symptom symptom, const std::string& backend, const std::string& message,
                    std::optional<int> call = std::nullopt) {
    auto it = found.find(backend);
    if (it != found.end() && it->second.symptom <= symptom) return;
    Finding finding = make_finding(symptom, backend, message);
    finding.call = call;
    found.insert_or_assign(backend, std::move(finding));
  };

  // Crash, timeout, out of memory: results of their own, whatever the others did.
  for (const BackendResult& result : results) {
    const std::string where = result.phase.empty() ? "" : " in " + result.phase;
    const std::string& timeout_gap = path_traits(result.backend).timeout_gap;
    if (result.outcome == Outcome::Crash) {
      report(Symptom::Crash, result.backend, "crashed" + where + ": " + result.message);
    } else if (result.outcome == Outcome::Timeout && !timeout_gap.empty()) {
      Unsupported gap;
      gap.backend = result.backend;
      gap.message = timeout_gap + where + ": " + result.message;
      gap.signature = "unsupported|" + result.backend + "||" + timeout_gap;
      verdict.unsupported.push_back(std::move(gap));
    } else if (result.outcome == Outcome::Timeout) {
      report(Symptom::Timeout, result.backend, "timed out" + where + ": " + result.message);
    } else if (result.outcome == Outcome::OutOfMemory) {
      report(Symptom::OutOfMemory, result.backend,
             "ran out of memory" + where + ": " + result.message);
    }
  }

  // Exceptions: which paths throw where the reference does not, or the reverse.
  if (ref->outcome == Outcome::Exception) {
    bool someone_ran = false;
    for (const BackendResult& result : results) {
      someone_ran = someone_ran || (result.outcome == Outcome::Ok && &result != ref);
    }
    if (someone_ran) {
      report(Symptom::ExceptionMismatch, ref->backend, ref->message);
      if (engine && engine->outcome == Outcome::Exception) {
        report(Symptom::ExceptionMismatch, engine->backend, engine->message);
      }
    } else {
      verdict.note = "every path refused the case: " + ref->message;
    }
  } else if (ref->outcome == Outcome::Ok) {
    for (const BackendResult& result : results) {
      if (result.outcome == Outcome::Exception) {
        report(Symptom::ExceptionMismatch, result.backend, result.message);
      }
    }
  }

  // Values: every call of every path that ran against the reference's first call.
  if (ref->outcome == Outcome::Ok && !ref->calls.empty()) {
    const bool engine_ran = engine && engine->outcome == Outcome::Ok && !engine->calls.empty();
    verdict.reference_finite = all_finite(*ref) && (!engine_ran || all_finite(*engine));
    const std::vector<Item> items = reference_items(
        graph, ref->calls[0], engine_ran ? &engine->calls[0] : nullptr, options.rounding.get());
    for (std::size_t r = 0; r < results.size(); ++r) {
      const BackendResult& result = results[r];
      if (result.outcome != Outcome::Ok) continue;
      Errors errors;
      const bool is_reference = &result == ref;
      if (auto problem = judge_values(result, items, is_reference, verdict.reference_finite,
                                      options.error_factor, options, errors)) {
        report(problem->symptom, result.backend, problem->message, problem->call);
      }
      if (&result == engine) {
        if (auto problem = judge_engine(graph, results, items, options)) {
          report(problem->symptom, result.backend, problem->message);
        }
      }
      verdict.backends[r].max_abs_error = errors.abs;
      verdict.backends[r].max_rel_error = errors.rel;
      verdict.backends[r].max_error_ratio = errors.ratio;
    }
  }

  if (ref->outcome == Outcome::Ok) separate_capability_gaps(graph, results, found, verdict);
  fold_into_eager(found);

  // Findings in the order of the results.
  for (std::size_t r = 0; r < results.size(); ++r) {
    auto it = found.find(results[r].backend);
    if (it == found.end()) continue;
    Finding finding = std::move(it->second);
    found.erase(it);
    finding.signature = make_signature(finding);
    verdict.backends[r].agrees = false;
    verdict.findings.push_back(std::move(finding));
  }
  // A folded path disagrees with the reference as its eager path does.
  for (const Finding& finding : verdict.findings) {
    for (const std::string& also : finding.also) {
      for (BackendSummary& summary : verdict.backends) {
        if (summary.backend == also) summary.agrees = false;
      }
    }
  }
  return verdict;
}

// ---------------------------------------------------------------------------------------------
// JSON

json verdict_to_json(const Verdict& verdict) {
  json findings = json::array();
  for (const Finding& finding : verdict.findings) {
    json object = {{"symptom", symptom_name(finding.symptom)},
                   {"backend", finding.backend},
                   {"message", finding.message}};
    if (finding.node) object["node"] = *finding.node;
    object["op"] = finding.op;
    if (finding.call) object["call"] = *finding.call;
    if (finding.shape_set) object["shape_set"] = *finding.shape_set;
    if (!finding.also.empty()) object["also"] = finding.also;
    object["signature"] = finding.signature;
    findings.push_back(std::move(object));
  }
  json unsupported = json::array();
  for (const Unsupported& gap : verdict.unsupported) {
    unsupported.push_back({{"backend", gap.backend},
                           {"op", gap.op},
                           {"dtypes", gap.dtypes},
                           {"message", gap.message},
                           {"signature", gap.signature}});
  }
  json backends = json::array();
  for (const BackendSummary& summary : verdict.backends) {
    backends.push_back({{"backend", summary.backend},
                        {"outcome", outcome_name(summary.outcome)},
                        {"message", summary.message},
                        {"seconds", summary.seconds},
                        {"compile_seconds", summary.compile_seconds},
                        {"max_abs_error", summary.max_abs_error},
                        {"max_rel_error", summary.max_rel_error},
                        {"max_error_ratio", summary.max_error_ratio},
                        {"agrees", summary.agrees}});
  }
  return {{"findings", std::move(findings)},
          {"unsupported", std::move(unsupported)},
          {"backends", std::move(backends)},
          {"reference_finite", verdict.reference_finite},
          {"note", verdict.note}};
}

namespace {

class VerdictReader {
 public:
  explicit VerdictReader(const std::string& source) : source_(source) {}

  Verdict read(const json& document) {
    if (!document.is_object()) fail("", "expected a verdict object, got " + describe(document));
    Verdict verdict;
    const json& findings = array_member(document, "", "findings");
    for (std::size_t i = 0; i < findings.size(); ++i) {
      verdict.findings.push_back(read_finding(findings[i], "/findings/" + std::to_string(i)));
    }
    const json& backends = array_member(document, "", "backends");
    for (std::size_t i = 0; i < backends.size(); ++i) {
      verdict.backends.push_back(read_summary(backends[i], "/backends/" + std::to_string(i)));
    }
    if (document.contains("unsupported")) {
      const json& gaps = array_member(document, "", "unsupported");
      for (std::size_t i = 0; i < gaps.size(); ++i) {
        verdict.unsupported.push_back(read_gap(gaps[i], "/unsupported/" + std::to_string(i)));
      }
    }
    verdict.reference_finite = boolean(document, "", "reference_finite");
    verdict.note = string(document, "", "note");
    return verdict;
  }

 private:
  [[noreturn]] void fail(const std::string& pointer, const std::string& problem) const {
    throw FormatError(source_, pointer, problem);
  }

  static std::string describe(const json& value) {
    std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return std::string(value.type_name()) + " (" + text + ")";
  }

  static std::string child(const std::string& pointer, const char* key) {
    return pointer + "/" + ir::json_pointer_token(key);
  }

  const json& member(const json& object, const std::string& pointer, const char* key) const {
    auto it = object.find(key);
    if (it == object.end()) fail(child(pointer, key), "missing");
    return *it;
  }
  const json& array_member(const json& object, const std::string& pointer, const char* key) const {
    const json& value = member(object, pointer, key);
    if (!value.is_array()) fail(child(pointer, key), "expected an array, got " + describe(value));
    return value;
  }
  std::string string(const json& object, const std::string& pointer, const char* key) const {
    const json& value = member(object, pointer, key);
    if (!value.is_string()) fail(child(pointer, key), "expected a string, got " + describe(value));
    return value.get<std::string>();
  }
  bool boolean(const json& object, const std::string& pointer, const char* key) const {
    const json& value = member(object, pointer, key);
    if (!value.is_boolean())
      fail(child(pointer, key), "expected a boolean, got " + describe(value));
    return value.get<bool>();
  }
  double number(const json& object, const std::string& pointer, const char* key) const {
    const json& value = member(object, pointer, key);
    if (!value.is_number()) fail(child(pointer, key), "expected a number, got " + describe(value));
    return value.get<double>();
  }

  Finding read_finding(const json& object, const std::string& pointer) const {
    if (!object.is_object()) fail(pointer, "expected a finding object, got " + describe(object));
    Finding finding{};
    const std::string symptom = string(object, pointer, "symptom");
    try {
      finding.symptom = symptom_from_name(symptom);
    } catch (const Error& e) {
      fail(child(pointer, "symptom"), e.what());
    }
    finding.backend = string(object, pointer, "backend");
    finding.message = string(object, pointer, "message");
    auto node = object.find("node");
    if (node != object.end() && !node->is_null()) {
      if (!node->is_number_unsigned()) {
        fail(child(pointer, "node"), "expected a node index, got " + describe(*node));
      }
      finding.node = node->get<std::size_t>();
    }
    finding.op = string(object, pointer, "op");
    auto call = object.find("call");
    if (call != object.end() && !call->is_null()) {
      if (!call->is_number_integer() || call->get<std::int64_t>() < 0) {
        fail(child(pointer, "call"), "expected a call index, got " + describe(*call));
      }
      finding.call = call->get<int>();
    }
    auto shape_set = object.find("shape_set");
    if (shape_set != object.end() && !shape_set->is_null()) {
      if (!shape_set->is_number_integer() || shape_set->get<std::int64_t>() < 0) {
        fail(child(pointer, "shape_set"),
             "expected a shape set index, got " + describe(*shape_set));
      }
      finding.shape_set = shape_set->get<int>();
    }
    if (object.contains("also")) {
      const json& also = array_member(object, pointer, "also");
      for (std::size_t i = 0; i < also.size(); ++i) {
        if (!also[i].is_string()) {
          fail(child(pointer, "also") + "/" + std::to_string(i),
               "expected a backend name, got " + describe(also[i]));
        }
        finding.also.push_back(also[i].get<std::string>());
      }
    }
    finding.signature = string(object, pointer, "signature");
    return finding;
  }

  Unsupported read_gap(const json& object, const std::string& pointer) const {
    if (!object.is_object())
      fail(pointer, "expected an unsupported object, got " + describe(object));
    Unsupported gap;
    gap.backend = string(object, pointer, "backend");
    gap.op = string(object, pointer, "op");
    const json& dtypes = array_member(object, pointer, "dtypes");
    for (std::size_t i = 0; i < dtypes.size(); ++i) {
      if (!dtypes[i].is_string()) {
        fail(child(pointer, "dtypes") + "/" + std::to_string(i),
             "expected a dtype name, got " + describe(dtypes[i]));
      }
      gap.dtypes.push_back(dtypes[i].get<std::string>());
    }
    gap.message = string(object, pointer, "message");
    gap.signature = string(object, pointer, "signature");
    return gap;
  }

  BackendSummary read_summary(const json& object, const std::string& pointer) const {
    if (!object.is_object()) fail(pointer, "expected a backend object, got " + describe(object));
    BackendSummary summary;
    summary.backend = string(object, pointer, "backend");
    try {
      summary.outcome = outcome_from_name(string(object, pointer, "outcome"));
    } catch (const FormatError&) {
      throw;
    } catch (const Error& e) {
      fail(child(pointer, "outcome"), e.what());
    }
    summary.message = string(object, pointer, "message");
    summary.seconds = number(object, pointer, "seconds");
    if (object.contains("compile_seconds")) {
      summary.compile_seconds = number(object, pointer, "compile_seconds");
    }
    summary.max_abs_error = number(object, pointer, "max_abs_error");
    summary.max_rel_error = number(object, pointer, "max_rel_error");
    if (object.contains("max_error_ratio")) {
      summary.max_error_ratio = number(object, pointer, "max_error_ratio");
    }
    summary.agrees = boolean(object, pointer, "agrees");
    return summary;
  }

  std::string source_;
};

}  // namespace

Verdict verdict_from_json(const json& document, const std::string& source) {
  try {
    return VerdictReader(source).read(document);
  } catch (const FormatError&) {
    throw;
  } catch (const json::exception& e) {
    throw FormatError(source, "", std::string("malformed verdict: ") + e.what());
  }
}

}  // namespace weft::oracle
