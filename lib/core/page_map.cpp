#include <cudapool/detail/core/page_map.hpp>

#include <stdexcept>

namespace cudapool::core {

page_map::~page_map() = default;  // leaves_ frees the leaves

void page_map::set(const void* base, std::size_t bytes, std::uintptr_t value) {
  const auto first = reinterpret_cast<std::uintptr_t>(base) >> page_shift;
  const auto last = (reinterpret_cast<std::uintptr_t>(base) + bytes - 1) >> page_shift;
  if (last >> (address_bits - page_shift)) {
    throw std::invalid_argument("cudapool: device address beyond 48 bits");
  }
  for (auto page = first; page <= last; ++page) {
    auto& top_slot = top_[page >> 16];
    leaf* l = top_slot.load(std::memory_order_relaxed);
    if (l == nullptr) {
      leaves_.reserve(leaves_.size() + 1);  // may throw: before the leaf exists
      l = new leaf;
      leaves_.emplace_back(l);
      top_slot.store(l, std::memory_order_release);  // pairs with find()'s acquire
    }
    l->values[page & 0xffff].store(value, std::memory_order_release);
  }
}

}  // namespace cudapool::core
