// The op sweep's cases, one block per op family. Values are drawn from one generator per op
// (seeded from the op's name), so every call returns the same cases; each draw is rounded to
// float32 so that the float32 and float64 variants of a case hold identical numbers.
#include "support/op_cases.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <random>
#include <sstream>
#include <utility>

#include "support/op_case_sweep.h"
#include "weft/ir/op_schema.h"
#include "weft/ops.h"

namespace weft::testing {

namespace {

using namespace sweep;

// ---- unary math ----

// Values inside the op's smooth domain, away from its jumps.
Tensor unary_values(OpKind op, Values& v, const Shape& s) {
  switch (op) {
    case OpKind::Abs:
      return v.away(s, -2.0, 2.0, {0.0});
    case OpKind::Log:
    case OpKind::Log2:
    case OpKind::Sqrt:
      return v.uniform(s, 0.1, 3.0);
    case OpKind::Rsqrt:
      return v.uniform(s, 0.2, 3.0);
    case OpKind::Reciprocal:
      return v.magnitude(s, 0.3, 2.0);
    case OpKind::Tan:
      return v.uniform(s, -1.2, 1.2);
    case OpKind::Asin:
    case OpKind::Acos:
      return v.uniform(s, -0.9, 0.9);
    case OpKind::Floor:
    case OpKind::Ceil:
      return v.away(s, -3.0, 3.0, {-3, -2, -1, 0, 1, 2, 3});
    case OpKind::Round:
      return v.away(s, -3.0, 3.0, {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5});
    case OpKind::Sign:
      return v.away(s, -2.0, 2.0, {0.0});
    default:
      return v.uniform(s, -2.0, 2.0);
  }
}

bool piecewise_constant(OpKind op) {
  return op == OpKind::Floor || op == OpKind::Ceil || op == OpKind::Round || op == OpKind::Sign;
}

void unary_math(Sweep& s, OpKind op) {
  const bool constant = piecewise_constant(op);
  for (const auto& [what, shape] : std::vector<std::pair<std::string, Shape>>{
           {"2x3", {2, 3}}, {"rank0", {}}, {"size0", {0, 3}}, {"2x1x5", {2, 1, 5}}}) {
    s.add(what, {in("x", unary_values(op, s.v, shape))}).differentiable = !constant;
  }
  // Integer inputs: neg/abs/sign/floor/ceil/round keep the dtype, the others promote to the
  // default float type (float32), like torch.
  std::int64_t lo = -3;
  std::int64_t hi = 3;
  if (op == OpKind::Log || op == OpKind::Log2 || op == OpKind::Sqrt || op == OpKind::Rsqrt ||
      op == OpKind::Reciprocal) {
    lo = 1;
    hi = 5;
  } else if (op == OpKind::Asin || op == OpKind::Acos) {
    lo = -1;
    hi = 1;
  }
  s.add_constant("int64", {in("x", s.v.ints({2, 3}, lo, hi))});
  if (op == OpKind::Round) {
    // Halves round to even.
    s.add_constant("half_to_even",
                   {in("x", doubles({-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5}, {8}))});
  }
  if (op == OpKind::Sign) {
    s.add_constant("zeros", {in("x", doubles({-1.5, 0.0, 2.0, 0.0, -0.25, 0.5}, {2, 3}))});
  }
  if (op == OpKind::Floor || op == OpKind::Ceil) {
    s.add_constant("integers", {in("x", doubles({-2.0, -1.0, 0.0, 1.0, 2.0, 3.0}, {2, 3}))});
  }
}

// ---- activations ----

void activation(Sweep& s, OpKind op) {
  auto& v = s.v;
  auto shapes = [&](const std::string& prefix, std::vector<double> kinks, Attributes a) {
    s.add(prefix + "2x3", {in("x", v.away({2, 3}, -3.0, 3.0, kinks))}, a);
    s.add(prefix + "rank0", {in("x", v.away({}, -3.0, 3.0, kinks))}, a);
    s.add(prefix + "size0", {in("x", v.uniform({0, 3}))}, a);
    s.add(prefix + "2x2x4", {in("x", v.away({2, 2, 4}, -3.0, 3.0, kinks))}, a);
  };
  switch (op) {
    case OpKind::Sigmoid:
    case OpKind::Silu:
      shapes("", {}, attrs());
      break;
    case OpKind::Relu:
      shapes("", {0.0}, attrs());
      s.add_constant("int64", {in("x", v.ints({2, 3}, -3, 3))});
      break;
    case OpKind::LeakyRelu:
      shapes("", {0.0}, attrs());
      shapes("slope0.2_", {0.0}, attrs().set("negative_slope", 0.2));
      s.add("slope_negative", {in("x", v.away({2, 3}, -3.0, 3.0, {0.0}))},
            attrs().set("negative_slope", -0.5));
      break;
    case OpKind::Elu:
      shapes("", {0.0}, attrs());
      s.add("alpha0.5", {in("x", v.away({2, 3}, -3.0, 3.0, {0.0}))}, attrs().set("alpha", 0.5));
      s.add("alpha2", {in("x", v.away({2, 3}, -3.0, 3.0, {0.0}))}, attrs().set("alpha", 2.0));
      break;
    case OpKind::Gelu:
      shapes("none_", {}, attrs());
      shapes("tanh_", {}, attrs().set("approximate", "tanh"));
      break;
    case OpKind::Softplus:
      shapes("", {}, attrs());
      // x * beta > threshold switches to the identity (a jump at x = threshold / beta).
      s.add("beta2_threshold1", {in("x", v.away({2, 4}, -2.0, 2.0, {0.5}))},
            attrs().set("beta", 2.0).set("threshold", 1.0));
      s.add("beta0.5", {in("x", v.uniform({2, 3}, -3.0, 3.0))}, attrs().set("beta", 0.5));
      break;
    case OpKind::Hardtanh:
      shapes("", {-1.0, 1.0}, attrs());
      s.add("min-0.5_max0.75", {in("x", v.away({2, 4}, -2.0, 2.0, {-0.5, 0.75}))},
            attrs().set("min_val", -0.5).set("max_val", 0.75));
      break;
    case OpKind::Clamp:
      s.add("min", {in("x", v.away({2, 3}, -2.0, 2.0, {-0.5}))}, attrs().set("min", -0.5));
      s.add("max", {in("x", v.away({2, 3}, -2.0, 2.0, {0.5}))}, attrs().set("max", 0.5));
      s.add("min_max", {in("x", v.away({2, 4}, -2.0, 2.0, {-0.3, 0.6}))},
            attrs().set("min", -0.3).set("max", 0.6));
      s.add("rank0", {in("x", v.away({}, -2.0, 2.0, {-0.3, 0.6}))},
            attrs().set("min", -0.3).set("max", 0.6));
      s.add("size0", {in("x", v.uniform({0, 2}))}, attrs().set("min", -0.3).set("max", 0.6));
      // torch: min > max sets every element to max.
      s.add("min_above_max", {in("x", v.away({2, 3}, -2.0, 2.0, {-0.5, 0.5}))},
            attrs().set("min", 0.5).set("max", -0.5));
      break;
    default:
      break;
  }
}

// ---- binary arithmetic ----

void binary(Sweep& s, OpKind op) {
  auto& v = s.v;
  // Operand generators: the left side, and the right side (denominators, exponents).
  auto lhs = [&](const Shape& shape) {
    return op == OpKind::Pow ? v.uniform(shape, 0.5, 2.0) : v.uniform(shape, -2.0, 2.0);
  };
  auto rhs = [&](const Shape& shape) {
    if (op == OpKind::Div) return v.magnitude(shape, 0.5, 2.0);
    return v.uniform(shape, -2.0, 2.0);
  };
  const bool extremum = op == OpKind::Maximum || op == OpKind::Minimum;
  auto pair = [&](const std::string& what, const Shape& a, const Shape& b, Attributes at = {}) {
    if (extremum) {
      auto [x, y] = v.distinct2(a, b);
      s.add(what, {in("x", x), in("other", y)}, at);
    } else {
      s.add(what, {in("x", lhs(a)), in("other", rhs(b))}, at);
    }
  };
  pair("2x3", {2, 3}, {2, 3});
  pair("broadcast_2x1x3_4x1", {2, 1, 3}, {4, 1});
  pair("broadcast_3_2x3", {3}, {2, 3});
  pair("rank0_other", {2, 3}, {});
  pair("rank0_both", {}, {});
  pair("size0", {0, 3}, {1, 3});
  if (op == OpKind::Add || op == OpKind::Sub) {
    pair("alpha2.5", {2, 3}, {2, 1}, attrs().set("alpha", 2.5));
    pair("alpha-1", {3}, {2, 3}, attrs().set("alpha", -1.0));
  }
  if (extremum) {
    // Ties share the gradient equally (torch); central differences agree.
    s.add("ties", {in("x", v.grid({2, 4}, -1, 1)), in("other", v.grid({2, 4}, -1, 1))});
  }
  // Integer operands and mixed promotion.
  Tensor int_lhs = op == OpKind::Pow ? v.ints({2, 3}, -3, 3) : v.ints({2, 3}, -5, 5);
  Tensor int_rhs = op == OpKind::Div   ? v.nonzero_ints({2, 3}, 3)
                   : op == OpKind::Pow ? v.ints({2, 3}, 0, 3)
                                       : v.ints({2, 3}, -5, 5);
  s.add_constant("int64", {in("x", int_lhs), in("other", int_rhs)});
  s.add_constant("int32_int64", {in("x", int_lhs.to(Dtype::Int32)), in("other", int_rhs)});
  if (op == OpKind::Pow) {
    s.add("int64_base_float_exponent", {in("x", v.ints({2, 3}, 1, 4)), in("other", rhs({3}))});
    s.add("float_base_int64_exponent", {in("x", lhs({2, 3})), in("other", v.ints({3}, -2, 3))});
  } else {
    s.add("int64_float", {in("x", v.ints({2, 3}, -5, 5)), in("other", rhs({3}))});
    s.add("float_int64", {in("x", lhs({2, 3})), in("other", int_rhs)});
  }
  if (op == OpKind::Div) {
    // Rounding modes: quotients away from integers (the jumps).
    for (const std::string mode : {"trunc", "floor"}) {
      std::vector<double> num;
      std::vector<double> den;
      while (num.size() < 8) {
        const double a = v.draw(-4.0, 4.0);
        const double b = v.draw(0.5, 2.0) * (num.size() % 2 == 0 ? 1.0 : -1.0);
        const double q = a / b;
        if (std::fabs(q - std::round(q)) > 0.05) {
          num.push_back(a);
          den.push_back(b);
        }
      }
      s.add_constant(mode, {in("x", doubles(num, {2, 4})), in("other", doubles(den, {2, 4}))},
                     attrs().set("rounding_mode", mode));
      s.add_constant(mode + "_int64", {in("x", int_lhs), in("other", int_rhs)},
                     attrs().set("rounding_mode", mode));
    }
  }
}

// ---- comparison and logic ----

void compare(Sweep& s, OpKind op) {
  auto& v = s.v;
  if (op == OpKind::LogicalNot) {
    s.add_constant("bool", {in("x", v.bools({2, 3}))});
    s.add_constant("float", {in("x", v.grid({2, 3}, -1, 1))});
    s.add_constant("int64", {in("x", v.ints({2, 3}, -1, 1))});
    s.add_constant("rank0", {in("x", v.grid({}, -1, 1))});
    s.add_constant("size0", {in("x", v.uniform({0, 3}))});
    return;
  }
  if (op == OpKind::Where) {
    s.add("2x3", {in("condition", v.bools({2, 3})), in("x", v.uniform({2, 3})),
                  in("other", v.uniform({2, 3}))});
    s.add("broadcast", {in("condition", v.bools({2, 1})), in("x", v.uniform({1, 3})),
                        in("other", v.uniform({}))});
    s.add("broadcast_condition", {in("condition", v.bools({3})), in("x", v.uniform({2, 3})),
                                  in("other", v.uniform({2, 1}))});
    s.add("rank0",
          {in("condition", v.bools({})), in("x", v.uniform({})), in("other", v.uniform({}))});
    s.add("size0", {in("condition", v.bools({0, 3})), in("x", v.uniform({0, 3})),
                    in("other", v.uniform({1, 3}))});
    s.add("int64", {in("condition", v.bools({2, 3})), in("x", v.ints({2, 3}, -5, 5)),
                    in("other", v.ints({2, 3}, -5, 5))});
    s.add("bool", {in("condition", v.bools({2, 3})), in("x", v.bools({2, 3})),
                   in("other", v.bools({2, 3}))});
    return;
  }
  const bool logic =
      op == OpKind::LogicalAnd || op == OpKind::LogicalOr || op == OpKind::LogicalXor;
  if (logic) {
    s.add_constant("bool", {in("x", v.bools({2, 3})), in("other", v.bools({2, 3}))});
    s.add_constant("bool_broadcast", {in("x", v.bools({2, 1, 3})), in("other", v.bools({4, 1}))});
    s.add_constant("float", {in("x", v.grid({2, 3}, -1, 1)), in("other", v.grid({2, 3}, -1, 1))});
    s.add_constant("int64_bool", {in("x", v.ints({2, 3}, -1, 1)), in("other", v.bools({3}))});
    s.add_constant("rank0", {in("x", v.grid({2, 3}, -1, 1)), in("other", v.bools({}))});
    s.add_constant("size0", {in("x", v.bools({0, 3})), in("other", v.bools({3}))});
    return;
  }
  // eq, ne, lt, le, gt, ge: integer-valued floats, so that ties occur.
  s.add_constant("2x3", {in("x", v.grid({2, 3}, -1, 1)), in("other", v.grid({2, 3}, -1, 1))});
  s.add_constant("broadcast_2x1x3_4x1",
                 {in("x", v.grid({2, 1, 3}, -1, 1)), in("other", v.grid({4, 1}, -1, 1))});
  s.add_constant("rank0_other", {in("x", v.grid({2, 3}, -1, 1)), in("other", v.grid({}, -1, 1))});
  s.add_constant("rank0_both", {in("x", v.grid({}, -1, 1)), in("other", v.grid({}, -1, 1))});
  s.add_constant("size0", {in("x", v.uniform({0, 3})), in("other", v.uniform({3}))});
  s.add_constant("fractional", {in("x", v.uniform({2, 3})), in("other", v.uniform({2, 3}))});
  s.add_constant("int64", {in("x", v.ints({2, 3}, -1, 1)), in("other", v.ints({2, 3}, -1, 1))});
  s.add_constant("int64_float", {in("x", v.ints({2, 3}, -1, 1)), in("other", v.grid({3}, -1, 1))});
  s.add_constant("int32_int64",
                 {in("x", v.ints({2, 3}, -1, 1, Dtype::Int32)), in("other", v.ints({3}, -1, 1))});
  s.add_constant("bool", {in("x", v.bools({2, 3})), in("other", v.bools({2, 3}))});
}

// ---- reductions ----

void reduce(Sweep& s, OpKind op) {
  auto& v = s.v;
  switch (op) {
    case OpKind::Sum:
    case OpKind::Mean: {
      s.add("all", {in("x", v.uniform({2, 3, 4}))});
      s.add("dim1", {in("x", v.uniform({2, 3}))}, attrs().set("dim", Ints{1}));
      s.add("dim-1_keepdim", {in("x", v.uniform({2, 3, 4}))},
            attrs().set("dim", Ints{-1}).set("keepdim", true));
      s.add("dims0_2", {in("x", v.uniform({2, 3, 4}))}, attrs().set("dim", Ints{0, 2}));
      s.add("dims-1_0_keepdim", {in("x", v.uniform({2, 3, 4}))},
            attrs().set("dim", Ints{-1, 0}).set("keepdim", true));
      s.add("rank0", {in("x", v.uniform({}))});
      s.add("size0_other_dim", {in("x", v.uniform({0, 3}))}, attrs().set("dim", Ints{1}));
      if (op == OpKind::Sum) {
        s.add("size0_reduced", {in("x", v.uniform({0, 3}))}, attrs().set("dim", Ints{0}));
        s.add_constant("int64", {in("x", v.ints({2, 3}, -5, 5))}, attrs().set("dim", Ints{1}));
        s.add_constant("bool", {in("x", v.bools({2, 3}))});
        s.add_constant("int32", {in("x", v.ints({2, 3}, -5, 5, Dtype::Int32))});
      }
      break;
    }
    case OpKind::Prod: {
      auto m = [&](const Shape& shape) { return v.magnitude(shape, 0.5, 1.5); };
      s.add("all", {in("x", m({2, 3}))});
      s.add("dim1", {in("x", m({2, 3}))}, attrs().set("dim", 1));
      s.add("dim-1_keepdim", {in("x", m({2, 3, 2}))}, attrs().set("dim", -1).set("keepdim", true));
      s.add("rank0", {in("x", m({}))});
      s.add("size0", {in("x", v.uniform({0, 3}))}, attrs().set("dim", 0));
      // Zeros: the gradient is the product of the other elements, not prod / x.
      s.add("one_zero", {in("x", doubles({0.5, 0.0, -1.25, 1.5, 0.75, -0.5}, {2, 3}))},
            attrs().set("dim", 1));
      s.add("two_zeros", {in("x", doubles({0.0, 0.0, -1.25, 1.5, 0.0, -0.5}, {2, 3}))},
            attrs().set("dim", 1));
      s.add("one_zero_all", {in("x", doubles({0.5, 0.0, -1.25, 1.5, 0.75, -0.5}, {2, 3}))});
      s.add_constant("int64", {in("x", v.ints({2, 3}, -3, 3))}, attrs().set("dim", 1));
      break;
    }
    case OpKind::Max:
    case OpKind::Min: {
      s.add("dim0", {in("x", v.distinct({3, 4}))}, attrs().set("dim", 0));
      s.add("dim-1_keepdim", {in("x", v.distinct({2, 3, 4}))},
            attrs().set("dim", -1).set("keepdim", true));
      s.add("dim1", {in("x", v.distinct({2, 3, 4}))}, attrs().set("dim", 1));
      s.add("rank0", {in("x", v.distinct({}))}, attrs().set("dim", 0));
      s.add("size0_other_dim", {in("x", v.uniform({0, 3}))}, attrs().set("dim", 1));
      s.add_constant("int64_ties", {in("x", v.ints({3, 4}, -1, 1))}, attrs().set("dim", 1));
      break;
    }
    case OpKind::Argmax:
    case OpKind::Argmin: {
      s.add_constant("flat", {in("x", v.distinct({2, 3}))});
      s.add_constant("dim1", {in("x", v.distinct({2, 3}))}, attrs().set("dim", 1));
      s.add_constant("dim-1_keepdim", {in("x", v.distinct({2, 3, 4}))},
                     attrs().set("dim", -1).set("keepdim", true));
      s.add_constant("dim0", {in("x", v.distinct({3, 4}))}, attrs().set("dim", 0));
      s.add_constant("rank0", {in("x", v.distinct({}))});
      s.add_constant("flat_keepdim", {in("x", v.distinct({2, 3}))}, attrs().set("keepdim", true));
      // Ties: the first occurrence.
      s.add_constant("ties", {in("x", v.grid({3, 4}, -1, 1))}, attrs().set("dim", 1));
      s.add_constant("int64_ties", {in("x", v.ints({3, 4}, -1, 1))});
      break;
    }
    case OpKind::Var:
    case OpKind::Std:
    case OpKind::VarMean:
    case OpKind::StdMean: {
      s.add("all", {in("x", v.distinct({2, 3, 4}))});
      s.add("dim1", {in("x", v.distinct({3, 4}))}, attrs().set("dim", Ints{1}));
      s.add("correction0", {in("x", v.distinct({3, 4}))},
            attrs().set("dim", Ints{0}).set("correction", 0));
      s.add("correction2", {in("x", v.distinct({3, 4}))},
            attrs().set("dim", Ints{1}).set("correction", 2));
      s.add("dims0_2_keepdim", {in("x", v.distinct({2, 3, 4}))},
            attrs().set("dim", Ints{0, 2}).set("keepdim", true));
      s.add("dim-1_keepdim", {in("x", v.distinct({2, 3, 4}))},
            attrs().set("dim", Ints{-1}).set("keepdim", true));
      break;
    }
    case OpKind::Logsumexp: {
      s.add("dim1", {in("x", v.uniform({2, 3}, -3.0, 3.0))}, attrs().set("dim", Ints{1}));
      s.add("dim-1_keepdim", {in("x", v.uniform({2, 3, 4}, -3.0, 3.0))},
            attrs().set("dim", Ints{-1}).set("keepdim", true));
      s.add("dims0_1", {in("x", v.uniform({2, 3}, -3.0, 3.0))}, attrs().set("dim", Ints{0, 1}));
      s.add("dims0_2", {in("x", v.uniform({2, 3, 4}, -3.0, 3.0))}, attrs().set("dim", Ints{0, 2}));
      s.add("rank0", {in("x", v.uniform({}))}, attrs().set("dim", Ints{0}));
      s.add("large", {in("x", v.uniform({2, 3}, 50.0, 60.0))}, attrs().set("dim", Ints{1}));
      break;
    }
    default:
      break;
  }
}

void softmax(Sweep& s) {
  auto& v = s.v;
  s.add("dim1", {in("x", v.uniform({2, 3}, -3.0, 3.0))}, attrs().set("dim", 1));
  s.add("dim0_3d", {in("x", v.uniform({2, 3, 4}, -3.0, 3.0))}, attrs().set("dim", 0));
  s.add("dim-1", {in("x", v.uniform({2, 3, 4}, -3.0, 3.0))}, attrs().set("dim", -1));
  s.add("rank0", {in("x", v.uniform({}))}, attrs().set("dim", 0));
  s.add("size0", {in("x", v.uniform({0, 3}))}, attrs().set("dim", 1));
  s.add("large", {in("x", v.uniform({2, 3}, 50.0, 60.0))}, attrs().set("dim", 1));
}

// ---- linear algebra ----

void matmul(Sweep& s, OpKind op) {
  auto& v = s.v;
  auto two = [&](const std::string& what, const Shape& a, const Shape& b) {
    s.add(what, {in("x", v.uniform(a)), in("other", v.uniform(b))});
  };
  switch (op) {
    case OpKind::Matmul:
      two("dot", {3}, {3});
      two("matrix_vector", {2, 3}, {3});
      two("vector_matrix", {3}, {3, 2});
      two("matrix_matrix", {2, 3}, {3, 4});
      two("batched_matrix", {2, 2, 3}, {3, 2});
      two("broadcast_batch", {2, 1, 2, 3}, {3, 3, 2});
      two("vector_batched", {3}, {2, 3, 2});
      two("batched_vector", {2, 2, 3}, {3});
      s.add_constant("int64", {in("x", v.ints({2, 3}, -3, 3)), in("other", v.ints({3, 2}, -3, 3))});
      break;
    case OpKind::Mm:
      two("2x3_3x4", {2, 3}, {3, 4});
      two("1x3_3x1", {1, 3}, {3, 1});
      two("inner0", {2, 0}, {0, 3});
      s.add_constant("int64", {in("x", v.ints({2, 3}, -3, 3)), in("other", v.ints({3, 2}, -3, 3))});
      break;
    case OpKind::Bmm:
      two("2x2x3_2x3x2", {2, 2, 3}, {2, 3, 2});
      two("outer", {1, 3, 1}, {1, 1, 4});
      two("batch0", {0, 2, 3}, {0, 3, 2});
      s.add_constant("int64",
                     {in("x", v.ints({2, 2, 3}, -3, 3)), in("other", v.ints({2, 3, 2}, -3, 3))});
      break;
    case OpKind::Linear:
      s.add("bias", {in("input", v.uniform({2, 3})), param("weight", v.uniform({4, 3})),
                     param("bias", v.uniform({4}))});
      s.add("no_bias", {in("input", v.uniform({2, 3})), param("weight", v.uniform({4, 3}))});
      s.add("input_3d", {in("input", v.uniform({2, 2, 3})), param("weight", v.uniform({2, 3})),
                         param("bias", v.uniform({2}))});
      s.add("input_1d", {in("input", v.uniform({3})), param("weight", v.uniform({4, 3})),
                         param("bias", v.uniform({4}))});
      break;
    case OpKind::Addmm:
      s.add("2x4", {in("x", v.uniform({2, 4})), in("mat1", v.uniform({2, 3})),
                    in("mat2", v.uniform({3, 4}))});
      s.add("broadcast_self", {in("x", v.uniform({4})), in("mat1", v.uniform({2, 3})),
                               in("mat2", v.uniform({3, 4}))});
      s.add("beta0.5_alpha2",
            {in("x", v.uniform({2, 4})), in("mat1", v.uniform({2, 3})),
             in("mat2", v.uniform({3, 4}))},
            attrs().set("beta", 0.5).set("alpha", 2.0));
      s.add("beta0",
            {in("x", v.uniform({2, 1})), in("mat1", v.uniform({2, 3})),
             in("mat2", v.uniform({3, 4}))},
            attrs().set("beta", 0.0));
      break;
    default:
      break;
  }
}

// ---- convolution ----

void conv(Sweep& s, OpKind op) {
  auto& v = s.v;
  auto three = [&](const std::string& what, const Shape& x, const Shape& w, bool bias,
                   Attributes a) {
    std::vector<Leaf> leaves{in("input", v.uniform(x)), param("weight", v.uniform(w))};
    if (bias) leaves.push_back(param("bias", v.uniform({w[0]})));
    s.add(what, leaves, std::move(a));
  };
  if (op == OpKind::Conv1d) {
    three("basic", {1, 2, 7}, {3, 2, 3}, true, attrs());
    three("no_bias", {2, 2, 5}, {2, 2, 2}, false, attrs());
    three("stride2", {1, 2, 8}, {2, 2, 3}, true, attrs().set("stride", Ints{2}));
    three("padding1", {1, 2, 5}, {2, 2, 3}, true, attrs().set("padding", Ints{1}));
    three("dilation2", {1, 2, 8}, {2, 2, 3}, true, attrs().set("dilation", Ints{2}));
    three("groups2", {1, 4, 6}, {4, 2, 3}, true, attrs().set("groups", 2));
    three("all", {2, 2, 9}, {4, 1, 2}, true,
          attrs()
              .set("stride", Ints{2})
              .set("padding", Ints{2})
              .set("dilation", Ints{3})
              .set("groups", 2));
  } else {
    three("basic", {1, 2, 5, 5}, {2, 2, 3, 3}, true, attrs());
    three("no_bias_batch2", {2, 1, 4, 4}, {2, 1, 2, 2}, false, attrs());
    three("stride2", {1, 1, 6, 6}, {2, 1, 3, 3}, true, attrs().set("stride", Ints{2}));
    three("padding1", {1, 1, 4, 4}, {2, 1, 3, 3}, true, attrs().set("padding", Ints{1}));
    three("dilation2", {1, 1, 6, 6}, {1, 1, 2, 2}, true, attrs().set("dilation", Ints{2}));
    three("groups2", {1, 4, 3, 4}, {2, 2, 2, 2}, true, attrs().set("groups", 2));
    three("asymmetric", {1, 1, 5, 6}, {2, 1, 2, 3}, true,
          attrs().set("stride", Ints{1, 2}).set("padding", Ints{1, 0}).set("dilation", Ints{2, 1}));
  }
}

// ---- pooling ----

void pool(Sweep& s, OpKind op) {
  auto& v = s.v;
  const bool max = op == OpKind::MaxPool1d || op == OpKind::MaxPool2d;
  auto x = [&](const Shape& shape) { return max ? v.distinct(shape) : v.uniform(shape); };
  auto one = [&](const std::string& what, const Shape& shape, Attributes a) {
    s.add(what, {in("x", x(shape))}, std::move(a));
  };
  switch (op) {
    case OpKind::MaxPool1d:
      one("k3", {1, 2, 7}, attrs().set("kernel_size", Ints{3}));
      one("k3_s2_p1", {1, 2, 7},
          attrs().set("kernel_size", Ints{3}).set("stride", Ints{2}).set("padding", Ints{1}));
      one("k2_dilation2", {1, 1, 8},
          attrs().set("kernel_size", Ints{2}).set("dilation", Ints{2}).set("stride", Ints{1}));
      one("ceil_mode", {1, 2, 7},
          attrs().set("kernel_size", Ints{2}).set("stride", Ints{2}).set("ceil_mode", true));
      one("ceil_mode_padding", {1, 1, 8},
          attrs()
              .set("kernel_size", Ints{3})
              .set("stride", Ints{2})
              .set("padding", Ints{1})
              .set("ceil_mode", true));
      one("unbatched", {2, 7}, attrs().set("kernel_size", Ints{3}).set("stride", Ints{2}));
      break;
    case OpKind::MaxPool2d:
      one("k2", {1, 1, 5, 5}, attrs().set("kernel_size", Ints{2}));
      one("k3_s2_p1", {1, 2, 5, 5},
          attrs().set("kernel_size", Ints{3}).set("stride", Ints{2}).set("padding", Ints{1}));
      one("k2_dilation2", {1, 1, 5, 5},
          attrs().set("kernel_size", Ints{2}).set("stride", Ints{1}).set("dilation", Ints{2}));
      one("ceil_mode", {1, 2, 5, 5},
          attrs().set("kernel_size", Ints{2}).set("stride", Ints{2}).set("ceil_mode", true));
      one("asymmetric", {1, 1, 4, 6},
          attrs()
              .set("kernel_size", Ints{2, 3})
              .set("stride", Ints{1, 2})
              .set("padding", Ints{1, 1}));
      one("unbatched", {2, 4, 4}, attrs().set("kernel_size", Ints{2}));
      break;
    case OpKind::AvgPool1d:
      one("k3", {1, 2, 7}, attrs().set("kernel_size", Ints{3}));
      one("k3_s2_p1", {1, 2, 7},
          attrs().set("kernel_size", Ints{3}).set("stride", Ints{2}).set("padding", Ints{1}));
      one("exclude_pad", {1, 2, 7},
          attrs()
              .set("kernel_size", Ints{3})
              .set("stride", Ints{2})
              .set("padding", Ints{1})
              .set("count_include_pad", false));
      one("ceil_mode", {1, 1, 7},
          attrs().set("kernel_size", Ints{2}).set("stride", Ints{2}).set("ceil_mode", true));
      one("ceil_mode_padding", {1, 1, 8},
          attrs()
              .set("kernel_size", Ints{3})
              .set("stride", Ints{2})
              .set("padding", Ints{1})
              .set("ceil_mode", true));
      one("ceil_mode_padding_exclude", {1, 1, 8},
          attrs()
              .set("kernel_size", Ints{3})
              .set("stride", Ints{2})
              .set("padding", Ints{1})
              .set("ceil_mode", true)
              .set("count_include_pad", false));
      one("unbatched", {2, 6}, attrs().set("kernel_size", Ints{2}));
      break;
    case OpKind::AvgPool2d:
      one("k2", {1, 1, 4, 4}, attrs().set("kernel_size", Ints{2}));
      one("k3_s2_p1", {1, 2, 5, 5},
          attrs().set("kernel_size", Ints{3}).set("stride", Ints{2}).set("padding", Ints{1}));
      one("exclude_pad", {1, 1, 5, 5},
          attrs()
              .set("kernel_size", Ints{3})
              .set("stride", Ints{2})
              .set("padding", Ints{1})
              .set("count_include_pad", false));
      one("ceil_mode", {1, 1, 5, 5},
          attrs().set("kernel_size", Ints{2}).set("stride", Ints{2}).set("ceil_mode", true));
      one("ceil_mode_padding", {1, 1, 6, 6},
          attrs()
              .set("kernel_size", Ints{3})
              .set("stride", Ints{2})
              .set("padding", Ints{1})
              .set("ceil_mode", true));
      one("ceil_mode_padding_exclude", {1, 1, 6, 6},
          attrs()
              .set("kernel_size", Ints{3})
              .set("stride", Ints{2})
              .set("padding", Ints{1})
              .set("ceil_mode", true)
              .set("count_include_pad", false));
      one("asymmetric", {1, 1, 4, 6},
          attrs()
              .set("kernel_size", Ints{2, 3})
              .set("stride", Ints{1, 2})
              .set("padding", Ints{1, 1}));
      one("unbatched", {2, 4, 4}, attrs().set("kernel_size", Ints{2}));
      break;
    case OpKind::AdaptiveAvgPool2d:
      one("divisible", {1, 2, 4, 4}, attrs().set("output_size", Ints{2, 2}));
      one("upsample", {1, 1, 2, 3}, attrs().set("output_size", Ints{3, 4}));
      one("uneven", {1, 1, 5, 7}, attrs().set("output_size", Ints{3, 3}));
      one("global", {2, 2, 3, 3}, attrs().set("output_size", Ints{1, 1}));
      one("unbatched", {2, 4, 5}, attrs().set("output_size", Ints{2, 3}));
      break;
    default:
      break;
  }
}

// ---- normalization, dropout, embedding ----

void norm(Sweep& s, OpKind op) {
  auto& v = s.v;
  switch (op) {
    case OpKind::BatchNorm: {
      auto bn = [&](const std::string& what, const Shape& x, bool running, Attributes a) {
        const std::int64_t c = x[1];
        std::vector<Leaf> leaves{in("input", v.uniform(x, -2.0, 2.0)),
                                 param("weight", v.uniform({c}, 0.5, 1.5)),
                                 param("bias", v.uniform({c}))};
        if (running) {
          leaves.push_back(in("running_mean", v.uniform({c}, -0.5, 0.5)));
          leaves.push_back(in("running_var", v.uniform({c}, 0.5, 1.5)));
        }
        OpCase& added = s.add(what, leaves, std::move(a));
        if (running) {
          // Buffers: PyTorch does not differentiate with respect to them.
          added.gradient_mask["running_mean"] = zeros({c}, dtype(Dtype::Float64));
          added.gradient_mask["running_var"] = zeros({c}, dtype(Dtype::Float64));
        }
      };
      bn("eval", {2, 3, 4}, true, attrs());
      bn("eval_4d", {2, 2, 2, 3}, true, attrs().set("eps", 1e-3));
      bn("eval_2d", {4, 3}, true, attrs());
      bn("train_no_running", {4, 3}, false, attrs().set("training", true));
      bn("train_4d", {2, 3, 2, 2}, false, attrs().set("training", true).set("eps", 1e-3));
      bn("train_running", {2, 3, 4}, true, attrs().set("training", true).set("momentum", 0.3));
      break;
    }
    case OpKind::LayerNorm:
      s.add("last_dim",
            {in("input", v.uniform({2, 3})), param("weight", v.uniform({3}, 0.5, 1.5)),
             param("bias", v.uniform({3}))},
            attrs().set("normalized_shape", Ints{3}));
      s.add("two_dims",
            {in("input", v.uniform({2, 3, 4})), param("weight", v.uniform({3, 4}, 0.5, 1.5)),
             param("bias", v.uniform({3, 4}))},
            attrs().set("normalized_shape", Ints{3, 4}));
      s.add("no_affine", {in("input", v.uniform({3, 4}))},
            attrs().set("normalized_shape", Ints{4}));
      s.add("eps1e-3",
            {in("input", v.uniform({2, 2, 3})), param("weight", v.uniform({3}, 0.5, 1.5)),
             param("bias", v.uniform({3}))},
            attrs().set("normalized_shape", Ints{3}).set("eps", 1e-3));
      break;
    case OpKind::Embedding:
      s.add("2x3", {in("input", v.ints({2, 3}, 0, 4)), param("weight", v.uniform({5, 4}))});
      s.add("1d_repeats",
            {in("input", int64s({3, 0, 3, 1}, {4})), param("weight", v.uniform({5, 3}))});
      s.add("rank0", {in("input", int64s({2}, {})), param("weight", v.uniform({4, 3}))});
      {
        OpCase& padded = s.add(
            "padding_idx",
            {in("input", int64s({1, 0, 1, 3, 2, 1}, {2, 3})), param("weight", v.uniform({4, 3}))},
            attrs().set("padding_idx", 1));
        // The padding row gets no gradient.
        Tensor mask = ones({4, 3}, dtype(Dtype::Float64));
        for (int k = 3; k < 6; ++k) mask.data<double>()[k] = 0.0;
        padded.gradient_mask["weight"] = mask;
      }
      s.add("size0", {in("input", int64s({}, {0, 2})), param("weight", v.uniform({4, 3}))});
      break;
    default:
      break;
  }
}

}  // namespace

std::uint64_t label_seed(const std::string& label) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : label) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

