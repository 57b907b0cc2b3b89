// The sampler and the encoder: random (or pinned) integers with cheap checks, and the same rule
// as Z3 constraints with the draws as soft preferences.
#include "spec/builder.h"

#include <algorithm>
#include <numeric>

#include "weft/error.h"

namespace weft::gen {

// ---- Draws ----

std::int64_t Draws::integer(const std::string& name, std::int64_t lo, std::int64_t hi) {
  const auto found = integers_.find(name);
  if (found != integers_.end()) return found->second;
  const std::int64_t v = std::uniform_int_distribution<std::int64_t>(lo, std::max(lo, hi))(rng_);
  integers_.emplace(name, v);
  return v;
}

double Draws::real(const std::string& name, double lo, double hi) {
  const auto found = reals_.find(name);
  if (found != reals_.end()) return found->second;
  const double v = std::uniform_real_distribution<double>(lo, hi)(rng_);
  reals_.emplace(name, v);
  return v;
}

bool Draws::chance(const std::string& name, double probability) {
  return real("?" + name, 0.0, 1.0) < probability;
}

std::int64_t Draws::dim(const std::string& name, std::int64_t max, bool allow_zero) {
  const auto found = integers_.find(name);
  if (found != integers_.end()) return found->second;
  // Mostly small sizes keep tensors (and every run) cheap; now and then a large one.
  std::int64_t v;
  const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
  if (allow_zero && u < 0.1) {
    v = 0;
  } else if (u < 0.9) {
    v = std::uniform_int_distribution<std::int64_t>(1, std::min<std::int64_t>(max, 8))(rng_);
  } else {
    v = std::uniform_int_distribution<std::int64_t>(1, max)(rng_);
  }
  integers_.emplace(name, v);
  return v;
}

// ---- RuleContext: concrete choices ----

bool RuleContext::attr_bool(const std::string& name) {
  const bool v = draws_.integer(name, 0, 1) != 0;
  attrs_.set(name, v);
  return v;
}

double RuleContext::attr_float(const std::string& name, double lo, double hi) {
  const double v = draws_.real(name, lo, hi);
  attrs_.set(name, v);
  return v;
}

const std::string& RuleContext::attr_string(const std::string& name,
                                            const std::vector<std::string>& options) {
  const auto i = draws_.integer(name, 0, static_cast<std::int64_t>(options.size()) - 1);
  const std::string& v = options.at(static_cast<std::size_t>(i));
  attrs_.set(name, v);
  return v;
}

Dtype RuleContext::attr_dtype(const std::string& name, const std::vector<Dtype>& options) {
  const auto i = draws_.integer(name, 0, static_cast<std::int64_t>(options.size()) - 1);
  const Dtype v = options.at(static_cast<std::size_t>(i));
  attrs_.set(name, v);
  return v;
}

std::vector<std::int64_t> RuleContext::attr_permutation(const std::string& name, int n) {
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  // Fisher–Yates through memoized draws, so a second evaluation repeats it.
  for (int i = n - 1; i > 0; --i) {
    const auto j = draws_.integer(name + ".swap" + std::to_string(i), 0, i);
    std::swap(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(j)]);
  }
  attrs_.set(name, perm);
  return perm;
}

std::vector<std::int64_t> RuleContext::attr_dims(const std::string& name, int rank, int min_count) {
  std::vector<std::int64_t> dims;
  for (int d = 0; d < rank; ++d) {
    if (draws_.chance(name + ".has" + std::to_string(d), 0.5)) {
      const bool negative = draws_.chance(name + ".neg" + std::to_string(d), 0.3);
      dims.push_back(negative ? d - rank : d);
    }
  }
  for (int d = 0; static_cast<int>(dims.size()) < min_count && d < rank; ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end() &&
        std::find(dims.begin(), dims.end(), d - rank) == dims.end()) {
      dims.push_back(d);
    }
  }
  attrs_.set(name, dims);
  return dims;
}

std::int64_t RuleContext::attr_dim(const std::string& name, int rank) {
  const int extent = std::max(rank, 1);
  const std::int64_t v = draws_.integer(name, -extent, extent - 1);
  attrs_.set(name, v);
  return v;
}

