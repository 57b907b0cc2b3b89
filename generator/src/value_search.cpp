// The numeric-validity value search. The common case costs one check (a float32 and a
// float64 forward-backward); only graphs that fail it pay for gradient steps, which run on a
// float64 copy of the graph whose non-finite values are cut out of the autograd graph, and
// whose flat ops pass gradients straight through, so that one bad node never blinds the rest.
#include "weft/gen/value_search.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ir/op_kind.h"
#include "weft/ops.h"
#include "weft/random.h"

#include "value_op_facts.h"

namespace weft::gen {

namespace {

using ir::OpKind;
using ir::ValueId;

// Mixed into the seed so that the cotangents are not the leaves' first draws.
constexpr std::uint64_t kCotangentSalt = 0x9E3779B97F4A7C15ULL;

// Rprop step sizes: the first step, and the limits of its growth and decay.
constexpr double kInitialStep = 0.05;
constexpr double kMaxStep = 2.0;
constexpr double kMinStep = 1e-6;

// A round of steps ends when the count of violations has not fallen in kPatience steps (a
// loss can fall forever towards a pole's far side).
constexpr int kPatience = 6;

bool all_finite(const Tensor& t) {
  if (!t.defined() || !t.is_floating_point() || t.numel() == 0) return true;
  const Tensor c = t.contiguous();
  if (c.dtype() == Dtype::Float32) {
    const float* p = c.data<float>();
    for (std::int64_t i = 0; i < c.numel(); ++i) {
      if (!std::isfinite(p[i])) return false;
    }
    return true;
  }
  const Tensor d = c.dtype() == Dtype::Float64 ? c : c.to(Dtype::Float64);
  const double* p = d.data<double>();
  for (std::int64_t i = 0; i < d.numel(); ++i) {
    if (!std::isfinite(p[i])) return false;
  }
  return true;
}

bool violates(const DomainHint& hint, double x) {
  switch (hint.kind) {
    case DomainKind::Above:
      return !(x > hint.bound);
    case DomainKind::AwayFromZero:
      return !(std::fabs(x) > hint.bound);
    case DomainKind::Below:
      return !(x < hint.bound);
    case DomainKind::Within:
      return !(std::fabs(x) < hint.bound);
    case DomainKind::AwayFromPole:
      return !(std::fabs(std::cos(x)) > hint.bound);
    case DomainKind::InsideUnit:
      return !(x > hint.bound && x < 1.0 - hint.bound);
  }
  return false;
}

// Grows as `x` leaves the hint's domain; zero inside it.
Tensor penalty(const DomainHint& hint, const Tensor& x) {
  switch (hint.kind) {
    case DomainKind::Above:
      return sum(relu(hint.bound - x));
    case DomainKind::AwayFromZero: {
      // |x| has no direction at 0; push each element away on the side it is on (0: up).
      std::vector<double> side = x.to_vector<double>();
      for (double& e : side) e = e < 0 ? -1.0 : 1.0;
      return sum(relu(hint.bound - x * from_blob(side.data(), x.sizes(), Dtype::Float64)));
    }
    case DomainKind::Below:
      return sum(relu(x - hint.bound));
    case DomainKind::Within:
      return sum(relu(abs(x) - hint.bound));
    case DomainKind::AwayFromPole:
      return sum(relu(hint.bound - abs(cos(x))));
    case DomainKind::InsideUnit:
      return sum(relu(hint.bound - x) + relu(x - (1.0 - hint.bound)));
  }
  throw Error("value search: unknown domain kind");
}

// A leaf of the graph and what its consumers ask of its values.
struct LeafInfo {
  ValueId id = 0;
  std::string name;
  ir::TensorType type{Dtype::Float32, {}};
  // Integers: indices below this bound, all different when `distinct_indices`.
  std::optional<std::int64_t> index_bound;
  bool distinct_indices = false;
  // Distinct within each line along this dim only, not over the whole tensor.
  std::optional<std::int64_t> distinct_dim;
  // Floats: the domain of the first hinted consumer slot it feeds directly.
  std::optional<DomainHint> domain;
  // Floats feeding a weight slot: draws scaled to 1/sqrt(fan-in).
  double weight_scale = 1.0;
  // Integers feeding pow: exponents >= 0, bases >= 1.
  bool pow_exponent = false;
  bool pow_base = false;
};

// What one consumer (`slot` of `node`, whose hints are `hints`) asks of a leaf's values.
void note_consumer(LeafInfo& info, const ir::Node& node, std::size_t slot,
                   const std::vector<DomainHint>& hints) {
  if (node.op == OpKind::Pow) {
    (slot == 0 ? info.pow_base : info.pow_exponent) = true;
  }
  if (needs_distinct_indices(node, slot)) {
    info.distinct_indices = true;
    info.distinct_dim = distinct_dim(node, info.type.shape.size());
  }
  if (!info.domain) {
    for (const DomainHint& hint : hints) {
      if (hint.input == slot) info.domain = hint;
    }
  }
  if (const auto fan = fan_in(node, slot, info.type.shape); fan && *fan > 0) {
    info.weight_scale = std::min(info.weight_scale, std::sqrt(3.0 / static_cast<double>(*fan)));
  }
}

// What the search knows about a graph, computed once.
class Context {
 public:
  explicit Context(const ir::Graph& graph) : graph_(graph) {
    const auto& nodes = graph.nodes();
    consumers_.resize(graph.values().size());
    producer_.assign(graph.values().size(), -1);
    hints_.reserve(nodes.size());
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      for (std::size_t slot = 0; slot < nodes[n].inputs.size(); ++slot) {
        consumers_[static_cast<std::size_t>(nodes[n].inputs[slot])].push_back({n, slot});
      }
      for (ValueId out : nodes[n].outputs) {
        producer_[static_cast<std::size_t>(out)] = static_cast<int>(n);
      }
      hints_.push_back(domain_hints(graph, nodes[n]));
    }
    for (ir::LeafKind kind : {ir::LeafKind::Input, ir::LeafKind::Parameter}) {
      for (ValueId id : graph.leaves(kind)) leaves_.push_back(describe(id));
    }
  }

