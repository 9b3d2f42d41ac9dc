#include <cudapool/mutex_pool.hpp>

namespace cudapool {

mutex_free_lists::mutex_free_lists(core::pool_core& core)
    : blocks_(core.blocks()), lists_(std::make_unique<list[]>(core.classes().count())) {}

void mutex_free_lists::push_chain(core::size_class c, core::block_chain chain) noexcept {
  list& l = lists_[c];
  std::lock_guard lock(l.mutex);
  blocks_[chain.tail].next.store(l.head, std::memory_order_relaxed);
  l.head = chain.head;
  l.count += chain.count;
}

core::block_chain mutex_free_lists::take_all(core::size_class c) noexcept {
  core::block_chain chain;
  {
    list& l = lists_[c];
    std::lock_guard lock(l.mutex);
    chain.head = l.head;
    chain.count = l.count;
    l.head = no_block;
    l.count = 0;
  }
  for (block_index b = chain.head; b != no_block; b = blocks_[b].next.load(std::memory_order_relaxed)) chain.tail = b;
  return chain;
}

std::size_t mutex_free_lists::free_blocks(core::size_class c) const noexcept {
  std::lock_guard lock(lists_[c].mutex);
  return lists_[c].count;
}

}  // namespace cudapool
