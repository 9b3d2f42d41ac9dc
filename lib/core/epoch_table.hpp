// epoch_table.hpp - a pool's stream-ordered frees: every stream's epochs, in shards by stream.
//
// A block freed on a stream waits in the stream's open epoch (defer); closing the epoch records one
// event (close_*); once the event completed, reclaim hands the epoch's blocks to the variant's free
// lists and lets the heap's ranges freed in the epoch (marks: a large free on the stream joins its
// open epoch, mark_stream_free) go to any stream. A miss may reuse a block of its own stream at
// once (take_from_own_epochs), and waits on the device only where nothing else serves it (wait_*).
// The ordering steps themselves are core/epoch_protocol.hpp's, which the model test runs under
// Relacy; this unit owns the streams' records, the pending counts, the reasons epochs close and
// the device-side waits (order_after), for stats and reports.
//
// Why epochs close (pool_stats::epochs_closed_*): full (epoch_batch frees), bytes (a stream's large
// frees reached a sixteenth of the mapped bytes), slow_path (a miss or a wait), other (flushes,
// donations). Each close records one event. Large frees count toward epoch_batch with one stream in
// the heap too: a range freed on s is reusable at once by s, but the slabs of every stream want it
// only once its epoch completed (s25 left marks out until a second stream came: ten more pages in a
// PyTorch process, docs/design.md, "Epochs of one stream").
//
// Thread-safety: every public member function is thread-safe. A stream's records are under its
// shard's mutex (16 shards, so that threads freeing on different streams share no lock); a large
// free's mark takes no lock unless its epoch is full or closing (epoch_protocol.hpp's try_mark).
#pragma once

#include <atomic>
#include <bitset>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include <cudapool/detail/core/block_table.hpp>
#include <cudapool/detail/core/epoch_protocol.hpp>
#include <cudapool/detail/core/segment_heap.hpp>
#include <cudapool/detail/core/size_classes.hpp>
#include <cudapool/detail/core/stream_tag.hpp>
#include <cudapool/detail/core/thread_stream_cache.hpp>
#include <cudapool/detail/core/word_lock.hpp>
#include <cudapool/backend.hpp>
#include <cudapool/diagnostics.hpp>
#include <cudapool/options.hpp>
#include <cudapool/stats.hpp>

namespace cudapool::core {

// Where reclaimed and trimmed-around blocks go: the variant's free lists.
class free_list_sink {
 public:
  virtual void push_chain(size_class c, block_chain chain) noexcept = 0;

 protected:
  ~free_list_sink() = default;
};

// What the pool does once blocks of completed epochs went back to the free lists (its peaks of
// memory in use), and after every reclaim (the debug layer's poll of its guard checks).
class epoch_observer {
 public:
  virtual void released() noexcept = 0;
  virtual void reclaimed() = 0;

 protected:
  ~epoch_observer() = default;
};

class epoch_table {
 public:
  // blocks: the pool's block table (block_entry's class, state word and link); heap: its ranges'
  // tags resolve through the streams' `completed` words kept here.
  epoch_table(backend& device, block_table& blocks, segment_heap& heap, std::size_t class_count,
              const pool_options& options, epoch_observer& observer);
  epoch_table(const epoch_table&) = delete;
  epoch_table& operator=(const epoch_table&) = delete;

  // ---- frees -----------------------------------------------------------------------------------

  // Queues pending block b (already retired to pending) behind the work enqueued on s so far.
  void defer(block_index b, stream_ref s) noexcept;
  // Queues free blocks (a chain, taken off the caller's lists) behind the work enqueued on s so
  // far, as one epoch with one event. For blocks that leave a stream's private list. False when
  // the chain could not join an epoch (out of host memory): the caller still holds it, unchanged.
  // A failed event leaves the epoch open with the chain in it (a later close retries): true.
  [[nodiscard]] bool defer_chain(block_chain chain, stream_ref s) noexcept;

