// Forward and backward insertion over the op specs. The graph grows in ir::Graph form directly;
// a backward insertion puts its node first (its inputs are fresh leaves, so order holds).
#include "weft/gen/generator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <random>
#include <set>
#include <string>
#include <utility>

#include "dynamic_shapes.h"
#include "in_place.h"
#include "spec/solve.h"
#include "weft/error.h"
#include "weft/gen/spec.h"
#include "weft/gen/value_search.h"
#include "weft/ir/execute.h"
#include "weft/ir/random.h"
#include "weft/ir/validate.h"

namespace weft::gen {

namespace {

unsigned dtype_class(Dtype d) {
  if (is_floating(d)) return kFloat;
  if (d == Dtype::Bool) return kBool;
  return kInt;
}

ir::TensorType type_of(Dtype dtype, const std::vector<std::int64_t>& shape) {
  return ir::TensorType{dtype, ir::Shape(shape.begin(), shape.end())};
}

// Mixed into the seed for the leaves' values, so that they are not the graph's draws.
constexpr std::uint64_t kValueSalt = 0xD1B54A32D192ED03ULL;

// Finite, and no element beyond `bound` in magnitude (non-floating tensors: always).
bool finite_within(const Tensor& t, double bound) {
  if (!t.defined() || !t.is_floating_point() || t.numel() == 0) return true;
  const Tensor c = t.contiguous();
  if (c.dtype() == Dtype::Float32) {
    const float* p = c.data<float>();
    const auto b = static_cast<float>(bound);
    for (std::int64_t i = 0; i < c.numel(); ++i) {
      if (!(std::fabs(p[i]) <= b)) return false;  // NaN fails too
    }
    return true;
  }
  const Tensor d = c.dtype() == Dtype::Float64 ? c : c.to(Dtype::Float64);
  const double* p = d.data<double>();
  for (std::int64_t i = 0; i < d.numel(); ++i) {
    if (!(std::fabs(p[i]) <= bound)) return false;
  }
  return true;
}

// A value of the graph that later ops may consume.
struct Candidate {
  ir::ValueId id;
  Dtype dtype;
  std::vector<std::int64_t> shape;
};

}  // namespace

struct Generator::State {
  RuleSolver solver{100};
};

Generator::Generator() : state_(std::make_unique<State>()) {}
Generator::~Generator() = default;

namespace {

class Build {
 public:
  Build(const GeneratorOptions& options, RuleSolver& solver)
      : options_(options),
        solver_(solver),
        rng_(options.seed),
        value_rng_(options.seed ^ kValueSalt),
        track_values_(options.check_values) {
    bounds_.max_rank = options.max_rank;
    bounds_.max_dim = options.max_dim;
    bounds_.max_elements = options.max_elements;
    for (ir::OpKind op : options.ops.empty()
                             ? std::vector<ir::OpKind>(ir::kAllOps.begin(), ir::kAllOps.end())
                             : options.ops) {
      if (!has_spec(op)) {
        if (!options.ops.empty()) {
          throw Error("generate: op '" + std::string(ir::op_name(op)) + "' has no spec yet");
        }
        continue;
      }
      if (std::find(options.exclude.begin(), options.exclude.end(), op) != options.exclude.end()) {
        continue;
      }
      ops_.push_back(op);
    }
    if (ops_.empty()) throw Error("generate: no op left to draw from (check --ops / --exclude)");
    only_random_ops_ = std::all_of(ops_.begin(), ops_.end(), ir::is_random_op);
    if (options.dtypes.empty()) throw Error("generate: no dtype to draw leaves from");
    if (options.nodes < 0) throw Error("generate: the node count must be non-negative");
  }

