// epoch_protocol.hpp - the ordering steps of pool_core's stream-ordered frees, written once over a
// backend's event calls and the epoch records, so that the model test (core/model/epoch_model.cpp)
// runs them under Relacy with a backend twin and Relacy's atomics.
//
// A stream's frees join its open epoch; closing the epoch records one event on the stream and
// then makes the epoch visible in `closed` (both under the shard's lock: a reclaimer that finds the
// epoch finds its event recorded; recording after the unlock is CUB's DeviceFree race); a
// reclaimer queries the oldest closed epoch's event, and once it completed takes the epoch's
// blocks and publishes the epoch's number in `completed` with release (pairs with the acquire of
// basic_stream_tag::resolved(), which lets heap ranges freed in the epoch go to other streams).
//
// The caller holds the shard's lock around each function. Backend: a pointer (or shared_ptr) to
// what has acquire_event(), record(e, s), query(e) (true: completed) and release_event(e). Atomics: the atomics policy (atomics.hpp) of
// `completed`, the one word read without the lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include <cudapool/detail/core/atomics.hpp>

namespace cudapool::core {

// An epoch: the blocks freed on one stream behind one event. Epochs of a stream are numbered from 1
// in the order closed.
template <class Event, class Items>
struct basic_epoch {
  Event event{};
  Items items;
  std::uint64_t seq = 0;
};

inline constexpr unsigned mark_seq_shift = 25;
inline constexpr std::uint64_t mark_closing = std::uint64_t{1} << 24;
inline constexpr std::uint64_t mark_count_mask = mark_closing - 1;
[[nodiscard]] constexpr std::size_t mark_count(std::uint64_t w) noexcept { return static_cast<std::size_t>(w & mark_count_mask); }

template <class Atomics, class Stream, class Event, class Items, template <class...> class Queue>
struct basic_stream_epochs {
  using epoch = basic_epoch<Event, Items>;
  Stream stream;
  Items open;
  // The open epoch's large frees ("marks") and its number in one word, so that a mark takes no
  // lock (try_mark): bits 0-23 the count, bit 24 set while close_epoch records the event, the
  // rest the number the open epoch gets when closed (open_seq(); it changes only then). Written
  // without the lock only by try_mark's compare-exchange, which adds 1 while the closing bit is
  // clear.
  typename Atomics::template atomic<std::uint64_t> marks{std::uint64_t{1} << mark_seq_shift};
  // Their requested bytes (epoch_table::note_mark_bytes, which adds to it without the lock: a note
  // that races with a close may count its bytes in the next epoch, which then closes early).
  typename Atomics::template atomic<std::size_t> open_mark_bytes{0};
  std::uint64_t busy_pass = 0;  // the reclaim pass that last found the oldest closed epoch incomplete
  Queue<epoch> closed;
  // The last epoch seen complete. Written under the shard's lock with release (pairs with the
  // acquire of stream_tag::resolved(), which heap allocations on other streams read).
  typename Atomics::template atomic<std::uint64_t> completed{0};
};

// Closes se's open epoch, if it holds anything: its event recorded on the stream, then the epoch
// joins `closed`. False when there was nothing to close. A failed record throws and leaves the
// epoch open (a later close retries).
// Marks that join the epoch before the closing bit is set are covered by the event (their
// callers enqueued their work on the stream before marking, and the event is recorded after the
// bit); a mark that finds the bit set waits for the lock and joins the next epoch.
template <class Epochs>
[[nodiscard]] std::size_t open_marks(const Epochs& se) noexcept {
  return mark_count(se.marks.load(std::memory_order_relaxed));
}

// The number the open epoch gets when closed. Under the lock (only close_epoch changes it).
template <class Epochs>
[[nodiscard]] std::uint64_t open_seq(const Epochs& se) noexcept {
  return se.marks.load(std::memory_order_relaxed) >> mark_seq_shift;
}

template <class Backend, class Epochs>
bool close_epoch(const Backend& backend, Epochs& se) {
  if (se.open.empty() && open_marks(se) == 0) return false;
  const std::uint64_t seq = open_seq(se);
  // Acquire: pairs with try_mark's release, so that the work enqueued before a mark it counts is
  // enqueued before the record below.
  se.marks.fetch_add(mark_closing, std::memory_order_acq_rel);
  auto e = backend->acquire_event();
  try {
    backend->record(e, se.stream);
  } catch (...) {
    backend->release_event(e);
    se.marks.fetch_sub(mark_closing, std::memory_order_relaxed);  // marks join again
    throw;
  }
  se.closed.push_back({e, std::move(se.open), seq});
  se.open.clear();
  se.open_mark_bytes.store(0, std::memory_order_relaxed);
  se.marks.store((seq + 1) << mark_seq_shift, std::memory_order_release);  // no marks, the next number
  return true;
}

// A large free on se's stream joins the open epoch without the lock: the open epoch's number (the
// tag of the freed range), and in *count the marks now in it; 0 while a close is recording its
// event (the caller then takes the lock and calls mark_locked, which runs after that close).
template <class Epochs>
std::uint64_t try_mark(Epochs& se, std::size_t* count) noexcept {
  std::uint64_t w = se.marks.load(std::memory_order_relaxed);
  for (;;) {
    if ((w & mark_closing) != 0 || mark_count(w) == mark_count_mask) return 0;
    // Release: the caller's work on the stream, enqueued before, is ordered before a close that
    // counts this mark (close_epoch's acquire).
    if (se.marks.compare_exchange_weak(w, w + 1, std::memory_order_release, std::memory_order_relaxed)) {
      *count = mark_count(w) + 1;
      return w >> mark_seq_shift;
    }
  }
}

// The same under the stream's lock (no close is under way): always joins; the epoch's number.
template <class Epochs>
std::uint64_t mark_locked(Epochs& se) noexcept {
  return se.marks.fetch_add(1, std::memory_order_relaxed) >> mark_seq_shift;
}

// Under the lock: takes back a mark of epoch `seq` if that epoch is still open and holds one.
template <class Epochs>
void unmark(Epochs& se, std::uint64_t seq) noexcept {
  const std::uint64_t w = se.marks.load(std::memory_order_relaxed);
  // Marks are only added meanwhile (try_mark), and the number changes only under the lock.
  if ((w >> mark_seq_shift) == seq && mark_count(w) > 0) se.marks.fetch_sub(1, std::memory_order_relaxed);
}

// Takes a completed epoch: its event released, on_item(b) for each block, the blocks appended to
// `done`, and the epoch published complete.
template <class Backend, class Epochs, class Done, class OnItem>
void collect_epoch(const Backend& backend, Epochs& se, typename Epochs::epoch& ep, Done& done, OnItem&& on_item) {
  backend->release_event(ep.event);
  for (const auto b : ep.items) on_item(b);
  done.insert(done.end(), ep.items.begin(), ep.items.end());
  se.completed.store(ep.seq, std::memory_order_release);  // pairs with stream_tag::resolved()
}

// collect(ep) for each of se's closed epochs whose event completed, oldest first, each then
// removed and counted in `collected`. Epochs of one stream complete in order: stops at the first
// incomplete one.
template <class Backend, class Epochs, class Collect>
void collect_completed(const Backend& backend, Epochs& se, Collect&& collect, std::size_t& collected) {
  while (!se.closed.empty() && backend->query(se.closed.front().event)) {
    collect(se.closed.front());
    se.closed.pop_front();
    ++collected;
  }
}

}  // namespace cudapool::core
