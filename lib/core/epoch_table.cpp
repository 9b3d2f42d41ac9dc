// epoch_table.cpp - a pool's stream-ordered frees (epoch_table.hpp).
#include <cudapool/detail/core/epoch_table.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <thread>

namespace cudapool::core {

epoch_table::epoch_table(backend& device, block_table& blocks, segment_heap& heap, std::size_t class_count,
                         const pool_options& options, epoch_observer& observer)
    : device_(device),
      blocks_(blocks),
      heap_(heap),
      class_count_(class_count),
      epoch_batch_(options.epoch_batch),
      poll_before_growth_(options.poll_before_growth),
      observer_(observer),
      shards_(std::make_unique<epoch_shard[]>(shard_count)) {
  for (std::size_t i = 0; i < shard_count; ++i) shards_[i].pending_blocks.assign(class_count_, 0);
}

epoch_table::epoch_shard& epoch_table::shard_of(stream_ref s) const noexcept {
  return shards_[stream_slot<shard_count>(s)];
}

void epoch_table::defer(block_index b, stream_ref s) noexcept {
  epoch_shard& shard = shard_of(s);
  try {
    // Through the calling thread's cache, as the marks find theirs: no map lookup under the lock.
    stream_state& se = state_of(s);
    std::lock_guard lock(shard.mutex);
    se.open.push_back(b);
    const size_class c = blocks_[b].size_class();
    se.open_classes.set(c);
    ++shard.pending_blocks[c];
    if (full(se)) close_locked(shard, se, close_reason::full);
  } catch (const std::exception& e) {
    // The block stays in the open epoch (or, if even that failed, it stays pending and is lost to
    // this pool, reported here); a later close retries the event.
    std::fprintf(stderr, "cudapool: deferring a stream-ordered free failed: %s\n", e.what());
  }
}

// A state is a map node that is never erased: the per-thread cache's pointer stays valid while
// the pool lives.
epoch_table::stream_state& epoch_table::state_of_uncached(stream_ref s) {
  epoch_shard& shard = shard_of(s);
  stream_state* se = nullptr;
  {
    std::lock_guard lock(shard.mutex);
    se = &state_locked(shard, s);
  }
  state_cache::put(id_, s, se);
  return *se;
}

epoch_table::stream_state& epoch_table::state_locked(epoch_shard& shard, stream_ref s) {
  stream_state& se = shard.streams[s.native()];
  se.stream = s;
  if (!shard.has_streams.load(std::memory_order_relaxed)) shard.has_streams.store(true, std::memory_order_relaxed);
  return se;
}

// mark_stream_free (epoch_table.hpp) marks without a lock unless the epoch is full or being closed
// (epoch_protocol.hpp's try_mark); this is the rest. With a lock per mark it was one of the three
// or four lock pairs of a stream-ordered large free and its reuse.
stream_tag epoch_table::mark_stream_free_locked(stream_ref s, stream_state& se, std::uint64_t seq) {
  epoch_shard& shard = shard_of(s);
  std::lock_guard lock(shard.mutex);
  if (seq == 0) seq = mark_locked(se);  // after the close that was under way
  if (open_seq(se) == seq && full(se)) {
    close_or_report(shard, se, close_reason::full);  // on failure the mark stays in the open epoch
  }
  return stream_tag{&se.completed, seq, s.native(), true};
}

void epoch_table::unmark_stream_free(stream_ref s, const stream_tag& tag) noexcept {
  epoch_shard& shard = shard_of(s);
  std::lock_guard lock(shard.mutex);
  const auto it = shard.streams.find(s.native());
  // Once its epoch is closed the mark costs one event that covers nothing; it changes no block.
  if (it != shard.streams.end()) unmark(it->second, tag.epoch);
}

void epoch_table::close_ranges_of(stream_ref s, close_reason why) noexcept {
  epoch_shard& shard = shard_of(s);
  std::lock_guard lock(shard.mutex);
  const auto it = shard.streams.find(s.native());
  if (it == shard.streams.end() || open_marks(it->second) == 0) return;
  close_or_report(shard, it->second, why);
}

void epoch_table::close_epoch_of_ranges(stream_ref s) noexcept { close_ranges_of(s, close_reason::full); }

void epoch_table::close_epoch_behind(stream_ref s) noexcept { close_ranges_of(s, close_reason::slow_path); }

// An epoch's large ranges are closed behind their event once they hold this share of the mapped
// bytes. Without it the epoch of a stream whose small frees never join an epoch (the stream
// variant's partitions) stayed open until epoch_batch large frees or a miss, and a miss right after
// closing finds the new event not yet complete: the heap grew while the ranges waited.
constexpr std::size_t mark_close_share = 16;

void epoch_table::note_mark_bytes(stream_ref s, stream_state& se, const stream_tag& tag, std::size_t bytes) noexcept {
  // Without the lock below the share: it was one of the four lock pairs of a stream-ordered large
  // free and its reuse (replay of mlp_4stream).
  const std::size_t now = se.open_mark_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (now < heap_.mapped_bytes() / mark_close_share) return;
  epoch_shard& shard = shard_of(s);
  std::lock_guard lock(shard.mutex);
  if (open_seq(se) != tag.epoch) return;  // closed meanwhile
  if (se.open_mark_bytes.load(std::memory_order_relaxed) < heap_.mapped_bytes() / mark_close_share) return;
  close_or_report(shard, se, close_reason::bytes);
}

bool epoch_table::full(const stream_state& se) const noexcept {
  return se.open.size() + open_marks(se) >= epoch_batch_;
}

void epoch_table::close_or_report(epoch_shard& shard, stream_state& se, close_reason why) noexcept {
  try {
    close_locked(shard, se, why);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudapool: closing an epoch failed: %s\n", e.what());  // a later close retries
  }
}

void epoch_table::close_locked(epoch_shard& shard, stream_state& se, close_reason why) {
  if (!close_epoch(&device_, se)) return;  // record the event, then publish the epoch
  if (se.open.capacity() < se.spare.capacity()) se.open.swap(se.spare);  // both empty now
  se.open_classes.reset();
  add_closed(shard, 1);
  closed_epochs_.fetch_add(1, std::memory_order_relaxed);
  epochs_closed_[static_cast<std::size_t>(why)].fetch_add(1, std::memory_order_relaxed);
}

bool epoch_table::defer_chain(block_chain chain, stream_ref s) noexcept {
  if (chain.empty()) return true;
  epoch_shard& shard = shard_of(s);
  std::lock_guard lock(shard.mutex);
  stream_state* found = nullptr;
  try {  // everything that allocates, before any block changes
    found = &state_locked(shard, s);
    found->open.reserve(found->open.size() + chain.count);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudapool: deferring %zu blocks failed: %s\n", chain.count, e.what());
    return false;
  }
  stream_state& se = *found;
  block_index b = chain.head;
  for (std::size_t i = 0; i < chain.count; ++i) {
    block_entry& e = blocks_[b];
    e.meta.store(block_entry::pack(block_state::pending, 0), std::memory_order_relaxed);
    se.open.push_back(b);
    se.open_classes.set(e.size_class());
    ++shard.pending_blocks[e.size_class()];
    b = e.next.load(std::memory_order_relaxed);
  }
  close_or_report(shard, se, close_reason::other);
  return true;
}

void epoch_table::order_after(stream_ref waiter, stream_ref producer) {
  event_handle e = device_.acquire_event();
  try {
    device_.record(e, producer);
    device_.stream_wait(waiter, e);  // captures the record: the event may be reused at once
  } catch (...) {
    device_.release_event(e);
    throw;
  }
  device_.release_event(e);
  stream_waits_.fetch_add(1, std::memory_order_relaxed);  // one event recorded, one wait
}

void epoch_table::flush_stream(stream_ref s) {
  {
    epoch_shard& shard = shard_of(s);
    std::lock_guard lock(shard.mutex);
    auto it = shard.streams.find(s.native());
    if (it != shard.streams.end()) close_locked(shard, it->second, close_reason::other);
  }
  heap_.forget_stream(s.native());  // the handle may name another stream once s is destroyed
}

template <class Predicate>
std::size_t epoch_table::close_epochs_if(Predicate&& close) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < shard_count; ++i) {
    epoch_shard& shard = shards_[i];
    if (!shard.has_streams.load(std::memory_order_relaxed)) continue;  // no lock to take
    std::lock_guard lock(shard.mutex);
    for (auto& [key, se] : shard.streams) {
      if (!close(key, se)) continue;
      const std::size_t before = shard.closed.load(std::memory_order_relaxed);
      close_locked(shard, se, close_reason::slow_path);
      n += shard.closed.load(std::memory_order_relaxed) - before;
    }
  }
  return n;
}

