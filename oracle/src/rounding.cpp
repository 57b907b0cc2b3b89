// The rounding model (weft/oracle/rounding.h): Monte Carlo arithmetic on the float64 engine,
// then two runs that move every decision rounding could have flipped.
#include "weft/oracle/rounding.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <string>

#include "weft/autograd/hooks.h"
#include "weft/ir/op_schema.h"
#include "weft/ops.h"
#include "weft/random.h"

#include "rounding_ops.h"

namespace weft::oracle {

namespace {

// The per-op rows and rounded steps (rounding_ops.h).
using rounding_detail::accumulates;
using rounding_detail::Decision;
using rounding_detail::decision_of;
using rounding_detail::decomposed;
using rounding_detail::exact;
using rounding_detail::kUnit32;
using rounding_detail::kUnit64;
using rounding_detail::perturb;
using rounding_detail::reads_floating;
using rounding_detail::rounded_saved_result;
using rounding_detail::unit_of;

// t + sign * delta (delta per element, a constant); differentiable in t.
Tensor shift(const Tensor& t, const std::vector<double>& delta, double sign) {
  if (!t.defined() || !t.is_floating_point() || delta.size() != static_cast<std::size_t>(t.numel()))
    return t;
  std::vector<double> moved(delta.size());
  for (std::size_t i = 0; i < delta.size(); ++i) moved[i] = sign * delta[i];
  return add(t, from_blob(moved.data(), t.sizes(), Dtype::Float64).to(t.dtype()));
}

bool same_values(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.sizes() != b.sizes()) return false;
  const std::vector<double> x = a.to_vector<double>();
  const std::vector<double> y = b.to_vector<double>();
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] != y[i] && !(std::isnan(x[i]) && std::isnan(y[i]))) return false;
  }
  return true;
}

// The slices an index op reduces: output element e reads x[begin(e) + j * inner], j < size.
struct Slices {
  std::size_t count = 1;
  std::size_t size = 0;
  std::size_t inner = 1;
  std::size_t begin(std::size_t e) const { return (e / inner) * size * inner + e % inner; }
};

Slices slices_of(const ir::Node& node, const Shape& shape) {
  Slices s;
  std::size_t numel = 1;
  for (std::int64_t d : shape) numel *= static_cast<std::size_t>(d);
  if (!node.attrs.has("dim") || shape.empty()) {
    s.size = numel;
    return s;
  }
  std::int64_t dim = node.attrs.get_int("dim");
  const auto rank = static_cast<std::int64_t>(shape.size());
  if (dim < 0) dim += rank;
  dim = std::clamp<std::int64_t>(dim, 0, rank - 1);
  s.size = static_cast<std::size_t>(shape[static_cast<std::size_t>(dim)]);
  for (std::int64_t d = dim + 1; d < rank; ++d) {
    s.inner *= static_cast<std::size_t>(shape[static_cast<std::size_t>(d)]);
  }
  s.count = s.size == 0 ? 0 : numel / s.size;
  return s;
}

class Model {
 public:
  Model(const ir::Graph& graph, const ir::TensorMap& values, const std::vector<Tensor>& cotangents,
        const RoundingOptions& options)
      : graph_(graph), values_(values), cotangents_(cotangents), options_(options) {}