  Generated run() {
    const auto start = std::chrono::steady_clock::now();
    const std::int64_t budget =
        static_cast<std::int64_t>(std::max(1, options_.attempts_per_node)) * options_.nodes;
    while (static_cast<int>(graph_.nodes().size()) < options_.nodes && stats_.attempts < budget) {
      ++stats_.attempts;
      const bool backward = !placeholders_.empty() && chance(options_.backward_rate);
      if (backward ? insert_backward() : insert_forward()) {
        ++(backward ? stats_.backward_insertions : stats_.forward_insertions);
      }
    }
    finish();
    Generated generated;
    if (track_values_) {
      for (ir::LeafKind kind : {ir::LeafKind::Input, ir::LeafKind::Parameter}) {
        for (ir::ValueId id : graph_.leaves(kind)) {
          generated.values[graph_.value(id).name] = vals_[static_cast<std::size_t>(id)];
        }
      }
    }
    const SolveStats& s = solver_.stats();
    stats_.rule_samples = s.samples;
    stats_.z3_calls = s.z3_calls;
    stats_.z3_sat = s.z3_sat;
    stats_.z3_unsat = s.z3_unsat;
    stats_.z3_timeouts = s.z3_unknown;
    stats_.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    generated.graph = std::move(graph_);
    generated.stats = stats_;
    return generated;
  }

 private:
  bool chance(double p) { return std::bernoulli_distribution(std::clamp(p, 0.0, 1.0))(rng_); }
  ir::OpKind draw_op() {
    const ir::OpKind op = pick(ops_);
    if (!ir::is_random_op(op) || only_random_ops_ || chance(options_.random_op_rate)) return op;
    return pick(ops_);
  }
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[std::uniform_int_distribution<std::size_t>(0, items.size() - 1)(rng_)];
  }
  int draw_rank(const InputDecl& d) {
    const int hi = std::min(d.max_rank, options_.max_rank);
    const int lo = std::min(d.min_rank, hi);
    // Ranks 1..4 mostly; rank 0 (and 5) at the edge rate.
    int r = std::uniform_int_distribution<int>(std::max(lo, 1), std::max(std::min(hi, 4), 1))(rng_);
    if (chance(options_.edge_rate)) r = std::uniform_int_distribution<int>(lo, hi)(rng_);
    return std::clamp(r, lo, hi);
  }
  Dtype draw_dtype(unsigned allowed) {
    std::vector<Dtype> options;
    for (Dtype d : options_.dtypes) {
      if (allowed & dtype_class(d)) options.push_back(d);
    }
    if (chance(options_.edge_rate)) {
      for (Dtype d : {Dtype::Float64, Dtype::Int64, Dtype::Int32, Dtype::Bool}) {
        if (allowed & dtype_class(d)) options.push_back(d);
      }
    }
    if (options.empty()) {
      for (Dtype d : {Dtype::Float32, Dtype::Int64, Dtype::Bool}) {
        if (allowed & dtype_class(d)) return d;
      }
    }
    return pick(options);
  }
  Bounds attempt_bounds() {
    Bounds b = bounds_;
    b.allow_zero_dims = chance(options_.edge_rate);
    return b;
  }

  // The inputs of one node: bindings for the rule, and what each one is.
  struct Plan {
    std::vector<const InputDecl*> decls;
    std::vector<InputBinding> bindings;
    std::vector<const Candidate*> bound;  // null: a fresh leaf
    Dtype data_dtype = Dtype::Float32;
  };

  Plan plan(const OpSpec& spec, bool allow_bound) {
    Plan p;
    const int copies =
        spec.variadic ? std::uniform_int_distribution<int>(1, spec.max_variadic)(rng_) : 1;
    for (const InputDecl& d : spec.inputs) {
      for (int c = 0; c < copies; ++c) {
        p.decls.push_back(&d);
        if (!spec.variadic) break;
      }
    }
    // The data dtype: that of a consumed value when there is one, else a fresh draw.
    std::vector<const Candidate*> usable;
    if (allow_bound) {
      for (const Candidate& c : values_) {
        if (spec.dtypes & dtype_class(c.dtype)) usable.push_back(&c);
      }
    }
    const Candidate* first = usable.empty() ? nullptr : pick(usable);
    p.data_dtype = first != nullptr ? first->dtype : draw_dtype(spec.dtypes);
    bool used_first = false;
    for (const InputDecl* d : p.decls) {
      InputBinding b;
      b.present = !d->optional || chance(0.5);
      const Candidate* chosen = nullptr;
      if (b.present && (d->role == InputRole::Data || d->role == InputRole::Mask)) {
        const Dtype want = d->role == InputRole::Mask ? Dtype::Bool : p.data_dtype;
        std::vector<const Candidate*> fits;
        for (const Candidate& c : values_) {
          const int r = static_cast<int>(c.shape.size());
          if (allow_bound && c.dtype == want && r >= d->min_rank && r <= d->max_rank) {
            fits.push_back(&c);
          }
        }
        if (!used_first && first != nullptr && d->role == InputRole::Data && first->dtype == want &&
            static_cast<int>(first->shape.size()) >= d->min_rank &&
            static_cast<int>(first->shape.size()) <= d->max_rank) {
          chosen = first;
          used_first = true;
        } else if (!fits.empty() && chance(0.4)) {
          chosen = pick(fits);
        }
      }
      if (chosen != nullptr) {
        b.rank = static_cast<int>(chosen->shape.size());
        b.shape = chosen->shape;
      } else {
        b.rank = draw_rank(*d);
      }
      p.bindings.push_back(b);
      p.bound.push_back(chosen);
    }
    if (allow_bound && track_values_) keep_inside_domains(spec, p);
    return p;
  }

