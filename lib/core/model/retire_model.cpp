// retire_model.cpp - Relacy model of the block state transition of pool_core::retire: the CAS
// live -> free / pending on block_entry::meta, in core::retire_meta (block_table.hpp), the function
// pool_core::retire calls, instantiated with Relacy's atomics.
//
// Two threads free one live block at the same time (a double free racing with itself: two
// deallocate(p), or deallocate(p) against deallocate(p, stream)). Exactly one must win, the state
// word must end in the winner's state, and the winner must see the live word's requested bytes.
//
// Seeded bug, which must be reported: atomic_free_check = false (pool_options), the load and store
// instead of the CAS: both frees can pass the live check and both win.
//
// Memory order: the model also runs the CAS with every order relaxed, and exactly one still wins:
// exclusivity needs the CAS's atomicity only. The acq_rel is kept (docs/design.md, Testing).
#include <cudapool/detail/core/block_table.hpp>

#include <cudapool/detail/core/model/model_check.hpp>

namespace cudapool::core::model {
namespace {

constexpr std::size_t requested_bytes = 1000;

template <bool AtomicCheck, class Atomics>
struct racing_frees_model : rl::test_suite<racing_frees_model<AtomicCheck, Atomics>, 2> {
  static inline std::uint64_t pending_wins = 0;  // iterations won by the stream-ordered free

  typename Atomics::template atomic<std::uint32_t> meta{block_entry::pack(block_state::live, requested_bytes)};
  rl::var<bool> won[2];
  rl::var<std::uint32_t> was[2];

  static constexpr block_state target(unsigned id) { return id == 0 ? block_state::free : block_state::pending; }

  void before() {
    for (unsigned i = 0; i < 2; ++i) {
      won[i]($) = false;
      was[i]($) = 0;
    }
  }
  void thread(unsigned id) {
    std::uint32_t m = 0;
    const bool ok = retire_meta(meta, target(id), AtomicCheck, m);
    won[id]($) = ok;
    was[id]($) = m;
  }
  void after() {
    const bool w0 = won[0]($);
    const bool w1 = won[1]($);
    RL_ASSERT(w0 != w1);  // exactly one of the two frees wins
    const unsigned winner = w0 ? 0 : 1;
    if (winner == 1) ++pending_wins;
    RL_ASSERT(block_entry::state_of(meta.load(std::memory_order_relaxed)) == target(winner));
    RL_ASSERT((was[winner]($) & block_entry::bytes_mask) == requested_bytes);
  }
};

using relaxed = relacy_atomics_t<weakening::all_relaxed>;

}  // namespace
}  // namespace cudapool::core::model

int main() {
  using namespace cudapool::core::model;
  model_checks m;
  m.sound<racing_frees_model<true, relacy_atomics>>("retire: two racing frees of one block, CAS", 100000,
                                                   racing_frees_model<true, relacy_atomics>::pending_wins);
  m.sound<racing_frees_model<true, relaxed>>("retire: the same with every order relaxed (acq_rel not needed for exclusivity)",
                                             100000, racing_frees_model<true, relaxed>::pending_wins);
  m.seeded<racing_frees_model<false, relacy_atomics>>("retire: load+store instead of CAS (atomic_free_check off)",
                                                      rl::test_result_user_assert_failed, 100000);
  return m.exit_code();
}
