// The op sweep's cases of the elementwise math of the Core ATen opset: rounding and special
// functions (trunc, frac, log1p, expm1, log10, exp2, asinh, acosh, atanh, erfinv, lgamma, digamma,
// isnan, isinf, isfinite, signbit, square, erfc, sinc, deg2rad, rad2deg), the piecewise and
// composite activations (hardswish, hardsigmoid, relu6, mish, selu, celu, softsign, logsigmoid,
// tanhshrink, threshold, hardshrink, softshrink) and the two-argument math (atan2, hypot,
// logaddexp, fmod, remainder), and the bitwise ops of integers and bools. Values stay inside each
// op's smooth domain and away from its kinks and jumps; the edge cases put them on them.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "support/op_case_sweep.h"

namespace weft::testing::sweep {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

const std::vector<double> kIntegers = {-4, -3, -2, -1, 0, 1, 2, 3, 4};

// The shapes every elementwise op gets: a matrix, a scalar, an empty tensor, a 3-d tensor.
void shapes(Sweep& s, const std::string& prefix, const std::function<Tensor(const Shape&)>& draw,
            const Attributes& a = {}, bool differentiable = true) {
  for (const auto& [what, shape] : std::vector<std::pair<std::string, Shape>>{
           {"2x3", {2, 3}}, {"rank0", {}}, {"size0", {0, 3}}, {"2x1x5", {2, 1, 5}}}) {
    s.add(prefix + what, {in("x", draw(shape))}, a).differentiable = differentiable;
  }
}

bool unary(Sweep& s, OpKind op) {
  auto& v = s.v;
  auto uniform = [&](double lo, double hi) {
    return [&v, lo, hi](const Shape& shape) { return v.uniform(shape, lo, hi); };
  };
  auto away_from_integers = [&v](const Shape& shape) {
    return v.away(shape, -3.5, 3.5, kIntegers, 0.05);
  };
  // Integer inputs: trunc keeps the dtype, the real functions promote to float32.
  auto ints = [&](std::int64_t lo, std::int64_t hi) {
    s.add_constant("int64", {in("x", v.ints({2, 3}, lo, hi))});
  };
  switch (op) {
    case OpKind::Trunc:
      shapes(s, "", away_from_integers, {}, false);
      s.add_constant("integers", {in("x", doubles({-2.0, -1.0, 0.0, 1.0, 2.0, 3.0}, {2, 3}))});
      ints(-5, 5);
      return true;
    case OpKind::Frac:
      shapes(s, "", away_from_integers);
      add_convention(s, "integers", {in("x", doubles({-2.0, -1.0, 0.0, 1.0, 2.0, 3.0}, {2, 3}))});
      return true;
    case OpKind::Log1p:
      shapes(s, "", uniform(-0.9, 3.0));
      ints(0, 5);
      add_convention(s, "at_minus_one", {in("x", doubles({-1.0, 0.0, 1.0}, {3}))});
      return true;
    case OpKind::Expm1:
    case OpKind::Exp2:
    case OpKind::Asinh:
      shapes(s, "", uniform(-3.0, 3.0));
      ints(-3, 3);
      return true;
    case OpKind::Log10:
      shapes(s, "", uniform(0.1, 3.0));
      ints(1, 5);
      add_convention(s, "at_zero", {in("x", doubles({0.0, 1.0, 10.0}, {3}))});
      return true;
    case OpKind::Acosh:
      shapes(s, "", uniform(1.1, 4.0));
      ints(1, 5);
      add_convention(s, "at_one", {in("x", doubles({1.0, 2.0, 0.5}, {3}))});
      return true;
    case OpKind::Atanh:
    case OpKind::Erfinv:
      shapes(s, "", uniform(-0.9, 0.9));
      ints(-1, 1);
      add_convention(s, "at_one", {in("x", doubles({1.0, -1.0, 0.5, 1.5}, {4}))});
      return true;
    case OpKind::Lgamma:
    case OpKind::Digamma:
      shapes(s, "", uniform(0.3, 5.0));
      ints(1, 5);
      // Between the poles, where the reflection formula takes over.
      s.add("negative", {in("x", v.uniform({2, 3}, -2.8, -2.2))});
      // The poles (lgamma: inf; digamma: -inf at +0, inf at -0, NaN at the negative integers).
      // digamma's slope at a negative integer is whatever sin(pi x) rounds to (1e32 in double,
      // 1e15 in float): only its poles at 0 are compared.
      add_convention(s, "poles",
                     {in("x", op == OpKind::Lgamma ? doubles({0.0, -0.0, -1.0, -3.0, 1.0, 2.0}, {6})
                                                   : doubles({0.0, -0.0, 1.0, 2.0}, {4}))});
      return true;
    case OpKind::Square:
      shapes(s, "", uniform(-3.0, 3.0));
      ints(-5, 5);                                         // keeps int64
      s.add_constant("bool", {in("x", v.bools({2, 3}))});  // int64
      return true;
    case OpKind::Erfc:
    case OpKind::Deg2rad:
    case OpKind::Rad2deg:
      shapes(s, "", uniform(-3.0, 3.0));
      ints(-3, 3);
      return true;
    case OpKind::Sinc:
      // |x| >= 0.4: nearer 0 the slope is a difference that cancels, which 16-bit PyTorch
      // rounds between its kernels (the at_zero case checks 0 itself).
      shapes(s, "", [&v](const Shape& shape) { return v.magnitude(shape, 0.4, 2.5); });
      ints(-3, 3);
      // Its own value and slope at 0, and the zeros of sin(pi x) at the integers.
      s.add("at_zero_and_integers", {in("x", doubles({0.0, 1.0, -2.0, 0.5, -0.0, 3.0}, {2, 3}))});
      return true;
    case OpKind::Isfinite:
    case OpKind::Signbit:
      shapes(s, "", uniform(-2.0, 2.0), {}, false);
      // (A NaN's sign bit is not kept by every path's value transfer: the engine test has it.)
      s.add_constant("special",
                     {in("x", doubles({kNan, kInf, -kInf, 0.0, 1.5, -2.0, -0.0, 3.0}, {2, 4}))});
      ints(-3, 3);
      s.add_constant("bool", {in("x", v.bools({2, 3}))});
      return true;
    case OpKind::Isnan:
    case OpKind::Isinf:
      shapes(s, "", uniform(-2.0, 2.0), {}, false);
      s.add_constant("special",
                     {in("x", doubles({kNan, kInf, -kInf, 0.0, 1.5, -2.0, -0.0, kNan}, {2, 4}))});
      ints(-3, 3);
      s.add_constant("bool", {in("x", v.bools({2, 3}))});
      return true;
    default:
      return false;
  }
}

bool activation(Sweep& s, OpKind op) {
  auto& v = s.v;
  auto away = [&v](double lo, double hi, std::vector<double> kinks) {
    return [&v, lo, hi, kinks](const Shape& shape) { return v.away(shape, lo, hi, kinks); };
  };
  switch (op) {
    case OpKind::Hardswish:
    case OpKind::Hardsigmoid:
      shapes(s, "", away(-5.0, 5.0, {-3.0, 3.0}));
      add_convention(s, "at_kinks", {in("x", doubles({-3.0, 3.0, 0.0, -4.0, 4.0, 1.0}, {2, 3}))});
      return true;
    case OpKind::Relu6:
      shapes(s, "", away(-2.0, 8.0, {0.0, 6.0}));
      add_convention(s, "at_bounds", {in("x", doubles({0.0, 6.0, 3.0, -1.0, 7.0, 6.0}, {2, 3}))});
      return true;
    case OpKind::Selu:
      shapes(s, "", away(-3.0, 3.0, {0.0}));
      add_convention(s, "at_zero", {in("x", doubles({0.0, -1.0, 1.0}, {3}))});
      return true;
    case OpKind::Mish:
    case OpKind::Softsign:
    case OpKind::Logsigmoid:
    case OpKind::Tanhshrink:
      shapes(s, "", away(-4.0, 4.0, {}));
      s.add("large", {in("x", doubles({-30.0, -12.0, 12.0, 30.0}, {4}))});
      return true;
    case OpKind::Celu:
      shapes(s, "", away(-3.0, 3.0, {}));
      s.add("alpha0.5", {in("x", v.uniform({2, 3}, -3.0, 3.0))}, attrs().set("alpha", 0.5));
      s.add("alpha2", {in("x", v.uniform({2, 3}, -3.0, 3.0))}, attrs().set("alpha", 2.0));
      return true;
    case OpKind::Threshold: {
      const Attributes jump = attrs().set("threshold", 0.5).set("value", -1.0);
      shapes(s, "jump_", away(-3.0, 3.0, {0.5}), jump);
      s.add("relu_like", {in("x", v.away({2, 3}, -2.0, 2.0, {0.0}))},
            attrs().set("threshold", 0.0).set("value", 0.0));
      add_convention(s, "at_threshold", {in("x", doubles({0.5, 0.5, 1.0, 0.0}, {4}))}, jump);
      return true;
    }
    case OpKind::Hardshrink:
    case OpKind::Softshrink:
      shapes(s, "", away(-3.0, 3.0, {-0.5, 0.5}));
      s.add("lambd1.25", {in("x", v.away({2, 4}, -3.0, 3.0, {-1.25, 1.25}))},
            attrs().set("lambd", 1.25));
      s.add("lambd0", {in("x", v.away({2, 3}, -2.0, 2.0, {0.0}))}, attrs().set("lambd", 0.0));
      add_convention(s, "at_lambd", {in("x", doubles({-0.5, 0.5, 0.0, 1.0}, {4}))});
      return true;
    default:
      return false;
  }
}

// Dividends and divisors whose quotients stay away from integers (the remainders' jumps).
std::pair<Tensor, Tensor> quotients_away_from_integers(Values& v, const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  std::vector<double> num;
  std::vector<double> den;
  while (static_cast<std::int64_t>(num.size()) < n) {
    const double a = v.draw(-4.0, 4.0);
    const double b = v.draw(0.5, 2.0) * (num.size() % 2 == 0 ? 1.0 : -1.0);
    const double q = a / b;
    if (std::fabs(q - std::round(q)) > 0.05 && std::fabs(a) > 0.05) {
      num.push_back(a);
      den.push_back(b);
    }
  }
  return {doubles(num, shape), doubles(den, shape)};
}

bool binary_math(Sweep& s, OpKind op) {
  auto& v = s.v;
  const bool remainder = op == OpKind::Fmod || op == OpKind::Remainder;
  switch (op) {
    case OpKind::Atan2:
    case OpKind::Hypot:
    case OpKind::Logaddexp:
    case OpKind::Fmod:
    case OpKind::Remainder:
      break;
    default:
      return false;
  }
  auto pair = [&](const std::string& what, const Shape& a, const Shape& b) {
    if (remainder) {
      // Broadcasting cases draw freely: magnitudes keep the quotients mostly off integers,
      // and the same-shape cases below are checked away from every jump.
      s.add(what, {in("x", v.uniform(a, -3.0, 3.0)), in("other", v.magnitude(b, 0.7, 1.9))})
          .fd_check = false;
      return;
    }
    s.add(what, {in("x", v.magnitude(a, 0.2, 2.0)), in("other", v.magnitude(b, 0.2, 2.0))});
  };
  pair("broadcast_2x1x3_4x1", {2, 1, 3}, {4, 1});
  pair("broadcast_3_2x3", {3}, {2, 3});
  pair("rank0_other", {2, 3}, {});
  pair("rank0_both", {}, {});
  pair("size0", {0, 3}, {1, 3});
  if (remainder) {
    auto [num, den] = quotients_away_from_integers(v, {2, 4});
    s.add("2x4", {in("x", num), in("other", den)});
    auto [num3, den3] = quotients_away_from_integers(v, {3, 1, 2});
    s.add("3x1x2", {in("x", num3), in("other", den3)});
    // Integers keep their dtype; the sign follows the dividend (fmod) or the divisor.
    s.add_constant("int64",
                   {in("x", v.ints({2, 4}, -7, 7)), in("other", v.nonzero_ints({2, 4}, 3))});
    s.add_constant("int32_int64", {in("x", v.ints({2, 3}, -7, 7).to(Dtype::Int32)),
                                   in("other", v.nonzero_ints({3}, 3))});
    add_convention(s, "exact_multiples",
                   {in("x", doubles({-4.0, 3.0, 0.0, 1.5}, {4})),
                    in("other", doubles({2.0, -1.5, 1.0, 0.5}, {4}))});
    add_convention(
        s, "zero_divisor",
        {in("x", doubles({1.0, -1.0, 0.0}, {3})), in("other", doubles({0.0, 0.0, 0.0}, {3}))});
    return true;
  }
  pair("2x3", {2, 3}, {2, 3});
  if (op == OpKind::Atan2) {
    // Integers promote to float32; every quadrant and both axes.
    s.add_constant("int64",
                   {in("x", v.ints({2, 3}, -3, 3)), in("other", v.nonzero_ints({2, 3}, 3))});
    s.add("int64_float",
          {in("x", v.nonzero_ints({2, 3}, 3)), in("other", v.magnitude({3}, 0.5, 2.0))});
    add_convention(s, "axes",
                   {in("x", doubles({0.0, 1.0, 0.0, -1.0, -0.0, 2.0}, {6})),
                    in("other", doubles({1.0, 0.0, -1.0, 0.0, -1.0, -3.0}, {6}))});
  }
  if (op == OpKind::Hypot) {
    s.add("one_zero_operand",
          {in("x", doubles({0.0, 3.0, -2.0}, {3})), in("other", doubles({1.5, 0.0, 0.0}, {3}))});
    add_convention(s, "both_zero",
                   {in("x", doubles({0.0}, {1})), in("other", doubles({0.0}, {1}))});
  }
  if (op == OpKind::Logaddexp) {
    s.add("far_apart", {in("x", doubles({-40.0, 30.0, 0.0}, {3})),
                        in("other", doubles({0.0, -30.0, 80.0}, {3}))});
    s.add("equal", {in("x", doubles({1.0, -2.0}, {2})), in("other", doubles({1.0, -2.0}, {2}))});
  }
  return true;
}

}  // namespace

