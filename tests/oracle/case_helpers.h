#pragma once
// What the oracle's case tests share: a worker of the weft under test, and uniform float32
// values (rounded from float64 draws, so the float64 reference sees the same numbers).
#include <cstdint>
#include <random>
#include <vector>

#include "weft/ir/graph.h"
#include "weft/oracle/worker.h"
#include "weft/tensor.h"

namespace weft::oracle::testing {

inline WorkerOptions worker_options(double time_limit = 20) {
  WorkerOptions options;
  options.command = {WEFT_BINARY, "worker"};
  options.time_limit_seconds = time_limit;
  return options;
}

inline Tensor uniform(const ir::Shape& shape, std::uint64_t seed, double lo = -1, double hi = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(static_cast<std::size_t>(numel_of(shape)));
  for (double& x : v) x = static_cast<float>(dist(rng));
  return from_blob(v.data(), shape, Dtype::Float64).to(Dtype::Float32);
}

}  // namespace weft::oracle::testing
