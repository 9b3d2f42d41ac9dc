// tls_pool.hpp - per-thread caches per size class over a global transfer layer of batches.
//
// Hot path: a thread takes its own cache's lock (uncontended: only a drainer ever competes for it)
// and pushes or pops a block index in a small array. Every batch_size-th operation goes to the
// transfer layer, a per-class list of whole batches under a mutex (tcmalloc's transfer cache).
//
// Rebalancing, so that no memory is stranded in caches:
//   - a thread's caches are flushed when the thread exits (thread_local RAII that never outlives
//     the pool: the pool detaches them when it is destroyed) or calls flush_thread_cache();
//   - when a class's transfer layer is empty, caches that saw no operation since the previous
//     such pass (idle caches) are drained before the pool grows;
//   - trim(), and the out-of-memory path (which trims), drain every cache;
//   - cache_budget_bytes bounds the bytes all caches together hold: over it, caches stop growing
//     and an overflow flushes the whole cache instead of half.
// A block freed on another thread simply enters that thread's cache: device memory has no host
// locality.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "core/basic_pool.hpp"
#include "core/tagged_stack.hpp"

namespace cudapool {

class tls_free_lists {
 public:
  static constexpr std::string_view name = "tls";

  explicit tls_free_lists(core::pool_core& core);
  ~tls_free_lists();
  tls_free_lists(const tls_free_lists&) = delete;
  tls_free_lists& operator=(const tls_free_lists&) = delete;

  // Thread-safe. Hot: the calling thread's cache.
  [[nodiscard]] block_index pop(core::size_class c) noexcept {
    thread_cache* tc = my_cache();
    if (tc == nullptr) [[unlikely]] return pop_transfer(c);
    cache_lock lock(*tc);
    bin& b = tc->bins[c];
    ++tc->ops;
    const std::uint32_t n = b.count.load(std::memory_order_relaxed);
    if (n == 0) [[unlikely]] {
      lock.unlock();
      return pop_slow(*tc, c);
    }
    b.count.store(n - 1, std::memory_order_relaxed);
    return b.slots[n - 1];
  }
  // Thread-safe. Hot: the calling thread's cache.
  void push(core::size_class c, block_index blk) noexcept {
    thread_cache* tc = my_cache();
    if (tc == nullptr) [[unlikely]] return push_transfer(c, {blk, blk, 1});
    cache_lock lock(*tc);
    bin& b = tc->bins[c];
    ++tc->ops;
    const std::uint32_t n = b.count.load(std::memory_order_relaxed);
    if (n == b.capacity) [[unlikely]] return overflow(*tc, c, blk);
    b.slots[n] = blk;
    b.count.store(n + 1, std::memory_order_relaxed);
  }
  // Thread-safe. Growth and reclaim batches go to the transfer layer.
  void push_chain(core::size_class c, core::block_chain chain) noexcept { push_transfer(c, chain); }
  // Thread-safe. Drains every thread's cache of class c and the transfer layer.
  [[nodiscard]] core::block_chain take_all(core::size_class c) noexcept;
  [[nodiscard]] std::size_t free_blocks(core::size_class c) const noexcept;
  [[nodiscard]] std::size_t cached_blocks(core::size_class c) const noexcept;

  // Thread-safe. Hands the calling thread's cached blocks back to the transfer layer.
  void flush_thread_cache() noexcept;
  // Thread-safe. Drains caches that had no operation since the previous call (or pass).
  void drain_idle_caches() noexcept;

 private:
  static constexpr std::uint32_t max_capacity_batches = 4;

  struct bin {
    std::atomic<std::uint32_t> count{0};  // written by the lock holder; read relaxed by stats
    std::uint32_t capacity = 0;           // adaptive: batch .. max_capacity_batches * batch
    bool underflowed = false;             // the last miss was an underflow (for capacity growth)
    block_index* slots = nullptr;         // max_capacity_batches * batch entries
  };
  struct thread_cache {
    std::atomic<bool> locked{false};  // the owner on every operation; drainers with try_lock
    std::uint64_t ops = 0;            // GUARDED_BY(locked); read by the idle pass under the lock
    std::uint64_t ops_seen = 0;       // GUARDED_BY(locked): ops at the previous idle pass
    std::unique_ptr<bin[]> bins;
    std::unique_ptr<block_index[]> storage;
  };
  struct cache_lock {
    explicit cache_lock(thread_cache& tc) noexcept : tc_(tc) {
      // Acquire pairs with the release in the previous holder's unlock.
      while (tc_.locked.exchange(true, std::memory_order_acquire)) {
        while (tc_.locked.load(std::memory_order_relaxed)) core::backoff::cpu_relax();
      }
    }
    cache_lock(const cache_lock&) = delete;
    cache_lock& operator=(const cache_lock&) = delete;
    ~cache_lock() {
      if (held_) unlock();
    }
    void unlock() noexcept {
      tc_.locked.store(false, std::memory_order_release);
      held_ = false;
    }
    thread_cache& tc_;
    bool held_ = true;
  };
  // What the pool and every thread that used it share; outlives whichever goes first.
  struct shared_state {
    std::mutex mutex;
    tls_free_lists* lists = nullptr;      // GUARDED_BY(mutex); null once the pool is destroyed
    std::vector<thread_cache*> caches;    // GUARDED_BY(mutex); owned by their threads
  };
  struct alignas(64) transfer {
    mutable std::mutex mutex;
    std::vector<core::block_chain> batches;  // GUARDED_BY(mutex); each at most one batch long
    std::size_t blocks = 0;                  // GUARDED_BY(mutex)
  };
  friend struct tls_thread_registry;

  // The calling thread's cache of this pool: a one-entry thread_local shortcut (trivial, so its
  // access needs no initialisation guard), else the thread's registry.
  thread_cache* my_cache() noexcept {
    if (last_.pool == id_) [[likely]] return last_.cache;
    return register_thread();
  }
  struct last_used {
    std::uint64_t pool;
    thread_cache* cache;
  };
  static inline thread_local last_used last_{0, nullptr};
  [[gnu::noinline]] thread_cache* register_thread() noexcept;
  [[gnu::noinline]] block_index pop_slow(thread_cache& tc, core::size_class c) noexcept;
  block_index refill_locked(thread_cache& tc, core::size_class c) noexcept;
  [[gnu::noinline]] void overflow(thread_cache& tc, core::size_class c, block_index blk) noexcept;
  block_index pop_transfer(core::size_class c) noexcept;
  void push_transfer(core::size_class c, core::block_chain chain) noexcept;
  // Moves up to n blocks from the top of a bin into a chain. Caller holds the cache lock.
  core::block_chain take_from_bin(bin& b, std::uint32_t n) noexcept;
  void flush_locked(thread_cache& tc) noexcept;
  thread_cache* new_cache() const;

  core::block_table& blocks_;
  const std::size_t class_count_;
  std::vector<std::uint32_t> batch_;  // per class: clamp(64 KiB / block bytes, 2, 32)
  std::vector<std::size_t> block_bytes_;
  const std::size_t cache_budget_;
  // Sum over all caches of capacity x block bytes: a bound on what caches can hold, changed only
  // on slow paths (capacity growth, drains).
  std::atomic<std::size_t> cache_capacity_bytes_{0};
  const std::uint64_t id_;                    // process-unique, never reused: the thread_local key
  std::unique_ptr<transfer[]> transfer_;
  std::shared_ptr<shared_state> shared_;
};

using tls_pool = basic_pool<tls_free_lists>;

}  // namespace cudapool