  const ir::Graph& graph() const { return graph_; }
  const std::vector<LeafInfo>& leaves() const { return leaves_; }
  const std::vector<DomainHint>& hints(std::size_t node) const { return hints_[node]; }

  // Which leaves (by index into leaves()) the node's inputs depend on.
  std::vector<bool> ancestors(std::size_t node) const {
    std::vector<bool> seen(graph_.values().size(), false);
    std::vector<ValueId> stack(graph_.nodes()[node].inputs);
    while (!stack.empty()) {
      const ValueId v = stack.back();
      stack.pop_back();
      if (seen[static_cast<std::size_t>(v)]) continue;
      seen[static_cast<std::size_t>(v)] = true;
      const int p = producer_[static_cast<std::size_t>(v)];
      if (p >= 0) {
        for (ValueId in : graph_.nodes()[static_cast<std::size_t>(p)].inputs) stack.push_back(in);
      }
    }
    std::vector<bool> result(leaves_.size(), false);
    for (std::size_t i = 0; i < leaves_.size(); ++i) {
      result[i] = seen[static_cast<std::size_t>(leaves_[i].id)];
    }
    return result;
  }

 private:
  LeafInfo describe(ValueId id) const {
    const ir::Value& value = graph_.value(id);
    LeafInfo info;
    info.id = id;
    info.name = value.name;
    info.type = value.type;
    for (const auto& [n, slot] : consumers_[static_cast<std::size_t>(id)]) {
      note_consumer(info, graph_.nodes()[n], slot, hints_[n]);
    }
    if (is_integral(value.type.dtype)) info.index_bound = reached_index_bound(id);
    return info;
  }