  // A large free on s joins s's open epoch: the tag its range carries in the heap.
  // *state: s's records, for note_mark_bytes.
  // Inline: the lock-free mark is most of a stream-ordered large free's epoch work, and as calls
  // (mark_or_synchronize, this) it paid two prologues; the full epoch's close is out of line.
  struct stream_state;
  [[nodiscard]] stream_tag mark_stream_free(stream_ref s, stream_state** state) {
    stream_state& se = state_of(s);
    *state = &se;
    std::size_t count = 0;
    const std::uint64_t seq = try_mark(se, &count);
    if (seq != 0 && count < epoch_batch_) [[likely]] {
      return stream_tag{&se.completed, seq, s.native(), true};
    }
    return mark_stream_free_locked(s, se, seq);
  }
  // Takes back the mark of a stream-ordered free the heap rejected (a foreign, interior or double
  // free), so that the rejected free opens no epoch.
  void unmark_stream_free(stream_ref s, const stream_tag& tag) noexcept;
  // After a large range of `bytes` was freed under tag: with several streams in the heap, closes
  // the open epoch once its ranges hold a sixteenth of the mapped bytes (mark_close_share), so that
  // other streams can reuse them as soon as the stream reaches them, not at the next miss.
  // Takes the shard's lock only when the share is reached.
  void note_mark_bytes(stream_ref s, stream_state& se, const stream_tag& tag, std::size_t bytes) noexcept;

  // Makes work enqueued on `waiter` from now on wait for the work enqueued on `producer` so far
  // (one event, a device-side wait: no host synchronisation).
  void order_after(stream_ref waiter, stream_ref producer);
  // Records the event of s's open epoch now (call before destroying a stream you freed on).
  void flush_stream(stream_ref s);

  // ---- closing epochs ------------------------------------------------------------------------

  // Closes every open epoch (one event each).
  void close_open_epochs();
  // For free lists that reuse a stream's stream-ordered frees without an epoch (the stream
  // variant's partitions): after every epoch_batch such frees on s, closes s's open epoch if it
  // holds large ranges (one event), as the epoch that also held those frees would have closed.
  // Without it the epoch filled with large frees alone, its ranges stayed pending longer than in
  // the other variants, slab growth (which needs ranges with nothing pending) and remap_ratio
  // (which unmaps only those) passed them over, and with the PyTorch plug-in's settings a replay
  // of cnn_varbatch reserved 1.34x its live peak against the other variants' 1.068x. No event
  // when the epoch holds no large range.
  void close_epoch_of_ranges(stream_ref s) noexcept;
  // A large request passed over a looser fit for a range of s (allocate_large's `behind`): closes
  // s's open epoch if it holds large ranges (one event; slow_path), as close_epoch_of_ranges.
  void close_epoch_behind(stream_ref s) noexcept;
  // A miss closes the open epochs that can give it something once complete (one event each);
  // the others stay open until full, and the miss records no event for them. Each returns how many
  // epochs it closed.
  // Of class c: those holding blocks of c.
  std::size_t close_epochs_for(size_class c);
  // Before a new slab: those holding large ranges (the slab is shared by every stream, so its
  // frame may only come from a range with nothing pending, on any stream). Closed by every miss of
  // a class before, they were 29 of mlp_4stream's 56 events per 1000 operations, most of them for
  // misses that the class's own blocks then served.
  std::size_t close_epochs_of_ranges();
  // Of a large request on s: those holding large ranges freed on other streams (s reuses its own
  // ranges at once; blocks of the classes never become heap ranges on their own) whose open epoch
  // freed at least `least_bytes` of them. allocate_large closes those that freed its bytes first
  // and the others only if they did not serve it: each closed epoch costs an event (on mlp_4stream,
  // the sim's settled replay, 97-105 events per 1000 allocations staged against 110-121 closing
  // all at once).
  std::size_t close_epochs_for_large(stream_ref s, std::size_t least_bytes);

  // ---- reuse -----------------------------------------------------------------------------------