// bitwise_and/or/xor/not: negative integers (two's complement), int32 with int64, bool with
// int64 (promoted to int64), broadcasting, rank 0 and size 0.
bool bitwise(Sweep& s, OpKind op) {
  auto& v = s.v;
  if (op == OpKind::BitwiseNot) {
    s.add_constant("int64", {in("x", v.ints({2, 3}, -9, 9))});
    s.add_constant("int32", {in("x", v.ints({3, 2}, -9, 9, Dtype::Int32))});
    s.add_constant("bool", {in("x", v.bools({2, 3}))});
    s.add_constant("rank0", {in("x", v.ints({}, -9, 9))});
    s.add_constant("size0", {in("x", v.ints({0, 3}, -9, 9))});
    return true;
  }
  if (op != OpKind::BitwiseAnd && op != OpKind::BitwiseOr && op != OpKind::BitwiseXor) {
    return false;
  }
  s.add_constant("int64", {in("x", v.ints({2, 3}, -9, 9)), in("other", v.ints({2, 3}, -9, 9))});
  s.add_constant("broadcast",
                 {in("x", v.ints({2, 1, 3}, -9, 9)), in("other", v.ints({4, 1}, 0, 15))});
  s.add_constant("int32_int64",
                 {in("x", v.ints({2, 3}, -9, 9, Dtype::Int32)), in("other", v.ints({3}, -9, 9))});
  s.add_constant("bool", {in("x", v.bools({2, 3})), in("other", v.bools({2, 3}))});
  s.add_constant("bool_int64", {in("x", v.bools({2, 3})), in("other", v.ints({3}, -3, 3))});
  s.add_constant("rank0", {in("x", v.ints({2, 3}, -9, 9)), in("other", v.ints({}, -9, 9))});
  s.add_constant("size0", {in("x", v.ints({0, 3}, -9, 9)), in("other", v.ints({3}, -9, 9))});
  return true;
}

bool math_cases(Sweep& s, OpKind op) {
  return unary(s, op) || activation(s, op) || binary_math(s, op) || bitwise(s, op);
}

}  // namespace weft::testing::sweep