  // The smallest bound of the index slots that `id` reaches through element-preserving ops.
  std::optional<std::int64_t> reached_index_bound(ValueId id) const {
    std::optional<std::int64_t> bound;
    std::vector<bool> seen(graph_.values().size(), false);
    std::vector<ValueId> stack{id};
    while (!stack.empty()) {
      const ValueId v = stack.back();
      stack.pop_back();
      if (seen[static_cast<std::size_t>(v)]) continue;
      seen[static_cast<std::size_t>(v)] = true;
      for (const auto& [n, slot] : consumers_[static_cast<std::size_t>(v)]) {
        const ir::Node& node = graph_.nodes()[n];
        if (const auto b = index_bound(graph_, node, slot)) {
          bound = bound ? std::min(*bound, *b) : *b;
        } else if (passes_elements(node.op, slot)) {
          for (ValueId out : node.outputs) stack.push_back(out);
        }
      }
    }
    return bound;
  }

  const ir::Graph& graph_;
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> consumers_;
  std::vector<int> producer_;
  std::vector<std::vector<DomainHint>> hints_;
  std::vector<LeafInfo> leaves_;
};

// 0..bound-1 in a random order (Fisher-Yates).
std::vector<std::int64_t> shuffled_range(std::int64_t bound, Generator& gen) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(bound));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int64_t>(i);
  for (std::size_t i = v.size(); i > 1; --i) {
    const auto pick = static_cast<std::size_t>(gen.uniform() * static_cast<double>(i));
    std::swap(v[i - 1], v[std::min(pick, i - 1)]);
  }
  return v;
}

// Indices of `shape` that differ within every line along `dim`: each line the first entries of
// its own shuffle of 0..bound-1. Undefined where a line is longer than `bound`.
Tensor distinct_lines(const ir::Shape& shape, std::int64_t dim, std::int64_t bound,
                      Generator& gen) {
  const auto d = static_cast<std::size_t>(dim);
  if (d >= shape.size() || shape[d] > bound) return Tensor();
  std::int64_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < d; ++i) outer *= shape[i];
  for (std::size_t i = d + 1; i < shape.size(); ++i) inner *= shape[i];
  const std::int64_t length = shape[d];
  std::vector<std::int64_t> v(static_cast<std::size_t>(outer * length * inner));
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      const std::vector<std::int64_t> order = shuffled_range(bound, gen);
      for (std::int64_t k = 0; k < length; ++k) {
        v[static_cast<std::size_t>((o * length + k) * inner + i)] =
            order[static_cast<std::size_t>(k)];
      }
    }
  }
  return tensor(v).reshape(shape).clone();
}

