// Random draws: the dropouts, rrelu in training, and the sampling ops. Each draws from a
// weft::Generator (weft/random.h) seeded with the op's `seed`, in row-major order, so that a graph
// computes the same values on every run, and the float64 reference and the float32 engine draw the
// same numbers. PyTorch's generators draw others: the oracle judges what depends on a draw by
// shape, type, range and repeatability under one seed (weft/oracle/random_judging.h), never by
// value. The dropouts and rrelu multiply by a noise tensor drawn without a gradient, so autograd
// gives their derivatives; the samplers are not differentiable.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "traced.h"
#include "weft/autograd.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/random.h"

namespace weft {

namespace {

void check_probability(double p) {
  if (!(p >= 0.0 && p <= 1.0)) {
    std::ostringstream message;
    message << "dropout probability has to be between 0 and 1, but got " << p;
    throw Error(message.str());
  }
}

void check_floating(const Tensor& x, const char* kernel) {
  if (!x.is_floating_point()) {
    throw Error(std::string("\"") + kernel + "\" not implemented for '" +
                torch_scalar_type_name(x.dtype()) + "'");
  }
}

// The significand bits of a floating type: a uniform draw of that many bits is exactly
// representable in it, so U[0, 1) never rounds up to 1 (weft::rand draws 53 bits and rounds
// them to the type, which can reach 1 in float32 and the 16-bit types).
int significand_bits(Dtype dtype) {
  switch (dtype) {
    case Dtype::Float16:
      return 11;
    case Dtype::BFloat16:
      return 8;
    case Dtype::Float32:
      return 24;
    default:
      return 53;
  }
}

double uniform_of_type(Generator& gen, Dtype dtype) {
  const int bits = significand_bits(dtype);
  return static_cast<double>(gen.engine()() >> (64 - bits)) * std::ldexp(1.0, -bits);
}

// The drawn values as a tensor of `shape` and `dtype`, outside autograd.
Tensor drawn(const std::vector<double>& values, IntList shape, Dtype dtype) {
  autograd::NoGradGuard guard;
  return tensor(values).reshape(shape).to(dtype);  // tensor(values, {}) would be 1-D
}

// One keep (1) or drop (0) per element of `shape`: 1 with probability 1 - p.
std::vector<double> keep_mask(IntList shape, double p, std::uint64_t seed) {
  Generator gen(seed);
  std::vector<double> mask(static_cast<std::size_t>(numel_of(shape)));
  for (double& v : mask) v = gen.uniform() < 1.0 - p ? 1.0 : 0.0;
  return mask;
}

// ATen's make_feature_noise: one draw per (N, C), broadcast over the remaining dims.
std::vector<std::int64_t> feature_noise_shape(const Tensor& x) {
  if (x.dim() < 2) throw Error("Feature dropout requires at least 2 dimensions in the input");
  std::vector<std::int64_t> shape(static_cast<std::size_t>(x.dim()), 1);
  shape[0] = x.size(0);
  shape[1] = x.size(1);
  return shape;
}

// ATen's _dropout_impl: x * mask / (1 - p), or for the alpha variants
// a * (x * mask + alpha' * (1 - mask)) + b with SELU's saturation alpha' = -alpha * scale.
Tensor dropout_like(const Tensor& x, double p, bool training, std::uint64_t seed, bool feature,
                    bool alpha) {
  check_probability(p);
  if (!training || p == 0.0 || x.numel() == 0) return x;
  if (p == 1.0) return mul(x, scalar_tensor(0.0, dtype(x.dtype())));  // NaN stays NaN, as x * 0
  check_floating(x, "bernoulli_scalar_cpu_");
  const std::vector<std::int64_t> shape =
      feature ? feature_noise_shape(x) : std::vector<std::int64_t>(x.sizes());
  const std::vector<double> mask = keep_mask(shape, p, seed);
  if (!alpha) {
    std::vector<double> noise(mask);
    for (double& v : noise) v /= 1.0 - p;
    return mul(x, drawn(noise, shape, x.dtype()));
  }
  constexpr double kSeluSaturation = 1.7580993408473766;  // SELU's alpha * scale
  const double a = 1.0 / std::sqrt((kSeluSaturation * kSeluSaturation * p + 1.0) * (1.0 - p));
  std::vector<double> scale(mask.size()), shift(mask.size());
  for (std::size_t i = 0; i < mask.size(); ++i) {
    scale[i] = mask[i] * a;
    shift[i] = (mask[i] - 1.0) * kSeluSaturation * a + kSeluSaturation * a * p;
  }
  return add(mul(x, drawn(scale, shape, x.dtype())), drawn(shift, shape, x.dtype()));
}

Tensor uniform_draws(const Tensor& x, std::uint64_t seed) {
  check_floating(x, "check_uniform_bounds");
  Generator gen(seed);
  std::vector<double> values(static_cast<std::size_t>(x.numel()));
  for (double& v : values) v = uniform_of_type(gen, x.dtype());
  return drawn(values, x.sizes(), x.dtype());
}

Tensor normal_draws(const Tensor& x, std::uint64_t seed) {
  check_floating(x, "normal_kernel_cpu");
  Generator gen(seed);
  return randn(x.sizes(), dtype(x.dtype()), &gen);
}

ir::Attributes dropout_attributes(double p, bool training, std::uint64_t seed) {
  return ir::Attributes()
      .set("p", p)
      .set("training", training)
      .set("seed", static_cast<std::int64_t>(seed));
}

}  // namespace

Tensor dropout(const Tensor& x, double p, bool training, std::uint64_t seed) {
  WEFT_TRACE_OP(Dropout, (x), dropout_attributes(p, training, seed), dropout(x, p, training, seed));
  return dropout_like(x, p, training, seed, false, false);
}

Tensor feature_dropout(const Tensor& x, double p, bool training, std::uint64_t seed) {
  WEFT_TRACE_OP(FeatureDropout, (x), dropout_attributes(p, training, seed),
                feature_dropout(x, p, training, seed));
  return dropout_like(x, p, training, seed, true, false);
}

Tensor alpha_dropout(const Tensor& x, double p, bool training, std::uint64_t seed) {
  WEFT_TRACE_OP(AlphaDropout, (x), dropout_attributes(p, training, seed),
                alpha_dropout(x, p, training, seed));
  return dropout_like(x, p, training, seed, false, true);
}

Tensor feature_alpha_dropout(const Tensor& x, double p, bool training, std::uint64_t seed) {
  WEFT_TRACE_OP(FeatureAlphaDropout, (x), dropout_attributes(p, training, seed),
                feature_alpha_dropout(x, p, training, seed));
  return dropout_like(x, p, training, seed, true, true);
}

Tensor rrelu(const Tensor& x, double lower, double upper, bool training, std::uint64_t seed) {
  WEFT_TRACE_OP(Rrelu, (x),
                ir::Attributes()
                    .set("lower", lower)
                    .set("upper", upper)
                    .set("training", training)
                    .set("seed", static_cast<std::int64_t>(seed)),
                rrelu(x, lower, upper, training, seed));
  if (!(lower <= upper)) {
    throw Error("Lower bound should be less than or equal to the upper bound");
  }
  if (!training) return leaky_relu(x, (lower + upper) / 2);
  check_floating(x, "rrelu_with_noise_out_cpu");
  // ATen's _rrelu_with_noise_train: a slope from U(lower, upper) where x <= 0, 1 elsewhere;
  // the gradient is the slope (the noise ATen saves).
  Generator gen(seed);
  std::vector<double> slopes;
  {
    autograd::NoGradGuard guard;
    slopes = x.to(Dtype::Float64).contiguous().to_vector<double>();
  }
  for (double& v : slopes) {
    const double r = lower + (upper - lower) * gen.uniform();
    v = v <= 0.0 ? r : 1.0;  // NaN: slope 1, NaN stays NaN
  }
  return mul(x, drawn(slopes, x.sizes(), x.dtype()));
}

Tensor rand_like(const Tensor& x, std::uint64_t seed) {
  WEFT_TRACE_OP(RandLike, (x), ir::Attributes().set("seed", static_cast<std::int64_t>(seed)),
                rand_like(x, seed));
  return uniform_draws(x, seed);
}

Tensor rand(const Tensor& shape_of, std::uint64_t seed) {
  WEFT_TRACE_OP(Rand, (shape_of), ir::Attributes().set("seed", static_cast<std::int64_t>(seed)),
                rand(shape_of, seed));
  return uniform_draws(shape_of, seed);
}

Tensor randn_like(const Tensor& x, std::uint64_t seed) {
  WEFT_TRACE_OP(RandnLike, (x), ir::Attributes().set("seed", static_cast<std::int64_t>(seed)),
                randn_like(x, seed));
  return normal_draws(x, seed);
}

Tensor randn(const Tensor& shape_of, std::uint64_t seed) {
  WEFT_TRACE_OP(Randn, (shape_of), ir::Attributes().set("seed", static_cast<std::int64_t>(seed)),
                randn(shape_of, seed));
  return normal_draws(shape_of, seed);
}

Tensor randint_like(const Tensor& x, std::int64_t low, std::int64_t high, std::uint64_t seed) {
  WEFT_TRACE_OP(RandintLike, (x),
                ir::Attributes()
                    .set("low", low)
                    .set("high", high)
                    .set("seed", static_cast<std::int64_t>(seed)),
                randint_like(x, low, high, seed));
  if (x.dtype() == Dtype::Bool && (low < 0 || high > 2)) {
    throw Error("random_ expects 'from' and 'to' to be within the range of the bool type");
  }
  Generator gen(seed);
  return randint(low, high, x.sizes(), dtype(x.dtype()), &gen);  // checks low < high
}

Tensor bernoulli(const Tensor& p, std::uint64_t seed) {
  WEFT_TRACE_OP(Bernoulli, (p), ir::Attributes().set("seed", static_cast<std::int64_t>(seed)),
                bernoulli(p, seed));
  check_floating(p, "bernoulli_tensor_cpu_p_");
  std::vector<double> values;
  {
    autograd::NoGradGuard guard;
    values = p.to(Dtype::Float64).contiguous().to_vector<double>();
  }
  Generator gen(seed);
  for (double& v : values) {
    if (!(v >= 0.0 && v <= 1.0))
      throw Error("Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
    v = gen.uniform() < v ? 1.0 : 0.0;
  }
  Tensor out = drawn(values, p.sizes(), p.dtype());
  // PyTorch's derivative of bernoulli's probabilities is zero (not undefined).
  autograd::record_function("BernoulliBackward0", {p}, {out}, {p},
                            [](const std::vector<Tensor>&, const std::vector<Tensor>& saved) {
                              return std::vector<Tensor>{zeros_like(saved[0])};
                            });
  return out;
}

Tensor bernoulli(const Tensor& x, double p, std::uint64_t seed) {
  WEFT_TRACE_OP(Bernoulli, (x),
                ir::Attributes().set("p", p).set("seed", static_cast<std::int64_t>(seed)),
                bernoulli(x, p, seed));
  if (!(p >= 0.0 && p <= 1.0)) {
    std::ostringstream message;
    message << "bernoulli_ expects p to be in [0, 1], but got p=" << p;
    throw Error(message.str());
  }
  check_floating(x, "bernoulli_scalar_cpu_");
  Generator gen(seed);
  std::vector<double> values(static_cast<std::size_t>(x.numel()));
  for (double& v : values) v = gen.uniform() < p ? 1.0 : 0.0;
  Tensor out = drawn(values, x.sizes(), x.dtype());
  autograd::record_function("BernoulliBackward1", {x}, {out}, {x},
                            [](const std::vector<Tensor>&, const std::vector<Tensor>& saved) {
                              return std::vector<Tensor>{zeros_like(saved[0])};
                            });
  return out;
}

Tensor randperm(std::int64_t n, std::uint64_t seed) {
  Generator gen(seed);
  return randperm(n, &gen);
}

Tensor randperm(const Tensor& size_of, std::int64_t dim, std::uint64_t seed) {
  WEFT_TRACE_OP(Randperm, (size_of),
                ir::Attributes().set("dim", dim).set("seed", static_cast<std::int64_t>(seed)),
                randperm(size_of, dim, seed));
  return randperm(size_of.size(dim), seed);
}

}  // namespace weft
