// pool_core.hpp - layer 2: the machinery every variant shares.
//
// Glossary
//   heap       the pool's device memory (segment_heap): extents over virtual memory reservations
//              (or backend chunks), split and coalesced. Slabs and large requests are its extents.
//   frame      a slab's device memory, 64 KiB aligned: an extent of the heap. A class's first frame
//              is first_slab_bytes (at least one block), each new one twice its last, up to
//              slab_bytes: a class used once costs 64 KiB, not 2 MiB.
//   slab       a frame bound to one size class and cut into equal blocks. Its descriptor (id,
//              class, block index range) is never destroyed: a released slab's descriptor waits
//              for the next growth of its class and is re-bound to a new frame.
//   block      one allocation unit of a slab, named by a dense block_index into block_table.
//   epoch      the stream-ordered frees of one stream covered by one event. Frees accumulate in
//              the stream's open epoch; closing it records one event; once the event completes
//              its blocks are free again. Large frees on a stream join the open epoch as marks:
//              their range is back in the heap at once, tagged with the epoch (segment_heap.hpp).
//   large      a request above the largest class (or over-aligned): an extent of the heap.
//
// Who does what. A variant (layer 3) owns the free lists of each class and the hot path; it
// calls pool_core for everything else: handing a popped block out, resolving a freed pointer,
// growth, trim, large requests, stats and the leak report, and through epochs() (epoch_table.hpp)
// deferral, epochs and reclaim. The host never reads or writes device memory: all per-block state
// lives in host tables (block_table).
//
// Invariants (at quiescence)
//   per class: free (variant lists) + cached (variant caches) + pending (epochs) + in_use == capacity
//   per class: capacity == sum over bound slabs of block_count
//   reserved (mapped) == frames of bound slabs + heap free (pending included) + large in use
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <cudapool/detail/core/block_table.hpp>
#include <cudapool/detail/core/diagnostics.hpp>
#include <cudapool/detail/core/epoch_table.hpp>
#include <cudapool/detail/core/page_map.hpp>
#include <cudapool/detail/core/segment_heap.hpp>
#include <cudapool/detail/core/size_classes.hpp>
#include <cudapool/detail/core/thread_counters.hpp>
#include <cudapool/backend.hpp>
#include <cudapool/diagnostics.hpp>
#include <cudapool/errors.hpp>
#include <cudapool/options.hpp>
#include <cudapool/stats.hpp>

namespace cudapool::core {

// How a stream-partitioned variant may take blocks freed on another stream (basic_pool::refill):
// only where that stream has completed its work (no wait), or behind a device-side wait.
enum class steal_mode : std::uint8_t { completed, ordered };

struct lookup_result {
  enum class kind : std::uint8_t { block, other } what = kind::other;
  size_class cls = 0;
  block_index index = no_block;
  bool interior = false;  // inside a block of this pool, not at its start
  block_entry* entry = nullptr;  // &blocks()[index] when what == block
};

class pool_core {
 public:
  pool_core(std::shared_ptr<backend> backend, const pool_options& options, std::string_view variant);
  pool_core(const pool_core&) = delete;
  pool_core& operator=(const pool_core&) = delete;
  // Waits for every pending epoch, reports leaks, and gives every chunk back to the backend.
  ~pool_core();

  [[nodiscard]] const pool_options& options() const noexcept { return options_; }
  [[nodiscard]] const size_classes& classes() const noexcept { return classes_; }
  [[nodiscard]] block_table& blocks() noexcept { return blocks_; }
  [[nodiscard]] backend& device() const noexcept { return *backend_; }
  [[nodiscard]] std::string_view variant() const noexcept { return variant_; }

  // ---- hot path (thread-safe, lock-free) -------------------------------------------------------

