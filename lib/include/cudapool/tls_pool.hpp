// cudapool/tls_pool.hpp - per-thread caches per size class over a global transfer layer of batches.
//
// Hot path: a thread pushes or pops a block index in its own cache's small array with plain loads
// and stores (an asymmetric fence keeps drainers out, see begin_op). Every batch_size-th operation
// goes to the transfer layer of whole batches per class: a lock-free moodycamel ConcurrentQueue
// (the default), or a vector under a mutex (tcmalloc's transfer cache), pool_options::tls_transfer.
// A batch is an array of block indices moved by value, as tcmalloc's transfer cache moves arrays of
// pointers: handing one over touches none of its blocks' host entries (a chain linked through them
// would cost the receiving thread one cache miss per block, each on a line the sender wrote).
//
// Rebalancing, so that no memory is stranded in caches:
//   - a thread's caches are flushed when the thread exits (thread_local RAII that never outlives
//     the pool: the pool detaches them when it is destroyed) or calls flush_thread_cache();
//   - before the pool grows (the transfer layer is empty and the pool's slow path reclaimed
//     nothing), caches that saw no operation since the previous such pass (idle caches) are
//     drained;
//   - trim(), and the out-of-memory path (which trims), drain every cache;
//   - cache_budget_bytes bounds the bytes all caches together hold: over it, caches stop growing
//     and an overflow flushes the whole cache instead of half.
// A block freed on another thread simply enters that thread's cache: device memory has no host
// locality.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include <cudapool/detail/core/basic_pool.hpp>
#include <cudapool/detail/core/asymmetric_fence.hpp>
#include <cudapool/detail/core/block_table.hpp>
#include <cudapool/detail/core/owner_handshake.hpp>
#include <cudapool/detail/core/tagged_stack.hpp>

namespace cudapool {

class tls_free_lists {
 public:
  static constexpr std::string_view name = "tls";

  explicit tls_free_lists(core::pool_core& core);
  ~tls_free_lists();
  tls_free_lists(const tls_free_lists&) = delete;
  tls_free_lists& operator=(const tls_free_lists&) = delete;

  // Thread-safe. Hot: the calling thread's cache, with no atomic read-modify-write. A cache slot
  // holds the block's address too: allocate returns it without a table walk. index no_block: none.
  [[nodiscard, gnu::always_inline]] core::free_block take(core::size_class c) noexcept {
    if (last_.pool != id_) [[unlikely]] return pop_first(c);
    thread_cache* tc = last_.cache;
    if (!begin_op(*tc)) [[unlikely]] return pop_guarded(*tc, c);
    bin& b = last_.bins[c];  // == tc->bins[c], one dependent load shorter
    ++tc->ops;
    const std::uint32_t n = b.count.load(std::memory_order_relaxed);
    if (n == 0) [[unlikely]] return refill_in_op(*tc, c);
    b.count.store(n - 1, std::memory_order_relaxed);
    const core::free_block blk = b.slots[n - 1];
    end_op(*tc);
    return blk;
  }
  // Thread-safe. Hot: the calling thread's cache, with no atomic read-modify-write.
  [[gnu::always_inline]] void put(core::size_class c, core::free_block blk) noexcept {
    if (last_.pool != id_) [[unlikely]] return push_first(c, blk);
    thread_cache* tc = last_.cache;
    if (!begin_op(*tc)) [[unlikely]] return push_guarded(*tc, c, blk);
    bin& b = last_.bins[c];  // == tc->bins[c], one dependent load shorter
    ++tc->ops;
    const std::uint32_t n = b.count.load(std::memory_order_relaxed);
    if (n == b.capacity) [[unlikely]] return overflow_in_op(*tc, c, blk);
    b.slots[n] = blk;
    b.count.store(n + 1, std::memory_order_relaxed);
    end_op(*tc);
  }
  // The FreeLists contract's pop and push (slow paths of basic_pool, debug frees).
  [[nodiscard]] block_index pop(core::size_class c) noexcept { return take(c).index; }
  void push(core::size_class c, block_index blk) noexcept { put(c, {blocks_[blk].address(), blk}); }
  // Thread-safe. Growth's batches go to the transfer layer (reclaim's: push_released).
  void push_chain(core::size_class c, core::block_chain chain) noexcept { push_chain_transfer(c, chain); }
  // Thread-safe. Blocks whose stream-ordered frees completed, released by the calling thread's
  // reclaim: one batch into its bin of c when that bin is empty after an underflow (the batch its
  // next miss would take from the transfer layer), the rest to the transfer layer.
  void push_released(core::size_class c, core::block_chain chain) noexcept;
  // Thread-safe. Drains every thread's cache of class c and the transfer layer.
  [[nodiscard]] core::block_chain take_all(core::size_class c) noexcept;
  [[nodiscard]] std::size_t free_blocks(core::size_class c) const noexcept;
  [[nodiscard]] std::size_t cached_blocks(core::size_class c) const noexcept;
  // For out_of_memory's report: what each registered thread cache holds (thread = the cache's
  // registration number, from 1).
  void holdings(oom_report& report) const;

