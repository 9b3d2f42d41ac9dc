// basic_pool.hpp - the public interface every variant exposes, written once.
//
// basic_pool<FreeLists> is the whole allocator: the variant supplies only FreeLists, the host
// synchronisation of its per-class free lists, and everything else (size classes, the slow path's
// order of reclaim -> grow -> wait -> trim -> out_of_memory, stream-ordered frees, the large path,
// validation of frees, stats) comes from pool_core. A FreeLists type provides:
//
//   static constexpr std::string_view name;
//   explicit FreeLists(core::pool_core&);
//   block_index pop(size_class) noexcept;                  // hot; no_block when empty
//   void push(size_class, block_index) noexcept;           // hot
//   void push_chain(size_class, block_chain) noexcept;     // growth and reclaim batches
//   block_chain take_all(size_class) noexcept;             // trim: empty the lists (chain ends in no_block)
//   std::size_t free_blocks(size_class) const noexcept;    // stats
//   std::size_t cached_blocks(size_class) const noexcept;  // stats (per-thread/stream caches)
//
// A stream-partitioned FreeLists (the stream variant) also provides, and basic_pool then uses:
//   block_index pop(size_class, stream_ref) noexcept;      // allocate on a stream
//   void push(size_class, block_index, stream_ref) noexcept;  // stream-ordered free: no epoch,
//                                                          //   the stream's own order protects it
//   block_index steal(size_class, stream_ref, steal_mode); // from another stream: `completed`
//                                                          //   ones only (no wait), or `ordered`
//                                                          //   behind a device-side wait
//   std::size_t donate(size_class, stream_ref) noexcept;   // before growth: other streams'
//                                                          //   surplus to epochs (no wait)
//
// Optional, any FreeLists: free_block take(size_class) and void put(size_class, free_block), the
// hot pop and push of lists that keep each free block's address (per-thread caches); basic_pool
// then uses them on its fast paths.
// Optional, any FreeLists: void push_released(size_class, block_chain), reclaim's and trim's
// batches (blocks whose frees completed) where they differ from growth's (tls: the calling
// thread's empty bin first).
// Optional, any FreeLists: bool before_growth() gives back what the lists hold where nobody uses it
// (idle per-thread caches); the slow path calls it after reclaim found nothing, before it grows,
// and looks again when it returns true.
// Optional, any FreeLists: void holdings(oom_report&) const adds what the lists hold per stream or
// per thread to out_of_memory's report (and so to its message).
//
// Stream contract. deallocate(p) means the caller guarantees that no device work that uses p is
// pending: the block is reusable at once. deallocate(p, s) means p is reusable once the work
// enqueued on s so far has completed: the pool records one event per batch of such frees and
// reuses the blocks only after it has seen the event complete. A stream given to deallocate must
// be flushed (flush_stream) before it is destroyed. allocate() does not order anything: the
// returned block has no pending device work on any stream. Streams must belong to the pool's
// device (core/stream_admission.hpp): allocate on another device's stream throws
// std::invalid_argument, deallocate on one is rejected as an invalid free
// (stream_of_another_device) and the allocation stays live.
#pragma once

#include <bit>
#include <concepts>
#include <limits>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#include <cudapool/detail/core/arith.hpp>
#include <cudapool/detail/core/pool_core.hpp>
#include <cudapool/detail/core/stream_admission.hpp>
#include <cudapool/backend.hpp>
#include <cudapool/diagnostics.hpp>
#include <cudapool/errors.hpp>
#include <cudapool/options.hpp>
#include <cudapool/stats.hpp>

namespace cudapool {

template <class L>
concept stream_partitioned = requires(L& l, core::size_class c, block_index b, stream_ref s) {
  { l.pop(c, s) } -> std::same_as<block_index>;
  l.push(c, b, s);
  { l.steal(c, s, core::steal_mode::completed) } -> std::same_as<block_index>;
  { l.donate(c, s) } -> std::same_as<std::size_t>;
};

template <class L>
concept address_caching = requires(L& l, core::size_class c, core::free_block b) {
  { l.take(c) } -> std::same_as<core::free_block>;
  l.put(c, b);
};

// DebugHooks = false compiles the debug paths out (and rejects debug options): the "plain" build
// that bench measures beside the default one, to show what the debug branch costs when every
// debug option is off.
template <class FreeLists, bool DebugHooks = true>
class basic_pool final : private core::free_list_sink {
 public:
  using size_class = core::size_class;

