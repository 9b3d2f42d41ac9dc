// batch_stack.hpp - the lock-free stack layer of the tls pool's transfer layer
// (pool_options::transfer_layer::lockfree_stack): whole batches handed between threads on nodes of
// two tagged stacks, `full` (nodes holding a batch) and `spare` (nodes holding none). Written once
// so that the model test (core/model/tls_transfer_model.cpp) checks this code with Relacy's atomics.
//
// A node belongs to whoever popped it: put() fills a spare node and pushes it on `full` (release:
// the batch's contents go with the node); take() pops a full node (acquire), copies its batch out
// and only then pushes the node on `spare` (release: the copy happens before the node's next
// filler writes it). Nodes live in a segmented table that never moves or frees, so a popper's stale
// read of a node's link is harmless (the stacks' tags reject it).
#pragma once

#include <cstdint>
#include <exception>
#include <mutex>

#include <cudapool/detail/core/atomics.hpp>
#include <cudapool/detail/core/block_table.hpp>
#include <cudapool/detail/core/tagged_stack.hpp>

namespace cudapool {

// NodeSegmentShift: nodes per segment of the node table, as a power of two (a model test makes
// its segments small).
template <class Batch, class Atomics = core::std_atomics, unsigned NodeSegmentShift = 8>
class batch_stack {
 public:
  // Thread-safe and lock-free but for growth (a new node, under grow_mutex_). false when no node
  // could be had (the table is full, or host memory ran out): the caller keeps the batch.
  [[gnu::always_inline]] bool put(const Batch& piece, const core::backoff_policy& policy) noexcept {
    const block_index node = take_node(policy);
    if (node == no_block) return false;
    nodes_[node].held = piece;
    full_.push(nodes_, node, policy);  // (then the node is another thread's)
    return true;
  }
  // Thread-safe and lock-free. false when no batch is held.
  [[gnu::always_inline]] bool take(Batch& out, const core::backoff_policy& policy) noexcept {
    const block_index node = full_.pop(nodes_, policy);
    if (node == no_block) return false;
    out = nodes_[node].held;
    spare_.push(nodes_, node, policy);
    return true;
  }

 private:
  struct node {
    typename Atomics::template atomic<block_index> next{no_block};  // the stacks' link
    Batch held;
  };

  // A spare node, else a new one; no_block when none can be had.
  block_index take_node(const core::backoff_policy& policy) noexcept {
    if (const block_index n = spare_.pop(nodes_, policy); n != no_block) return n;
    std::lock_guard lock(grow_mutex_);
    if (made_ == nodes_.max_size) return no_block;
    try {
      nodes_.grow_to(made_ + 1);
    } catch (const std::exception&) {
      return no_block;
    }
    return made_++;
  }

  core::tagged_stack<32, core::no_stack_hook, Atomics> full_;
  core::tagged_stack<32, core::no_stack_hook, Atomics> spare_;
  core::segmented_table<node, NodeSegmentShift, 4096> nodes_;  // never moves or frees: stale links are harmless
  std::mutex grow_mutex_;
  std::uint32_t made_ = 0;  // GUARDED_BY(grow_mutex_)
};

}  // namespace cudapool
