// tagged_stack_model.cpp - Relacy model of core::tagged_stack (pop, push, push_chain, take_all):
// the class itself, instantiated with Relacy's atomics (relacy_atomics.hpp).
//
// Blocks are owned by whoever popped them: each has a payload (an rl::var, so Relacy reports any
// two unordered accesses to it as a data race) and a `held` flag that a popper asserts clear. At
// the end every block must be on the stack exactly once.
//
// Seeded bugs, each of which must be reported:
//   0 tag bits          the ABA race of a Treiber stack (pop-pop-push under a stalled pop):
//                       reported as a broken stack (a block on it twice, or held and on it)
//   release dropped     push_chain's CAS without release: a popper's use of the block is not
//                       ordered after the pusher's, reported as a data race
#include <cudapool/detail/core/tagged_stack.hpp>

#include <array>

#include <cudapool/detail/core/model/model_check.hpp>

namespace cudapool::core::model {
namespace {

constexpr block_index block_count = 4;
constexpr backoff_policy no_backoff{0, 0};

template <class Atomics>
struct model_entry {
  typename Atomics::template atomic<block_index> next{no_block};
  rl::var<int> payload;
  rl::var<bool> held;
};

// The table the stack links through: entries that never move, as block_table's.
template <class Atomics>
struct model_table {
  mutable std::array<model_entry<Atomics>, block_count> entries;
  model_entry<Atomics>& operator[](block_index b) const { return entries[b]; }
};

template <unsigned TagBits, class Atomics>
struct stack_fixture {
  model_table<Atomics> table;
  tagged_stack<TagBits, no_stack_hook, Atomics> stack;

  void init(block_index free_blocks) {
    for (block_index b = 0; b < block_count; ++b) {
      table[b].payload($) = 0;
      table[b].held($) = false;
    }
    for (block_index b = free_blocks; b-- > 0;) stack.push(table, b, no_backoff);
  }
  // Pops and claims a block; counts a hand-over (a block a thread owned before) in `handovers`.
  block_index pop(std::uint64_t& handovers) {
    const block_index b = stack.pop(table, no_backoff);
    if (b != no_block && claim(b) > 0) ++handovers;
    return b;
  }
  // Returns how many owners the block had before in this iteration.
  int claim(block_index b) {
    RL_ASSERT(!table[b].held($));  // handed out twice
    table[b].held($) = true;
    const int before = table[b].payload($);
    table[b].payload($) = before + 1;  // the owner uses the block
    return before;
  }
  void give_up(block_index b) { table[b].held($) = false; }
  void push(block_index b) {
    give_up(b);
    stack.push(table, b, no_backoff);
  }
  // Every block is on the stack exactly once and held by nobody.
  void check_all_free(block_index expected) {
    std::array<bool, block_count> seen{};
    block_index n = 0;
    for (block_index b = stack.peek_unsafe(); b != no_block; b = table[b].next.load(std::memory_order_relaxed)) {
      RL_ASSERT(b < block_count && !seen[b]);  // a block on the stack twice: the list is broken
      if (b >= block_count || seen[b]) return;
      seen[b] = true;
      RL_ASSERT(!table[b].held($));
      ++n;
    }
    RL_ASSERT(n == expected);
  }
};

// Two threads, three blocks 0 -> 1 -> 2: thread 0 pops one and pushes it back; thread 1 pops two
// and pushes them back in pop order, the pop-pop-push sequence of the ABA race.
template <unsigned TagBits, class Atomics>
struct push_pop_model : rl::test_suite<push_pop_model<TagBits, Atomics>, 2> {
  static inline std::uint64_t handovers = 0;  // iterations' pops of a block another pop had owned
  stack_fixture<TagBits, Atomics> f;
  void before() { f.init(3); }
  void thread(unsigned id) {
    if (id == 0) {
      const block_index b = f.pop(handovers);
      if (b != no_block) f.push(b);
    } else {
      const block_index a = f.pop(handovers);
      const block_index c = f.pop(handovers);
      if (a != no_block) f.push(a);
      if (c != no_block) f.push(c);
    }
  }
  void after() { f.check_all_free(3); }
};

// Three threads, four blocks (three on the stack, one private to thread 0): thread 0 pops one,
// links it to its private block and pushes the pair with push_chain; thread 1 takes the whole stack
// with take_all, uses every block and pushes the chain back; thread 2 pops and pushes.
template <unsigned TagBits, class Atomics>
struct chain_model : rl::test_suite<chain_model<TagBits, Atomics>, 3> {
  static inline std::uint64_t handovers = 0;
  stack_fixture<TagBits, Atomics> f;
  void before() {
    f.init(3);
    f.claim(3);
  }
  void thread(unsigned id) {
    auto& t = f.table;
    if (id == 0) {
      const block_index b = f.pop(handovers);
      f.give_up(3);
      if (b == no_block) {
        f.stack.push(t, 3, no_backoff);
        return;
      }
      f.give_up(b);
      t[3].next.store(b, std::memory_order_relaxed);
      f.stack.push_chain(t, 3, b, no_backoff);
    } else if (id == 1) {
      const block_chain chain = f.stack.take_all(t);
      if (chain.empty()) return;
      for (block_index b = chain.head;; b = t[b].next.load(std::memory_order_relaxed)) {
        if (f.claim(b) > 0) ++handovers;
        if (b == chain.tail) break;
      }
      for (block_index b = chain.head;; b = t[b].next.load(std::memory_order_relaxed)) {
        f.give_up(b);
        if (b == chain.tail) break;
      }
      f.stack.push_chain(t, chain.head, chain.tail, no_backoff);
    } else {
      const block_index b = f.pop(handovers);
      if (b != no_block) f.push(b);
    }
  }
  void after() { f.check_all_free(4); }
};

using dropped = relacy_atomics_t<weakening::release_dropped>;
using load_acquire_dropped = relacy_atomics_t<weakening::load_acquire_dropped>;
using rmw_acquire_dropped = relacy_atomics_t<weakening::rmw_acquire_dropped>;
using cas_failure_relaxed = relacy_atomics_t<weakening::cas_failure_relaxed>;

}  // namespace
}  // namespace cudapool::core::model

