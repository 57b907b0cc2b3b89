#include "weft/data/dataloader.h"

namespace weft::data::detail {

namespace {
// splitmix64's finalizer: spreads (seed, epoch) over all 64 bits, so nearby seeds and epochs
// give unrelated generator states.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
}  // namespace

void check_options(const DataLoaderOptions& options) {
  if (options.batch_size <= 0) {
    throw Error("batch_size should be a positive integer value, but got batch_size=" +
                std::to_string(options.batch_size));
  }
  if (options.num_workers < 0) {
    throw Error(
        "num_workers option should be non-negative; use num_workers=0 to disable "
        "worker threads, but got num_workers=" +
        std::to_string(options.num_workers));
  }
  if (options.prefetch_factor <= 0) {
    throw Error("prefetch_factor option should be a positive integer, but got prefetch_factor=" +
                std::to_string(options.prefetch_factor));
  }
}

std::vector<std::int64_t> epoch_order(std::int64_t n, const DataLoaderOptions& options,
                                      std::int64_t epoch) {
  if (!options.shuffle) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
    return order;
  }
  return permutation(n, mix(mix(options.seed) ^ static_cast<std::uint64_t>(epoch)));
}

void rethrow_with_context(const std::string& context) {
  try {
    throw;
  } catch (const std::exception& e) {
    std::throw_with_nested(Error("Caught exception in " + context + ": " + e.what()));
  } catch (...) {
    std::throw_with_nested(Error("Caught exception in " + context));
  }
}

}  // namespace weft::data::detail
