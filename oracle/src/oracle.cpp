// The oracle's driver: every backend of the case in the worker, the judge, and localization of
// each finding by bisection over prefixes of the graph.
#include "weft/oracle/oracle.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "backends/backends.h"
#include "vjp.h"
#include "weft/error.h"
#include "weft/ir/inplace.h"
#include "weft/ir/shape_sets.h"
#include "weft/ir/subgraph.h"
#include "weft/oracle/reference_check.h"
#include "weft/oracle/torch_info.h"

namespace weft::oracle {

namespace {

// The results of shape set `set` of a dynamic-shape case, as if each path had run that set
// alone: its calls of that set; a path that failed at that set keeps its failure; one that
// failed earlier, or does not run later sets (an export traced at the first shapes), did not
// run it.
std::vector<BackendResult> results_at_shape_set(const std::vector<BackendResult>& results,
                                                int set) {
  std::vector<BackendResult> at;
  for (const BackendResult& result : results) {
    BackendResult copy;
    copy.backend = result.backend;
    copy.seconds = result.seconds;
    copy.compile_seconds = result.compile_seconds;
    for (const CallResult& call : result.calls) {
      if (call.shape_set != set) continue;
      copy.calls.push_back(call);
      copy.calls.back().shape_set = 0;  // the set's plain case, as judge() takes it
    }
    const int failed_at = result.outcome == Outcome::Ok || result.outcome == Outcome::Unavailable
                              ? -1
                              : shape_set_of_phase(result.phase);
    if (result.outcome == Outcome::Unavailable || failed_at == set) {
      copy.outcome = result.outcome;
      copy.message = result.message;
      copy.phase = result.phase;
    } else if ((failed_at >= 0 && failed_at < set) || (set > 0 && copy.calls.empty())) {
      copy.outcome = Outcome::Unavailable;
      copy.message =
          failed_at >= 0 ? "stopped at an earlier shape set" : "runs the first shape set only";
      copy.calls.clear();
    }
    at.push_back(std::move(copy));
  }
  return at;
}

// "x [4, 7], y [2]": the inputs of a shape set that differ from set 0.
std::string describe_shape_set(const ir::Graph& graph, std::size_t set) {
  std::string text;
  for (ir::ValueId id : graph.inputs()) {
    const ir::Value& input = graph.value(id);
    if (input.shape_sets.empty() || input.shape_sets[set - 1] == input.type.shape) continue;
    std::string dims;
    for (std::int64_t d : input.shape_sets[set - 1]) {
      dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    }
    text += (text.empty() ? "" : ", ") + input.name + " [" + dims + "]";
  }
  return text;
}

// Folds the verdict of a later shape set into the case's: a path already at fault at an
// earlier set keeps that finding (the same bug, most likely); a new one is a dynamic-shape
// finding. Summaries keep the largest errors of any set.
void merge_shape_set_verdict(const ir::Graph& graph, std::size_t set, Verdict later,
                             Verdict& verdict) {
  for (Finding& finding : later.findings) {
    const bool known = std::any_of(verdict.findings.begin(), verdict.findings.end(),
                                   [&](const Finding& f) { return f.backend == finding.backend; });
    if (known) continue;
    finding.shape_set = static_cast<int>(set);
    finding.message = "shape set " + std::to_string(set) + " (" + describe_shape_set(graph, set) +
                      "): " + finding.message;
    finding.signature = make_signature(finding);
    verdict.findings.push_back(std::move(finding));
  }
  for (Unsupported& gap : later.unsupported) {
    const bool known =
        std::any_of(verdict.unsupported.begin(), verdict.unsupported.end(),
                    [&](const Unsupported& u) { return u.signature == gap.signature; });
    if (!known) verdict.unsupported.push_back(std::move(gap));
  }
  for (const BackendSummary& summary : later.backends) {
    for (BackendSummary& into : verdict.backends) {
      if (into.backend != summary.backend) continue;
      into.max_abs_error = std::max(into.max_abs_error, summary.max_abs_error);
      into.max_rel_error = std::max(into.max_rel_error, summary.max_rel_error);
      into.max_error_ratio = std::max(into.max_error_ratio, summary.max_error_ratio);
      into.agrees = into.agrees && summary.agrees;
    }
  }
  verdict.reference_finite = verdict.reference_finite && later.reference_finite;
}

// Ties of argmax/argmin and of max/min's indices: an index is as valid as the reference's
// when the reference's input holds the same extreme value there, or one that the input's dtype
// cannot tell apart from it (LibTorch and the engine may pick different copies of a maximum,
// and round a product's near-equal elements differently). The reference's and the float32
// engine's intermediate values are computed once, on the first question.
class TieChecker {
 public:
  TieChecker(const ir::Graph& graph, const ir::TensorMap& values,
             std::shared_ptr<const RoundingModel> rounding)
      : graph_(graph), values_(values), rounding_(std::move(rounding)) {}

