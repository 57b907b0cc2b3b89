#pragma once
// The engine's host memory: tensor storage comes from a cache of freed blocks, so that a
// training loop, which frees and allocates the same sizes every step, reuses warm pages instead
// of asking the kernel for fresh ones (page faults were ~15 % of a CNN training step). Blocks of
// 64 KiB and more are cached by exact size, up to a total (WEFT_CACHE_MB, default 256 MiB);
// smaller ones go straight to malloc, which already recycles them well.
#include <cstddef>

namespace weft {

// Bytes held in the cache right now (freed blocks waiting for reuse).
std::size_t cached_bytes();
// Returns every cached block to the system (torch.cuda.empty_cache's CPU counterpart).
void empty_cache();

namespace memory {
// `nbytes` rounded up to the block granularity, aligned for SIMD loads; never null.
void* allocate(std::size_t nbytes);
// Gives back a block from allocate() with the same size.
void release(void* data, std::size_t nbytes);
}  // namespace memory

}  // namespace weft