  explicit basic_pool(std::shared_ptr<backend> device, const pool_options& options = {})
      : core_(std::move(device), options, FreeLists::name), lists_(core_) {
    if (!DebugHooks && core_.debugging()) {
      throw std::invalid_argument("cudapool: this pool type was built without debug hooks; debug options (or "
                                  "CUDAPOOL_TRACE) need basic_pool<..., true>");
    }
  }
  basic_pool(const basic_pool&) = delete;
  basic_pool& operator=(const basic_pool&) = delete;
  // Waits for pending stream-ordered frees, reports leaks, releases all device memory.
  ~basic_pool() = default;

  // Thread-safe. Throws out_of_memory when exhausted, std::invalid_argument for an alignment that
  // is not a power of two or a stream of another device, backend_error when the backend fails.
  // allocate(0) returns nullptr.
  [[nodiscard]] void* allocate(std::size_t bytes, stream_ref s = {}) { return allocate(bytes, min_alignment, s); }
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment, stream_ref s = {}) {
    void* p = allocate_or_null(bytes, alignment, s);
    if (p == nullptr && bytes != 0) [[unlikely]] throw_out_of_memory(bytes, alignment);
    return p;
  }
  // As allocate, but nullptr when exhausted instead of out_of_memory (the other errors throw): for a
  // front that first frees memory elsewhere (stream_arenas), whose hot path then needs no handler.
  [[nodiscard]] void* allocate_or_null(std::size_t bytes, std::size_t alignment, stream_ref s = {}) {
    if (!core::power_of_two(alignment)) {
      throw std::invalid_argument("cudapool: alignment " + std::to_string(alignment) + " is not a power of two");
    }
    return allocate_impl(bytes, alignment, s);
  }
  // Throws out_of_memory with this pool's report for a request of bytes (what allocate throws when
  // exhausted; for a front whose allocate_or_null got nullptr).
  [[gnu::noinline, noreturn]] void throw_out_of_memory(std::size_t bytes, std::size_t alignment) {
    std::shared_ptr<oom_report> report;
    try {
      report = std::make_shared<oom_report>(core_.exhaustion_report(bytes, alignment, stats()));
      if constexpr (requires(const FreeLists& l, oom_report& r) { l.holdings(r); }) lists_.holdings(*report);
    } catch (const std::exception& e) {  // out of host memory too: say what was asked
      throw out_of_memory("cudapool: out of memory: requested " + std::to_string(bytes) + " B (no report: " +
                          e.what() + ")");
    }
    std::string message = core_.describe_exhaustion(*report);
    throw out_of_memory(std::move(message), std::move(report));
  }

  // Thread-safe. nullptr when exhausted (or on any failure, or for 0 bytes).
  [[nodiscard]] void* try_allocate(std::size_t bytes, stream_ref s = {}) noexcept {
    return try_allocate(bytes, min_alignment, s);
  }
  [[nodiscard]] void* try_allocate(std::size_t bytes, std::size_t alignment, stream_ref s = {}) noexcept {
    if (!core::power_of_two(alignment)) return nullptr;
    try {
      return allocate_impl(bytes, alignment, s);
    } catch (...) {
      return nullptr;
    }
  }

  // Thread-safe. Immediate free: no device work on p may be pending. Invalid pointers (foreign,
  // interior, already freed) are reported through options().on_invalid_free and ignored.
  void deallocate(void* p) noexcept {
    if (p == nullptr) return;
    if (DebugHooks && core_.debugging()) [[unlikely]] return deallocate_debug(p, nullptr);
    release_now(p);
  }
  // Thread-safe. Stream-ordered free: reusable once the work enqueued on s so far has completed.
  void deallocate(void* p, stream_ref s) noexcept {
    if (p == nullptr) return;
    if (!admission_.cached(s)) [[unlikely]] return deallocate_on_new_stream(p, s);
    deallocate_admitted(p, s);
  }
  // cuda::mr shapes: the size and alignment are not needed to find the block.
  void deallocate(void* p, std::size_t, stream_ref s) noexcept { deallocate(p, s); }
  void deallocate(void* p, std::size_t, std::size_t, stream_ref s) noexcept { deallocate(p, s); }