namespace {

// The cases of the op families written in this file.
void family_cases(Sweep& s, OpKind op) {
  const std::string_view family = ir::schema(op).family;
  if (family == "unary") {
    unary_math(s, op);
  } else if (family == "activation") {
    activation(s, op);
  } else if (family == "binary") {
    binary(s, op);
  } else if (family == "compare") {
    compare(s, op);
  } else if (family == "reduce") {
    reduce(s, op);
  } else if (family == "softmax") {
    softmax(s);
  } else if (family == "matmul") {
    matmul(s, op);
  } else if (family == "conv") {
    conv(s, op);
  } else if (family == "pool") {
    pool(s, op);
  } else if (family == "norm") {
    norm(s, op);
  } else {
    data_movement_cases(s, op, family);  // op_cases_data_movement.cpp
  }
}

}  // namespace

std::vector<OpCase> op_cases(OpKind op, Dtype float_dtype) {
  Sweep s(op, float_dtype);
  // op_cases_math.cpp, op_cases_order.cpp, op_cases_accumulate.cpp, op_cases_pool3d.cpp,
  // op_cases_distance.cpp, op_cases_fold.cpp, op_cases_pointwise.cpp, op_cases_products.cpp,
  // op_cases_scans_losses.cpp, op_cases_adaptive_max.cpp and op_cases_layers.cpp first
  if (!math_cases(s, op) && !order_cases(s, op) && !accumulate_cases(s, op) &&
      !pool3d_cases(s, op) && !distance_cases(s, op) && !fold_cases(s, op) &&
      !pointwise_cases(s, op) && !product_cases(s, op) && !scan_loss_cases(s, op) &&
      !adaptive_max_cases(s, op) && !layer_cases(s, op) && !random_cases(s, op)) {
    family_cases(s, op);
  }
  edge_cases(s, op);
  return s.take();
}

