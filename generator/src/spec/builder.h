#pragma once
// The two builders a shape rule is compiled for. A rule is a template over B:
//
//   template <class B> void conv_rule(B& b) {
//     auto x = b.data(0);                                  // dims of input 0
//     auto groups = b.attr_int("groups", 1, 4);            // an attribute in [1, 4]
//     b.require(x[1] % groups == 0);                       // a requirement
//     b.output({x[0], ...});                               // an output shape
//   }
//
// Sampler: Int = int64_t, Bool = bool. Unknowns are drawn at random (or pinned to a Z3 model);
//   a failed requirement throws Rejected at once, so later code never sees invalid values.
// Encoder: Int = Bool = z3::expr. Unknowns are Z3 constants with their domains; requirements
//   become constraints; the draws become soft preferences, so solutions stay varied.
// Discrete choices that do not enter shape arithmetic (ranks, strings, floats, permutations,
// dim subsets) are concrete in both: drawn once per attempt through Draws and shared.

#include <z3++.h>

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "weft/gen/spec.h"
#include "weft/ir/attributes.h"

namespace weft::gen {

// Limits every shape a rule sees or makes must respect.
struct Bounds {
  int max_rank = 5;
  std::int64_t max_dim = 64;
  std::int64_t max_elements = 65536;
  bool allow_zero_dims = false;  // an edge case, drawn at a small rate per attempt
};

// How the generator binds an input before running a rule.
struct InputBinding {
  bool present = true;  // false: an absent optional input
  int rank = 0;
  // An existing value's shape; nullopt: a fresh leaf whose dims the rule (or the draws) decide.
  std::optional<std::vector<std::int64_t>> shape;
};

// A rule's verdict on its draws (sampler) or its concrete choices (both builders).
struct Rejected {
  std::string why;
};

// The random choices of one attempt, memoized by name: asking twice gives the same answer, so
// the sampler, the encoder and the final pinned evaluation agree on every choice.
class Draws {
 public:
  explicit Draws(std::mt19937_64& rng) : rng_(rng) {}
  std::int64_t integer(const std::string& name, std::int64_t lo, std::int64_t hi);
  double real(const std::string& name, double lo, double hi);
  bool chance(const std::string& name, double probability);
  // A size for a fresh dim: mostly small, sometimes up to `max`.
  std::int64_t dim(const std::string& name, std::int64_t max, bool allow_zero);
  std::mt19937_64& rng() { return rng_; }
  // Answers for later questions by that name (a node's current attributes, when its other
  // choices are searched for).
  void preset_integer(const std::string& name, std::int64_t v) { integers_[name] = v; }
  // The integer drawn (or preset) by that name so far, if any.
  std::optional<std::int64_t> known_integer(const std::string& name) const {
    const auto found = integers_.find(name);
    if (found == integers_.end()) return std::nullopt;
    return found->second;
  }
  void preset_real(const std::string& name, double v) { reals_[name] = v; }
  // While recording, a decision the sampler reads off its values (decide() in shape.cpp) is
  // kept as the chance of that name, so that the encoder decides the same way.
  void set_recording(bool on) { recording_ = on; }
  bool recording() const { return recording_; }
  // How many choices were drawn: none means the attempt depended on its bindings alone.
  std::size_t count() const { return integers_.size() + reals_.size(); }

 private:
  std::mt19937_64& rng_;
  std::map<std::string, std::int64_t> integers_;
  std::map<std::string, double> reals_;
  bool recording_ = false;
};

// What both builders share: the spec, the bindings, the draws, the concrete attributes.
class RuleContext {
 public:
  RuleContext(const OpSpec& spec, std::vector<InputBinding> inputs, Draws& draws, Bounds bounds)
      : spec_(spec), inputs_(std::move(inputs)), draws_(draws), bounds_(bounds) {}

