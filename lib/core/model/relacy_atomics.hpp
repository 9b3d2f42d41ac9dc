// relacy_atomics.hpp - the atomics policy (core/atomics.hpp) of the model tests: atomic<T> has
// std::atomic's interface and forwards every call to Relacy's rl::atomic<T>, so Relacy explores the
// interleavings and the relaxed-memory outcomes of the library's own code.
//
// Included by model_check.hpp, after <relacy/relacy.hpp> and the #undef of its macros. Each call
// records the caller's source location, so Relacy's histories name the line of the algorithm, not
// of this wrapper.
//
// Weakening is how a test seeds a memory-order bug without copying the algorithm:
//   none                  the orders as written
//   release_dropped       release -> relaxed, acq_rel -> acquire, everywhere (publication lost)
//   load_acquire_dropped  acquire loads relaxed
//   rmw_acquire_dropped   the acquire of read-modify-writes (a CAS's success order) dropped
//   cas_failure_relaxed   a CAS's failure order relaxed
//   all_relaxed           every order relaxed (atomicity kept, ordering lost)
//   in_scope              whatever the calling thread's weakened_in_scope says (none outside
//                         one): seeds a bug into one call of the algorithm only, e.g. the push-back
//                         of a steal but not the pushes of the frees that it races with
//   notify_dropped        notify_one wakes nobody (a lost wake-up: the sleeper's deadlock)
//
// wait and notify_one are Relacy's futex (its pthread emulation's futex wait and wake): a thread
// that waits while the word still holds `old` sleeps until a notify, and Relacy reports a
// deadlock when every thread sleeps. parks counts the waits that slept (outside Relacy's state),
// so that a model can require the sleeping path to have been reached.
#pragma once

#include <atomic>
#include <cstdint>

namespace cudapool::core::model {

enum class weakening {
  none,
  release_dropped,
  load_acquire_dropped,
  rmw_acquire_dropped,
  cas_failure_relaxed,
  all_relaxed,
  in_scope,
  notify_dropped
};

// The weakening of relacy_atomics_t<weakening::in_scope> for the thread that constructs it, until
// it is destroyed. Relacy runs a model's threads as fibers of one OS thread: the slot is per model
// thread, by Relacy's thread index.
class weakened_in_scope {
 public:
  explicit weakened_in_scope(weakening w) noexcept : slot_(slot_of(rl::thread_index())) { slot_ = w; }
  ~weakened_in_scope() { slot_ = weakening::none; }
  weakened_in_scope(const weakened_in_scope&) = delete;
  weakened_in_scope& operator=(const weakened_in_scope&) = delete;

  static weakening current() noexcept { return slot_of(rl::thread_index()); }
  // For a test's before(): a failing iteration ends without unwinding its fibers' stacks.
  static void reset() noexcept {
    for (unsigned t = 0; t < 16; ++t) slot_of(t) = weakening::none;
  }

 private:
  static weakening& slot_of(unsigned thread) noexcept {
    static weakening slots[16] = {};
    return slots[thread % 16];
  }
  weakening& slot_;
};

template <weakening W>
struct relacy_atomics_t {
  enum class access { load, store, rmw, cas_failure };

  static std::memory_order weaken(std::memory_order m, access a) noexcept {
    return weaken_as(W == weakening::in_scope ? weakened_in_scope::current() : W, m, a);
  }
  static constexpr std::memory_order weaken_as(weakening w, std::memory_order m, access a) noexcept {
    using enum std::memory_order;
    switch (w) {
      case weakening::none: return m;
      case weakening::release_dropped: return m == release ? relaxed : m == acq_rel ? acquire : m;
      case weakening::load_acquire_dropped: return a == access::load && m == acquire ? relaxed : m;
      case weakening::rmw_acquire_dropped:
        return a != access::rmw ? m : m == acquire ? relaxed : m == acq_rel ? release : m;
      case weakening::cas_failure_relaxed: return a == access::cas_failure ? relaxed : m;
      case weakening::all_relaxed: return relaxed;
      case weakening::in_scope: return m;  // weaken() resolved it
      case weakening::notify_dropped: return m;
    }
    return m;
  }
  static rl::memory_order to_rl(std::memory_order m, access a) noexcept {
    switch (weaken(m, a)) {
      case std::memory_order_relaxed: return rl::mo_relaxed;
      case std::memory_order_consume: return rl::mo_consume;
      case std::memory_order_acquire: return rl::mo_acquire;
      case std::memory_order_release: return rl::mo_release;
      case std::memory_order_acq_rel: return rl::mo_acq_rel;
      case std::memory_order_seq_cst: return rl::mo_seq_cst;
    }
    return rl::mo_seq_cst;
  }
  // The failure order std::atomic derives for a compare_exchange given one order.
  static constexpr std::memory_order failure_of(std::memory_order m) noexcept {
    if (m == std::memory_order_acq_rel) return std::memory_order_acquire;
    if (m == std::memory_order_release) return std::memory_order_relaxed;
    return m;
  }
  // The caller's location, as std::source_location::current() would give it (which clang 14 with
  // libstdc++ 12 lacks): the builtins in a default argument name the call that uses it.
  struct call_site {
    const char* function;
    const char* file;
    unsigned line;
    // NOLINTNEXTLINE: implicit, so that `call_site l = {}` is the caller's location
    call_site(const char* fn = __builtin_FUNCTION(), const char* f = __builtin_FILE(), unsigned n = __builtin_LINE())
        : function(fn), file(f), line(n) {}
  };
  static rl::debug_info info(const call_site& l) noexcept { return rl::debug_info(l.function, l.file, l.line); }

