// limits.cpp - floors for the tls pool's hot path: the mechanism alone, as plain host data
// structures, with no pool and no backend. They run in the same binary and run as the pools, so
// the pools' figures on a host can be read against what the mechanism itself costs there. Device
// addresses are fake integers (never dereferenced). An item is one alloc + free pair.
//
//   limit/stack               a thread's cache: an array stack of 32-bit block indices (capacity
//                             64, 16 in it); pop one, push it back. The floor of any per-thread
//                             cache.
//   limit/stack+state         as stack, plus the block's 16-byte host entry (address|class, next,
//                             state) in a range of a table that the thread owns: the pop stores
//                             live|bytes into the state word (relaxed) and reads the address; the
//                             push is the double-free check, one CAS live -> free (acq_rel) after
//                             a relaxed load of the word (as pool_core::retire): the one atomic
//                             state change per block that the issue mandates.
//   limit/stack+state+lookup  as stack+state, but the free gets only the address and finds the
//                             entry as pool_core::lookup does: the pool's two-level page map (48-bit
//                             addresses, 64 KiB pages) to the slab's descriptor, base and bounds
//                             checks, the index by Lemire's fastdiv, the interior check; then the
//                             CAS. Thread t's slab: 16 blocks of 4 KiB at 0x7f0000000000 + t * 64 KiB.
//   limit/prodcons            threads in pairs, the tls pool's producer -> consumer path over the
//                             cheapest transfer layer (per pair, no contention): the producer pops
//                             an index from its stack (refilled with a whole batch of 16 from the
//                             pair's return ring when empty), marks the entry live and pushes the
//                             address through an SPSC ring (1024 slots, published every 32, as
//                             prodcons/<a> does); the consumer does the lookup + CAS of
//                             stack+state+lookup and pushes the index on its stack, handing every
//                             16 back to the producer as one batch through a second SPSC ring. The
//                             producer owns 1024 blocks (64 slabs) and never starves. Items are
//                             counted on the producer side.
//
// What the pools also do and these leave out: the size-class computation, the per-thread
// statistics counters, finding the thread's cache (a thread_local load), the handle or virtual
// call, and any slow path. The stacks are reached through a pointer the compiler cannot see
// through, and every "user" between alloc and free is an opaque asm with a memory clobber, so the
// stack's count and slots go through memory as they do when alloc and free are separate calls.
#include "limits.hpp"
#include "spin_wait.hpp"
#include "spsc_ring.hpp"
#include <cudapool/detail/core/page_map.hpp>

#include <benchmark/benchmark.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <thread>

namespace bench {
namespace {

constexpr std::uintptr_t fake_base = 0x7f0000000000;  // slab k at fake_base + k * slab_span
constexpr std::uintptr_t slab_span = 64 * 1024;
constexpr std::uint32_t block_bytes = 4096;
constexpr std::uint32_t slab_blocks = 16;
constexpr std::uint64_t size_class = 4;      // any class: kept in the address's low 8 bits
constexpr int max_threads = 64;
constexpr std::uint32_t pair_slabs = 64;     // prodcons: 1024 blocks per producer
constexpr std::uint32_t slab_count = max_threads / 2 * pair_slabs;
constexpr std::uint32_t no_block = ~std::uint32_t{0};
constexpr std::uint32_t batch_blocks = 16;   // prodcons hands blocks back 16 at a time

// The pool's state word: state in the top 2 bits, requested bytes below (block_entry::meta).
constexpr std::uint32_t state_free = 0;
constexpr std::uint32_t state_live = 1;
constexpr std::uint32_t live_4k = (state_live << 30) | block_bytes;

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "limit benchmarks: %s (a bug in bench/limits.cpp)\n", what);
  std::abort();
}


// ---- the pool's host metadata, re-done in a few lines ------------------------------------------

// A block's host entry, 16 bytes as core::block_entry (`next` is unused here but keeps four
// entries to a cache line).
struct entry {
  std::uint64_t address_and_class = 0;
  std::atomic<std::uint32_t> next{no_block};
  std::atomic<std::uint32_t> state{state_free};
};
static_assert(sizeof(entry) == 16);

// Hand-out: the popped block becomes live; its address goes to the caller.
[[gnu::always_inline]] inline std::uintptr_t hand_out(entry& e) noexcept {
  e.state.store(live_4k, std::memory_order_relaxed);
  return static_cast<std::uintptr_t>(e.address_and_class & ~std::uint64_t{0xff});
}

// The double-free check: live -> free by CAS, false when the block is not live (pool_core::retire).
[[gnu::always_inline]] inline bool retire(entry& e) noexcept {
  std::uint32_t m = e.state.load(std::memory_order_relaxed);
  if ((m >> 30) != state_live) return false;
  return e.state.compare_exchange_strong(m, state_free, std::memory_order_acq_rel);
}