  // Thread-safe. Records the event of s's open epoch of frees now.
  void flush_stream(stream_ref s) {
    core_.epochs().flush_stream(s);
    admission_.forget();  // s may be destroyed next, and its handle reused on another device
  }

  // Thread-safe. Stream-partitioned variants: p (live) is also used on s; its free waits for s too.
  // Throws std::invalid_argument for a pointer that is not the start of a live allocation.
  void record_stream(void* p, stream_ref s)
    requires requires(FreeLists& l, block_index b, stream_ref x) { l.record_stream(b, x); }
  {
    if (!admission_.admits(s)) throw_stream_of_another_device(s);
    const core::lookup_result r = core_.lookup(p);
    if (r.what == core::lookup_result::kind::block && !r.interior) {
      lists_.record_stream(r.index, s);
      return;
    }
    const pointer_info info = r.what == core::lookup_result::kind::other ? core_.describe(p) : pointer_info{};
    if (info.what != pointer_info::kind::large || info.status != pointer_info::state::live) {
      throw std::invalid_argument("cudapool: record_stream needs the start of a live allocation of this pool");
    }
    lists_.record_large_stream(p, s);
  }
  // Thread-safe. Stream-partitioned variants: call before destroying s. Its blocks leave behind one
  // final event; a later stream with the same handle starts afresh.
  void retire_stream(stream_ref s)
    requires requires(FreeLists& l, stream_ref x) { l.retire_stream(x); }
  {
    lists_.retire_stream(s);
    admission_.forget();
  }

  // Thread-safe. Variants with per-thread caches (tls): hands the calling thread's cached blocks
  // back to the shared layer, e.g. before the thread goes idle.
  void flush_thread_cache() noexcept
    requires requires(FreeLists& l) { l.flush_thread_cache(); }
  {
    lists_.flush_thread_cache();
  }

  // Thread-safe. Closes the open epochs (one event each: what they hold is reclaimable once its
  // stream gets there; no wait), makes completed stream-ordered frees reusable, gives every wholly
  // free slab to the heap, and unmaps the heap's wholly free pages (the pages of
  // initial_reservation stay). Returns the bytes given back to the backend.
  std::size_t trim() {
    core_.epochs().close_open_epochs();
    core_.epochs().reclaim(*this);
    for (size_class c = 0; c < core_.classes().count(); ++c) core_.release_free_slabs(c, lists_.take_all(c), *this);
    return core_.trim_heap();
  }

  // Thread-safe. A consistent snapshot only at quiescence.
  [[nodiscard]] pool_stats stats() const {
    pool_stats st = core_.stats();
    if constexpr (requires { lists_.stream_queries(); }) st.stream_queries = lists_.stream_queries();
    for (size_class c = 0; c < st.classes.size(); ++c) {
      class_stats& cs = st.classes[c];
      cs.free_blocks = lists_.free_blocks(c);
      cs.cached_blocks = lists_.cached_blocks(c);
      st.free_bytes += cs.free_blocks * cs.block_bytes;
      st.cached_bytes += cs.cached_blocks * cs.block_bytes;
    }
    return st;
  }

  // Thread-safe. Whether p belongs to the pool and, if so, its block, class, state (live, free,
  // pending behind which stream) and, with debug.record_stacks, its allocation stack. Any pointer
  // may be asked about; device memory is never touched.
  [[nodiscard]] pointer_info describe(const void* p) const { return core_.describe(p); }

  // Thread-safe. With debug.guard_bytes: waits for the device, then reports (to
  // debug.on_guard_damage) every damaged guard found by the checks of frees so far. Returns how
  // many were reported. Without guards it returns 0 at once.
  std::size_t check_guards() { return core_.check_guards(); }