  template <class T>
  class atomic {
   public:
    atomic() = default;
    atomic(T v) : a_(v) {}  // NOLINT: as std::atomic's converting constructor
    atomic(const atomic&) = delete;
    atomic& operator=(const atomic&) = delete;

    T load(std::memory_order m = std::memory_order_seq_cst,
           call_site l = {}) const noexcept {
      return a_.load(to_rl(m, access::load), info(l));
    }
    void store(T v, std::memory_order m = std::memory_order_seq_cst,
               call_site l = {}) noexcept {
      a_.store(v, to_rl(m, access::store), info(l));
    }
    T exchange(T v, std::memory_order m = std::memory_order_seq_cst,
               call_site l = {}) noexcept {
      return a_.exchange(v, to_rl(m, access::rmw), info(l));
    }
    T fetch_add(T v, std::memory_order m = std::memory_order_seq_cst,
                call_site l = {}) noexcept {
      return a_.fetch_add(v, to_rl(m, access::rmw), info(l));
    }
    T fetch_sub(T v, std::memory_order m = std::memory_order_seq_cst,
                call_site l = {}) noexcept {
      return a_.fetch_sub(v, to_rl(m, access::rmw), info(l));
    }
    bool compare_exchange_weak(T& expected, T desired, std::memory_order success, std::memory_order failure,
                               call_site l = {}) noexcept {
      return a_.compare_exchange_weak(expected, desired, to_rl(success, access::rmw), info(l), to_rl(failure, access::cas_failure), info(l));
    }
    bool compare_exchange_weak(T& expected, T desired, std::memory_order m = std::memory_order_seq_cst,
                               call_site l = {}) noexcept {
      return compare_exchange_weak(expected, desired, m, failure_of(m), l);
    }
    bool compare_exchange_strong(T& expected, T desired, std::memory_order success, std::memory_order failure,
                                 call_site l = {}) noexcept {
      return a_.compare_exchange_strong(expected, desired, to_rl(success, access::rmw), info(l), to_rl(failure, access::cas_failure), info(l));
    }
    bool compare_exchange_strong(T& expected, T desired, std::memory_order m = std::memory_order_seq_cst,
                                 call_site l = {}) noexcept {
      return compare_exchange_strong(expected, desired, m, failure_of(m), l);
    }

    // std::atomic's wait and notify_one, as Relacy's futex (rl_int_futex_impl's wait and wake).
    void wait(T old, std::memory_order m = std::memory_order_seq_cst, call_site l = {}) const noexcept {
      rl::context& c = rl::ctx();
      c.sched();
      c.atomic_thread_fence_seq_cst();
      T now;
      {
        rl::preemption_disabler pd(c);
        now = a_.load(to_rl(m, access::load), info(l));
      }
      if (now != old) return;
      ++parks;
      (void)a_.wait(c, false, false, info(l));
    }
    void notify_one(call_site l = {}) noexcept {
      if (W == weakening::notify_dropped) return;
      rl::context& c = rl::ctx();
      c.sched();
      c.atomic_thread_fence_seq_cst();
      (void)a_.wake(c, 1, info(l));
    }

   private:
    mutable rl::atomic<T> a_;
  };
  static inline std::uint64_t parks = 0;  // waits that slept, across iterations
};

using relacy_atomics = relacy_atomics_t<weakening::none>;
// The weakened policies the models seed bugs with.
using release_dropped_atomics = relacy_atomics_t<weakening::release_dropped>;
using load_acquire_dropped_atomics = relacy_atomics_t<weakening::load_acquire_dropped>;
using rmw_acquire_dropped_atomics = relacy_atomics_t<weakening::rmw_acquire_dropped>;
using cas_failure_relaxed_atomics = relacy_atomics_t<weakening::cas_failure_relaxed>;
using all_relaxed_atomics = relacy_atomics_t<weakening::all_relaxed>;
using in_scope_atomics = relacy_atomics_t<weakening::in_scope>;
using notify_dropped_atomics = relacy_atomics_t<weakening::notify_dropped>;

}  // namespace cudapool::core::model