  bool operator()(std::size_t output, std::size_t element, double index) {
    if (output >= graph_.outputs().size()) return false;
    const ir::ValueId id = graph_.outputs()[output];
    const std::optional<std::size_t> producer = graph_.producer(id);
    if (!producer) return false;
    const ir::Node& node = graph_.nodes()[*producer];
    const bool largest = node.op == ir::OpKind::Argmax || node.op == ir::OpKind::Max;
    const bool indices = node.op == ir::OpKind::Argmax || node.op == ir::OpKind::Argmin ||
                         ((node.op == ir::OpKind::Max || node.op == ir::OpKind::Min) &&
                          node.outputs.size() == 2 && node.outputs[1] == id);
    if (!indices || node.inputs.empty()) return false;
    if (!computed_) {
      computed_ = true;
      try {
        ir::ExecutionOptions options;
        options.keep_values = true;
        inputs32_ = ir::execute(graph_, values_, options).values;
      } catch (const std::exception&) {
        inputs32_.clear();
      }
      try {
        ir::ExecutionOptions options;
        options.floating_dtype = Dtype::Float64;
        options.keep_values = true;
        inputs_ = ir::execute(graph_, values_, options).values;
      } catch (const std::exception&) {
        inputs_.clear();
      }
    }
    const auto input_id = static_cast<std::size_t>(node.inputs[0]);
    if (input_id >= inputs_.size() || !inputs_[input_id].defined()) return false;
    const Tensor& x = inputs_[input_id];
    const std::vector<double> v = x.to_vector<double>();
    // The float32 engine's distance to the reference, per element (0 when it did not run).
    std::vector<double> error(v.size(), 0.0);
    if (input_id < inputs32_.size() && inputs32_[input_id].defined() &&
        inputs32_[input_id].numel() == x.numel()) {
      const std::vector<double> v32 = inputs32_[input_id].to_vector<double>();
      for (std::size_t j = 0; j < v.size(); ++j) error[j] = std::abs(v32[j] - v[j]);
    }
    if (rounding_ && input_id < rounding_->value_error.size() &&
        rounding_->value_error[input_id].size() == v.size()) {
      const std::vector<double>& honest = rounding_->value_error[input_id];
      for (std::size_t j = 0; j < v.size(); ++j) {
        if (std::isfinite(honest[j])) error[j] = std::max(error[j], honest[j]);
      }
    }
    const Dtype dtype = graph_.type(node.inputs[0]).dtype;
    const double eps = dtype_epsilon(dtype);
    const ir::Shape shape = x.sizes();
    // The slice of x that output element `element` reduces: all of x without a dim.
    std::size_t size = v.size();
    std::size_t inner = 1;
    std::size_t begin = 0;
    if (node.attrs.has("dim")) {
      std::int64_t dim = node.attrs.get_int("dim");
      const auto rank = static_cast<std::int64_t>(shape.size());
      if (rank == 0) return index == 0;
      if (dim < 0) dim += rank;
      if (dim < 0 || dim >= rank) return false;
      size = static_cast<std::size_t>(shape[static_cast<std::size_t>(dim)]);
      for (std::int64_t d = dim + 1; d < rank; ++d)
        inner *= static_cast<std::size_t>(shape[static_cast<std::size_t>(d)]);
      begin = (element / inner) * size * inner + element % inner;
    }
    if (index < 0 || index >= static_cast<double>(size) || index != std::floor(index)) return false;
    std::size_t best = begin;
    for (std::size_t j = 1; j < size; ++j) {
      const std::size_t at = begin + j * inner;
      if (largest ? v[at] > v[best] : v[at] < v[best]) best = at;
    }
    const std::size_t chosen = begin + static_cast<std::size_t>(index) * inner;
    if (v[chosen] == v[best]) return true;
    // A near tie: values the path's dtype cannot tell apart (within the judge's margin of 16
    // times the float32 engine's error, plus 16 epsilons) may come out in either order.
    const double slack = 16 * (error[chosen] + error[best]) +
                         16 * eps * std::max(std::abs(v[chosen]), std::abs(v[best]));
    return std::abs(v[chosen] - v[best]) <= slack;
  }

