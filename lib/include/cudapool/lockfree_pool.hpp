// lockfree_pool.hpp - per-class Treiber stacks (core::tagged_stack) with bounded exponential
// backoff. allocate/deallocate take no lock on the hot path: a pop is one CAS on the class's head
// word, a free is one CAS on the block's state word and one on the head.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include <cudapool/detail/core/basic_pool.hpp>
#include <cudapool/detail/core/tagged_stack.hpp>

namespace cudapool {

class lockfree_free_lists {
 public:
  static constexpr std::string_view name = "lockfree";

  explicit lockfree_free_lists(core::pool_core& core);

  // Thread-safe and lock-free.
  [[nodiscard]] block_index pop(core::size_class c) noexcept { return stacks_[c].stack.pop(blocks_, backoff_); }
  // Thread-safe and lock-free.
  void push(core::size_class c, block_index b) noexcept { stacks_[c].stack.push(blocks_, b, backoff_); }
  // Thread-safe and lock-free: one CAS for the whole chain.
  void push_chain(core::size_class c, core::block_chain chain) noexcept {
    stacks_[c].stack.push_chain(blocks_, chain.head, chain.tail, backoff_);
  }
  // Thread-safe and lock-free: one CAS detaches the whole stack (the walk to its tail is private).
  [[nodiscard]] core::block_chain take_all(core::size_class c) noexcept { return stacks_[c].stack.take_all(blocks_); }
  // Walks the stack: exact at quiescence, an estimate otherwise (bounded by the class capacity).
  [[nodiscard]] std::size_t free_blocks(core::size_class c) const noexcept;
  [[nodiscard]] std::size_t cached_blocks(core::size_class) const noexcept { return 0; }

 private:
  struct alignas(64) padded_stack {
    core::tagged_stack<> stack;
  };
  core::pool_core& core_;
  core::block_table& blocks_;
  const backoff_options backoff_;
  std::unique_ptr<padded_stack[]> stacks_;
};

using lockfree_pool = basic_pool<lockfree_free_lists>;

}  // namespace cudapool