  RoundingModel build() {
    RoundingModel model;
    try {
      ir::ExecutionOptions run;
      run.floating_dtype = Dtype::Float64;
      run.keep_values = true;
      reference_ = ir::execute(graph_, values_, run).values;
    } catch (const std::exception& e) {
      model.failure = e.what();
      return model;
    }
    error_.assign(reference_.size(), {});
    try {
      ir::ExecutionOptions run;
      run.keep_values = true;
      widen(ir::execute(graph_, values_, run).values);
    } catch (const std::exception&) {
      // The float32 engine refused the case: the Monte Carlo runs alone set the honest error.
    }
    for (int k = 0; k < options_.monte_carlo_runs; ++k) {
      try {
        ir::Execution forward;
        model.runs.push_back(monte_carlo_run(static_cast<std::uint64_t>(k), forward));
        widen(forward.values);
      } catch (const std::exception& e) {
        model.failure = e.what();
      }
    }
    model.monte_carlo_runs = static_cast<int>(model.runs.size());
    model.value_error = error_;
    bool has_decisions = false;
    for (const ir::Node& node : graph_.nodes()) {
      has_decisions = has_decisions || decision_of(graph_, node) != Decision::None;
    }
    if (has_decisions) {
      for (double side : {-1.0, 1.0}) {
        try {
          model.runs.push_back(decision_run(side));
        } catch (const std::exception&) {
          // A moved decision the rest of the graph cannot take (an index out of range): that
          // side tells nothing.
        }
      }
    }
    model.moved_decisions.assign(moved_.begin(), moved_.end());
    model.undecided_outputs = outputs_reached_by_undecided_order();
    return model;
  }

 private:
  // Every element's error grows to its distance from the reference in `run`.
  void widen(const std::vector<Tensor>& run) {
    for (std::size_t id = 0; id < reference_.size() && id < run.size(); ++id) {
      const Tensor& r = reference_[id];
      const Tensor& x = run[id];
      if (!r.defined() || !x.defined() || r.sizes() != x.sizes()) continue;
      const std::vector<double> rv = r.to_vector<double>();
      const std::vector<double> xv = x.to_vector<double>();
      std::vector<double>& error = error_[id];
      error.resize(rv.size(), 0.0);
      for (std::size_t i = 0; i < rv.size(); ++i) {
        const double d = std::abs(xv[i] - rv[i]);
        if (std::isnan(d)) {
          if (!(std::isnan(xv[i]) && std::isnan(rv[i])) && !(xv[i] == rv[i])) {
            error[i] = std::numeric_limits<double>::infinity();
          }
        } else {
          error[i] = std::max(error[i], d);
        }
      }
    }
  }

  CallResult run_with(const ir::ExecutionOptions& options, ir::Execution* forward) {
    CallResult call;
    if (cotangents_.empty()) {
      ir::Execution run = ir::execute(graph_, values_, options);
      call.outputs = run.outputs;
      if (forward) *forward = std::move(run);
      return call;
    }
    ir::GradientExecution run = ir::execute_with_gradients(graph_, values_, cotangents_, options);
    call.outputs = run.forward.outputs;
    call.gradients = std::move(run.gradients);
    if (forward) *forward = std::move(run.forward);
    return call;
  }

