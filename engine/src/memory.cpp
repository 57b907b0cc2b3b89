// A size-keyed cache of freed storage blocks (see weft/memory.h). One mutex guards it: tensors
// are made and freed from DataLoader workers and parallel kernels alike.
#include "weft/memory.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/error.h"

namespace weft {

namespace {

constexpr std::size_t kAlignment = 64;
constexpr std::size_t kMinCached = 64 * 1024;

std::size_t cache_limit() {
  if (const char* env = std::getenv("WEFT_CACHE_MB")) {
    const long mb = std::atol(env);
    if (mb >= 0) return static_cast<std::size_t>(mb) * 1024 * 1024;
  }
  return std::size_t{256} * 1024 * 1024;
}

class BlockCache {
 public:
  void* take(std::size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = free_.find(size);
    if (found == free_.end() || found->second.empty()) return nullptr;
    void* block = found->second.back();
    found->second.pop_back();
    cached_ -= size;
    return block;
  }
  // Keeps `block` for reuse unless the cache would grow past its limit.
  bool keep(void* block, std::size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cached_ + size > limit_) return false;
    free_[size].push_back(block);
    cached_ += size;
    return true;
  }
  std::size_t cached() {
    std::lock_guard<std::mutex> lock(mutex_);
    return cached_;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [size, blocks] : free_) {
      for (void* block : blocks) std::free(block);
    }
    free_.clear();
    cached_ = 0;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::size_t, std::vector<void*>> free_;
  std::size_t cached_ = 0;
  const std::size_t limit_ = cache_limit();
};

// Never destroyed: storages released during static destruction still find it.
BlockCache& cache() {
  static BlockCache* instance = new BlockCache();
  return *instance;
}

std::size_t rounded(std::size_t nbytes) {
  const std::size_t n = nbytes == 0 ? 1 : nbytes;
  return (n + kAlignment - 1) / kAlignment * kAlignment;
}

}  // namespace

std::size_t cached_bytes() {
  return cache().cached();
}

void empty_cache() {
  cache().clear();
}

namespace memory {

void* allocate(std::size_t nbytes) {
  const std::size_t size = rounded(nbytes);
  if (size >= kMinCached) {
    if (void* block = cache().take(size)) return block;
  }
  void* block = std::aligned_alloc(kAlignment, size);
  if (block == nullptr) {
    // Cached blocks of other sizes may be what stands between us and success.
    empty_cache();
    block = std::aligned_alloc(kAlignment, size);
  }
  if (block == nullptr)
    throw Error("out of memory allocating " + std::to_string(nbytes) + " bytes");
  return block;
}

void release(void* data, std::size_t nbytes) {
  if (data == nullptr) return;
  const std::size_t size = rounded(nbytes);
  if (size >= kMinCached && cache().keep(data, size)) return;
  std::free(data);
}

}  // namespace memory

}  // namespace weft
