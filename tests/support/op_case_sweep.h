#pragma once
// The op sweep's case builder, shared by the files of tests/support/op_cases*.cpp: reproducible
// leaf values (Values), leaves (in, param) and the per-op collector (Sweep). One file per group
// of op families keeps each under the size budget.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/op_cases.h"
#include "weft/ir/op_schema.h"
#include "weft/ops.h"

namespace weft::testing::sweep {

using ir::Attributes;
using ir::OpKind;
using Ints = std::vector<std::int64_t>;

inline double f32(double v) {
  return static_cast<double>(static_cast<float>(v));
}

inline Tensor doubles(const std::vector<double>& values, const Shape& shape) {
  return tensor(values).reshape(shape).clone();
}

inline Tensor int64s(const std::vector<std::int64_t>& values, const Shape& shape) {
  return tensor(values).reshape(shape).clone();
}

// Leaf values, reproducible from a seed.
class Values {
 public:
  explicit Values(std::uint64_t seed) : rng_(seed) {}

  double draw(double lo, double hi) {
    return f32(std::uniform_real_distribution<double>(lo, hi)(rng_));
  }

  Tensor uniform(const Shape& shape, double lo = -1.0, double hi = 1.0) {
    std::vector<double> v(count(shape));
    for (double& x : v) x = draw(lo, hi);
    return doubles(v, shape);
  }

  // Uniform in [lo, hi), at least `margin` away from every kink.
  Tensor away(const Shape& shape, double lo, double hi, const std::vector<double>& kinks,
              double margin = 0.05) {
    std::vector<double> v(count(shape));
    for (double& x : v) {
      do {
        x = draw(lo, hi);
      } while (std::any_of(kinks.begin(), kinks.end(),
                           [&](double k) { return std::fabs(x - k) < margin; }));
    }
    return doubles(v, shape);
  }

  // Magnitudes in [lo, hi) with random signs: away from zero.
  Tensor magnitude(const Shape& shape, double lo, double hi) {
    std::vector<double> v(count(shape));
    for (double& x : v) x = draw(lo, hi) * (coin() ? 1.0 : -1.0);
    return doubles(v, shape);
  }

  // Pairwise distinct values (gaps >= 0.6 of (hi - lo) / n) in random order: no ties.
  Tensor distinct(const Shape& shape, double lo = -2.0, double hi = 2.0) {
    auto both = distinct_values(count(shape), lo, hi);
    return doubles(both, shape);
  }

  // Two tensors whose values are all pairwise distinct (maximum, minimum).
  std::pair<Tensor, Tensor> distinct2(const Shape& a, const Shape& b, double lo = -2.0,
                                      double hi = 2.0) {
    const std::size_t na = count(a);
    auto all = distinct_values(na + count(b), lo, hi);
    std::vector<double> va(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(na));
    std::vector<double> vb(all.begin() + static_cast<std::ptrdiff_t>(na), all.end());
    return {doubles(va, a), doubles(vb, b)};
  }

  // Integer-valued floats in [lo, hi] (ties for comparisons, zeros for logic ops).
  Tensor grid(const Shape& shape, std::int64_t lo, std::int64_t hi) {
    std::vector<double> v(count(shape));
    for (double& x : v) x = static_cast<double>(integer(lo, hi));
    return doubles(v, shape);
  }

  // Integers in [lo, hi], in `dtype` (Int64 or Int32).
  Tensor ints(const Shape& shape, std::int64_t lo, std::int64_t hi, Dtype dtype = Dtype::Int64) {
    std::vector<std::int64_t> v(count(shape));
    for (std::int64_t& x : v) x = integer(lo, hi);
    return int64s(v, shape).to(dtype);
  }

  // Nonzero integers with |x| in [1, hi].
  Tensor nonzero_ints(const Shape& shape, std::int64_t hi) {
    std::vector<std::int64_t> v(count(shape));
    for (std::int64_t& x : v) x = integer(1, hi) * (coin() ? 1 : -1);
    return int64s(v, shape);
  }

  Tensor bools(const Shape& shape) {
    std::vector<bool> v(count(shape));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = coin();
    return tensor(v).reshape(shape).clone();
  }

 private:
  static std::size_t count(const Shape& shape) {
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    return static_cast<std::size_t>(n);
  }
  bool coin() { return std::uniform_int_distribution<int>(0, 1)(rng_) == 1; }
  std::int64_t integer(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }
  std::vector<double> distinct_values(std::size_t n, double lo, double hi) {
    std::vector<double> v(n);
    const double step = (hi - lo) / static_cast<double>(std::max<std::size_t>(n, 1));
    for (std::size_t i = 0; i < n; ++i) {
      v[i] = f32(lo + (static_cast<double>(i) + 0.5) * step + draw(-0.2, 0.2) * step);
    }
    std::shuffle(v.begin(), v.end(), rng_);
    return v;
  }

  std::mt19937_64 rng_;
};

struct Leaf {
  std::string name;
  Tensor value;
  bool parameter = false;
};

inline Leaf in(std::string name, Tensor value) {
  return {std::move(name), std::move(value), false};
}
inline Leaf param(std::string name, Tensor value) {
  return {std::move(name), std::move(value), true};
}

// Collects the cases of one op.
class Sweep {
 public:
  Sweep(OpKind op, Dtype float_dtype)
      : op_(op), float_dtype_(float_dtype), v(label_seed(std::string(ir::op_name(op)))) {}

