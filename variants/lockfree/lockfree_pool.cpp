#include "lockfree/lockfree_pool.hpp"

namespace cudapool {

lockfree_free_lists::lockfree_free_lists(core::pool_core& core)
    : core_(core),
      blocks_(core.blocks()),
      backoff_(core.options().backoff),
      stacks_(std::make_unique<padded_stack[]>(core.classes().count())) {}

std::size_t lockfree_free_lists::free_blocks(core::size_class c) const noexcept {
  const std::size_t bound = core_.capacity_blocks(c);
  std::size_t n = 0;
  for (block_index b = stacks_[c].stack.peek_unsafe(); b != no_block && n < bound;
       b = blocks_[b].next.load(std::memory_order_relaxed)) {
    ++n;
  }
  return n;
}

}  // namespace cudapool