// Draws one leaf's values; `scale` shrinks the unconstrained floating draws of later tries.
Tensor draw_leaf(const LeafInfo& leaf, Generator& gen, double scale) {
  const std::int64_t n = numel_of(leaf.type.shape);
  const Dtype dtype = leaf.type.dtype;
  auto uniform = [&gen](double lo, double hi) { return lo + (hi - lo) * gen.uniform(); };
  auto below = [&gen](std::int64_t bound) {
    return static_cast<std::int64_t>(gen.uniform() * static_cast<double>(bound));
  };
  if (dtype == Dtype::Bool) {
    std::vector<bool> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = gen.uniform() < 0.5;
    return tensor(v).reshape(leaf.type.shape).clone();
  }
  if (is_integral(dtype) && leaf.distinct_indices && leaf.index_bound && leaf.distinct_dim) {
    const Tensor lines =
        distinct_lines(leaf.type.shape, *leaf.distinct_dim, *leaf.index_bound, gen);
    if (lines.defined()) return lines.to(dtype);
  }
  if (is_integral(dtype) && leaf.distinct_indices && leaf.index_bound && !leaf.distinct_dim &&
      n <= *leaf.index_bound) {
    // n different indices: the first n of a shuffled 0..bound-1.
    std::vector<std::int64_t> v = shuffled_range(*leaf.index_bound, gen);
    v.resize(static_cast<std::size_t>(n));
    return tensor(v).reshape(leaf.type.shape).to(dtype).clone();
  }
  if (is_integral(dtype)) {
    std::vector<std::int64_t> v(static_cast<std::size_t>(n));
    const DomainKind kind = leaf.domain ? leaf.domain->kind : DomainKind::AwayFromZero;
    for (auto& x : v) {
      if (leaf.index_bound) {
        x = *leaf.index_bound > 0 ? below(*leaf.index_bound) : 0;
      } else if (kind == DomainKind::Above) {
        x = 1 + below(3);  // log, sqrt of an integer
      } else if (kind == DomainKind::Within && leaf.domain->bound <= 1.0) {
        x = 0;  // asin, acos of an integer: 0 is the only one inside
      } else if (leaf.pow_exponent) {
        x = below(3);  // integers to negative powers are an error
      } else if (leaf.pow_base) {
        x = 1 + below(3);
      } else {
        x = (1 + below(3)) * (gen.uniform() < 0.5 ? -1 : 1);  // non-zero: divisors
      }
    }
    return tensor(v).reshape(leaf.type.shape).to(dtype).clone();
  }
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) {
    if (!leaf.domain) {
      x = uniform(-1.0, 1.0) * scale * leaf.weight_scale;
      continue;
    }
    const DomainHint& h = *leaf.domain;
    switch (h.kind) {
      case DomainKind::Above:
        x = uniform(0.5, 1.5) + std::max(h.bound, 0.0);
        break;
      case DomainKind::AwayFromZero:
        x = (uniform(0.5, 1.5) + h.bound) * (gen.uniform() < 0.5 ? -1.0 : 1.0);
        break;
      case DomainKind::Below:
        x = std::min(uniform(-1.0, 1.0) * scale, h.bound - 0.5);
        break;
      case DomainKind::Within:
        x = uniform(-1.0, 1.0) * std::min(scale, 0.9 * h.bound);
        break;
      case DomainKind::AwayFromPole:
        x = uniform(-1.0, 1.0) * scale;
        break;
      case DomainKind::InsideUnit:
        x = uniform(h.bound, 1.0 - h.bound);
        break;
    }
  }
  return tensor(v).reshape(leaf.type.shape).to(dtype).clone();
}

// The floating leaves' values in float64, as the search moves them, with Rprop's state.
struct FloatLeaf {
  std::size_t leaf;  // index into Context::leaves()
  std::vector<double> x;
  std::vector<double> step;
  std::vector<signed char> last_sign;
};

void reset_steps(FloatLeaf& f) {
  f.step.assign(f.x.size(), kInitialStep);
  f.last_sign.assign(f.x.size(), 0);
}

FloatLeaf float_leaf(std::size_t index, const Tensor& value) {
  FloatLeaf f{index, value.to_vector<double>(), {}, {}};
  reset_steps(f);
  return f;
}

Tensor to_tensor(const FloatLeaf& f, const LeafInfo& info) {
  return from_blob(f.x.data(), info.type.shape, Dtype::Float64).to(info.type.dtype);
}

struct LossPass {
  bool any_term = false;
  // The first node with an active term, and the first with a non-finite output.
  std::optional<std::size_t> first_term_node;
  std::optional<std::size_t> first_nonfinite_node;
  std::vector<std::vector<double>> gradients;  // per FloatLeaf
  double loss = 0.0;
  // Elements outside a hint's domain, beyond the magnitude bound, or not finite.
  std::size_t violations = 0;
};

bool any_gradient(const LossPass& pass) {
  for (const auto& g : pass.gradients) {
    if (std::any_of(g.begin(), g.end(), [](double e) { return e != 0.0; })) return true;
  }
  return false;
}

// A copy of `t` with its non-finite elements replaced by zeros, and no history: downstream
// nodes still run, and no gradient flows back into the node that failed.
Tensor finite_copy(const Tensor& t) {
  std::vector<double> v = t.to_vector<double>();
  for (double& x : v) {
    if (!std::isfinite(x)) x = 0.0;
  }
  return from_blob(v.data(), t.sizes(), Dtype::Float64).to(t.dtype());
}

