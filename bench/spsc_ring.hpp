// spsc_ring.hpp - the hand-over ring of the producer -> consumer workloads (prodcons, and
// limit/prodcons), written once.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>

namespace bench {

// A bounded single-producer single-consumer ring of values (pointers, addresses; T{} is "empty") that hands over in batches, as
// xmalloc's threads pass blocks in batches: the producer publishes its tail every `batch` pushes
// (and when the ring is full, and at flush()), the consumer its head every `batch` pops. Publishing
// every element would move the ring's index lines between the two cores on every block and make
// the ring, not the allocator, the bottleneck.
template <class T>
class spsc_ring {
 public:
  static constexpr std::size_t capacity = 1024;
  static constexpr std::size_t batch = 32;
  bool push(T p) noexcept {
    if (tail_local_ - head_cache_ == capacity) {
      publish_tail();  // a consumer waiting on a full ring must see everything
      head_cache_ = head_.load(std::memory_order_acquire);  // pairs with pop's release store
      if (tail_local_ - head_cache_ == capacity) return false;
    }
    slots_[tail_local_ % capacity] = p;
    if (++tail_local_ - tail_published_ >= batch) publish_tail();
    return true;
  }
  // Producer: makes every pushed pointer visible (at the end of a run).
  void flush() noexcept { publish_tail(); }
  T pop() noexcept {
    if (head_local_ == tail_cache_) {
      publish_head();
      tail_cache_ = tail_.load(std::memory_order_acquire);  // pairs with publish_tail's release store
      if (head_local_ == tail_cache_) return T{};
    }
    T p = slots_[head_local_ % capacity];
    if (++head_local_ - head_published_ >= batch) publish_head();
    return p;
  }

 private:
  void publish_tail() noexcept {
    tail_published_ = tail_local_;
    tail_.store(tail_local_, std::memory_order_release);  // publishes the slots to pop's acquire load
  }
  void publish_head() noexcept {
    head_published_ = head_local_;
    head_.store(head_local_, std::memory_order_release);  // hands the slots back to push
  }

  alignas(64) std::atomic<std::size_t> head_{0};
  alignas(64) std::size_t head_local_ = 0;  // consumer only
  std::size_t head_published_ = 0;
  std::size_t tail_cache_ = 0;              // consumer's view of tail_
  alignas(64) std::atomic<std::size_t> tail_{0};
  alignas(64) std::size_t tail_local_ = 0;  // producer only
  std::size_t tail_published_ = 0;
  std::size_t head_cache_ = 0;              // producer's view of head_
  alignas(64) std::array<T, capacity> slots_{};
};

}  // namespace bench
