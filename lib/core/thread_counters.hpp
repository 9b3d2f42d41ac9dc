// thread_counters.hpp - statistics counters that cost the hot path no atomic read-modify-write.
//
// Each thread owns a slot (a dense number, recycled when the thread exits); each slot has its own
// counter block per pool, written only by the slot's owner with a relaxed load and store, and
// summed by readers with relaxed loads. A recycled slot's counts stay: the next owner keeps adding
// to them, so sums stay exact. Threads beyond max_thread_slots share one block with fetch_add.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace cudapool::core {

inline constexpr unsigned max_thread_slots = 1024;
inline constexpr unsigned shared_thread_slot = max_thread_slots;

// The calling thread's slot (or shared_thread_slot). Thread-safe; cheap after the first call.
[[nodiscard]] unsigned this_thread_slot() noexcept;

template <std::size_t N>
class thread_counters {
 public:
  thread_counters() = default;
  thread_counters(const thread_counters&) = delete;
  thread_counters& operator=(const thread_counters&) = delete;
  ~thread_counters() {
    for (unsigned s = 0; s <= max_thread_slots; ++s) delete slots_[s].load(std::memory_order_relaxed);
  }

  // Thread-safe, wait-free; no read-modify-write for a thread with its own slot.
  void add(std::size_t i, std::int64_t n) noexcept {
    const unsigned s = this_thread_slot();
    block* b = slots_[s].load(std::memory_order_acquire);  // pairs with the release in first_use()
    if (b == nullptr) [[unlikely]] b = first_use(s);
    std::atomic<std::int64_t>& v = b->values[i];
    if (b != shared_) [[likely]] {
      v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    } else {
      v.fetch_add(n, std::memory_order_relaxed);
    }
  }

  // Thread-safe. Exact at quiescence.
  [[nodiscard]] std::int64_t sum(std::size_t i) const noexcept {
    std::int64_t total = 0;
    for (unsigned s = 0; s <= max_thread_slots; ++s) {
      if (const block* b = slots_[s].load(std::memory_order_acquire)) total += b->values[i].load(std::memory_order_relaxed);
    }
    return total;
  }

 private:
  struct alignas(64) block {
    std::atomic<std::int64_t> values[N] = {};
  };

  [[gnu::noinline]] block* first_use(unsigned s) noexcept {
    block* b = new (std::nothrow) block;
    if (b == nullptr) return shared_;
    slots_[s].store(b, std::memory_order_release);  // only slot s's owner ever stores here
    return b;
  }

  std::unique_ptr<std::atomic<block*>[]> slots_ = std::make_unique<std::atomic<block*>[]>(max_thread_slots + 1);
  block* const shared_ = [this] {
    slots_[shared_thread_slot].store(new block, std::memory_order_relaxed);
    return slots_[shared_thread_slot].load(std::memory_order_relaxed);
  }();
};

}  // namespace cudapool::core
