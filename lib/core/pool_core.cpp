#include <cudapool/detail/core/pool_core.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <limits>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <unordered_map>

namespace cudapool::core {

namespace {

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

std::string human(std::size_t bytes) {
  char buf[64];
  if (bytes >= (std::size_t{1} << 30)) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  } else if (bytes >= (std::size_t{1} << 20)) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
  } else if (bytes >= 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024);
  } else {
    std::snprintf(buf, sizeof buf, "%zu B", bytes);
  }
  return buf;
}

const pool_options& validated(const pool_options& o) {
  auto fail = [](const std::string& m) { throw std::invalid_argument("cudapool::pool_options: " + m); };
  if (o.slab_bytes == 0 || o.slab_bytes % slab_alignment != 0) {
    fail("slab_bytes must be a nonzero multiple of 64 KiB, got " + std::to_string(o.slab_bytes));
  }
  if (o.slab_bytes > (std::size_t{1} << 31)) fail("slab_bytes must be <= 2 GiB");
  const std::size_t largest = o.fixed_block_bytes != 0 ? o.fixed_block_bytes : o.max_class_bytes;
  if (largest > o.slab_bytes) {
    fail("slab_bytes (" + std::to_string(o.slab_bytes) + ") must be >= the largest class (" +
         std::to_string(largest) + ")");
  }
  if (o.first_slab_bytes == 0 || o.first_slab_bytes % slab_alignment != 0 || o.first_slab_bytes > o.slab_bytes) {
    fail("first_slab_bytes must be a nonzero multiple of 64 KiB and <= slab_bytes, got " +
         std::to_string(o.first_slab_bytes));
  }
  if (o.epoch_batch == 0) fail("epoch_batch must be >= 1");
  if (o.epoch_batch > (mark_count_mask >> 1)) fail("epoch_batch must be < 2^23");
  if (o.poll_before_growth.count() < 0) fail("poll_before_growth must be >= 0");
  if (o.on_invalid_free == nullptr) fail("on_invalid_free must not be null");
  if (!(o.remap_ratio == 0.0 || o.remap_ratio >= 1.0)) {
    fail("remap_ratio must be 0 (off) or >= 1, got " + std::to_string(o.remap_ratio));
  }
  return o;
}

}  // namespace

// ---- construction / destruction -------------------------------------------------------------

segment_heap::config heap_config(const pool_options& o) {
  segment_heap::config c;
  c.byte_limit = o.byte_limit;
  c.allow_growth = o.allow_growth;
  c.virtual_memory = o.virtual_memory;
  c.reservation_bytes = o.address_reservation;
  c.chunk_bytes = o.slab_bytes;
  c.remap_ratio = o.remap_ratio;
  return c;
}

pool_core::pool_core(std::shared_ptr<backend> backend, const pool_options& options, std::string_view variant)
    : backend_(backend ? std::move(backend) : throw std::invalid_argument("cudapool: a pool needs a backend")),
      options_(validated(options)),
      classes_(options_),
      variant_(variant),
      heap_(*backend_, heap_config(options_)) {
  class_state_ = std::make_unique<class_state[]>(classes_.count());
  for (size_class c = 0; c < classes_.count(); ++c) class_state_[c].next_frame_bytes = first_frame_bytes(c);
  epoch_shards_ = std::make_unique<epoch_shard[]>(epoch_shard_count);
  for (std::size_t i = 0; i < epoch_shard_count; ++i) epoch_shards_[i].pending_blocks.assign(classes_.count(), 0);
  debug_ = diagnostics::make(options_, *backend_);
  if (options_.initial_reservation > 0) {
    const std::size_t bytes = round_up(options_.initial_reservation, options_.slab_bytes);
    if (options_.byte_limit != 0 && bytes > options_.byte_limit) {
      throw out_of_memory("cudapool: initial_reservation of " + human(bytes) + " exceeds byte_limit " +
                          human(options_.byte_limit));
    }
    if (!heap_.reserve_initial(bytes)) {
      throw out_of_memory("cudapool: the backend could not provide the initial_reservation of " + human(bytes));
    }
  }
}

pool_core::~pool_core() {
  // Device work may still use blocks freed on a stream: wait for it before giving memory back.
  struct discard final : free_list_sink {
    void push_chain(size_class, block_chain) noexcept override {}
  } sink;
  try {
    wait_pending(sink);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudapool: waiting for pending frees at destruction failed: %s\n", e.what());
  }
  if (debug_) debug_->poll();  // every guard check has completed: pending frees were waited for
  if (options_.report_leaks) report_leaks();
  if (debug_) debug_->release_all();
  // heap_ gives all device memory back when it is destroyed.
}

// ---- invalid frees and the large path -------------------------------------------------------

void pool_core::report_invalid(const void* p, invalid_free_reason reason) noexcept {
  invalid_frees_.fetch_add(1, std::memory_order_relaxed);
  options_.on_invalid_free(p, reason, options_.invalid_free_context);
}