  CallResult monte_carlo_run(std::uint64_t k, ir::Execution& forward) {
    Generator gen(options_.seed + 0x9e3779b97f4a7c15ull * (k + 1));
    const bool all_double =
        std::all_of(graph_.values().begin(), graph_.values().end(), [](const ir::Value& v) {
          return !is_floating(v.type.dtype) || v.type.dtype == Dtype::Float64;
        });
    // Gradients between ops are stored in their value's dtype: the widest unit of the case
    // stands for all of them (the hook does not say which value a gradient belongs to).
    double gradient_unit = all_double ? kUnit64 : kUnit32;
    for (const ir::Value& v : graph_.values()) {
      if (is_reduced_floating(v.type.dtype))
        gradient_unit = std::max(gradient_unit, unit_of(v.type.dtype));
    }
    ir::ExecutionOptions run;
    run.floating_dtype = Dtype::Float64;
    run.keep_values = true;
    run.after_node = [&](std::size_t n, const std::vector<Tensor>& inputs,
                         std::vector<Tensor>& outputs) {
      const ir::Node& node = graph_.nodes()[n];
      const Decision decision = decision_of(graph_, node);
      if (decision == Decision::Elementwise || decision == Decision::Index) {
        decide_as_reference(node, outputs);
        return;
      }
      if (exact(node)) return;
      if (accumulates(node)) {
        std::vector<Tensor> rounded = inputs;
        for (std::size_t i = 0; i < inputs.size(); ++i) {
          rounded[i] = perturb(inputs[i], unit_of(graph_.type(node.inputs[i]).dtype), gen);
        }
        ir::Node scratch;
        const ir::Node& declared = ir::with_declared_defaults(graph_, node, scratch);
        // var_mean and std_mean: their var (std) is var's (std's) steps, their mean a mean.
        const bool with_mean = node.op == ir::OpKind::VarMean || node.op == ir::OpKind::StdMean;
        std::optional<ir::Node> spread;  // a copy only for these two
        if (with_mean) {
          spread = node;
          spread->op = node.op == ir::OpKind::VarMean ? ir::OpKind::Var : ir::OpKind::Std;
        }
        const Tensor steps = decomposed(spread ? *spread : declared, rounded,
                                        unit_of(graph_.type(node.outputs[0]).dtype), gen);
        if (steps.defined() && outputs.size() == 1 && steps.sizes() == outputs[0].sizes()) {
          outputs = {steps};
        } else {
          outputs = ir::run_node(declared, rounded, Dtype::Float64);
          if (with_mean && steps.defined() && !outputs.empty() &&
              steps.sizes() == outputs[0].sizes()) {
            outputs[0] = steps;
          }
        }
      }
      if (node.op == ir::OpKind::Logsumexp && outputs.size() == 1) {
        outputs[0] =
            rounded_saved_result(outputs[0], unit_of(graph_.type(node.outputs[0]).dtype), gen);
        return;
      }
      for (std::size_t k = 0; k < outputs.size() && k < node.outputs.size(); ++k) {
        outputs[k] = perturb(outputs[k], unit_of(graph_.type(node.outputs[k]).dtype), gen);
      }
    };
    autograd::BackwardHookGuard hook([&](const std::string&, std::vector<Tensor>& gradients) {
      for (Tensor& g : gradients) g = perturb(g, gradient_unit, gen);
    });
    return run_with(run, &forward);
  }

  // Monte Carlo runs measure continuous rounding only: their decisions are the reference's,
  // and the decision runs alone move them (a flip is no spread to multiply by the margin).
  void decide_as_reference(const ir::Node& node, std::vector<Tensor>& outputs) const {
    const std::size_t first = node.outputs.size() == 2 ? 1 : 0;  // max/min: the indices
    for (std::size_t k = first; k < outputs.size() && k < node.outputs.size(); ++k) {
      const Tensor& decided = reference_[static_cast<std::size_t>(node.outputs[k])];
      if (!decided.defined() || decided.sizes() != outputs[k].sizes()) continue;
      outputs[k] = outputs[k].is_floating_point()
                       ? add(outputs[k], sub(decided.to(outputs[k].dtype()), outputs[k].detach()))
                       : decided.to(outputs[k].dtype());
    }
  }

  // How far the decisions reading value `id` may move: margin x its honest error.
  std::vector<double> delta(ir::ValueId id) const {
    const auto index = static_cast<std::size_t>(id);
    std::vector<double> d = index < error_.size() ? error_[index] : std::vector<double>();
    for (double& v : d) v = std::isfinite(v) ? options_.margin * v : 0.0;
    return d;
  }

  CallResult decision_run(double side) {
    ir::ExecutionOptions run;
    run.floating_dtype = Dtype::Float64;
    run.after_node = [&](std::size_t n, const std::vector<Tensor>& inputs,
                         std::vector<Tensor>& outputs) {
      const ir::Node& node = graph_.nodes()[n];
      switch (decision_of(graph_, node)) {
        case Decision::None:
          return;
        case Decision::Elementwise:
          move_elementwise(n, inputs, outputs, side);
          return;
        case Decision::Kink:
          move_kink(n, inputs, outputs, side);
          return;
        case Decision::Index:
          move_index(n, inputs, outputs, side);
          return;
      }
    };
    return run_with(run, nullptr);
  }