// One float64 forward of the loss (hint penalties and magnitude penalties) and its gradient
// with respect to the floating leaves.
LossPass loss_pass(const Context& ctx, const std::vector<FloatLeaf>& floats,
                   const ir::TensorMap& values, double bound) {
  const ir::Graph& graph = ctx.graph();
  std::vector<Tensor> vals(graph.values().size());
  std::vector<Tensor> sources;
  std::vector<Tensor> terms;
  LossPass pass;
  auto magnitude = [&](const Tensor& t) {
    if (!t.is_floating_point() || t.numel() == 0) return false;
    const std::vector<double> v = t.to_vector<double>();
    const auto count = static_cast<std::size_t>(
        std::count_if(v.begin(), v.end(), [bound](double x) { return std::fabs(x) > bound; }));
    pass.violations += count;
    const bool large = count > 0;
    if (large) terms.push_back(sum(relu(abs(t) - bound)) * (1.0 / bound));
    return large;
  };
  for (const LeafInfo& leaf : ctx.leaves()) {
    vals[static_cast<std::size_t>(leaf.id)] = values.at(leaf.name);
  }
  for (const FloatLeaf& f : floats) {
    const LeafInfo& leaf = ctx.leaves()[f.leaf];
    Tensor t = from_blob(f.x.data(), leaf.type.shape, Dtype::Float64);
    t.requires_grad_(true);
    sources.push_back(t);
    vals[static_cast<std::size_t>(leaf.id)] = t;
    magnitude(t);  // no node to blame: a stuck search then draws every leaf again
  }
  const auto& nodes = graph.nodes();
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const ir::Node& node = nodes[n];
    std::vector<Tensor> inputs;
    inputs.reserve(node.inputs.size());
    for (ValueId id : node.inputs) inputs.push_back(vals[static_cast<std::size_t>(id)]);
    bool active = false;
    bool outside = false;
    for (const DomainHint& hint : ctx.hints(n)) {
      if (hint.input >= inputs.size()) continue;
      const Tensor& x = inputs[hint.input];
      if (!x.is_floating_point() || x.numel() == 0) continue;
      const std::vector<double> v = x.to_vector<double>();
      const auto outside_count = static_cast<std::size_t>(
          std::count_if(v.begin(), v.end(), [&hint](double e) { return violates(hint, e); }));
      pass.violations += outside_count;
      if (outside_count > 0) {
        active = true;
        outside = true;
        if (x.requires_grad()) terms.push_back(penalty(hint, x));
      }
    }
    std::vector<Tensor> outputs;
    ir::Node scratch;
    const ir::Node& declared = ir::with_declared_defaults(graph, node, scratch);
    const bool surrogate = straight_through(node.op) && inputs.size() == 1 &&
                           inputs[0].is_floating_point() && inputs[0].requires_grad();
    if (surrogate) {
      outputs = ir::run_node(declared, {inputs[0].detach()}, Dtype::Float64);
      if (outputs.size() == 1 && outputs[0].is_floating_point() &&
          outputs[0].sizes() == inputs[0].sizes()) {
        outputs[0] = add(outputs[0], sub(inputs[0], inputs[0].detach()));
      }
    } else {
      outputs = ir::run_node(declared, inputs, Dtype::Float64);
    }
    for (std::size_t k = 0; k < outputs.size() && k < node.outputs.size(); ++k) {
      Tensor out = outputs[k];
      if (out.is_floating_point() && out.dtype() != Dtype::Float64) out = out.to(Dtype::Float64);
      if (!all_finite(out)) {
        if (!pass.first_nonfinite_node) pass.first_nonfinite_node = n;
        ++pass.violations;
        out = finite_copy(out);
      } else if (outside) {
        // Finite, but at or near a singular point (sqrt at 0): its backward would turn the
        // downstream terms' gradients into NaN. The node's own term moves its inputs.
        out = out.detach();
      } else if (magnitude(out)) {
        active = true;
      }
      vals[static_cast<std::size_t>(node.outputs[k])] = out;
    }
    if (active && !pass.first_term_node) pass.first_term_node = n;
  }
  pass.any_term = !terms.empty();
  pass.gradients.resize(floats.size());
  if (!pass.any_term) return pass;
  Tensor loss = terms[0];
  for (std::size_t i = 1; i < terms.size(); ++i) loss = add(loss, terms[i]);
  pass.loss = loss.item();
  const std::vector<Tensor> grads = autograd::grad({loss}, sources, {}, false, false, true);
  for (std::size_t i = 0; i < floats.size(); ++i) {
    if (!grads[i].defined()) {
      pass.gradients[i].assign(floats[i].x.size(), 0.0);
      continue;
    }
    pass.gradients[i] = grads[i].to_vector<double>();
    for (double& g : pass.gradients[i]) {
      if (!std::isfinite(g)) g = 0.0;  // a singular backward upstream: no direction
    }
  }
  return pass;
}

