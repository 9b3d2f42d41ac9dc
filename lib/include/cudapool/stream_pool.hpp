// cudapool/stream_pool.hpp - per-stream partitions with batched event reclaim.
//
// Each stream that allocates or frees gets a partition: per-class lock-free stacks
// (core::tagged_stack) of blocks freed on that stream. A block freed on stream S is handed to the
// next allocation on S at once, with no event: S's own order makes the reuse safe. Blocks leave a
// partition only behind an event recorded on its stream. An allocation on S that finds nothing on
// S or in the shared lists, in this order:
//   - takes another partition P's blocks of its class if P's stream has run everything (a query);
//   - donates: every other partition's blocks of the class beyond its refill batch join an epoch
//     on that partition's stream (one event, no wait), reusable by all streams once it completes;
//   - grows, below the release threshold;
//   - under pressure, takes P's blocks after making S wait on an event recorded on P
//     (cudaStreamWaitEvent: a device-side dependency, no host synchronisation);
//   - retire_stream(S): the partition's blocks move to the core as one epoch (one event);
//   - trim(): after a host synchronize of the partition's stream.
// A stream's large frees wait in its epoch like every variant's; every epoch_batch stream-ordered
// frees into its partition close that epoch if it holds ranges (one event), so that its ranges are
// pending no longer than in the variants whose epochs also hold the small frees.
// Immediate frees (deallocate(p) with no stream) and reclaimed epochs go to shared per-class
// stacks that every stream may use.
//
// Partitions are keyed by the stream's unique id (cudaStreamGetId; the simulator's own), through
// a oneTBB concurrent_unordered_map, with a per-thread shortcut of the streams used last
// (core/thread_stream_cache.hpp) that retire_stream invalidates (a generation counter): a destroyed stream's handle value, reused by a new stream,
// never maps to the old partition. Call retire_stream(s) before destroying s.
//
// record_stream(p, s2): p is also used on s2. When p is freed on S, S first waits (device-side)
// for the work enqueued on s2 so far.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <oneapi/tbb/concurrent_unordered_map.h>

#include <cudapool/detail/core/basic_pool.hpp>
#include <cudapool/detail/core/recorded_streams.hpp>
#include <cudapool/detail/core/tagged_stack.hpp>
#include <cudapool/detail/core/thread_stream_cache.hpp>

namespace cudapool {

class stream_free_lists {
 public:
  static constexpr std::string_view name = "stream";

  explicit stream_free_lists(core::pool_core& core);
  ~stream_free_lists();
  stream_free_lists(const stream_free_lists&) = delete;
  stream_free_lists& operator=(const stream_free_lists&) = delete;

  // Thread-safe and lock-free (after a stream's first use): the stream's partition, then the
  // shared stack.
  [[nodiscard, gnu::always_inline]] block_index pop(core::size_class c, stream_ref s) noexcept {
    if (partition* p = find(s)) [[likely]] {
      block_index b = p->stacks[c].stack.pop(blocks_, backoff_);
      if (b == no_block) [[unlikely]] b = refill(*p, c);
      note_owner(b, p->number);
      return b;
    }
    const block_index b = shared_[c].stack.pop(blocks_, backoff_);
    note_owner(b, 0);
    return b;
  }
  // Thread-safe. A stream-ordered free: into s's partition (after s waits for recorded streams).
  void push(core::size_class c, block_index b, stream_ref s) noexcept {
    if (recorded_streams_.any()) [[unlikely]] wait_for_recorded(b, s);
    if (partition* p = find(s)) [[likely]] {
      p->stacks[c].stack.push(blocks_, b, backoff_);
      count_free(*p, s);
    } else {
      defer_or_wait({b, b, 1}, s);  // no partition could be made (host memory): via an epoch
    }
  }
  // Thread-safe. An immediate free (no pending device work anywhere).
  [[gnu::always_inline]] void push(core::size_class c, block_index b) noexcept {
    if (recorded_streams_.any()) [[unlikely]] forget_recorded(b);
    shared_[c].stack.push(blocks_, b, backoff_);
  }
  void push_chain(core::size_class c, core::block_chain chain) noexcept {
    cover_owners();  // every block enters through here first (growth): the owner table covers it
    shared_[c].stack.push_chain(blocks_, chain.head, chain.tail, backoff_);
  }
  // Thread-safe. The shared blocks of class c and, after a host synchronize of each stream that
  // holds some, every partition's blocks of class c (trim may wait; the allocation path never
  // synchronizes before it has tried a device-side steal and the pending epochs).
  [[nodiscard]] core::block_chain take_all(core::size_class c) noexcept;
  [[nodiscard]] std::size_t free_blocks(core::size_class c) const noexcept;
  [[nodiscard]] std::size_t cached_blocks(core::size_class c) const noexcept;