  [[nodiscard]] const pool_options& options() const noexcept { return core_.options(); }
  [[nodiscard]] backend& device() const noexcept { return core_.device(); }
  [[nodiscard]] static constexpr std::string_view variant() noexcept { return FreeLists::name; }

 private:
  [[gnu::always_inline]] block_index pop(size_class c, stream_ref s) noexcept {
    if constexpr (stream_partitioned<FreeLists>) {
      return lists_.pop(c, s);
    } else {
      return lists_.pop(c);
    }
  }

  // Out of line, the lookup result in registers, so the hot deallocate never builds it in memory.
  [[gnu::noinline]] void deallocate_rejected(void* p, core::lookup_result::kind what, size_class cls, block_index index,
                                             bool interior, const stream_ref* s) noexcept {
    core::lookup_result r;
    r.what = what;
    r.cls = cls;
    r.index = index;
    r.interior = interior;
    free_other(p, r, s);
  }

  // Frees that are not a block start: large allocations (whose recorded streams, with the stream
  // variant, the free waits for first) and invalid pointers (reported by the core).
  void free_other(void* p, const core::lookup_result& r, const stream_ref* s) noexcept {
    if constexpr (requires(FreeLists& l) { l.before_large_free(p, s); }) {
      if (r.what == core::lookup_result::kind::other) lists_.before_large_free(p, s);
    }
    core_.deallocate_other(p, r, s);
  }

  // The stream-ordered free once s is admitted.
  [[gnu::always_inline]] void deallocate_admitted(void* p, stream_ref s) noexcept {
    if (DebugHooks && core_.debugging()) [[unlikely]] return deallocate_debug(p, &s);
    const core::lookup_result r = core_.lookup(p);
    if constexpr (stream_partitioned<FreeLists>) {
      // Reusable at once on s itself: stream order makes that safe without an event.
      if (r.what == core::lookup_result::kind::block && !r.interior &&
          core_.retire(r, core::block_state::free)) [[likely]] {
        lists_.push(r.cls, r.index, s);
        return;
      }
    } else {
      if (r.what == core::lookup_result::kind::block && !r.interior &&
          core_.retire(r, core::block_state::pending)) [[likely]] {
        core_.epochs().defer(r.index, s);
        return;
      }
    }
    deallocate_rejected(p, r.what, r.cls, r.index, r.interior, &s);
  }

  // The first free on s by this thread (since the last forget): out of line, then as usual.
  [[gnu::noinline]] void deallocate_on_new_stream(void* p, stream_ref s) noexcept {
    if (!admission_.admit(s)) return core_.report_invalid(p, invalid_free_reason::stream_of_another_device);
    deallocate_admitted(p, s);
  }

  // The immediate free without debug bookkeeping (also for an allocation the debug layer never
  // recorded).
  [[gnu::always_inline]] void release_now(void* p) noexcept {
    const core::lookup_result r = core_.lookup(p);
    if (r.what == core::lookup_result::kind::block && !r.interior && core_.retire(r, core::block_state::free))
        [[likely]] {
      if constexpr (address_caching<FreeLists>) {
        lists_.put(r.cls, {p, r.index});  // p is the block's start
      } else {
        lists_.push(r.cls, r.index);
      }
      return;
    }
    deallocate_rejected(p, r.what, r.cls, r.index, r.interior, nullptr);
  }

  void* allocate_impl(std::size_t bytes, std::size_t alignment, stream_ref s) {
    if (bytes == 0) return nullptr;
    if (!admission_.cached(s)) [[unlikely]] return allocate_on_new_stream(bytes, alignment, s);
    return allocate_admitted(bytes, alignment, s);
  }

  // The first allocation on s by this thread (since the last forget): out of line, then as usual.
  [[gnu::noinline]] void* allocate_on_new_stream(std::size_t bytes, std::size_t alignment, stream_ref s) {
    if (!admission_.admit(s)) throw_stream_of_another_device(s);
    return allocate_admitted(bytes, alignment, s);
  }

