// thread_stream_cache.hpp - a small per-thread cache of what an object (a pool) knows about a
// stream, keyed by the object's id and the stream's handle: after a thread's first use of a stream
// a look-up is a thread-local load and two compares, with no lock and no map. Direct-mapped: host
// threads cycle over a few streams.
//
// Users: stream_admission (a stream checked against the pool's device, with the generation of the
// check) and epoch_table's epochs (the stream's state, a map node that is never erased). Each user
// passes its own Tag, so each has its own thread-local entries; owner ids come from one counter
// and are never reused, so an entry of a destroyed owner never matches a new one.
//
// Thread-safety: every function touches only the calling thread's entries (new_owner() is atomic).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <cudapool/types.hpp>

namespace cudapool::core {

template <class Tag, class Value, std::size_t Entries = 8>
class thread_stream_cache {
 public:
  // A fresh owner id (ids start at 1: zero-initialised entries match no owner). Relaxed: ids only
  // have to differ.
  [[nodiscard]] static std::uint64_t new_owner() noexcept {
    static std::atomic<std::uint64_t> id{1};
    return id.fetch_add(1, std::memory_order_relaxed);
  }

  // The calling thread's value for (owner, s), or null.
  [[nodiscard, gnu::always_inline]] static const Value* find(std::uint64_t owner, stream_ref s) noexcept {
    const entry& e = entries_[slot(s)];
    return e.owner == owner && e.native == s.native() ? &e.value : nullptr;
  }

  // Remembers v for (owner, s) in the calling thread, replacing what shared its slot.
  static void put(std::uint64_t owner, stream_ref s, const Value& v) noexcept { entries_[slot(s)] = {owner, s.native(), v}; }

 private:
  struct entry {  // zero-initialised: owner 0 is nobody
    std::uint64_t owner;
    void* native;
    Value value;
  };
  static inline thread_local entry entries_[Entries];
  static std::size_t slot(stream_ref s) noexcept { return (reinterpret_cast<std::uintptr_t>(s.native()) >> 4) % Entries; }
};

}  // namespace cudapool::core