// One Rprop step; returns how many elements moved.
std::size_t rprop_step(std::vector<FloatLeaf>& floats, const LossPass& pass) {
  std::size_t moved = 0;
  for (std::size_t i = 0; i < floats.size(); ++i) {
    FloatLeaf& f = floats[i];
    for (std::size_t e = 0; e < f.x.size(); ++e) {
      const double g = pass.gradients[i][e];
      if (g == 0.0) continue;
      const signed char s = g > 0 ? 1 : -1;
      if (s == f.last_sign[e]) {
        f.step[e] = std::min(f.step[e] * 1.2, kMaxStep);
      } else if (f.last_sign[e] != 0) {
        f.step[e] = std::max(f.step[e] * 0.5, kMinStep);
      }
      f.last_sign[e] = s;
      f.x[e] -= s * f.step[e];
      ++moved;
    }
  }
  return moved;
}

// What is not finite in `run` ("" when everything is); sets the check's failing node.
std::string problem_text(const ir::Graph& graph, const ir::GradientExecution& run,
                         const std::string& in, FiniteCheck& check) {
  const auto& nodes = graph.nodes();
  for (std::size_t n = 0; n < nodes.size() && !check.failing_node; ++n) {
    for (std::size_t k = 0; k < nodes[n].outputs.size(); ++k) {
      const Tensor& v = run.forward.values[static_cast<std::size_t>(nodes[n].outputs[k])];
      if (!all_finite(v)) {
        check.failing_node = n;
        check.problem =
            ir::node_label(graph, n) + ": output " + std::to_string(k) + " is not finite" + in;
        break;
      }
    }
  }
  for (std::size_t i = 0; i < run.forward.outputs.size(); ++i) {
    if (!all_finite(run.forward.outputs[i])) {
      return check.problem.empty() ? "output " + std::to_string(i) + " is not finite" + in
                                   : check.problem;
    }
  }
  for (const auto& [name, g] : run.gradients) {
    if (!all_finite(g)) {
      std::string text = "gradient of '" + name + "' is not finite" + in;
      if (!check.problem.empty()) text += " (" + check.problem + ")";
      return text;
    }
  }
  return "";
}

}  // namespace

ir::TensorMap initial_values(const ir::Graph& graph, std::uint64_t seed) {
  const Context ctx(graph);
  Generator gen(seed);
  ir::TensorMap values;
  for (const LeafInfo& leaf : ctx.leaves()) values[leaf.name] = draw_leaf(leaf, gen, 1.0);
  return values;
}