  [[gnu::always_inline]] void* allocate_admitted(std::size_t bytes, std::size_t alignment, stream_ref s) {
    if (DebugHooks && core_.debugging()) [[unlikely]] return allocate_debug(bytes, alignment, s);
    const size_class c = alignment <= min_alignment ? core_.classes().lookup(bytes)
                                                    : core_.classes().lookup(bytes, alignment);
    if (c == core::large_class) [[unlikely]] return allocate_large(bytes, alignment, s);
    block_index b = no_block;
    if constexpr (address_caching<FreeLists>) {
      const core::free_block f = lists_.take(c);
      if (f.index != no_block) [[likely]] return core_.hand_out(f, c, bytes);
    } else {
      b = pop(c, s);
    }
    if (b == no_block) [[unlikely]] b = refill(c, s);
    if (b == no_block) return nullptr;
    return core_.hand_out(b, bytes);
  }

  [[gnu::noinline, noreturn]] void throw_stream_of_another_device(stream_ref s) const {
    throw std::invalid_argument("cudapool: a stream of device " + std::to_string(admission_.device_of(s)) +
                                " given to the " + std::string(FreeLists::name) + " pool of device " +
                                std::to_string(core_.device().device()) +
                                " (each device's streams go to that device's pool: per_device::get)");
  }


  // ---- debug paths (core_.debugging(): some debug option is on) ------------------------------

  // As allocate_impl, with room for the guard and the debug layer told about the allocation.
  [[gnu::noinline]] void* allocate_debug(std::size_t bytes, std::size_t alignment, stream_ref s) {
    core::diagnostics& d = *core_.debug();
    if (bytes > std::numeric_limits<std::size_t>::max() - d.guard_bytes()) return nullptr;
    const std::size_t total = bytes + d.guard_bytes();
    const size_class c = alignment <= min_alignment ? core_.classes().lookup(total) : core_.classes().lookup(total, alignment);
    block_index b = no_block;
    void* p = nullptr;
    if (c == core::large_class) {
      p = allocate_large(total, alignment, s);
    } else {
      b = pop(c, s);
      if (b == no_block) b = refill(c, s);
      if (b != no_block) p = core_.hand_out(b, bytes);
    }
    if (p == nullptr) return nullptr;
    try {
      core_.debug_allocated(p, bytes, b, s);
    } catch (...) {
      release_now(p);
      throw;
    }
    return p;
  }

  // Frees with the debug layer. Validation first (the block's state CAS, or the large map), then
  // the debug bookkeeping while nobody can reuse the memory, then the ordinary release. With guard
  // bytes every free is ordered behind its guard check: an immediate free runs the check on the
  // default stream and the block waits for it like a stream-ordered free.
  [[gnu::noinline]] void deallocate_debug(void* p, const stream_ref* s) noexcept {
    core::diagnostics& d = *core_.debug();
    const bool guarded = d.guard_bytes() != 0;
    const stream_ref check_stream = s != nullptr ? *s : stream_ref{};
    const core::lookup_result r = core_.lookup(p);
    if (r.what == core::lookup_result::kind::block && !r.interior) {
      // As the plain paths, except that a guarded block always waits for its check's event.
      const bool deferred = guarded || (s != nullptr && !stream_partitioned<FreeLists>);
      if (!core_.retire(r, deferred ? core::block_state::pending : core::block_state::free)) {
        core_.deallocate_other(p, r, s);
        return;
      }
      (void)d.on_free(p, check_stream, s != nullptr);
      if (deferred) return core_.epochs().defer(r.index, check_stream);
      if constexpr (stream_partitioned<FreeLists>) {
        if (s != nullptr) return lists_.push(r.cls, r.index, *s);
      }
      lists_.push(r.cls, r.index);
      return;
    }
    if (r.what == core::lookup_result::kind::other && d.on_free(p, check_stream, s != nullptr)) {
      // A live large allocation of this pool (its record existed).
      free_other(p, r, guarded || s != nullptr ? &check_stream : nullptr);
      return;
    }
    core_.deallocate_other(p, r, s);
  }