block_index epoch_table::take_from_own_epochs(size_class c, stream_ref s) noexcept {
  if (s.native() == nullptr) return no_block;
  epoch_shard& shard = shard_of(s);
  std::lock_guard lock(shard.mutex);
  if (shard.pending_blocks[c] == 0) return no_block;
  const auto it = shard.streams.find(s.native());
  if (it == shard.streams.end()) return no_block;
  stream_state& se = it->second;
  // Takes the latest block of class c in `items`, or no_block.
  const auto take = [&](std::vector<block_index>& items) {
    for (std::size_t i = items.size(); i-- > 0;) {
      const block_index b = items[i];
      block_entry& e = blocks_[b];
      if (e.size_class() != c) continue;
      items[i] = items.back();
      items.pop_back();
      --shard.pending_blocks[c];
      e.meta.store(block_entry::pack(block_state::free, 0), std::memory_order_relaxed);
      return b;
    }
    return no_block;
  };
  if (se.open_classes[c]) {
    if (const block_index b = take(se.open); b != no_block) return b;
    se.open_classes.reset(c);
  }
  // Closed epochs, the latest first: their events may still be pending (a miss right after a
  // close), but stream order protects s as for the open epoch. The search is bounded (a stream far
  // behind its host thread keeps many epochs); older ones are the first to complete anyway.
  constexpr std::size_t searched = 8;
  std::size_t n = 0;
  for (auto ep = se.closed.rbegin(); ep != se.closed.rend() && n < searched; ++ep, ++n) {
    if (const block_index b = take(ep->items); b != no_block) return b;
  }
  return no_block;
}