  // Blocks of class c from another stream's partition; returns one, the rest join s's partition.
  // steal_mode::completed (before growth): only from a partition whose stream has run everything
  // enqueued so far (a stream query, no wait, counted in stream_queries()): those blocks are free
  // for every stream.
  // steal_mode::ordered (pressure, after growth failed): from any, behind a device-side wait of s
  // on that stream (counted in stats().stream_waits), no host sync.
  [[nodiscard]] block_index steal(core::size_class c, stream_ref s, core::steal_mode mode);
  // Before s's allocation grows class c: every other partition's blocks of class c beyond its
  // refill batch join an epoch on that partition's stream (one event each, no wait), and so the
  // shared stack once the event has completed. Returns how many blocks left their partitions.
  std::size_t donate(core::size_class c, stream_ref s) noexcept;
  // Thread-safe. How many stream queries steal_mode::completed has made (pool_stats::stream_queries).
  [[nodiscard]] std::uint64_t stream_queries() const noexcept { return stream_queries_.load(std::memory_order_relaxed); }
  void record_stream(block_index b, stream_ref s);
  // The same for a large allocation (keyed by its address), and what its free does first: wait, on
  // the device, for the recorded streams (stream-ordered free on *s), or forget them (immediate).
  void record_large_stream(const void* p, stream_ref s);
  void before_large_free(const void* p, const stream_ref* s) noexcept {
    if (recorded_streams_.any()) [[unlikely]] settle_recorded_large(p, s);
  }
  void retire_stream(stream_ref s);
  // For out_of_memory's report: the free bytes of each stream's partition and the bytes in use
  // allocated on it, merged into the report's per-stream entries (the core filled in the pending
  // bytes).
  void holdings(oom_report& report) const;

 private:
  struct alignas(64) padded_stack {
    core::tagged_stack<> stack;
  };
  struct partition {
    stream_ref stream;
    std::uint64_t id = 0;
    std::uint32_t number = 0;  // 1, 2, ... in order of creation: what owner_ records
    std::unique_ptr<padded_stack[]> stacks;
    // Stream-ordered frees into the partition since the last epoch_batch of them (count_free);
    // relaxed load and store, not a read-modify-write: a count lost to two threads freeing on one
    // stream at once only delays a close. Its own line: written on every free.
    alignas(64) std::atomic<std::uint32_t> frees{0};
  };
  // Every epoch_batch stream-ordered frees on s: s's open epoch of large ranges closes
  // (epoch_table::close_epoch_of_ranges), as in the variants whose epochs hold these frees too.
  void count_free(partition& p, stream_ref s) noexcept {
    const std::uint32_t n = p.frees.load(std::memory_order_relaxed) + 1;
    if (n < core_.options().epoch_batch) [[likely]] {
      p.frees.store(n, std::memory_order_relaxed);
      return;
    }
    p.frees.store(0, std::memory_order_relaxed);
    core_.epochs().close_epoch_of_ranges(s);
  }
  struct shortcut {
    std::uint64_t generation;
    partition* p;
  };
  // The streams this thread used last (threads often cycle over a few streams): trivial, so its
  // access needs no initialisation guard.
  using shortcuts = core::thread_stream_cache<stream_free_lists, shortcut>;

