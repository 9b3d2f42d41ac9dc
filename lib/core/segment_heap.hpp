// segment_heap.hpp - a pool's device memory: one heap of extents over segments. Best fit, split on
// allocation, coalesced on free, pages mapped on demand and unmapped by trim, stream-ordered reuse.
//
// Glossary
//   segment   an address range the heap owns: a virtual memory reservation whose pages are mapped
//             on demand (the backend has page_bytes() != 0), or one backend chunk, all of it memory.
//   extent    a run of bytes inside one segment, in one state: used (a slab of a size class, or a
//             large allocation), free, or unmapped (virtual memory only: no memory behind it).
//             The extents of a segment tile it; neighbours link by index, in address order.
//   tag       what a free extent's last use may still be pending behind: nothing (anyone may reuse
//             it), or epoch e of stream S: reusable at once by S (stream order protects it), by any
//             other stream once S's epoch e has completed (the pool's epoch event, seen by reclaim).
//   bin       the free extents by size, 16 bins per power of two (TLSF's two-level index), with a
//             bitmap of the non-empty bins.
//
// Invariants (under mutex_)
//   mapped_ == sum of the bytes of used and free extents (unmapped extents are whole pages)
//   an unmapped extent has no unmapped neighbour; a segment's extents tile it
//   two free neighbours pending on two streams never merge; a resolved range merges into a pending
//   one only while one stream has freed into the heap (coalesce); a range is handed to a stream
//   only when every extent it spans is safe for it (RMM #2489 merged a pending range into a
//   reusable one and handed it out early)
//
// Thread-safety: every public member function is thread-safe (one lock, a word_lock: the heap serves
// slab growth and requests above the largest size class, never the small-block hot path).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include <cudapool/detail/core/stream_tag.hpp>
#include <cudapool/detail/core/word_lock.hpp>
#include <cudapool/backend.hpp>
#include <cudapool/stats.hpp>

namespace cudapool::core {

class segment_heap {
 public:
  struct config {
    std::size_t byte_limit = 0;         // bound on mapped bytes; 0: none
    bool allow_growth = true;           // false: only what reserve_initial mapped
    bool virtual_memory = true;         // use the backend's virtual memory where it has it
    std::size_t reservation_bytes = 0;  // address space per reservation; 0: twice the device's memory
    std::size_t chunk_bytes = std::size_t{2} << 20;  // without virtual memory: segments are multiples of this
    // Virtual memory: when growth would make mapped bytes exceed this multiple of the bytes in use
    // (this request included), first unmap as many whole free pages elsewhere (largest free ranges
    // first). 0: never. Trades map/unmap calls for memory (pool_options::remap_ratio).
    double remap_ratio = 0.0;
  };
  enum class kind : std::uint8_t { slab, large };
  enum class free_result : std::uint8_t { freed, double_free, interior, foreign };

  struct info {
    bool found = false;       // p lies in an extent of the heap (used or free)
    bool used = false;
    kind what = kind::large;
    std::uintptr_t base = 0;  // the extent
    std::size_t bytes = 0;
    std::size_t requested = 0;  // used large: what was asked
    bool pending = false;       // free, behind a stream's epoch
    const void* pending_stream = nullptr;
  };

  segment_heap(backend& device, const config& c);
  segment_heap(const segment_heap&) = delete;
  segment_heap& operator=(const segment_heap&) = delete;
  // Unmaps and releases everything, used extents included (the pool reported its leaks first).
  ~segment_heap();

  // Maps `bytes` (rounded up to pages, or one chunk) now; trim keeps them. false: not possible
  // (byte limit, device out of memory). Call once, before any allocation.
  bool reserve_initial(std::size_t bytes);

