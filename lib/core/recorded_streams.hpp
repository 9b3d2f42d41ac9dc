// recorded_streams.hpp - the record_stream protocol of the stream pool (stream_pool.hpp), written
// once so that the model test (core/model/stream_model.cpp) runs it with Relacy's atomics and mutex.
//
// record_stream(p, s2) notes that p is used on s2 too; p's stream-ordered free on S then makes S
// wait (device-side) for s2's work first. The recorded streams are kept in maps (by block, by
// large allocation) under one mutex; a count of the maps' entries lets the hot free skip the mutex
// when nothing is recorded. The count is read relaxed: a free of p is ordered after
// record_stream(p) by the program itself (the pointer reached the freeing thread after the record,
// through whatever hand-off the program used), so the relaxed load sees the increment, and
// increments and decrements happen under the mutex. A stale nonzero count (another block's entry)
// only sends the free to the mutex, where the map decides.
//
// Atomics: the atomics policy of the count (atomics.hpp). Mutex: lock()/unlock(). Map: a map from a
// key to a list of streams (try_emplace, find, end, erase), std::unordered_map in the library.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <utility>

#include <cudapool/detail/core/atomics.hpp>

namespace cudapool::core {

template <class Atomics, class Mutex>
class basic_recorded_streams {
 public:
  // The hot free's check: false when no block or range has recorded streams.
  [[nodiscard, gnu::always_inline]] bool any() const noexcept { return count_.load(std::memory_order_relaxed) != 0; }

  // record_stream: key is also used on s.
  template <class Map, class Key, class Stream>
  void record(Map& map, const Key& key, const Stream& s) {
    std::lock_guard lock(mutex_);
    auto [it, fresh] = map.try_emplace(key);
    it->second.push_back(s);
    if (fresh) count_.fetch_add(1, std::memory_order_relaxed);
  }
  // The free of key: its recorded streams moved into `out` and forgotten; false when it has none.
  template <class Map, class Key, class Streams>
  bool take(Map& map, const Key& key, Streams& out) {
    std::lock_guard lock(mutex_);
    auto it = map.find(key);
    if (it == map.end()) return false;
    out = std::move(it->second);
    map.erase(it);
    count_.fetch_sub(1, std::memory_order_relaxed);
    return true;
  }
  // An immediate free of key: its recorded streams forgotten.
  template <class Map, class Key>
  void forget(Map& map, const Key& key) {
    std::lock_guard lock(mutex_);
    if (map.erase(key) > 0) count_.fetch_sub(1, std::memory_order_relaxed);
  }

 private:
  typename Atomics::template atomic<std::size_t> count_{0};  // entries in the maps
  Mutex mutex_;                                               // guards the maps
};

using recorded_streams = basic_recorded_streams<std_atomics, std::mutex>;

}  // namespace cudapool::core