Tensor draw_initial_value(const ir::Graph& graph, const ir::Node& consumer, std::size_t slot,
                          ValueId leaf, ::weft::Generator& gen) {
  const ir::Value& value = graph.value(leaf);
  LeafInfo info;
  info.id = leaf;
  info.name = value.name;
  info.type = value.type;
  note_consumer(info, consumer, slot, domain_hints(graph, consumer));
  if (is_integral(value.type.dtype)) info.index_bound = index_bound(graph, consumer, slot);
  return draw_leaf(info, gen, 1.0);
}

bool inside_domain(const DomainHint& hint, const Tensor& x) {
  if (!x.defined() || !x.is_floating_point() || x.numel() == 0) return true;
  const Tensor c = x.contiguous();
  if (c.dtype() == Dtype::Float32) {
    const float* p = c.data<float>();
    for (std::int64_t i = 0; i < c.numel(); ++i) {
      if (violates(hint, static_cast<double>(p[i]))) return false;
    }
    return true;
  }
  const Tensor d = c.dtype() == Dtype::Float64 ? c : c.to(Dtype::Float64);
  const double* p = d.data<double>();
  for (std::int64_t i = 0; i < d.numel(); ++i) {
    if (violates(hint, p[i])) return false;
  }
  return true;
}

FiniteCheck check_finite(const ir::Graph& graph, const ir::TensorMap& values,
                         const std::vector<Tensor>& cotangents) {
  FiniteCheck check;
  // A graph with float16 or bfloat16 values also runs in its own dtypes: their narrow range
  // (float16 ends at 65504) overflows where float32 does not.
  std::vector<std::optional<Dtype>> runs{Dtype::Float32, Dtype::Float64};
  for (const ir::Value& value : graph.values()) {
    if (is_reduced_floating(value.type.dtype)) {
      runs.insert(runs.begin(), std::nullopt);
      break;
    }
  }
  for (const std::optional<Dtype>& dtype : runs) {
    ir::ExecutionOptions options;
    options.floating_dtype = dtype;
    options.keep_values = true;
    // In-place writes run as written where a path runs them (the engine may refuse them
    // there); the float64 reference runs the dataflow.
    options.as_written = dtype != Dtype::Float64;
    const std::string in = dtype ? std::string(" in ") + dtype_name(*dtype) : " in its own dtypes";
    try {
      const ir::GradientExecution run =
          ir::execute_with_gradients(graph, values, cotangents, options);
      std::string problem = problem_text(graph, run, in, check);
      if (!problem.empty()) {
        check.problem = std::move(problem);
        return check;
      }
    } catch (const std::exception& e) {
      check.problem = "engine error" + in + ": " + e.what();
      return check;
    }
  }
  check.finite = true;
  check.problem.clear();
  check.failing_node.reset();
  return check;
}

