// thread_stream_cache.hpp - a small per-thread cache of what an object (a pool) knows about a
// stream, keyed by the object's id and the stream's handle: after a thread's first use of a stream
// a look-up is a thread-local load and two compares, with no lock and no map. Small and
// two-way set-associative: host threads cycle over a few streams.
//
// stream_slot() places a handle in a table (this cache's sets, the epoch table's shards). It hashes
// every bit of the handle (a fold and a Fibonacci multiply, the top bits): a handle is a pointer to
// the runtime's stream object, and bits 4-6 alone, which the slot was until s31, are the same for
// objects 128 bytes apart or page-aligned, so a thread cycling over four such streams missed on
// every look-up (a lock and a map under the epochs, a backend call to admit the stream). Two
// entries per set keep the streams that a hash still puts together.
//
// Users: stream_admission (a stream checked against the pool's device, with the generation of the
// check), epoch_table's epochs (the stream's state, a map node that is never erased) and the
// stream variant's partitions (the partition, with the generation of its look-up). Each user
// passes its own Tag, so each has its own thread-local entries; owner ids come from one counter
// and are never reused, so an entry of a destroyed owner never matches a new one.
//
// Thread-safety: every function touches only the calling thread's entries (new_owner() is atomic).
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

#include <cudapool/types.hpp>

namespace cudapool::core {

// The slot of s in a table of Slots (a power of two) slots.
template <std::size_t Slots>
[[nodiscard, gnu::always_inline]] inline std::size_t stream_slot(stream_ref s) noexcept {
  static_assert(Slots >= 2 && std::has_single_bit(Slots), "a power of two");
  constexpr int bits = std::bit_width(Slots - 1);
  constexpr std::uint64_t golden = 0x9E3779B97F4A7C15ULL;  // 2^64 / the golden ratio
  const auto p = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(s.native()));
  return static_cast<std::size_t>(((p ^ (p >> 32)) * golden) >> (64 - bits));
}

// Sets sets of two entries: a handle maps to one set (stream_slot) and takes either of its two
// entries, so that two streams whose handles share a set both stay cached. Four streams hashed
// into sixteen sets land in distinct ones only 67% of the time; three in one set (one of them
// then missing on every round), under 2%.
template <class Tag, class Value, std::size_t Sets = 16>
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
    const set& st = sets_[stream_slot<Sets>(s)];
    if (st.way[0].owner == owner && st.way[0].native == s.native()) [[likely]] return &st.way[0].value;
    if (st.way[1].owner == owner && st.way[1].native == s.native()) return &st.way[1].value;
    return nullptr;
  }

  // Remembers v for (owner, s) in the calling thread: in place of an entry for (owner, s), else in
  // the set's first entry, the first moving to the second (which is dropped).
  static void put(std::uint64_t owner, stream_ref s, const Value& v) noexcept {
    set& st = sets_[stream_slot<Sets>(s)];
    for (entry& e : st.way) {
      if (e.owner == owner && e.native == s.native()) {
        e.value = v;
        return;
      }
    }
    st.way[1] = st.way[0];
    st.way[0] = {owner, s.native(), v};
  }

 private:
  struct entry {  // zero-initialised: owner 0 is nobody
    std::uint64_t owner;
    void* native;
    Value value;
  };
  struct alignas(64) set {  // one cache line where an entry is 32 bytes or less
    entry way[2];
  };
  static inline thread_local set sets_[Sets];
};

}  // namespace cudapool::core
