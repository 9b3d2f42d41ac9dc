// thread_counters.hpp - statistics counters that cost the hot path no atomic read-modify-write.
//
// Each thread owns a slot (a dense number, recycled when the thread exits); each slot has its own
// counter block per pool, written only by the slot's owner with a relaxed load and store, and
// summed by readers with relaxed loads. A recycled slot's counts stay: the next owner keeps adding
// to them, so sums stay exact. Threads beyond max_thread_slots share one block with fetch_add.
// A thread-local shortcut (per way of counters_shortcuts, the counters the thread last used there,
// keyed by a process-unique id, never by address) makes the usual add two thread-local loads and a
// compare. Pools made one after another take consecutive ways, so a thread that alternates between
// up to counters_shortcuts pools (stream arenas: a pool per stream) keeps every one's shortcut; with
// one way, each switch took the slow path (18 instructions per replayed operation of mlp_4stream
// through five arenas, callgrind, s46).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace cudapool::core {

inline constexpr unsigned max_thread_slots = 1024;
inline constexpr unsigned shared_thread_slot = max_thread_slots;

namespace detail {
// 1 + the calling thread's slot once it has one; 0 before. Trivial, so reading it needs no guard.
inline thread_local unsigned thread_slot_plus_one = 0;
// Per way, the counter block the calling thread used last and the id of its thread_counters (0:
// none). Cleared when the thread gives its slot back.
inline constexpr std::size_t counters_shortcuts = 8;
struct last_counters {
  std::uint64_t id;
  void* block;
};
inline thread_local last_counters last_used_counters[counters_shortcuts] = {};
[[nodiscard]] std::uint64_t next_counters_id() noexcept;
[[gnu::noinline]] unsigned take_thread_slot() noexcept;
}  // namespace detail

// The calling thread's slot (or shared_thread_slot). Thread-safe; one thread_local load.
[[nodiscard]] inline unsigned this_thread_slot() noexcept {
  const unsigned s = detail::thread_slot_plus_one;
  return s != 0 ? s - 1 : detail::take_thread_slot();
}

template <std::size_t N>
class thread_counters {
 public:
  thread_counters() = default;
  thread_counters(const thread_counters&) = delete;
  thread_counters& operator=(const thread_counters&) = delete;
  ~thread_counters() {
    for (unsigned s = 0; s <= max_thread_slots; ++s) delete slots_[s].load(std::memory_order_relaxed);
  }

  // Thread-safe, wait-free; no read-modify-write for a thread with its own slot. Adds a to counter
  // i and b to counter j (the hot path always moves two counters together).
  [[gnu::always_inline]] void add(std::size_t i, std::int64_t a, std::size_t j, std::int64_t b) noexcept {
    const detail::last_counters last = detail::last_used_counters[id_ % detail::counters_shortcuts];
    if (last.id == id_) [[likely]] {
      block* blk = static_cast<block*>(last.block);
      bump(blk->values[i], a);
      bump(blk->values[j], b);
      return;
    }
    add_slow(i, a, j, b);
  }

  // Thread-safe, wait-free: adds a to counter i.
  void add(std::size_t i, std::int64_t a) noexcept { add(i, a, i, 0); }

  // Adds that took the slow path (a thread's first add, or its shortcut's way taken by another
  // thread_counters since), counted in each thread's block as the counters are: tests and
  // diagnostics. Thread-safe; exact at quiescence.
  [[nodiscard]] std::int64_t slow_adds() const noexcept { return sum(slow_index); }
  // Thread-safe. Exact at quiescence.
  [[nodiscard]] std::int64_t sum(std::size_t i) const noexcept {
    std::int64_t total = 0;
    sum_each(&i, 1, &total);
    return total;
  }

  // Thread-safe. out[k] = sum(index[k]) for k < count, in one pass over the slots (a reader of a
  // few scattered counters: pool_core::in_use_bytes_now, two per size class in use). Exact at
  // quiescence.
  void sum_each(const std::size_t* index, std::size_t count, std::int64_t* out) const noexcept {
    for (std::size_t k = 0; k < count; ++k) out[k] = shared_->values[index[k]].load(std::memory_order_relaxed);
    const unsigned used = used_.load(std::memory_order_acquire);
    for (unsigned s = 0; s < used; ++s) {
      const block* b = slots_[s].load(std::memory_order_acquire);
      if (b == nullptr) continue;
      for (std::size_t k = 0; k < count; ++k) out[k] += b->values[index[k]].load(std::memory_order_relaxed);
    }
  }

 private:
  [[gnu::always_inline]] static void bump(std::atomic<std::int64_t>& v, std::int64_t n) noexcept {
    v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);  // single writer
  }

  struct alignas(64) block {
    std::atomic<std::int64_t> values[N + 1] = {};  // [slow_index]: slow_adds()
  };
  static constexpr std::size_t slow_index = N;

  // The calling thread's block, through its slot (and made the thread's shortcut).
  [[gnu::noinline]] void add_slow(std::size_t i, std::int64_t a, std::size_t j, std::int64_t b) noexcept {
    const unsigned s = this_thread_slot();
    block* blk = slots_[s].load(std::memory_order_acquire);  // pairs with the release in first_use()
    if (blk == nullptr) [[unlikely]] blk = first_use(s);
    if (blk != shared_) [[likely]] {
      detail::last_used_counters[id_ % detail::counters_shortcuts] = {id_, blk};
      bump(blk->values[i], a);
      bump(blk->values[j], b);
      bump(blk->values[slow_index], 1);
    } else {
      blk->values[slow_index].fetch_add(1, std::memory_order_relaxed);
      blk->values[i].fetch_add(a, std::memory_order_relaxed);
      blk->values[j].fetch_add(b, std::memory_order_relaxed);
    }
  }

  [[gnu::noinline]] block* first_use(unsigned s) noexcept {
    block* b = new (std::nothrow) block;
    if (b == nullptr) return shared_;
    slots_[s].store(b, std::memory_order_release);  // only slot s's owner ever stores here
    unsigned used = used_.load(std::memory_order_relaxed);
    while (used < s + 1 && !used_.compare_exchange_weak(used, s + 1, std::memory_order_release)) {
    }
    return b;
  }

  const std::uint64_t id_ = detail::next_counters_id();  // never reused: the shortcut's key
  std::atomic<unsigned> used_{0};  // 1 + the highest slot with a block: sums stop there
  std::unique_ptr<std::atomic<block*>[]> slots_ = std::make_unique<std::atomic<block*>[]>(max_thread_slots + 1);
  block* const shared_ = [this] {
    slots_[shared_thread_slot].store(new block, std::memory_order_relaxed);
    return slots_[shared_thread_slot].load(std::memory_order_relaxed);
  }();
};

}  // namespace cudapool::core
