// Unary, activation, binary and comparison ops: values against <cmath> references, gradients
// against finite differences, and PyTorch's conventions at kinks and special values.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "gradcheck.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/parallel.h"

namespace weft {
namespace {

using testing::expect_gradients_match_finite_differences;
using testing::random_tensor;

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> reference;
  double lo, hi;  // domain where the function is smooth and finite
};

std::vector<UnaryCase> unary_cases() {
  return {
      {"neg", [](const Tensor& x) { return neg(x); }, [](double v) { return -v; }, -2, 2},
      {"abs", [](const Tensor& x) { return abs(x); }, [](double v) { return std::fabs(v); }, 0.1,
       2},
      {"exp", [](const Tensor& x) { return exp(x); }, [](double v) { return std::exp(v); }, -2, 2},
      {"log", [](const Tensor& x) { return log(x); }, [](double v) { return std::log(v); }, 0.1, 3},
      {"log2", [](const Tensor& x) { return log2(x); }, [](double v) { return std::log2(v); }, 0.1,
       3},
      {"sqrt", [](const Tensor& x) { return sqrt(x); }, [](double v) { return std::sqrt(v); }, 0.1,
       3},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x); }, [](double v) { return 1 / std::sqrt(v); },
       0.1, 3},
      {"reciprocal", [](const Tensor& x) { return reciprocal(x); }, [](double v) { return 1 / v; },
       0.2, 3},
      {"sin", [](const Tensor& x) { return sin(x); }, [](double v) { return std::sin(v); }, -3, 3},
      {"cos", [](const Tensor& x) { return cos(x); }, [](double v) { return std::cos(v); }, -3, 3},
      {"tan", [](const Tensor& x) { return tan(x); }, [](double v) { return std::tan(v); }, -1, 1},
      {"asin", [](const Tensor& x) { return asin(x); }, [](double v) { return std::asin(v); }, -0.9,
       0.9},
      {"acos", [](const Tensor& x) { return acos(x); }, [](double v) { return std::acos(v); }, -0.9,
       0.9},
      {"atan", [](const Tensor& x) { return atan(x); }, [](double v) { return std::atan(v); }, -3,
       3},
      {"sinh", [](const Tensor& x) { return sinh(x); }, [](double v) { return std::sinh(v); }, -2,
       2},
      {"cosh", [](const Tensor& x) { return cosh(x); }, [](double v) { return std::cosh(v); }, -2,
       2},
      {"tanh", [](const Tensor& x) { return tanh(x); }, [](double v) { return std::tanh(v); }, -2,
       2},
      {"erf", [](const Tensor& x) { return erf(x); }, [](double v) { return std::erf(v); }, -2, 2},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); },
       [](double v) { return 1 / (1 + std::exp(-v)); }, -4, 4},
      {"relu", [](const Tensor& x) { return relu(x); }, [](double v) { return v > 0 ? v : 0; }, -2,
       2},
      {"leaky_relu", [](const Tensor& x) { return leaky_relu(x, 0.2); },
       [](double v) { return v > 0 ? v : 0.2 * v; }, -2, 2},
      {"elu", [](const Tensor& x) { return elu(x, 1.5); },
       [](double v) { return v > 0 ? v : 1.5 * std::expm1(v); }, -2, 2},
      {"gelu", [](const Tensor& x) { return gelu(x); },
       [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }, -3, 3},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, "tanh"); },
       [](double v) {
         return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
       },
       -3, 3},
      {"silu", [](const Tensor& x) { return silu(x); },
       [](double v) { return v / (1 + std::exp(-v)); }, -3, 3},
      {"softplus", [](const Tensor& x) { return softplus(x, 2.0, 3.0); },
       [](double v) { return 2 * v > 3 ? v : std::log1p(std::exp(2 * v)) / 2; }, -3, 3},
      {"hardtanh", [](const Tensor& x) { return hardtanh(x, -0.5, 0.7); },
       [](double v) { return std::min(std::max(v, -0.5), 0.7); }, -2, 2},
      {"clamp", [](const Tensor& x) { return clamp(x, -0.3, 0.6); },
       [](double v) { return std::min(std::max(v, -0.3), 0.6); }, -2, 2},
      {"floor", [](const Tensor& x) { return floor(x); }, [](double v) { return std::floor(v); },
       -3, 3},
      {"ceil", [](const Tensor& x) { return ceil(x); }, [](double v) { return std::ceil(v); }, -3,
       3},
      {"round", [](const Tensor& x) { return round(x); },
       [](double v) { return std::nearbyint(v); }, -3, 3},
      {"sign", [](const Tensor& x) { return sign(x); },
       [](double v) { return double((0 < v) - (v < 0)); }, -3, 3},
  };
}

