// word_lock.hpp - a mutex in one 32-bit word: lock and unlock inline, one atomic read-modify-write
// each when nobody waits; a waiter sleeps in the kernel (a futex on Linux; C++20's atomic wait
// elsewhere). Drepper's third mutex ("Futexes Are Tricky", 2011): 0 unlocked, 1 locked, 2 locked
// with possible sleepers. A locker that finds the word taken sets it to 2 before it sleeps, so the
// unlock that sees 2 wakes one sleeper; the woken thread sets 2 again, since others may still sleep.
//
// Why not std::mutex: it is pthread_mutex_lock and _unlock, calls into libc that check the mutex's
// kind before their atomic. The segment heap takes its lock once per large allocation and once
// per large free; there the two calls were 53 of a replayed operation's 693 instructions
// (callgrind, lm_infer_varseq, lockfree, /elided), and this lock 6% fewer instructions and 4-6%
// less time per operation on the development VM (docs/results/2026-12-05-vm-s26). Like glibc's
// default mutex it does not spin before it sleeps, and it is not recursive. With libstdc++'s
// atomic wait, which spins first, serve/mixed at 64 threads on the VM's 2 vCPUs measured
// 0.93-0.99x std::mutex's requests/s; with the futex itself 1.01-1.03x (10 rounds each).
//
// The algorithm is written once over the atomics policy (core/atomics.hpp): the model test
// (core/model/word_lock_model.cpp) runs this code with Relacy's atomics, whose wait and
// notify_one are Relacy's futex: mutual exclusion, the ordering of what the lock protects, and no
// lost wake-up (a sleeper that nobody wakes is a deadlock there). The Linux futex calls have the
// same contract (a wait returns at once if the word changed; a wake wakes one sleeper).
//
// Thread-safety: all members are thread-safe; unlock by the thread that holds the lock.
#pragma once

#include <atomic>
#include <cstdint>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <cudapool/detail/core/atomics.hpp>

namespace cudapool::core {

namespace detail {
// The sleep and the wake of the contended path. For std::atomic on Linux: the futex itself, as
// glibc's mutex does (libstdc++'s atomic wait spins first: the header's note). Elsewhere, and for
// the model's atomics (Relacy's futex), the atomic's own wait and notify.
template <class Word>
void sleep_while(Word& word, std::uint32_t value) noexcept {
  word.wait(value, std::memory_order_relaxed);
}
template <class Word>
void wake_one(Word& word) noexcept {
  word.notify_one();
}
#if defined(__linux__)
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) && std::atomic<std::uint32_t>::is_always_lock_free);
inline void sleep_while(std::atomic<std::uint32_t>& word, std::uint32_t value) noexcept {
  // Returns at once if the word no longer holds value (EAGAIN), on a wake, or spuriously (EINTR):
  // the caller looks at the word again in every case.
  (void)syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, value, nullptr, nullptr, 0);
}
inline void wake_one(std::atomic<std::uint32_t>& word) noexcept {
  (void)syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}
#endif
}  // namespace detail

template <class Atomics>
class basic_word_lock {
 public:
  basic_word_lock() = default;
  basic_word_lock(const basic_word_lock&) = delete;
  basic_word_lock& operator=(const basic_word_lock&) = delete;

  [[gnu::always_inline]] void lock() noexcept {
    std::uint32_t seen = unlocked;
    if (word_.compare_exchange_strong(seen, locked, std::memory_order_acquire, std::memory_order_relaxed)) [[likely]] {
      return;
    }
    lock_contended(seen);
  }

  [[nodiscard, gnu::always_inline]] bool try_lock() noexcept {
    std::uint32_t seen = unlocked;
    return word_.compare_exchange_strong(seen, locked, std::memory_order_acquire, std::memory_order_relaxed);
  }

  [[gnu::always_inline]] void unlock() noexcept {
    if (word_.exchange(unlocked, std::memory_order_release) == sleepers) [[unlikely]] detail::wake_one(word_);
  }

 private:
  static constexpr std::uint32_t unlocked = 0;
  static constexpr std::uint32_t locked = 1;
  static constexpr std::uint32_t sleepers = 2;  // locked, and a thread may sleep on the word

  [[gnu::noinline]] void lock_contended(std::uint32_t seen) noexcept {
    // Taking the word as `sleepers` when it comes free: a thread that took it as `locked` while
    // others slept would not wake them on its unlock.
    if (seen != sleepers) seen = word_.exchange(sleepers, std::memory_order_acquire);
    while (seen != unlocked) {
      detail::sleep_while(word_, sleepers);
      seen = word_.exchange(sleepers, std::memory_order_acquire);
    }
  }

  typename Atomics::template atomic<std::uint32_t> word_{unlocked};
};

using word_lock = basic_word_lock<std_atomics>;

}  // namespace cudapool::core