void epoch_table::close_open_epochs() {
  close_epochs_if([](const void*, const stream_state&) { return true; });
}

std::size_t epoch_table::close_epochs_for(size_class c) {
  return close_epochs_if([c](const void*, const stream_state& se) { return se.open_classes[c]; });
}

std::size_t epoch_table::close_epochs_of_ranges() {
  return close_epochs_if([](const void*, const stream_state& se) { return open_marks(se) > 0; });
}

std::size_t epoch_table::close_epochs_for_large(stream_ref s, std::size_t least_bytes) {
  return close_epochs_if([s, least_bytes](const void* key, const stream_state& se) {
    return open_marks(se) > 0 && key != s.native() && se.open_mark_bytes.load(std::memory_order_relaxed) >= least_bytes;
  });
}

// Moves a completed epoch's blocks to `done`, takes them off the shard's pending counts, and lets
// the heap's ranges freed in it (and before it) go to any stream. Under the shard's lock.
void epoch_table::collect_locked(epoch_shard& shard, stream_state& se, epoch& ep, std::vector<block_index>& done) {
  collect_epoch(&device_, se, ep, done, [&](block_index b) { --shard.pending_blocks[blocks_[b].size_class()]; });
  if (ep.items.capacity() > se.spare.capacity()) {  // keep the larger storage for the next epoch
    ep.items.clear();
    se.spare.swap(ep.items);
  }
  heap_.note_completion();
  add_closed(shard, -1);
  closed_epochs_.fetch_sub(1, std::memory_order_relaxed);
  epochs_reclaimed_.fetch_add(1, std::memory_order_relaxed);
}

namespace {
// reclaim's list of collected blocks, kept by each thread between calls: a reclaim that collected
// blocks allocated it afresh, and the sim's replay of mlp_4stream reclaims 45 times per 1000
// operations. Taken by move, so that a nested reclaim (none today) would get a list of its own.
thread_local std::vector<block_index> reclaim_scratch;
}  // namespace

std::size_t epoch_table::reclaim(free_list_sink& sink, std::uint64_t pass) {
  std::vector<block_index> done = std::move(reclaim_scratch);
  done.clear();
  std::size_t epochs = 0;
  // Nothing closed in any shard: no shard's lock to take (16 of them). A close by another thread
  // that this load misses is one this reclaim could as well have run before.
  const bool any_closed = closed_epochs_.load(std::memory_order_relaxed) != 0;
  for (std::size_t i = 0; any_closed && i < shard_count; ++i) {
    epoch_shard& shard = shards_[i];
    if (shard.closed.load(std::memory_order_relaxed) == 0) continue;  // no lock to take
    std::lock_guard lock(shard.mutex);
    for (auto& [key, se] : shard.streams) {
      if (pass != 0 && se.busy_pass == pass) continue;  // found incomplete in this pass already
      // s: clang 14 does not capture a structured binding.
      collect_completed(&device_, se, [&, &s = se](epoch& ep) { collect_locked(shard, s, ep, done); }, epochs);
      if (pass != 0 && !se.closed.empty()) se.busy_pass = pass;  // its oldest closed epoch was found incomplete
    }
  }
  release_items(done, sink);
  if (done.capacity() <= 4096) reclaim_scratch = std::move(done);  // a thread keeps at most 16 KiB
  observer_.reclaimed();
  return epochs;
}

std::size_t epoch_table::poll_before_growth(free_list_sink& sink, poll_deadline& deadline) {
  const std::chrono::nanoseconds budget = poll_before_growth_;
  if (budget.count() == 0 || closed_epochs_.load(std::memory_order_relaxed) == 0) return 0;
  if (deadline == poll_deadline{}) deadline = std::chrono::steady_clock::now() + budget;
  do {
    if (const std::size_t n = reclaim(sink); n > 0) return n;
    std::this_thread::yield();  // the sim's stream workers share the cores; a device query is itself slow
  } while (closed_epochs_.load(std::memory_order_relaxed) != 0 && std::chrono::steady_clock::now() < deadline);
  return 0;
}