void pool_core::deallocate_other(const void* p, const lookup_result& r, const stream_ref* stream) noexcept {
  if (r.what == lookup_result::kind::block) {  // a block of ours, so interior or double
    report_invalid(p, r.interior ? invalid_free_reason::interior_pointer : invalid_free_reason::double_free);
    return;
  }
  stream_tag tag;
  stream_state* marked = nullptr;
  if (stream != nullptr) {
    try {
      tag = mark_stream_free(*stream, &marked);
    } catch (const std::exception& e) {
      // No epoch to wait behind (out of host memory, or the event failed): wait for the stream.
      std::fprintf(stderr, "cudapool: deferring a stream-ordered free failed (%s); synchronizing the stream\n",
                   e.what());
      try {
        backend_->synchronize(*stream);
      } catch (const std::exception& e2) {
        std::fprintf(stderr, "cudapool: synchronizing failed too (%s): %p is lost to the pool\n", e2.what(), p);
        return;
      }
    }
  }
  std::size_t requested = 0;
  const segment_heap::free_result result = heap_.free(p, segment_heap::kind::large, tag, &requested);
  if (tag.completed != nullptr) {
    if (result != segment_heap::free_result::freed) {
      unmark_stream_free(*stream, tag);
    } else if (heap_.several_streams()) {
      note_mark_bytes(*stream, *marked, tag, requested);
    }
  }
  switch (result) {
    case segment_heap::free_result::freed:
      counters_.add(large_free_counter, 1, requested_counter, -static_cast<std::int64_t>(requested));
      if (stream == nullptr && over_release_threshold()) {
        try {
          trim_heap();
        } catch (const std::exception& e) {
          std::fprintf(stderr, "cudapool: trim at the release threshold failed: %s\n", e.what());
        }
      }
      return;
    case segment_heap::free_result::double_free:
      return report_invalid(p, invalid_free_reason::double_free);
    case segment_heap::free_result::interior:
      return report_invalid(p, invalid_free_reason::interior_pointer);
    case segment_heap::free_result::foreign:
      return report_invalid(p, invalid_free_reason::foreign_pointer);
  }
}

void* pool_core::allocate_large(std::size_t bytes, std::size_t alignment, stream_ref s, bool may_grow, const void** behind,
                                bool* wait_own) {
  void* p = heap_.allocate(bytes, alignment, segment_heap::kind::large, {s.native(), true}, may_grow, behind, wait_own);
  if (p == nullptr) return nullptr;
  counters_.add(large_alloc_counter, 1, requested_counter, static_cast<std::int64_t>(bytes));
  return p;
}

std::size_t pool_core::trim_heap() { return heap_.trim(); }

// ---- growth and trim ------------------------------------------------------------------------

std::size_t pool_core::first_frame_bytes(size_class c) const noexcept {
  return std::min(options_.slab_bytes, std::max(options_.first_slab_bytes, round_up(classes_.bytes(c), slab_alignment)));
}

pool_core::grow_result pool_core::grow(size_class c, std::uint64_t seen) {
  std::lock_guard lock(growth_mutex_);
  class_state& cs = class_state_[c];
  if (cs.generation.load(std::memory_order_relaxed) != seen) return {{}, true};
  // A released descriptor is re-bound to a frame of its own size; a new one takes the class's next
  // size, which then doubles. Free heap memory comes before new pages: without growth a new
  // descriptor may take a smaller frame (down to the class's first size) that fits a free range.
  const bool rebind = !cs.released.empty();
  std::size_t frame_bytes = rebind ? slabs_[cs.released.back()].frame_bytes : cs.next_frame_bytes;
  void* frame = heap_.allocate(frame_bytes, slab_alignment, segment_heap::kind::slab, {}, false);
  if (frame == nullptr && !rebind) {
    const std::size_t smallest = first_frame_bytes(c);
    for (std::size_t b = frame_bytes / 2; frame == nullptr && b >= smallest; b /= 2) {
      const std::size_t rounded = round_up(std::max(b, smallest), slab_alignment);
      frame = heap_.allocate(rounded, slab_alignment, segment_heap::kind::slab, {}, false);
      if (frame != nullptr) frame_bytes = rounded;
    }
  }
  if (frame == nullptr) frame = heap_.allocate(frame_bytes, slab_alignment, segment_heap::kind::slab, {}, true);
  if (frame == nullptr) return {};

  const auto block_bytes = static_cast<std::uint32_t>(classes_.bytes(c));
  std::uint32_t id = 0;
  if (rebind) {
    id = cs.released.back();
    cs.released.pop_back();
  } else {
    const auto count = static_cast<std::uint32_t>(frame_bytes / block_bytes);
    // A slab's block range stays within one segment of blocks_ when it fits in one (the indices
    // skipped at a segment's end are never used), so lookup() reaches its entries directly.
    constexpr std::size_t seg = block_table::segment_size;
    // At a cache line of entries: a slab's entries share no line with another slab's.
    constexpr std::size_t per_line = 64 / sizeof(block_entry);
    std::size_t first = (block_count_ + per_line - 1) / per_line * per_line;
    if (count <= seg && first % seg + count > seg) first += seg - first % seg;
    try {
      slabs_.grow_to(std::size_t{slab_count_} + 1);
      blocks_.grow_to(first + count);
    } catch (...) {
      (void)heap_.free(frame, segment_heap::kind::slab, {});
      throw;
    }
    id = slab_count_++;
    slab_desc& s = slabs_[id];
    s.cls = c;
    s.block_bytes = block_bytes;
    s.reciprocal = ~std::uint64_t{0} / block_bytes + 1;
    s.first_block = static_cast<block_index>(first);
    s.block_count = count;
    s.frame_bytes = static_cast<std::uint32_t>(frame_bytes);
    s.id = id;
    s.entries = first / seg == (first + count - 1) / seg ? &blocks_[s.first_block] : nullptr;
    block_count_ = static_cast<std::uint32_t>(first + count);
    cs.next_frame_bytes = std::min(options_.slab_bytes, std::max(cs.next_frame_bytes, 2 * frame_bytes));
  }
  slab_desc& s = slabs_[id];
  const auto base = reinterpret_cast<std::uintptr_t>(frame);
  for (std::uint32_t i = 0; i < s.block_count; ++i) {
    block_entry& e = blocks_[s.first_block + i];
    e.address_and_class = (base + std::uintptr_t{i} * block_bytes) | c;
    e.meta.store(block_entry::pack(block_state::free, 0), std::memory_order_relaxed);
    e.next.store(i + 1 < s.block_count ? s.first_block + i + 1 : no_block, std::memory_order_relaxed);
  }
  // Publish: lookups find the slab through the page map (release pairs with find()'s acquire),
  // then read base (release pairs with lookup()'s acquire).
  s.base.store(base, std::memory_order_release);
  pages_.set(frame, frame_bytes, reinterpret_cast<std::uintptr_t>(&s));
  if (debug_) debug_->on_chunk_bound(frame, frame_bytes);
  cs.capacity.fetch_add(s.block_count, std::memory_order_relaxed);
  cs.slabs.fetch_add(1, std::memory_order_relaxed);
  cs.generation.fetch_add(1, std::memory_order_release);
  grows_.fetch_add(1, std::memory_order_relaxed);
  sample_peaks();
  return {{s.first_block, s.first_block + s.block_count - 1, s.block_count}, false};
}

