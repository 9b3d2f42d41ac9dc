// cudapool/mutex_pool.hpp - the reference variant: one lock per size class around a LIFO free list.
//
// Every other variant is measured against this one. Growth happens outside the class lock
// (basic_pool's slow path calls pool_core::grow with no list lock held). The lock is the core's
// word_lock (a futex mutex in one word, as the segment heap's): like std::mutex it sleeps when
// taken and does not spin, without pthread's calls around its one atomic each way.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string_view>

#include <cudapool/detail/core/basic_pool.hpp>
#include <cudapool/detail/core/word_lock.hpp>

namespace cudapool {

class mutex_free_lists {
 public:
  static constexpr std::string_view name = "mutex";

  explicit mutex_free_lists(core::pool_core& core);

  // All thread-safe (blocking: each takes its class's mutex).
  [[nodiscard]] block_index pop(core::size_class c) noexcept {
    list& l = lists_[c];
    std::lock_guard lock(l.mutex);
    const block_index b = l.head;
    if (b != no_block) {
      l.head = blocks_[b].next.load(std::memory_order_relaxed);
      --l.count;
    }
    return b;
  }
  void push(core::size_class c, block_index b) noexcept {
    list& l = lists_[c];
    std::lock_guard lock(l.mutex);
    blocks_[b].next.store(l.head, std::memory_order_relaxed);
    l.head = b;
    ++l.count;
  }
  void push_chain(core::size_class c, core::block_chain chain) noexcept;
  [[nodiscard]] core::block_chain take_all(core::size_class c) noexcept;
  [[nodiscard]] std::size_t free_blocks(core::size_class c) const noexcept;
  [[nodiscard]] std::size_t cached_blocks(core::size_class) const noexcept { return 0; }

 private:
  struct alignas(64) list {
    mutable core::word_lock mutex;
    block_index head = no_block;  // GUARDED_BY(mutex)
    std::size_t count = 0;        // GUARDED_BY(mutex)
  };
  core::block_table& blocks_;
  std::unique_ptr<list[]> lists_;
};

using mutex_pool = basic_pool<mutex_free_lists>;

}  // namespace cudapool