  // Thread-safe. Hands the calling thread's cached blocks back to the transfer layer.
  void flush_thread_cache() noexcept;
  // Thread-safe. Drains caches that had no operation since the previous call (or pass); returns
  // the blocks drained.
  std::size_t drain_idle_caches() noexcept;
  // The pool's slow path, after reclaim found nothing and before the pool grows: an idle pass
  // (drain_idle_caches), at most one per millisecond. True when it gave blocks back.
  bool before_growth() noexcept;

 private:
  static constexpr std::uint32_t max_capacity_batches = 4;
  static constexpr std::uint32_t max_batch = 64;  // batch sizes: clamp(tls_batch_bytes / block bytes, 2, 64)

  // What the transfer layer holds: up to one batch of one class. A batch is made on every refill
  // from the transfer layer and every move into it, so its slots are left uninitialized (a union
  // member): with free_block's member initializers each `batch got;` was 64 slots' stores, 318
  // instructions a refill and 5% of a tls replay's (callgrind, docs/results/2026-12-05-vm-s26).
  // The first `count` slots are written before they are read.
  struct batch {
    std::uint32_t count = 0;
    union {
      core::free_block blocks[max_batch];
    };
    batch() noexcept {}  // NOLINT: leaves `blocks` uninitialized on purpose
  };

  struct bin {
    std::atomic<std::uint32_t> count{0};  // written by the lock holder; read relaxed by stats
    std::uint32_t capacity = 0;           // adaptive: batch .. max_capacity_batches * batch
    bool underflowed = false;             // the last miss was an underflow (for capacity growth)
    core::free_block* slots = nullptr;    // max_capacity_batches * batch entries
  };
  struct queue_tokens;  // defined in tls_pool.cpp (moodycamel types)
  // Who touches a cache: its owner thread on every operation (between begin_op and end_op, with
  // no lock), its owner's slow paths and drainers (other threads: idle pass, trim, the owner's
  // exit) under `mutex`. A drainer holds `mutex`, sets `drain_request`, runs the heavy side of an
  // asymmetric fence and waits for `in_op` to be 0; an owner sets `in_op`, runs the light side and
  // leaves for the mutex path if it sees `drain_request`. So the owner's fast path never overlaps a
  // drain, and costs plain loads and stores. The handshake is core/owner_handshake.hpp's, which
  // the model test (core/model/tls_cache_model.cpp) runs under Relacy.
  struct alignas(64) thread_cache {
    core::owner_handshake handshake;  // in_op (owner) and drain_request (drainer)
    std::mutex mutex;                             // owner's slow paths and drainers
    std::uint64_t ops = 0;       // operations so far (owner); read by the idle pass while it drains
    std::uint64_t ops_seen = 0;  // ops at the previous idle pass (idle pass only)
    // Per class, blocks this thread put into the transfer layer minus blocks it took out (written
    // by the owner, summed by stats): the transfer layer's count needs no line that every thread
    // writes. Folded into transfer::blocks when the cache is unregistered.
    std::unique_ptr<std::atomic<std::int64_t>[]> moved;
    std::unique_ptr<bin[]> bins;
    std::unique_ptr<core::free_block[]> storage;
    // Per class, the owner's moodycamel producer and consumer tokens (queue layer), made on first
    // use in the owner's slow paths and destroyed before the queues (pool destruction, thread
    // exit). Only the owner uses them, under `mutex`.
    std::unique_ptr<queue_tokens[]> tokens;
  };

  bool begin_op(thread_cache& tc) noexcept { return tc.handshake.begin_op(core::asymmetric_fences{asymmetric_}); }
  static void end_op(thread_cache& tc) noexcept { tc.handshake.end_op(); }
  // A drainer's hold on caches: claim() with their mutexes held, one heavy fence for all of them.
  void claim(thread_cache* const* caches, std::size_t n) noexcept;
  static void unclaim(thread_cache& tc) noexcept;
  // What the pool and every thread that used it share; outlives whichever goes first.
  struct shared_state {
    std::mutex mutex;
    tls_free_lists* lists = nullptr;      // GUARDED_BY(mutex); null once the pool is destroyed
    std::vector<thread_cache*> caches;    // GUARDED_BY(mutex); owned by their threads
  };
  // The per-class transfer layer (defined in tls_pool.cpp): whole batches between caches and the
  // core, behind a mutex or in a lock-free queue (pool_options::tls_transfer).
  struct transfer;
  friend struct tls_thread_registry;