std::size_t pool_core::release_free_slabs(size_class c, block_chain taken, free_list_sink& sink) {
  if (taken.empty()) return 0;
  std::unique_lock lock(growth_mutex_);
  std::unordered_map<std::uint32_t, std::uint32_t> free_in_slab;
  for (block_index b = taken.head; b != no_block; b = blocks_[b].next.load(std::memory_order_relaxed)) {
    ++free_in_slab[reinterpret_cast<const slab_desc*>(pages_.find(blocks_[b].address()))->id];
  }
  std::vector<std::uint32_t> victims;
  for (const auto& [id, n] : free_in_slab) {
    if (n == slabs_[id].block_count) victims.push_back(id);
  }
  std::vector<std::pair<void*, std::size_t>> frames;
  class_state& cs = class_state_[c];
  for (std::uint32_t id : victims) {
    slab_desc& s = slabs_[id];
    for (std::uint32_t i = 0; i < s.block_count; ++i) {
      blocks_[s.first_block + i].meta.store(block_entry::pack(block_state::unmapped, 0), std::memory_order_relaxed);
    }
    const auto frame = reinterpret_cast<void*>(s.base.load(std::memory_order_relaxed));
    if (debug_) debug_->on_chunk_released(frame);
    pages_.set(frame, s.frame_bytes, 0);
    s.base.store(0, std::memory_order_release);
    frames.emplace_back(frame, s.frame_bytes);
    cs.capacity.fetch_sub(s.block_count, std::memory_order_relaxed);
    cs.slabs.fetch_sub(1, std::memory_order_relaxed);
    cs.released.push_back(id);
  }
  // The blocks of kept slabs go back, relinked in their original order.
  block_chain rest;
  for (block_index b = taken.head; b != no_block;) {
    const block_index next = blocks_[b].next.load(std::memory_order_relaxed);
    if (block_entry::state_of(blocks_[b].meta.load(std::memory_order_relaxed)) != block_state::unmapped) {
      if (rest.empty()) {
        rest.head = b;
      } else {
        blocks_[rest.tail].next.store(b, std::memory_order_relaxed);
      }
      rest.tail = b;
      ++rest.count;
    }
    b = next;
  }
  if (!rest.empty()) blocks_[rest.tail].next.store(no_block, std::memory_order_relaxed);
  // Under the growth lock, so that a growth that reuses the frame sees it in the heap.
  std::size_t released = 0;
  for (const auto& [frame, bytes] : frames) {
    (void)heap_.free(frame, segment_heap::kind::slab, {});
    released += bytes;
  }
  lock.unlock();
  if (!rest.empty()) sink.push_chain(c, rest);
  return released;
}

// ---- stream-ordered frees -------------------------------------------------------------------

pool_core::epoch_shard& pool_core::shard_of(stream_ref s) const noexcept {
  const auto h = reinterpret_cast<std::uintptr_t>(s.native());
  return epoch_shards_[((h >> 4) ^ (h >> 12)) % epoch_shard_count];
}

