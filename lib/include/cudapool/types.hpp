// cudapool/types.hpp - vocabulary types shared by every layer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cudapool {

// A non-owning handle to a stream of the pool's backend. For the cuda backend `native()` is a
// cudaStream_t; for the sim backend it is the simulator's stream object. A default-constructed
// stream_ref names the backend's default stream (cudaStreamLegacy semantics on CUDA).
class stream_ref {
 public:
  constexpr stream_ref() noexcept = default;
  constexpr explicit stream_ref(void* native) noexcept : native_(native) {}
  [[nodiscard]] constexpr void* native() const noexcept { return native_; }
  friend constexpr bool operator==(stream_ref, stream_ref) noexcept = default;

 private:
  void* native_ = nullptr;
};

// Dense index of a block in a pool's host tables. Indices are never reused by another slab
// descriptor, so a stale index read by a lock-free reader still names a valid table entry.
using block_index = std::uint32_t;
inline constexpr block_index no_block = ~block_index{0};

// Every block handed out is at least this aligned (cudaMalloc's guarantee).
inline constexpr std::size_t min_alignment = 256;

}  // namespace cudapool
