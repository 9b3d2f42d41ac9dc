// cudapool/stream_arenas.hpp - a pool of any variant in which each stream keeps to its own memory
// (pool_options::stream_arenas; make_pool applies it).
//
// A program that allocates and frees on several streams pays, in one shared pool, for every
// stream-ordered free: the free waits in an epoch of its stream until one event covers it, and
// another stream's miss closes those epochs (an event each) and merges or hands on what they hold
// (docs/design.md, "s44"). Most frees come back on the stream that allocated: mlp_4stream frees
// nothing on another stream. stream_arenas<Pool> gives each of up to options.stream_arenas streams
// an arena: a Pool of its own, whose memory only that stream (its owner) allocates from. A free of
// an arena's memory on its owner stream is an immediate free in that Pool: stream order alone makes
// the reuse safe, with no epoch and no event. A free on any other stream is stream-ordered in the
// Pool that holds the memory, as always. The default stream, the per-thread and legacy default
// streams, and streams beyond the arenas share arena 0, a Pool that works as a plain pool does.
//
// What the arenas cost and how memory moves between them:
//   - memory an arena holds free is the device's only once its owner's work has completed: before
//     an arena unmaps a page (trim, remap_ratio, the release threshold, destruction) its owner
//     stream is synchronized (core/arena_backend.hpp). An arena's own remap therefore waits for
//     its stream's work.
//   - an allocation that fails in its arena (device out of memory, or byte_limit, which bounds
//     the bytes all arenas map together) trims every other arena, synchronizing their owners, and
//     tries again before it throws out_of_memory (the arena's report).
//   - each arena has its own slabs of the size classes and its own free ranges. So that slabs of
//     the large classes, a few blocks each, do not multiply by the arenas, every arena's classes
//     stop at arena_max_class_bytes (256 KiB by default; larger requests take the heap's best fit):
//     mlp_4stream held 1.184x its live peak with 1 MiB classes, 1.070x with 256 KiB (bench's
//     replay/<v>-arenas-1m and <v>-arenas).
//   - flush_stream(s) (and retire_stream) lets s's arena go when s owns one: one event recorded on
//     s (no wait); a new stream takes the arena once that event has completed (a query), and an
//     unmap of the arena before then waits for it. Call it before destroying s, as the stream
//     contract asks of every stream given to deallocate.
// Arenas need virtual memory (their pages are found by address) and growth; with either off, with
// any debug option on (the debug layer would see a stream's frees as immediate) or with a
// CUDAPOOL_TRACE recording, every stream shares arena 0.
//
// stats() sums the arenas (peak_reserved_bytes is the peak of their mapped bytes together;
// peak_in_use and peak_requested are sums of the arenas' peaks, an upper bound).
//
// Thread-safety: as Pool. Frees on an owner stream racing with flush_stream of that stream are the
// caller's race (as destroying a stream with frees in flight).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>

#include <cudapool/detail/core/arena_backend.hpp>
#include <cudapool/detail/core/arith.hpp>
#include <cudapool/backend.hpp>
#include <cudapool/diagnostics.hpp>
#include <cudapool/errors.hpp>
#include <cudapool/options.hpp>
#include <cudapool/stats.hpp>

namespace cudapool {

namespace detail {
// Adds part's counts to total (stats of several arenas as one pool's).
void add_arena_stats(pool_stats& total, const pool_stats& part);
// Whether options (and the environment) leave arenas on: virtual memory, growth, no debug feature.
[[nodiscard]] bool arenas_possible(const pool_options& options, const backend& device) noexcept;
}  // namespace detail

template <class Pool>
class stream_arenas {
 public:
  static constexpr std::size_t max_arenas = 64;
  static_assert(max_arenas < 255, "hints_ holds 1 + an arena index in a byte");

