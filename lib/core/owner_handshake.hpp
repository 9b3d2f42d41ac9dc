// owner_handshake.hpp - the Dekker handshake between a per-thread structure's owner and a drainer
// over an asymmetric fence (asymmetric_fence.hpp): the owner's operation takes no lock and no
// atomic read-modify-write, a drainer (holding the structure's mutex) keeps the owner out.
//
//   owner:   in_op = 1 (relaxed); light fence; drain_request == 0 (acquire)? operate, in_op = 0
//            (release) : in_op = 0, take the mutex path
//   drainer: drain_request = 1 (relaxed) for each structure; one heavy fence; wait for in_op == 0
//            (acquire) on each; drain; drain_request = 0 (release) (unclaim)
// The fences make at least one side see the other's flag (store buffering ruled out); end_op's
// release pairs with the drainer's acquire wait (the owner's last operation happens before the
// drain), unclaim's release with begin_op's acquire (the drain happens before the owner's next
// fast path).
//
// Written once for the tls pool (tls_pool.hpp's thread_cache) and its model test
// (core/model/tls_cache_model.cpp). Atomics is the atomics policy (atomics.hpp); Fences provides
// light() and heavy() (the two sides of the fence) and relax() (a drainer's spin-wait step):
// asymmetric_fences in the library, Relacy's fences (or a seeded bug's) in the model.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <cudapool/detail/core/asymmetric_fence.hpp>
#include <cudapool/detail/core/atomics.hpp>
#include <cudapool/detail/core/tagged_stack.hpp>  // backoff::cpu_relax

namespace cudapool::core {

// The library's fences: membarrier's split or two seq_cst fences, the mode read once per structure
// (a reference to it: each fence reads the mode where it runs, as a direct call would).
struct asymmetric_fences {
  const bool& asymmetric;
  void light() const noexcept { light_fence(asymmetric); }
  void heavy() const noexcept { heavy_fence(asymmetric); }
  static void relax() noexcept { backoff::cpu_relax(); }
};

template <class Atomics>
struct basic_owner_handshake {
  typename Atomics::template atomic<std::uint32_t> in_op{0};          // owner: 1 inside a fast-path operation
  typename Atomics::template atomic<std::uint32_t> drain_request{0};  // drainer: 1 while it holds the structure

  // The owner, before each operation: true when the fast path may run (end_op ends it); false
  // when a drainer holds the structure (the operation is already ended: take the mutex path).
  template <class Fences>
  [[gnu::always_inline]] bool begin_op(const Fences& fences) noexcept {
    in_op.store(1, std::memory_order_relaxed);
    fences.light();
    // Acquire: if this reads a drainer's release of 0, the drain's writes happen before our reads.
    if (drain_request.load(std::memory_order_acquire) == 0) [[likely]] return true;
    end_op();
    return false;
  }
  // Release pairs with the drainer's acquire wait on in_op.
  [[gnu::always_inline]] void end_op() noexcept { in_op.store(0, std::memory_order_release); }

  // A drainer, holding the structure's mutex, after claim: lets the owner's fast path in again.
  void unclaim() noexcept { drain_request.store(0, std::memory_order_release); }  // pairs with begin_op's acquire
};

// A drainer's hold on n structures whose mutexes it holds: handshake_of(i) is the i-th one's
// handshake. One heavy fence for all of them; returns once none is inside an operation.
template <class Fences, class HandshakeOf>
void claim_handshakes(const Fences& fences, std::size_t n, HandshakeOf&& handshake_of) noexcept {
  for (std::size_t i = 0; i < n; ++i) handshake_of(i).drain_request.store(1, std::memory_order_relaxed);
  fences.heavy();
  for (std::size_t i = 0; i < n; ++i) {
    // Acquire pairs with end_op's release: the owner's last operation happens before the drain.
    while (handshake_of(i).in_op.load(std::memory_order_acquire) != 0) fences.relax();
  }
}

using owner_handshake = basic_owner_handshake<std_atomics>;

}  // namespace cudapool::core
