// epoch_protocol.hpp - the ordering steps of pool_core's stream-ordered frees, written once over a
// backend's event calls and the epoch records, so that the model test (core/model/epoch_model.cpp)
// runs them under Relacy with a backend twin and Relacy's atomics.
//
// A stream's frees join its open epoch. Closing the epoch takes three steps, so that no lock is
// held while the driver records the event (a record took 40-180 us on an H100 while 16-64 threads
// launched work, and every thread whose stream shared the shard, or whose miss reclaimed, waited
// behind it): begin_close (under the shard's lock) makes the open epoch the stream's `closing` one
// and starts the next; record_closing (no lock) records one event on the stream; end_close (under
// the lock again) makes the epoch visible in `closed`. A reclaimer that finds an epoch in `closed`
// finds its event recorded (publishing before the record is CUB's DeviceFree race). One close of
// a stream at a time: begin_close returns false while another is under way, and the frees meanwhile
// join the next epoch. A reclaimer queries the oldest closed epoch's event, and once it completed
// takes the epoch's blocks and publishes the epoch's number in `completed` with release (pairs with
// the acquire of basic_stream_tag::resolved(), which lets heap ranges freed in the epoch go to
// other streams). Numbers only grow: after a failed record the closing epoch's blocks and marks
// join the open epoch, whose later number covers them.
//
// The caller holds the shard's lock around each function but record_closing. Backend: a pointer
// (or shared_ptr) to what has acquire_event(), record(e, s), query(e) (true: completed) and
// release_event(e). Atomics: the atomics policy (atomics.hpp) of `completed` and `marks`, the
// words read without the lock.
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
inline constexpr std::uint64_t mark_count_mask = (std::uint64_t{1} << 24) - 1;
[[nodiscard]] constexpr std::size_t mark_count(std::uint64_t w) noexcept { return static_cast<std::size_t>(w & mark_count_mask); }

template <class Atomics, class Stream, class Event, class Items, template <class...> class Queue>
struct basic_stream_epochs {
  using epoch = basic_epoch<Event, Items>;
  Stream stream;
  Items open;
  // The open epoch's large frees ("marks") and its number in one word, so that a mark takes no
  // lock (try_mark): bits 0-23 the count, the rest (from bit 25) the number the open epoch gets
  // when closed (open_seq(); it changes only in begin_close, under the lock). Written without the
  // lock only by try_mark's compare-exchange, which adds 1.
  typename Atomics::template atomic<std::uint64_t> marks{std::uint64_t{1} << mark_seq_shift};
  // Their requested bytes (epoch_table::note_mark_bytes, which adds to it without the lock: a note
  // that races with a close may count its bytes in the next epoch, which then closes early).
  typename Atomics::template atomic<std::size_t> open_mark_bytes{0};
  std::uint64_t busy_pass = 0;  // the reclaim pass that last found the oldest closed epoch incomplete
  Queue<epoch> closed;
  // The epoch being closed (begin_close to end_close): its blocks and number, and its marks'
  // count. Under the lock; the closing thread records its event without the lock and touches
  // none of it meanwhile, so other threads may read and take its blocks (take_from_own_epochs).
  epoch closing_epoch;
  std::size_t closing_marks = 0;
  bool closing = false;
  // The last epoch seen complete. Written under the shard's lock with release (pairs with the
  // acquire of stream_tag::resolved(), which heap allocations on other streams read).
  typename Atomics::template atomic<std::uint64_t> completed{0};
};

template <class Epochs>
[[nodiscard]] std::size_t open_marks(const Epochs& se) noexcept {
  return mark_count(se.marks.load(std::memory_order_relaxed));
}

// The number the open epoch gets when closed. Under the lock (only begin_close changes it).
template <class Epochs>
[[nodiscard]] std::uint64_t open_seq(const Epochs& se) noexcept {
  return se.marks.load(std::memory_order_relaxed) >> mark_seq_shift;
}

// Under the lock. Makes se's open epoch the closing one and opens the next: false when the open
// epoch holds nothing, or while another close of the stream is under way (what is open now then
// waits for the next close).
// Marks counted by the exchange are in the closing epoch, and their callers enqueued their work
// before marking (try_mark's release, this acquire), so the event recorded after it covers them;
// a mark that comes after the exchange joins the next epoch.
template <class Epochs>
bool begin_close(Epochs& se) noexcept {
  if (se.closing || (se.open.empty() && open_marks(se) == 0)) return false;
  const std::uint64_t next = (open_seq(se) + 1) << mark_seq_shift;
  const std::uint64_t w = se.marks.exchange(next, std::memory_order_acq_rel);  // no marks, the next number
  se.closing = true;
  se.closing_epoch.seq = w >> mark_seq_shift;
  se.closing_marks = mark_count(w);
  se.closing_epoch.items = std::move(se.open);
  se.open.clear();
  se.open_mark_bytes.store(0, std::memory_order_relaxed);
  return true;
}

// Without the lock, by the thread whose begin_close returned true: the closing epoch's event,
// recorded on the stream. A failed record throws (the caller then calls abort_close).
template <class Backend, class Epochs>
auto record_closing(const Backend& backend, const Epochs& se) {
  auto e = backend->acquire_event();
  try {
    backend->record(e, se.stream);
  } catch (...) {
    backend->release_event(e);
    throw;
  }
  return e;
}

// Under the lock: the closing epoch, its event recorded, joins `closed`.
template <class Epochs, class Event>
void end_close(Epochs& se, Event e) {
  se.closed.push_back({e, std::move(se.closing_epoch.items), se.closing_epoch.seq});
  se.closing_epoch.items.clear();
  se.closing = false;
}

// Under the lock, after a failed record: the closing epoch's blocks and marks join the open epoch
// (its later number covers them: its event, and `completed` passing it, resolve their tags). The
// stream is no longer closing, whatever happens. Throws only when appending the blocks found no
// host memory: they are then lost to the pool, and the caller reports it.
template <class Epochs>
void abort_close(Epochs& se) {
  se.closing = false;
  se.marks.fetch_add(se.closing_marks, std::memory_order_relaxed);
  se.closing_marks = 0;
  auto items = std::move(se.closing_epoch.items);
  se.closing_epoch.items.clear();
  if (se.open.empty()) {
    se.open = std::move(items);
  } else {
    se.open.insert(se.open.end(), items.begin(), items.end());
  }
}

// A large free on se's stream joins the open epoch without the lock: the open epoch's number (the
// tag of the freed range), and in *count the marks now in it; 0 when the count is full (the caller
// then takes the lock and calls mark_locked).
template <class Epochs>
std::uint64_t try_mark(Epochs& se, std::size_t* count) noexcept {
  std::uint64_t w = se.marks.load(std::memory_order_relaxed);
  for (;;) {
    if (mark_count(w) == mark_count_mask) return 0;
    // Release: the caller's work on the stream, enqueued before, is ordered before a close that
    // counts this mark (begin_close's acquire).
    if (se.marks.compare_exchange_weak(w, w + 1, std::memory_order_release, std::memory_order_relaxed)) {
      *count = mark_count(w) + 1;
      return w >> mark_seq_shift;
    }
  }
}

// The same under the stream's lock: always joins; the epoch's number.
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