void pool_core::defer(block_index b, stream_ref s) noexcept {
  epoch_shard& shard = shard_of(s);
  std::lock_guard lock(shard.mutex);
  try {
    stream_state& se = state_locked(shard, s);
    se.open.push_back(b);
    const size_class c = blocks_[b].size_class();
    se.open_classes.set(c);
    ++shard.pending_blocks[c];
    if (se.open.size() + open_marks(se) >= options_.epoch_batch) close_locked(shard, se, close_reason::full);
  } catch (const std::exception& e) {
    // The block stays in the open epoch (or, if even that failed, it stays pending and is lost to
    // this pool, reported here); a later close retries the event.
    std::fprintf(stderr, "cudapool: deferring a stream-ordered free failed: %s\n", e.what());
  }
}

// A state is a map node that is never erased: the per-thread cache's pointer stays valid while
// the pool lives.
pool_core::stream_state& pool_core::state_of(stream_ref s) {
  if (stream_state* const* cached = state_cache::find(id_, s)) [[likely]] return **cached;
  epoch_shard& shard = shard_of(s);
  stream_state* se = nullptr;
  {
    std::lock_guard lock(shard.mutex);
    se = &state_locked(shard, s);
  }
  state_cache::put(id_, s, se);
  return *se;
}

pool_core::stream_state& pool_core::state_locked(epoch_shard& shard, stream_ref s) {
  stream_state& se = shard.streams[s.native()];
  se.stream = s;
  if (!shard.has_streams.load(std::memory_order_relaxed)) shard.has_streams.store(true, std::memory_order_relaxed);
  return se;
}

// Without a lock unless the epoch is full or being closed (epoch_protocol.hpp's try_mark). With a
// lock per mark it was one of the three or four lock pairs of a stream-ordered large free and its
// reuse.
stream_tag pool_core::mark_stream_free(stream_ref s, stream_state** state) {
  stream_state& se = state_of(s);
  *state = &se;
  std::size_t count = 0;
  std::uint64_t seq = try_mark(se, &count);
  if (seq != 0 && count < options_.epoch_batch) [[likely]] return stream_tag{&se.completed, seq, s.native(), true};
  epoch_shard& shard = shard_of(s);
  std::lock_guard lock(shard.mutex);
  if (seq == 0) seq = mark_locked(se);  // after the close that was under way
  if (open_seq(se) == seq && se.open.size() + open_marks(se) >= options_.epoch_batch) {
    close_or_report(shard, se, close_reason::full);  // on failure the mark stays in the open epoch
  }
  return stream_tag{&se.completed, seq, s.native(), true};
}

void pool_core::unmark_stream_free(stream_ref s, const stream_tag& tag) noexcept {
  epoch_shard& shard = shard_of(s);
  std::lock_guard lock(shard.mutex);
  const auto it = shard.streams.find(s.native());
  // Once its epoch is closed the mark costs one event that covers nothing; it changes no block.
  if (it != shard.streams.end()) unmark(it->second, tag.epoch);
}

void pool_core::close_ranges_of(stream_ref s, close_reason why) noexcept {
  epoch_shard& shard = shard_of(s);
  std::lock_guard lock(shard.mutex);
  const auto it = shard.streams.find(s.native());
  if (it == shard.streams.end() || open_marks(it->second) == 0) return;
  close_or_report(shard, it->second, why);
}

void pool_core::close_epoch_of_ranges(stream_ref s) noexcept { close_ranges_of(s, close_reason::full); }

void pool_core::close_epoch_behind(stream_ref s) noexcept { close_ranges_of(s, close_reason::slow_path); }

// An epoch's large ranges are closed behind their event once they hold this share of the mapped
// bytes. Without it the epoch of a stream whose small frees never join an epoch (the stream
// variant's partitions) stayed open until epoch_batch large frees or a miss, and a miss right after
// closing finds the new event not yet complete: the heap grew while the ranges waited.
constexpr std::size_t mark_close_share = 16;