  // Marks block b, just taken from a free list by the caller, live for a request of `bytes`.
  [[gnu::always_inline]] void* hand_out(block_index b, std::size_t bytes) noexcept {
    block_entry& e = blocks_[b];
    mark_live(e, e.size_class(), bytes);
    return e.address();
  }
  // As hand_out(b.index, bytes), for a caller that holds the block's address and class.
  [[gnu::always_inline]] void* hand_out(free_block b, size_class c, std::size_t bytes) noexcept {
    mark_live(blocks_[b.index], c, bytes);
    return b.address;
  }

  // Resolves a pointer given to deallocate in O(1) without touching device memory.
  [[nodiscard, gnu::always_inline]] lookup_result lookup(const void* p) const noexcept {
    const auto* sp = reinterpret_cast<const slab_desc*>(pages_.find(p));
    if (sp == nullptr) return {};
    const slab_desc& s = *sp;
    const std::uintptr_t base = s.base.load(std::memory_order_acquire);
    const auto addr = reinterpret_cast<std::uintptr_t>(p);
    if (base == 0 || addr < base) return {};
    const auto offset = static_cast<std::uint32_t>(addr - base);  // slabs are < 4 GiB
    if (addr - base >= std::uintptr_t{s.block_count} * s.block_bytes) return {};
    // offset / block_bytes by Lemire's fastdiv (exact for 32-bit numerators): a multiply instead
    // of a division on every free.
    const auto i = static_cast<std::uint32_t>((static_cast<unsigned __int128>(s.reciprocal) * offset) >> 64);
    // The slab's entries, one load shorter than blocks_[index] when its range is in one segment.
    block_entry* e = s.entries != nullptr ? s.entries + i : &blocks_[s.first_block + i];
    return {lookup_result::kind::block, s.cls, s.first_block + i, offset != i * s.block_bytes, e};
  }

  // live -> `to` (free or pending) by CAS; false when the block is not live (a double free). The
  // acq_rel pairs with the CAS of a racing free of the same block: exactly one of them wins. With
  // options().atomic_free_check off it is a load and a store: sequential double frees are still
  // caught, two racing frees of one block may both pass. For a block found by lookup()
  // (r.what == block).
  [[nodiscard, gnu::always_inline]] bool retire(const lookup_result& r, block_state to) noexcept {
    std::uint32_t m = 0;
    if (!retire_meta(r.entry->meta, to, atomic_free_check_, m)) return false;
    counters_.add(free_counter(r.cls), 1, requested_counter,
                  -static_cast<std::int64_t>(m & block_entry::bytes_mask));
    return true;
  }

  // ---- debug layer (debug_options; null when every debug feature is off) ---------------------

  [[nodiscard]] bool debugging() const noexcept { return debug_ != nullptr; }
  [[nodiscard]] diagnostics* debug() const noexcept { return debug_.get(); }
  // Records live p (from hand_out, or a large allocation when b is no_block) with the debug layer.
  void debug_allocated(void* p, std::size_t bytes, block_index b, stream_ref s);
  // Waits for the device, then reports every damaged guard seen so far. Returns how many.
  std::size_t check_guards();
  // What the pool knows about p (any pointer; never touches device memory).
  [[nodiscard]] pointer_info describe(const void* p) const;

  // ---- slow paths (thread-safe) ----------------------------------------------------------------

  // Counts and reports a rejected free; the pool is unchanged.
  void report_invalid(const void* p, invalid_free_reason reason) noexcept;

  // Frees that are not a block start of this pool: large allocations, or invalid (reported).
  // `stream` null: immediate; else the range is reusable at once on *stream, by others after the
  // event of the stream's open epoch.
  void deallocate_other(const void* p, const lookup_result& r, const stream_ref* stream) noexcept;

  // The pool's stream-ordered frees: deferral, epochs, reclaim and waits (epoch_table.hpp).
  [[nodiscard]] epoch_table& epochs() noexcept { return epochs_; }