  // The other input of a binary decision moves the other way: a - b moves by both.
  std::vector<Tensor> moved_inputs(const ir::Node& node, const std::vector<Tensor>& inputs,
                                   double side) const {
    std::vector<Tensor> moved = inputs;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      moved[i] = shift(inputs[i], delta(node.inputs[i]), i == 0 ? side : -side);
    }
    return moved;
  }

  void move_elementwise(std::size_t n, const std::vector<Tensor>& inputs,
                        std::vector<Tensor>& outputs, double side) {
    const ir::Node& node = graph_.nodes()[n];
    if ((node.op == ir::OpKind::Eq || node.op == ir::OpKind::Ne) && inputs.size() == 2) {
      move_equality(n, inputs, outputs, side);
      return;
    }
    std::vector<Tensor> detached;
    for (const Tensor& t : inputs) detached.push_back(t.defined() ? t.detach() : t);
    ir::Node scratch;
    std::vector<Tensor> moved = ir::run_node(ir::with_declared_defaults(graph_, node, scratch),
                                             moved_inputs(node, detached, side), Dtype::Float64);
    if (moved.size() != outputs.size()) return;
    for (std::size_t k = 0; k < moved.size(); ++k) {
      if (!same_values(moved[k], outputs[k])) moved_.insert(n);
      // Keep the node's own autograd link where it has one (a floor's zero gradient).
      if (moved[k].is_floating_point() && outputs[k].is_floating_point()) {
        moved[k] = add(outputs[k], sub(moved[k], outputs[k].detach()));
      }
    }
    outputs = std::move(moved);
  }

  // The graph outputs computed from the indices of a sort, argsort or topk whose order the
  // decision runs moved. The two runs try two orders of each group of ties, all groups at once;
  // a path may pick any order in each group, and what a consumer makes of indices used as
  // values (another topk of them) can then differ from both runs where they agree (campaign
  // seed 1207: topk of the indices of a topk over tied floats).
  std::vector<std::size_t> outputs_reached_by_undecided_order() const {
    // The indices themselves are judged element by element (the decision runs differ on every
    // tied position); only what is computed from them is left out.
    std::set<ir::ValueId> undecided_indices, tainted;
    const auto reads = [](const ir::Node& node, const std::set<ir::ValueId>& values) {
      return std::any_of(node.inputs.begin(), node.inputs.end(),
                         [&](ir::ValueId id) { return values.count(id) > 0; });
    };
    for (std::size_t n = 0; n < graph_.nodes().size(); ++n) {
      const ir::Node& node = graph_.nodes()[n];
      if (reads(node, undecided_indices) || reads(node, tainted)) {
        tainted.insert(node.outputs.begin(), node.outputs.end());
      }
      const bool order = node.op == ir::OpKind::Sort || node.op == ir::OpKind::Argsort ||
                         node.op == ir::OpKind::Topk;
      if (order && moved_.count(n) > 0) undecided_indices.insert(node.outputs.back());
    }
    std::vector<std::size_t> reached;
    for (std::size_t k = 0; k < graph_.outputs().size(); ++k) {
      if (tainted.count(graph_.outputs()[k]) > 0) reached.push_back(k);
    }
    return reached;
  }

  // eq, ne: moving the inputs apart or across never makes them equal, yet a path can round two
  // values that differ in float64 to the same float (two bfloat16 results of different
  // functions). Elements whose inputs lie within their margins of each other are equal on one
  // side and unequal on the other, so either reading is honest there.
  void move_equality(std::size_t n, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                     double side) {
    const ir::Node& node = graph_.nodes()[n];
    if (outputs.size() != 1 || !inputs[0].defined() || !inputs[1].defined()) return;
    const auto margin = [&](std::size_t i) {
      const Tensor x = inputs[i].detach().to(Dtype::Float64);
      std::vector<double> d = delta(node.inputs[i]);
      if (d.size() != static_cast<std::size_t>(x.numel())) d.assign(x.numel(), 0.0);
      return std::make_pair(x, from_blob(d.data(), x.sizes(), Dtype::Float64).clone());
    };
    const auto [a, da] = margin(0);
    const auto [b, db] = margin(1);
    const Tensor undecided = le(abs(sub(a, b)), add(da, db));
    Tensor equal = where(undecided, full_like(undecided, side > 0 ? 1.0 : 0.0), eq(a, b));
    if (node.op == ir::OpKind::Ne) equal = logical_not(equal);
    const Tensor moved = equal.to(outputs[0].dtype());
    if (!same_values(moved, outputs[0])) moved_.insert(n);
    outputs[0] = moved;
  }

  // A kink keeps its forward value; its derivative is taken at the moved input, so the
  // gradient routes as a path whose rounding crossed the kink would route it. A kink moves at
  // least one ulp of its input's dtype (float32's, float16's, bfloat16's): the derivative on a
  // kink is each PyTorch's convention (clamp's at a bound is 1 in LibTorch 1.13, 0 in 2.x, 0.5
  // with tensor bounds), and the dtype may put an input that float64 puts near a bound on
  // either side of it, or on it (PyTorch rounds a clamp's scalar bound to a float16 tensor's
  // dtype), so an input on a kink is undecided even where rounding cannot move it.
  void move_kink(std::size_t n, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                 double side) {
    const ir::Node& node = graph_.nodes()[n];
    std::vector<Tensor> shifted = inputs;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].defined() || !inputs[i].is_floating_point()) continue;
      const std::vector<double> x = inputs[i].to_vector<double>();
      std::vector<double> d = delta(node.inputs[i]);
      d.resize(x.size(), 0.0);
      const Dtype declared = graph_.type(node.inputs[i]).dtype;
      const double unit = is_reduced_floating(declared) ? dtype_epsilon(declared) : 0x1p-23;
      const double smallest = declared == Dtype::Float16
                                  ? 0x1p-24
                                  : static_cast<double>(std::numeric_limits<float>::denorm_min());
      for (std::size_t j = 0; j < x.size(); ++j) {
        const double ulp = std::max(std::abs(x[j]) * unit, smallest);
        if (std::isfinite(ulp)) d[j] = std::max(d[j], ulp);
      }
      shifted[i] = shift(inputs[i], d, i == 0 ? side : -side);
    }
    ir::Node scratch;
    const std::vector<Tensor> moved =
        ir::run_node(ir::with_declared_defaults(graph_, node, scratch), shifted, Dtype::Float64);
    if (moved.size() != outputs.size()) return;
    for (std::size_t k = 0; k < moved.size(); ++k) {
      if (!moved[k].is_floating_point() || moved[k].sizes() != outputs[k].sizes()) continue;
      const std::vector<double> want = outputs[k].to_vector<double>();
      const std::vector<double> got = moved[k].to_vector<double>();
      std::vector<double> correction(want.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        const double c = want[i] - got[i];
        correction[i] = std::isfinite(c) ? c : 0.0;
      }
      if (!same_values(moved[k], outputs[k])) moved_.insert(n);
      outputs[k] =
          add(moved[k],
              from_blob(correction.data(), moved[k].sizes(), Dtype::Float64).to(moved[k].dtype()));
    }
  }

  // argmax/argmin (and max/min's indices) pick the first (side < 0) or the last (side > 0) of
  // the elements whose values lie within their moves of the extreme.
  void move_index(std::size_t n, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                  double side) {
    const ir::Node& node = graph_.nodes()[n];
    if (node.op == ir::OpKind::Sort || node.op == ir::OpKind::Argsort ||
        node.op == ir::OpKind::Topk) {
      move_order(n, inputs, outputs, side);
      return;
    }
    if (node.op == ir::OpKind::Cummax || node.op == ir::OpKind::Cummin) {
      move_running_index(n, inputs, outputs, side);
      return;
    }
    const std::size_t slot = node.outputs.size() == 2 ? 1 : 0;
    if (inputs.empty() || !inputs[0].defined() || slot >= outputs.size()) return;
    const bool largest = node.op == ir::OpKind::Argmax || node.op == ir::OpKind::Max;
    const std::vector<double> x = inputs[0].to_vector<double>();
    const std::vector<double> d = delta(node.inputs[0]);
    const Slices s = slices_of(node, inputs[0].sizes());
    std::vector<std::int64_t> index = outputs[slot].to_vector<std::int64_t>();
    if (s.size == 0 || index.size() != s.count) return;
    bool changed = false;
    for (std::size_t e = 0; e < s.count; ++e) {
      const std::size_t begin = s.begin(e);
      std::size_t best = begin;
      bool has_nan = false;
      for (std::size_t j = 0; j < s.size; ++j) {
        const std::size_t at = begin + j * s.inner;
        has_nan = has_nan || std::isnan(x[at]);
        if (largest ? x[at] > x[best] : x[at] < x[best]) best = at;
      }
      if (has_nan) continue;
      const double best_move = best < d.size() ? d[best] : 0.0;
      std::int64_t pick = -1;
      for (std::size_t j = 0; j < s.size; ++j) {
        const std::size_t at = begin + j * s.inner;
        const double move = (at < d.size() ? d[at] : 0.0) + best_move;
        if (std::abs(x[at] - x[best]) <= move) {
          if (pick < 0 || side > 0) pick = static_cast<std::int64_t>(j);
        }
      }
      if (pick >= 0 && pick != index[e]) {
        index[e] = pick;
        changed = true;
      }
    }
    if (!changed) return;
    moved_.insert(n);
    outputs[slot] =
        from_blob(index.data(), outputs[slot].sizes(), Dtype::Int64).to(outputs[slot].dtype());
  }

  // cummax/cummin's indices: at each position, any earlier position whose value lies within the
  // margins of the running extreme's could be the one a path names (ATen names the last of
  // exact ties). One side picks the first such position, the other the last; a line stops
  // being moved at its first NaN, which then holds the running value.
  void move_running_index(std::size_t n, const std::vector<Tensor>& inputs,
                          std::vector<Tensor>& outputs, double side) {
    const ir::Node& node = graph_.nodes()[n];
    if (inputs.empty() || !inputs[0].defined() || outputs.size() != 2) return;
    const bool largest = node.op == ir::OpKind::Cummax;
    const std::vector<double> x = inputs[0].to_vector<double>();
    const std::vector<double> d = delta(node.inputs[0]);
    const Slices s = slices_of(node, inputs[0].sizes());
    std::vector<std::int64_t> index = outputs[1].to_vector<std::int64_t>();
    if (s.size == 0 || index.size() != s.count * s.size) return;
    const auto margin = [&](std::size_t at) { return at < d.size() ? d[at] : 0.0; };
    bool changed = false;
    for (std::size_t e = 0; e < s.count; ++e) {
      const std::size_t begin = s.begin(e);
      std::size_t best = begin;
      for (std::size_t k = 0; k < s.size; ++k) {
        const std::size_t at = begin + k * s.inner;
        if (std::isnan(x[at])) break;
        if (largest ? x[at] >= x[best] : x[at] <= x[best]) best = at;
        std::int64_t pick = -1;
        for (std::size_t j = 0; j <= k; ++j) {
          const std::size_t other = begin + j * s.inner;
          if (std::abs(x[other] - x[best]) <= margin(other) + margin(best)) {
            if (pick < 0 || side > 0) pick = static_cast<std::int64_t>(j);
          }
        }
        if (pick >= 0 && pick != index[at]) {
          index[at] = pick;
          changed = true;
        }
      }
    }
    if (!changed) return;
    moved_.insert(n);
    outputs[1] = from_blob(index.data(), outputs[1].sizes(), Dtype::Int64).to(outputs[1].dtype());
  }

  // sort, argsort, topk: elements whose values lie within their rounding margins of each other
  // (chained, in sorted order) could come out in any order, and a path may order exact ties as
  // it likes (stable=False, topk). One side keeps such a group in input order, the other
  // rotates it by one, so every position in a group differs between the two runs and is not
  // judged, nor is anything computed from it; topk then keeps the first k.
  void move_order(std::size_t n, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                  double side) {
    ir::Node node = graph_.nodes()[n];
    node.attrs = ir::with_defaults(node.op, node.attrs);  // dim -1 when the graph leaves it out
    const std::size_t slot = outputs.size() == 2 ? 1 : 0;
    if (inputs.empty() || !inputs[0].defined() || slot >= outputs.size()) return;
    const bool descending = node.op == ir::OpKind::Topk ? node.attrs.get_bool("largest")
                                                        : node.attrs.get_bool("descending");
    // Line e of the input starts at lines.begin(e), of the indices at kept.begin(e).
    const Slices lines = slices_of(node, inputs[0].sizes());
    Slices kept = lines;
    kept.size = inputs[0].dim() == 0 ? 1
                                     : static_cast<std::size_t>(outputs[slot].size(
                                           wrap_dim(node.attrs.get_int("dim"), inputs[0].dim())));
    const std::vector<double> x = inputs[0].to_vector<double>();
    const std::vector<double> d = delta(node.inputs[0]);
    std::vector<std::int64_t> index = outputs[slot].to_vector<std::int64_t>();
    if (index.size() != lines.count * kept.size) return;
    bool changed = false;
    std::vector<std::size_t> order(lines.size);
    for (std::size_t e = 0; e < lines.count; ++e) {
      const auto at = [&](std::size_t j) { return lines.begin(e) + j * lines.inner; };
      bool has_nan = false;
      for (std::size_t j = 0; j < lines.size; ++j) has_nan = has_nan || std::isnan(x[at(j)]);
      if (has_nan) continue;
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return descending ? x[at(a)] > x[at(b)] : x[at(a)] < x[at(b)];
      });
      // Groups of neighbours in sorted order that rounding could swap.
      std::size_t begin = 0;
      while (begin < order.size()) {
        std::size_t end = begin + 1;
        while (end < order.size()) {
          const std::size_t p = at(order[end - 1]), q = at(order[end]);
          const double move = (p < d.size() ? d[p] : 0.0) + (q < d.size() ? d[q] : 0.0);
          if (std::abs(x[p] - x[q]) > move) break;
          ++end;
        }
        const auto first = order.begin() + static_cast<std::ptrdiff_t>(begin);
        const auto last = order.begin() + static_cast<std::ptrdiff_t>(end);
        std::sort(first, last);
        if (side > 0 && end - begin > 1) std::rotate(first, first + 1, last);
        begin = end;
      }
      for (std::size_t j = 0; j < kept.size; ++j) {
        std::int64_t& slot_index = index[kept.begin(e) + j * kept.inner];
        const auto picked = static_cast<std::int64_t>(order[j]);
        changed = changed || slot_index != picked;
        slot_index = picked;
      }
    }
    if (!changed) return;
    moved_.insert(n);
    const Tensor moved =
        from_blob(index.data(), outputs[slot].sizes(), Dtype::Int64).to(outputs[slot].dtype());
    outputs[slot] = moved;
    // The values follow their indices (a gather, so the gradient follows them too).
    if (slot == 1) {
      outputs[0] = gather(inputs[0], inputs[0].dim() == 0 ? 0 : node.attrs.get_int("dim"), moved);
    }
  }

  const ir::Graph& graph_;
  const ir::TensorMap& values_;
  const std::vector<Tensor>& cotangents_;
  const RoundingOptions& options_;
  std::vector<Tensor> reference_;
  std::vector<std::vector<double>> error_;
  std::set<std::size_t> moved_;
};

}  // namespace

bool is_decision_node(const ir::Graph& graph, const ir::Node& node) {
  return decision_of(graph, node) != Decision::None;
}

bool is_discrete_decision(const ir::Graph& graph, const ir::Node& node) {
  const Decision decision = decision_of(graph, node);
  return decision == Decision::Elementwise || decision == Decision::Index;
}

RoundingModel model_rounding(const ir::Graph& graph, const ir::TensorMap& values,
                             const std::vector<Tensor>& cotangents,
                             const RoundingOptions& options) {
  return Model(graph, values, cotangents, options).build();
}

}  // namespace weft::oracle
