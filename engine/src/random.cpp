// Random tensors from a seeded mt19937_64: every value comes from one sequential stream, so
// results do not depend on the thread count.
#include "weft/random.h"

#include <cmath>
#include <numeric>

#include "kernels/dispatch.h"
#include "weft/autograd.h"
#include "weft/error.h"

namespace weft {

namespace {
Generator& pick(Generator* generator) {
  return generator ? *generator : default_generator();
}

template <typename Draw>
Tensor& fill_floating(Tensor& t, const char* name, Generator& gen, Draw draw) {
  autograd::check_inplace(t);
  // 16-bit floats draw in float32 and round each value.
  const Tensor target =
      t.is_contiguous() && !is_reduced_floating(t.dtype())
          ? t
          : empty(t.sizes(), dtype(is_reduced_floating(t.dtype()) ? Dtype::Float32 : t.dtype()));
  kernels::dispatch_floating(target.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = target.data<T>();
    for (std::int64_t i = 0; i < target.numel(); ++i) p[i] = static_cast<T>(draw(gen));
  });
  if (!target.is_same(t)) {
    autograd::NoGradGuard guard;
    t.copy_(target);
  }
  return t;
}
}  // namespace

double Generator::normal() {
  // 1 - u keeps the logarithm's argument in (0, 1].
  const double u1 = 1.0 - uniform();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

Generator& default_generator() {
  static Generator generator(67280421310721ULL);  // LibTorch's default seed, for familiarity
  return generator;
}

void manual_seed(std::uint64_t seed) {
  default_generator().manual_seed(seed);
}

Tensor& uniform_(Tensor& t, double low, double high, Generator* generator) {
  if (!(low <= high)) {
    throw Error("uniform_ expects to return a [from, to) range, but found from=" +
                std::to_string(low) + " > to=" + std::to_string(high));
  }
  return fill_floating(t, "uniform_", pick(generator),
                       [low, high](Generator& g) { return low + (high - low) * g.uniform(); });
}

Tensor& normal_(Tensor& t, double mean, double std, Generator* generator) {
  if (std < 0) throw Error("normal expects std >= 0.0, but found std " + std::to_string(std));
  return fill_floating(t, "normal_", pick(generator),
                       [mean, std](Generator& g) { return mean + std * g.normal(); });
}

Tensor rand(IntList shape, TensorOptions options, Generator* generator) {
  Tensor t = empty(shape, dtype(options.dtype));
  uniform_(t, 0.0, 1.0, generator);
  if (options.requires_grad) t.requires_grad_();
  return t;
}

Tensor randn(IntList shape, TensorOptions options, Generator* generator) {
  Tensor t = empty(shape, dtype(options.dtype));
  normal_(t, 0.0, 1.0, generator);
  if (options.requires_grad) t.requires_grad_();
  return t;
}

Tensor randint(std::int64_t low, std::int64_t high, IntList shape, TensorOptions options,
               Generator* generator) {
  if (low >= high) {
    throw Error("random_ expects 'from' to be less than 'to', but got from=" + std::to_string(low) +
                " >= to=" + std::to_string(high));
  }
  Generator& gen = pick(generator);
  if (is_reduced_floating(options.dtype)) {
    return randint(low, high, shape, dtype(Dtype::Float32), generator).to(options.dtype);
  }
  Tensor t = empty(shape, dtype(options.dtype));
  const auto range = static_cast<std::uint64_t>(high - low);
  kernels::dispatch(options.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    std::uniform_int_distribution<std::uint64_t> dist(0, range - 1);
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      p[i] = static_cast<T>(low + static_cast<std::int64_t>(dist(gen.engine())));
    }
  });
  return t;
}

Tensor randperm(std::int64_t n, Generator* generator) {
  if (n < 0) throw Error("randperm: n must be non-negative, got " + std::to_string(n));
  Tensor t = arange(static_cast<double>(n));
  std::int64_t* p = t.data<std::int64_t>();
  Generator& gen = pick(generator);
  // Fisher–Yates with the generator's own stream (std::shuffle's draws are unspecified).
  for (std::int64_t i = n - 1; i > 0; --i) {
    std::uniform_int_distribution<std::int64_t> dist(0, i);
    std::swap(p[i], p[dist(gen.engine())]);
  }
  return t;
}

}  // namespace weft