struct slab_desc {
  std::atomic<std::uintptr_t> base{0};
  std::uint32_t block_bytes = 0;
  std::uint32_t block_count = 0;
  std::uint64_t reciprocal = 0;  // ~0 / block_bytes + 1 (Lemire's fastdiv)
  std::uint32_t first_block = 0;
  entry* entries = nullptr;      // &table[first_block]
};

// Free by address: pool_core::lookup, then retire. The block's index, or no_block for anything
// but the start of a live block.
[[gnu::always_inline]] inline std::uint32_t free_by_address(const cudapool::core::page_map& pages, std::uintptr_t addr) noexcept {
  const auto* s = reinterpret_cast<const slab_desc*>(pages.find(reinterpret_cast<const void*>(addr)));
  if (s == nullptr) return no_block;
  const std::uintptr_t base = s->base.load(std::memory_order_acquire);
  if (base == 0 || addr < base) return no_block;
  if (addr - base >= std::uintptr_t{s->block_count} * s->block_bytes) return no_block;
  const auto offset = static_cast<std::uint32_t>(addr - base);
  const auto i = static_cast<std::uint32_t>((static_cast<unsigned __int128>(s->reciprocal) * offset) >> 64);
  if (offset != i * s->block_bytes) return no_block;  // interior pointer
  if (!retire(s->entries[i])) return no_block;
  return s->first_block + i;
}

// A thread's cache: an array stack of block indices.
struct alignas(64) index_stack {
  static constexpr std::uint32_t capacity = 64;
  std::uint32_t count = 0;
  std::uint32_t items[capacity];
  [[nodiscard]] bool empty() const noexcept { return count == 0; }
  [[nodiscard]] bool full() const noexcept { return count == capacity; }
  std::uint32_t pop() noexcept { return items[--count]; }
  void push(std::uint32_t b) noexcept { items[count++] = b; }
};

// ---- prodcons's transfer layer -----------------------------------------------------------------

// Addresses, producer -> consumer: prodcons's ring (spsc_ring.hpp). 0 is "empty".
using address_ring = spsc_ring<std::uintptr_t>;

// Batches of 16 indices, consumer -> producer, each published on its own. 64 slots hold every
// block of a pair, so a push never finds it full (it would fail, not wait).
class batch_ring {
 public:
  static constexpr std::size_t capacity = 64;
  using batch = std::array<std::uint32_t, batch_blocks>;
  bool push(const std::uint32_t* items) noexcept {
    if (tail_ - head_cache_ == capacity) {
      head_cache_ = head_published_.load(std::memory_order_acquire);
      if (tail_ - head_cache_ == capacity) return false;
    }
    std::memcpy(slots_[tail_ % capacity].data(), items, sizeof(batch));
    tail_published_.store(++tail_, std::memory_order_release);
    return true;
  }
  bool pop(std::uint32_t* items) noexcept {
    if (head_ == tail_cache_) {
      tail_cache_ = tail_published_.load(std::memory_order_acquire);
      if (head_ == tail_cache_) return false;
    }
    std::memcpy(items, slots_[head_ % capacity].data(), sizeof(batch));
    head_published_.store(++head_, std::memory_order_release);
    return true;
  }

 private:
  alignas(64) std::atomic<std::size_t> head_published_{0};
  alignas(64) std::size_t head_ = 0;  // producer (the popper) only
  std::size_t tail_cache_ = 0;
  alignas(64) std::atomic<std::size_t> tail_published_{0};
  alignas(64) std::size_t tail_ = 0;  // consumer (the pusher) only
  std::size_t head_cache_ = 0;
  alignas(64) std::array<batch, capacity> slots_{};
};
static_assert(pair_slabs * slab_blocks <= batch_ring::capacity * batch_blocks);
static_assert(pair_slabs * slab_blocks <= address_ring::capacity);

struct channel {
  address_ring blocks;
  batch_ring returns;
};

// ---- the fake pool: every slab mapped, built once ----------------------------------------------
//
// Read-only during the runs but for the entries' state words and the channels. Each run's threads
// reset what they use before the timed loop: Google Benchmark starts no thread's loop before every
// thread has reached it (and runs one benchmark at a time), so that needs no lock.
struct world {
  world() {
    for (std::uint32_t k = 0; k < slab_count; ++k) {
      slab_desc& s = slabs[k];
      const std::uintptr_t base = fake_base + k * slab_span;
      s.block_bytes = block_bytes;
      s.block_count = slab_blocks;
      s.reciprocal = ~std::uint64_t{0} / block_bytes + 1;
      s.first_block = k * slab_blocks;
      s.entries = &entries[s.first_block];
      for (std::uint32_t i = 0; i < slab_blocks; ++i) s.entries[i].address_and_class = (base + i * block_bytes) | size_class;
      s.base.store(base, std::memory_order_release);
      pages.set(reinterpret_cast<const void*>(base), slab_span, reinterpret_cast<std::uintptr_t>(&s));
    }
  }
  void reset_slab(std::uint32_t k) noexcept {
    for (std::uint32_t i = 0; i < slab_blocks; ++i) slabs[k].entries[i].state.store(state_free, std::memory_order_relaxed);
  }

