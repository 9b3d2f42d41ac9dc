// size_classes.hpp - the map from a request size to a block size class.
//
// Classes are 256 B, then geometric: within each power of two [2^e, 2^(e+1)] there are k evenly
// spaced classes (k = classes_per_doubling), with spacing never below 256 B, so every class size is
// a multiple of 256 B (cudaMalloc's alignment). With k = 4: 256, 512, 768, 1024, 1280, 1536,
// 1792, 2048, 2560, ... Lookup is O(1): the bucket of the request's highest bit gives the first
// class of the bucket and the spacing as a shift.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <cudapool/options.hpp>
#include <cudapool/types.hpp>

namespace cudapool::core {

using size_class = std::uint32_t;
inline constexpr size_class large_class = ~size_class{0};
inline constexpr std::size_t max_size_classes = 128;
// A set of size classes, one bit each, visited in class order: what a reclaim released
// (epoch_table::release_items) and which classes have had a slab (pool_core::in_use_bytes_now).
struct class_set {
  static constexpr std::size_t word_count = max_size_classes / 64;
  [[nodiscard]] static constexpr std::size_t word(size_class c) noexcept { return c / 64; }
  [[nodiscard]] static constexpr std::uint64_t bit(size_class c) noexcept { return std::uint64_t{1} << (c % 64); }
  // Adds c; false when it was there already.
  bool insert(size_class c) noexcept {
    if ((words[word(c)] & bit(c)) != 0) return false;
    words[word(c)] |= bit(c);
    return true;
  }
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t w = 0; w < word_count; ++w) {
      for (std::uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
        f(static_cast<size_class>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
      }
    }
  }
  std::uint64_t words[word_count] = {};
};

// Every slab starts at a multiple of this (the page size of the page map).
inline constexpr std::size_t slab_alignment = std::size_t{1} << 16;

class size_classes {
 public:
  // Throws std::invalid_argument for a configuration it cannot honour.
  explicit size_classes(const pool_options& options);

  // The smallest class that holds `bytes` (> 0), or large_class. Hot path.
  [[nodiscard]] size_class lookup(std::size_t bytes) const noexcept {
    if (bytes <= sizes_[0]) return 0;
    if (bytes > max_bytes_) return large_class;
    const unsigned e = std::bit_width(bytes - 1) - 1;  // 2^e < bytes <= 2^(e+1)
    const bucket& b = buckets_[e];
    return b.first + static_cast<size_class>((bytes - 1 - (std::size_t{1} << e)) >> b.shift);
  }

  // The smallest class that holds `bytes` and whose blocks are `alignment`-aligned (a power of
  // two). Blocks of a class are aligned to the largest power of two dividing the class size.
  [[nodiscard]] size_class lookup(std::size_t bytes, std::size_t alignment) const noexcept;

  [[nodiscard]] std::size_t bytes(size_class c) const noexcept { return sizes_[c]; }
  [[nodiscard]] std::size_t count() const noexcept { return sizes_.size(); }
  [[nodiscard]] std::size_t max_bytes() const noexcept { return max_bytes_; }

 private:
  // For requests in (2^e, 2^(e+1)]: class = first + ((bytes - 1 - 2^e) >> shift).
  struct bucket {
    size_class first = 0;
    unsigned shift = 0;
  };
  std::vector<std::size_t> sizes_;
  std::size_t max_bytes_ = 0;
  std::array<bucket, 64> buckets_{};
};

}  // namespace cudapool::core