  // Whether a node reads `value`, or a value computed from it, in a slot that has a value-domain
  // hint.
  bool feeds_a_domain(ir::ValueId value) const {
    std::vector<bool> from(graph_.values().size(), false);
    from[static_cast<std::size_t>(value)] = true;
    for (const ir::Node& node : graph_.nodes()) {
      bool reads = false;
      for (ir::ValueId in : node.inputs) reads = reads || from[static_cast<std::size_t>(in)];
      if (!reads) continue;
      for (const DomainHint& h : domain_hints(graph_, node)) {
        if (h.input < node.inputs.size() && from[static_cast<std::size_t>(node.inputs[h.input])]) {
          return true;
        }
      }
      for (ir::ValueId out : node.outputs) from[static_cast<std::size_t>(out)] = true;
    }
    return false;
  }

  // A consumed value outside the domain of the slot it would feed (log of a value with
  // negative elements) gives way to another value inside it, or else to a fresh leaf (drawn
  // inside it): the op is still inserted, at a place where it can be finite.
  void keep_inside_domains(const OpSpec& spec, Plan& p) {
    const std::vector<DomainHint> hints = domain_hints(spec.op, is_floating(p.data_dtype));
    if (hints.empty()) return;
    // A drawn value (weft/ir/random.h) is the engine's draw here and another on every PyTorch
    // path: that it lies inside the domain tells nothing (seed 1401: bernoulli of a squared
    // randn_like, whose probabilities passed 1 on LibTorch's draws and it refused them).
    const std::vector<bool> drawn = ir::random_dependent(graph_);
    std::size_t slot = 0;
    for (std::size_t i = 0; i < p.decls.size(); ++i) {
      if (!p.bindings[i].present) continue;
      const std::size_t this_slot = slot++;
      if (p.bound[i] == nullptr) continue;
      auto inside = [&](const Candidate& c) {
        if (drawn[static_cast<std::size_t>(c.id)]) return false;
        for (const DomainHint& h : hints) {
          if (h.input == this_slot && !inside_domain(h, vals_[static_cast<std::size_t>(c.id)])) {
            return false;
          }
        }
        return true;
      };
      if (inside(*p.bound[i])) continue;
      const InputDecl& d = *p.decls[i];
      std::vector<const Candidate*> fits;
      for (const Candidate& c : values_) {
        const int r = static_cast<int>(c.shape.size());
        if (c.dtype == p.bound[i]->dtype && r >= d.min_rank && r <= d.max_rank && inside(c)) {
          fits.push_back(&c);
        }
      }
      p.bound[i] = fits.empty() ? nullptr : pick(fits);
      if (p.bound[i] != nullptr) {
        p.bindings[i].rank = static_cast<int>(p.bound[i]->shape.size());
        p.bindings[i].shape = p.bound[i]->shape;
      } else {
        p.bindings[i].rank = draw_rank(d);
        p.bindings[i].shape.reset();
      }
    }
  }

