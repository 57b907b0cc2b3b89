// Whole-graph shape shrinking with the generator's specs: find the choices that made every
// node, encode every rule for Z3 with shared dims, ask for small leaves, and replay the rules
// on the solution (which derives the attributes that follow from shapes).
#include "weft/gen/shrink.h"

#include <z3++.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <variant>

#include "spec/builder.h"
#include "weft/gen/spec.h"

namespace weft::gen {

namespace {

using Shape = std::vector<std::int64_t>;

// The choices that made one node: its rule's bindings (every present input bound to its
// current shape), which node input each binding is, and the draws on which the rule gives the
// node back.
struct NodeChoices {
  const OpSpec* spec = nullptr;
  std::vector<InputBinding> bindings;
  std::vector<int> node_input;  // per binding: index into node.inputs, -1 when absent
  std::unique_ptr<std::mt19937_64> rng;
  std::unique_ptr<Draws> draws;
  std::map<std::string, std::int64_t> held;  // the node's integer attributes, by unknown name
  std::map<std::string, z3::expr> unknowns;  // the encoded rule's, by their names in the rule
};

// For every way the optional inputs can be present that gives the node's input count: per
// spec input, which node input it is (-1: absent). A variadic op repeats its one input.
std::vector<std::vector<int>> input_layouts(const OpSpec& spec, std::size_t count) {
  std::vector<std::vector<int>> layouts;
  if (spec.variadic) {
    if (spec.inputs.size() != 1) return layouts;
    std::vector<int> layout(count);
    for (std::size_t i = 0; i < count; ++i) layout[i] = static_cast<int>(i);
    layouts.push_back(layout);
    return layouts;
  }
  std::vector<std::size_t> optional;
  for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
    if (spec.inputs[i].optional) optional.push_back(i);
  }
  for (unsigned mask = 0; mask < (1u << optional.size()); ++mask) {
    std::vector<int> layout;
    int next = 0;
    for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
      const auto at = std::find(optional.begin(), optional.end(), i);
      const bool present =
          at == optional.end() || (mask & (1u << static_cast<unsigned>(at - optional.begin())));
      layout.push_back(present ? next++ : -1);
    }
    if (static_cast<std::size_t>(next) == count) layouts.push_back(layout);
  }
  return layouts;
}

// Bounds that every current shape of the graph respects.
Bounds bounds_of(const ir::Graph& graph) {
  Bounds bounds;
  for (const ir::Value& value : graph.values()) {
    const Shape& shape = value.type.shape;
    bounds.max_rank = std::max(bounds.max_rank, static_cast<int>(shape.size()));
    std::int64_t elements = 1;
    for (std::int64_t d : shape) {
      bounds.max_dim = std::max(bounds.max_dim, d);
      bounds.allow_zero_dims = bounds.allow_zero_dims || d == 0;
      elements *= std::max<std::int64_t>(d, 1);
    }
    bounds.max_elements = std::max(bounds.max_elements, elements);
  }
  return bounds;
}

// The node's integer attributes by the names a rule's unknowns have ("stride.1" for element 1
// of the list "stride").
std::map<std::string, std::int64_t> integer_attributes(const ir::Attributes& attrs) {
  std::map<std::string, std::int64_t> named;
  for (const auto& [name, value] : attrs) {
    if (const auto* v = std::get_if<std::int64_t>(&value)) named[name] = *v;
    if (const auto* list = std::get_if<std::vector<std::int64_t>>(&value)) {
      for (std::size_t k = 0; k < list->size(); ++k)
        named[name + "." + std::to_string(k)] = (*list)[k];
    }
  }
  return named;
}

// Did the rule give `node` back: its inputs' and outputs' shapes and every attribute it set
// (but reals)?
bool gives_back(const Sampler& sampler, const ir::Graph& graph, const ir::Node& node,
                const std::vector<int>& node_input) {
  for (std::size_t b = 0; b < node_input.size(); ++b) {
    if (node_input[b] < 0) continue;
    const Shape& current = graph.type(node.inputs[static_cast<std::size_t>(node_input[b])]).shape;
    const Shape& spelled = sampler.input_shapes().at(b);
    if (!(spelled.empty() && !current.empty()) && spelled != current) return false;
  }
  if (sampler.output_shapes().size() != node.outputs.size()) return false;
  for (std::size_t k = 0; k < node.outputs.size(); ++k) {
    if (sampler.output_shapes()[k] != graph.type(node.outputs[k]).shape) return false;
  }
  // The same attributes with the same values, reals aside: they never enter shape arithmetic
  // (builder.h), and the node keeps its own. An attribute the rule did not set would not be
  // derived again from the new shapes.
  const auto comparable = [](const ir::Attributes& attrs) {
    std::map<std::string, ir::AttrValue> kept;
    for (const auto& [name, value] : attrs) {
      if (!std::holds_alternative<double>(value)) kept.emplace(name, value);
    }
    return kept;
  };
  return comparable(sampler.attrs()) == comparable(node.attrs);
}