  // A growth counter per class, for re-checking after the growth lock (see grow()).
  [[nodiscard]] std::uint64_t growth_generation(size_class c) const noexcept {
    return class_state_[c].generation.load(std::memory_order_acquire);
  }
  struct grow_result {
    block_chain chain;     // the new slab's blocks, all free, linked
    bool raced = false;    // another thread grew class c since `seen`: pop again instead
  };
  // Binds a new slab of class c: an extent of the heap (which maps memory if growth is allowed and
  // the byte limit permits). Empty chain when no memory could be had.
  grow_result grow(size_class c, std::uint64_t seen);

  // Takes `taken` (every block the caller removed from class c's lists), gives the slabs all of
  // whose blocks are in it back to the heap (any class or large request may use them next), and
  // the rest back to `sink`. Returns the bytes of the slabs released.
  std::size_t release_free_slabs(size_class c, block_chain taken, free_list_sink& sink);
  // Unmaps the heap's wholly free pages (without virtual memory: frees wholly free chunks). Returns
  // the bytes given back to the backend.
  std::size_t trim_heap();

  // Large requests (above the largest class, or over-aligned) on stream s: an extent of the heap,
  // best fit; ranges freed on s are reusable at once. Maps memory only if may_grow. nullptr when
  // exhausted.
  // behind, wait_own: as segment_heap::allocate's.
  // Inline: one call less on every large allocation.
  void* allocate_large(std::size_t bytes, std::size_t alignment, stream_ref s, bool may_grow,
                       const void** behind = nullptr, bool* wait_own = nullptr) {
    void* p = heap_.allocate(bytes, alignment, segment_heap::kind::large, {s.native(), true}, may_grow, behind, wait_own);
    if (p == nullptr) return nullptr;
    counters_.add(large_alloc_counter, 1, requested_counter, static_cast<std::int64_t>(bytes));
    return p;
  }
  // Free ranges of the heap wait behind stream epochs.
  [[nodiscard]] bool heap_pending() const noexcept { return heap_.has_pending(); }

  void count_oom() noexcept { ooms_.fetch_add(1, std::memory_order_relaxed); }
  // What out_of_memory carries: what was asked, what is held and where. `st` is the pool's stats()
  // (with the variant's free and cached counts). Fills everything but the variant's own holdings
  // (free and in use per stream partition, per-thread caches), which the variant adds.
  [[nodiscard]] oom_report exhaustion_report(std::size_t bytes, std::size_t alignment, const pool_stats& st) const;
  // out_of_memory's message: the report as text.
  [[nodiscard]] std::string describe_exhaustion(const oom_report& r) const;

  [[nodiscard]] std::size_t capacity_blocks(size_class c) const noexcept {
    return class_state_[c].capacity.load(std::memory_order_relaxed);
  }

  // Whether memory reserved but not in use (free, cached, pending) exceeds the release threshold.
  [[nodiscard]] bool over_release_threshold() const noexcept;

  // Everything but the variant's free/cached counts, which the variant fills in.
  [[nodiscard]] pool_stats stats() const;

 private:
  [[gnu::always_inline]] void mark_live(block_entry& e, size_class c, std::size_t bytes) noexcept {
    mark_live_meta(e.meta, bytes);
    counters_.add(alloc_counter(c), 1, requested_counter, static_cast<std::int64_t>(bytes));
  }

  struct slab_desc {
    // 0 while released. Written under the growth lock; read by lookup(), which may race with a
    // trim or growth only for an invalid free (its state check then rejects it).
    std::atomic<std::uintptr_t> base{0};
    // Fixed when the descriptor is created (before its id is published in the page map).
    size_class cls = 0;
    std::uint32_t block_bytes = 0;
    std::uint64_t reciprocal = 0;  // ~0 / block_bytes + 1, for lookup()'s division
    block_index first_block = 0;
    std::uint32_t block_count = 0;
    std::uint32_t frame_bytes = 0;  // the frame it is bound to (every binding the same size)
    std::uint32_t id = 0;  // its index in slabs_
    // &blocks_[first_block], or null when the slab's block range spans two segments of blocks_
    // (grow() avoids that unless a slab has more blocks than a segment holds).
    block_entry* entries = nullptr;
  };

