#include "core/pool_core.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace cudapool::core {

namespace {

constexpr std::size_t large_granularity = std::size_t{2} << 20;  // cudaMalloc's own granularity

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
  if (o.epoch_batch == 0) fail("epoch_batch must be >= 1");
  if (o.on_invalid_free == nullptr) fail("on_invalid_free must not be null");
  return o;
}

}  // namespace

// ---- construction / destruction -------------------------------------------------------------

pool_core::pool_core(std::shared_ptr<backend> backend, const pool_options& options, std::string_view variant)
    : backend_(std::move(backend)), options_(validated(options)), classes_(options_), variant_(variant) {
  if (!backend_) throw std::invalid_argument("cudapool: a pool needs a backend");
  class_state_ = std::make_unique<class_state[]>(classes_.count());
  epoch_shards_ = std::make_unique<epoch_shard[]>(epoch_shard_count);
  for (std::size_t i = 0; i < epoch_shard_count; ++i) epoch_shards_[i].pending_blocks.assign(classes_.count(), 0);
  debug_ = diagnostics::make(options_, *backend_);
  if (options_.initial_reservation > 0) {
    const std::size_t frames = round_up(options_.initial_reservation, options_.slab_bytes) / options_.slab_bytes;
    const std::size_t bytes = frames * options_.slab_bytes;
    if (!try_reserve(bytes)) {
      throw out_of_memory("cudapool: initial_reservation of " + human(bytes) + " exceeds byte_limit " +
                          human(options_.byte_limit));
    }
    // Over-allocate by one alignment unit if the backend does not hand out 64 KiB aligned chunks.
    void* chunk = backend_->allocate_chunk(bytes);
    std::size_t chunk_bytes = bytes;
    if (chunk != nullptr && reinterpret_cast<std::uintptr_t>(chunk) % slab_alignment != 0) {
      backend_->free_chunk(chunk, bytes);
      chunk_bytes = bytes + slab_alignment;
      chunk = backend_->allocate_chunk(chunk_bytes);
    }
    if (chunk == nullptr) {
      unreserve(bytes);
      throw out_of_memory("cudapool: the backend could not provide the initial_reservation of " + human(bytes));
    }
    if (chunk_bytes != bytes) reserved_bytes_.fetch_add(slab_alignment, std::memory_order_relaxed);
    raise_reserved_peak(reserved_bytes_.load(std::memory_order_relaxed));
    reservation_ = chunk;
    reservation_bytes_ = chunk_bytes;
    const auto first = round_up(reinterpret_cast<std::uintptr_t>(chunk), slab_alignment);
    for (std::size_t f = frames; f-- > 0;) {
      reservation_frames_.push_back(reinterpret_cast<void*>(first + f * options_.slab_bytes));
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
  for (std::uint32_t id = 0; id < slab_count_; ++id) {
    slab_desc& s = slabs_[id];
    if (s.base.load(std::memory_order_relaxed) != 0 && s.chunk != nullptr) {
      backend_->free_chunk(s.chunk, s.chunk_bytes);
    }
  }
  for (const large_entry& l : large_) {
    if (l.chunk != nullptr) backend_->free_chunk(l.chunk, l.chunk_bytes);
  }
  if (reservation_ != nullptr) backend_->free_chunk(reservation_, reservation_bytes_);
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
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  std::unique_lock lock(large_mutex_);
  auto it = large_by_address_.upper_bound(addr);
  if (it == large_by_address_.begin()) {
    lock.unlock();
    report_invalid(p, invalid_free_reason::foreign_pointer);
    return;
  }
  --it;
  large_entry& l = large_[it->second];
  if (addr != l.user) {
    const bool inside = addr < l.user + l.bytes;
    lock.unlock();
    report_invalid(p, inside ? invalid_free_reason::interior_pointer : invalid_free_reason::foreign_pointer);
    return;
  }
  if (l.pending) {
    lock.unlock();
    report_invalid(p, invalid_free_reason::double_free);
    return;
  }
  const std::uint32_t id = it->second;
  ++large_frees_;
  counters_.add(requested_counter, -static_cast<std::int64_t>(l.bytes));
  if (stream == nullptr) {
    cache_large_locked(id);
    lock.unlock();
    if (over_release_threshold()) trim_large_cache(0);
    return;
  }
  l.pending = true;
  const std::size_t bytes = l.chunk_bytes;
  lock.unlock();
  defer_item(large_tag | id, bytes, *stream);
}

void pool_core::cache_large_locked(std::uint32_t id) {
  large_entry& l = large_[id];
  large_by_address_.erase(l.user);
  l.pending = false;
  large_in_use_bytes_ -= l.chunk_bytes;
  large_cached_bytes_ += l.chunk_bytes;
  large_cache_.emplace(l.chunk_bytes, id);
}

void* pool_core::allocate_large(std::size_t bytes, std::size_t alignment, bool may_grow) {
  const std::size_t need = round_up(bytes + (alignment > min_alignment ? alignment : 0), large_granularity);
  std::unique_lock lock(large_mutex_);
  std::uint32_t id = 0;
  // Best fit, but never more than a quarter (or one granule) larger than needed.
  auto it = large_cache_.lower_bound(need);
  if (it != large_cache_.end() && it->first <= std::max(need + large_granularity, need + need / 4)) {
    id = it->second;
    large_cache_.erase(it);
    large_cached_bytes_ -= large_[id].chunk_bytes;
  } else {
    lock.unlock();
    if (!may_grow || !options_.allow_growth) return nullptr;  // a fixed pool never calls the backend again
    void* chunk = backend_chunk(need);
    if (chunk == nullptr) {
      trim_large_cache(0);  // cached chunks of other sizes go first
      chunk = backend_chunk(need);
      if (chunk == nullptr) return nullptr;
    }
    lock.lock();
    if (large_free_ids_.empty()) {
      id = static_cast<std::uint32_t>(large_.size());
      large_.emplace_back();
    } else {
      id = large_free_ids_.back();
      large_free_ids_.pop_back();
    }
    large_[id].chunk = chunk;
    large_[id].chunk_bytes = need;
  }
  large_entry& l = large_[id];
  l.user = round_up(reinterpret_cast<std::uintptr_t>(l.chunk), std::max(alignment, min_alignment));
  l.bytes = bytes;
  l.pending = false;
  large_by_address_.emplace(l.user, id);
  large_in_use_bytes_ += l.chunk_bytes;
  ++large_allocs_;
  counters_.add(requested_counter, static_cast<std::int64_t>(bytes));
  return reinterpret_cast<void*>(l.user);
}

std::size_t pool_core::trim_large_cache(std::size_t keep_bytes) {
  std::vector<large_entry> victims;
  {
    std::lock_guard lock(large_mutex_);
    // Largest first: they free the most for the fewest backend calls.
    while (large_cached_bytes_ > keep_bytes && !large_cache_.empty()) {
      auto it = std::prev(large_cache_.end());
      const std::uint32_t id = it->second;
      large_cache_.erase(it);
      large_cached_bytes_ -= large_[id].chunk_bytes;
      victims.push_back(large_[id]);
      large_[id] = {};
      large_free_ids_.push_back(id);
    }
  }
  std::size_t freed = 0;
  for (const large_entry& v : victims) {
    backend_->free_chunk(v.chunk, v.chunk_bytes);
    unreserve(v.chunk_bytes);
    freed += v.chunk_bytes;
    trims_.fetch_add(1, std::memory_order_relaxed);
  }
  return freed;
}

// ---- reservation accounting -----------------------------------------------------------------

std::size_t pool_core::try_reserve(std::size_t bytes) noexcept {
  std::size_t cur = reserved_bytes_.load(std::memory_order_relaxed);
  do {
    if (options_.byte_limit != 0 && cur + bytes > options_.byte_limit) return 0;
  } while (!reserved_bytes_.compare_exchange_weak(cur, cur + bytes, std::memory_order_relaxed));
  return cur + bytes;
}

// Called once the backend granted a reservation (a failed request must not raise the peak).
void pool_core::raise_reserved_peak(std::size_t reserved) noexcept {
  std::size_t peak = peak_reserved_.load(std::memory_order_relaxed);
  while (reserved > peak && !peak_reserved_.compare_exchange_weak(peak, reserved, std::memory_order_relaxed)) {
  }
}

void pool_core::unreserve(std::size_t bytes) noexcept { reserved_bytes_.fetch_sub(bytes, std::memory_order_relaxed); }

void* pool_core::backend_chunk(std::size_t bytes) {
  const std::size_t reserved = try_reserve(bytes);
  if (reserved == 0) return nullptr;
  void* chunk = nullptr;
  try {
    chunk = backend_->allocate_chunk(bytes);
  } catch (...) {
    unreserve(bytes);
    throw;
  }
  if (chunk == nullptr) {
    unreserve(bytes);
  } else {
    raise_reserved_peak(reserved);
  }
  return chunk;
}

// ---- growth and trim ------------------------------------------------------------------------

void* pool_core::take_frame(void** chunk, std::size_t* chunk_bytes) {
  if (!reservation_frames_.empty()) {
    void* f = reservation_frames_.back();
    reservation_frames_.pop_back();
    *chunk = nullptr;
    *chunk_bytes = 0;
    return f;
  }
  if (!options_.allow_growth) return nullptr;
  std::size_t bytes = options_.slab_bytes;
  void* c = backend_chunk(bytes);
  if (c != nullptr && reinterpret_cast<std::uintptr_t>(c) % slab_alignment != 0) {
    // Not 64 KiB aligned (cudaMalloc gives 2 MiB alignment in practice; this is the fallback).
    backend_->free_chunk(c, bytes);
    unreserve(bytes);
    bytes += slab_alignment;
    c = backend_chunk(bytes);
  }
  if (c == nullptr) return nullptr;
  *chunk = c;
  *chunk_bytes = bytes;
  return reinterpret_cast<void*>(round_up(reinterpret_cast<std::uintptr_t>(c), slab_alignment));
}

void pool_core::give_back_frame(void* frame, void* chunk, std::size_t chunk_bytes) {
  if (chunk == nullptr) {
    reservation_frames_.push_back(frame);
    return;
  }
  backend_->free_chunk(chunk, chunk_bytes);
  unreserve(chunk_bytes);
}

pool_core::grow_result pool_core::grow(size_class c, std::uint64_t seen) {
  std::lock_guard lock(growth_mutex_);
  class_state& cs = class_state_[c];
  if (cs.generation.load(std::memory_order_relaxed) != seen) return {{}, true};
  void* chunk = nullptr;
  std::size_t chunk_bytes = 0;
  void* frame = take_frame(&chunk, &chunk_bytes);
  if (frame == nullptr) return {};

  const auto block_bytes = static_cast<std::uint32_t>(classes_.bytes(c));
  std::uint32_t id = 0;
  if (!cs.released.empty()) {
    id = cs.released.back();
    cs.released.pop_back();
  } else {
    const auto count = static_cast<std::uint32_t>(options_.slab_bytes / block_bytes);
    // A slab's block range stays within one segment of blocks_ when it fits in one (the indices
    // skipped at a segment's end are never used), so lookup() reaches its entries directly.
    constexpr std::size_t seg = block_table::segment_size;
    std::size_t first = block_count_;
    if (count <= seg && first % seg + count > seg) first += seg - first % seg;
    try {
      slabs_.grow_to(std::size_t{slab_count_} + 1);
      blocks_.grow_to(first + count);
    } catch (...) {
      give_back_frame(frame, chunk, chunk_bytes);
      throw;
    }
    id = slab_count_++;
    slab_desc& s = slabs_[id];
    s.cls = c;
    s.block_bytes = block_bytes;
    s.reciprocal = ~std::uint64_t{0} / block_bytes + 1;
    s.first_block = static_cast<block_index>(first);
    s.block_count = count;
    s.id = id;
    s.entries = first / seg == (first + count - 1) / seg ? &blocks_[s.first_block] : nullptr;
    block_count_ = static_cast<std::uint32_t>(first + count);
  }
  slab_desc& s = slabs_[id];
  s.chunk = chunk;
  s.chunk_bytes = chunk_bytes;
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
  pages_.set(frame, options_.slab_bytes, reinterpret_cast<std::uintptr_t>(&s));
  if (debug_) debug_->on_chunk_bound(frame, options_.slab_bytes);
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
  std::vector<std::pair<void*, std::size_t>> chunks;
  class_state& cs = class_state_[c];
  for (std::uint32_t id : victims) {
    slab_desc& s = slabs_[id];
    for (std::uint32_t i = 0; i < s.block_count; ++i) {
      blocks_[s.first_block + i].meta.store(block_entry::pack(block_state::unmapped, 0), std::memory_order_relaxed);
    }
    const auto frame = reinterpret_cast<void*>(s.base.load(std::memory_order_relaxed));
    if (debug_) debug_->on_chunk_released(frame);
    pages_.set(frame, options_.slab_bytes, 0);
    s.base.store(0, std::memory_order_release);
    if (s.chunk == nullptr) {
      reservation_frames_.push_back(frame);
    } else {
      chunks.emplace_back(s.chunk, s.chunk_bytes);
    }
    s.chunk = nullptr;
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
  lock.unlock();
  if (!rest.empty()) sink.push_chain(c, rest);
  std::size_t freed = 0;
  for (const auto& [chunk, bytes] : chunks) {
    backend_->free_chunk(chunk, bytes);
    unreserve(bytes);
    freed += bytes;
    trims_.fetch_add(1, std::memory_order_relaxed);
  }
  return freed;
}

// ---- stream-ordered frees -------------------------------------------------------------------

void pool_core::defer(block_index b, stream_ref s) noexcept {
  defer_item(b, classes_.bytes(blocks_[b].size_class()), s);
}

pool_core::epoch_shard& pool_core::shard_of(stream_ref s) const noexcept {
  const auto h = reinterpret_cast<std::uintptr_t>(s.native());
  return epoch_shards_[((h >> 4) ^ (h >> 12)) % epoch_shard_count];
}

void pool_core::defer_item(std::uint32_t item, std::size_t bytes, stream_ref s) noexcept {
  epoch_shard& shard = shard_of(s);
  std::lock_guard lock(shard.mutex);
  try {
    stream_epochs& se = shard.streams[s.native()];
    se.stream = s;
    se.open.push_back(item);
    if (item & large_tag) {
      large_pending_.fetch_add(1, std::memory_order_relaxed);
      large_pending_bytes_.fetch_add(bytes, std::memory_order_relaxed);
    } else {
      ++shard.pending_blocks[blocks_[item].size_class()];
    }
    if (se.open.size() >= options_.epoch_batch) close_locked(shard, se);
  } catch (const std::exception& e) {
    // The item stays in the open epoch (or, if even that failed, the block stays pending and
    // is lost to this pool, reported here); a later close retries the event.
    std::fprintf(stderr, "cudapool: deferring a stream-ordered free failed: %s\n", e.what());
  }
}

void pool_core::close_locked(epoch_shard& shard, stream_epochs& se) {
  if (se.open.empty()) return;
  event_handle e = backend_->acquire_event();
  try {
    backend_->record(e, se.stream);
  } catch (...) {
    backend_->release_event(e);
    throw;
  }
  se.closed.push_back({e, std::move(se.open)});
  se.open.clear();
  ++shard.closed;
  events_recorded_.fetch_add(1, std::memory_order_relaxed);
}

void pool_core::defer_chain(block_chain chain, stream_ref s) {
  if (chain.empty()) return;
  epoch_shard& shard = shard_of(s);
  std::lock_guard lock(shard.mutex);
  stream_epochs& se = shard.streams[s.native()];
  se.stream = s;
  se.open.reserve(se.open.size() + chain.count);
  block_index b = chain.head;
  for (std::size_t i = 0; i < chain.count; ++i) {
    block_entry& e = blocks_[b];
    e.meta.store(block_entry::pack(block_state::pending, 0), std::memory_order_relaxed);
    se.open.push_back(b);
    ++shard.pending_blocks[e.size_class()];
    b = e.next.load(std::memory_order_relaxed);
  }
  close_locked(shard, se);
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
  events_recorded_.fetch_add(1, std::memory_order_relaxed);
}

void pool_core::flush_stream(stream_ref s) {
  epoch_shard& shard = shard_of(s);
  std::lock_guard lock(shard.mutex);
  auto it = shard.streams.find(s.native());
  if (it != shard.streams.end()) close_locked(shard, it->second);
}

void pool_core::close_open_epochs() {
  for (std::size_t i = 0; i < epoch_shard_count; ++i) {
    epoch_shard& shard = epoch_shards_[i];
    std::lock_guard lock(shard.mutex);
    for (auto& [key, se] : shard.streams) close_locked(shard, se);
  }
}

// Moves an epoch's items to `done` and takes them off the shard's pending counts. Under its lock.
void pool_core::collect_locked(epoch_shard& shard, epoch& ep, std::vector<std::uint32_t>& done) {
  backend_->release_event(ep.event);
  for (std::uint32_t item : ep.items) {
    if (!(item & large_tag)) --shard.pending_blocks[blocks_[item].size_class()];
  }
  done.insert(done.end(), ep.items.begin(), ep.items.end());
  --shard.closed;
  epochs_reclaimed_.fetch_add(1, std::memory_order_relaxed);
}

std::size_t pool_core::reclaim(free_list_sink& sink) {
  std::vector<std::uint32_t> done;
  for (std::size_t i = 0; i < epoch_shard_count; ++i) {
    epoch_shard& shard = epoch_shards_[i];
    std::lock_guard lock(shard.mutex);
    if (shard.closed == 0) continue;
    for (auto& [key, se] : shard.streams) {
      // Epochs of one stream complete in order: stop at the first incomplete one.
      while (!se.closed.empty() && backend_->query(se.closed.front().event)) {
        collect_locked(shard, se.closed.front(), done);
        se.closed.pop_front();
      }
    }
  }
  release_items(done, sink);
  if (debug_) debug_->poll();
  return done.size();
}

std::size_t pool_core::wait_pending(free_list_sink& sink) {
  std::vector<std::uint32_t> done;
  for (std::size_t i = 0; i < epoch_shard_count; ++i) {
    epoch_shard& shard = epoch_shards_[i];
    std::lock_guard lock(shard.mutex);
    for (auto& [key, se] : shard.streams) {
      close_locked(shard, se);
      for (epoch& ep : se.closed) {
        backend_->wait(ep.event);
        collect_locked(shard, ep, done);
      }
      se.closed.clear();
    }
  }
  release_items(done, sink);
  return done.size();
}

// Items of completed epochs: pending -> free, chained per class for the sink; large ones cached.
void pool_core::release_items(std::vector<std::uint32_t>& items, free_list_sink& sink) {
  if (items.empty()) return;
  std::vector<block_chain> chains(classes_.count());
  std::size_t large_done = 0;
  std::size_t large_bytes = 0;
  {
    std::lock_guard lock(large_mutex_);
    for (std::uint32_t item : items) {
      if (item & large_tag) {
        large_bytes += large_[item & ~large_tag].chunk_bytes;
        cache_large_locked(item & ~large_tag);
        ++large_done;
      }
    }
  }
  large_pending_.fetch_sub(large_done, std::memory_order_relaxed);
  large_pending_bytes_.fetch_sub(large_bytes, std::memory_order_relaxed);
  for (std::uint32_t item : items) {
    if (item & large_tag) continue;
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
  std::lock_guard lock(large_mutex_);
  return bytes + large_in_use_bytes_;
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
  const std::size_t reserved = reserved_bytes_.load(std::memory_order_relaxed);
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
  const std::size_t large_pending_bytes = large_pending_bytes_.load(std::memory_order_relaxed);
  st.large_pending = large_pending_.load(std::memory_order_relaxed);
  st.pending_bytes = large_pending_bytes;
  for (std::size_t i = 0; i < epoch_shard_count; ++i) {
    const epoch_shard& shard = epoch_shards_[i];
    std::lock_guard lock(shard.mutex);
    for (size_class c = 0; c < classes_.count(); ++c) st.classes[c].pending_blocks += shard.pending_blocks[c];
    st.pending_epochs += shard.closed;
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
  {
    std::lock_guard lock(large_mutex_);
    st.large_live = large_by_address_.size() - st.large_pending;
    st.large_in_use_bytes = large_in_use_bytes_;
    st.large_cached_chunks = large_cache_.size();
    st.large_cached_bytes = large_cached_bytes_;
    st.allocs += large_allocs_;
    st.frees += large_frees_;
  }
  // large_in_use_bytes_ counts an allocation until its chunk is cached, pending ones included.
  st.large_in_use_bytes -= std::min(st.large_in_use_bytes, large_pending_bytes);
  st.in_use_bytes += st.large_in_use_bytes;
  st.cached_bytes = st.large_cached_bytes;
  st.reserved_bytes = reserved_bytes_.load(std::memory_order_relaxed);
  st.peak_reserved_bytes = peak_reserved_.load(std::memory_order_relaxed);
  st.peak_in_use_bytes = peak_in_use_.load(std::memory_order_relaxed);
  st.peak_requested_bytes = static_cast<std::size_t>(std::max<std::int64_t>(0, peak_requested_.load(std::memory_order_relaxed)));
  st.grows = grows_.load(std::memory_order_relaxed);
  st.trims = trims_.load(std::memory_order_relaxed);
  st.ooms = ooms_.load(std::memory_order_relaxed);
  st.invalid_frees = invalid_frees_.load(std::memory_order_relaxed);
  st.events_recorded = events_recorded_.load(std::memory_order_relaxed);
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
  if (st.large_live + st.large_cached_chunks + st.large_pending > 0) {
    out << "; large: " << st.large_live << " live (" << human(st.large_in_use_bytes) << "), "
        << st.large_pending << " pending, " << st.large_cached_chunks << " cached (" << human(st.large_cached_bytes)
        << ")";
  }
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
    std::lock_guard lock(large_mutex_);
    for (const auto& [addr, id] : large_by_address_) {
      ++count;
      bytes += large_[id].chunk_bytes;
      if (examples.size() < 8) examples.emplace_back(reinterpret_cast<void*>(addr), large_[id].bytes);
    }
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
    debug_->on_alloc(p, bytes, reinterpret_cast<void*>(sd.base.load(std::memory_order_relaxed)), options_.slab_bytes,
                     false, s);
    return;
  }
  void* chunk = nullptr;
  std::size_t chunk_bytes = 0;
  {
    std::lock_guard lock(large_mutex_);
    auto it = large_by_address_.find(reinterpret_cast<std::uintptr_t>(p));
    if (it != large_by_address_.end()) {
      chunk = large_[it->second].chunk;
      chunk_bytes = large_[it->second].chunk_bytes;
    }
  }
  debug_->on_alloc(p, bytes, chunk, chunk_bytes, true, s);
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
    const auto addr = reinterpret_cast<std::uintptr_t>(p);
    std::lock_guard lock(large_mutex_);
    auto it = large_by_address_.upper_bound(addr);
    if (it == large_by_address_.begin()) return info;
    --it;
    const large_entry& l = large_[it->second];
    if (addr >= l.user + std::max<std::size_t>(l.bytes, 1)) return info;
    info.what = addr == l.user ? pointer_info::kind::large : pointer_info::kind::interior;
    info.base = reinterpret_cast<const void*>(l.user);
    info.offset = addr - l.user;
    info.capacity_bytes = l.chunk_bytes;
    info.status = l.pending ? pointer_info::state::pending : pointer_info::state::live;
    if (!l.pending) info.requested_bytes = l.bytes;
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
  // Wholly free slabs (blocks on free lists or in caches, none live or pending), as trim() would
  // find them, plus the cached large chunks.
  r.releasable_by_trim = st.large_cached_bytes;
  {
    std::lock_guard lock(growth_mutex_);
    for (std::uint32_t id = 0; id < slab_count_; ++id) {
      const slab_desc& s = slabs_[id];
      if (s.base.load(std::memory_order_relaxed) == 0 || s.chunk == nullptr) continue;
      bool all_free = true;
      for (std::uint32_t i = 0; i < s.block_count && all_free; ++i) {
        all_free = block_entry::state_of(blocks_[s.first_block + i].meta.load(std::memory_order_relaxed)) ==
                   block_state::free;
      }
      if (all_free) r.releasable_by_trim += s.chunk_bytes;
    }
  }
  for (std::size_t i = 0; i < epoch_shard_count; ++i) {
    const epoch_shard& shard = epoch_shards_[i];
    std::lock_guard lock(shard.mutex);
    for (const auto& [key, se] : shard.streams) {
      oom_report::stream_holding h;
      auto count = [&](const std::vector<std::uint32_t>& items) {
        for (std::uint32_t item : items) {
          if (item & large_tag) {
            std::lock_guard large_lock(large_mutex_);
            h.pending_bytes += large_[item & ~large_tag].chunk_bytes;
          } else {
            h.pending_bytes += classes_.bytes(blocks_[item].size_class());
          }
        }
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