  // options.stream_arenas: how many streams get an arena of their own (0: none; every stream
  // shares arena 0). Throws what Pool's constructor throws for the options.
  stream_arenas(std::shared_ptr<backend> device, const pool_options& options)
      : options_(options),
        arena_count_(detail::arenas_possible(options, *device) ? std::min(options.stream_arenas, max_arenas) : 0),
        directory_(std::make_shared<core::arena_directory>(options.byte_limit)),
        device_(device) {
    validate(options);
    pool_options shared = options;
    shared.stream_arenas = 0;
    if (arena_count_ != 0 && shared.address_reservation == 0) {
      // The address range each arena reserves: what a pool would (twice the limit, or the device).
      shared.address_reservation = core::round_up(
          options.byte_limit != 0 ? 2 * options.byte_limit : 2 * device->memory_bytes(), device->page_bytes());
    }
    if (arena_count_ != 0) shared.max_class_bytes = std::min(shared.max_class_bytes, options.arena_max_class_bytes);
    inner_ = shared;
    inner_.initial_reservation = 0;  // arena 0 maps it; the others start empty
    shared_ = std::make_unique<Pool>(make_device(1), shared);
  }
  stream_arenas(const stream_arenas&) = delete;
  stream_arenas& operator=(const stream_arenas&) = delete;
  // The arenas go first (each waits for its stream-ordered frees and synchronizes its owner), then
  // arena 0.
  ~stream_arenas() {
    for (std::size_t i = arena_count_; i-- > 0;) arenas_[i].pool.reset();
  }

  [[nodiscard]] void* allocate(std::size_t bytes, stream_ref s = {}) { return allocate(bytes, min_alignment, s); }
  // Throws what Pool::allocate throws (std::invalid_argument for an alignment that is not a power of
  // two, out_of_memory with the arena's report).
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment, stream_ref s = {}) {
    // No handler on the hot path: exhaustion comes back as nullptr. (s48 had a try here, whose
    // handler kept six registers: 18.7 instructions a 4 KiB pair on the default stream, now 7.)
    if (void* p = pool_for(s).allocate_or_null(bytes, alignment, s)) [[likely]] return p;
    return allocate_relieved(bytes, alignment, s);
  }
  [[nodiscard]] void* try_allocate(std::size_t bytes, stream_ref s = {}) noexcept {
    return try_allocate(bytes, min_alignment, s);
  }
  [[nodiscard]] void* try_allocate(std::size_t bytes, std::size_t alignment, stream_ref s = {}) noexcept {
    try {
      return allocate(bytes, alignment, s);
    } catch (...) {
      return nullptr;
    }
  }

  void deallocate(void* p) noexcept { pool_of(p).deallocate(p); }
  void deallocate(void* p, stream_ref s) noexcept {
    if (claimed_.load(std::memory_order_acquire) == 0) return shared_->deallocate(p, s);  // arena 0 alone
    const std::uint32_t id = directory_->find(p);
    if (id > 1) {
      arena& a = arenas_[id - 2];
      if (a.device->owner() == s.native()) return a.pool->deallocate(p);  // its owner: stream order suffices
      return a.pool->deallocate(p, s);
    }
    shared_->deallocate(p, s);
  }
  void deallocate(void* p, std::size_t, stream_ref s) noexcept { deallocate(p, s); }
  void deallocate(void* p, std::size_t, std::size_t, stream_ref s) noexcept { deallocate(p, s); }

  // Records the open epochs of s in every arena; when s owns an arena, lets it go (an event on s,
  // no wait) for another stream.
  void flush_stream(stream_ref s) {
    for_each_pool([&](Pool& p) { p.flush_stream(s); });
    release_owner(s);
  }
  // As flush_stream, through Pool::retire_stream where it has one.
  void retire_stream(stream_ref s) {
    for_each_pool([&](Pool& p) {
      if constexpr (requires { p.retire_stream(s); }) {
        p.retire_stream(s);
      } else {
        p.flush_stream(s);
      }
    });
    release_owner(s);
  }
  void flush_thread_cache() noexcept
    requires requires(Pool& p) { p.flush_thread_cache(); }
  {
    for_each_pool([](Pool& p) { p.flush_thread_cache(); });
  }

  // Every arena's trim (an arena's owner is synchronized before its pages go).
  std::size_t trim() {
    std::size_t bytes = 0;
    for_each_pool([&](Pool& p) { bytes += p.trim(); });
    return bytes;
  }