  const OpSpec& spec() const { return spec_; }
  const Bounds& bounds() const { return bounds_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int rank(int input) const { return inputs_.at(static_cast<std::size_t>(input)).rank; }
  bool present(int input) const {
    return input < num_inputs() && inputs_[static_cast<std::size_t>(input)].present;
  }
  bool bound(int input) const {
    return inputs_.at(static_cast<std::size_t>(input)).shape.has_value();
  }

  // Concrete checks (ranks, drawn choices): fail the attempt in both builders.
  void require_that(bool ok, const char* why) {
    if (!ok) throw Rejected{why};
  }
  // A concrete random integer in [lo, hi] that is not an attribute (an output rank, …).
  std::int64_t choose(const std::string& name, std::int64_t lo, std::int64_t hi) {
    return draws_.integer(name, lo, hi);
  }
  bool chance(const std::string& name, double probability) {
    return draws_.chance(name, probability);
  }
  // A concrete random real in [lo, hi) that is not an attribute by itself.
  double draws_real(const std::string& name, double lo, double hi) {
    return draws_.real(name, lo, hi);
  }
  // Attributes that do not enter shape arithmetic: drawn, set, returned.
  bool attr_bool(const std::string& name);
  double attr_float(const std::string& name, double lo, double hi);
  const std::string& attr_string(const std::string& name, const std::vector<std::string>& options);
  Dtype attr_dtype(const std::string& name, const std::vector<Dtype>& options);
  // A random permutation of 0..n-1 (permute's dims).
  std::vector<std::int64_t> attr_permutation(const std::string& name, int n);
  // Distinct dims of a rank-`rank` tensor, sorted, possibly negative-indexed (sum's dim).
  std::vector<std::int64_t> attr_dims(const std::string& name, int rank, int min_count);
  // A dim in [-rank, rank) (or [0, 0] for rank 0 when allow_scalar): wrapped by the op.
  std::int64_t attr_dim(const std::string& name, int rank);
  void set_attr(const std::string& name, ir::AttrValue value) {
    attrs_.set(name, std::move(value));
  }
  // A decision read off the values (the sampler's decide()), kept when the draws record.
  void record_decision(const std::string& name, bool decided) {
    if (draws_.recording()) draws_.preset_real("?" + name, decided ? 0.0 : 1.0);
  }

  const ir::Attributes& attrs() const { return attrs_; }

 protected:
  std::string dim_name(int input, int d) const {
    return "in" + std::to_string(input) + "." + std::to_string(d);
  }

  const OpSpec& spec_;
  std::vector<InputBinding> inputs_;
  Draws& draws_;
  Bounds bounds_;
  ir::Attributes attrs_;
};

class Sampler : public RuleContext {
 public:
  using Int = std::int64_t;
  using Bool = bool;

  // `pinned`: values for the rule's unknowns by name (a Z3 model); absent names are drawn.
  // `like`: a shape fresh inputs imitate when no input is bound (the target of a backward
  // insertion), so that shape-preserving rules hit the target without Z3.
  Sampler(const OpSpec& spec, std::vector<InputBinding> inputs, Draws& draws, Bounds bounds,
          const std::map<std::string, std::int64_t>* pinned = nullptr,
          const std::vector<std::int64_t>* like = nullptr)
      : RuleContext(spec, std::move(inputs), draws, bounds), pinned_(pinned), like_(like) {
    input_shapes_.resize(inputs_.size());
  }

  Int lit(std::int64_t v) const { return v; }
  Int attr_int(const std::string& name, std::int64_t lo, std::int64_t hi);
  std::vector<Int> attr_ints(const std::string& name, int count, std::int64_t lo, std::int64_t hi);
  // An unknown integer in [lo, hi] that is not an attribute (out_channels, a kernel size).
  Int var(const std::string& name, std::int64_t lo, std::int64_t hi);
  std::vector<Int> data(int input);
  void shape_input(int input, const std::vector<Int>& dims);
  void require(bool ok) {
    if (!ok) throw Rejected{"requirement"};
  }
  void output(const std::vector<Int>& dims);

  // Pinned values outside the range their rule gives are rejected (searching for the draws
  // that made a node, whose attributes are pinned).
  void set_strict_pins(bool strict) { strict_pins_ = strict; }
  // Values that unknowns other than dims mostly take (9 draws in 10, among those in range):
  // the sizes a node already has, when searching for the draws that made it.
  void set_likely_values(const std::vector<std::int64_t>* values) { likely_ = values; }

  static Int select(bool c, Int a, Int b) { return c ? a : b; }
  static Int max(Int a, Int b) { return a > b ? a : b; }
  static Int min(Int a, Int b) { return a < b ? a : b; }

  // Results after the rule ran without rejection.
  const std::vector<std::vector<std::int64_t>>& input_shapes() const { return input_shapes_; }
  const std::vector<std::vector<std::int64_t>>& output_shapes() const { return output_shapes_; }

 private:
  Int unknown(const std::string& name, std::int64_t lo, std::int64_t hi, bool is_dim);
  void check_shape(const std::vector<Int>& dims) const;

  const std::map<std::string, std::int64_t>* pinned_;
  const std::vector<std::int64_t>* like_;
  bool strict_pins_ = false;
  const std::vector<std::int64_t>* likely_ = nullptr;
  std::vector<std::vector<std::int64_t>> input_shapes_;
  std::vector<std::vector<std::int64_t>> output_shapes_;
};

class Encoder : public RuleContext {
 public:
  using Int = z3::expr;
  using Bool = z3::expr;

  // `target`: the shapes the outputs must have (backward insertion); empty: free outputs.
  Encoder(z3::context& ctx, const OpSpec& spec, std::vector<InputBinding> inputs, Draws& draws,
          Bounds bounds, std::vector<std::vector<std::int64_t>> target = {})
      : RuleContext(spec, std::move(inputs), draws, bounds),
        ctx_(ctx),
        target_(std::move(target)) {}

