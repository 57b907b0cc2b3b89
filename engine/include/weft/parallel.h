#pragma once
// Intra-op parallelism: a fixed pool of threads shared by every kernel.

#include <cstdint>
#include <functional>

namespace weft {

// Number of threads kernels may use (default: 1, like LibTorch on a busy shared machine;
// the WEFT_NUM_THREADS environment variable overrides it at start-up).
int get_num_threads();
void set_num_threads(int threads);

// Calls fn(begin, end) on disjoint chunks covering [begin, end), in parallel when the range
// holds at least 2 × grain items and more than one thread is allowed. Nested calls run inline.
void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain,
                  const std::function<void(std::int64_t, std::int64_t)>& fn);

}  // namespace weft