  // Creates the node's fresh leaves; returns every input's value id (absent optional inputs
  // are skipped, as graphs leave them out) and dtype.
  void materialize(const Plan& p, const RuleResult& r, std::vector<ir::ValueId>& ids,
                   std::vector<Dtype>& dtypes, bool placeholders_allowed) {
    for (std::size_t i = 0; i < p.decls.size(); ++i) {
      if (!p.bindings[i].present) continue;
      if (p.bound[i] != nullptr) {
        ids.push_back(p.bound[i]->id);
        dtypes.push_back(p.bound[i]->dtype);
        continue;
      }
      const InputDecl& d = *p.decls[i];
      const auto& shape = r.input_shapes.at(i);
      ir::ValueId id;
      Dtype dt = p.data_dtype;
      switch (d.role) {
        case InputRole::Weight:
          dt = is_floating(p.data_dtype) ? p.data_dtype : Dtype::Float32;
          id = graph_.add_parameter("w" + std::to_string(next_leaf_++), type_of(dt, shape));
          break;
        case InputRole::Index:
          dt = Dtype::Int64;
          id = graph_.add_input("i" + std::to_string(next_leaf_++), type_of(dt, shape));
          break;
        case InputRole::Mask:
          dt = Dtype::Bool;
          id = graph_.add_input("m" + std::to_string(next_leaf_++), type_of(dt, shape));
          break;
        case InputRole::Data:
          if (chance(0.7)) {
            id = graph_.add_input("x" + std::to_string(next_leaf_++), type_of(dt, shape));
            if (placeholders_allowed) placeholders_.push_back(Candidate{id, dt, shape});
          } else {
            id = graph_.add_parameter("w" + std::to_string(next_leaf_++), type_of(dt, shape));
          }
          break;
      }
      ids.push_back(id);
      dtypes.push_back(dt);
    }
  }

  bool insert_forward() {
    const OpSpec& spec = gen::spec(draw_op());
    const Plan p = plan(spec, /*allow_bound=*/true);
    const auto result = solver_.run(spec, p.bindings, rng_, attempt_bounds(),
                                    options_.samples_per_attempt, /*use_z3=*/true);
    if (!result) return false;
    const Mark before = mark();
    std::vector<ir::ValueId> ids;
    std::vector<Dtype> dtypes;
    materialize(p, *result, ids, dtypes, /*placeholders_allowed=*/true);
    if (avoided(spec.op, dtypes)) {
      rollback(before);
      return false;
    }
    const std::vector<Dtype> out_dtypes = spec.output_dtypes(dtypes, result->attrs);
    std::vector<ir::TensorType> types;
    for (std::size_t i = 0; i < result->output_shapes.size(); ++i) {
      types.push_back(
          type_of(out_dtypes.at(std::min(i, out_dtypes.size() - 1)), result->output_shapes[i]));
    }
    const auto outs = graph_.add_node(spec.op, ids, result->attrs, types);
    if (track_values_) {
      const ir::Node& node = graph_.nodes().back();
      draw_leaves(node, before.values);
      std::vector<Tensor> outputs;
      if (!evaluate(node, outputs)) {
        rollback(before);
        ++stats_.value_rejections;
        return false;
      }
      store(node, std::move(outputs));
    }
    for (std::size_t i = 0; i < outs.size(); ++i) {
      values_.push_back(Candidate{outs[i], types[i].dtype, result->output_shapes[i]});
    }
    return true;
  }

