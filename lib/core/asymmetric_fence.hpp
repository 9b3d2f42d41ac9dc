// asymmetric_fence.hpp - a store-load fence split between a frequent light side and a rare heavy
// side, so the hot path of a per-thread structure needs no atomic read-modify-write.
//
// Dekker between an owner (light side, every operation) and a drainer (heavy side, rarely):
//   owner:   flag_a = 1; light();  read flag_b
//   drainer: flag_b = 1; heavy();  read flag_a
// At least one of them sees the other's store. The heavy side is Linux membarrier
// (MEMBARRIER_CMD_PRIVATE_EXPEDITED: every running thread of the process executes a full barrier),
// and the light side is then only a compiler barrier. Where membarrier is unavailable both sides
// are full seq_cst fences. Both sides of one structure must use the same mode: read it once into a
// const member.
#pragma once

#include <atomic>

namespace cudapool::core {

// Whether the heavy side is membarrier (registered on first call; thread-safe).
[[nodiscard]] bool asymmetric_fences_available() noexcept;

inline void light_fence(bool asymmetric) noexcept {
  if (asymmetric) [[likely]] {
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

void heavy_fence(bool asymmetric) noexcept;

}  // namespace cudapool::core