ValueSearchResult search_values(const ir::Graph& graph, const ValueSearchOptions& options) {
  const Context ctx(graph);
  const std::vector<Tensor> cotangents =
      options.cotangents.empty() ? ir::random_cotangents(graph, options.seed ^ kCotangentSalt)
                                 : options.cotangents;
  Generator gen(options.seed);
  ValueSearchResult result;
  for (const LeafInfo& leaf : ctx.leaves()) {
    const auto given = options.initial.find(leaf.name);
    if (given != options.initial.end() && given->second.defined() &&
        given->second.dtype() == leaf.type.dtype && given->second.sizes() == leaf.type.shape) {
      result.values[leaf.name] = given->second;
    } else {
      result.values[leaf.name] = draw_leaf(leaf, gen, 1.0);
    }
  }

  auto check = [&]() {
    ++result.checks;
    return check_finite(graph, result.values, cotangents);
  };
  FiniteCheck last = check();
  if (last.finite) {
    result.finite = true;
    return result;
  }

  std::vector<FloatLeaf> floats;
  auto load_floats = [&]() {
    floats.clear();
    for (std::size_t i = 0; i < ctx.leaves().size(); ++i) {
      const LeafInfo& leaf = ctx.leaves()[i];
      if (is_floating(leaf.type.dtype)) floats.push_back(float_leaf(i, result.values[leaf.name]));
    }
  };
  auto store_floats = [&]() {
    for (const FloatLeaf& f : floats) {
      const LeafInfo& leaf = ctx.leaves()[f.leaf];
      result.values[leaf.name] = to_tensor(f, leaf);
    }
  };
  load_floats();

  int round_steps = 0;
  int since_progress = 0;
  std::size_t fewest_violations = SIZE_MAX;
  while (true) {
    std::optional<std::size_t> stuck_at;
    bool stuck = false;
    bool checked = false;
    std::string problem;
    if (result.iterations >= options.max_iterations) {
      result.reason = "no finite values within " + std::to_string(options.max_iterations) +
                      " steps and " + std::to_string(result.resamples) +
                      " resamples: " + last.problem;
      return result;
    }
    LossPass pass;
    try {
      pass = loss_pass(ctx, floats, result.values, options.magnitude_bound);
    } catch (const std::exception& e) {
      stuck = true;
      problem = e.what();
    }
    if (!stuck && !pass.any_term) {
      // Every hint holds and every value is in bounds: the real check decides.
      last = check();
      checked = true;
      if (last.finite) {
        result.finite = true;
        return result;
      }
      stuck = true;
      stuck_at = last.failing_node ? last.failing_node : pass.first_nonfinite_node;
    } else if (!stuck) {
      const std::size_t moved = rprop_step(floats, pass);
      store_floats();
      ++result.iterations;
      ++round_steps;
      if (pass.violations < fewest_violations) {
        fewest_violations = pass.violations;
        since_progress = 0;
      } else {
        ++since_progress;
      }
      if (moved == 0 || round_steps >= options.steps_per_round || since_progress >= kPatience) {
        stuck = true;
        stuck_at = pass.first_term_node ? pass.first_term_node : pass.first_nonfinite_node;
      }
    }
    if (!stuck) continue;

    // The hints can be stricter than finiteness needs: look before drawing again.
    if (!checked) {
      last = check();
      if (last.finite) {
        result.finite = true;
        return result;
      }
    }
    if (result.resamples >= options.max_resamples) {
      result.reason = "no finite values after " + std::to_string(result.resamples) +
                      " resamples and " + std::to_string(result.iterations) +
                      " steps: " + (problem.empty() ? last.problem : problem);
      return result;
    }
    ++result.resamples;
    if (any_gradient(pass)) {
      // Draw again only the elements the failing terms depend on: a domain on the far side
      // of a pole (sqrt(tanh(1 / y)) needs y > 0) is out of the gradient's reach, and a fresh
      // draw lands there with some chance per element; redrawing whole leaves would undo the
      // elements already inside.
      for (std::size_t i = 0; i < floats.size(); ++i) {
        const std::vector<double>& g = pass.gradients[i];
        if (std::all_of(g.begin(), g.end(), [](double e) { return e == 0.0; })) continue;
        const std::vector<double> fresh =
            draw_leaf(ctx.leaves()[floats[i].leaf], gen, 1.0).to_vector<double>();
        for (std::size_t e = 0; e < g.size(); ++e) {
          if (g[e] != 0.0) floats[i].x[e] = fresh[e];
        }
      }
      store_floats();
    } else {
      // Every leaf behind the failing node, smaller each time: overflow is the commonest
      // failure the hints do not name.
      const double scale = std::pow(0.5, result.resamples);
      const std::vector<bool> targets =
          stuck_at ? ctx.ancestors(*stuck_at) : std::vector<bool>(ctx.leaves().size(), true);
      for (std::size_t i = 0; i < ctx.leaves().size(); ++i) {
        if (targets[i]) {
          result.values[ctx.leaves()[i].name] = draw_leaf(ctx.leaves()[i], gen, scale);
        }
      }
    }
    load_floats();
    round_steps = 0;
    since_progress = 0;
    fewest_violations = SIZE_MAX;
    last = check();
    if (last.finite) {
      result.finite = true;
      return result;
    }
  }
}

}  // namespace weft::gen
