// fit_floor.cpp - the ideal best fit of fit_floor.hpp.
#include "fit_floor.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace bench {
namespace {

constexpr std::size_t granule = 256;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

class ideal_best_fit {
 public:
  std::size_t allocate(std::size_t bytes) {
    bytes = round_up(bytes, granule);
    auto it = by_size_.lower_bound({bytes, 0});
    if (it == by_size_.end()) {  // no hole: the top, merged with a hole that ends there
      std::size_t base = top_;
      if (!by_base_.empty()) {
        const auto last = std::prev(by_base_.end());
        if (last->first + last->second == top_) {
          base = last->first;
          remove(last->first, last->second);
        }
      }
      top_ = base + bytes;
      peak_ = std::max(peak_, top_);
      return base;
    }
    const auto [size, base] = *it;
    remove(base, size);
    if (size > bytes) insert(base + bytes, size - bytes);
    return base;
  }

  void deallocate(std::size_t base, std::size_t bytes) {
    bytes = round_up(bytes, granule);
    auto next = by_base_.lower_bound(base);
    if (next != by_base_.begin()) {
      const auto prev = std::prev(next);
      if (prev->first + prev->second == base) {
        base = prev->first;
        bytes += prev->second;
        remove(prev->first, prev->second);
      }
    }
    next = by_base_.lower_bound(base);
    if (next != by_base_.end() && base + bytes == next->first) {
      bytes += next->second;
      remove(next->first, next->second);
    }
    if (base + bytes == top_) {
      top_ = base;  // the wilderness grows back; the peak stays
    } else {
      insert(base, bytes);
    }
  }

  [[nodiscard]] std::size_t peak() const noexcept { return peak_; }

 private:
  void insert(std::size_t base, std::size_t size) {
    by_size_.insert({size, base});
    by_base_.emplace(base, size);
  }
  void remove(std::size_t base, std::size_t size) {
    by_size_.erase({size, base});
    by_base_.erase(base);
  }

  std::set<std::pair<std::size_t, std::size_t>> by_size_;  // (size, base): best fit, lowest base
  std::map<std::size_t, std::size_t> by_base_;             // base -> size: coalescing
  std::size_t top_ = 0;
  std::size_t peak_ = 0;
};

}  // namespace

std::size_t best_fit_floor(const trace& t, std::size_t page, int passes) {
  ideal_best_fit heap;
  std::vector<std::size_t> where(t.slots, 0);
  for (int pass = 0; pass < passes; ++pass) {
    for (const trace_op& o : t.ops) {
      if (o.alloc) {
        where[o.slot] = heap.allocate(o.bytes);
      } else {
        heap.deallocate(where[o.slot], o.bytes);  // a free carries its allocation's size
      }
    }
  }
  return round_up(heap.peak(), page);
}

}  // namespace bench
