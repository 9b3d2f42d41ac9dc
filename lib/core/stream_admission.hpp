// stream_admission.hpp - whether a stream given to a pool belongs to the pool's device.
//
// A pool is bound to one device (its backend). It records the events of its epochs on the streams
// it is given, and the stream variant keeps a partition per stream: a stream of another device
// would open an epoch whose event CUDA refuses to record there (an event and the stream it is
// recorded on must share a device), or, on a backend that did not refuse, order nothing. So the
// pool checks each stream against backend::stream_device() once and remembers the streams that
// passed in a small per-thread cache (core/thread_stream_cache.hpp): after a thread's first use of a stream the check is a
// thread-local load and three compares, and the default stream (stream_ref{}) costs one compare.
//
// A destroyed stream's handle may name a new stream of another device, so flush_stream and
// retire_stream (which the stream contract requires before a stream is destroyed) call forget():
// every thread re-checks its streams once.
//
// Thread-safety: every member function is thread-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <cudapool/backend.hpp>
#include <cudapool/types.hpp>
#include <cudapool/detail/core/thread_stream_cache.hpp>

namespace cudapool::core {

class stream_admission {
 public:
  explicit stream_admission(backend& device) noexcept
      : device_(device), id_(cache::new_owner()) {}
  stream_admission(const stream_admission&) = delete;
  stream_admission& operator=(const stream_admission&) = delete;

  // True when s is the default stream or a stream of the pool's device.
  [[nodiscard]] bool admits(stream_ref s) noexcept { return cached(s) || admit(s); }

  // Hot, and no call: true when s is the default stream or this thread has admitted s since the
  // last forget(). The hot paths branch to an out-of-line admit() on false, so that the check
  // costs them no saved registers (a call in the middle of the hot path would: a pair's free
  // pushed and popped two more of them, measured against the code before the check).
  [[nodiscard, gnu::always_inline]] bool cached(stream_ref s) const noexcept {
    if (s.native() == nullptr) return true;
    const std::uint64_t* generation = cache::find(id_, s);
    return generation != nullptr && *generation == generation_.load(std::memory_order_acquire);
  }

  // Asks the backend whether s belongs to the pool's device, and remembers a yes for this thread.
  [[gnu::noinline]] bool admit(stream_ref s) noexcept {
    if (s.native() == nullptr) return true;
    // Read before asking: a forget() that races with the check leaves this entry stale, never wrong.
    const std::uint64_t generation = generation_.load(std::memory_order_acquire);
    if (device_of(s) != device_.device()) return false;
    cache::put(id_, s, generation);
    return true;
  }

  // The device s belongs to, as the backend says; -1 when it cannot say. For messages.
  [[nodiscard]] int device_of(stream_ref s) const noexcept {
    try {
      return device_.stream_device(s);
    } catch (...) {
      return -1;
    }
  }

  // Drops every thread's cached admissions of this pool's streams.
  void forget() noexcept { generation_.fetch_add(1, std::memory_order_release); }

 private:
  // The streams this thread has admitted, with the generation each check saw.
  using cache = thread_stream_cache<stream_admission, std::uint64_t>;

  backend& device_;
  const std::uint64_t id_;
  // Bumped (release) by forget(); admits() compares with acquire, so no thread keeps an admission
  // made before the forget() it has seen returned.
  std::atomic<std::uint64_t> generation_{1};
};

}  // namespace cudapool::core