// The sizes a node's other unknowns most likely had (an output channel count, a kernel size, a
// reshape's divisor): its dims and integer attributes, and their exact quotients.
std::vector<std::int64_t> likely_values(const ir::Graph& graph, const ir::Node& node) {
  std::set<std::int64_t> seen;
  for (ir::ValueId id : node.inputs) {
    for (std::int64_t d : graph.type(id).shape) seen.insert(d);
  }
  for (ir::ValueId id : node.outputs) {
    for (std::int64_t d : graph.type(id).shape) seen.insert(d);
  }
  for (const auto& [name, value] : integer_attributes(node.attrs)) seen.insert(value);
  std::set<std::int64_t> quotients;
  for (std::int64_t a : seen) {
    for (std::int64_t b : seen) {
      if (b > 1 && a > b && a % b == 0) quotients.insert(a / b);
    }
  }
  seen.insert(quotients.begin(), quotients.end());
  return {seen.begin(), seen.end()};
}

// Searches random draws, with the node's attributes pinned, for ones on which the rule gives
// the node back. Nothing when the op has no spec or no draw does.
std::optional<NodeChoices> recover(const ir::Graph& graph, const ir::Node& node,
                                   const Bounds& bounds, const ShrinkOptions& options,
                                   std::uint64_t seed) {
  if (!has_spec(node.op)) return std::nullopt;
  const OpSpec& spec = gen::spec(node.op);
  const std::map<std::string, std::int64_t> pinned = integer_attributes(node.attrs);
  const std::vector<std::vector<int>> layouts = input_layouts(spec, node.inputs.size());
  if (layouts.empty()) return std::nullopt;
  const std::vector<std::int64_t> likely = likely_values(graph, node);
  auto rng = std::make_unique<std::mt19937_64>(seed);
  for (int attempt = 0; attempt < options.recovery_attempts; ++attempt) {
    const std::vector<int>& layout = layouts[static_cast<std::size_t>(attempt) % layouts.size()];
    std::vector<InputBinding> bindings;
    for (int k : layout) {
      InputBinding binding;
      binding.present = k >= 0;
      if (k >= 0) {
        binding.shape = graph.type(node.inputs[static_cast<std::size_t>(k)]).shape;
        binding.rank = static_cast<int>(binding.shape->size());
      }
      bindings.push_back(binding);
    }
    auto draws = std::make_unique<Draws>(*rng);
    draws->set_recording(true);
    for (const auto& [name, value] : node.attrs) {
      if (const auto* b = std::get_if<bool>(&value)) draws->preset_integer(name, *b ? 1 : 0);
      if (const auto* v = std::get_if<std::int64_t>(&value)) draws->preset_integer(name, *v);
      if (const auto* r = std::get_if<double>(&value)) draws->preset_real(name, *r);
    }
    Sampler sampler(spec, bindings, *draws, bounds, &pinned);
    sampler.set_strict_pins(true);
    sampler.set_likely_values(&likely);
    try {
      spec.sample(sampler);
    } catch (const Rejected&) {
      continue;
    }
    if (!gives_back(sampler, graph, node, layout)) continue;
    draws->set_recording(false);
    NodeChoices choices;
    choices.spec = &spec;
    choices.bindings = std::move(bindings);
    choices.node_input = layout;
    choices.rng = std::move(rng);
    choices.draws = std::move(draws);
    choices.held = pinned;
    return choices;
  }
  return std::nullopt;
}

std::int64_t model_int(const z3::model& model, const z3::expr& e) {
  std::int64_t v = 0;
  model.eval(e, true).is_numeral_i64(v);
  return v;
}

// What a solution should look like: a wish per leaf dim above 1.
struct Goal {
  const char* name;
  std::int64_t (*wish)(std::int64_t);
};