int main() {
  using namespace cudapool::core::model;
  model_checks m;
  m.sound<push_pop_model<32, relacy_atomics>>("tagged_stack pop/push, 32-bit tag", 200000,
                                             push_pop_model<32, relacy_atomics>::handovers);
  m.seeded<push_pop_model<0, relacy_atomics>>("tagged_stack pop/push, 0-bit tag (ABA)",
                                              rl::test_result_user_assert_failed, 200000);
  m.seeded<push_pop_model<32, dropped>>("tagged_stack pop/push, push without release",
                                        rl::test_result_data_race, 200000);
  m.seeded<push_pop_model<32, load_acquire_dropped>>("tagged_stack pop/push, pop's head load without acquire",
                                                     rl::test_result_user_assert_failed, 200000);
  m.seeded<push_pop_model<32, cas_failure_relaxed>>("tagged_stack pop/push, pop's CAS failure order relaxed",
                                                    rl::test_result_user_assert_failed, 200000);
  m.seeded<push_pop_model<32, rmw_acquire_dropped>>("tagged_stack pop/push, pop's CAS without acquire",
                                                    rl::test_result_data_race, 200000);
  m.sound<chain_model<32, relacy_atomics>>("tagged_stack push_chain/take_all/pop, 32-bit tag", 200000,
                                          chain_model<32, relacy_atomics>::handovers);
  m.seeded<chain_model<32, dropped>>("tagged_stack push_chain/take_all, push_chain without release",
                                     rl::test_result_data_race, 200000);
  m.seeded<chain_model<32, rmw_acquire_dropped>>("tagged_stack push_chain/take_all, take_all's CAS without acquire",
                                                 rl::test_result_data_race, 200000);
  return m.exit_code();
}
