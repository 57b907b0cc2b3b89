#pragma once
// Seeded random numbers: a Generator object (like torch.Generator) and a process-wide
// default one that manual_seed() resets. The same seed gives the same tensors on every run.

#include <cstdint>
#include <random>

#include "weft/tensor.h"

namespace weft {

class Generator {
 public:
  explicit Generator(std::uint64_t seed = 0) : engine_(seed), seed_(seed) {}
  void manual_seed(std::uint64_t seed) {
    engine_.seed(seed);
    seed_ = seed;
  }
  std::uint64_t initial_seed() const { return seed_; }
  std::mt19937_64& engine() { return engine_; }
  // Uniform double in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // Standard normal (Box–Muller; no cached second value, so draws stay reproducible).
  double normal();

 private:
  std::mt19937_64 engine_;
  std::uint64_t seed_;
};

// The generator used when none is passed. Not thread-safe: seed and draw from one thread.
Generator& default_generator();
void manual_seed(std::uint64_t seed);

// Uniform in [0, 1) (floating dtypes).
Tensor rand(IntList shape, TensorOptions options = {}, Generator* generator = nullptr);
// Standard normal (floating dtypes).
Tensor randn(IntList shape, TensorOptions options = {}, Generator* generator = nullptr);
// Integers uniform in [low, high); int64 unless options say otherwise.
Tensor randint(std::int64_t low, std::int64_t high, IntList shape,
               TensorOptions options = {Dtype::Int64}, Generator* generator = nullptr);
// A random permutation of 0..n-1 (int64).
Tensor randperm(std::int64_t n, Generator* generator = nullptr);

// In-place fills (no autograd history; for initialisation under NoGradGuard).
Tensor& uniform_(Tensor& t, double low = 0.0, double high = 1.0, Generator* generator = nullptr);
Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0, Generator* generator = nullptr);

}  // namespace weft
