// The Core ATen elementwise math (ops/unary.cpp's special functions, ops/activation.cpp's
// piecewise activations, ops/binary_math.cpp): values against <cmath> and known constants,
// the remainders' sign conventions, PyTorch's derivatives on kinks and the gradients against
// finite differences. The op sweep compares every one with LibTorch besides.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "gradcheck.h"
#include "tensor_literals.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft {
namespace {

using testing::doubles;
using testing::expect_gradients_match_finite_differences;
using testing::random_tensor;

struct MathCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> reference;
  double lo, hi;  // smooth and finite in between
};

std::vector<MathCase> math_cases() {
  return {
      {"log1p", [](const Tensor& x) { return log1p(x); }, [](double v) { return std::log1p(v); },
       -0.9, 3},
      {"expm1", [](const Tensor& x) { return expm1(x); }, [](double v) { return std::expm1(v); },
       -3, 3},
      {"log10", [](const Tensor& x) { return log10(x); }, [](double v) { return std::log10(v); },
       0.1, 3},
      {"exp2", [](const Tensor& x) { return exp2(x); }, [](double v) { return std::exp2(v); }, -3,
       3},
      {"asinh", [](const Tensor& x) { return asinh(x); }, [](double v) { return std::asinh(v); },
       -3, 3},
      {"acosh", [](const Tensor& x) { return acosh(x); }, [](double v) { return std::acosh(v); },
       1.1, 4},
      {"atanh", [](const Tensor& x) { return atanh(x); }, [](double v) { return std::atanh(v); },
       -0.9, 0.9},
      {"erfinv", [](const Tensor& x) { return erfinv(x); },
       [](double v) {
         // erf's inverse by bisection: slow and sure.
         double lo = -6, hi = 6;
         for (int i = 0; i < 200; ++i) {
           const double mid = 0.5 * (lo + hi);
           (std::erf(mid) < v ? lo : hi) = mid;
         }
         return 0.5 * (lo + hi);
       },
       -0.95, 0.95},
      {"square", [](const Tensor& x) { return square(x); }, [](double v) { return v * v; }, -3, 3},
      {"erfc", [](const Tensor& x) { return erfc(x); }, [](double v) { return std::erfc(v); }, -3,
       3},
      {"sinc", [](const Tensor& x) { return sinc(x); },
       [](double v) { return std::sin(M_PI * v) / (M_PI * v); }, 0.1, 3},
      {"deg2rad", [](const Tensor& x) { return deg2rad(x); },
       [](double v) { return v * (M_PI / 180.0); }, -200, 200},
      {"rad2deg", [](const Tensor& x) { return rad2deg(x); },
       [](double v) { return v * (180.0 / M_PI); }, -4, 4},
      {"mish", [](const Tensor& x) { return mish(x); },
       [](double v) { return v * std::tanh(std::log1p(std::exp(v))); }, -4, 4},
      {"selu", [](const Tensor& x) { return selu(x); },
       [](double v) {
         return 1.0507009873554804934 * (v > 0 ? v : 1.6732632423543772848 * std::expm1(v));
       },
       -3, 3},
      {"celu", [](const Tensor& x) { return celu(x, 0.5); },
       [](double v) { return v > 0 ? v : 0.5 * std::expm1(v / 0.5); }, -3, 3},
      {"softsign", [](const Tensor& x) { return softsign(x); },
       [](double v) { return v / (1 + std::fabs(v)); }, -3, 3},
      {"logsigmoid", [](const Tensor& x) { return logsigmoid(x); },
       [](double v) { return -std::log1p(std::exp(-v)); }, -4, 4},
      {"tanhshrink", [](const Tensor& x) { return tanhshrink(x); },
       [](double v) { return v - std::tanh(v); }, -3, 3},
      {"hardswish", [](const Tensor& x) { return hardswish(x); },
       [](double v) { return v * std::min(std::max(v + 3, 0.0), 6.0) / 6; }, -2.5, 2.5},
      {"softshrink", [](const Tensor& x) { return softshrink(x, 0.5); },
       [](double v) { return v > 0.5    ? v - 0.5
                             : v < -0.5 ? v + 0.5
                                        : 0; }, 0.6, 3},
  };
}

TEST(ElementwiseMath, ValuesMatchReferenceInFloat64) {
  for (const MathCase& c : math_cases()) {
    const Tensor x = random_tensor({3, 4}, 5, c.lo, c.hi);
    const std::vector<double> in = x.to_vector<double>();
    const std::vector<double> out = c.op(x).to_vector<double>();
    for (std::size_t i = 0; i < in.size(); ++i) {
      const double expected = c.reference(in[i]);
      EXPECT_NEAR(out[i], expected, 1e-13 * (1 + std::fabs(expected))) << c.name << " at " << in[i];
    }
  }
}