TEST(Elementwise, UnaryValuesMatchReferenceOnNonContiguousFloat32) {
  for (const UnaryCase& c : unary_cases()) {
    // A transposed (non-contiguous) float32 input.
    const Tensor x = random_tensor({3, 4}, 7, c.lo, c.hi).to(Dtype::Float32).t();
    const Tensor y = c.op(x);
    ASSERT_EQ(y.sizes(), (Shape{4, 3})) << c.name;
    const std::vector<float> in = x.to_vector<float>();
    const std::vector<float> out = y.to_vector<float>();
    for (std::size_t i = 0; i < in.size(); ++i) {
      const double expected = c.reference(in[i]);
      EXPECT_NEAR(out[i], expected, 1e-5 * (1 + std::fabs(expected))) << c.name << " at " << in[i];
    }
  }
}

TEST(Elementwise, UnaryGradientsMatchFiniteDifferences) {
  for (const UnaryCase& c : unary_cases()) {
    SCOPED_TRACE(c.name);
    auto op = c.op;
    // Keep away from kinks: shift samples so none is within 1e-3 of a kink at 0 or a bound.
    Tensor x = random_tensor({2, 3}, 11, c.lo, c.hi);
    expect_gradients_match_finite_differences(
        [op](const std::vector<Tensor>& in) { return std::vector<Tensor>{op(in[0])}; }, {x});
  }
}

TEST(Elementwise, UnaryOpsHandleRankZeroAndEmpty) {
  for (const UnaryCase& c : unary_cases()) {
    EXPECT_EQ(c.op(scalar_tensor(0.5)).dim(), 0) << c.name;
    EXPECT_EQ(c.op(zeros({0, 3})).sizes(), (Shape{0, 3})) << c.name;
  }
}

TEST(Elementwise, KinkConventionsMatchPyTorch) {
  auto grad_at = [](std::function<Tensor(const Tensor&)> f, double v) {
    Tensor x = tensor(std::vector<double>{v});
    x.requires_grad_();
    f(x).sum().backward();
    return x.grad().item();
  };
  EXPECT_EQ(grad_at([](const Tensor& x) { return relu(x); }, 0.0), 0.0);
  EXPECT_EQ(grad_at([](const Tensor& x) { return abs(x); }, 0.0), 0.0);
  EXPECT_EQ(grad_at([](const Tensor& x) { return leaky_relu(x, 0.1); }, 0.0), 0.1);
  EXPECT_EQ(grad_at([](const Tensor& x) { return hardtanh(x); }, 1.0), 0.0);
  EXPECT_EQ(grad_at([](const Tensor& x) { return clamp(x, -1.0, 1.0); }, 1.0), 1.0);
  EXPECT_EQ(
      grad_at([](const Tensor& x) { return maximum(x, scalar_tensor(0.0, dtype(Dtype::Float64))); },
              0.0),
      0.5);
}

TEST(Elementwise, RoundIsHalfToEven) {
  const Tensor x = tensor(std::vector<float>{0.5f, 1.5f, 2.5f, -0.5f, -1.5f});
  EXPECT_EQ(round(x).to_vector<float>(), (std::vector<float>{0, 2, 2, -0, -2}));
}

TEST(Elementwise, NanPropagatesThroughReluClampMaximum) {
  const Tensor nan = tensor(std::vector<float>{std::nanf("")});
  EXPECT_TRUE(std::isnan(relu(nan).item()));
  EXPECT_TRUE(std::isnan(clamp(nan, 0.0, 1.0).item()));
  EXPECT_TRUE(std::isnan(maximum(nan, ones({1})).item()));
  EXPECT_TRUE(std::isnan(minimum(ones({1}), nan).item()));
}