// ---- Sampler ----

Sampler::Int Sampler::unknown(const std::string& name, std::int64_t lo, std::int64_t hi,
                              bool is_dim) {
  if (pinned_ != nullptr) {
    const auto found = pinned_->find(name);
    if (found != pinned_->end()) {
      if (strict_pins_ && (found->second < lo || found->second > hi)) {
        throw Rejected{"a pinned value outside its range"};
      }
      return found->second;
    }
  }
  if (is_dim) return draws_.dim(name, std::min(hi, bounds_.max_dim), lo == 0);
  if (likely_ != nullptr && !draws_.known_integer(name)) {
    std::vector<std::int64_t> fits;
    for (std::int64_t v : *likely_) {
      if (v >= lo && v <= hi) fits.push_back(v);
    }
    if (!fits.empty() && draws_.chance("likely." + name, 0.9)) {
      const auto pick =
          draws_.integer("likely." + name, 0, static_cast<std::int64_t>(fits.size()) - 1);
      draws_.preset_integer(name, fits[static_cast<std::size_t>(pick)]);
    }
  }
  return draws_.integer(name, lo, hi);
}

Sampler::Int Sampler::attr_int(const std::string& name, std::int64_t lo, std::int64_t hi) {
  const Int v = unknown(name, lo, hi, false);
  attrs_.set(name, v);
  return v;
}

std::vector<Sampler::Int> Sampler::attr_ints(const std::string& name, int count, std::int64_t lo,
                                             std::int64_t hi) {
  std::vector<Int> values;
  for (int i = 0; i < count; ++i)
    values.push_back(unknown(name + "." + std::to_string(i), lo, hi, false));
  attrs_.set(name, values);
  return values;
}

Sampler::Int Sampler::var(const std::string& name, std::int64_t lo, std::int64_t hi) {
  return unknown(name, lo, hi, false);
}

std::vector<Sampler::Int> Sampler::data(int input) {
  const InputBinding& binding = inputs_.at(static_cast<std::size_t>(input));
  std::vector<Int> dims;
  if (binding.shape) {
    dims = *binding.shape;
  } else {
    // A fresh input: each dim mostly copies the right-aligned dim of a bound input (so that
    // broadcasting and matching sizes succeed without Z3), sometimes 1, sometimes random.
    const std::vector<std::int64_t>* like = like_;
    for (const InputBinding& other : inputs_) {
      if (other.shape && !other.shape->empty()) {
        like = &*other.shape;
        break;
      }
    }
    for (int d = 0; d < binding.rank; ++d) {
      const std::string name = dim_name(input, d);
      const int from_right = binding.rank - d;
      const bool aligned = like != nullptr && from_right <= static_cast<int>(like->size());
      if (pinned_ == nullptr && aligned && draws_.chance(name + ".copy", 0.8)) {
        dims.push_back((*like)[like->size() - static_cast<std::size_t>(from_right)]);
        continue;
      }
      dims.push_back(unknown(name, bounds_.allow_zero_dims ? 0 : 1, bounds_.max_dim, true));
    }
    check_shape(dims);
  }
  input_shapes_.at(static_cast<std::size_t>(input)) = dims;
  return dims;
}

void Sampler::shape_input(int input, const std::vector<Int>& dims) {
  check_shape(dims);
  input_shapes_.at(static_cast<std::size_t>(input)) = dims;
}

void Sampler::check_shape(const std::vector<Int>& dims) const {
  if (static_cast<int>(dims.size()) > bounds_.max_rank) throw Rejected{"rank above the bound"};
  std::int64_t elements = 1;
  for (Int d : dims) {
    if (d < 0 || d > bounds_.max_dim || (d == 0 && !bounds_.allow_zero_dims)) {
      throw Rejected{"dim outside the bounds"};
    }
    elements *= std::max<std::int64_t>(d, 1);
    if (elements > bounds_.max_elements) throw Rejected{"too many elements"};
  }
}

void Sampler::output(const std::vector<Int>& dims) {
  check_shape(dims);
  output_shapes_.push_back(dims);
}

// ---- Encoder ----