// Closes se's open epoch and blocks until its closed epochs completed; under the shard's lock.
std::size_t epoch_table::wait_locked(epoch_shard& shard, stream_state& se, std::vector<block_index>& done) {
  close_locked(shard, se, close_reason::slow_path);
  std::size_t epochs = 0;
  for (epoch& ep : se.closed) {
    device_.wait(ep.event);
    collect_locked(shard, se, ep, done);
    ++epochs;
  }
  se.closed.clear();
  return epochs;
}

std::size_t epoch_table::wait_pending(free_list_sink& sink) {
  std::vector<block_index> done;
  std::size_t epochs = 0;
  for (std::size_t i = 0; i < shard_count; ++i) {
    epoch_shard& shard = shards_[i];
    std::lock_guard lock(shard.mutex);
    for (auto& [key, se] : shard.streams) epochs += wait_locked(shard, se, done);
  }
  release_items(done, sink);
  return epochs;
}

std::size_t epoch_table::wait_stream(stream_ref s, free_list_sink& sink) {
  std::vector<block_index> done;
  std::size_t epochs = 0;
  {
    epoch_shard& shard = shard_of(s);
    std::lock_guard lock(shard.mutex);
    const auto it = shard.streams.find(s.native());
    if (it != shard.streams.end()) epochs = wait_locked(shard, it->second, done);
  }
  release_items(done, sink);
  return epochs;
}

// Blocks of completed epochs: pending -> free, chained per class for the sink.
void epoch_table::release_items(std::vector<block_index>& items, free_list_sink& sink) {
  if (items.empty()) return;
  // A chain per class met, in raw storage: a chain is set up when its class is first met, and only
  // those are pushed, in class order. (A vector of class_count_ chains cost a heap allocation and a
  // pass over every class per call.)
  union slot {
    slot() noexcept {}
    block_chain chain;
  };
  slot chains[max_size_classes];
  class_set met;
  for (const block_index item : items) {
    block_entry& e = blocks_[item];
    e.meta.store(block_entry::pack(block_state::free, 0), std::memory_order_relaxed);
    const size_class c = e.size_class();
    if (met.insert(c)) new (&chains[c].chain) block_chain{};
    block_chain& ch = chains[c].chain;
    e.next.store(ch.head, std::memory_order_relaxed);
    ch.head = item;
    if (ch.empty()) ch.tail = item;
    ++ch.count;
  }
  met.for_each([&](size_class c) { sink.push_chain(c, chains[c].chain); });
  observer_.released();
}

// ---- stats and reports ----------------------------------------------------------------------

void epoch_table::add_stats(pool_stats& st) const {
  for (std::size_t i = 0; i < shard_count; ++i) {
    const epoch_shard& shard = shards_[i];
    std::lock_guard lock(shard.mutex);
    for (size_class c = 0; c < class_count_; ++c) st.classes[c].pending_blocks += shard.pending_blocks[c];
    st.pending_epochs += shard.closed.load(std::memory_order_relaxed);
  }
  const auto closed = [this](close_reason r) {
    return epochs_closed_[static_cast<std::size_t>(r)].load(std::memory_order_relaxed);
  };
  st.epochs_closed_full = closed(close_reason::full);
  st.epochs_closed_bytes = closed(close_reason::bytes);
  st.epochs_closed_slow_path = closed(close_reason::slow_path);
  st.epochs_closed_other = closed(close_reason::other);
  st.stream_waits = stream_waits_.load(std::memory_order_relaxed);
  // An event per closed epoch and per device-side wait (order_after).
  st.events_recorded = st.epochs_closed_full + st.epochs_closed_bytes + st.epochs_closed_slow_path +
                       st.epochs_closed_other + st.stream_waits;
  st.epochs_reclaimed = epochs_reclaimed_.load(std::memory_order_relaxed);
}

std::uint64_t epoch_table::pending_stream_of(block_index b) const {
  for (std::size_t i = 0; i < shard_count; ++i) {
    const epoch_shard& shard = shards_[i];
    std::lock_guard lock(shard.mutex);
    for (const auto& [key, se] : shard.streams) {
      auto has = [&](const std::vector<block_index>& items) {
        return std::find(items.begin(), items.end(), b) != items.end();
      };
      bool found = has(se.open);
      for (const epoch& ep : se.closed) found = found || has(ep.items);
      if (found) return se.stream.native() == nullptr ? 0 : device_.stream_id(se.stream);
    }
  }
  return 0;
}

}  // namespace cudapool::core
