#pragma once
// One thread count for both sides of a weft-vs-LibTorch benchmark.
#include <dlfcn.h>

#include <ATen/Parallel.h>

#include "weft/parallel.h"

namespace weft::bench {

// LibTorch's at::set_num_threads does not reach OpenBLAS's own pool: set it directly when
// the BLAS behind libblas.so.3 is OpenBLAS, so "1 thread" means one thread on both sides.
inline void set_threads(int threads) {
  weft::set_num_threads(threads);
  at::set_num_threads(threads);
  using SetThreads = void (*)(int);
  static const auto openblas_set_num_threads =
      reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (openblas_set_num_threads) openblas_set_num_threads(threads);
}

inline bool openblas_thread_control() {
  return dlsym(RTLD_DEFAULT, "openblas_set_num_threads") != nullptr;
}

}  // namespace weft::bench