  // Replaces a placeholder input by an op producing it; the op's inputs are fresh leaves.
  bool insert_backward() {
    const std::size_t which =
        std::uniform_int_distribution<std::size_t>(0, placeholders_.size() - 1)(rng_);
    const Candidate target = placeholders_[which];
    const OpSpec& spec = gen::spec(draw_op());
    if (!(spec.dtypes & dtype_class(target.dtype))) return false;
    // A draw (its inputs are fresh, so only its own) does not replace a value from which a
    // consumer's input is kept inside a domain: PyTorch's draws need not stay inside
    // (keep_inside_domains).
    if (ir::is_random_op(spec.op) && feeds_a_domain(target.id)) return false;
    Plan p = plan(spec, /*allow_bound=*/false);
    // Most ops keep their data input's rank: giving fresh data inputs the target's rank makes
    // the draws (which imitate the target's dims) hit it without Z3 most of the time.
    for (std::size_t i = 0; i < p.decls.size(); ++i) {
      const InputDecl& d = *p.decls[i];
      const int rank = static_cast<int>(target.shape.size());
      if (d.role == InputRole::Data && rank >= d.min_rank && rank <= d.max_rank && chance(0.75)) {
        p.bindings[i].rank = rank;
      }
    }
    p.data_dtype = target.dtype;
    // Z3 makes shape-changing ops reach the target; asking it on every backward attempt would
    // be most of the generation time, so half of them settle for what sampling finds.
    const bool use_z3 = chance(options_.backward_z3_rate);
    const auto result = solver_.run(spec, p.bindings, rng_, attempt_bounds(),
                                    options_.samples_per_attempt, use_z3, {target.shape});
    if (!result || result->output_shapes.size() != 1) return false;
    // The op must give the placeholder's dtype from inputs of that dtype.
    std::vector<Dtype> probe;
    for (std::size_t i = 0; i < p.decls.size(); ++i) {
      if (!p.bindings[i].present) continue;
      const InputRole role = p.decls[i]->role;
      probe.push_back(role == InputRole::Index                                  ? Dtype::Int64
                      : role == InputRole::Mask                                 ? Dtype::Bool
                      : role == InputRole::Weight && !is_floating(target.dtype) ? Dtype::Float32
                                                                                : target.dtype);
    }
    if (spec.output_dtypes(probe, result->attrs).front() != target.dtype) return false;
    const Mark before = mark();
    std::vector<ir::ValueId> ids;
    std::vector<Dtype> dtypes;
    materialize(p, *result, ids, dtypes, /*placeholders_allowed=*/true);
    if (avoided(spec.op, dtypes)) {
      rollback(before);
      return false;
    }
    // The placeholder stops being an input and becomes the new node's output.
    auto& inputs = graph_.mutable_leaves(ir::LeafKind::Input);
    const std::vector<ir::ValueId> saved_inputs = inputs;
    inputs.erase(std::find(inputs.begin(), inputs.end(), target.id));
    std::string& target_name = graph_.mutable_values()[static_cast<std::size_t>(target.id)].name;
    const std::string saved_name = std::move(target_name);
    target_name.clear();
    ir::Attributes attrs = result->attrs;
    attrs.set_owner(std::string(ir::op_name(spec.op)));
    auto& nodes = graph_.mutable_nodes();
    nodes.insert(nodes.begin(), ir::Node{spec.op, ids, {target.id}, attrs, ""});
    if (track_values_ && !replace_upstream(target.id, before.values)) {
      nodes.erase(nodes.begin());
      graph_.mutable_values()[static_cast<std::size_t>(target.id)].name = saved_name;
      graph_.mutable_leaves(ir::LeafKind::Input) = saved_inputs;
      rollback(before);
      ++stats_.value_rejections;
      return false;
    }
    placeholders_.erase(placeholders_.begin() + static_cast<std::ptrdiff_t>(which));
    return true;
  }

  // Whether the PyTorch under test lacks `op` for this first input's dtype.
  bool avoided(ir::OpKind op, const std::vector<Dtype>& dtypes) const {
    if (dtypes.empty()) return false;
    return std::find(options_.avoid.begin(), options_.avoid.end(),
                     std::make_pair(op, dtypes.front())) != options_.avoid.end();
  }

  // Where the graph stood before an insertion, to undo it.
  struct Mark {
    std::size_t values, nodes, inputs, parameters, placeholders;
    int next_leaf;
  };
  Mark mark() const {
    return Mark{graph_.values().size(),     graph_.nodes().size(), graph_.inputs().size(),
                graph_.parameters().size(), placeholders_.size(),  next_leaf_};
  }
  // Undoes the leaves and the appended node of a forward insertion (a backward one first puts
  // its own edits back).
  void rollback(const Mark& m) {
    auto& values = graph_.mutable_values();
    values.erase(values.begin() + static_cast<std::ptrdiff_t>(m.values), values.end());
    auto& nodes = graph_.mutable_nodes();
    nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(m.nodes), nodes.end());
    auto& inputs = graph_.mutable_leaves(ir::LeafKind::Input);
    inputs.erase(
        std::remove_if(inputs.begin(), inputs.end(),
                       [&m](ir::ValueId id) { return static_cast<std::size_t>(id) >= m.values; }),
        inputs.end());
    auto& params = graph_.mutable_leaves(ir::LeafKind::Parameter);
    params.erase(params.begin() + static_cast<std::ptrdiff_t>(m.parameters), params.end());
    placeholders_.erase(placeholders_.begin() + static_cast<std::ptrdiff_t>(m.placeholders),
                        placeholders_.end());
    next_leaf_ = m.next_leaf;
    if (vals_.size() > m.values) vals_.resize(m.values);
  }

