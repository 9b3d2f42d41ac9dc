// random.hpp - the harness's deterministic random numbers: one generator per host thread, seeded
// from --seed, so that a failing seed replays the same decisions. Internal to the harness.
#pragma once

#include <bit>
#include <cstdint>

namespace cudapool::stress {

inline std::uint64_t splitmix64(std::uint64_t& x) noexcept {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__extension__ using uint128 = unsigned __int128;  // GCC and Clang; __extension__: not ISO C++

// xoshiro256** with our own uniform draws: the std distributions differ between standard
// libraries, and a failing seed must replay the same decisions wherever it is rerun.
class rng {
 public:
  explicit rng(std::uint64_t seed) noexcept {
    for (std::uint64_t& w : s_) w = splitmix64(seed);
  }

  std::uint64_t next() noexcept {
    const std::uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = std::rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n), n > 0: Lemire's multiply-shift with rejection, unbiased.
  std::uint64_t below(std::uint64_t n) noexcept {
    uint128 m = static_cast<uint128>(next()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<uint128>(next()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  // Uniform in [lo, hi].
  std::uint64_t between(std::uint64_t lo, std::uint64_t hi) noexcept { return lo + below(hi - lo + 1); }
  double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  bool chance(double p) noexcept { return unit() < p; }

 private:
  std::uint64_t s_[4];
};

}  // namespace cudapool::stress