// Shrink: leaves at most their size, a rule's other unknowns at most what they were.
// Dynamic: the same program at other input shapes: parameters and every unknown held.
enum class Mode { Shrink, Dynamic };

// The graph's shapes as one Z3 problem: a constant per dim of every value, every node's rule
// on them (or, for a node whose choices were not found, its current shapes).
class ShapeProblem {
 public:
  ShapeProblem(const ir::Graph& graph, const ShrinkOptions& options, Mode mode = Mode::Shrink)
      : graph_(graph), options_(options), mode_(mode), bounds_(bounds_of(graph)), solver_(ctx_) {
    // A resource limit rather than time decides when Z3 gives up, so that a loaded machine
    // gets the same proposals; the time limit only guards against the pathological.
    z3::params params(ctx_);
    params.set("rlimit", options.z3_rlimit);
    params.set("timeout", options.z3_timeout_ms);
    params.set("random_seed", 7u);
    params.set("ctrl_c", false);
    solver_.set(params);
    leaves_ = graph.inputs();
    leaves_.insert(leaves_.end(), graph.parameters().begin(), graph.parameters().end());
  }

  ShrinkResult solve() {
    ShrinkResult result;
    declare_dims();
    choices_.resize(graph_.nodes().size());
    for (std::size_t n = 0; n < graph_.nodes().size(); ++n) {
      if (!encode_node(n)) {
        hold_node(n);
        result.kept_nodes.push_back(n);
      }
    }
    const Goal goals[] = {{"smallest", [](std::int64_t) -> std::int64_t { return 1; }},
                          {"halved", [](std::int64_t d) { return (d + 1) / 2; }}};
    for (const Goal& goal : goals) {
      const std::optional<z3::model> model = closest_model(goal);
      if (!model) continue;
      std::optional<ShrunkGraph> proposal = replay(*model);
      if (!proposal) continue;
      proposal->goal = goal.name;
      result.proposals.push_back(std::move(*proposal));
    }
    return result;
  }

  // Mode::Dynamic: up to `count` other input shape sets of the same program.
  std::vector<ShrunkGraph> other_sets(int count) {
    std::vector<ShrunkGraph> sets;
    declare_dims();
    choices_.resize(graph_.nodes().size());
    for (std::size_t n = 0; n < graph_.nodes().size(); ++n) {
      if (!encode_node(n)) hold_node(n);
    }
    const Goal goals[] = {{"larger", [](std::int64_t d) -> std::int64_t { return d + 1; }},
                          {"smaller", [](std::int64_t d) { return d >= 3 ? d - 1 : d + 2; }}};
    for (const Goal& goal : goals) {
      if (static_cast<int>(sets.size()) >= count) break;
      const std::optional<z3::model> model = closest_model(goal);
      if (!model) continue;
      std::optional<ShrunkGraph> proposal = replay(*model);
      if (!proposal || !same_program(*proposal)) continue;
      const bool seen = std::any_of(sets.begin(), sets.end(), [&](const ShrunkGraph& s) {
        return s.leaf_shapes == proposal->leaf_shapes;
      });
      if (seen) continue;
      proposal->goal = goal.name;
      sets.push_back(std::move(*proposal));
    }
    return sets;
  }

 private:
  // Every node keeps every attribute (reals aside, which shapes never decide).
  bool same_program(const ShrunkGraph& proposal) const {
    for (std::size_t n = 0; n < graph_.nodes().size(); ++n) {
      for (const auto& [name, value] : proposal.node_attributes[n]) {
        if (std::holds_alternative<double>(value)) continue;
        const ir::AttrValue* was = graph_.nodes()[n].attrs.find(name);
        if (was == nullptr || *was != value) return false;
      }
    }
    return true;
  }