  // Gives values to the inputs of `node` that are leaves created since value `first_new`.
  void draw_leaves(const ir::Node& node, std::size_t first_new) {
    vals_.resize(graph_.values().size());
    for (std::size_t slot = 0; slot < node.inputs.size(); ++slot) {
      const auto id = static_cast<std::size_t>(node.inputs[slot]);
      if (id < first_new) continue;
      vals_[id] = draw_initial_value(graph_, node, slot, node.inputs[slot], value_rng_);
    }
  }

  // Runs `node` on the values of its inputs: false when an input is outside the op's domain
  // or an output is not finite or beyond the bound. An engine error (a spec that mispredicts,
  // say) is no reason to undo: values stop being tracked, and the value search reports it.
  bool evaluate(const ir::Node& node, std::vector<Tensor>& outputs) {
    std::vector<Tensor> inputs;
    inputs.reserve(node.inputs.size());
    for (ir::ValueId id : node.inputs) inputs.push_back(vals_[static_cast<std::size_t>(id)]);
    for (const DomainHint& hint : domain_hints(graph_, node)) {
      if (hint.input < inputs.size() && !inside_domain(hint, inputs[hint.input])) return false;
    }
    try {
      outputs = ir::run_node(node, inputs);
    } catch (const std::exception&) {
      track_values_ = false;
      return true;
    }
    if (outputs.size() != node.outputs.size()) {
      track_values_ = false;
      return true;
    }
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      if (outputs[k].sizes() != graph_.type(node.outputs[k]).shape ||
          outputs[k].dtype() != graph_.type(node.outputs[k]).dtype) {
        track_values_ = false;
        return true;
      }
    }
    return std::all_of(outputs.begin(), outputs.end(),
                       [this](const Tensor& t) { return finite_within(t, options_.value_bound); });
  }

  void store(const ir::Node& node, std::vector<Tensor> outputs) {
    if (!track_values_) return;
    vals_.resize(graph_.values().size());
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      vals_[static_cast<std::size_t>(node.outputs[k])] = std::move(outputs[k]);
    }
  }

  // After a backward insertion (its node first): the placeholder `target` now holds the new
  // node's output, so every node downstream runs again. False, with every value as it was,
  // when one of them fails.
  bool replace_upstream(ir::ValueId target, std::size_t first_new) {
    const auto& nodes = graph_.nodes();
    draw_leaves(nodes.front(), first_new);
    std::vector<std::pair<std::size_t, Tensor>> saved;
    std::vector<bool> changed(graph_.values().size(), false);
    changed[static_cast<std::size_t>(target)] = true;
    bool ok = true;
    for (std::size_t n = 0; n < nodes.size() && ok && track_values_; ++n) {
      const ir::Node& node = nodes[n];
      if (n > 0 && std::none_of(node.inputs.begin(), node.inputs.end(), [&](ir::ValueId id) {
            return changed[static_cast<std::size_t>(id)];
          })) {
        continue;
      }
      std::vector<Tensor> outputs;
      if (!evaluate(node, outputs)) {
        ok = false;
        break;
      }
      if (!track_values_) break;
      for (std::size_t k = 0; k < outputs.size(); ++k) {
        const auto id = static_cast<std::size_t>(node.outputs[k]);
        saved.emplace_back(id, std::move(vals_[id]));
        vals_[id] = std::move(outputs[k]);
        changed[id] = true;
      }
    }
    if (!ok) {
      for (auto it = saved.rbegin(); it != saved.rend(); ++it)
        vals_[it->first] = std::move(it->second);
    }
    return ok;
  }

  void finish() {
    // Outputs: every value no node consumes (so every node reaches an output), plus now and
    // then a consumed one.
    std::set<ir::ValueId> consumed;
    for (const ir::Node& n : graph_.nodes()) consumed.insert(n.inputs.begin(), n.inputs.end());
    for (const ir::Node& n : graph_.nodes()) {
      for (ir::ValueId v : n.outputs) {
        if (consumed.count(v) == 0 || chance(0.05)) graph_.mark_output(v);
      }
    }
    // Edge: a graph whose floating inputs are all parameters.
    if (chance(options_.edge_rate)) {
      auto& inputs = graph_.mutable_leaves(ir::LeafKind::Input);
      auto& params = graph_.mutable_leaves(ir::LeafKind::Parameter);
      std::vector<ir::ValueId> kept;
      for (ir::ValueId id : inputs) {
        if (is_floating(graph_.type(id).dtype)) {
          params.push_back(id);
        } else {
          kept.push_back(id);
        }
      }
      inputs = kept;
    }
    ir::validate(graph_);
  }

  const GeneratorOptions& options_;
  RuleSolver& solver_;
  std::mt19937_64 rng_;
  Bounds bounds_;
  ::weft::Generator value_rng_;
  bool track_values_;
  std::vector<ir::OpKind> ops_;
  bool only_random_ops_ = false;
  ir::Graph graph_;
  std::vector<Tensor> vals_;             // by ValueId, while track_values_
  std::vector<Candidate> values_;        // node outputs later ops may consume
  std::vector<Candidate> placeholders_;  // fresh data inputs a backward insertion may replace
  int next_leaf_ = 0;
  GenerationStats stats_;
};

}  // namespace