  [[nodiscard]] pool_stats stats() const {
    pool_stats st = shared_->stats();
    const std::size_t claimed = claimed_.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < claimed; ++i) detail::add_arena_stats(st, arenas_[i].pool->stats());
    if (arena_count_ != 0) {
      st.peak_reserved_bytes = directory_->peak_mapped_bytes();
      st.heap.peak_mapped_bytes = st.peak_reserved_bytes;
    }
    return st;
  }
  [[nodiscard]] pointer_info describe(const void* p) const { return pool_of(p).describe(p); }
  std::size_t check_guards() {
    std::size_t n = 0;
    for_each_pool([&](Pool& p) { n += p.check_guards(); });
    return n;
  }

  [[nodiscard]] const pool_options& options() const noexcept { return options_; }
  [[nodiscard]] backend& device() const noexcept { return *device_; }
  [[nodiscard]] static constexpr std::string_view variant() noexcept { return Pool::variant(); }
  // How many streams may own an arena (0: arenas off, see above), and how many do now.
  [[nodiscard]] std::size_t arena_count() const noexcept { return arena_count_; }
  [[nodiscard]] std::size_t owned_arenas() const noexcept {
    std::size_t n = 0;
    const std::size_t claimed = claimed_.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < claimed; ++i) n += arenas_[i].device->owner() != nullptr;
    return n;
  }
  // Which of the 256 slots of the streams' hints s uses (Fibonacci hashing of the handle); streams
  // may share one (tests find such streams with it).
  [[nodiscard]] static std::size_t hint_slot(stream_ref s) noexcept {
    return static_cast<std::size_t>((reinterpret_cast<std::uintptr_t>(s.native()) * 0x9E3779B97F4A7C15ull) >> 56);
  }
  // Owner streams synchronized before an arena unmapped memory, over all arenas.
  [[nodiscard]] std::uint64_t fences() const noexcept {
    std::uint64_t n = 0;
    const std::size_t claimed = claimed_.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < claimed; ++i) n += arenas_[i].device->fences();
    return n;
  }

 private:
  struct arena {
    std::shared_ptr<core::arena_backend> device;  // its owner; set once, before claimed_ counts it
    std::unique_ptr<Pool> pool;
  };

  // The device of arena `id` (1: arena 0), which records the pages it maps under id.
  std::shared_ptr<core::arena_backend> make_device(std::uint32_t id) {
    return std::make_shared<core::arena_backend>(device_, directory_, id);
  }

  // Streams that may own an arena: not the default stream, nor CUDA's legacy (1) and per-thread
  // (2) default handles, which name a different stream in every thread.
  [[nodiscard]] static bool ownable(stream_ref s) noexcept { return reinterpret_cast<std::uintptr_t>(s.native()) > 2; }

  // s's arena: the one its hint names when s owns it (one load and a compare, whichever of the
  // arenas; scanning them by owner mispredicted the loop's exit, 0.4 branches per replayed
  // operation of mlp_4stream), else found by owner or claimed.
  [[gnu::always_inline]] Pool& pool_for(stream_ref s) {
    if (!ownable(s)) return *shared_;
    const std::uint8_t h = hints_[hint_slot(s)].load(std::memory_order_acquire);
    if (h != 0 && arenas_[h - 1].device->owner() == s.native()) [[likely]] return *arenas_[h - 1].pool;
    return find_or_claim(s);
  }

  // Gives s its arena, a free arena (making its pool the first time), or arena 0 when every arena
  // is owned; hints s's slot at the arena it gets.
  [[gnu::noinline]] Pool& find_or_claim(stream_ref s) {
    if (arena_count_ == 0) return *shared_;
    // Every arena made and owned, none let go: no arena can change hands, so without the lock (and
    // without querying every arena's release) s either owns one, its hint taken by another stream
    // of its slot, or shares arena 0 as a stream beyond the arenas.
    if (claimed_.load(std::memory_order_acquire) == arena_count_ && unowned_.load(std::memory_order_acquire) == 0) {
      const std::size_t i = owned_by(s, arena_count_);
      return i != arena_count_ ? *arenas_[i].pool : *shared_;
    }
    std::lock_guard lock(mutex_);
    const std::size_t i = claim(s);
    if (i == arena_count_) return *shared_;
    hints_[hint_slot(s)].store(static_cast<std::uint8_t>(i + 1), std::memory_order_release);
    return *arenas_[i].pool;
  }

  // The index among arenas_[0, n) of the arena s owns (n: none).
  [[nodiscard]] std::size_t owned_by(stream_ref s, std::size_t n) const noexcept {
    std::size_t i = 0;
    while (i < n && arenas_[i].device->owner() != s.native()) ++i;
    return i;
  }

  // The index of the arena s owns or now takes (arena_count_: none left). Under mutex_.
  std::size_t claim(stream_ref s) {
    const std::size_t n = claimed_.load(std::memory_order_relaxed);
    if (const std::size_t i = owned_by(s, n); i != n) return i;  // its hint was another stream's
    for (std::size_t i = 0; i < n; ++i) {  // a let-go arena whose last owner's work has completed
      if (arenas_[i].device->reusable()) {
        arenas_[i].device->set_owner(s.native());
        unowned_.fetch_sub(1, std::memory_order_relaxed);
        return i;
      }
    }
    if (n == arena_count_) return arena_count_;
    arenas_[n].device = make_device(static_cast<std::uint32_t>(n + 2));
    arenas_[n].pool = std::make_unique<Pool>(arenas_[n].device, inner_);
    arenas_[n].device->set_owner(s.native());
    claimed_.store(n + 1, std::memory_order_release);
    return n;
  }

  void release_owner(stream_ref s) {
    if (!ownable(s)) return;
    std::lock_guard lock(mutex_);
    const std::size_t n = claimed_.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < n; ++i) {
      if (arenas_[i].device->owner() != s.native()) continue;
      arenas_[i].device->release_owner();  // an event on s: the next owner waits for nothing else
      unowned_.fetch_add(1, std::memory_order_release);
    }
  }

  // s's arena had no memory for the request (or it was for 0 bytes): the other arenas give back
  // what they hold free and the arena tries again; out_of_memory with its report if it still fails.
  [[gnu::noinline]] void* allocate_relieved(std::size_t bytes, std::size_t alignment, stream_ref s) {
    if (bytes == 0) return nullptr;
    Pool& pool = pool_for(s);
    if (arena_count_ == 0 || relieve(pool) == 0) pool.throw_out_of_memory(bytes, alignment);  // its report
    return pool.allocate(bytes, alignment, s);
  }

  // An arena ran out: the others give back what they hold free (their owners synchronized first).
  // The bytes they gave back.
  std::size_t relieve(Pool& short_of_memory) {
    std::size_t bytes = 0;
    for_each_pool([&](Pool& p) {
      if (&p != &short_of_memory) bytes += p.trim();
    });
    return bytes;
  }

  [[nodiscard]] Pool& pool_of(const void* p) const noexcept {
    // No arena has a pool yet (arenas off, or only the default stream so far): arena 0's.
    if (claimed_.load(std::memory_order_acquire) == 0) return *shared_;
    const std::uint32_t id = directory_->find(p);
    return id > 1 ? *arenas_[id - 2].pool : *shared_;
  }

  template <class F>
  void for_each_pool(F&& f) {
    f(*shared_);
    const std::size_t n = claimed_.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < n; ++i) f(*arenas_[i].pool);
  }

  const pool_options options_;
  const std::size_t arena_count_;
  const std::shared_ptr<core::arena_directory> directory_;
  const std::shared_ptr<backend> device_;
  pool_options inner_;  // the arenas' options
  std::mutex mutex_;    // claims and releases of arenas
  std::atomic<std::size_t> claimed_{0};  // arenas_[0, claimed_) have a pool
  std::atomic<std::size_t> unowned_{0};  // of those, let go by their owners (written under mutex_)
  // Per hint_slot(s): 1 + the index of the arena s was last given (0: none). Written under mutex_
  // (release, after the arena's pool and owner); only a hint: pool_for checks the arena's owner,
  // so a hint left by a stream that let its arena go, or by another stream of the same slot,
  // costs the scan and never gives s an arena it does not own.
  std::array<std::atomic<std::uint8_t>, 256> hints_{};
  std::array<arena, max_arenas> arenas_{};
  std::unique_ptr<Pool> shared_;  // arena 0; destroyed last
};

}  // namespace cudapool
