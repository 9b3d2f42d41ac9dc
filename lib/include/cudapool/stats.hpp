// cudapool/stats.hpp - what a pool holds, where, and what it has done.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cudapool {

// Per size class, in blocks. At quiescence (no call in flight):
//   free_blocks + cached_blocks + pending_blocks + in_use_blocks == capacity_blocks
struct class_stats {
  std::size_t block_bytes = 0;
  std::size_t capacity_blocks = 0;  // blocks of all slabs of this class
  std::size_t free_blocks = 0;      // on the variant's shared free lists
  std::size_t cached_blocks = 0;    // in per-thread / per-stream caches (variant-specific)
  std::size_t pending_blocks = 0;   // freed on a stream, waiting for its epoch's event
  std::size_t in_use_blocks = 0;    // handed out and not yet freed
  std::uint64_t allocs = 0;
  std::uint64_t frees = 0;
  std::size_t slabs = 0;
};

// The segment heap (core/segment_heap.hpp): all of a pool's device memory. At quiescence:
//   mapped_bytes == slab_bytes + free_bytes + large_bytes
struct heap_stats {
  bool virtual_memory = false;     // pages mapped on demand, else backend chunks
  std::size_t page_bytes = 0;      // the mapping granularity (virtual memory)
  std::size_t mapped_bytes = 0;    // = pool_stats::reserved_bytes
  std::size_t peak_mapped_bytes = 0;
  std::size_t address_bytes = 0;   // address space reserved (virtual memory), or chunk bytes
  std::size_t segments = 0;        // reservations or chunks
  std::size_t slab_bytes = 0;      // used by the slabs of the size classes
  std::size_t large_bytes = 0;     // used by large allocations
  std::size_t large_count = 0;
  std::size_t free_bytes = 0;      // free extents, pending ones included
  std::size_t free_extents = 0;
  std::size_t largest_free_bytes = 0;
  double fragmentation = 0.0;      // 1 - largest free / free (0: all free memory in one range)
  std::size_t pending_bytes = 0;   // free extents behind a stream's epoch (in pool_stats::pending_bytes too)
  std::size_t unmappable_bytes = 0;  // what a trim would give back now
  std::uint64_t maps = 0;          // map / chunk calls to the backend
  std::uint64_t unmaps = 0;        // unmap / chunk frees (= pool_stats::trims)
  std::uint64_t unmapped_bytes = 0;  // given back by unmap / chunk frees, in all
  std::uint64_t remap_waits = 0;     // growths that waited for their stream's epochs to remap (remap_ratio)
  std::size_t peak_used_bytes = 0;   // slabs + large at their highest
};

struct pool_stats {
  std::string variant;
  std::string backend;
  std::vector<class_stats> classes;

  // Bytes. in_use counts whole blocks (and whole large extents); requested counts what callers
  // asked for. reserved = device memory the pool holds (mapped pages, or chunks without virtual
  // memory) = heap.slab_bytes + heap.free_bytes + heap.large_bytes.
  std::size_t reserved_bytes = 0;
  std::size_t in_use_bytes = 0;
  std::size_t requested_bytes = 0;
  std::size_t free_bytes = 0;     // blocks on free lists
  std::size_t cached_bytes = 0;   // blocks in per-thread / per-stream caches
  std::size_t pending_bytes = 0;  // behind stream events: blocks, and heap ranges
  // Peaks. peak_reserved_bytes is exact (it changes only under the heap's lock); peak_in_use_bytes
  // and peak_requested_bytes are sampled on the slow paths and on every stats() call, because the
  // hot path keeps sharded counters that have no single current value to compare with.
  std::size_t peak_reserved_bytes = 0;
  std::size_t peak_in_use_bytes = 0;
  std::size_t peak_requested_bytes = 0;

  // The segment heap: the pool's device memory, slabs and large extents.
  heap_stats heap;

  std::uint64_t allocs = 0;
  std::uint64_t frees = 0;
  std::uint64_t grows = 0;
  std::uint64_t trims = 0;            // unmap / chunk-free operations (= unmaps)
  std::uint64_t ooms = 0;
  std::uint64_t invalid_frees = 0;
  std::uint64_t events_recorded = 0;  // epochs closed (one event each), and stream_waits' events
  // Why the epochs closed (their sum is events_recorded less stream_waits): full, epoch_batch frees
  // and large frees in it; bytes, its large frees reached a sixteenth of the mapped bytes (several
  // streams in the heap); slow_path, an allocation's slow path (a miss), or a wait for pending
  // frees, closed every open epoch; other, flush_stream, retire_stream and the stream variant's
  // donations (a chain of blocks behind one event).
  std::uint64_t epochs_closed_full = 0;
  std::uint64_t epochs_closed_bytes = 0;
  std::uint64_t epochs_closed_slow_path = 0;
  std::uint64_t epochs_closed_other = 0;
  // Device-side waits of one stream on another (an event recorded on one stream and waited on by
  // another): a steal under memory pressure, record_stream. Each one can serialise two streams.
  std::uint64_t stream_waits = 0;
  // Queries of whether another stream has run its work (the stream variant's steal of that stream's
  // partition before growth; 0 for the other variants). Each is a driver call.
  std::uint64_t stream_queries = 0;
  std::uint64_t epochs_reclaimed = 0;
  std::size_t pending_epochs = 0;     // closed epochs whose event has not been seen complete
};

// The stats as one JSON object.
[[nodiscard]] std::string to_json(const pool_stats& stats);

}  // namespace cudapool