Generated Generator::generate(const GeneratorOptions& options) {
  state_->solver.reset(options.z3_rlimit, options.z3_timeout_ms);
  return Build(options, state_->solver).run();
}

namespace {

// A non-contiguous layout for an input of `shape`, or none (rank 0, nothing to vary).
void draw_layout(ir::Value& leaf, std::mt19937_64& rng) {
  const ir::Shape& shape = leaf.type.shape;
  const std::size_t rank = shape.size();
  if (rank == 0) return;
  auto below = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  std::vector<std::size_t> wide;  // dims of size > 1
  for (std::size_t d = 0; d < rank; ++d) {
    if (shape[d] > 1) wide.push_back(d);
  }
  switch (below(4)) {
    case 0: {  // transposed: the dims stored in another order
      if (rank < 2) return;
      std::vector<std::size_t> order(rank);
      for (std::size_t d = 0; d < rank; ++d) order[d] = d;
      std::shuffle(order.begin(), order.end(), rng);
      std::int64_t step = 1;
      leaf.strides.assign(rank, 0);
      for (std::size_t k = rank; k-- > 0;) {
        leaf.strides[order[k]] = step;
        step *= std::max<std::int64_t>(shape[order[k]], 1);
      }
      break;
    }
    case 1: {  // sliced with a step along one dim, from an offset
      const std::size_t dim = below(rank);
      const std::int64_t factor = 2 + static_cast<std::int64_t>(below(2));
      std::int64_t step = 1;
      leaf.strides.assign(rank, 0);
      for (std::size_t d = rank; d-- > 0;) {
        leaf.strides[d] = step * (d == dim ? factor : 1);
        step = leaf.strides[d] * std::max<std::int64_t>(shape[d], 1);
      }
      leaf.storage_offset = static_cast<std::int64_t>(below(3));
      break;
    }
    case 2: {  // expanded along one dim: its values repeat index 0
      if (wide.empty()) return;
      const std::size_t dim = wide[below(wide.size())];
      ir::Shape inner = shape;
      inner[dim] = 1;
      leaf.strides = ir::contiguous_strides(inner);
      leaf.strides[dim] = 0;
      break;
    }
    default:  // channels_last
      if (rank != 4) return;
      leaf.strides = ir::channels_last_strides(shape);
      break;
  }
}

// Whether every output of `graph` is finite on the engine in float64 with `values`.
bool finite_outputs(const ir::Graph& graph, const ir::TensorMap& values) {
  try {
    ir::ExecutionOptions options;
    options.floating_dtype = Dtype::Float64;
    for (const Tensor& out : ir::execute(graph, values, options).outputs) {
      if (!out.is_floating_point() || out.numel() == 0) continue;
      const Tensor flat = out.to(Dtype::Float64).contiguous();
      const double* p = flat.data<double>();
      for (std::int64_t i = 0; i < flat.numel(); ++i) {
        if (!std::isfinite(p[i])) return false;
      }
    }
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// The program forms of a generated case (CaseOptions' rates), drawn from `rng`. Layouts with
// a stride of 0 repeat index 0 of the values; one that makes an output non-finite is dropped.
void apply_forms(GeneratedCase& result, const CaseOptions& options, bool forward_only,
                 std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  ir::Graph& graph = result.graph;
  graph.set_requires_grad(!forward_only);
  graph.set_nn_modules(unit(rng) < options.nn_modules_rate);
  if (unit(rng) >= options.layout_rate) return;
  for (ir::ValueId id : graph.inputs()) {
    if (unit(rng) >= 0.5) continue;
    ir::Value& leaf = graph.mutable_values()[static_cast<std::size_t>(id)];
    draw_layout(leaf, rng);
    if (!leaf.has_layout() || !result.values.finite) continue;
    ir::TensorMap projected = ir::project_to_layouts(graph, result.values.values);
    if (finite_outputs(graph, projected)) {
      result.values.values = std::move(projected);
    } else {
      leaf.strides.clear();
      leaf.storage_offset = 0;
    }
  }
}

}  // namespace

GeneratedCase generate_case(Generator& generator, const CaseOptions& options) {
  GeneratedCase result;
  GeneratorOptions attempt = options.generator;
  // The forms come from their own stream of the seed: the model's draws stay as they were.
  std::mt19937_64 forms(options.generator.seed ^ 0xF0A3C5E1D2B49786ull);
  const bool forward_only =
      std::uniform_real_distribution<double>(0.0, 1.0)(forms) < options.forward_only_rate;
  if (forward_only && attempt.dtypes == std::vector<Dtype>{Dtype::Float32}) {
    attempt.dtypes = {Dtype::Float32, Dtype::Int64, Dtype::Bool};
  }
  // Half precision draws from a stream of its own, so that the other forms stay as they were.
  std::mt19937_64 precision(options.generator.seed ^ 0x5BD1E9955BD1E995ull);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  if (unit(precision) < options.half_precision_rate) {
    const Dtype half = unit(precision) < 0.5 ? Dtype::Float16 : Dtype::BFloat16;
    const bool mixed = unit(precision) < 1.0 / 3.0;
    std::vector<Dtype> dtypes;
    for (Dtype d : attempt.dtypes) {
      if (d == Dtype::Float32) {
        dtypes.push_back(half);
        if (mixed) dtypes.push_back(Dtype::Float32);
      } else {
        dtypes.push_back(d);
      }
    }
    attempt.dtypes = std::move(dtypes);
  }
  for (int k = 0;; ++k) {
    // Attempt k > 0 draws from a seed mixed from the first (splitmix64's constant), so that
    // neighbouring seeds' retries do not collide with each other's first attempts.
    attempt.seed =
        k == 0 ? options.generator.seed
               : options.generator.seed ^ (0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(k));
    Generated generated = generator.generate(attempt);
    result.generation_seconds += generated.stats.seconds;
    ValueSearchOptions search = options.search;
    search.seed = attempt.seed;
    search.initial = std::move(generated.values);
    if (k < options.max_regenerations) {
      // A model whose values resist a short search is usually one without finite values at
      // all (log of a value that is never positive): a fresh model is cheaper than the full
      // budget. The last attempt gets the whole search.
      search.max_iterations = std::min(search.max_iterations, 12);
      search.max_resamples = std::min(search.max_resamples, 1);
    }
    const auto start = std::chrono::steady_clock::now();
    ValueSearchResult values = search_values(generated.graph, search);
    result.search_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.graph = std::move(generated.graph);
    result.stats = generated.stats;
    result.values = std::move(values);
    result.regenerations = k;
    if (result.values.finite || k >= options.max_regenerations) {
      apply_forms(result, options, forward_only, forms);
      if (std::uniform_real_distribution<double>(0.0, 1.0)(forms) < options.dynamic_shapes_rate) {
        add_shape_sets(result, attempt.seed);
      }
      // In-place writes draw from a stream of their own, so that the other forms stay as they
      // were.
      std::mt19937_64 writes(options.generator.seed ^ 0x2545F4914F6CDD1Dull);
      if (std::uniform_real_distribution<double>(0.0, 1.0)(writes) < options.in_place_rate) {
        add_in_place_writes(result, writes);
      }
      return result;
    }
  }
}

}  // namespace weft::gen