  // A block of class c freed on s that still waits in one of s's epochs (the open one first, then
  // the closed ones whose events are not yet seen complete), for an allocation on s: free again at
  // once, with no event and no wait (the work enqueued on s before the free runs before anything
  // enqueued on s after this allocation; a heap range freed on s is reused the same way).
  // no_block when there is none, and for the null stream (which names each thread's own stream
  // under per-thread default streams).
  [[nodiscard]] block_index take_from_own_epochs(size_class c, stream_ref s) noexcept;
  // Moves blocks of completed epochs to `sink` (and lets the heap reuse the ranges freed in them);
  // returns how many epochs completed. With a pass (new_reclaim_pass()), a stream whose oldest
  // closed epoch an earlier reclaim of the same pass found incomplete is not queried again: its
  // later epochs complete after that one (one refill's reclaims, microseconds apart, would
  // otherwise query every busy stream of the pool up to three times).
  std::size_t reclaim(free_list_sink& sink, std::uint64_t pass = 0);
  [[nodiscard]] std::uint64_t new_reclaim_pass() noexcept {
    return reclaim_passes_.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  // Before a growth: reclaims (no wait) until some closed epoch completed, while closed epochs are
  // pending (those a miss has just closed complete microseconds later), until `deadline`; a
  // default-constructed deadline is set to now + options().poll_before_growth by the first call.
  // Returns how many epochs completed (0: grow). The caller tries again after each completion and
  // calls again with the same deadline while its try fails.
  using poll_deadline = std::chrono::steady_clock::time_point;
  std::size_t poll_before_growth(free_list_sink& sink, poll_deadline& deadline);
  // Closes every open epoch and blocks until all pending epochs completed, then reclaims.
  std::size_t wait_pending(free_list_sink& sink);
  // The same for stream s alone (allocate_large's `wait_own`: remap waits for its own stream).
  std::size_t wait_stream(stream_ref s, free_list_sink& sink);

  // ---- stats and reports ---------------------------------------------------------------------

  // Pending blocks per class, pending epochs, why epochs closed, device-side waits, epochs
  // reclaimed and events recorded. st.classes has one entry per class.
  void add_stats(pool_stats& st) const;
  // The stream whose epochs hold pending block b (backend::stream_id; 0: none found, or the null
  // stream).
  [[nodiscard]] std::uint64_t pending_stream_of(block_index b) const;
  // One holding per stream with pending bytes: its pending blocks' bytes (class_bytes(c) each), the
  // heap's bytes pending behind it (heap_pending, by native handle) and its pending epochs.
  template <class ClassBytes>
  void add_holdings(oom_report& r, const std::vector<std::pair<const void*, std::size_t>>& heap_pending,
                    ClassBytes&& class_bytes) const;

  // A stream's epochs and the classes of the blocks in its open epoch (close_epochs_for,
  // take_from_own_epochs). INVARIANT: open_classes[c] if a block of class c is in `open` (reset
  // when it closes, and bit c when a search finds no block of c). A stream's epochs: the blocks
  // freed on it (and the number of large frees, which need nothing but the event) behind one event
  // each, and the last completed (core/epoch_protocol.hpp).
  using stream_epochs = basic_stream_epochs<std_atomics, stream_ref, event_handle, std::vector<block_index>, std::deque>;
  using epoch = stream_epochs::epoch;
  struct stream_state : stream_epochs {
    std::bitset<max_size_classes> open_classes;
    // A collected epoch's storage, empty, for the next open epoch: closing moves `open` into the
    // epoch, and without it every epoch of 64 frees grew a new vector (seven allocations, seven
    // frees: operator new was 0.7% of a replay's samples, under defer).
    std::vector<block_index> spare;
  };

 private:
  struct alignas(64) epoch_shard {
    mutable word_lock mutex;  // a stream-ordered block free (defer) and its reuse (a refill) take it
    std::unordered_map<void*, stream_state> streams;  // GUARDED_BY(mutex)
    std::vector<std::size_t> pending_blocks;           // per class; GUARDED_BY(mutex)
    // Closed epochs not yet reclaimed. Written under the mutex; reclaim() reads it without the
    // lock to pass over a shard with none (a close it misses is one the reclaim could as well have
    // run before).
    std::atomic<std::size_t> closed{0};
    // Whether `streams` holds any (set under the mutex when the first joins; states are never
    // erased): close_epochs_if passes over a shard without one without its lock (of the 16
    // shards, a pool used on four streams has at most four with streams).
    std::atomic<bool> has_streams{false};
  };
  // closed +/- 1 under the shard's lock.
  static void add_closed(epoch_shard& shard, std::ptrdiff_t n) noexcept {
    shard.closed.store(shard.closed.load(std::memory_order_relaxed) + static_cast<std::size_t>(n), std::memory_order_relaxed);
  }
  // Keyed by the stream's native handle: a stream must be flushed (flush_stream) before it is
  // destroyed, so a live handle names one stream.
  static constexpr std::size_t shard_count = 16;
  [[nodiscard]] epoch_shard& shard_of(stream_ref s) const noexcept;
  // s's epochs: the calling thread's cache (no lock, inline: as a call its prologue cost more than
  // the look-up), else the shard's map under its lock (state_of_uncached).
  [[nodiscard]] stream_state& state_of(stream_ref s) {
    if (stream_state* const* cached = state_cache::find(id_, s)) [[likely]] return **cached;
    return state_of_uncached(s);
  }
  [[nodiscard]] stream_state& state_of_uncached(stream_ref s);
  // mark_stream_free's slow path: the mark under the shard's lock (seq 0: a close was under way),
  // and the close of a full epoch.
  [[nodiscard]] stream_tag mark_stream_free_locked(stream_ref s, stream_state& se, std::uint64_t seq);
  // s's epochs, created if new; under the shard's lock.
  [[nodiscard]] stream_state& state_locked(epoch_shard& shard, stream_ref s);

  enum class close_reason : std::uint8_t { full, bytes, slow_path, other, count };
  // Whether se's open epoch holds epoch_batch frees: its blocks and its marks.
  [[nodiscard]] bool full(const stream_state& se) const noexcept;
  void close_locked(epoch_shard& shard, stream_state& se, close_reason why);
  // close_locked where the caller cannot fail: an error is printed, the epoch stays open and a
  // later close retries its event.
  void close_or_report(epoch_shard& shard, stream_state& se, close_reason why) noexcept;
  void close_ranges_of(stream_ref s, close_reason why) noexcept;
  // Closes (slow_path) the open epochs of every stream for which close(key, state) holds.
  template <class Predicate>
  std::size_t close_epochs_if(Predicate&& close);
  void collect_locked(epoch_shard& shard, stream_state& se, epoch& ep, std::vector<block_index>& done);
  // Closes se's open epoch and blocks until its closed epochs completed (wait_pending, wait_stream).
  std::size_t wait_locked(epoch_shard& shard, stream_state& se, std::vector<block_index>& done);
  // Blocks of completed epochs: pending -> free, chained per class for the sink.
  void release_items(std::vector<block_index>& items, free_list_sink& sink);

  backend& device_;
  block_table& blocks_;
  segment_heap& heap_;
  const std::size_t class_count_;
  const std::size_t epoch_batch_;
  const std::chrono::nanoseconds poll_before_growth_;
  epoch_observer& observer_;
  // The stream states a thread marked in last (state_of): a mark needs neither the map nor its lock.
  using state_cache = thread_stream_cache<epoch_table, stream_state*>;
  const std::uint64_t id_ = state_cache::new_owner();  // tells this table's entries apart
  std::unique_ptr<epoch_shard[]> shards_;

  // Epochs closed, by close_reason; add_stats' events_recorded adds stream_waits_ (an event each).
  std::atomic<std::uint64_t> epochs_closed_[static_cast<std::size_t>(close_reason::count)] = {};
  std::atomic<std::uint64_t> stream_waits_{0};
  std::atomic<std::uint64_t> epochs_reclaimed_{0};
  std::atomic<std::uint64_t> reclaim_passes_{0};
  std::atomic<std::size_t> closed_epochs_{0};  // closed and not yet reclaimed, over all shards
};

template <class ClassBytes>
void epoch_table::add_holdings(oom_report& r, const std::vector<std::pair<const void*, std::size_t>>& heap_pending,
                               ClassBytes&& class_bytes) const {
  for (std::size_t i = 0; i < shard_count; ++i) {
    const epoch_shard& shard = shards_[i];
    std::lock_guard lock(shard.mutex);
    for (const auto& [key, se] : shard.streams) {
      oom_report::stream_holding h;
      for (const auto& [stream, bytes] : heap_pending) {
        if (stream == se.stream.native()) h.pending_bytes += bytes;
      }
      auto count = [&](const std::vector<block_index>& items) {
        for (const block_index b : items) h.pending_bytes += class_bytes(blocks_[b].size_class());
      };
      count(se.open);
      for (const epoch& ep : se.closed) count(ep.items);
      h.pending_epochs = se.closed.size() + (se.open.empty() ? 0 : 1);
      if (h.pending_bytes == 0) continue;  // only streams that hold something (and so are alive)
      h.stream_id = se.stream.native() == nullptr ? 0 : device_.stream_id(se.stream);
      r.streams.push_back(h);
    }
  }
}

}  // namespace cudapool::core