  // The partition of s, made on first use; nullptr only if host memory ran out.
  [[gnu::always_inline]] partition* find(stream_ref s) noexcept {
    const shortcut* l = shortcuts::find(id_, s);
    if (l != nullptr && l->generation == generation_.load(std::memory_order_acquire)) [[likely]] return l->p;
    return find_slow(s);
  }
  [[gnu::noinline]] partition* find_slow(stream_ref s) noexcept;
  // An empty partition takes a batch of up to batch_[c] blocks from the shared stack: one for the
  // caller, the rest into the partition. So a stream's blocks (and their host entries, four to a
  // cache line) are not interleaved one by one with other streams': without batches, threads on
  // different streams wrote to the same entry lines on every allocation and free.
  [[gnu::noinline]] block_index refill(partition& p, core::size_class c) noexcept;
  // Which partition's stream a live block was allocated on (0: none), for the per-stream in-use
  // bytes that out_of_memory reports: one relaxed store per allocation, read only on that path.
  [[gnu::always_inline]] void note_owner(block_index b, std::uint32_t number) noexcept {
    if (b < owner_.size()) [[likely]] owner_[b].store(number, std::memory_order_relaxed);
  }
  void cover_owners() noexcept;
  // Bytes of live blocks by partition number (index 0: allocated on no partition).
  [[nodiscard]] std::vector<std::size_t> in_use_by_partition() const;

  [[gnu::noinline]] void wait_for_recorded(block_index b, stream_ref s) noexcept;
  [[gnu::noinline]] void forget_recorded(block_index b) noexcept;
  [[gnu::noinline]] void settle_recorded_large(const void* p, const stream_ref* s) noexcept;
  void wait_for(const std::vector<stream_ref>& streams, stream_ref s) noexcept;
  // Free blocks freed on s (a chain of any classes) behind an epoch on s; without host memory for
  // one, behind a host synchronize of s, then onto the shared stacks.
  void defer_or_wait(core::block_chain chain, stream_ref s) noexcept;
  core::block_chain take_from(core::tagged_stack<>& stack) noexcept { return stack.take_all(blocks_); }
  std::size_t count(const core::tagged_stack<>& stack, core::size_class c) const noexcept;

  core::pool_core& core_;
  core::block_table& blocks_;
  const backoff_options backoff_;
  const std::size_t class_count_;
  std::vector<std::uint32_t> batch_;  // per class: clamp(64 KiB / block bytes, 1, 16)
  const std::uint64_t id_;
  std::unique_ptr<padded_stack[]> shared_;

  // Bumped (release) by retire_stream; the shortcut's acquire check pairs with it, so no thread's
  // shortcut maps a handle value to a retired stream's partition. (Map entries stay: stream ids are
  // never reused, so a retired id is simply never looked up again; a partition costs one cache
  // line per class, freed with the pool.)
  std::atomic<std::uint64_t> generation_{1};
  std::atomic<std::uint64_t> stream_queries_{0};  // relaxed: a statistic
  tbb::concurrent_unordered_map<std::uint64_t, partition*> partitions_;  // by stream id
  mutable std::mutex partitions_mutex_;  // serialises creation, retirement and trims (lookups take no lock)
  std::vector<std::unique_ptr<partition>> owned_;  // GUARDED_BY(partitions_mutex_); freed with the pool

  core::segmented_table<std::atomic<std::uint32_t>> owner_;  // block index -> partition number
  std::mutex owner_mutex_;                                    // serialises owner_.grow_to

  // record_stream's count of entries and mutex (core/recorded_streams.hpp), over these two maps.
  core::recorded_streams recorded_streams_;
  std::unordered_map<block_index, std::vector<stream_ref>> recorded_;  // GUARDED_BY(recorded_streams_)
  std::unordered_map<const void*, std::vector<stream_ref>> recorded_large_;  // GUARDED_BY(recorded_streams_)
};

using stream_pool = basic_pool<stream_free_lists>;

}  // namespace cudapool