  // The calling thread's cache of this pool: a one-entry thread_local shortcut (trivial, so its
  // access needs no initialisation guard), else the thread's registry. When it returns a cache,
  // last_ holds it and its bins (last_.pool == id_ implies a cache).
  thread_cache* my_cache() noexcept {
    if (last_.pool == id_) [[likely]] return last_.cache;
    return register_thread();
  }
  // The first operation of a thread on this pool since it used another (or ever): through the
  // registry, under the cache's lock; without a cache (out of host memory), the transfer layer.
  [[gnu::noinline]] core::free_block pop_first(core::size_class c) noexcept;
  [[gnu::noinline]] void push_first(core::size_class c, core::free_block blk) noexcept;
  struct last_used {
    std::uint64_t pool;
    thread_cache* cache;
    bin* bins;  // cache->bins.get()
  };
  static inline thread_local last_used last_{0, nullptr, nullptr};
  [[gnu::noinline]] thread_cache* register_thread() noexcept;
  [[gnu::noinline]] core::free_block pop_guarded(thread_cache& tc, core::size_class c) noexcept;
  [[gnu::noinline]] void push_guarded(thread_cache& tc, core::size_class c, core::free_block blk) noexcept;
  // The owner's refill and overflow inside its operation (begin_op): drainers wait for it, so no
  // lock is taken. Both end the operation. An empty transfer layer: no block (the pool's slow path).
  [[gnu::noinline]] core::free_block refill_in_op(thread_cache& tc, core::size_class c) noexcept;
  [[gnu::noinline]] void overflow_in_op(thread_cache& tc, core::size_class c, core::free_block blk) noexcept;
  // The *_locked functions run with exclusive access to tc: its owner inside an operation or with
  // tc.mutex held, or a drainer that claimed tc.
  core::free_block refill_locked(thread_cache& tc, core::size_class c) noexcept;
  void overflow_locked(thread_cache& tc, core::size_class c, core::free_block blk) noexcept;
  // For a thread without a cache: one block of a batch (the rest goes back), or a single block in.
  core::free_block pop_transfer(core::size_class c) noexcept;
  void push_transfer(core::size_class c, core::free_block blk) noexcept;
  // Whole batches of class c from an array of n blocks, into the transfer layer.
  // `owner`: the calling thread's own cache (under its lock), whose queue tokens are used.
  void put_blocks(core::size_class c, const core::free_block* blocks, std::size_t n,
                  thread_cache* owner = nullptr) noexcept;
  // A chain (growth, reclaim) cut into batches.
  void push_chain_transfer(core::size_class c, core::block_chain chain) noexcept;
  // One batch off the transfer layer; false when there is none.
  bool take_batch(core::size_class c, batch& out, thread_cache* owner = nullptr) noexcept;
  // The owner's tokens for class c (made on first use), or null (no owner, out of host memory).
  queue_tokens* tokens_of(thread_cache* owner, core::size_class c) noexcept;
  // Counts n blocks into (n < 0: out of) class c's transfer layer, on the owner's own count when
  // the caller is the cache's owner.
  void count_moved(transfer& t, thread_cache* owner, core::size_class c, std::int64_t n) noexcept;
  // Moves a cache's counts into the shared ones (the cache is being unregistered; shared mutex held).
  void fold_moved(thread_cache& tc) noexcept;
  // Gives the top n blocks of a bin to the transfer layer. Caller holds the cache lock.
  void give_from_bin(core::size_class c, bin& b, std::uint32_t n, thread_cache* owner = nullptr) noexcept;
  // Links the blocks of an array into `chain` (trim's take_all).
  void link(core::block_chain& chain, const core::free_block* blocks, std::size_t n) noexcept;
  void flush_locked(thread_cache& tc) noexcept;
  thread_cache* new_cache() const;

  core::block_table& blocks_;
  const std::size_t class_count_;
  std::vector<std::uint32_t> batch_;  // per class: clamp(tls_batch_bytes / block bytes, 2, max_batch)
  std::vector<std::size_t> block_bytes_;
  const std::size_t cache_budget_;
  const core::backoff_policy backoff_;  // the lock-free stack layer's
  // Sum over all caches of capacity x block bytes: a bound on what caches can hold, changed only
  // on slow paths (capacity growth, drains).
  std::atomic<std::size_t> cache_capacity_bytes_{0};
  const std::uint64_t id_;                    // process-unique, never reused: the thread_local key
  const bool asymmetric_ = core::asymmetric_fences_available();  // one fence mode for both sides
  // steady_clock ticks of the last idle pass; passes are at least a millisecond apart.
  std::atomic<std::int64_t> last_idle_pass_{0};
  static constexpr std::int64_t idle_pass_interval_ticks =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::milliseconds(1)).count();
  std::unique_ptr<transfer[]> transfer_;
  std::shared_ptr<shared_state> shared_;
};

using tls_pool = basic_pool<tls_free_lists>;

}  // namespace cudapool
