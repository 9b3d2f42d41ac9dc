#pragma once
// Integer helpers of sizes and addresses, shared by the heap, the core and the pools (one place,
// so that the pools' alignment test and the heap's are the same test).

#include <cstddef>
#include <cstdint>

namespace cudapool::core {

// Whether x is a power of two (x > 0), by mask: std::has_single_bit is a call to libgcc's popcount
// where the target has no popcnt instruction (x86-64's baseline), and the pools test every
// aligned request's alignment.
[[nodiscard]] constexpr bool power_of_two(std::size_t x) noexcept { return x != 0 && (x & (x - 1)) == 0; }

// n rounded up / down to a multiple of `to` (any to > 0).
[[nodiscard]] constexpr std::uintptr_t round_up(std::uintptr_t n, std::size_t to) noexcept { return (n + to - 1) / to * to; }
[[nodiscard]] constexpr std::uintptr_t round_down(std::uintptr_t n, std::size_t to) noexcept { return n / to * to; }

// round_up for a power of two (every alignment): a mask, not a division. In the best fit's scan of
// a bin it was the costliest instruction (a 64-bit div per candidate extent).
[[nodiscard]] constexpr std::uintptr_t align_up(std::uintptr_t n, std::size_t alignment) noexcept {
  return (n + alignment - 1) & ~(std::uintptr_t{alignment} - 1);
}

static_assert(power_of_two(1) && power_of_two(std::size_t{1} << 40) && !power_of_two(0) && !power_of_two(6));
static_assert(round_up(257, 256) == 512 && round_down(511, 256) == 256 && align_up(257, 256) == 512);

}  // namespace cudapool::core