  alignas(64) entry entries[slab_count * slab_blocks];  // slab k's range: 256 bytes, 64-aligned
  slab_desc slabs[slab_count];
  cudapool::core::page_map pages;  // the pool's own page map
  channel channels[max_threads / 2];
};

world& the_world() {
  static const std::unique_ptr<world> w = std::make_unique<world>();
  return *w;
}

// ---- the benchmarks ----------------------------------------------------------------------------

enum class level { stack, state, lookup };

// limit/stack, limit/stack+state, limit/stack+state+lookup. Thread t: slab t, its 16 blocks on the
// stack.
template <level L>
void cache_pair(benchmark::State& state) {
  world& w = the_world();
  const auto slab = static_cast<std::uint32_t>(state.thread_index());
  w.reset_slab(slab);
  index_stack local;
  for (std::uint32_t i = 0; i < slab_blocks; ++i) local.push(slab * slab_blocks + i);
  index_stack* s = &local;
  benchmark::DoNotOptimize(s);  // from here the compiler knows nothing of the stack
  for (auto _ : state) {
    if (s->empty()) [[unlikely]] broken("empty stack");
    std::uint32_t b = s->pop();
    if constexpr (L == level::stack) {
      benchmark::DoNotOptimize(b);
    } else {
      std::uintptr_t p = hand_out(w.entries[b]);
      benchmark::DoNotOptimize(p);
      if constexpr (L == level::state) {
        if (!retire(w.entries[b])) [[unlikely]] broken("double free");
      } else {
        b = free_by_address(w.pages, p);
        if (b == no_block) [[unlikely]] broken("lookup or double-free check failed");
      }
    }
    if (s->full()) [[unlikely]] broken("full stack");
    s->push(b);
  }
  state.SetItemsProcessed(state.iterations());
}

// limit/prodcons. Pair k = threads 2k (producer) and 2k + 1 (consumer): slabs [64k, 64k + 64).
void prodcons_pair(benchmark::State& state) {
  world& w = the_world();
  const auto pair = static_cast<std::uint32_t>(state.thread_index() / 2);
  const bool producer = state.thread_index() % 2 == 0;
  if (producer && state.thread_index() + 1 >= state.threads()) broken("prodcons needs an even number of threads");
  channel& ch = w.channels[pair];
  index_stack local;
  index_stack* s = &local;
  benchmark::DoNotOptimize(s);
  if (producer) {
    // Before any loop starts: a fresh channel, the pair's blocks free and all in the return ring.
    std::destroy_at(&ch);
    std::construct_at(&ch);
    for (std::uint32_t k = pair * pair_slabs; k < (pair + 1) * pair_slabs; ++k) {
      w.reset_slab(k);
      std::uint32_t items[batch_blocks];
      for (std::uint32_t i = 0; i < slab_blocks; ++i) items[i] = k * slab_blocks + i;
      if (!ch.returns.push(items)) broken("return ring full");
    }
  }
  benchmark::IterationCount done = 0;
  for (auto _ : state) {
    if (producer) {
      if (s->empty()) {
        spin_wait wait;
        while (!ch.returns.pop(s->items)) wait();
        s->count = batch_blocks;
      }
      const std::uintptr_t p = hand_out(w.entries[s->pop()]);
      spin_wait wait;
      while (!ch.blocks.push(p)) wait();
      // The partial batch, inside the loop: the threads wait for each other at its end.
      if (++done == state.max_iterations) ch.blocks.flush();
    } else {
      std::uintptr_t p = 0;
      spin_wait wait;
      while ((p = ch.blocks.pop()) == 0) wait();
      const std::uint32_t b = free_by_address(w.pages, p);
      if (b == no_block) [[unlikely]] broken("lookup or double-free check failed");
      s->push(b);
      if (s->count == batch_blocks) {
        if (!ch.returns.push(s->items)) [[unlikely]] broken("return ring full");
        s->count = 0;
      }
    }
  }
  if (producer) state.SetItemsProcessed(state.iterations());
}

}  // namespace

void register_limit_benchmarks() {
  (void)the_world();  // built here, not in the first run's set-up
  auto add = [](const char* name, void (*body)(benchmark::State&), std::initializer_list<int> threads) {
    benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(name, body);
    for (const int t : threads) b->Threads(t);
    b->UseRealTime();
  };
  add("limit/stack", cache_pair<level::stack>, {1, 2, 4, 8, 16, 32, 64});
  add("limit/stack+state", cache_pair<level::state>, {1, 2, 4, 8, 16, 32, 64});
  add("limit/stack+state+lookup", cache_pair<level::lookup>, {1, 2, 4, 8, 16, 32, 64});
  add("limit/prodcons", prodcons_pair, {2, 4, 8, 16, 32, 64});
}

}  // namespace bench