  // Every value's dims as Z3 constants. Leaves shrink or stay (a size-0 dim stays 0).
  void declare_dims() {
    for (const ir::Value& value : graph_.values()) {
      std::vector<z3::expr> d;
      for (std::size_t k = 0; k < value.type.shape.size(); ++k) {
        const std::string name = "v" + std::to_string(value.id) + "." + std::to_string(k);
        d.push_back(ctx_.int_const(name.c_str()));
        current_.push_back(d.back() == literal(value.type.shape[k]));
      }
      dims_.push_back(std::move(d));
    }
    for (ir::ValueId id : leaves_) {
      const Shape& shape = graph_.type(id).shape;
      const bool parameter = graph_.leaf_kind(id) == ir::LeafKind::Parameter;
      for (std::size_t k = 0; k < shape.size(); ++k) {
        const z3::expr& d = dims(id)[k];
        if (mode_ == Mode::Shrink) {
          solver_.add(shape[k] == 0 ? d == 0 : (d >= 1 && d <= literal(shape[k])));
        } else if (parameter || shape[k] == 0) {
          solver_.add(d == literal(shape[k]));
        } else {
          solver_.add(d >= 1 && d <= literal(std::max<std::int64_t>(2 * shape[k], shape[k] + 4)));
        }
      }
    }
  }

  // Node n's rule on the shared dims, with its choices found again and its integer attributes
  // held. False when its choices are not found, or when the current shapes do not satisfy
  // its encoding.
  bool encode_node(std::size_t n) {
    const ir::Node& node = graph_.nodes()[n];
    std::optional<NodeChoices> c = recover(graph_, node, bounds_, options_, options_.seed + n);
    if (!c) return false;
    std::vector<std::vector<z3::expr>> inputs;
    for (int k : c->node_input) {
      inputs.push_back(k < 0 ? std::vector<z3::expr>{}
                             : dims(node.inputs[static_cast<std::size_t>(k)]));
    }
    std::vector<std::vector<z3::expr>> outputs;
    for (ir::ValueId out : node.outputs) outputs.push_back(dims(out));
    Encoder encoder(ctx_, *c->spec, c->bindings, *c->draws, bounds_);
    encoder.bind_graph(std::move(inputs), std::move(outputs), "n" + std::to_string(n) + ".");
    try {
      c->spec->encode(encoder);
    } catch (const Rejected&) {
      return false;
    }
    if (encoder.infeasible()) return false;
    // Attributes stay; the rule's other unknowns (an expand's new sizes, a divisor) may only
    // shrink, so that no intermediate value grows.
    std::vector<z3::expr> constraints = encoder.constraints();
    for (const auto& [name, unknown] : encoder.unknowns()) {
      const auto found = c->held.find(name);
      if (found != c->held.end()) {
        constraints.push_back(unknown == literal(found->second));
      } else if (const std::optional<std::int64_t> was = c->draws->known_integer(name)) {
        constraints.push_back(mode_ == Mode::Shrink ? unknown <= literal(*was)
                                                    : unknown == literal(*was));
      }
    }
    solver_.push();
    for (const z3::expr& e : constraints) solver_.add(e);
    const bool holds_now = solver_.check(current_) == z3::sat;
    solver_.pop();
    if (!holds_now) return false;
    for (const z3::expr& e : constraints) solver_.add(e);
    c->unknowns = encoder.unknowns();
    choices_[n] = std::move(c);
    return true;
  }

  // Node n keeps its inputs' and outputs' shapes.
  void hold_node(std::size_t n) {
    const ir::Node& node = graph_.nodes()[n];
    const auto hold = [&](ir::ValueId id) {
      const Shape& shape = graph_.type(id).shape;
      for (std::size_t k = 0; k < shape.size(); ++k) solver_.add(dims(id)[k] == literal(shape[k]));
    };
    for (ir::ValueId in : node.inputs) hold(in);
    for (ir::ValueId out : node.outputs) hold(out);
  }

  // A solution that grants as many of the goal's wishes as it can: the wishes in an unsat
  // core are dropped until the rest holds. Nothing when no leaf dim can shrink.
  std::optional<z3::model> closest_model(const Goal& goal) {
    std::vector<z3::expr> wanted;
    for (ir::ValueId id : leaves_) {
      const Shape& shape = graph_.type(id).shape;
      if (mode_ == Mode::Dynamic) {
        if (graph_.leaf_kind(id) == ir::LeafKind::Parameter) continue;
        for (std::size_t k = 0; k < shape.size(); ++k) {
          if (shape[k] > 0) wanted.push_back(dims(id)[k] == literal(goal.wish(shape[k])));
        }
        continue;
      }
      for (std::size_t k = 0; k < shape.size(); ++k) {
        if (shape[k] > 1) wanted.push_back(dims(id)[k] <= literal(goal.wish(shape[k])));
      }
    }
    for (int round = 0; round < 8 && !wanted.empty(); ++round) {
      z3::expr_vector assumptions(ctx_);
      for (const z3::expr& e : wanted) assumptions.push_back(e);
      const z3::check_result r = solver_.check(assumptions);
      if (r == z3::sat) return solver_.get_model();
      if (r == z3::unknown) break;
      const z3::expr_vector core = solver_.unsat_core();
      std::vector<z3::expr> kept;
      for (const z3::expr& e : wanted) {
        bool in_core = false;
        for (unsigned i = 0; i < core.size() && !in_core; ++i) in_core = z3::eq(core[i], e);
        if (!in_core) kept.push_back(e);
      }
      if (kept.size() == wanted.size()) break;
      wanted = std::move(kept);
    }
    return std::nullopt;
  }

