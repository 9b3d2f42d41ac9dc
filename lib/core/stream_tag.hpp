// stream_tag.hpp - what a free range of the segment heap waits for before a stream other than its
// own may reuse it, and the two rules over it that the heap applies under its lock: who may reuse a
// range (safe_for) and what a merge of two free neighbours waits for (merge_tags). Written once so
// that the model test (core/model/segment_heap_model.cpp) checks this code with Relacy's atomics:
// the tag's `completed` word is the one lock-free read of the heap (written by epoch_table's reclaim
// under an epoch shard's lock, read under the heap's).
#pragma once

#include <algorithm>
#include <cstdint>

#include <cudapool/detail/core/atomics.hpp>

namespace cudapool::core {

template <class Atomics>
struct basic_stream_tag {
  // The stream's last completed epoch; null: nothing pending.
  const typename Atomics::template atomic<std::uint64_t>* completed = nullptr;
  std::uint64_t epoch = 0;        // safe for all once *completed >= epoch
  const void* stream = nullptr;   // the stream's native handle
  bool same_stream = false;       // reusable at once on `stream`

  // Acquire: pairs with the release store of the reclaim that saw the epoch's event complete.
  [[nodiscard]] bool resolved() const noexcept {
    return completed == nullptr || completed->load(std::memory_order_acquire) >= epoch;
  }
};
using stream_tag = basic_stream_tag<std_atomics>;

// Who asks for memory: a stream (allocations may reuse ranges freed on it at once), or nobody
// (slabs: only ranges with no pending work).
struct stream_use {
  const void* stream = nullptr;
  bool given = false;
};

// Whether `use` may reuse a free range tagged t now: nothing pending, or freed on use's own stream
// (stream order protects it), or its epoch completed.
template <class Tag>
[[nodiscard]] bool safe_for(const Tag& t, stream_use use) noexcept {
  if (t.completed == nullptr) return true;
  if (use.given && t.same_stream && t.stream == use.stream) return true;
  return t.resolved();
}

// The tag of free neighbours a and b merged, in *out; false when they must stay apart. A merge
// waits for what either waits for: of one stream's two epochs the later (they complete in order);
// a resolved range merged with a pending one takes the pending tag, and only with absorb_resolved
// (the heap passes it while one stream alone has freed into it: segment_heap::coalesce says why);
// ranges pending on two streams stay apart. Giving the merge the resolved side's tag instead would
// hand a pending range out early (RMM #2489).
// Always inline: the heap's coalesce asks it of every free neighbour, and as a call (gcc outlined it
// once coalesce's sides became loops of their own) it cost more than the loop saved.
template <class Tag>
[[nodiscard, gnu::always_inline]] inline bool merge_tags(const Tag& a, const Tag& b, bool absorb_resolved, Tag* out) noexcept {
  const bool ra = a.resolved();
  const bool rb = b.resolved();
  if (ra && rb) {
    *out = Tag{};
    return true;
  }
  if (ra || rb) {
    if (!absorb_resolved) return false;
    *out = ra ? b : a;
    return true;
  }
  if (a.completed != b.completed) return false;  // pending on two streams: apart until one completes
  *out = a;
  out->epoch = std::max(a.epoch, b.epoch);  // one stream's epochs complete in order
  out->same_stream = a.same_stream && b.same_stream;
  return true;
}

}  // namespace cudapool::core