  // An extent of at least `bytes` (rounded up to 256 B) at `alignment` (a power of two >= 256), with
  // no pending work on any stream but `use`'s. Maps pages (or takes a chunk) when none fits and
  // may_grow and the config allow it. nullptr when it cannot (and for an alignment that is not a
  // power of two); throws backend_error when the backend
  // fails otherwise, and std::bad_alloc when host memory runs out.
  // With `behind`, once several streams have freed into the heap: nullptr, and in *behind the
  // stream, when the range found lies in a hole at least eight times the request and a range
  // pending behind another stream's epoch would hold it in a smaller hole (a hole of its size,
  // freed on that stream). The caller closes that stream's epoch, and asks again without `behind`
  // (what is free then). Without it a request split a large range
  // freed on its own stream while a range of its size waited behind another's epoch, and the next
  // request of the large size grew the heap (mlp_4stream: the stream variant 1.13x its live peak).
  // With `wait_own` (growth for a given stream): nullptr and *wait_own = true when growth would
  // remap (remap_ratio) and can unmap fewer pages now than it could once the ranges pending behind
  // the caller's own stream's epochs complete. The caller waits for its stream's epochs
  // (epoch_table::wait_stream) and asks again without it. Without the wait, which pages remap moved
  // depended on how far the device had got when a request missed (lm_train in PyTorch: 2748-2824
  // MiB mapped between processes, docs/results/2026-12-02-h200-s11), and a stream-ordered replay
  // of cnn_varbatch reserved 1.33x its live peak with remap against 1.03x without.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment, kind k, stream_use use, bool may_grow,
                               const void** behind = nullptr, bool* wait_own = nullptr);

  // Frees the used extent of kind k that starts at p, tagged with what its last use is pending
  // behind. Anything else is not touched, and the result says what p is.
  // *requested: what the allocation asked for (when freed).
  free_result free(const void* p, kind k, const stream_tag& tag, std::size_t* requested = nullptr) noexcept;

  // Ranges freed on `stream` stop being reusable at once there: its handle may name another stream
  // next. They stay reusable by all once their epoch completes.
  void forget_stream(const void* stream) noexcept;

  // Merges free ranges whose epochs have completed, then unmaps every whole page inside a free range
  // with nothing pending (without virtual memory: frees wholly free chunks). The pages of
  // reserve_initial stay. Returns the bytes given back.
  std::size_t trim();

  [[nodiscard]] info describe(const void* p) const;
  [[nodiscard]] heap_stats stats() const;
  // Free bytes pending behind each stream's epochs, by the stream's native handle.
  [[nodiscard]] std::vector<std::pair<const void*, std::size_t>> pending_by_stream() const;
  // Used large extents: (base, requested bytes), the first `max` of them, and how many in all.
  [[nodiscard]] std::vector<std::pair<void*, std::size_t>> live_large(std::size_t max, std::size_t* count,
                                                                      std::size_t* bytes) const;
  // A stream's epoch completed (its tags resolve): the next allocation merges what it frees.
  void note_completion() noexcept { completions_.fetch_add(1, std::memory_order_relaxed); }
  [[nodiscard]] bool has_pending() const noexcept { return pending_count_.load(std::memory_order_relaxed) != 0; }
  // Whether more than one stream has freed into the heap (then a range pending on one stream waits
  // for its epoch before another may use it). Relaxed: a hint for when to close epochs.
  [[nodiscard]] bool several_streams() const noexcept { return multi_stream_.load(std::memory_order_relaxed); }

