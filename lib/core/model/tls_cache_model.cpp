// tls_cache_model.cpp - Relacy model of the tls pool's handshake between a thread cache's owner
// and a drainer: the owner's fast path takes no lock, a drainer (idle pass, trim, the owner's exit)
// holds the cache's mutex and keeps the owner out with the Dekker handshake of
// core/owner_handshake.hpp (begin_op, end_op, claim_handshakes, unclaim): the library's code,
// instantiated with Relacy's atomics.
//
// The rest of tls_free_lists does not run under Relacy (thread_local registry, moodycamel queues,
// std::mutex): the model's owner and drainer are the callers of the handshake, as tls_pool.hpp's
// take/put (fast path, or the mutex path when begin_op fails) and tls_pool.cpp's drains (mutex,
// claim, drain, unclaim) call it. The fences are the asymmetric fence's fallback mode (both sides
// a seq_cst fence; with membarrier the light side is a compiler barrier and the heavy side makes
// every running thread execute a full barrier, which Relacy cannot express: the fallback is the
// ordering membarrier provides).
// 2 threads: the owner runs two operations, the drainer claims the cache, empties it and
// unclaims. The cache's contents are an rl::var: the owner's fast path and the drain overlapping is
// a data race.
//
// Seeded bugs, each of which must be reported as a data race on the cache, each a policy of the
// shared header:
//   light fence dropped   Fences whose light() does nothing: the owner's store of in_op and load
//                         of drain_request reorder (store buffering), both sides see 0 and both
//                         touch the cache
//   unclaim w/o release   release dropped in the drainer's calls (in_scope): the owner's next fast
//                         path is not ordered after the drain's writes
//   end_op w/o release    release dropped in the owner's calls (in_scope): the drain is not ordered
//                         after the owner's last fast path
#include <cudapool/detail/core/owner_handshake.hpp>

#include <cudapool/detail/core/model/model_check.hpp>

namespace cudapool::core::model {
namespace {

// The fallback mode of core::asymmetric_fences: a seq_cst fence on both sides; a drainer's spin is
// a yield (Relacy's fair schedulers need it).
template <bool Light>
struct model_fences {
  void light() const { if (Light) rl::atomic_thread_fence(rl::mo_seq_cst, $); }
  void heavy() const { rl::atomic_thread_fence(rl::mo_seq_cst, $); }
  static void relax() { rl::yield(1, $); }
};

// Fences: the fences' policy. OwnerWeakening, DrainerWeakening: what in_scope_atomics drops in the
// owner's and the drainer's calls of the handshake.
template <class Fences, weakening OwnerWeakening, weakening DrainerWeakening>
struct owner_drainer_model : rl::test_suite<owner_drainer_model<Fences, OwnerWeakening, DrainerWeakening>, 2> {
  static inline std::uint64_t overlaps = 0;  // iterations in which the owner saw a drain request

  basic_owner_handshake<in_scope_atomics> handshake;  // thread_cache::handshake
  rl::mutex mutex;                                    // owner's slow paths and drainers
  rl::var<int> cached;                                // the cache's bins
  rl::var<bool> saw_request;

  void before() {
    weakened_in_scope::reset();
    cached($) = 2;
    saw_request($) = false;
  }
  void after() {
    if (saw_request($)) ++overlaps;
  }

  void thread(unsigned id) {
    if (id == 0) {
      const weakened_in_scope w(OwnerWeakening);
      for (int op = 0; op < 2; ++op) owner_operation();
    } else {
      const weakened_in_scope w(DrainerWeakening);
      drain();
    }
  }

  // tls_free_lists::take / put.
  void owner_operation() {
    if (handshake.begin_op(Fences{})) {  // the fast path: plain loads and stores on the bins
      cached($) = cached($) + 1;
      handshake.end_op();
      return;
    }
    saw_request($) = true;
    mutex.lock($);  // push_guarded / pop_guarded
    cached($) = cached($) + 1;
    mutex.unlock($);
  }

  // tls_free_lists::drain_idle_caches / take_all / the exit flush: claim, drain, unclaim.
  void drain() {
    mutex.lock($);
    claim_handshakes(Fences{}, 1, [this](std::size_t) -> basic_owner_handshake<in_scope_atomics>& { return handshake; });
    cached($) = 0;  // the drain: the bins go to the transfer layer
    handshake.unclaim();
    mutex.unlock($);
  }
};

using sound_fences = model_fences<true>;
using no_light_fence = model_fences<false>;
constexpr weakening as_written = weakening::none;
constexpr weakening no_release = weakening::release_dropped;

}  // namespace
}  // namespace cudapool::core::model

int main() {
  using namespace cudapool::core::model;
  using sound = owner_drainer_model<sound_fences, as_written, as_written>;
  model_checks m;
  m.sound<sound>("tls cache: owner's fast path against a drainer", 100000, sound::overlaps);
  m.seeded<owner_drainer_model<no_light_fence, as_written, as_written>>(
      "tls cache: light fence dropped (store buffering)", rl::test_result_data_race, 100000);
  m.seeded<owner_drainer_model<sound_fences, as_written, no_release>>("tls cache: unclaim's store without release",
                                                                      rl::test_result_data_race, 100000);
  m.seeded<owner_drainer_model<sound_fences, no_release, as_written>>("tls cache: end_op's store without release",
                                                                      rl::test_result_data_race, 100000);
  return m.exit_code();
}
