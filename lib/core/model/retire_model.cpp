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
// Reuse (reuse_model): a free racing the hand-out of the same block after reuse. 3 threads: the
// block's owner frees it (retire_meta, then the library's tagged_stack) and later frees it again (a
// stale double free); a second thread pops the block, hands it out (mark_live_meta, the relaxed
// store of pool_core::hand_out), uses it, and passes the pointer to a third thread
// (release/acquire, as a program would), which frees it to pending. Checked: the first free wins;
// the stale free is rejected unless it sees the new allocation's live word; of the stale free and
// the new owner's free exactly one wins, and the winner saw the new allocation's bytes (never the
// old ones); the block's uses are ordered (data race otherwise). A stale free that runs after the
// reuse cannot be told from a free of the new allocation: the new owner's free then reports the
// double free (docs/design.md); the model checks that nothing worse happens. Seeded: the same
// with atomic_free_check = false: the stale free and the new owner's free both win.
//
// Memory order: the model also runs the CAS with every order relaxed, and exactly one still wins:
// exclusivity needs the CAS's atomicity only. The acq_rel is kept (docs/design.md, Testing).
#include <cudapool/detail/core/block_table.hpp>
#include <cudapool/detail/core/tagged_stack.hpp>

#include <cudapool/detail/core/model/model_check.hpp>
#include <cudapool/detail/core/model/model_blocks.hpp>

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

constexpr std::size_t reused_bytes = 2000;
constexpr backoff_policy no_backoff{0, 0};

template <bool AtomicCheck>
struct reuse_model : rl::test_suite<reuse_model<AtomicCheck>, 3> {
  enum : unsigned { first_owner, reuser, second_freer };
  static inline std::uint64_t raced = 0;  // iterations in which the stale free met the new live word

  model_table<relacy_atomics, 1> table;
  tagged_stack<32, no_stack_hook, relacy_atomics> free_list;
  relacy_atomics::atomic<std::uint32_t> meta{block_entry::pack(block_state::live, requested_bytes)};
  relacy_atomics::atomic<int> handed{0};  // the program's hand-off of the new allocation's pointer
  rl::var<bool> stale_won;
  rl::var<bool> stale_saw_live;
  rl::var<bool> second_won;
  rl::var<std::uint32_t> second_was;
  rl::var<std::uint32_t> stale_was;

  void before() {
    table.reset(true);
    stale_won($) = false;
    stale_saw_live($) = false;
    second_won($) = false;
    second_was($) = 0;
    stale_was($) = 0;
  }
  void thread(unsigned id) {
    std::uint32_t m = 0;
    if (id == first_owner) {
      table.use(0);
      RL_ASSERT(retire_meta(meta, block_state::free, AtomicCheck, m));
      table.give_up(0);
      free_list.push(table, 0, no_backoff);
      const bool saw_live = block_entry::state_of(meta.load(std::memory_order_relaxed)) == block_state::live;
      const bool won = retire_meta(meta, block_state::free, AtomicCheck, m);  // the stale double free
      stale_won($) = won;
      stale_saw_live($) = saw_live;
      stale_was($) = won ? m : 0;
    } else if (id == reuser) {
      for (int attempt = 0; attempt < 2; ++attempt) {
        const block_index b = free_list.pop(table, no_backoff);
        if (b == no_block) {
          rl::yield(1, $);
          continue;
        }
        table.claim(b);
        mark_live_meta(meta, reused_bytes);  // hand_out
        table.use(b);
        handed.store(1, std::memory_order_release);
        return;
      }
      handed.store(2, std::memory_order_release);  // nothing to hand out
    } else {
      int h = 0;
      while ((h = handed.load(std::memory_order_acquire)) == 0) rl::yield(1, $);
      if (h != 1) return;
      const bool won = retire_meta(meta, block_state::pending, AtomicCheck, m);
      second_won($) = won;
      second_was($) = won ? m : 0;
    }
  }
  void after() {
    const bool stale = stale_won($);
    const bool second = second_won($);
    if (second) RL_ASSERT((second_was($) & block_entry::bytes_mask) == reused_bytes);
    if (stale) RL_ASSERT((stale_was($) & block_entry::bytes_mask) == reused_bytes);  // it freed the new allocation
    RL_ASSERT(!(stale && second));  // the new allocation is freed once
    const block_state end = block_entry::state_of(meta.load(std::memory_order_relaxed));
    if (second) RL_ASSERT(end == block_state::pending);
    if (stale) RL_ASSERT(end == block_state::free);
    if (stale_saw_live($) && (stale || second)) ++raced;
  }
};

}  // namespace
}  // namespace cudapool::core::model

int main() {
  using namespace cudapool::core::model;
  model_checks m;
  m.sound<racing_frees_model<true, relacy_atomics>>("retire: two racing frees of one block, CAS", 100000,
                                                   racing_frees_model<true, relacy_atomics>::pending_wins);
  m.sound<racing_frees_model<true, all_relaxed_atomics>>("retire: the same with every order relaxed (acq_rel not needed for exclusivity)",
                                             100000, racing_frees_model<true, all_relaxed_atomics>::pending_wins);
  m.seeded<racing_frees_model<false, relacy_atomics>>("retire: load+store instead of CAS (atomic_free_check off)",
                                                      rl::test_result_user_assert_failed, 100000);
  m.sound<reuse_model<true>>("retire: a stale free racing the hand-out of the block after reuse, CAS", 100000,
                             reuse_model<true>::raced);
  m.seeded<reuse_model<false>>("retire: the same with load+store (atomic_free_check off)",
                               rl::test_result_user_assert_failed, 100000);
  return m.exit_code();
}