void pool_core::note_mark_bytes(stream_ref s, stream_state& se, const stream_tag& tag, std::size_t bytes) noexcept {
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

void pool_core::close_or_report(epoch_shard& shard, stream_state& se, close_reason why) noexcept {
  try {
    close_locked(shard, se, why);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudapool: closing an epoch failed: %s\n", e.what());  // a later close retries
  }
}

void pool_core::close_locked(epoch_shard& shard, stream_state& se, close_reason why) {
  if (!close_epoch(backend_, se)) return;  // record the event, then publish the epoch
  se.open_classes.reset();
  add_closed(shard, 1);
  closed_epochs_.fetch_add(1, std::memory_order_relaxed);
  epochs_closed_[static_cast<std::size_t>(why)].fetch_add(1, std::memory_order_relaxed);
}

bool pool_core::defer_chain(block_chain chain, stream_ref s) noexcept {
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

void pool_core::order_after(stream_ref waiter, stream_ref producer) {
  event_handle e = backend_->acquire_event();
  try {
    backend_->record(e, producer);
    backend_->stream_wait(waiter, e);  // captures the record: the event may be reused at once
  } catch (...) {
    backend_->release_event(e);
    throw;
  }
  backend_->release_event(e);
  stream_waits_.fetch_add(1, std::memory_order_relaxed);  // one event recorded, one wait
}

void pool_core::flush_stream(stream_ref s) {
  {
    epoch_shard& shard = shard_of(s);
    std::lock_guard lock(shard.mutex);
    auto it = shard.streams.find(s.native());
    if (it != shard.streams.end()) close_locked(shard, it->second, close_reason::other);
  }
  heap_.forget_stream(s.native());  // the handle may name another stream once s is destroyed
}

template <class Predicate>
std::size_t pool_core::close_epochs_if(Predicate&& close) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < epoch_shard_count; ++i) {
    epoch_shard& shard = epoch_shards_[i];
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

block_index pool_core::take_from_own_epochs(size_class c, stream_ref s) noexcept {
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

void pool_core::close_open_epochs() {
  close_epochs_if([](const void*, const stream_state&) { return true; });
}

std::size_t pool_core::close_epochs_for(size_class c) {
  return close_epochs_if([c](const void*, const stream_state& se) { return se.open_classes[c]; });
}

std::size_t pool_core::close_epochs_of_ranges() {
  return close_epochs_if([](const void*, const stream_state& se) { return open_marks(se) > 0; });
}

std::size_t pool_core::close_epochs_for_large(stream_ref s, std::size_t least_bytes) {
  return close_epochs_if([s, least_bytes](const void* key, const stream_state& se) {
    return open_marks(se) > 0 && key != s.native() && se.open_mark_bytes.load(std::memory_order_relaxed) >= least_bytes;
  });
}

// Moves a completed epoch's blocks to `done`, takes them off the shard's pending counts, and lets
// the heap's ranges freed in it (and before it) go to any stream. Under the shard's lock.
void pool_core::collect_locked(epoch_shard& shard, stream_epochs& se, epoch& ep, std::vector<block_index>& done) {
  collect_epoch(backend_, se, ep, done, [&](block_index b) { --shard.pending_blocks[blocks_[b].size_class()]; });
  heap_.note_completion();
  add_closed(shard, -1);
  closed_epochs_.fetch_sub(1, std::memory_order_relaxed);
  epochs_reclaimed_.fetch_add(1, std::memory_order_relaxed);
}

std::size_t pool_core::reclaim(free_list_sink& sink, std::uint64_t pass) {
  std::vector<block_index> done;
  std::size_t epochs = 0;
  // Nothing closed in any shard: no shard's lock to take (16 of them). A close by another thread
  // that this load misses is one this reclaim could as well have run before.
  const bool any_closed = closed_epochs_.load(std::memory_order_relaxed) != 0;
  for (std::size_t i = 0; any_closed && i < epoch_shard_count; ++i) {
    epoch_shard& shard = epoch_shards_[i];
    if (shard.closed.load(std::memory_order_relaxed) == 0) continue;  // no lock to take
    std::lock_guard lock(shard.mutex);
    for (auto& [key, se] : shard.streams) {
      if (pass != 0 && se.busy_pass == pass) continue;  // found incomplete in this pass already
      // s: clang 14 does not capture a structured binding.
      collect_completed(backend_, se, [&, &s = se](epoch& ep) { collect_locked(shard, s, ep, done); }, epochs);
      if (pass != 0 && !se.closed.empty()) se.busy_pass = pass;  // its oldest closed epoch was found incomplete
    }
  }
  release_items(done, sink);
  if (debug_) debug_->poll();
  return epochs;
}

std::size_t pool_core::poll_before_growth(free_list_sink& sink, poll_deadline& deadline) {
  const std::chrono::nanoseconds budget = options_.poll_before_growth;
  if (budget.count() == 0 || closed_epochs_.load(std::memory_order_relaxed) == 0) return 0;
  if (deadline == poll_deadline{}) deadline = std::chrono::steady_clock::now() + budget;
  do {
    if (const std::size_t n = reclaim(sink); n > 0) return n;
    std::this_thread::yield();  // the sim's stream workers share the cores; a device query is itself slow
  } while (closed_epochs_.load(std::memory_order_relaxed) != 0 && std::chrono::steady_clock::now() < deadline);
  return 0;
}

// Closes se's open epoch and blocks until its closed epochs completed; under the shard's lock.
std::size_t pool_core::wait_locked(epoch_shard& shard, stream_state& se, std::vector<block_index>& done) {
  close_locked(shard, se, close_reason::slow_path);
  std::size_t epochs = 0;
  for (epoch& ep : se.closed) {
    backend_->wait(ep.event);
    collect_locked(shard, se, ep, done);
    ++epochs;
  }
  se.closed.clear();
  return epochs;
}

std::size_t pool_core::wait_pending(free_list_sink& sink) {
  std::vector<block_index> done;
  std::size_t epochs = 0;
  for (std::size_t i = 0; i < epoch_shard_count; ++i) {
    epoch_shard& shard = epoch_shards_[i];
    std::lock_guard lock(shard.mutex);
    for (auto& [key, se] : shard.streams) epochs += wait_locked(shard, se, done);
  }
  release_items(done, sink);
  return epochs;
}

std::size_t pool_core::wait_stream(stream_ref s, free_list_sink& sink) {
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
void pool_core::release_items(std::vector<block_index>& items, free_list_sink& sink) {
  if (items.empty()) return;
  std::vector<block_chain> chains(classes_.count());
  for (const block_index item : items) {
    block_entry& e = blocks_[item];
    e.meta.store(block_entry::pack(block_state::free, 0), std::memory_order_relaxed);
    block_chain& ch = chains[e.size_class()];
    e.next.store(ch.head, std::memory_order_relaxed);
    ch.head = item;
    if (ch.empty()) ch.tail = item;
    ++ch.count;
  }
  for (size_class c = 0; c < chains.size(); ++c) {
    if (!chains[c].empty()) sink.push_chain(c, chains[c]);
  }
  sample_peaks();
}

// ---- stats and reports ----------------------------------------------------------------------

std::size_t pool_core::in_use_bytes_now() const noexcept {
  std::size_t bytes = 0;
  for (size_class c = 0; c < classes_.count(); ++c) {
    const std::int64_t live = counters_.sum(alloc_counter(c)) - counters_.sum(free_counter(c));
    bytes += static_cast<std::size_t>(std::max<std::int64_t>(live, 0)) * classes_.bytes(c);
  }
  return bytes + heap_.large_bytes();
}

void pool_core::sample_peaks() const noexcept {
  const std::size_t in_use = in_use_bytes_now();
  std::size_t peak = peak_in_use_.load(std::memory_order_relaxed);
  while (in_use > peak && !peak_in_use_.compare_exchange_weak(peak, in_use, std::memory_order_relaxed)) {
  }
  const std::int64_t requested = counters_.sum(requested_counter);
  std::int64_t rpeak = peak_requested_.load(std::memory_order_relaxed);
  while (requested > rpeak && !peak_requested_.compare_exchange_weak(rpeak, requested, std::memory_order_relaxed)) {
  }
}

bool pool_core::over_release_threshold() const noexcept {
  if (options_.release_threshold == std::numeric_limits<std::size_t>::max()) return false;
  const std::size_t reserved = heap_.mapped_bytes();
  const std::size_t in_use = in_use_bytes_now();
  return reserved > in_use && reserved - in_use > options_.release_threshold;
}

pool_stats pool_core::stats() const {
  sample_peaks();
  pool_stats st;
  st.variant = variant_;
  st.backend = std::string(backend_->name());
  st.classes.resize(classes_.count());
  const std::int64_t requested = counters_.sum(requested_counter);
  st.requested_bytes = requested > 0 ? static_cast<std::size_t>(requested) : 0;
  for (std::size_t i = 0; i < epoch_shard_count; ++i) {
    const epoch_shard& shard = epoch_shards_[i];
    std::lock_guard lock(shard.mutex);
    for (size_class c = 0; c < classes_.count(); ++c) st.classes[c].pending_blocks += shard.pending_blocks[c];
    st.pending_epochs += shard.closed.load(std::memory_order_relaxed);
  }
  for (size_class c = 0; c < classes_.count(); ++c) {
    class_stats& cs = st.classes[c];
    cs.block_bytes = classes_.bytes(c);
    cs.capacity_blocks = class_state_[c].capacity.load(std::memory_order_relaxed);
    cs.slabs = class_state_[c].slabs.load(std::memory_order_relaxed);
    cs.allocs = static_cast<std::uint64_t>(counters_.sum(alloc_counter(c)));
    cs.frees = static_cast<std::uint64_t>(counters_.sum(free_counter(c)));
    cs.in_use_blocks = static_cast<std::size_t>(cs.allocs - cs.frees);
    st.allocs += cs.allocs;
    st.frees += cs.frees;
    st.in_use_bytes += cs.in_use_blocks * cs.block_bytes;
    st.pending_bytes += cs.pending_blocks * cs.block_bytes;
  }
  st.heap = heap_.stats();
  st.allocs += static_cast<std::uint64_t>(counters_.sum(large_alloc_counter));
  st.frees += static_cast<std::uint64_t>(counters_.sum(large_free_counter));
  st.in_use_bytes += st.heap.large_bytes;
  st.pending_bytes += st.heap.pending_bytes;
  st.reserved_bytes = st.heap.mapped_bytes;
  st.peak_reserved_bytes = st.heap.peak_mapped_bytes;
  st.peak_in_use_bytes = peak_in_use_.load(std::memory_order_relaxed);
  st.peak_requested_bytes = static_cast<std::size_t>(std::max<std::int64_t>(0, peak_requested_.load(std::memory_order_relaxed)));
  st.grows = grows_.load(std::memory_order_relaxed);
  st.trims = st.heap.unmaps;
  st.ooms = ooms_.load(std::memory_order_relaxed);
  st.invalid_frees = invalid_frees_.load(std::memory_order_relaxed);
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
  return st;
}

std::string pool_core::describe_exhaustion(const oom_report& r) const {
  const pool_stats& st = r.stats;
  std::ostringstream out;
  out << "cudapool: out of memory: requested " << human(r.requested_bytes) << " (" << r.requested_bytes << " B";
  if (r.alignment > min_alignment) out << ", aligned to " << r.alignment;
  if (r.size_class < 0) {
    out << ", large path";
  } else {
    out << ", class " << r.size_class << " of " << human(r.class_bytes);
  }
  out << ") from the " << variant_ << " pool on the " << backend_->name() << " backend; reserved "
      << human(st.reserved_bytes);
  if (r.byte_limit != 0) out << " of a " << human(r.byte_limit) << " limit";
  if (!r.growth_allowed) out << " (growth disabled)";
  out << ", in use " << human(st.in_use_bytes) << ", free " << human(st.free_bytes) << ", cached "
      << human(st.cached_bytes) << ", pending " << human(st.pending_bytes) << " in " << st.pending_epochs
      << " epochs";
  bool first = true;
  for (std::size_t k = 0; k < st.classes.size(); ++k) {
    const class_stats& cs = st.classes[k];
    if (cs.capacity_blocks == 0 && cs.pending_blocks == 0) continue;
    out << (first ? "; per class (size: in use/free/cached/pending/capacity blocks): " : ", ") << human(cs.block_bytes)
        << ": " << cs.in_use_blocks << "/" << cs.free_blocks << "/" << cs.cached_blocks << "/" << cs.pending_blocks << "/"
        << cs.capacity_blocks;
    first = false;
  }
  first = true;
  for (const oom_report::stream_holding& h : r.streams) {
    out << (first ? "; per stream (id: free in its partition, pending behind events, in use): " : ", ") << h.stream_id
        << ": " << h.free_bytes << " B free, " << h.pending_bytes << " B pending, " << h.in_use_bytes << " B in use";
    first = false;
  }
  if (!r.thread_caches.empty()) {
    std::size_t bytes = 0;
    for (const oom_report::thread_cache_holding& t : r.thread_caches) bytes += t.bytes;
    out << "; " << r.thread_caches.size() << " thread caches hold " << human(bytes);
  }
  const heap_stats& h = st.heap;
  if (h.large_count > 0) out << "; large: " << h.large_count << " live (" << human(h.large_bytes) << ")";
  out << "; heap: " << human(h.free_bytes) << " free in " << h.free_extents << " extents, the largest "
      << human(h.largest_free_bytes) << ", " << human(h.pending_bytes) << " of it pending";
  out << "; a trim would release " << human(r.releasable_by_trim) << ", a synchronize "
      << human(r.releasable_by_synchronize);
  return out.str();
}

void pool_core::report_leaks() const {
  if (debug_ && debug_->report_leaks_by_stack(variant_)) return;
  std::size_t count = 0;
  std::size_t bytes = 0;
  std::vector<std::pair<void*, std::size_t>> examples;
  for (std::uint32_t id = 0; id < slab_count_; ++id) {
    const slab_desc& s = slabs_[id];
    if (s.base.load(std::memory_order_relaxed) == 0) continue;
    for (std::uint32_t i = 0; i < s.block_count; ++i) {
      const block_entry& e = blocks_[s.first_block + i];
      const std::uint32_t m = e.meta.load(std::memory_order_relaxed);
      if (block_entry::state_of(m) != block_state::live) continue;
      ++count;
      bytes += s.block_bytes;
      if (examples.size() < 8) examples.emplace_back(e.address(), m & block_entry::bytes_mask);
    }
  }
  {
    std::size_t large_count = 0;
    std::size_t large_bytes = 0;
    for (const auto& e : heap_.live_large(8 - std::min<std::size_t>(8, examples.size()), &large_count, &large_bytes)) {
      examples.push_back(e);
    }
    count += large_count;
    bytes += large_bytes;
  }
  if (count == 0) return;
  std::fprintf(stderr, "cudapool: leak report: the %s pool was destroyed with %zu live allocation%s (%s):\n",
               variant_.c_str(), count, count == 1 ? "" : "s", human(bytes).c_str());
  for (const auto& [p, n] : examples) std::fprintf(stderr, "cudapool:   %p  %zu bytes requested\n", p, n);
  if (count > examples.size()) std::fprintf(stderr, "cudapool:   ... and %zu more\n", count - examples.size());
  std::fprintf(stderr, "cudapool: all device memory of the pool is released regardless.\n");
}

// ---- debug layer ----------------------------------------------------------------------------

void pool_core::debug_allocated(void* p, std::size_t bytes, block_index b, stream_ref s) {
  if (b != no_block) {
    const slab_desc& sd = *reinterpret_cast<const slab_desc*>(pages_.find(p));
    debug_->on_alloc(p, bytes, reinterpret_cast<void*>(sd.base.load(std::memory_order_relaxed)), sd.frame_bytes,
                     false, s);
    return;
  }
  const segment_heap::info e = heap_.describe(p);
  debug_->on_alloc(p, bytes, reinterpret_cast<void*>(e.base), e.bytes, true, s);
}

std::size_t pool_core::check_guards() {
  if (!debug_) return 0;
  backend_->synchronize_device();
  return debug_->poll();
}

pointer_info pool_core::describe(const void* p) const {
  pointer_info info;
  const lookup_result r = lookup(p);
  if (r.what == lookup_result::kind::block) {
    const block_entry& e = blocks_[r.index];
    const std::uint32_t m = e.meta.load(std::memory_order_acquire);
    info.what = r.interior ? pointer_info::kind::interior : pointer_info::kind::block;
    info.base = e.address();
    info.offset = static_cast<std::size_t>(static_cast<const char*>(p) - static_cast<const char*>(info.base));
    info.block = r.index;
    info.size_class = static_cast<int>(r.cls);
    info.capacity_bytes = classes_.bytes(r.cls);
    switch (block_entry::state_of(m)) {
      case block_state::live:
        info.status = pointer_info::state::live;
        info.requested_bytes = m & block_entry::bytes_mask;
        break;
      case block_state::pending: {
        info.status = pointer_info::state::pending;
        for (std::size_t i = 0; i < epoch_shard_count && info.pending_stream_id == 0; ++i) {
          const epoch_shard& shard = epoch_shards_[i];
          std::lock_guard lock(shard.mutex);
          for (const auto& [key, se] : shard.streams) {
            auto has = [&](const std::vector<std::uint32_t>& items) {
              return std::find(items.begin(), items.end(), r.index) != items.end();
            };
            bool found = has(se.open);
            for (const epoch& ep : se.closed) found = found || has(ep.items);
            if (found) {
              info.pending_stream_id = se.stream.native() == nullptr ? 0 : backend_->stream_id(se.stream);
              break;
            }
          }
        }
        break;
      }
      default:
        info.status = pointer_info::state::free;
        break;
    }
  } else {
    const segment_heap::info e = heap_.describe(p);
    if (!e.found || (e.used && e.what == segment_heap::kind::slab)) return info;  // a released slab's frame
    const auto addr = reinterpret_cast<std::uintptr_t>(p);
    info.what = addr == e.base ? pointer_info::kind::large : pointer_info::kind::interior;
    info.base = reinterpret_cast<const void*>(e.base);
    info.offset = addr - e.base;
    info.capacity_bytes = e.bytes;
    if (e.used) {
      info.status = pointer_info::state::live;
      info.requested_bytes = e.requested;
    } else if (e.pending) {
      info.status = pointer_info::state::pending;
      try {
        info.pending_stream_id = e.pending_stream == nullptr ? 0 : backend_->stream_id(stream_ref(const_cast<void*>(e.pending_stream)));
      } catch (const std::exception&) {
        info.pending_stream_id = 0;  // the stream is gone
      }
    } else {
      info.status = pointer_info::state::free;
    }
  }
  if (debug_ && info.status == pointer_info::state::live) {
    if (auto live = debug_->live(info.base)) {
      info.requested_bytes = live->bytes;
      info.alloc_stack = std::move(live->stack);
    }
  }
  return info;
}

oom_report pool_core::exhaustion_report(std::size_t bytes, std::size_t alignment, const pool_stats& st) const {
  oom_report r;
  r.requested_bytes = bytes;
  r.alignment = alignment;
  const size_class c = classes_.lookup(bytes, alignment);
  if (c != large_class) {
    r.size_class = static_cast<int>(c);
    r.class_bytes = classes_.bytes(c);
  }
  r.byte_limit = options_.byte_limit;
  r.growth_allowed = options_.allow_growth;
  r.stats = st;
  r.releasable_by_synchronize = st.pending_bytes;
  // Wholly free slabs (blocks on free lists or in caches, none live or pending), which trim() gives
  // to the heap, plus the heap's wholly free pages: about what trim() would unmap.
  r.releasable_by_trim = st.heap.unmappable_bytes;
  r.largest_free_bytes = st.heap.largest_free_bytes;
  {
    std::lock_guard lock(growth_mutex_);
    for (std::uint32_t id = 0; id < slab_count_; ++id) {
      const slab_desc& s = slabs_[id];
      if (s.base.load(std::memory_order_relaxed) == 0) continue;
      bool all_free = true;
      for (std::uint32_t i = 0; i < s.block_count && all_free; ++i) {
        all_free = block_entry::state_of(blocks_[s.first_block + i].meta.load(std::memory_order_relaxed)) ==
                   block_state::free;
      }
      if (all_free) r.releasable_by_trim += s.frame_bytes;
    }
  }
  const std::vector<std::pair<const void*, std::size_t>> heap_pending = heap_.pending_by_stream();
  for (std::size_t i = 0; i < epoch_shard_count; ++i) {
    const epoch_shard& shard = epoch_shards_[i];
    std::lock_guard lock(shard.mutex);
    for (const auto& [key, se] : shard.streams) {
      oom_report::stream_holding h;
      for (const auto& [stream, bytes] : heap_pending) {
        if (stream == se.stream.native()) h.pending_bytes += bytes;
      }
      auto count = [&](const std::vector<block_index>& items) {
        for (const block_index b : items) h.pending_bytes += classes_.bytes(blocks_[b].size_class());
      };
      count(se.open);
      for (const epoch& ep : se.closed) count(ep.items);
      h.pending_epochs = se.closed.size() + (se.open.empty() ? 0 : 1);
      if (h.pending_bytes == 0) continue;  // only streams that hold something (and so are alive)
      h.stream_id = se.stream.native() == nullptr ? 0 : backend_->stream_id(se.stream);
      r.streams.push_back(h);
    }
  }
  return r;
}

}  // namespace cudapool::core