  // The solution as shapes, with every recovered rule replayed on it to derive the attributes
  // that follow from shapes. Nothing when no leaf shrinks, or when a rule disagrees with Z3.
  std::optional<ShrunkGraph> replay(const z3::model& model) {
    ShrunkGraph proposal;
    const auto solved = [&](ir::ValueId id) {
      Shape shape;
      for (const z3::expr& d : dims(id)) shape.push_back(model_int(model, d));
      return shape;
    };
    for (ir::ValueId id : leaves_) {
      const Shape shape = solved(id);
      if (shape != graph_.type(id).shape) proposal.leaf_shapes[id] = shape;
    }
    if (proposal.leaf_shapes.empty()) return std::nullopt;
    for (const ir::Value& value : graph_.values())
      proposal.value_shapes.push_back(solved(value.id));
    for (std::size_t n = 0; n < graph_.nodes().size(); ++n) {
      const ir::Node& node = graph_.nodes()[n];
      ir::Attributes attrs = node.attrs;
      if (choices_[n]) {
        NodeChoices& c = *choices_[n];
        std::vector<InputBinding> bindings = c.bindings;
        for (std::size_t b = 0; b < bindings.size(); ++b) {
          if (c.node_input[b] >= 0) {
            bindings[b].shape = solved(node.inputs[static_cast<std::size_t>(c.node_input[b])]);
          }
        }
        std::map<std::string, std::int64_t> pinned;
        for (const auto& [name, unknown] : c.unknowns) pinned[name] = model_int(model, unknown);
        Sampler sampler(*c.spec, bindings, *c.draws, bounds_, &pinned);
        try {
          c.spec->sample(sampler);
        } catch (const Rejected&) {
          return std::nullopt;
        }
        for (std::size_t b = 0; b < bindings.size(); ++b) {
          const Shape& spelled = sampler.input_shapes().at(b);
          if (c.node_input[b] >= 0 && !spelled.empty() && spelled != *bindings[b].shape) {
            return std::nullopt;
          }
        }
        if (sampler.output_shapes().size() < node.outputs.size()) return std::nullopt;
        for (std::size_t k = 0; k < node.outputs.size(); ++k) {
          if (sampler.output_shapes()[k] != solved(node.outputs[k])) return std::nullopt;
        }
        for (const auto& [name, value] : sampler.attrs()) {
          if (!std::holds_alternative<double>(value)) attrs.set(name, value);
        }
      }
      proposal.node_attributes.push_back(std::move(attrs));
    }
    return proposal;
  }

  const std::vector<z3::expr>& dims(ir::ValueId id) const {
    return dims_[static_cast<std::size_t>(id)];
  }
  z3::expr literal(std::int64_t v) { return ctx_.int_val(static_cast<int64_t>(v)); }

  const ir::Graph& graph_;
  const ShrinkOptions& options_;
  const Mode mode_;
  const Bounds bounds_;
  z3::context ctx_;
  z3::solver solver_;
  std::vector<ir::ValueId> leaves_;
  std::vector<std::vector<z3::expr>> dims_;  // by value id
  z3::expr_vector current_{ctx_};            // every dim equal to its current size
  std::vector<std::optional<NodeChoices>> choices_;
};

}  // namespace

ShrinkResult shrink_shapes(const ir::Graph& graph, const ShrinkOptions& options) {
  return ShapeProblem(graph, options).solve();
}

std::vector<ShrunkGraph> other_shape_sets(const ir::Graph& graph, int count,
                                          const ShrinkOptions& options) {
  return ShapeProblem(graph, options, Mode::Dynamic).other_sets(count);
}

}  // namespace weft::gen
