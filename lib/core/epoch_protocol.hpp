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

template <class Atomics, class Stream, class Event, class Items, template <class...> class Queue>
struct basic_stream_epochs {
  using epoch = basic_epoch<Event, Items>;
  Stream stream;
  Items open;
  std::size_t open_marks = 0;   // large frees in the open epoch
  std::size_t open_mark_bytes = 0;  // their requested bytes (pool_core::note_mark_bytes)
  std::uint64_t open_seq = 1;   // the number the open epoch gets when closed
  std::uint64_t busy_pass = 0;  // the reclaim pass that last found the oldest closed epoch incomplete
  Queue<epoch> closed;
  // The last epoch seen complete. Written under the shard's lock with release (pairs with the
  // acquire of stream_tag::resolved(), which heap allocations on other streams read).
  typename Atomics::template atomic<std::uint64_t> completed{0};
};

// Closes se's open epoch, if it holds anything: its event recorded on the stream, then the epoch
// joins `closed`. False when there was nothing to close. A failed record throws and leaves the
// epoch open (a later close retries).
template <class Backend, class Epochs>
bool close_epoch(const Backend& backend, Epochs& se) {
  if (se.open.empty() && se.open_marks == 0) return false;
  auto e = backend->acquire_event();
  try {
    backend->record(e, se.stream);
  } catch (...) {
    backend->release_event(e);
    throw;
  }
  se.closed.push_back({e, std::move(se.open), se.open_seq});
  se.open.clear();
  se.open_marks = 0;
  se.open_mark_bytes = 0;
  ++se.open_seq;
  return true;
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