  // Builds a single-node case; the output types come from running the engine once.
  OpCase& add(const std::string& what, const std::vector<Leaf>& leaves, Attributes attrs = {}) {
    OpCase c;
    c.label = std::string(ir::op_name(op_)) + "/" + what;
    std::vector<ir::ValueId> ids;
    std::vector<Tensor> inputs;
    for (const Leaf& leaf : leaves) {
      Tensor t = leaf.value;
      if (t.is_floating_point()) t = t.to(float_dtype_).contiguous();
      const ir::TensorType type{t.dtype(), t.sizes()};
      ids.push_back(leaf.parameter ? c.graph.add_parameter(leaf.name, type)
                                   : c.graph.add_input(leaf.name, type));
      c.values[leaf.name] = t;
      inputs.push_back(t);
    }
    ir::Node node{op_, ids, {}, attrs, "node"};
    try {
      const std::vector<Tensor> outputs = ir::run_node(node, inputs);
      std::vector<ir::TensorType> types;
      for (const Tensor& out : outputs) types.push_back({out.dtype(), out.sizes()});
      for (ir::ValueId id : c.graph.add_node(op_, ids, attrs, types, "node")) {
        c.graph.mark_output(id);
      }
    } catch (const std::exception& e) {
      c.engine_error = e.what();
    }
    cases_.push_back(std::move(c));
    return cases_.back();
  }
  // A case whose outputs are piecewise constant in its floating inputs.
  void add_constant(const std::string& what, const std::vector<Leaf>& leaves,
                    Attributes attrs = {}) {
    add(what, leaves, std::move(attrs)).differentiable = false;
  }

  std::vector<OpCase> take() { return std::move(cases_); }
  // The floating type this sweep's floating leaves take.
  Dtype float_dtype() const { return float_dtype_; }

 private:
  OpKind op_;
  Dtype float_dtype_;
  std::vector<OpCase> cases_;

 public:
  Values v;
};

inline Attributes attrs() {
  return Attributes();
}
// A case at a kink, tie or pole: only the torch sweep judges its gradient.
inline void add_convention(Sweep& s, const std::string& what, const std::vector<Leaf>& leaves,
                           Attributes attrs = {}) {
  s.add(what, leaves, std::move(attrs)).fd_check = false;
}

// The cases of the elementwise math added for the Core ATen opset (op_cases_math.cpp): the
// rounding and special functions, the piecewise activations, the two-argument math, the
// bitwise ops. Adds
// nothing for other ops and returns false.
bool math_cases(Sweep& s, ir::OpKind op);
// The cases of amax, amin, any, all, cumsum, cumprod, flip, roll, repeat, diagonal,
// pixel_shuffle and pixel_unshuffle (op_cases_order.cpp); false for other ops.
bool order_cases(Sweep& s, ir::OpKind op);
// The cases of group_norm, instance_norm, scatter, scatter_add, scatter_reduce, index_add,
// index_put, masked_fill, masked_scatter and copy (op_cases_accumulate.cpp); false for other
// ops.
bool accumulate_cases(Sweep& s, ir::OpKind op);
// The cases of max_pool3d, avg_pool3d and adaptive_avg_pool3d (op_cases_pool3d.cpp); false
// for other ops.
bool pool3d_cases(Sweep& s, ir::OpKind op);
// The cases of cdist and pdist (op_cases_distance.cpp); false for other ops.
bool distance_cases(Sweep& s, ir::OpKind op);
// The cases of im2col and col2im (op_cases_fold.cpp); false for other ops.
bool fold_cases(Sweep& s, ir::OpKind op);
// The cases of logaddexp2, xlogy, copysign, fmax, fmin, lerp, addcmul, addcdiv, logit,
// nan_to_num, glu and prelu (op_cases_pointwise.cpp); false for other ops.
bool pointwise_cases(Sweep& s, ir::OpKind op);
// The cases of dot, mv, outer, trace and baddbmm (op_cases_products.cpp); false for other ops.
bool product_cases(Sweep& s, ir::OpKind op);
// The cases of logcumsumexp, cummax, cummin, mse_loss, l1_loss, smooth_l1_loss, huber_loss,
// nll_loss, cross_entropy_loss, binary_cross_entropy_with_logits and kl_div
// (op_cases_scans_losses.cpp); false for other ops.
bool scan_loss_cases(Sweep& s, ir::OpKind op);
// The cases of adaptive_max_pool1d and adaptive_max_pool2d (op_cases_adaptive_max.cpp); false
// for other ops.
bool adaptive_max_cases(Sweep& s, ir::OpKind op);
// The cases of conv_transpose1d, conv_transpose2d and rms_norm (op_cases_layers.cpp); false for
// other ops.
bool layer_cases(Sweep& s, ir::OpKind op);
// The random draws (op_cases_random.cpp): dropouts, rrelu, the samplers.
bool random_cases(Sweep& s, ir::OpKind op);

// The cases of the families shape, scatter, join, index, interpolate, cast and scalar
// (op_cases_data_movement.cpp); nothing for other families.
void data_movement_cases(Sweep& s, ir::OpKind op, std::string_view family);
// The edge cases of every op, added after its family's cases (op_cases_edges.cpp).
void edge_cases(Sweep& s, ir::OpKind op);

}  // namespace weft::testing::sweep
