// block_table.hpp - host-side tables indexed by a dense 32-bit index, that never move.
//
// A table is a fixed array of segment pointers; segments are allocated on demand (by one writer at
// a time, the caller's growth lock) and published with a release store, and are freed only when
// the table is destroyed. So a lock-free reader holding any index below size() may read its
// entry at any time: a stale index names stale but valid memory. This is what lets the
// lock-free stacks keep their `next` links here, on the host, and never in device memory.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>

#include <cudapool/types.hpp>

namespace cudapool::core {

template <class T, unsigned SegmentShift = 16, std::size_t MaxSegments = 4096>
class segmented_table {
 public:
  static constexpr std::size_t segment_size = std::size_t{1} << SegmentShift;
  static constexpr std::size_t max_size = segment_size * MaxSegments;

  segmented_table() = default;
  segmented_table(const segmented_table&) = delete;
  segmented_table& operator=(const segmented_table&) = delete;
  ~segmented_table() {
    for (std::size_t s = 0; s < MaxSegments; ++s) {
      if (T* items = segments_[s].load(std::memory_order_relaxed)) delete reinterpret_cast<segment*>(items);
    }
  }

  // Thread-safe and wait-free for i < size(). The acquire pairs with the release in grow_to().
  [[nodiscard]] T& operator[](std::uint32_t i) const noexcept {
    return segments_[i >> SegmentShift].load(std::memory_order_acquire)[i & (segment_size - 1)];
  }

  // Makes indices [0, n) valid. Not thread-safe against other grow_to() calls (callers hold their
  // growth lock); safe against concurrent readers. Throws std::length_error past max_size.
  void grow_to(std::size_t n) {
    if (n > max_size) throw std::length_error("cudapool: block table full");
    for (std::size_t s = 0; s * segment_size < n; ++s) {
      if (segments_[s].load(std::memory_order_relaxed) == nullptr) {
        segments_[s].store((new segment())->items, std::memory_order_release);
      }
    }
    if (n > size_.load(std::memory_order_relaxed)) size_.store(n, std::memory_order_release);
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_.load(std::memory_order_acquire); }

 private:
  // Cache-line aligned, so that entries [4k, 4k + 3] of 16-byte block entries share a line and no
  // others do: slabs start at such an index (pool_core::grow), and the hot entries of two threads
  // never share a line because their slabs are neighbours. (malloc's 16-byte alignment let a
  // thread's block and the next slab's first block, another thread's, share one: pair/tls at 16
  // threads ran 2.6x slower with 64 KiB first slabs.)
  struct alignas(64) segment {
    T items[segment_size];
  };
  std::unique_ptr<std::atomic<T*>[]> segments_ = std::make_unique<std::atomic<T*>[]>(MaxSegments);
  std::atomic<std::size_t> size_{0};
};

// What a block's state word says. Transitions (all by CAS or by the owner of the block):
//   free -> live        allocate (the thread that popped the block)
//   live -> free        deallocate(p)            (CAS: a second free of the block fails)
//   live -> pending     deallocate(p, stream)    (CAS)
//   pending -> free     epoch reclaim, once the stream's event completed
//   free -> unmapped    trim, for every block of a wholly free slab (then the slab is released)
//   unmapped -> free    growth re-binds the slab descriptor to a new frame
enum class block_state : std::uint32_t { free = 0, live = 1, pending = 2, unmapped = 3 };

// One block's host metadata: 16 bytes, four to a cache line.
struct block_entry {
  // Device address | size class (addresses are 256 B aligned, so the low 8 bits hold the class).
  // Written by growth under the growth lock before the block is published through a free list
  // (whose release/acquire orders it); constant while the slab is bound.
  std::uint64_t address_and_class = 0;
  // Link for whichever free list or chain holds the block. Written by the holder; lock-free
  // stacks read it racily (a stale value is caught by the stack's tag), hence atomic.
  std::atomic<block_index> next{no_block};
  // state (top 2 bits) | requested bytes (low 30 bits) while live. See block_state.
  std::atomic<std::uint32_t> meta{0};

  static constexpr std::uint32_t bytes_mask = (std::uint32_t{1} << 30) - 1;
  static constexpr std::uint32_t pack(block_state s, std::size_t requested) noexcept {
    return (static_cast<std::uint32_t>(s) << 30) | static_cast<std::uint32_t>(requested & bytes_mask);
  }
  static constexpr block_state state_of(std::uint32_t meta) noexcept {
    return static_cast<block_state>(meta >> 30);
  }

  [[nodiscard]] void* address() const noexcept {
    return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address_and_class & ~std::uint64_t{0xff}));
  }
  [[nodiscard]] std::uint32_t size_class() const noexcept {
    return static_cast<std::uint32_t>(address_and_class & 0xff);
  }
};
static_assert(sizeof(block_entry) == 16);

// live -> `to` on a block's state word (pool_core::retire; written here once so that the model
// test core/model/retire_model.cpp checks this code with Relacy's atomics). By CAS when
// atomic_check: of two racing frees of one block exactly one returns true. Without it a load and a
// store: a sequential double free is still caught, two racing ones may both return true. On
// success `was` holds the live state word (its requested bytes).
template <class Meta>
[[nodiscard, gnu::always_inline]] inline bool retire_meta(Meta& meta, block_state to, bool atomic_check,
                                                        std::uint32_t& was) noexcept {
  std::uint32_t m = meta.load(std::memory_order_relaxed);
  if (block_entry::state_of(m) != block_state::live) return false;
  if (!atomic_check) [[unlikely]] {
    meta.store(block_entry::pack(to, 0), std::memory_order_relaxed);
  } else if (!meta.compare_exchange_strong(m, block_entry::pack(to, 0), std::memory_order_acq_rel)) {
    return false;
  }
  was = m;
  return true;
}

using block_table = segmented_table<block_entry>;

// A free block with its device address: what per-thread caches hold, so that allocate returns the
// address without a table walk and an allocation does not wait on the previous free's lookup.
struct free_block {
  void* address = nullptr;
  block_index index = no_block;
};

// A list of blocks linked through block_entry::next, head to tail, `count` long.
struct block_chain {
  block_index head = no_block;
  block_index tail = no_block;
  std::size_t count = 0;
  [[nodiscard]] bool empty() const noexcept { return count == 0; }
};

// Appends `more` to `to` (not thread-safe: both chains belong to the caller).
inline void append(block_table& t, block_chain& to, const block_chain& more) noexcept {
  if (more.empty()) return;
  if (to.empty()) {
    to = more;
    return;
  }
  t[to.tail].next.store(more.head, std::memory_order_relaxed);
  to.tail = more.tail;
  to.count += more.count;
}

}  // namespace cudapool::core
