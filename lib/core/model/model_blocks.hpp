// model_blocks.hpp - the blocks of a model test: a table the library's stacks link through (an
// atomic `next` per entry, entries that never move, as block_table's), with what a model checks
// beside each link.
//   payload  the block's device memory: an rl::var, so that two uses of the block not ordered one
//            after the other (by the host's hand-over, a stream's order or an event) are a data race
//   held     host ownership: a claim asserts it clear (a block handed out twice)
//
// Include after model_check.hpp.
#pragma once

#include <array>

#include <cudapool/types.hpp>

namespace cudapool::core::model {

template <class Atomics>
struct model_entry {
  typename Atomics::template atomic<block_index> next{no_block};
  rl::var<int> payload;
  rl::var<bool> held;
};

template <class Atomics, block_index Count>
struct model_table {
  static constexpr block_index count = Count;
  mutable std::array<model_entry<Atomics>, Count> entries;
  model_entry<Atomics>& operator[](block_index b) const { return entries[b]; }

  // Every block unused and held (before()) or free (held = false).
  void reset(bool held) {
    for (block_index b = 0; b < Count; ++b) {
      entries[b].payload($) = 0;
      entries[b].held($) = held;
    }
  }
  // Claims block b for the calling thread (host ownership only: device memory is not touched).
  void claim(block_index b) {
    RL_ASSERT(!entries[b].held($));  // handed out twice
    entries[b].held($) = true;
  }
  // The block's device memory used (by a kernel on some stream, or a host thread standing for one).
  // Returns how many uses it had before.
  int use(block_index b) {
    const int before = entries[b].payload($);
    entries[b].payload($) = before + 1;
    return before;
  }
  void give_up(block_index b) { entries[b].held($) = false; }
};

// Marks the blocks of a stack (walked relaxed: call at quiescence, in after()) as found in `seen`;
// asserts none is found twice (a broken list).
template <class Table, class Stack, std::size_t N>
void mark_stack(const Table& t, const Stack& s, std::array<int, N>& seen) {
  for (block_index b = s.peek_unsafe(); b != no_block; b = t[b].next.load(std::memory_order_relaxed)) {
    RL_ASSERT(b < N && seen[b] == 0);
    if (b >= N || seen[b] != 0) return;
    seen[b] = 1;
  }
}

}  // namespace cudapool::core::model