Encoder::Int Encoder::unknown(const std::string& name, std::int64_t lo, std::int64_t hi,
                              std::int64_t preferred) {
  const auto found = unknowns_.find(name);
  if (found != unknowns_.end()) return found->second;
  z3::expr v = ctx_.int_const((prefix_ + name).c_str());
  constraints_.push_back(v >= lit(lo) && v <= lit(hi));
  preferences_.push_back(v == lit(std::clamp(preferred, lo, hi)));
  unknowns_.emplace(name, v);
  return v;
}

Encoder::Int Encoder::attr_int(const std::string& name, std::int64_t lo, std::int64_t hi) {
  return unknown(name, lo, hi, draws_.integer(name, lo, hi));
}

std::vector<Encoder::Int> Encoder::attr_ints(const std::string& name, int count, std::int64_t lo,
                                             std::int64_t hi) {
  std::vector<Int> values;
  for (int i = 0; i < count; ++i) {
    const std::string element = name + "." + std::to_string(i);
    values.push_back(unknown(element, lo, hi, draws_.integer(element, lo, hi)));
  }
  return values;
}

Encoder::Int Encoder::var(const std::string& name, std::int64_t lo, std::int64_t hi) {
  return unknown(name, lo, hi, draws_.integer(name, lo, hi));
}

std::vector<Encoder::Int> Encoder::data(int input) {
  const InputBinding& binding = inputs_.at(static_cast<std::size_t>(input));
  if (!graph_inputs_.empty()) return graph_inputs_.at(static_cast<std::size_t>(input));
  std::vector<Int> dims;
  if (binding.shape) {
    for (std::int64_t d : *binding.shape) dims.push_back(lit(d));
    return dims;
  }
  const std::int64_t lo = bounds_.allow_zero_dims ? 0 : 1;
  for (int d = 0; d < binding.rank; ++d) {
    const std::string name = dim_name(input, d);
    dims.push_back(unknown(name, lo, bounds_.max_dim, draws_.dim(name, bounds_.max_dim, lo == 0)));
  }
  bound_shape(dims, bounds_.allow_zero_dims);
  return dims;
}

void Encoder::shape_input(int input, const std::vector<Int>& dims) {
  bound_shape(dims, bounds_.allow_zero_dims);
  if (!graph_inputs_.empty()) equate(dims, graph_inputs_.at(static_cast<std::size_t>(input)));
}

void Encoder::equate(const std::vector<Int>& dims, const std::vector<Int>& graph_dims) {
  if (dims.size() != graph_dims.size()) {
    constraints_.push_back(ctx_.bool_val(false));
    infeasible_ = true;
    return;
  }
  for (std::size_t i = 0; i < dims.size(); ++i) constraints_.push_back(dims[i] == graph_dims[i]);
}

void Encoder::bound_shape(const std::vector<Int>& dims, bool allow_zero) {
  if (static_cast<int>(dims.size()) > bounds_.max_rank) {
    constraints_.push_back(ctx_.bool_val(false));
    infeasible_ = true;
    return;
  }
  z3::expr elements = lit(1);
  for (const Int& d : dims) {
    constraints_.push_back(d >= lit(allow_zero ? 0 : 1) && d <= lit(bounds_.max_dim));
    elements = elements * max(d, lit(1));
  }
  if (!dims.empty()) constraints_.push_back(elements <= lit(bounds_.max_elements));
}

void Encoder::output(const std::vector<Int>& dims) {
  bound_shape(dims, bounds_.allow_zero_dims);
  if (!graph_outputs_.empty()) {
    if (outputs_seen_ < graph_outputs_.size()) {
      equate(dims, graph_outputs_[outputs_seen_]);
    } else {
      constraints_.push_back(ctx_.bool_val(false));
      infeasible_ = true;
    }
  }
  if (outputs_seen_ < target_.size()) {
    const auto& want = target_[outputs_seen_];
    if (want.size() != dims.size()) {
      constraints_.push_back(ctx_.bool_val(false));
      infeasible_ = true;
    } else {
      for (std::size_t i = 0; i < dims.size(); ++i) constraints_.push_back(dims[i] == lit(want[i]));
    }
  }
  ++outputs_seen_;
}

}  // namespace weft::gen