TEST(Elementwise, IntegerInputsOfRealFunctionsBecomeFloat) {
  const Tensor i = tensor(std::vector<std::int64_t>{1, 4});
  EXPECT_EQ(sqrt(i).dtype(), Dtype::Float32);
  EXPECT_EQ(sqrt(i).to_vector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(abs(i).dtype(), Dtype::Int64);
  EXPECT_EQ(floor(i).dtype(), Dtype::Int64);
  EXPECT_THROW(gelu(i), Error);
  EXPECT_THROW(neg(ones({1}, dtype(Dtype::Bool))), Error);
}

struct BinaryCase {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&)> op;
  std::function<double(double, double)> reference;
  double lo, hi;
};

std::vector<BinaryCase> binary_cases() {
  return {
      {"add", [](const Tensor& a, const Tensor& b) { return add(a, b, 2.0); },
       [](double a, double b) { return a + 2 * b; }, -2, 2},
      {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b, 0.5); },
       [](double a, double b) { return a - 0.5 * b; }, -2, 2},
      {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); },
       [](double a, double b) { return a * b; }, -2, 2},
      {"div", [](const Tensor& a, const Tensor& b) { return div(a, b); },
       [](double a, double b) { return a / b; }, 0.5, 2},
      {"pow", [](const Tensor& a, const Tensor& b) { return pow(a, b); },
       [](double a, double b) { return std::pow(a, b); }, 0.5, 2},
      {"maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); },
       [](double a, double b) { return std::max(a, b); }, -2, 2},
      {"minimum", [](const Tensor& a, const Tensor& b) { return minimum(a, b); },
       [](double a, double b) { return std::min(a, b); }, -2, 2},
  };
}

TEST(Elementwise, BinaryValuesBroadcastAndMatchReference) {
  for (const BinaryCase& c : binary_cases()) {
    const Tensor a = random_tensor({3, 1}, 3, c.lo, c.hi);
    const Tensor b = random_tensor({4}, 4, c.lo, c.hi);
    const Tensor y = c.op(a, b);
    ASSERT_EQ(y.sizes(), (Shape{3, 4})) << c.name;
    const auto av = a.to_vector<double>(), bv = b.to_vector<double>(), yv = y.to_vector<double>();
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 4; ++j) {
        EXPECT_NEAR(yv[i * 4 + j], c.reference(av[i], bv[j]), 1e-12) << c.name;
      }
    }
  }
}

TEST(Elementwise, BinaryGradientsMatchFiniteDifferencesWithBroadcasting) {
  for (const BinaryCase& c : binary_cases()) {
    SCOPED_TRACE(c.name);
    auto op = c.op;
    expect_gradients_match_finite_differences(
        [op](const std::vector<Tensor>& in) { return std::vector<Tensor>{op(in[0], in[1])}; },
        {random_tensor({2, 1, 3}, 5, c.lo, c.hi), random_tensor({4, 1}, 6, c.lo, c.hi)});
  }
}

TEST(Elementwise, WhereSelectsAndRoutesGradient) {
  const Tensor cond = tensor(std::vector<bool>{true, false, true});
  expect_gradients_match_finite_differences(
      [cond](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{where(cond, in[0], in[1])};
      },
      {random_tensor({3}, 1), random_tensor({2, 1}, 2)});
  const Tensor y = where(cond, tensor(std::vector<float>{1, 2, 3}), scalar_tensor(0.0));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 0, 3}));
  EXPECT_THROW(where(ones({3}), ones({3}), ones({3})), Error);
}

