// diagnostics.hpp - the pool's debug layer (debug_options): sanitizer heaps and regions, guard
// bytes, allocation stacks, trace recording, and the live-allocation records that describe(p) and
// the grouped leak report read.
//
// pool_core owns one only when some debug option is on; basic_pool then routes every allocation
// and free through its noinline debug paths, which call the hooks below. With every option off
// nothing here exists and the hot path pays one branch.
//
// Guard checks. A free enqueues a device check of the block's guard on the freeing stream (the
// default stream for an immediate free), and the block is reused only behind an event recorded
// after that check. Failures come back tagged with the pool instance and the block's address; the
// pool keeps, per address, the record of its latest check. Before it replaces that record (at the
// next free of the same address, which comes after the earlier check completed) it takes the
// failures the backend has, so a failure always finds its own record.
//
// Thread-safety: every member function is thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <cudapool/detail/core/call_stack.hpp>
#include <cudapool/detail/core/trace_writer.hpp>
#include <cudapool/backend.hpp>
#include <cudapool/diagnostics.hpp>
#include <cudapool/options.hpp>

namespace cudapool::core {

class diagnostics {
 public:
  // nullptr when every debug feature is off (and CUDAPOOL_TRACE is unset or ignored).
  [[nodiscard]] static std::unique_ptr<diagnostics> make(const pool_options& options, backend& device);
  diagnostics(const debug_options& options, backend& device, std::shared_ptr<trace_writer> trace);
  diagnostics(const diagnostics&) = delete;
  diagnostics& operator=(const diagnostics&) = delete;
  ~diagnostics();

  [[nodiscard]] std::size_t guard_bytes() const noexcept { return options_.guard_bytes; }
  [[nodiscard]] bool records_stacks() const noexcept { return options_.record_stacks; }

  // Memory the pool binds (a slab, a large chunk) and gives back: sanitizer heaps.
  void on_chunk_bound(void* base, std::size_t bytes);
  void on_chunk_released(void* base) noexcept;

  // A new live allocation p of `bytes` inside the chunk bound at `chunk_base` (for a large
  // allocation: its own chunk of `chunk_bytes`, bound here), allocated on s.
  void on_alloc(void* p, std::size_t bytes, void* chunk_base, std::size_t chunk_bytes, bool large, stream_ref s);
  // A valid free of live p, before the memory can be reused: drops its record, unregisters it, and
  // with guards enqueues the guard check on `check_stream`. False when p has no live record (a
  // racing second free): the caller then treats it as invalid.
  [[nodiscard]] bool on_free(const void* p, stream_ref check_stream, bool stream_ordered) noexcept;
  [[nodiscard]] bool is_live(const void* p) const;

  // Reports the guard failures the backend has seen so far (to on_guard_damage). Returns how many.
  std::size_t poll() noexcept;

  // What the records know about live p; nullopt when p has none.
  struct live_info {
    std::size_t bytes = 0;
    std::uint64_t stream_id = 0;
    std::string stack;
  };
  [[nodiscard]] std::optional<live_info> live(const void* p) const;

  // With record_stacks: prints the live allocations grouped by allocation stack; returns false
  // (printing nothing) when stacks are not recorded or nothing is live.
  bool report_leaks_by_stack(std::string_view variant) const;

  // Unregisters every region and heap still registered (called before the memory goes back).
  void release_all() noexcept;

 private:
  struct live_record {
    std::size_t bytes = 0;
    std::uint64_t stream_id = 0;
    std::uint32_t stack = 0;
    std::uint64_t trace_id = 0;
    void* heap = nullptr;
    bool own_heap = false;  // a large allocation's heap, released with it
  };
  struct check_record {
    std::size_t bytes = 0;
    std::uint64_t alloc_stream_id = 0;
    std::uint64_t free_stream_id = 0;
    std::uint32_t stack = 0;
  };
  static constexpr std::size_t shard_count = 16;
  struct alignas(64) shard {
    mutable std::mutex mutex;
    std::unordered_map<std::uintptr_t, live_record> live;     // GUARDED_BY(mutex)
    std::unordered_map<std::uintptr_t, check_record> checks;  // GUARDED_BY(mutex)
  };
  shard& shard_of(const void* p) const noexcept;
  [[nodiscard]] std::uint64_t stream_key(stream_ref s) const;
  [[nodiscard]] std::uint64_t tag_of(const void* p) const noexcept;
  void report_failure(const guard_failure& f) noexcept;
  [[nodiscard]] std::string stack_text(std::uint32_t id) const;
  friend void route_guard_failures(const std::vector<guard_failure>& failures) noexcept;

  const debug_options options_;
  backend& device_;
  const std::uint64_t instance_;  // 16 bits, the top of every guard-check tag
  std::shared_ptr<trace_writer> trace_;
  stack_table stacks_;
  std::unique_ptr<shard[]> shards_;
  mutable std::mutex heaps_mutex_;
  std::unordered_map<std::uintptr_t, void*> heaps_;  // chunk base -> heap handle; GUARDED_BY
};

}  // namespace cudapool::core
