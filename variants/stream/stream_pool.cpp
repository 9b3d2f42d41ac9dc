#include <cudapool/stream_pool.hpp>

#include <algorithm>
#include <cstdio>

#include <cudapool/detail/stream/partition_steal.hpp>

namespace cudapool {

stream_free_lists::stream_free_lists(core::pool_core& core)
    : core_(core),
      blocks_(core.blocks()),
      backoff_(core.options().backoff),
      class_count_(core.classes().count()),
      id_(shortcuts::new_owner()),
      shared_(std::make_unique<padded_stack[]>(class_count_)) {
  batch_.reserve(class_count_);
  for (core::size_class c = 0; c < class_count_; ++c) {
    batch_.push_back(static_cast<std::uint32_t>(std::clamp<std::size_t>((64 << 10) / core.classes().bytes(c), 1, 16)));
  }
}

block_index stream_free_lists::refill(partition& p, core::size_class c) noexcept {
  const block_index first = shared_[c].stack.pop(blocks_, backoff_);
  if (first == no_block) return no_block;
  // The rest, linked in the order popped (ascending indices off a fresh slab's chain).
  block_index head = no_block;
  block_index tail = no_block;
  for (std::uint32_t k = 1; k < batch_[c]; ++k) {
    const block_index b = shared_[c].stack.pop(blocks_, backoff_);
    if (b == no_block) break;
    if (head == no_block) {
      head = b;
    } else {
      blocks_[tail].next.store(b, std::memory_order_relaxed);
    }
    tail = b;
  }
  if (head != no_block) {
    blocks_[tail].next.store(no_block, std::memory_order_relaxed);
    p.stacks[c].stack.push_chain(blocks_, head, tail, backoff_);
  }
  return first;
}

stream_free_lists::~stream_free_lists() = default;

stream_free_lists::partition* stream_free_lists::find_slow(stream_ref s) noexcept {
  try {
    // Read before the lookup: a retire that races with it leaves this entry stale, never wrong.
    const std::uint64_t generation = generation_.load(std::memory_order_acquire);
    const std::uint64_t sid = core_.device().stream_id(s);
    partition* p = nullptr;
    if (auto it = partitions_.find(sid); it != partitions_.end()) {
      p = it->second;
    } else {
      std::lock_guard lock(partitions_mutex_);
      if (auto again = partitions_.find(sid); again != partitions_.end()) {
        p = again->second;
      } else {
        auto fresh = std::make_unique<partition>();
        fresh->stream = s;
        fresh->id = sid;
        fresh->number = static_cast<std::uint32_t>(owned_.size() + 1);
        fresh->stacks = std::make_unique<padded_stack[]>(class_count_);
        owned_.reserve(owned_.size() + 1);
        partitions_.emplace(sid, fresh.get());
        p = fresh.get();
        owned_.push_back(std::move(fresh));
      }
    }
    shortcuts::put(id_, s, shortcut{generation, p});
    return p;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudapool: stream partition lookup failed: %s\n", e.what());
    return nullptr;
  }
}

std::size_t stream_free_lists::count(const core::tagged_stack<>& stack, core::size_class c) const noexcept {
  return stack.count_unsafe(blocks_, core_.capacity_blocks(c));
}

namespace {
// A partition's stream as the donor of a steal (partition_steal.hpp); each query counted.
struct partition_donor {
  core::pool_core& core;
  stream_ref taker;
  stream_ref donor;
  std::atomic<std::uint64_t>& queries;
  bool completed() {
    queries.fetch_add(1, std::memory_order_relaxed);
    return core.device().query_stream(donor);
  }
  void order() { core.epochs().order_after(taker, donor); }
};
}  // namespace

block_index stream_free_lists::steal(core::size_class c, stream_ref s, core::steal_mode mode) {
  partition* mine = find(s);
  for (auto& [sid, p] : partitions_) {  // concurrent traversal is safe; entries are never erased
    if (p == mine || p->stacks[c].stack.peek_unsafe() == no_block) continue;
    partition_donor donor{core_, s, p->stream, stream_queries_};
    const core::block_chain chain = steal_from(p->stacks[c].stack, blocks_, mode, donor, backoff_);
    if (chain.empty()) continue;
    note_owner(chain.head, mine != nullptr ? mine->number : 0);
    if (chain.count > 1) {
      const block_index rest = blocks_[chain.head].next.load(std::memory_order_relaxed);
      if (mine != nullptr) {
        mine->stacks[c].stack.push_chain(blocks_, rest, chain.tail, backoff_);
      } else {
        defer_or_wait({rest, chain.tail, chain.count - 1}, s);
      }
    }
    return chain.head;
  }
  return no_block;
}

std::size_t stream_free_lists::donate(core::size_class c, stream_ref s) noexcept {
  partition* mine = find(s);
  std::size_t moved = 0;
  for (auto& [sid, p] : partitions_) {  // concurrent traversal is safe; entries are never erased
    if (p == mine || p->stacks[c].stack.peek_unsafe() == no_block) continue;
    const core::block_chain chain = donate_from(p->stacks[c].stack, blocks_, batch_[c], backoff_);
    if (chain.empty()) continue;
    if (!core_.epochs().defer_chain(chain, p->stream)) {  // out of host memory: the blocks stay with P
      p->stacks[c].stack.push_chain(blocks_, chain.head, chain.tail, backoff_);
      continue;
    }
    moved += chain.count;
  }
  return moved;
}

core::block_chain stream_free_lists::take_all(core::size_class c) noexcept {
  core::block_chain all = take_from(shared_[c].stack);
  std::lock_guard lock(partitions_mutex_);
  for (const auto& p : owned_) {
    if (p->stacks[c].stack.peek_unsafe() == no_block) continue;
    // Take first, then wait: every block taken was freed (its work enqueued on the stream) before
    // the take, so the synchronize covers it. Trimming is allowed to wait; once the stream has
    // drained, the blocks are free for all. (Waiting first let a block freed in between escape
    // with its work still pending.)
    const core::block_chain taken = take_from(p->stacks[c].stack);
    try {
      core_.device().synchronize(p->stream);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cudapool: trim could not synchronize a stream: %s\n", e.what());
      if (!taken.empty()) p->stacks[c].stack.push_chain(blocks_, taken.head, taken.tail, backoff_);
      continue;
    }
    core::append(blocks_, all, taken);
  }
  return all;
}

void stream_free_lists::retire_stream(stream_ref s) {
  partition* p = find(s);
  if (p == nullptr) return;
  std::lock_guard lock(partitions_mutex_);
  // All classes as one chain: one final event covers them.
  const core::block_chain all =
      drain_partition(blocks_, class_count_, [p](core::size_class c) -> core::tagged_stack<>& { return p->stacks[c].stack; });
  defer_or_wait(all, s);
  core_.epochs().flush_stream(s);  // large frees on s too
  generation_.fetch_add(1, std::memory_order_release);
}

void stream_free_lists::record_stream(block_index b, stream_ref s) { recorded_streams_.record(recorded_, b, s); }

void stream_free_lists::wait_for_recorded(block_index b, stream_ref s) noexcept {
  std::vector<stream_ref> streams;
  if (recorded_streams_.take(recorded_, b, streams)) wait_for(streams, s);
}

void stream_free_lists::defer_or_wait(core::block_chain chain, stream_ref s) noexcept {
  if (core_.epochs().defer_chain(chain, s)) return;
  try {
    core_.device().synchronize(s);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudapool: synchronizing a stream failed too (%s): %zu blocks are lost to the pool\n",
                 e.what(), chain.count);
    return;
  }
  block_index b = chain.head;
  for (std::size_t i = 0; i < chain.count; ++i) {
    const block_index next = blocks_[b].next.load(std::memory_order_relaxed);
    shared_[blocks_[b].size_class()].stack.push(blocks_, b, backoff_);  // s has run their work
    b = next;
  }
}

