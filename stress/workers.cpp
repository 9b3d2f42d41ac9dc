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
    home().allocator.attach_thread();
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
  home().allocator.detach_thread();
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
  const auto s = static_cast<unsigned>(rng_.below(ctx_.config.streams));
  const std::uint32_t tag = make_tag(index_, allocated_++);
  void* p = home().allocator.allocate(bytes, stream(lane_, s));
  worker_counters::bump(counters.allocations);
  if (p == nullptr) {
    ctx_.violations.add(violation_kind::error, "allocate(" + std::to_string(bytes) + ") returned nullptr");
    return;
  }
  const block_record mine{.start = reinterpret_cast<std::uintptr_t>(p), .bytes = bytes, .tag = tag,
                          .thread = index_, .stream = global_stream(lane_, s)};
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
  maybe_spin(lane_, s, rng_);
  home().device.fill(stream(lane_, s), p, round_down4(bytes), tag);
  touch(lane_, s);
  live_.push_back({p, bytes, tag, lane_, s, trace_id.has_value(), trace_id.value_or(0)});
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
  if (ctx_.config.streams > 1 && rng_.chance(ctx_.config.cross_stream)) {
    auto other = static_cast<unsigned>(rng_.below(ctx_.config.streams - 1));
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
  backend& device = home().device;
  const event_handle e = device.acquire_event();
  device.record(e, stream(lane_, used));
  device.stream_wait(stream(lane_, freeing), e);
  device.release_event(e);
  worker_counters::bump(counters.events);
  touch(lane_, used);
  touch(lane_, freeing);
}

void worker::free_block(const live_block& b, unsigned s, retire_kind how, rng& r) {
  device_lane& lane = ctx_.lanes[b.lane];
  maybe_spin(b.lane, s, r);
  lane.device.verify(stream(b.lane, s), b.p, round_down4(b.bytes), b.tag);
  touch(b.lane, s);
  if (!ctx_.shadow.release(reinterpret_cast<std::uintptr_t>(b.p), index_, global_stream(b.lane, s), how)) {
    ctx_.violations.add(violation_kind::error, "harness: " + format_pointer(reinterpret_cast<std::uintptr_t>(b.p)) +
                                                   " was not in the shadow map");
  }
  lane.allocator.deallocate(b.p, stream(b.lane, b.stream), stream(b.lane, s));
  worker_counters::bump(counters.frees);
}

void worker::free_block_now(const live_block& b) {
  backend& device = ctx_.lanes[b.lane].device;
  const stream_ref s = stream(b.lane, b.stream);
  device.verify(s, b.p, round_down4(b.bytes), b.tag);
  const event_handle done = device.acquire_event();
  try {
    device.record(done, s);
    worker_counters::bump(counters.events);
    device.wait(done);
  } catch (...) {
    device.release_event(done);
    throw;
  }
  device.release_event(done);
  if (!ctx_.shadow.release(reinterpret_cast<std::uintptr_t>(b.p), index_, global_stream(b.lane, b.stream),
                           retire_kind::immediate)) {
    ctx_.violations.add(violation_kind::error, "harness: " + format_pointer(reinterpret_cast<std::uintptr_t>(b.p)) +
                                                   " was not in the shadow map");
  }
  ctx_.lanes[b.lane].allocator.deallocate_now(b.p, s);
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
  backend& device = ctx_.lanes[b.lane].device;
  const event_handle ready = device.acquire_event();
  device.record(ready, stream(b.lane, b.stream));
  worker_counters::bump(counters.events);
  touch(b.lane, b.stream);
  if (!ctx_.inboxes[to]->enqueue(handoff{b, ready})) {  // only when out of host memory
    device.release_event(ready);
    free_block(b, b.stream, retire_kind::same_stream, rng_);
    return;
  }
  worker_counters::bump(counters.handoffs);
}

// A block from another device's thread goes back through its own device: verified and freed on a
// stream of that device, which waits for the producer's event (recorded on that device too).
void worker::receive() {
  handoff batch[receive_batch];
  const std::size_t n = ctx_.inboxes[index_]->try_dequeue_bulk(batch, receive_batch);
  for (std::size_t i = 0; i < n; ++i) {
    const live_block& b = batch[i].block;
    backend& device = ctx_.lanes[b.lane].device;
    const auto s = static_cast<unsigned>(receive_rng_.below(ctx_.config.streams));
    device.stream_wait(stream(b.lane, s), batch[i].ready);
    device.release_event(batch[i].ready);  // the wait holds the record (see declare_use)
    if (b.lane != lane_) worker_counters::bump(counters.cross_device_handoffs);
    free_block(b, s, retire_kind::handed_off, receive_rng_);
  }
}

void worker::maybe_spin(unsigned lane, unsigned s, rng& r) {
  if (r.below(spin_one_in) != 0) return;
  ctx_.lanes[lane].device.spin(stream(lane, s), std::chrono::microseconds(r.between(1, max_spin_us)));
  touch(lane, s);
}

void worker::touch(unsigned lane, unsigned s) {
  const unsigned g = global_stream(lane, s);
  if (touched_[g]) return;
  touched_[g] = true;
  touched_list_.push_back(g);
}

void worker::checkpoint() {
  std::vector<checkpoint_event> group;
  group.reserve(touched_list_.size());
  try {
    for (const unsigned g : touched_list_) {
      backend& device = ctx_.lanes[g / ctx_.config.streams].device;
      group.push_back({&device, device.acquire_event()});
      device.record(group.back().event, stream(g / ctx_.config.streams, g % ctx_.config.streams));
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
  for (const checkpoint_event& e : checkpoints_.front()) {
    e.device->wait(e.event);
    e.device->release_event(e.event);
  }
  checkpoints_.pop_front();
}

}  // namespace cudapool::stress
