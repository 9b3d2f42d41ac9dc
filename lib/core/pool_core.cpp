#include <cudapool/detail/core/pool_core.hpp>

#include <cudapool/detail/core/arith.hpp>

#include <algorithm>
#include <cmath>
#include <bit>
#include <limits>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace cudapool::core {

namespace {

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
  validate(o);
  if (o.stream_arenas != 0) {
    throw std::invalid_argument("cudapool::pool_options: stream_arenas is applied by make_pool or "
                                "cudapool::stream_arenas<Pool> (cudapool/stream_arenas.hpp), not by a variant's pool");
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
      heap_(*backend_, heap_config(options_)),
      epochs_(*backend_, blocks_, heap_, classes_.count(), options_, observer_) {
  class_state_ = std::make_unique<class_state[]>(classes_.count());
  for (size_class c = 0; c < classes_.count(); ++c) class_state_[c].next_frame_bytes = first_frame_bytes(c);
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
    epochs_.wait_pending(sink);
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
  epoch_table::stream_state* marked = nullptr;
  bool lost = false;
  // Built in place (no copy of a returned tag: copied, its last bytes were read as one 16-byte load
  // over the separate stores that had just written them, a store-forwarding stall on every
  // stream-ordered large free).
  const stream_tag tag = stream == nullptr ? stream_tag{} : mark_or_synchronize(p, *stream, &marked, &lost);
  if (lost) return;
  std::size_t requested = 0;
  const segment_heap::free_result result = heap_.free(p, segment_heap::kind::large, tag, &requested);
  if (tag.completed != nullptr) {
    if (result != segment_heap::free_result::freed) {
      epochs_.unmark_stream_free(*stream, tag);
    } else if (heap_.several_streams()) {
      epochs_.note_mark_bytes(*stream, *marked, tag, requested);
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

stream_tag pool_core::mark_or_synchronize(const void* p, stream_ref s, epoch_table::stream_state** marked,
                                          bool* lost) noexcept {
  try {
    return epochs_.mark_stream_free(s, marked);
  } catch (const std::exception& e) {
    // No epoch to wait behind (out of host memory, or the event failed): wait for the stream.
    std::fprintf(stderr, "cudapool: deferring a stream-ordered free failed (%s); synchronizing the stream\n",
                 e.what());
  }
  try {
    backend_->synchronize(s);
  } catch (const std::exception& e2) {
    std::fprintf(stderr, "cudapool: synchronizing failed too (%s): %p is lost to the pool\n", e2.what(), p);
    *lost = true;
  }
  return {};
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
  // Before the blocks reach a free list (the caller pushes them), so that a sample that counts an
  // allocation of the class also reads its bit (release pairs with in_use_bytes_now's acquire).
  grown_classes_[class_set::word(c)].fetch_or(class_set::bit(c), std::memory_order_release);
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

// ---- stats and reports ----------------------------------------------------------------------

std::size_t pool_core::in_use_bytes_now() const noexcept {
  // Every reclaim samples the peaks (observer::released): with a sum per counter this was 2,166
  // instructions, 45 per replayed operation of mlp_4stream (callgrind, docs/results/2026-12-05-vm-s26);
  // over every class in one pass 32 (docs/results/2026-12-06-s39/mlp_breakdown.txt, 6.6% of its
  // time on the sim); over the classes that have had a slab alone, docs/results/2026-12-07-h100-s40.
  class_set grown;
  for (std::size_t w = 0; w < class_set::word_count; ++w) grown.words[w] = grown_classes_[w].load(std::memory_order_acquire);
  std::size_t index[2 * max_size_classes];
  size_class cls[max_size_classes];
  std::size_t k = 0;
  grown.for_each([&](size_class c) {
    cls[k] = c;
    index[2 * k] = alloc_counter(c);
    index[2 * k + 1] = free_counter(c);
    ++k;
  });
  std::int64_t sums[2 * max_size_classes];
  counters_.sum_each(index, 2 * k, sums);
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < k; ++i) {
    bytes += static_cast<std::size_t>(std::max<std::int64_t>(sums[2 * i] - sums[2 * i + 1], 0)) * classes_.bytes(cls[i]);
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
  epochs_.add_stats(st);  // pending blocks per class, before the bytes below
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
        info.pending_stream_id = epochs_.pending_stream_of(r.index);
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
  epochs_.add_holdings(r, heap_pending, [this](size_class c) { return classes_.bytes(c); });
  return r;
}

}  // namespace cudapool::core

namespace cudapool {

void validate(const pool_options& o) {
  auto fail = [](const std::string& m) { throw std::invalid_argument("cudapool::pool_options: " + m); };
  if (o.slab_bytes == 0 || o.slab_bytes % core::slab_alignment != 0) {
    fail("slab_bytes must be a nonzero multiple of 64 KiB, got " + std::to_string(o.slab_bytes));
  }
  if (o.slab_bytes > (std::size_t{1} << 31)) fail("slab_bytes must be <= 2 GiB");
  const std::size_t largest = o.fixed_block_bytes != 0 ? o.fixed_block_bytes : o.max_class_bytes;
  if (largest > o.slab_bytes) {
    fail("slab_bytes (" + std::to_string(o.slab_bytes) + ") must be >= the largest class (" +
         std::to_string(largest) + ")");
  }
  if (o.first_slab_bytes == 0 || o.first_slab_bytes % core::slab_alignment != 0 || o.first_slab_bytes > o.slab_bytes) {
    fail("first_slab_bytes must be a nonzero multiple of 64 KiB and <= slab_bytes, got " +
         std::to_string(o.first_slab_bytes));
  }
  if (o.epoch_batch == 0) fail("epoch_batch must be >= 1");
  if (o.epoch_batch > (core::mark_count_mask >> 1)) fail("epoch_batch must be < 2^23");
  if (o.poll_before_growth.count() < 0) fail("poll_before_growth must be >= 0");
  if (o.on_invalid_free == nullptr) fail("on_invalid_free must not be null");
  if (!(o.remap_ratio == 0.0 || (o.remap_ratio >= 1.0 && std::isfinite(o.remap_ratio)))) {
    fail("remap_ratio must be 0 (off) or a finite number >= 1, got " + std::to_string(o.remap_ratio));
  }
  if (o.stream_arenas > 64) fail("stream_arenas must be <= 64, got " + std::to_string(o.stream_arenas));
  if (o.arena_max_class_bytes < min_alignment || !std::has_single_bit(o.arena_max_class_bytes)) {
    fail("arena_max_class_bytes must be a power of two >= 256, got " + std::to_string(o.arena_max_class_bytes));
  }
  static_cast<void>(core::size_classes{o});  // the classes' own rules (classes_per_doubling, max_class_bytes)
}

}  // namespace cudapool
