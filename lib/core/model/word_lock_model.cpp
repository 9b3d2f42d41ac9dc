// word_lock_model.cpp - Relacy model of core::basic_word_lock (word_lock.hpp), the segment heap's
// lock: the library's code with Relacy's atomics, whose wait and notify_one are Relacy's futex.
//
// 3 threads each take the lock twice and add to a plain counter under it (a read and a write of an
// rl::var: two threads inside at once is a data race). Checked: the counter ends at 6, no data
// race, no deadlock (every sleeper is woken), and threads did sleep on the word (the contended
// path ran: relacy_atomics' parks).
//
// Seeded bugs, each of which must be reported:
//   acquire of the lock's CAS and exchanges dropped   data race on the counter
//   release of the unlock dropped                     data race on the counter
//   the unlock's notify_one lost                      deadlock (a sleeper nobody wakes)
#include <cudapool/detail/core/word_lock.hpp>

#include <cudapool/detail/core/model/model_check.hpp>

namespace cudapool::core::model {
namespace {

template <class Atomics>
struct lock_model : rl::test_suite<lock_model<Atomics>, 3> {
  basic_word_lock<Atomics> lock;
  rl::var<int> counter;  // GUARDED_BY(lock)

  void before() { counter($) = 0; }
  void thread(unsigned) {
    for (int i = 0; i < 2; ++i) {
      lock.lock();
      const int seen = counter($);
      counter($) = seen + 1;
      lock.unlock();
    }
  }
  void after() { RL_ASSERT(counter($) == 6); }
};

}  // namespace
}  // namespace cudapool::core::model

int main() {
  using namespace cudapool::core::model;
  model_checks m;
  m.sound<lock_model<relacy_atomics>>("word lock: 3 threads, mutual exclusion, every sleeper woken", 100000,
                                      relacy_atomics::parks);
  m.seeded<lock_model<rmw_acquire_dropped_atomics>>("word lock: the lock's acquire dropped",
                                                    rl::test_result_data_race, 100000);
  m.seeded<lock_model<release_dropped_atomics>>("word lock: the unlock's release dropped", rl::test_result_data_race,
                                                100000);
  m.seeded<lock_model<notify_dropped_atomics>>("word lock: the unlock's wake-up lost", rl::test_result_deadlock,
                                               100000);
  return m.exit_code();
}
