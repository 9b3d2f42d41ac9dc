// tagged_stack.hpp - a lock-free LIFO of block indices (a Treiber stack) whose head is one 64-bit
// word {u32 index, u32 tag}. No double-width CAS, no pointers in the head.
//
// Links live in a host table that never moves or frees memory (the core's block_table, or any
// segmented_table whose entries have an atomic<block_index> `next`), so a popper that read a stale
// head may read its stale `next` harmlessly: the tag, bumped by every
// successful pop, makes its CAS fail. Pushes keep the tag: the head can only return to an index
// it held before through a pop, which changed the tag (the ABA problem is a pop-push-pop race).
// With TagBits = 0 (tests only) the classic ABA corruption is reproducible. Atomics is the atomics
// policy (atomics.hpp): std::atomic, or Relacy's in the model test (core/model/tagged_stack_model.cpp).
//
// Races tolerated and why: a popper reads `next` of a block another thread may already have popped,
// handed out and pushed again; the value may be anything the table held, and the CAS on the tagged
// head rejects it. A 32-bit tag wraps after 2^32 pops between one thread's read and its CAS; a
// thread stalled that long while exactly as many pops happen is the accepted risk of every
// tagged-index stack (Boost.Lockfree's freelist takes the same 16- or 32-bit bet).
#pragma once

#include <atomic>
#include <cstdint>

#include <cudapool/detail/core/atomics.hpp>
#include <cudapool/detail/core/block_table.hpp>
#include <cudapool/options.hpp>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace cudapool::core {

using backoff_policy = backoff_options;

class backoff {
 public:
  explicit backoff(const backoff_policy& p) noexcept : spins_(p.min_spins), max_(p.max_spins) {}
  void operator()() noexcept {
    if (max_ == 0) return;
    for (unsigned i = 0; i < spins_; ++i) cpu_relax();
    if (spins_ < max_) spins_ *= 2;
  }
  static void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

 private:
  unsigned spins_;
  unsigned max_;
};

// Called between reading the head (and its next) and the CAS, so tests can force interleavings.
struct no_stack_hook {
  static void between_read_and_cas() noexcept {}
};

template <unsigned TagBits = 32, class Hook = no_stack_hook, class Atomics = std_atomics>
class tagged_stack {
  static_assert(TagBits <= 32);

 public:
  tagged_stack() = default;
  tagged_stack(const tagged_stack&) = delete;
  tagged_stack& operator=(const tagged_stack&) = delete;

  // Thread-safe and lock-free. no_block when empty.
  template <class Table>
  [[nodiscard, gnu::always_inline]] block_index pop(Table& t, const backoff_policy& policy) noexcept {
    // Acquire: pairs with the release of the push that published this head, so the pusher's
    // writes (the block's `next`, its table entry) are visible.
    std::uint64_t h = head_.load(std::memory_order_acquire);
    backoff wait(policy);
    for (;;) {
      const block_index b = index_of(h);
      if (b == no_block) return no_block;
      const block_index next = t[b].next.load(std::memory_order_relaxed);  // may be stale: see top
      Hook::between_read_and_cas();
      if (head_.compare_exchange_weak(h, pack(next, tag_of(h) + 1), std::memory_order_acquire,
                                      std::memory_order_acquire)) {
        return b;
      }
      wait();
    }
  }

  // Thread-safe and lock-free.
  template <class Table>
  [[gnu::always_inline]] void push(Table& t, block_index b, const backoff_policy& policy) noexcept {
    push_chain(t, b, b, policy);
  }

  // Thread-safe and lock-free. Pushes head..tail, already linked through `next`, with one CAS.
  template <class Table>
  [[gnu::always_inline]] void push_chain(Table& t, block_index head, block_index tail,
                                         const backoff_policy& policy) noexcept {
    std::uint64_t h = head_.load(std::memory_order_relaxed);
    backoff wait(policy);
    for (;;) {
      t[tail].next.store(index_of(h), std::memory_order_relaxed);
      // Release: publishes the chain's links (and everything the pusher did to these blocks) to
      // the popper's acquire.
      if (head_.compare_exchange_weak(h, pack(head, tag_of(h)), std::memory_order_release,
                                      std::memory_order_relaxed)) {
        return;
      }
      wait();
    }
  }

  // Thread-safe and lock-free. Detaches the whole stack; returns its first block (no_block if
  // empty), linked through `next`. Bumps the tag like a pop: it removes blocks.
  [[nodiscard]] block_index pop_all() noexcept {
    std::uint64_t h = head_.load(std::memory_order_relaxed);
    while (!head_.compare_exchange_weak(h, pack(no_block, tag_of(h) + 1), std::memory_order_acquire,
                                        std::memory_order_relaxed)) {
    }
    return index_of(h);
  }

  // Thread-safe and lock-free: pop_all(), then a private walk to find the tail and count.
  template <class Table>
  [[nodiscard]] block_chain take_all(Table& t) noexcept {
    block_chain chain;
    chain.head = pop_all();
    for (block_index b = chain.head; b != no_block; b = t[b].next.load(std::memory_order_relaxed)) {
      chain.tail = b;
      ++chain.count;
    }
    return chain;
  }

  // Counts the blocks by walking the links, stopping at `bound` (a racing writer can make a walk
  // see stale links; the bound keeps it finite). Exact only at quiescence.
  [[nodiscard]] std::size_t count_unsafe(const block_table& t, std::size_t bound) const noexcept {
    std::size_t n = 0;
    for (block_index b = peek_unsafe(); b != no_block && n < bound; b = t[b].next.load(std::memory_order_relaxed)) ++n;
    return n;
  }

  // Not thread-safe against writers: exact only at quiescence.
  [[nodiscard]] block_index peek_unsafe() const noexcept { return index_of(head_.load(std::memory_order_acquire)); }

 private:
  static constexpr std::uint64_t tag_mask = TagBits == 0 ? 0 : (~std::uint64_t{0} >> (64 - TagBits));
  static constexpr std::uint64_t pack(block_index b, std::uint64_t tag) noexcept {
    return ((tag & tag_mask) << 32) | b;
  }
  static constexpr block_index index_of(std::uint64_t h) noexcept { return static_cast<block_index>(h); }
  static constexpr std::uint64_t tag_of(std::uint64_t h) noexcept { return h >> 32; }

  typename Atomics::template atomic<std::uint64_t> head_{pack(no_block, 0)};
};

}  // namespace cudapool::core
