#include <cudapool/lockfree_pool.hpp>

namespace cudapool {

lockfree_free_lists::lockfree_free_lists(core::pool_core& core)
    : core_(core),
      blocks_(core.blocks()),
      backoff_(core.options().backoff),
      stacks_(std::make_unique<padded_stack[]>(core.classes().count())) {}

std::size_t lockfree_free_lists::free_blocks(core::size_class c) const noexcept {
  return stacks_[c].stack.count_unsafe(blocks_, core_.capacity_blocks(c));
}

}  // namespace cudapool