  Int lit(std::int64_t v) const { return ctx_.int_val(static_cast<int64_t>(v)); }
  Int attr_int(const std::string& name, std::int64_t lo, std::int64_t hi);
  std::vector<Int> attr_ints(const std::string& name, int count, std::int64_t lo, std::int64_t hi);
  Int var(const std::string& name, std::int64_t lo, std::int64_t hi);
  std::vector<Int> data(int input);
  void shape_input(int input, const std::vector<Int>& dims);
  void require(const Bool& condition) { constraints_.push_back(condition); }
  void output(const std::vector<Int>& dims);

  static Int select(const Bool& c, const Int& a, const Int& b) { return z3::ite(c, a, b); }
  static Int max(const Int& a, const Int& b) { return z3::ite(a > b, a, b); }
  static Int min(const Int& a, const Int& b) { return z3::ite(a < b, a, b); }

  // Whole-graph mode (weft/gen/shrink.h): every input's and output's dims are the given
  // expressions, shared with the nodes that produce and consume them, and the rule's unknowns
  // are named with `prefix` so that nodes do not share them. Call before running the rule.
  void bind_graph(std::vector<std::vector<z3::expr>> inputs,
                  std::vector<std::vector<z3::expr>> outputs, std::string prefix) {
    graph_inputs_ = std::move(inputs);
    graph_outputs_ = std::move(outputs);
    prefix_ = std::move(prefix);
  }

  const std::vector<z3::expr>& constraints() const { return constraints_; }
  // One "unknown == drawn value" per unknown, for check() with assumptions.
  const std::vector<z3::expr>& preferences() const { return preferences_; }
  // The unknowns, by name, to read back from a model.
  const std::map<std::string, z3::expr>& unknowns() const { return unknowns_; }
  // A constraint is plainly false (a rank that cannot match): no need to ask Z3.
  bool infeasible() const { return infeasible_; }

 private:
  Int unknown(const std::string& name, std::int64_t lo, std::int64_t hi, std::int64_t preferred);
  void bound_shape(const std::vector<Int>& dims, bool allow_zero);
  // `dims` equal `graph_dims` (whole-graph mode); a rank that differs is infeasible.
  void equate(const std::vector<Int>& dims, const std::vector<Int>& graph_dims);

  z3::context& ctx_;
  std::vector<std::vector<std::int64_t>> target_;
  std::size_t outputs_seen_ = 0;
  std::vector<z3::expr> constraints_;
  std::vector<z3::expr> preferences_;
  std::map<std::string, z3::expr> unknowns_;
  bool infeasible_ = false;
  std::vector<std::vector<z3::expr>> graph_inputs_;  // empty outside whole-graph mode
  std::vector<std::vector<z3::expr>> graph_outputs_;
  std::string prefix_;
};

// Broadcasting of two shapes (right-aligned), for either builder.
template <class B>
std::vector<typename B::Int> broadcast(B& b, const std::vector<typename B::Int>& x,
                                       const std::vector<typename B::Int>& y) {
  const std::size_t n = std::max(x.size(), y.size());
  std::vector<typename B::Int> out;
  for (std::size_t i = 0; i < n; ++i) {
    const bool in_x = i + x.size() >= n, in_y = i + y.size() >= n;
    if (in_x && in_y) {
      const auto& a = x[i + x.size() - n];
      const auto& c = y[i + y.size() - n];
      b.require(a == c || a == 1 || c == 1);
      out.push_back(B::select(a == 1, c, a));
    } else {
      out.push_back(in_x ? x[i + x.size() - n] : y[i + y.size() - n]);
    }
  }
  return out;
}

// The sampler's concrete value, or `fallback` in the encoder: narrows the sampler's draws to
// values that fit (a subset of the encoder's domain), so most samples succeed without Z3.
inline std::int64_t hint(std::int64_t v, std::int64_t) {
  return v;
}
inline std::int64_t hint(const z3::expr&, std::int64_t fallback) {
  return fallback;
}

// Int-list attributes computed from unknowns: set by the sampler; the encoder's attributes are
// never read (a Z3 model is replayed through the sampler, which sets them).
inline void set_ints(Sampler& b, const std::string& name, const std::vector<std::int64_t>& v) {
  b.set_attr(name, v);
}
inline void set_ints(Encoder&, const std::string&, const std::vector<z3::expr>&) {}

// `s` with its rule replaced by another template's two instantiations.
template <void (*SampleRule)(Sampler&), void (*EncodeRule)(Encoder&)>
OpSpec with_rule(OpSpec s) {
  s.sample = SampleRule;
  s.encode = EncodeRule;
  return s;
}

// Registers a rule template under both builders: OpSpec{..., WEFT_RULE(conv_rule)}.
#define WEFT_RULE(rule) &rule<::weft::gen::Sampler>, &rule<::weft::gen::Encoder>

}  // namespace weft::gen