 private:
  const ir::Graph& graph_;
  const ir::TensorMap& values_;
  std::shared_ptr<const RoundingModel> rounding_;
  bool computed_ = false;
  std::vector<Tensor> inputs_;    // the reference's (float64) values, by id
  std::vector<Tensor> inputs32_;  // the float32 engine's
};

const BackendResult* result_of(const std::vector<BackendResult>& results, const std::string& name) {
  for (const BackendResult& result : results) {
    if (result.backend == name && result.outcome == Outcome::Ok && !result.calls.empty()) {
      return &result;
    }
  }
  return nullptr;
}

// Eager's wrong gradient is the reference's when finite differences side with eager: the
// engine's own check of its derivative (reference_check.h).
void blame_the_reference(const ir::Graph& graph, const ir::TensorMap& values,
                         const std::vector<Tensor>& cotangents,
                         const std::vector<BackendResult>& results, Verdict& verdict) {
  for (Finding& finding : verdict.findings) {
    if (finding.symptom != Symptom::WrongGradient ||
        path_traits(finding.backend).eager != finding.backend) {
      continue;
    }
    const BackendResult* reference = result_of(results, kReferenceBackend);
    const BackendResult* eager = result_of(results, finding.backend);
    if (!reference || !eager) continue;
    std::string why;
    if (!finite_differences_contradict_reference(graph, values, cotangents,
                                                 reference->calls[0].gradients,
                                                 eager->calls[0].gradients, why)) {
      continue;
    }
    for (BackendSummary& summary : verdict.backends) {
      if (summary.backend == finding.backend) summary.agrees = true;
      if (summary.backend == kReferenceBackend) summary.agrees = false;
    }
    finding.backend = kReferenceBackend;
    finding.message = "the reference's gradient contradicts finite differences, eager's agrees (" +
                      why + "): " + finding.message;
    finding.signature = make_signature(finding);
  }
}

// Whether two findings of related paths are the same one: the same signature after the path
// (a message-bearing symptom's is the message; a value symptom's the op and the call), and for
// value symptoms the same node.
bool same_root(const Finding& a, const Finding& b) {
  const auto tail = [](const std::string& signature) {
    const std::size_t first = signature.find('|');
    return first == std::string::npos ? signature
                                      : signature.substr(signature.find('|', first + 1));
  };
  if (a.symptom != b.symptom || tail(a.signature) != tail(b.signature)) return false;
  const bool message_bearing =
      a.symptom == Symptom::ExceptionMismatch || a.symptom == Symptom::ShapeMismatch;
  return message_bearing || a.node == b.node;
}

// A variant that fails as a path it builds on does shows that path's bug; the deepest variants
// fold first, so optimize_for_inference's copy of a freeze bug ends up under torchscript-frozen
// (or under torchscript, with frozen, when plain scripting shows it too).
void fold_into_base_paths(Verdict& verdict) {
  std::vector<std::size_t> order(verdict.findings.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return path_traits(verdict.findings[a].backend).bases.size() >
           path_traits(verdict.findings[b].backend).bases.size();
  });
  std::vector<bool> folded(verdict.findings.size(), false);
  for (std::size_t i : order) {
    Finding& finding = verdict.findings[i];
    for (const std::string& base : path_traits(finding.backend).bases) {
      std::size_t root = verdict.findings.size();
      for (std::size_t j = 0; j < verdict.findings.size(); ++j) {
        if (!folded[j] && j != i && verdict.findings[j].backend == base &&
            same_root(verdict.findings[j], finding)) {
          root = j;
        }
      }
      if (root == verdict.findings.size()) continue;
      Finding& into = verdict.findings[root];
      into.also.push_back(finding.backend);
      into.also.insert(into.also.end(), finding.also.begin(), finding.also.end());
      folded[i] = true;
      break;
    }
  }
  std::vector<Finding> kept;
  for (std::size_t i = 0; i < verdict.findings.size(); ++i) {
    if (!folded[i]) kept.push_back(std::move(verdict.findings[i]));
  }
  verdict.findings = std::move(kept);
}

}  // namespace