std::vector<OpKind> ops_without_cases() {
  std::vector<OpKind> missing;
  for (OpKind op : ir::kAllOps) {
    if (op_cases(op, Dtype::Float64).empty()) missing.push_back(op);
  }
  return missing;
}

Mismatch compare_tensors(const Tensor& got, const Tensor& expected, double rtol, double atol,
                         bool compare_dtypes) {
  Mismatch m;
  std::ostringstream out;
  if (!got.defined() || !expected.defined()) {
    m.ok = got.defined() == expected.defined();
    if (!m.ok)
      m.message = got.defined() ? "expected an undefined tensor" : "got an undefined tensor";
    return m;
  }
  if (got.sizes() != expected.sizes()) {
    out << "shape " << shape_str(got.sizes()) << " vs expected " << shape_str(expected.sizes());
    m.ok = false;
    m.message = out.str();
    return m;
  }
  if (compare_dtypes && got.dtype() != expected.dtype()) {
    out << "dtype " << dtype_name(got.dtype()) << " vs expected " << dtype_name(expected.dtype());
    m.ok = false;
    m.message = out.str();
    return m;
  }
  const std::vector<double> g = got.to_vector<double>();
  const std::vector<double> e = expected.to_vector<double>();
  const bool exact = !got.is_floating_point() || !expected.is_floating_point();
  double scale = 0.0;
  for (double x : e) {
    if (std::isfinite(x)) scale = std::max(scale, std::fabs(x));
  }
  const double abs_tol = atol * (1.0 + scale);
  std::size_t worst = 0;
  double worst_excess = 0.0;
  for (std::size_t i = 0; i < e.size(); ++i) {
    double err = 0.0;
    bool bad = false;
    if (std::isnan(e[i]) || std::isnan(g[i])) {
      bad = std::isnan(e[i]) != std::isnan(g[i]);
      err = bad ? INFINITY : 0.0;
    } else if (std::isinf(e[i]) || std::isinf(g[i])) {
      bad = e[i] != g[i];
      err = bad ? INFINITY : 0.0;
    } else {
      err = std::fabs(g[i] - e[i]);
      bad = exact ? err != 0.0 : err > abs_tol + rtol * std::fabs(e[i]);
    }
    m.max_error = std::max(m.max_error, err);
    if (bad) {
      const double excess = err - (exact ? 0.0 : abs_tol + rtol * std::fabs(e[i]));
      if (m.ok || excess > worst_excess) {
        worst = i;
        worst_excess = excess;
      }
      m.ok = false;
    }
  }
  if (!m.ok) {
    out.precision(9);
    out << "max error " << m.max_error << "; worst element " << worst << ": got " << g[worst]
        << ", expected " << e[worst] << " (tolerance "
        << (exact ? 0.0 : abs_tol + rtol * std::fabs(e[worst])) << ")";
    m.message = out.str();
  }
  return m;
}

}  // namespace weft::testing