TEST(ElementwiseMath, GradientsMatchFiniteDifferences) {
  for (const MathCase& c : math_cases()) {
    SCOPED_TRACE(c.name);
    auto op = c.op;
    // selu's kink at 0: keep the samples on one side of it.
    const double lo = std::string(c.name) == "selu" ? 0.1 : c.lo;
    expect_gradients_match_finite_differences(
        [op](const std::vector<Tensor>& in) { return std::vector<Tensor>{op(in[0])}; },
        {random_tensor({2, 3}, 13, lo, c.hi)});
  }
}

TEST(ElementwiseMath, ErfinvOfKnownValuesAndItsEnds) {
  const std::vector<double> got =
      erfinv(doubles({0.0, 0.5, -0.9, 0.999999, 1.0, -1.0, 1.5})).to_vector<double>();
  EXPECT_EQ(got[0], 0.0);
  EXPECT_NEAR(got[1], 0.47693627620446987338, 1e-15);
  EXPECT_NEAR(got[2], -1.1630871536766740867, 1e-15);
  EXPECT_NEAR(got[3], 3.4589107372795, 1e-9);
  EXPECT_EQ(got[4], std::numeric_limits<double>::infinity());
  EXPECT_EQ(got[5], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(got[6]));
}

TEST(ElementwiseMath, SignbitIsfiniteSquareAndSincAtTheirEdges) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor special = doubles({-0.0, 0.0, -2.0, kInf, -kInf, nan, -nan});
  EXPECT_EQ(signbit(special).to_vector<bool>(),
            (std::vector<bool>{true, false, true, false, true, false, true}));
  EXPECT_EQ(isfinite(special).to_vector<bool>(),
            (std::vector<bool>{true, true, true, false, false, false, false}));
  const Tensor ints = tensor(std::vector<std::int64_t>{-3, 0, 4});
  EXPECT_EQ(signbit(ints).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(isfinite(ints).to_vector<bool>(), (std::vector<bool>{true, true, true}));
  // square keeps an integer dtype; a bool squares as int64.
  EXPECT_EQ(square(ints).dtype(), Dtype::Int64);
  EXPECT_EQ(square(ints).to_vector<std::int64_t>(), (std::vector<std::int64_t>{9, 0, 16}));
  EXPECT_EQ(square(tensor(std::vector<bool>{true, false})).dtype(), Dtype::Int64);
  // sinc is 1 at 0 with slope 0 there; deg2rad of an integer is float32.
  Tensor x = doubles({0.0, 1.0});
  x.requires_grad_(true);
  const Tensor y = sinc(x);
  EXPECT_EQ(y.to_vector<double>()[0], 1.0);
  y.sum().backward();
  EXPECT_EQ(x.grad().to_vector<double>()[0], 0.0);
  EXPECT_NEAR(x.grad().to_vector<double>()[1], -1.0, 1e-15);  // cos(pi) * pi / pi
  EXPECT_EQ(deg2rad(ints).dtype(), Dtype::Float32);
}

TEST(ElementwiseMath, RemaindersTakeTheSignOfTheirConvention) {
  const Tensor a = doubles({5.5, -5.5, 5.5, -5.5});
  const Tensor b = doubles({2.0, 2.0, -2.0, -2.0});
  // fmod: the dividend's sign (C); remainder: the divisor's (Python's %).
  EXPECT_EQ(fmod(a, b).to_vector<double>(), (std::vector<double>{1.5, -1.5, 1.5, -1.5}));
  EXPECT_EQ(remainder(a, b).to_vector<double>(), (std::vector<double>{1.5, 0.5, -0.5, -1.5}));
  const Tensor ia = tensor(std::vector<std::int64_t>{7, -7, 7, -7});
  const Tensor ib = tensor(std::vector<std::int64_t>{3, 3, -3, -3});
  EXPECT_EQ(fmod(ia, ib).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, -1, 1, -1}));
  EXPECT_EQ(remainder(ia, ib).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 2, -2, -1}));
  EXPECT_EQ(fmod(ia, ib).dtype(), Dtype::Int64);
  EXPECT_THROW(fmod(ia, tensor(std::vector<std::int64_t>{0})), Error);
  EXPECT_TRUE(std::isnan(fmod(doubles({1.0}), doubles({0.0})).item()));
}