JudgeOptions with_tie_rule(JudgeOptions options, const ir::Graph& graph,
                           const ir::TensorMap& values) {
  auto ties = std::make_shared<TieChecker>(graph, values, options.rounding);
  options.accept_tie = [ties](std::size_t output, std::size_t element, double index) {
    return (*ties)(output, element, index);
  };
  return options;
}

JudgeOptions with_case_rules(JudgeOptions options, const ir::Graph& graph,
                             const ir::TensorMap& values, const std::vector<Tensor>& cotangents) {
  RoundingOptions rounding;
  rounding.margin = options.error_factor;
  options.rounding =
      std::make_shared<const RoundingModel>(model_rounding(graph, values, cotangents, rounding));
  return with_tie_rule(std::move(options), graph, values);
}

std::vector<std::string> default_backends(bool torch2) {
  // Availability is judged by files and in-process facts only: asking every path would start
  // every Python interpreter (seconds each) in each process that builds OracleOptions.
  std::vector<std::string> names = {kReferenceBackend, kEngineBackend};
  if (torch_major() == 1 || sibling_worker(1).unavailable.empty()) {
    for (const char* name :
         {"torch", "torchscript", "torchscript-frozen", "torchscript-ofi", "torchscript-nnc"}) {
      names.emplace_back(name);
    }
  }
  const bool cuda = torch_cuda_unavailable_reason().empty();
  if (torch_major() == 1 && cuda) names.emplace_back("torch-cuda");
  if (!torch2 || !torch2_interpreter_present()) return names;
  for (const char* name :
       {"torch2-eager", "torch2-inductor", "torch2-dynamic", "torch2-aot-eager", "torch2-export"}) {
    names.emplace_back(name);
  }
  // AOTInductor from C++ where a LibTorch 2.x weft can load the package, else from Python.
  const bool cpp = torch_major() == 2 || sibling_worker(2).unavailable.empty();
  names.emplace_back(cpp ? "torch2-aoti" : "torch2-aoti-python");
  if (torch_major() == 2 && cuda) {
    for (const char* name :
         {"torch2-eager-cuda", "torch2-cuda", "torch2-inductor-cuda", "torch2-aoti-cuda"}) {
      names.emplace_back(name);
    }
  }
  return names;
}

