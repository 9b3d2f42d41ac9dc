// tls_cache_model.cpp - Relacy model of the tls pool's handshake between a thread cache's owner
// and a drainer (lib/include/cudapool/tls_pool.hpp begin_op/end_op, tls_pool.cpp claim/unclaim): the
// owner's fast path takes no lock, a drainer (idle pass, trim, the owner's exit) holds the cache's
// mutex and keeps the owner out with a Dekker handshake over in_op and drain_request.
//
// tls_free_lists itself does not run under Relacy (thread_local registry, moodycamel queues,
// std::mutex), so this is a faithful small model of those four functions, step for step, in the
// fallback mode of the asymmetric fence (both sides a seq_cst fence; with membarrier the light
// side is a compiler barrier and the heavy side makes every running thread execute a full
// barrier, which Relacy cannot express: the fallback is the ordering membarrier provides).
// 2 threads: the owner runs two operations (fast path, or the mutex path when it sees a drain
// request), the drainer claims the cache, empties it and unclaims. The cache's contents are an
// rl::var: the owner's fast path and the drain overlapping is a data race.
//
// Seeded bugs, each of which must be reported as a data race on the cache:
//   light fence dropped   the owner's store of in_op and load of drain_request reorder (store
//                         buffering): both sides see 0 and both touch the cache
//   unclaim w/o release   the owner's next fast path is not ordered after the drain's writes
//   end_op w/o release    the drain is not ordered after the owner's last fast path
#include <cudapool/detail/core/model/model_check.hpp>

namespace cudapool::core::model {
namespace {

enum class seeded_bug { none, light_fence_dropped, unclaim_relaxed, end_op_relaxed };

template <seeded_bug Bug>
struct owner_drainer_model : rl::test_suite<owner_drainer_model<Bug>, 2> {
  static inline std::uint64_t overlaps = 0;  // iterations in which the owner saw a drain request

  relacy_atomics::atomic<std::uint32_t> in_op{0};          // owner: 1 inside a fast-path operation
  relacy_atomics::atomic<std::uint32_t> drain_request{0};  // drainer: 1 while it holds the cache
  rl::mutex mutex;                                         // owner's slow paths and drainers
  rl::var<int> cached;                                     // the cache's bins
  rl::var<bool> saw_request;

  void before() {
    cached($) = 2;
    saw_request($) = false;
  }
  void after() {
    if (saw_request($)) ++overlaps;
  }

  void thread(unsigned id) {
    if (id == 0) {
      for (int op = 0; op < 2; ++op) owner_operation();
    } else {
      drain();
    }
  }

  bool begin_op() {
    in_op.store(1, std::memory_order_relaxed);
    if (Bug != seeded_bug::light_fence_dropped) rl::atomic_thread_fence(rl::mo_seq_cst, $);  // light_fence
    if (drain_request.load(std::memory_order_acquire) == 0) return true;
    end_op();
    return false;
  }
  void end_op() {
    in_op.store(0, Bug == seeded_bug::end_op_relaxed ? std::memory_order_relaxed : std::memory_order_release);
  }
  void owner_operation() {
    if (begin_op()) {  // the fast path: plain loads and stores on the bins
      cached($) = cached($) + 1;
      end_op();
      return;
    }
    saw_request($) = true;
    mutex.lock($);  // push_guarded / pop_guarded
    cached($) = cached($) + 1;
    mutex.unlock($);
  }

  void drain() {
    mutex.lock($);
    drain_request.store(1, std::memory_order_relaxed);  // claim
    rl::atomic_thread_fence(rl::mo_seq_cst, $);         // heavy_fence
    while (in_op.load(std::memory_order_acquire) != 0) rl::yield(1, $);
    cached($) = 0;  // the drain: the bins go to the transfer layer
    drain_request.store(0, Bug == seeded_bug::unclaim_relaxed ? std::memory_order_relaxed
                                                             : std::memory_order_release);  // unclaim
    mutex.unlock($);
  }
};

}  // namespace
}  // namespace cudapool::core::model

int main() {
  using namespace cudapool::core::model;
  model_checks m;
  m.sound<owner_drainer_model<seeded_bug::none>>("tls cache: owner's fast path against a drainer", 100000,
                                                 owner_drainer_model<seeded_bug::none>::overlaps);
  m.seeded<owner_drainer_model<seeded_bug::light_fence_dropped>>("tls cache: light fence dropped (store buffering)",
                                                                 rl::test_result_data_race, 100000);
  m.seeded<owner_drainer_model<seeded_bug::unclaim_relaxed>>("tls cache: unclaim's store without release",
                                                             rl::test_result_data_race, 100000);
  m.seeded<owner_drainer_model<seeded_bug::end_op_relaxed>>("tls cache: end_op's store without release",
                                                            rl::test_result_data_race, 100000);
  return m.exit_code();
}
