// partition_steal.hpp - how blocks leave a stream's partition (stream_pool.cpp), written once so
// that the model test (core/model/stream_model.cpp) checks this code with Relacy's atomics.
//
// A partition's stacks hold blocks freed on its stream whose work may still be pending there. They
// leave it only
//   - by steal_from (another stream's allocation under pressure): take the whole stack first, then
//     ask the donor's stream. Every block taken was freed (its work enqueued on the donor) before
//     the take, so a donor that has run everything enqueued so far has run that work; otherwise
//     work enqueued on the taker from now on is made to run after it (ordered mode). Asking first
//     and taking after would let a block freed in between escape with its work pending.
//   - by donate_from (another stream's allocation, before it grows): the stack's blocks beyond the
//     first `keep` leave for one epoch (one event) behind the donor's work, after which they are
//     free for every stream; nobody waits. Without it a partition keeps every block freed on its
//     stream (cross-stream frees drift blocks between partitions without bound) while the others
//     grow: 16 streams reserved 5.4 GiB for 1.1 GiB live where the shared variants reserved 1.7.
//   - by drain_partition (retire_stream, under the partitions' lock): every class's stack as one
//     chain, for one epoch (one event) behind the retired stream's work.
#pragma once

#include <concepts>
#include <cstddef>

#include <cudapool/detail/core/block_table.hpp>
#include <cudapool/detail/core/pool_core.hpp>
#include <cudapool/detail/core/tagged_stack.hpp>

namespace cudapool {

// The stream a steal takes from. completed(): it has run everything enqueued on it so far (a
// query, no wait). order(): work enqueued on the taker's stream from now on runs after the work
// enqueued on the donor so far (a device-side wait). Either may throw.
template <class D>
concept steal_donor = requires(D& d) {
  { d.completed() } -> std::same_as<bool>;
  d.order();
};

// Thread-safe and lock-free (but for the donor's calls). The blocks of `from` for the taker, or an
// empty chain: `from` was empty, or (steal_mode::completed) its stream is still busy, and its
// blocks went back (push_chain's release hands them to the partition's next pop). On a throw from
// the donor they go back too.
template <class Stack, class Table, steal_donor Donor>
[[nodiscard]] core::block_chain steal_from(Stack& from, Table& t, core::steal_mode mode, Donor& donor,
                                           const core::backoff_policy& backoff) {
  const core::block_chain chain = from.take_all(t);
  if (chain.empty()) return chain;
  try {
    if (mode == core::steal_mode::completed) {
      if (!donor.completed()) {
        from.push_chain(t, chain.head, chain.tail, backoff);
        return {};
      }
    } else {
      donor.order();
    }
  } catch (...) {
    from.push_chain(t, chain.head, chain.tail, backoff);
    throw;
  }
  return chain;
}

// Thread-safe and lock-free. Takes the whole stack, puts its first `keep` blocks back and returns
// the rest (empty when the stack held `keep` or fewer). The caller hands the rest to an epoch on
// the donor's stream: they were all freed there before the take.
template <class Stack, class Table>
[[nodiscard]] core::block_chain donate_from(Stack& from, Table& t, std::size_t keep,
                                            const core::backoff_policy& backoff) noexcept {
  const core::block_chain chain = from.take_all(t);
  if (chain.count <= keep) {
    if (!chain.empty()) from.push_chain(t, chain.head, chain.tail, backoff);
    return {};
  }
  if (keep == 0) return chain;
  block_index last_kept = chain.head;
  for (std::size_t i = 1; i < keep; ++i) last_kept = t[last_kept].next.load(std::memory_order_relaxed);
  const core::block_chain rest{t[last_kept].next.load(std::memory_order_relaxed), chain.tail, chain.count - keep};
  from.push_chain(t, chain.head, last_kept, backoff);  // push_chain ends the kept chain at last_kept
  return rest;
}

// Thread-safe against pops and pushes on the stacks (each take is one CAS). Every class's blocks of
// a partition as one chain; stack_of(c) is the partition's stack of class c.
template <class Table, class StackOf>
[[nodiscard]] core::block_chain drain_partition(Table& t, std::size_t classes, StackOf&& stack_of) noexcept {
  core::block_chain all;
  for (core::size_class c = 0; c < classes; ++c) core::append(t, all, stack_of(c).take_all(t));
  return all;
}

}  // namespace cudapool