std::vector<std::string> parse_backend_list(const std::string& text) {
  std::vector<std::string> names;
  std::stringstream stream(text);
  std::string name;
  while (std::getline(stream, name, ',')) {
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (name.empty()) continue;
    make_backend(name);  // throws for an unknown name or a malformed fault spec
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  for (const char* required : {kEngineBackend, kReferenceBackend}) {
    if (std::find(names.begin(), names.end(), required) == names.end()) {
      names.insert(names.begin(), required);
    }
  }
  return names;
}

ir::Graph prefix_graph(const ir::Graph& graph, std::size_t last) {
  if (last >= graph.nodes().size()) {
    throw Error("prefix_graph: node " + std::to_string(last) + " of a graph with " +
                std::to_string(graph.nodes().size()) + " nodes");
  }
  std::vector<bool> used(graph.values().size(), false);  // read by a node of the cut
  for (std::size_t n = 0; n <= last; ++n) {
    for (ir::ValueId id : graph.nodes()[n].inputs) used[static_cast<std::size_t>(id)] = true;
  }
  std::vector<bool> keep_node(graph.nodes().size(), false);
  std::fill(keep_node.begin(), keep_node.begin() + static_cast<std::ptrdiff_t>(last) + 1, true);
  ir::Subgraph copy = ir::copy_subgraph(graph, used, keep_node);
  // Every value the rest of the graph observed stays observed: those no node of the cut reads,
  // those a node after the cut reads, and the graph's own outputs. Otherwise a wrong value that
  // a node of the cut hides (a cast to bool, a std that is NaN anyway) would move the
  // localization past the faulty node.
  std::set<ir::ValueId> observed(graph.outputs().begin(), graph.outputs().end());
  for (std::size_t n = last + 1; n < graph.nodes().size(); ++n) {
    for (ir::ValueId id : graph.nodes()[n].inputs) observed.insert(id);
  }
  for (std::size_t n = 0; n <= last; ++n) {
    for (ir::ValueId id : graph.nodes()[n].outputs) {
      if (!used[static_cast<std::size_t>(id)] || observed.count(id) != 0) {
        copy.graph.mark_output(copy.renamed.at(id));
      }
    }
  }
  // A cut between an in-place write through a view and its writeback leaves the base observed
  // stale: the writes at fault are written as pure calls instead (the same dataflow).
  for (std::size_t tries = 0; tries <= last; ++tries) {
    const std::optional<ir::InPlaceProblem> problem = ir::in_place_problem(copy.graph);
    if (!problem) break;
    ir::Node& node = copy.graph.mutable_nodes()[problem->node];
    if (!ir::is_in_place(node) && !ir::is_writeback(node)) {
      ir::clear_in_place(copy.graph);
      break;
    }
    ir::clear_in_place(node);
  }
  return std::move(copy.graph);
}

namespace {

// CUDA reserves address space for the device's unified memory far beyond any cap: under the
// worker's RLIMIT_AS, torch.cuda.is_available() is False and every CUDA path would be
// "unavailable" (seen on the H200 of scripts/device-check). Workers of a run with a CUDA path
// start without the cap; the GPU machine's memory is then guarded only by the time limit.
OracleOptions without_address_cap_for_cuda(OracleOptions options) {
  for (const std::string& backend : options.backends) {
    if (backend.find("cuda") != std::string::npos) {
      options.worker.memory_limit_mb = 0;
      break;
    }
  }
  return options;
}

}  // namespace

Oracle::Oracle(OracleOptions options)
    : options_(without_address_cap_for_cuda(std::move(options))), worker_(options_.worker) {
  for (const char* required : {kReferenceBackend, kEngineBackend}) {
    if (std::find(options_.backends.begin(), options_.backends.end(), required) ==
        options_.backends.end()) {
      options_.backends.insert(options_.backends.begin(), required);
    }
  }
}

RunSpec make_run_spec(const ir::Graph& graph, const ir::TensorMap& values, int calls,
                      bool gradients, std::uint64_t cotangent_seed) {
  RunSpec spec;
  spec.calls = calls;
  if (!gradients) return spec;
  spec.cotangents = ir::random_cotangents(graph, cotangent_seed);
  for (std::size_t set = 1; set < graph.shape_set_count(); ++set) {
    std::vector<Tensor>& cotangents = spec.shape_set_cotangents.emplace_back();
    try {
      cotangents =
          ir::random_cotangents(ir::at_shape_set(graph, values, set).graph, cotangent_seed + set);
    } catch (const Error&) {
      // A set the engine cannot derive is not run (run_backend stops there).
    }
  }
  return spec;
}

Verdict judge_run(const ir::Graph& graph, const ir::TensorMap& values,
                  const std::vector<BackendResult>& results, const RunSpec& spec,
                  const JudgeOptions& options) {
  if (graph.shape_set_count() == 1) {
    Verdict verdict =
        judge(graph, results, with_case_rules(options, graph, values, spec.cotangents));
    if (!spec.cotangents.empty()) {
      blame_the_reference(graph, values, spec.cotangents, results, verdict);
    }
    return verdict;
  }
  // Dynamic shapes: each set is judged at its own shapes, against the reference at them.
  Verdict verdict;
  for (std::size_t set = 0; set < graph.shape_set_count(); ++set) {
    ir::ShapeSetCase at;
    try {
      at = ir::at_shape_set(graph, values, set);
    } catch (const Error&) {
      if (set == 0) throw;
      continue;  // no path ran it
    }
    const std::vector<BackendResult> ran = results_at_shape_set(results, static_cast<int>(set));
    const auto reference = std::find_if(ran.begin(), ran.end(), [](const BackendResult& r) {
      return r.backend == kReferenceBackend;
    });
    if (set > 0 && (reference == ran.end() || reference->outcome == Outcome::Unavailable)) {
      continue;
    }
    const std::vector<Tensor>& cotangents = spec.cotangents_at(set);
    Verdict at_set =
        judge(at.graph, ran, with_case_rules(options, at.graph, at.values, cotangents));
    if (!cotangents.empty()) blame_the_reference(at.graph, at.values, cotangents, ran, at_set);
    if (set == 0) {
      verdict = std::move(at_set);
    } else {
      merge_shape_set_verdict(graph, set, std::move(at_set), verdict);
    }
  }
  // The paths' own outcomes (a failure at a later set is a failure of the run).
  for (BackendSummary& summary : verdict.backends) {
    for (const BackendResult& result : results) {
      if (result.backend != summary.backend) continue;
      summary.outcome = result.outcome;
      summary.message = result.message;
    }
  }
  return verdict;
}

RunSpec Oracle::run_spec(const ir::Graph& graph, const ir::TensorMap& values) const {
  return make_run_spec(graph, values, options_.calls, gradients(graph), options_.cotangent_seed);
}

Verdict Oracle::judge_case(const ir::Graph& graph, const ir::TensorMap& values,
                           const std::vector<BackendResult>& results, const RunSpec& spec) const {
  return judge_run(graph, values, results, spec, options_.judge);
}

CaseReport Oracle::check(const ir::Graph& graph, const ir::TensorMap& given_values) {
  // What every path's buffer of an expanded input holds; the judge compares those runs.
  const ir::TensorMap values = ir::project_to_layouts(graph, given_values);
  CaseReport report;
  const RunSpec spec = run_spec(graph, values);
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  const auto start = Clock::now();
  report.results = worker_.run_all(options_.backends, graph, values, spec);
  report.backend_runs += static_cast<int>(report.results.size());
  const auto ran = Clock::now();
  report.verdict = judge_case(graph, values, report.results, spec);
  const auto judged = Clock::now();
  report.run_seconds = seconds(start, ran);
  report.judge_seconds = seconds(ran, judged);
  if (options_.localize) {
    double slowest_ok = 0;
    for (const BackendResult& result : report.results) {
      if (result.outcome == Outcome::Ok) slowest_ok = std::max(slowest_ok, result.seconds);
    }
    for (Finding& finding : report.verdict.findings) {
      if (!finding.node) localize(graph, values, finding, slowest_ok, report.backend_runs);
      if (finding.node && *finding.node < graph.nodes().size()) {
        finding.op = std::string(ir::op_name(graph.nodes()[*finding.node].op));
      }
      finding.signature = make_signature(finding);
    }
  }
  if (options_.localize) fold_into_base_paths(report.verdict);
  report.localize_seconds = seconds(judged, Clock::now());
  return report;
}

bool Oracle::shows(const ir::Graph& graph, const ir::TensorMap& values, const Finding& finding,
                   int& runs) {
  const RunSpec spec = run_spec(graph, values);
  std::vector<std::string> backends = {kReferenceBackend, kEngineBackend};
  // A reference finding is eager's disagreement that finite differences settled.
  const std::string path = finding.backend == kReferenceBackend ? "torch" : finding.backend;
  if (std::find(backends.begin(), backends.end(), path) == backends.end()) {
    backends.push_back(path);
  }
  const std::vector<BackendResult> results = worker_.run_all(backends, graph, values, spec);
  runs += static_cast<int>(results.size());
  const Verdict verdict = judge_case(graph, values, results, spec);
  // An exception must throw the same message: a prefix that throws another one (an unbatched
  // conv2d refused before the freeze bug further on) is not where this finding starts.
  const bool message_bearing =
      finding.symptom == Symptom::ExceptionMismatch || finding.symptom == Symptom::ShapeMismatch;
  return std::any_of(verdict.findings.begin(), verdict.findings.end(), [&](const Finding& f) {
    return f.backend == finding.backend && f.symptom == finding.symptom &&
           (!message_bearing || finding.signature.empty() || f.signature == finding.signature);
  });
}

std::optional<Verdict> Oracle::judge_alone(const VjpGraph& problem, const std::string& backend,
                                           int& runs) {
  RunSpec spec;
  spec.calls = options_.calls;
  spec.cotangents = problem.cotangents;
  std::vector<std::string> backends = {kReferenceBackend, kEngineBackend};
  if (std::find(backends.begin(), backends.end(), backend) == backends.end()) {
    backends.push_back(backend);
  }
  std::vector<BackendResult> results;
  try {
    results = worker_.run_all(backends, problem.graph, problem.values, spec);
  } catch (const Error&) {
    return std::nullopt;
  }
  runs += static_cast<int>(results.size());
  return judge(problem.graph, results,
               with_case_rules(options_.judge, problem.graph, problem.values, spec.cotangents));
}

std::optional<std::size_t> Oracle::localize_gradient(const ir::Graph& graph,
                                                     const ir::TensorMap& values,
                                                     const Finding& finding, int& runs) {
  const std::optional<VjpGraph> problem =
      vjp_graph(graph, values, ir::random_cotangents(graph, options_.cotangent_seed));
  if (!problem) return std::nullopt;
  const std::optional<Verdict> verdict = judge_alone(*problem, finding.backend, runs);
  if (!verdict) return std::nullopt;
  for (const Finding& f : verdict->findings) {
    if (f.backend != finding.backend) continue;
    // Only a gradient of a node's own inputs names the node; anything else (a forward value
    // of one node alone differing) says nothing about which VJP is wrong.
    if (f.symptom != Symptom::WrongGradient && f.symptom != Symptom::NanInfMismatch) break;
    const auto it = problem->node_of_leaf.find(gradient_leaf_of(f.message));
    if (it != problem->node_of_leaf.end()) return it->second;
  }
  return std::nullopt;
}

void Oracle::localize(const ir::Graph& graph, const ir::TensorMap& values, Finding& finding,
                      double slowest_ok, int& runs) {
  if (graph.nodes().empty()) return;
  // A gradient finding names the node whose VJP is wrong on the case's own values (a node alone
  // runs one shape set: a later set's finding is bisected over prefixes instead).
  if (is_gradient_finding(finding) && !finding.shape_set) {
    if (auto node = localize_gradient(graph, values, finding, runs)) {
      finding.node = node;
      return;
    }
  }
  // Hangs are bisected under a shorter limit: a prefix either hangs too or runs about as fast
  // as the case's other paths did.
  const double full_limit = worker_.time_limit();
  if (finding.symptom == Symptom::Timeout) {
    worker_.set_time_limit(std::min(full_limit, std::max(2.0, 10 * slowest_ok)));
  }
  // Bisection: the smallest prefix that still shows the symptom ends at the faulty node
  // (a prefix is the cheapest graph in which the node's inputs are what they were).
  std::size_t lo = 0;
  std::size_t hi = graph.nodes().size() - 1;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const ir::Graph cut = prefix_graph(graph, mid);
    bool found = false;
    try {
      found = shows(cut, ir::case_values(cut, values), finding, runs);
    } catch (const Error&) {
      found = false;  // a prefix no worker could run tells nothing
    }
    if (found) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  worker_.set_time_limit(full_limit);
  finding.node = lo;
  if (is_gradient_finding(finding) && !finding.shape_set) {
    if (auto producer = blame_a_producer(graph, values, finding, lo, runs)) finding.node = producer;
  }
}

bool Oracle::is_gradient_finding(const Finding& finding) const {
  return options_.gradients && (finding.symptom == Symptom::WrongGradient ||
                                (finding.symptom == Symptom::NanInfMismatch &&
                                 !gradient_leaf_of(finding.message).empty()));
}

std::optional<std::size_t> Oracle::blame_a_producer(const ir::Graph& graph,
                                                    const ir::TensorMap& values,
                                                    const Finding& finding, std::size_t node,
                                                    int& runs) {
  for (ir::ValueId input : graph.nodes()[node].inputs) {
    const std::optional<std::size_t> producer = graph.producer(input);
    if (!producer || !is_floating(graph.type(input).dtype)) continue;
    const std::optional<VjpGraph> pair =
        producer_graph(graph, values, *producer, options_.cotangent_seed);
    if (!pair) continue;
    const std::optional<Verdict> verdict = judge_alone(*pair, finding.backend, runs);
    if (!verdict) continue;
    for (const Finding& f : verdict->findings) {
      if (f.backend == finding.backend && f.symptom == finding.symptom &&
          pair->node_of_leaf.count(gradient_leaf_of(f.message)) > 0) {
        return producer;
      }
    }
  }
  return std::nullopt;
}

}  // namespace weft::oracle
