// workers.cpp - see workers.hpp.
#include "workers.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>

#include <cudapool/types.hpp>
#include "format.hpp"

namespace cudapool::stress {

namespace {

// Backpressure. Host threads enqueue device work much faster than the device (the sim device
// under TSan above all) runs it; unbounded, the queues and the blocks pending behind them grow
// without limit. Every `checkpoint_steps` steps a thread records an event on each stream it
// enqueued on since its last checkpoint, and waits for the checkpoints older than the last
// `checkpoints_ahead`. Its own work thus never runs more than ~3 x 16 steps ahead of the device:
// still far enough that every free is stream-ordered behind real, queued work.
constexpr std::uint64_t checkpoint_steps = 16;
constexpr std::size_t checkpoints_ahead = 2;
// One operation in 16 is preceded by a spin of 1..100 us on its stream, which holds back everything
// queued behind it there: blocks freed on that stream stay "in use" on the device for longer.
constexpr std::uint64_t spin_one_in = 16;
constexpr std::uint64_t max_spin_us = 100;
constexpr std::uint64_t immediate_free_one_in = 32;
constexpr std::size_t receive_batch = 8;

}  // namespace

void worker::run() noexcept {
  try {
    ctx_.allocator.attach_thread();
    while (!done()) {
      if (ctx_.config.sizes.what == size_spec::kind::trace) {
        trace_step();
      } else {
        step();
      }
      receive();
      if (++steps_ % checkpoint_steps == 0) checkpoint();
    }
  } catch (const std::exception& e) {
    ctx_.violations.add(violation_kind::error, "thread " + std::to_string(index_) + " stopped: " + e.what());
  }
  try {
    while (!live_.empty()) retire(live_.size() - 1, /*may_transfer=*/false);
    while (!checkpoints_.empty()) wait_oldest_checkpoint();
  } catch (const std::exception& e) {
    ctx_.violations.add(violation_kind::error,
                        "thread " + std::to_string(index_) + " could not give back its blocks: " + e.what());
  }
  ctx_.allocator.detach_thread();
  ctx_.finished.fetch_add(1, std::memory_order_relaxed);
}

bool worker::done() const noexcept {
  if (ctx_.config.ops) return allocated_ >= quota_;
  return ctx_.stop.load(std::memory_order_relaxed);
}

void worker::step() {
  const std::size_t held = live_.size();
  const std::size_t max = ctx_.config.max_live_blocks;
  if (held == 0 || (held < max && rng_.below(max) >= held)) {
    allocate(ctx_.sizes.draw(rng_), std::nullopt);
  } else {
    retire(rng_.below(held), /*may_transfer=*/true);
  }
}

void worker::trace_step() {
  const std::vector<trace_record>& trace = ctx_.config.sizes.trace;
  const trace_record& r = trace[cursor_];
  cursor_ = (cursor_ + 1) % trace.size();
  if (r.allocate) {
    allocate(ctx_.sizes.scaled(r.bytes), r.id);
  } else {
    const auto it = std::find_if(live_.begin(), live_.end(),
                                 [&](const live_block& b) { return b.traced && b.trace_id == r.id; });
    if (it != live_.end()) retire(static_cast<std::size_t>(it - live_.begin()), /*may_transfer=*/true);
  }
  if (cursor_ == 0) {
    while (!live_.empty()) retire(live_.size() - 1, /*may_transfer=*/true);
  }
}

void worker::allocate(std::size_t bytes, std::optional<std::uint64_t> trace_id) {
  const auto s = static_cast<unsigned>(rng_.below(ctx_.streams.size()));
  const std::uint32_t tag = make_tag(index_, allocated_++);
  void* p = ctx_.allocator.allocate(bytes, ctx_.streams[s]);
  worker_counters::bump(counters.allocations);
  if (p == nullptr) {
    ctx_.violations.add(violation_kind::error, "allocate(" + std::to_string(bytes) + ") returned nullptr");
    return;
  }
  const block_record mine{.start = reinterpret_cast<std::uintptr_t>(p), .bytes = bytes, .tag = tag,
                          .thread = index_, .stream = s};
  if (const std::optional<block_record> other = ctx_.shadow.claim(mine)) {
    // Neither stamp nor free it: the harness cannot tell which owner is the real one, and the
    // block it overlaps is still checked and freed by its owner. (The pool may then count this
    // one as in use at the end, a consequence of the violation already reported.)
    worker_counters::bump(counters.quarantined);
    ctx_.violations.add(violation_kind::overlap,
                        "overlapping hand-out: thread " + std::to_string(index_) + " got [" +
                            format_pointer(mine.start) + ", +" + std::to_string(bytes) + " B) on stream #" +
                            std::to_string(s) + " while [" + format_pointer(other->start) + ", +" +
                            std::to_string(other->bytes) + " B) is live: allocated by thread " +
                            std::to_string(other->thread) + " on stream #" + std::to_string(other->stream) +
                            ", tag " + describe_tag(other->tag, ctx_.config.threads));
    return;
  }
  if (mine.start % min_alignment != 0) {
    ctx_.violations.add(violation_kind::error, "misaligned block: thread " + std::to_string(index_) + " got " +
                                                   format_pointer(mine.start) + " for " + std::to_string(bytes) +
                                                   " B, not 256-byte aligned");
  }
  maybe_spin(s, rng_);
  ctx_.device.fill(ctx_.streams[s], p, round_down4(bytes), tag);
  touch(s);
  live_.push_back({p, bytes, tag, s, trace_id.has_value(), trace_id.value_or(0)});
}

void worker::retire(std::size_t i, bool may_transfer) {
  const live_block b = live_[i];
  live_[i] = live_.back();
  live_.pop_back();
  if (!may_transfer) {
    free_block(b, b.stream, retire_kind::same_stream, rng_);
    return;
  }
  if (rng_.chance(ctx_.config.handoff)) {
    hand_off(b);
    return;
  }
  if (ctx_.streams.size() > 1 && rng_.chance(ctx_.config.cross_stream)) {
    auto other = static_cast<unsigned>(rng_.below(ctx_.streams.size() - 1));
    if (other >= b.stream) ++other;
    declare_use(b.stream, other);
    free_block(b, other, retire_kind::cross_stream, rng_);
    worker_counters::bump(counters.cross_stream_frees);
    return;
  }
  if (rng_.below(immediate_free_one_in) == 0) {
    free_block_now(b);
    return;
  }
  free_block(b, b.stream, retire_kind::same_stream, rng_);
}

void worker::declare_use(unsigned used, unsigned freeing) {
  const event_handle e = ctx_.device.acquire_event();
  ctx_.device.record(e, ctx_.streams[used]);
  ctx_.device.stream_wait(ctx_.streams[freeing], e);
  ctx_.device.release_event(e);
  worker_counters::bump(counters.events);
  touch(used);
  touch(freeing);
}

void worker::free_block(const live_block& b, unsigned s, retire_kind how, rng& r) {
  maybe_spin(s, r);
  ctx_.device.verify(ctx_.streams[s], b.p, round_down4(b.bytes), b.tag);
  touch(s);
  if (!ctx_.shadow.release(reinterpret_cast<std::uintptr_t>(b.p), index_, s, how)) {
    ctx_.violations.add(violation_kind::error, "harness: " + format_pointer(reinterpret_cast<std::uintptr_t>(b.p)) +
                                                   " was not in the shadow map");
  }
  ctx_.allocator.deallocate(b.p, ctx_.streams[b.stream], ctx_.streams[s]);
  worker_counters::bump(counters.frees);
}

void worker::free_block_now(const live_block& b) {
  const stream_ref s = ctx_.streams[b.stream];
  ctx_.device.verify(s, b.p, round_down4(b.bytes), b.tag);
  const event_handle done = ctx_.device.acquire_event();
  try {
    ctx_.device.record(done, s);
    worker_counters::bump(counters.events);
    ctx_.device.wait(done);
  } catch (...) {
    ctx_.device.release_event(done);
    throw;
  }
  ctx_.device.release_event(done);
  if (!ctx_.shadow.release(reinterpret_cast<std::uintptr_t>(b.p), index_, b.stream, retire_kind::immediate)) {
    ctx_.violations.add(violation_kind::error, "harness: " + format_pointer(reinterpret_cast<std::uintptr_t>(b.p)) +
                                                   " was not in the shadow map");
  }
  ctx_.allocator.deallocate_now(b.p, ctx_.streams[b.stream]);
  worker_counters::bump(counters.frees);
  worker_counters::bump(counters.immediate_frees);
}

void worker::hand_off(const live_block& b) {
  const std::size_t threads = ctx_.inboxes.size();
  std::size_t to = index_;  // a lone thread hands blocks to itself: same event + wait path
  if (threads > 1) {
    to = rng_.below(threads - 1);
    if (to >= index_) ++to;
  }
  const event_handle ready = ctx_.device.acquire_event();
  ctx_.device.record(ready, ctx_.streams[b.stream]);
  worker_counters::bump(counters.events);
  touch(b.stream);
  if (!ctx_.inboxes[to]->enqueue(handoff{b, ready})) {  // only when out of host memory
    ctx_.device.release_event(ready);
    free_block(b, b.stream, retire_kind::same_stream, rng_);
    return;
  }
  worker_counters::bump(counters.handoffs);
}

void worker::receive() {
  handoff batch[receive_batch];
  const std::size_t n = ctx_.inboxes[index_]->try_dequeue_bulk(batch, receive_batch);
  for (std::size_t i = 0; i < n; ++i) {
    const auto s = static_cast<unsigned>(receive_rng_.below(ctx_.streams.size()));
    ctx_.device.stream_wait(ctx_.streams[s], batch[i].ready);
    ctx_.device.release_event(batch[i].ready);  // the wait holds the record (see declare_use)
    free_block(batch[i].block, s, retire_kind::handed_off, receive_rng_);
  }
}

void worker::maybe_spin(unsigned s, rng& r) {
  if (r.below(spin_one_in) != 0) return;
  ctx_.device.spin(ctx_.streams[s], std::chrono::microseconds(r.between(1, max_spin_us)));
  touch(s);
}

void worker::touch(unsigned s) {
  if (touched_[s]) return;
  touched_[s] = true;
  touched_list_.push_back(s);
}

void worker::checkpoint() {
  std::vector<event_handle> group;
  group.reserve(touched_list_.size());
  try {
    for (const unsigned s : touched_list_) {
      group.push_back(ctx_.device.acquire_event());
      ctx_.device.record(group.back(), ctx_.streams[s]);
      worker_counters::bump(counters.events);
    }
  } catch (...) {
    // An event that was acquired but not recorded counts as complete (never recorded).
    checkpoints_.push_back(std::move(group));
    throw;
  }
  for (const unsigned s : touched_list_) touched_[s] = false;
  touched_list_.clear();
  checkpoints_.push_back(std::move(group));
  while (checkpoints_.size() > checkpoints_ahead) wait_oldest_checkpoint();
}

void worker::wait_oldest_checkpoint() {
  for (const event_handle e : checkpoints_.front()) {
    ctx_.device.wait(e);
    ctx_.device.release_event(e);
  }
  checkpoints_.pop_front();
}

}  // namespace cudapool::stress