TEST(Elementwise, ComparisonsAndLogicGiveBool) {
  const Tensor a = tensor(std::vector<float>{1, 2, 3});
  const Tensor b = tensor(std::vector<std::int64_t>{2, 2, 2});
  EXPECT_EQ(lt(a, b).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(le(a, b).to_vector<bool>(), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(gt(a, b).to_vector<bool>(), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(ge(a, b).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(eq(a, b).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(ne(a, b).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  const Tensor p = tensor(std::vector<float>{0, 0, 1, 1});
  const Tensor q = tensor(std::vector<std::int64_t>{0, 3, 0, -1});
  EXPECT_EQ(logical_and(p, q).to_vector<bool>(), (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(logical_or(p, q).to_vector<bool>(), (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(logical_xor(p, q).to_vector<bool>(), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(logical_not(q).to_vector<bool>(), (std::vector<bool>{true, false, true, false}));
  const Tensor nan = tensor(std::vector<float>{std::nanf("")});
  EXPECT_FALSE(eq(nan, nan).item<bool>());
  EXPECT_TRUE(ne(nan, nan).item<bool>());
}

TEST(Elementwise, BitwiseOpsWorkOnTwosComplementAndPromote) {
  const Tensor a = tensor(std::vector<std::int64_t>{12, -1, -6, 5});
  const Tensor b = tensor(std::vector<std::int32_t>{10, 7, 3, -8});
  EXPECT_EQ(bitwise_and(a, b).to_vector<std::int64_t>(), (std::vector<std::int64_t>{8, 7, 2, 0}));
  EXPECT_EQ(bitwise_or(a, b).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{14, -1, -5, -3}));
  EXPECT_EQ(bitwise_xor(a, b).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{6, -8, -7, -3}));
  EXPECT_EQ(bitwise_and(a, b).dtype(), Dtype::Int64);
  EXPECT_EQ(bitwise_not(a).to_vector<std::int64_t>(), (std::vector<std::int64_t>{-13, 0, 5, -6}));
  const Tensor p = tensor(std::vector<bool>{false, false, true, true});
  const Tensor q = tensor(std::vector<bool>{false, true, false, true});
  EXPECT_EQ(bitwise_xor(p, q).dtype(), Dtype::Bool);
  EXPECT_EQ(bitwise_xor(p, q).to_vector<bool>(), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(bitwise_not(p).to_vector<bool>(), (std::vector<bool>{true, true, false, false}));
  // bool with int64 computes in int64: True is 1.
  EXPECT_EQ(bitwise_or(p, a).to_vector<std::int64_t>(), (std::vector<std::int64_t>{12, -1, -5, 5}));
  EXPECT_THROW(bitwise_and(tensor(std::vector<float>{1}), a), Error);
  EXPECT_THROW(bitwise_not(tensor(std::vector<float>{1})), Error);
}

TEST(Elementwise, IntegerArithmeticWrapsAndRejectsNegativePowers) {
  const Tensor big = tensor(std::vector<std::int32_t>{INT32_MAX});
  EXPECT_EQ((big + tensor(std::vector<std::int32_t>{1})).item<std::int64_t>(), INT32_MIN);
  const Tensor two = tensor(std::vector<std::int64_t>{2});
  EXPECT_EQ(pow(two, tensor(std::vector<std::int64_t>{10})).item<std::int64_t>(), 1024);
  EXPECT_THROW(pow(two, tensor(std::vector<std::int64_t>{-1})), Error);
  EXPECT_THROW(sub(ones({1}, dtype(Dtype::Bool)), ones({1}, dtype(Dtype::Bool))), Error);
}

TEST(Elementwise, LargeContiguousAddUsesAllRowsInParallel) {
  set_num_threads(2);
  const Tensor a = ones({300, 1000});
  const Tensor b = full({1000}, 2.0);
  const Tensor y = a + b;
  set_num_threads(1);
  EXPECT_EQ(y.sum().item(), 900000.0);
}

TEST(Elementwise, LongRowsSplitAcrossThreadsGiveTheSameResult) {
  // A contiguous tensor coalesces into one row: the loop must split inside it.
  const Tensor a = testing::random_tensor({1 << 18}, 21).to(Dtype::Float32);
  const Tensor b = testing::random_tensor({1 << 18}, 22).to(Dtype::Float32);
  const std::vector<float> serial = add(a, b).to_vector<float>();
  const double serial_sum = sum(a).item();
  set_num_threads(2);
  const std::vector<float> parallel = add(a, b).to_vector<float>();
  const double parallel_sum = sum(a).item();
  set_num_threads(1);
  EXPECT_EQ(serial, parallel);
  EXPECT_NEAR(serial_sum, parallel_sum, 1e-3);
}

}  // namespace
}  // namespace weft
