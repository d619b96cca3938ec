// Output tensors of at least 1 MiB come from a cache of blocks that earlier
// outputs freed, instead of fresh pages from the system.
//
// Why: glibc serves every allocation above 32 MiB with a new mmap, and each
// of its 4 KiB pages faults on first touch. Measured on this 2-core VM: a
// fresh 256 MiB tensor took ~175-205 ms to fill once, a reused one ~35 ms, so
// a PyTorch elementwise op on 64 Mi f32 elements spends most of its time
// faulting in its output. A training loop frees and re-requests the same
// sizes every step; reusing those blocks keeps the op at memory bandwidth.
//
// Bounded: at most LEAKY_TORCH_CACHE_MB MiB (default 1024; 0 disables) sit
// idle in the cache; torch.ops.leaky.empty_cache() returns them to the system.
// The tensors are ordinary CPU tensors whose storage cannot be resized in
// place (resize_ to a larger size raises), like tensors made by from_blob.
#ifndef LEAKY_BINDINGS_TORCH_OUTPUT_CACHE_H_
#define LEAKY_BINDINGS_TORCH_OUTPUT_CACHE_H_

#include <ATen/ATen.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace leaky::torch_ops {

class OutputCache {
 public:
  static constexpr size_t kMinBytes = size_t{1} << 20;

  static OutputCache& Get() {
    // Never destroyed: tensors may be freed during static destruction.
    static OutputCache* cache = new OutputCache();
    return *cache;
  }

  // An uninitialized tensor with `like`'s sizes, strides and dtype; `like`
  // must be non-overlapping and dense.
  at::Tensor EmptyLike(const at::Tensor& like) {
    const size_t bytes = static_cast<size_t>(like.numel()) * like.element_size();
    if (bytes < kMinBytes || limit_bytes_ == 0) return at::empty_like(like);
    size_t block_bytes = 0;
    void* block = Take(bytes, &block_bytes);
    return at::from_blob(
        block, like.sizes(), like.strides(),
        [this, block_bytes](void* data) { Give(data, block_bytes); },
        like.options().memory_format(c10::nullopt));
  }

  void Clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [bytes, block] : free_) std::free(block);
    free_.clear();
    cached_bytes_ = 0;
  }

 private:
  OutputCache() {
    const char* env = std::getenv("LEAKY_TORCH_CACHE_MB");
    const long mb = env != nullptr ? std::strtol(env, nullptr, 10) : 1024;
    limit_bytes_ = mb > 0 ? static_cast<size_t>(mb) << 20 : 0;
  }

  // A cached block of at least `bytes` (wasting at most a quarter), or a new one.
  void* Take(size_t bytes, size_t* block_bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = free_.lower_bound(bytes);
      if (it != free_.end() && it->first <= bytes + bytes / 4) {
        *block_bytes = it->first;
        void* block = it->second;
        cached_bytes_ -= it->first;
        free_.erase(it);
        return block;
      }
    }
    *block_bytes = (bytes + 4095) / 4096 * 4096;
    void* block = std::aligned_alloc(64, *block_bytes);
    TORCH_CHECK(block != nullptr, "leaky: out of memory allocating ", *block_bytes, " bytes");
    return block;
  }

  void Give(void* block, size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cached_bytes_ + bytes <= limit_bytes_) {
        free_.emplace(bytes, block);
        cached_bytes_ += bytes;
        return;
      }
    }
    std::free(block);
  }

  std::mutex mutex_;
  std::multimap<size_t, void*> free_;  // block bytes -> block
  size_t cached_bytes_ = 0;
  size_t limit_bytes_ = 0;
};

}  // namespace leaky::torch_ops

#endif  // LEAKY_BINDINGS_TORCH_OUTPUT_CACHE_H_