TEST(ElementwiseMath, TwoArgumentMathValuesAndPromotion) {
  const std::vector<double> angles =
      atan2(doubles({1.0, 1.0, -1.0, 0.0}), doubles({1.0, -1.0, -1.0, -1.0})).to_vector<double>();
  EXPECT_NEAR(angles[0], M_PI / 4, 1e-15);
  EXPECT_NEAR(angles[1], 3 * M_PI / 4, 1e-15);
  EXPECT_NEAR(angles[2], -3 * M_PI / 4, 1e-15);
  EXPECT_NEAR(angles[3], M_PI, 1e-15);
  // Integers promote to float32 in atan2; hypot and logaddexp refuse them, as PyTorch.
  EXPECT_EQ(
      atan2(tensor(std::vector<std::int64_t>{1}), tensor(std::vector<std::int64_t>{1})).dtype(),
      Dtype::Float32);
  EXPECT_THROW(hypot(tensor(std::vector<std::int64_t>{3}), tensor(std::vector<std::int64_t>{4})),
               Error);
  EXPECT_EQ(hypot(doubles({3.0}), doubles({4.0})).item(), 5.0);
  const double big = logaddexp(doubles({1000.0}), doubles({1000.0})).item();
  EXPECT_NEAR(big, 1000.0 + std::log(2.0), 1e-12);
  EXPECT_EQ(logaddexp(doubles({-INFINITY}), doubles({-INFINITY})).item(), -INFINITY);
}

TEST(ElementwiseMath, TwoArgumentGradientsMatchFiniteDifferences) {
  using Fn = Tensor (*)(const Tensor&, const Tensor&);
  for (const auto& [name, fn] : std::vector<std::pair<const char*, Fn>>{
           {"atan2", &atan2}, {"hypot", &hypot}, {"logaddexp", &logaddexp}}) {
    SCOPED_TRACE(name);
    expect_gradients_match_finite_differences(
        [fn](const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(in[0], in[1])}; },
        {random_tensor({2, 3}, 3, 0.5, 2.0), random_tensor({3}, 4, -2.0, -0.5)});
  }
}

TEST(ElementwiseMath, DerivativesOnKinksAreTorchs) {
  auto grad_at = [](std::function<Tensor(const Tensor&)> f, double v) {
    Tensor x = tensor(std::vector<double>{v});
    x.requires_grad_();
    f(x).sum().backward();
    return x.grad().item();
  };
  // hardswish: 0 below -3, x / 3 + 1/2 on [-3, 3] (both ends), 1 above.
  EXPECT_EQ(grad_at([](const Tensor& x) { return hardswish(x); }, -3.0), -0.5);
  EXPECT_EQ(grad_at([](const Tensor& x) { return hardswish(x); }, 3.0), 1.5);
  // hardsigmoid and relu6: 0 on both ends.
  EXPECT_EQ(grad_at([](const Tensor& x) { return hardsigmoid(x); }, 3.0), 0.0);
  EXPECT_EQ(grad_at([](const Tensor& x) { return relu6(x); }, 6.0), 0.0);
  EXPECT_EQ(grad_at([](const Tensor& x) { return relu6(x); }, 0.0), 0.0);
  // selu at 0: the left derivative, scale * alpha.
  EXPECT_NEAR(grad_at([](const Tensor& x) { return selu(x); }, 0.0), 1.7580993408473766, 1e-15);
  // threshold, hardshrink, softshrink: 0 on the threshold and on ±lambd.
  EXPECT_EQ(grad_at([](const Tensor& x) { return threshold(x, 0.5, -1.0); }, 0.5), 0.0);
  EXPECT_EQ(grad_at([](const Tensor& x) { return hardshrink(x, 0.5); }, 0.5), 0.0);
  EXPECT_EQ(grad_at([](const Tensor& x) { return softshrink(x, 0.5); }, -0.5), 0.0);
  // threshold's value replaces x at and below the threshold; NaN passes.
  const std::vector<double> t =
      threshold(doubles({0.5, 0.4, 0.6, NAN}), 0.5, -1.0).to_vector<double>();
  EXPECT_EQ(t[0], -1.0);
  EXPECT_EQ(t[1], -1.0);
  EXPECT_EQ(t[2], 0.6);
  EXPECT_TRUE(std::isnan(t[3]));
}

TEST(ElementwiseMath, ClassifiersAndRounding) {
  const Tensor x = doubles({NAN, INFINITY, -INFINITY, 0.0, -2.5});
  EXPECT_EQ(isnan(x).to_vector<bool>(), (std::vector<bool>{true, false, false, false, false}));
  EXPECT_EQ(isinf(x).to_vector<bool>(), (std::vector<bool>{false, true, true, false, false}));
  EXPECT_EQ(isnan(tensor(std::vector<std::int64_t>{1, 2})).dtype(), Dtype::Bool);
  EXPECT_EQ(trunc(doubles({-2.7, 2.7, -0.5})).to_vector<double>(),
            (std::vector<double>{-2.0, 2.0, -0.0}));
  EXPECT_EQ(frac(doubles({-2.75, 2.75})).to_vector<double>(), (std::vector<double>{-0.75, 0.75}));
  EXPECT_THROW(frac(tensor(std::vector<std::int64_t>{1})), Error);
}

}  // namespace
}  // namespace weft