  // The slow path, in order: reuse completed stream-ordered frees; reuse a block freed on s whose
  // epoch is open or not yet seen complete (stream order makes it safe, no event); close the open
  // epochs that can give class c something (epoch_table::close_epochs_for) and look again;
  // [stream-partitioned lists: take blocks of another stream that has completed its work, no wait];
  // poll the pending epochs for up to options().poll_before_growth, then grow (under byte_limit;
  // not past the release threshold for stream-partitioned lists; a new slab first closes the open
  // epochs of large ranges, epoch_table::close_epochs_of_ranges, and polls them); [stream-partitioned:
  // only now, under pressure, take blocks of another stream behind a device-side wait, then wait
  // for pending frees]; then wait for all pending frees and give free slabs of other classes back
  // to the backend, and try once more. No stream waits on another while memory can be had
  // otherwise. Returns a block for the caller, or no_block.
  [[gnu::noinline]] block_index refill(size_class c, stream_ref s) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      // One pass for the attempt's reclaims: a stream found busy is not queried again in it.
      const std::uint64_t pass = core_.epochs().new_reclaim_pass();
      if (core_.epochs().reclaim(*this, pass) > 0) {
        if (block_index b = pop(c, s); b != no_block) return b;
      }
      if (block_index b = core_.epochs().take_from_own_epochs(c, s); b != no_block) return b;
      core_.epochs().close_epochs_for(c);
      if (core_.epochs().reclaim(*this, pass) > 0) {
        if (block_index b = pop(c, s); b != no_block) return b;
      }
      if constexpr (stream_partitioned<FreeLists>) {
        if (block_index b = lists_.steal(c, s, core::steal_mode::completed); b != no_block) return b;
        // Other partitions' surplus of c joins epochs on their streams: reusable by all once those
        // complete (often by the next miss), so partitions do not hoard while the pool grows.
        if (lists_.donate(c, s) > 0 && core_.epochs().reclaim(*this, pass) > 0) {
          if (block_index b = pop(c, s); b != no_block) return b;
        }
        if (!core_.over_release_threshold()) {
          if (block_index b = poll_then([&] { return pop(c, s); }, no_block); b != no_block) return b;
          if (block_index b = grow_class(c, s); b != no_block) return b;
        }
        if (block_index b = lists_.steal(c, s, core::steal_mode::ordered); b != no_block) return b;
        if (core_.epochs().wait_pending(*this) > 0) {
          if (block_index b = pop(c, s); b != no_block) return b;
        }
      } else {
        if (block_index b = poll_then([&] { return pop(c, s); }, no_block); b != no_block) return b;
      }
      if (block_index b = grow_class(c, s); b != no_block) return b;
      if (attempt == 0) {
        core_.epochs().wait_pending(*this);
        if (block_index b = pop(c, s); b != no_block) return b;
        trim();
      }
    }
    core_.count_oom();
    return no_block;
  }

  // Before a growth: polls the pending epochs (epoch_table::poll_before_growth, within
  // options().poll_before_growth; a miss has just closed them) and tries `attempt` again after each
  // completion. What attempt found, or `none` once the budget is spent.
  template <class Attempt, class T>
  T poll_then(Attempt&& attempt, T none) {
    core::epoch_table::poll_deadline deadline{};
    while (core_.epochs().poll_before_growth(*this, deadline) > 0) {
      if (T got = attempt(); got != none) return got;
    }
    return none;
  }

  // Growth of class c (a new slab) until a block is had for the caller; no_block when the heap
  // cannot grow.
  block_index grow_class(size_class c, stream_ref s) {
    // The new slab's frame: large ranges pending on any stream are passed over, so their open
    // epochs close now (not at every miss) and the growth polls for them first.
    if (core_.epochs().close_epochs_of_ranges() > 0) {
      if (block_index b = poll_then([&] { return pop(c, s); }, no_block); b != no_block) return b;
    }
    if constexpr (requires(FreeLists& l) { l.before_growth(); }) {
      if (lists_.before_growth()) {
        if (block_index b = pop(c, s); b != no_block) return b;
      }
    }
    for (;;) {
      const std::uint64_t seen = core_.growth_generation(c);
      if (block_index b = pop(c, s); b != no_block) return b;
      const core::pool_core::grow_result g = core_.grow(c, seen);
      if (g.raced) continue;
      if (g.chain.empty()) return no_block;
      if constexpr (stream_partitioned<FreeLists>) {
        // Through the shared lists, so that the stream's partition takes its batch of the new
        // slab (one for this caller, the rest for later allocations on s).
        lists_.push_chain(c, g.chain);
        maybe_release();
        continue;
      }
      const block_index b = g.chain.head;
      if (g.chain.count > 1) {
        lists_.push_chain(c, {core_.blocks()[b].next.load(std::memory_order_relaxed), g.chain.tail, g.chain.count - 1});
      }
      maybe_release();
      return b;
    }
  }

  // Large requests, from the heap: a free range (ranges freed on s at once, others once their
  // epoch completed); where that range lies in a hole at least eight times the request and one
  // behind another stream's epoch would fit it more tightly (segment_heap::allocate's `behind`),
  // first close that epoch and look for completed ones (no wait), then take what is free; else, if
  // ranges wait behind epochs, close the open epochs of other streams' ranges
  // (epoch_table::close_epochs_for_large: first those that freed the request's bytes, then the
  // others) and look for completed ones (no wait); then poll the pending epochs
  // (epoch_table::poll_before_growth) while ranges are pending; only then new memory (where that
  // would remap pages pending behind s's own epochs, after waiting for them); else wait for every
  // pending free, trim (which gives wholly free slabs to the heap), and try once more. Free slabs are not taken on every miss: taking a variant's lists drains its caches
  // (tls) or waits for streams (stream).
  [[gnu::noinline]] void* allocate_large(std::size_t bytes, std::size_t alignment, stream_ref s) {
    const void* behind = nullptr;
    if (void* p = core_.allocate_large(bytes, alignment, s, false, &behind)) return p;
    if (behind != nullptr) {  // a tighter fit waits behind that stream's epoch; a looser one is free
      core_.epochs().close_epoch_behind(stream_ref(const_cast<void*>(behind)));
      core_.epochs().reclaim(*this);
      if (void* p = core_.allocate_large(bytes, alignment, s, false)) return p;
    }
    for (const std::size_t least : {bytes, std::size_t{0}}) {  // those that freed its bytes, then any
      if (!core_.heap_pending()) break;
      if (core_.epochs().close_epochs_for_large(s, least) > 0 && core_.epochs().reclaim(*this) > 0) {
        if (void* p = core_.allocate_large(bytes, alignment, s, false)) return p;
      }
    }
    if (core_.heap_pending()) {  // ranges, not blocks, serve a large request
      void* p = poll_then([&] { return core_.allocate_large(bytes, alignment, s, false); }, static_cast<void*>(nullptr));
      if (p != nullptr) return p;
    }
    // Growth that would remap pages pending behind s's own epochs waits for them first (never for
    // another stream's): then what it moves does not depend on how far the device has got.
    bool wait_own = false;
    if (void* p = core_.allocate_large(bytes, alignment, s, true, nullptr, &wait_own)) return p;
    if (wait_own) {
      core_.epochs().wait_stream(s, *this);
      if (void* p = core_.allocate_large(bytes, alignment, s, true)) return p;
    }
    core_.epochs().wait_pending(*this);
    trim();
    if (void* p = core_.allocate_large(bytes, alignment, s, true)) return p;
    core_.count_oom();
    return nullptr;
  }

  // The release threshold: idle memory above it goes back to the backend.
  void maybe_release() {
    if (core_.over_release_threshold()) trim();
  }

  // The sink of reclaim: lists that tell released blocks from growth's take them their own way.
  void push_chain(size_class c, core::block_chain chain) noexcept override {
    if constexpr (requires { lists_.push_released(c, chain); }) {
      lists_.push_released(c, chain);
    } else {
      lists_.push_chain(c, chain);
    }
  }

  // Declaration order matters: lists_ is destroyed first, core_ last (it releases the memory).
  core::pool_core core_;
  FreeLists lists_;
  core::stream_admission admission_{core_.device()};
};

}  // namespace cudapool
