// cudapool/diagnostics.hpp - what the pool can tell about itself: debug options, guard-byte
// reports, pointer introspection (describe), and the structured out-of-memory report.
//
// Every debug feature is off by default. With all of them off the pool keeps no debug state and
// its hot path pays one predictable branch per call (measured in bench: see docs/debugging.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <cudapool/stats.hpp>
#include <cudapool/types.hpp>

namespace cudapool {

// A damaged guard: bytes after a user region were overwritten before the region was freed. Found by
// a check that runs on the device in stream order at the free, reported asynchronously (on a later
// slow path of the pool, flush_stream, trim, check_guards() or the pool's destruction).
struct guard_report {
  const void* pointer = nullptr;       // what allocate returned
  std::size_t bytes = 0;               // what was asked for
  std::size_t guard_offset = 0;        // the first damaged byte, from the end of the user region
  std::uint8_t found = 0;              // its value (the pattern is debug_options::guard_pattern)
  std::uint64_t alloc_stream_id = 0;   // backend stream id of the allocation (0: none given)
  std::uint64_t free_stream_id = 0;    // the stream the check ran on (0: the default stream)
  std::string alloc_stack;             // symbolized, when debug_options::record_stacks is on
};

// Called once per damaged guard. The default handler writes the report to stderr.
using guard_handler = void (*)(const guard_report& report, void* context);
void default_guard_handler(const guard_report& report, void* context);
[[nodiscard]] std::string to_string(const guard_report& report);

struct debug_options {
  // compute-sanitizer: each slab and large chunk is an NVTX memory heap and each live allocation a
  // region of it (registered at allocation, unregistered at free), so memcheck reports accesses
  // past an allocation or to a freed one even inside pool memory. CUDA backend only (the sim
  // backend counts registrations for tests).
  bool sanitizer_regions = false;
  // Nonzero: this many bytes after each user region are filled with guard_pattern at allocation
  // (in stream order on the allocating stream) and checked on the device at free (in stream order
  // on the freeing stream, before the block can be reused). Damage goes to on_guard_damage.
  std::size_t guard_bytes = 0;
  std::uint8_t guard_pattern = 0xCB;
  guard_handler on_guard_damage = default_guard_handler;
  void* guard_context = nullptr;
  // Record each allocation's call stack: the leak report groups leaks by stack, describe(p) and
  // guard reports show it.
  bool record_stacks = false;
  // Nonempty: record every allocation and free in the ../shared/traces CSV format, for
  // `bench --trace=FILE`. When empty, the environment variable CUDAPOOL_TRACE names the file (all
  // pools of the process then write to it; their streams get distinct indices).
  std::string trace_path;
  bool trace_from_environment = true;
};

// What describe(p) knows about a pointer.
struct pointer_info {
  enum class kind : std::uint8_t {
    foreign,   // not inside memory of this pool
    block,     // the start of a block of a size class
    interior,  // inside a block or large allocation, not at its start
    large,     // the start of a large allocation
  };
  enum class state : std::uint8_t {
    none,     // foreign
    live,     // handed out
    free,     // on a free list or in a per-thread or per-stream cache
    pending,  // freed on a stream, waiting for its event
  };
  kind what = kind::foreign;
  state status = state::none;
  const void* base = nullptr;          // the start of the block or large allocation
  std::size_t offset = 0;              // p - base
  block_index block = no_block;        // size-class blocks
  int size_class = -1;                 // -1: large or foreign
  std::size_t capacity_bytes = 0;      // the block size, or the large chunk's size
  std::size_t requested_bytes = 0;     // live allocations: what was asked for
  std::uint64_t pending_stream_id = 0; // pending: the stream whose work it waits for (0: unknown)
  std::string alloc_stack;             // live, with record_stacks: symbolized
};
[[nodiscard]] const char* to_string(pointer_info::kind k) noexcept;
[[nodiscard]] const char* to_string(pointer_info::state s) noexcept;
[[nodiscard]] std::string to_string(const pointer_info& info);

// What out_of_memory carries besides its message.
struct oom_report {
  std::size_t requested_bytes = 0;
  std::size_t alignment = 0;
  int size_class = -1;                 // -1: the large path
  std::size_t class_bytes = 0;
  std::size_t byte_limit = 0;          // 0: none
  bool growth_allowed = true;
  pool_stats stats;                    // variant, backend, reserved, in use, free, cached, pending, per class

  struct stream_holding {
    std::uint64_t stream_id = 0;       // backend stream id (cudaStreamGetId); 0: unknown
    std::size_t free_bytes = 0;        // in the stream's partition (stream variant)
    std::size_t pending_bytes = 0;     // freed on the stream, behind its events
    std::size_t pending_epochs = 0;
    std::size_t in_use_bytes = 0;      // live size-class blocks allocated on the stream (stream variant)
  };
  std::vector<stream_holding> streams;

  struct thread_cache_holding {
    std::uint64_t thread = 0;          // an id of the cache's thread (0: exited thread's cache)
    std::size_t bytes = 0;
    std::size_t blocks = 0;
  };
  std::vector<thread_cache_holding> thread_caches;

  // What would have been given back had the caller done this first. The pool already tried both
  // before throwing, so nonzero values mean memory that became free during the attempt.
  std::size_t releasable_by_trim = 0;         // wholly free slabs + the heap's wholly free pages
  std::size_t largest_free_bytes = 0;         // the heap's largest free extent (pending ones included)
  std::size_t releasable_by_synchronize = 0;  // pending behind events
};
[[nodiscard]] std::string to_json(const oom_report& report);

}  // namespace cudapool