  [[nodiscard]] std::size_t mapped_bytes() const noexcept { return mapped_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::size_t peak_mapped_bytes() const noexcept { return peak_mapped_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::size_t large_bytes() const noexcept { return large_used_.load(std::memory_order_relaxed); }
  [[nodiscard]] bool virtual_memory() const noexcept { return page_ != 0; }
  [[nodiscard]] std::size_t page_bytes() const noexcept { return page_; }

 private:
  static constexpr std::uint32_t none = ~std::uint32_t{0};
  enum class state : std::uint8_t { dead, used, free, unmapped };

  // 64 bytes, aligned to a cache line: best fit and coalescing read a candidate and its neighbours,
  // and at 80 bytes three extents in four straddled two lines. The flags and the links sit in the
  // tag's tail padding ([[no_unique_address]]: the Itanium ABI reuses a non-POD member's tail
  // padding); what a used large extent asked for lives in requested_, beside.
  struct alignas(64) extent {
    std::uintptr_t base = 0;
    std::size_t bytes = 0;
    [[no_unique_address]] stream_tag tag;  // free
    state st = state::dead;
    kind what = kind::large;
    bool in_pending = false;  // the id is in pending_ (kept across the id's reuse)
    std::uint32_t prev = none;  // address neighbours in the segment
    std::uint32_t next = none;
    std::uint32_t link_prev = none;  // the bin list (free; its head: head_of_bin + its bin) or the unmapped list
    std::uint32_t link_next = none;
    std::uint32_t segment = 0;
    [[nodiscard]] std::uintptr_t end() const noexcept { return base + bytes; }
  };
  static_assert(sizeof(extent) == 64, "an extent is one cache line (its members in the tag's tail padding)");

  struct segment {
    std::uintptr_t base = 0;
    std::size_t bytes = 0;           // 0: given back
    bool vm = false;                 // a reservation (pages mapped on demand), else one chunk
    std::uintptr_t pinned_end = 0;   // [base, pinned_end) stays mapped (reserve_initial)
  };

  // Used extents by base address: open addressing, linear probing, backward-shift deletion.
  class address_index {
   public:
    // So that the next insert does not allocate (the test inline: once per large allocation).
    void reserve_one() {
      if ((size_ + 1) * 2 > keys_.size()) grow();
    }
    // insert, slot_with and erase_slot: inline into take() and free() (segment_heap.cpp alone calls
    // them), once per large allocation and free each.
    [[gnu::always_inline]] inline void insert(std::uintptr_t key, std::uint32_t id) noexcept;
    // The id under key (none: not there), erased when keep(id) is false: one probe either way.
    template <class Keep>
    [[nodiscard]] std::uint32_t take_unless(std::uintptr_t key, Keep keep) noexcept {
      const std::size_t i = slot_with(key);
      if (i >= keys_.size()) return none;
      const std::uint32_t id = ids_[i];
      if (!keep(id)) erase_slot(i);
      return id;
    }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }

   private:
    [[nodiscard]] std::size_t slot_of(std::uintptr_t key) const noexcept {
      return static_cast<std::size_t>((key >> 8) * 0x9E3779B97F4A7C15ull >> 20) & mask_;
    }
    void grow();
    [[nodiscard, gnu::always_inline]] inline std::size_t slot_with(std::uintptr_t key) const noexcept;  // keys_.size(): none
    [[gnu::always_inline]] inline void erase_slot(std::size_t i) noexcept;
    std::vector<std::uintptr_t> keys_;  // 0: empty
    std::vector<std::uint32_t> ids_;
    std::size_t mask_ = 0;  // keys_.size() - 1 (a member: every probe step masks with it)
    std::size_t size_ = 0;
  };

  static constexpr unsigned bin_count = 640;
  // A bin list's head has link_prev = head_of_bin + its bin, so that remove_free need not compute
  // the bin (the extent has no spare byte to keep it in). Extent ids stay below it.
  static constexpr std::uint32_t head_of_bin = none - bin_count;
  [[gnu::always_inline]] static inline unsigned bin_of(std::size_t bytes) noexcept;  // segment_heap.cpp alone calls it
  [[gnu::always_inline]] static inline std::size_t bin_floor(unsigned b) noexcept;  // segment_heap.cpp alone calls it

  // All private functions run under mutex_.
  // The best-fitting free extent the caller may use, or none. wilderness = false leaves out the
  // free extents that end at unmapped address space (the top of a segment's mapped pages).
  // Inline into place(), its one caller (segment_heap.cpp alone calls it): as a call its prologue
  // and epilogue were a fifth of its instructions.
  struct fit {
    std::uint32_t id;  // none: nothing fits
    std::size_t hole;  // the bytes of the hole it lies in (hole_bytes(id))
  };
  // bin: bin_of(bytes).
  [[gnu::always_inline]] inline fit find_fit(std::size_t bytes, unsigned bin, std::size_t alignment, stream_use use,
                                             bool wilderness) const noexcept;
  [[nodiscard, gnu::always_inline]] inline std::size_t hole_bytes(std::uint32_t id) const noexcept;
  struct run {
    std::uint32_t first, last;  // neighbouring free extents, in address order
  };
  // Both: *hole, the bytes of the hole the run found lies in (hole_bytes of its extents).
  run find_run(std::size_t bytes, std::size_t alignment, stream_use use, bool wilderness,
               std::size_t* hole) const noexcept;
  // Inline into allocate(), its one caller (segment_heap.cpp alone calls it).
  [[gnu::always_inline]] inline run place(std::size_t bytes, unsigned bin, std::size_t alignment, stream_use use,
                                          bool wilderness, std::size_t* hole) const noexcept;
  [[nodiscard]] bool pending_tagged_left_of(std::uint32_t first, std::uint32_t id) const noexcept;
  // The stream of the free extent that `use` may not take yet and that would hold the request in
  // the smallest hole below `hole` (wilderness left out), or nullptr.
  [[nodiscard]] const void* tighter_behind_epoch(std::size_t bytes, std::size_t alignment, stream_use use,
                                                 std::size_t hole) const noexcept;
  run grow(std::size_t bytes, std::size_t alignment, stream_use use, bool* wait_own = nullptr);
  [[nodiscard, gnu::always_inline]] inline run run_around(std::uint32_t id, stream_use use) const noexcept;
  std::uint32_t grow_chunk(std::size_t bytes, std::size_t alignment);
  // What the used large extent e (an element of extents_) asked for.
  [[nodiscard]] std::size_t requested_of(const extent& e) const noexcept {
    return requested_[static_cast<std::size_t>(&e - extents_.data())];
  }
  std::uint32_t add_segment(std::uintptr_t base, std::size_t bytes, bool vm, state initial);
  // Inline into allocate(), its one caller (segment_heap.cpp alone calls it).
  [[gnu::always_inline]] inline void* take(run r, std::size_t bytes, std::size_t alignment, kind k, std::size_t requested);
  // At least n extent ids free (the test inline: take() asks on every allocation).
  void ensure_spare(std::size_t n) {
    if (free_ids_.size() < n) add_spare(n);
  }
  void add_spare(std::size_t n);
  // The extent and bin helpers below (and hole_bytes, run_around) are inlined into the paths of a
  // large allocation and free: called out of line, their calls were about 16% of the heap's
  // instructions in a replayed operation (sim, callgrind, s48; the placements unchanged).
  [[gnu::always_inline]] inline std::uint32_t new_extent() noexcept;
  [[gnu::always_inline]] inline void recycle(std::uint32_t id) noexcept;
  [[gnu::always_inline]] inline std::pair<std::uint32_t, std::uint32_t> carve(std::uint32_t id, std::uintptr_t lo, std::uintptr_t hi) noexcept;
  [[gnu::always_inline]] inline void unlink(std::uint32_t id) noexcept;
  [[gnu::always_inline]] inline void insert_free(std::uint32_t id) noexcept;
  [[gnu::always_inline]] inline void remove_free(std::uint32_t id) noexcept;
  void insert_unmapped(std::uint32_t id) noexcept;
  void remove_unmapped(std::uint32_t id) noexcept;
  // The merged extent. Inline (segment_heap.cpp alone calls it): free() calls it on every large free.
  [[gnu::always_inline]] inline std::uint32_t coalesce(std::uint32_t id, const stream_use* only = nullptr) noexcept;
  template <bool left>
  [[gnu::always_inline]] inline void merge_side(std::uint32_t id, const stream_use* only) noexcept;  // coalesce's
  std::uint32_t merge_unmapped(std::uint32_t id) noexcept;
  void resolve_completed() noexcept;
  // Drops from pending_ what is no longer a tagged free extent (taken, merged away, unmapped):
  // only resolve_completed pruned it, and on a heap whose streams' epochs rarely complete (the
  // stream variant's one-stream replays) the walks of find_run read hundreds of such entries.
  // Stable: find_run's ties keep their order.
  void drop_stale_pending() noexcept;
  template <class Keep>
  void prune_pending(Keep keep, std::vector<std::uint32_t>* dropped) noexcept;  // both of the above
  // resolve_completed() if an epoch completed since the last; whether it ran. Inline into allocate()
  // (segment_heap.cpp alone calls it): mostly its two tests, after every miss of the holes.
  [[gnu::always_inline]] inline bool resolve_new_completions() noexcept;
  // Inline: best fit asks it of every candidate, and as a call it was a tenth of the search.
  [[nodiscard, gnu::always_inline]] static bool safe_for(const stream_tag& t, stream_use use) noexcept {
    return core::safe_for(t, use);
  }
  [[nodiscard]] std::pair<std::uintptr_t, std::uintptr_t> unmappable_range(const extent& e) const noexcept;
  // The whole pages inside free extent e that may ever be unmapped (its tag aside).
  [[nodiscard]] std::pair<std::uintptr_t, std::uintptr_t> whole_pages(const extent& e) const noexcept;
  // Whether remap, for `bytes` outside [keep_lo, keep_hi), finds fewer unmappable pages now than
  // once the ranges pending behind use's own stream complete.
  [[nodiscard]] bool remap_would_wait(std::size_t bytes, std::uintptr_t keep_lo, std::uintptr_t keep_hi,
                                      stream_use use) const noexcept;
  void unmap_range(std::uint32_t id, std::uintptr_t lo, std::uintptr_t hi);  // pages of free extent id
  void unmap_elsewhere(std::size_t bytes, std::uintptr_t keep_lo, std::uintptr_t keep_hi);
  void count_mapped(std::size_t bytes) noexcept;

  backend& device_;
  const config config_;
  const std::size_t page_;  // 0: no virtual memory (chunks)

  mutable word_lock mutex_;  // taken once per large allocation and free: word_lock.hpp says why not std::mutex
  std::vector<extent> extents_;            // GUARDED_BY(mutex_)
  std::vector<std::size_t> requested_;     // GUARDED_BY(mutex_); by extent id: what a used large extent asked for
  std::vector<std::uint32_t> free_ids_;    // GUARDED_BY(mutex_); capacity >= extents_.size()
  std::vector<std::uint32_t> pending_;     // GUARDED_BY(mutex_); free extents with a tag; capacity >= extents_.size()
  // GUARDED_BY(mutex_); entries of pending_ that find_run's walks found stale since the last drop
  // (mutable: find_run is const; a hint for allocate, which drops them past a bound).
  mutable std::size_t stale_seen_ = 0;
  // One stream alone has freed into the heap (!multi_stream_): free neighbours then merge whatever
  // their tags, so a run of two or more free extents exists only where coalesce left a neighbour
  // the caller could not use (growth for a slab beside a pending range). Set there (and at any
  // refused merge); cleared by a find_run that met no pending extent with a free neighbour. With
  // one stream, place() walks pending_ for runs only while it is set (s32: the walk cost
  // lm_infer_varseq's elided replay 17 of 631 instructions per operation, callgrind; its branch
  // simulator's mispredicts, 3.69 -> 3.26, move with code layout too: in s33 a change elsewhere in
  // this file moved those of bench's replay loop, untouched, by half); otherwise it adds the stale
  // entries to stale_seen_, as the walk would.
  mutable bool runs_possible_ = false;
  // GUARDED_BY(mutex_); the entries of pending_ whose extent is not free (what find_run's walk
  // counts as stale): counted by remove_free and insert_free, 0 after prune_pending.
  std::size_t stale_pending_ = 0;
  std::vector<std::uint32_t> resolved_;    // GUARDED_BY(mutex_); resolve_completed's scratch, the same capacity
  std::vector<segment> segments_;          // GUARDED_BY(mutex_)
  std::vector<std::uint32_t> bins_ = std::vector<std::uint32_t>(bin_count, none);  // GUARDED_BY(mutex_)
  std::uint64_t bitmap_[bin_count / 64] = {};                                     // GUARDED_BY(mutex_)
  std::uint32_t unmapped_head_ = none;     // GUARDED_BY(mutex_)
  address_index index_;                    // GUARDED_BY(mutex_)
  std::uint64_t maps_ = 0;                 // GUARDED_BY(mutex_)
  std::uint64_t unmaps_ = 0;               // GUARDED_BY(mutex_)
  std::uint64_t remap_waits_ = 0;          // GUARDED_BY(mutex_); growths that asked the caller to wait
  std::size_t free_bytes_ = 0;             // GUARDED_BY(mutex_); bytes of binned free extents
  std::size_t peak_used_ = 0;              // GUARDED_BY(mutex_); mapped - free at its highest
  std::uint64_t unmapped_bytes_ = 0;       // GUARDED_BY(mutex_)
  std::uint64_t completions_seen_ = 0;     // GUARDED_BY(mutex_)
  // The first stream that freed with a tag (by its completed counter), and whether another has.
  const std::atomic<std::uint64_t>* first_stream_ = nullptr;  // GUARDED_BY(mutex_)
  // Written under mutex_ (once, false -> true); several_streams() reads it relaxed without the lock.
  std::atomic<bool> multi_stream_{false};

  // Written under mutex_, read relaxed by the pool's release-threshold check and stats.
  std::atomic<std::size_t> mapped_{0};
  std::atomic<std::size_t> peak_mapped_{0};
  std::atomic<std::size_t> large_used_{0};  // bytes of used large extents
  std::atomic<std::size_t> pending_count_{0};  // pending_.size()
  std::atomic<std::uint64_t> completions_{0};  // note_completion() calls
};

}  // namespace cudapool::core
