// page_map.hpp - O(1) map from a device address to the slab that holds it.
//
// A two-level radix tree over 48-bit addresses in 64 KiB pages (16 + 16 bits of page number):
// two dependent loads per lookup (deallocate's pointer-to-block chain is latency-bound). The top
// level is 2^16 leaf pointers (512 KiB per map); a leaf covers 4 GiB of addresses. Every slab is
// 64 KiB aligned, so a page belongs to at most one slab. Values are the caller's nonzero word for
// the slab (the pool stores its slab descriptor's address, so a lookup needs no further table
// walk); 0: no slab. Leaves are allocated by the writer (under the pool's growth
// lock), published with release stores and freed only with the map, so lookups are lock-free.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace cudapool::core {

class page_map {
 public:
  static constexpr unsigned page_shift = 16;
  static constexpr unsigned address_bits = 48;

  page_map() = default;
  page_map(const page_map&) = delete;
  page_map& operator=(const page_map&) = delete;
  ~page_map();

  // Thread-safe, lock-free. 0 when the page of p holds no slab.
  [[nodiscard]] std::uintptr_t find(const void* p) const noexcept {
    const auto page = reinterpret_cast<std::uintptr_t>(p) >> page_shift;
    if (page >> (address_bits - page_shift)) return 0;
    const leaf* l = top_[page >> 16].load(std::memory_order_acquire);  // pairs with set()'s release
    if (l == nullptr) return 0;
    return l->values[page & 0xffff].load(std::memory_order_acquire);
  }

  // Maps every page of [base, base + bytes) to value. base is 64 KiB aligned. Writers must be
  // serialised by the caller. Throws std::invalid_argument for an address beyond 48 bits.
  void set(const void* base, std::size_t bytes, std::uintptr_t value);

 private:
  struct leaf {
    std::atomic<std::uintptr_t> values[1 << 16] = {};
  };
  static constexpr std::size_t top_entries = std::size_t{1} << (address_bits - page_shift - 16);
  std::unique_ptr<std::atomic<leaf*>[]> top_ = std::make_unique<std::atomic<leaf*>[]>(top_entries);
  std::vector<std::unique_ptr<leaf>> leaves_;  // every leaf in top_ (writer only): frees them
};

}  // namespace cudapool::core