  struct alignas(64) class_state {
    std::atomic<std::uint64_t> generation{0};  // bumped by grow(), under the growth lock
    std::atomic<std::size_t> capacity{0};      // blocks; written under the growth lock
    std::atomic<std::size_t> slabs{0};
    std::vector<std::uint32_t> released;       // slab ids to re-bind; GUARDED_BY(growth_mutex_)
    std::size_t next_frame_bytes = 0;          // of the next new descriptor; GUARDED_BY(growth_mutex_)
  };

  // Hot-path counters, one block per thread (thread_counters): allocs and frees per class,
  // requested bytes in use, and the large path's allocations and frees.
  static constexpr std::size_t alloc_counter(size_class c) noexcept { return c; }
  static constexpr std::size_t free_counter(size_class c) noexcept { return max_size_classes + c; }
  static constexpr std::size_t requested_counter = 2 * max_size_classes;
  static constexpr std::size_t large_alloc_counter = requested_counter + 1;
  static constexpr std::size_t large_free_counter = requested_counter + 2;

  // The tag of a stream-ordered large free of p on s (its mark in s's open epoch). When no epoch
  // can take it: synchronizes s and returns no tag, and when that fails too sets *lost (p stays
  // used, reported).
  [[nodiscard]] stream_tag mark_or_synchronize(const void* p, stream_ref s, epoch_table::stream_state** marked,
                                               bool* lost) noexcept;
  void report_leaks() const;
  [[nodiscard]] std::size_t in_use_bytes_now() const noexcept;
  void sample_peaks() const noexcept;

  std::shared_ptr<backend> backend_;
  const pool_options options_;
  const size_classes classes_;
  const std::string variant_;
  const bool atomic_free_check_ = options_.atomic_free_check;

  segment_heap heap_;  // the device memory; before everything that points into it
  block_table blocks_;
  page_map pages_;  // page -> slab_desc* (as a word)
  segmented_table<slab_desc, 10, 1024> slabs_;
  thread_counters<large_free_counter + 1> counters_;
  std::unique_ptr<class_state[]> class_state_;

  // Growth: slab descriptors, block index ranges (frames come from heap_).
  mutable std::mutex growth_mutex_;
  std::uint32_t slab_count_ = 0;             // GUARDED_BY(growth_mutex_)
  std::uint32_t block_count_ = 0;            // GUARDED_BY(growth_mutex_)

  // Bit c: class c has had a slab (set by grow, never cleared). Only such a class has blocks, so
  // in_use_bytes_now sums the counters of these classes alone.
  std::atomic<std::uint64_t> grown_classes_[class_set::word_count] = {};

  mutable std::atomic<std::size_t> peak_in_use_{0};
  mutable std::atomic<std::int64_t> peak_requested_{0};

  [[nodiscard]] std::size_t first_frame_bytes(size_class c) const noexcept;

  // What the epochs tell the pool: blocks released (its peaks), a reclaim done (the debug layer).
  struct observer final : epoch_observer {
    explicit observer(pool_core& p) noexcept : pool(p) {}
    void released() noexcept override { pool.sample_peaks(); }
    void reclaimed() override {
      if (pool.debug_) pool.debug_->poll();
    }
    pool_core& pool;
  } observer_{*this};
  // Stream-ordered frees; after the heap and the block table it points into.
  epoch_table epochs_;

  std::atomic<std::uint64_t> grows_{0};
  std::atomic<std::uint64_t> ooms_{0};
  std::atomic<std::uint64_t> invalid_frees_{0};

  std::unique_ptr<diagnostics> debug_;  // after everything it may call into
};

}  // namespace cudapool::core