void stream_free_lists::wait_for(const std::vector<stream_ref>& streams, stream_ref s) noexcept {
  for (stream_ref other : streams) {
    if (other == s) continue;
    try {
      core_.epochs().order_after(s, other);
    } catch (const std::exception& e) {
      // Without the device-side wait, the host waits: slower, still correct.
      std::fprintf(stderr, "cudapool: record_stream wait failed (%s); synchronizing instead\n", e.what());
      try {
        core_.device().synchronize(other);
      } catch (...) {
      }
    }
  }
}

void stream_free_lists::record_large_stream(const void* p, stream_ref s) { recorded_streams_.record(recorded_large_, p, s); }

void stream_free_lists::settle_recorded_large(const void* p, const stream_ref* s) noexcept {
  std::vector<stream_ref> streams;
  if (recorded_streams_.take(recorded_large_, p, streams) && s != nullptr) wait_for(streams, *s);  // an immediate free promises no pending work anywhere
}

void stream_free_lists::forget_recorded(block_index b) noexcept {
  recorded_streams_.forget(recorded_, b);
}

std::size_t stream_free_lists::free_blocks(core::size_class c) const noexcept { return count(shared_[c].stack, c); }

std::size_t stream_free_lists::cached_blocks(core::size_class c) const noexcept {
  std::size_t n = 0;
  for (const auto& [sid, p] : partitions_) n += count(p->stacks[c].stack, c);
  return n;
}

void stream_free_lists::cover_owners() noexcept {
  const std::size_t need = blocks_.size();
  if (owner_.size() >= need) return;
  std::lock_guard lock(owner_mutex_);
  try {
    owner_.grow_to(need);
  } catch (const std::exception&) {
    // Out of host memory: blocks past the table are attributed to no stream in reports.
  }
}

std::vector<std::size_t> stream_free_lists::in_use_by_partition() const {
  std::vector<std::size_t> bytes(owned_.size() + 1, 0);
  const std::size_t n = std::min(owner_.size(), blocks_.size());
  for (std::uint32_t i = 0; i < n; ++i) {
    const core::block_entry& e = blocks_[i];
    if (core::block_entry::state_of(e.meta.load(std::memory_order_relaxed)) != core::block_state::live) continue;
    const std::uint32_t number = owner_[i].load(std::memory_order_relaxed);
    bytes[number < bytes.size() ? number : 0] += core_.classes().bytes(e.size_class());
  }
  return bytes;
}

void stream_free_lists::holdings(oom_report& report) const {
  std::vector<std::size_t> in_use;
  {
    std::lock_guard lock(partitions_mutex_);
    in_use = in_use_by_partition();
  }
  for (const auto& [sid, p] : partitions_) {
    std::size_t bytes = 0;
    for (core::size_class c = 0; c < class_count_; ++c) bytes += count(p->stacks[c].stack, c) * core_.classes().bytes(c);
    const std::size_t used = p->number < in_use.size() ? in_use[p->number] : 0;
    if (bytes == 0 && used == 0) continue;
    auto it = std::find_if(report.streams.begin(), report.streams.end(),
                           [id = sid](const oom_report::stream_holding& h) { return h.stream_id == id; });
    if (it == report.streams.end()) {
      report.streams.push_back({sid, bytes, 0, 0, used});
    } else {
      it->free_bytes += bytes;
      it->in_use_bytes += used;
    }
  }
}

}  // namespace cudapool
