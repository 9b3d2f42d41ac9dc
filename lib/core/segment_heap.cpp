#include <cudapool/detail/core/segment_heap.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>

#include <cudapool/detail/core/arith.hpp>
#include <cudapool/errors.hpp>

namespace cudapool::core {

namespace {

constexpr std::size_t granule = 256;  // every extent starts and ends on one (cudaMalloc's alignment)

}  // namespace

// ---- address index ---------------------------------------------------------------------------

inline std::size_t segment_heap::address_index::slot_with(std::uintptr_t key) const noexcept {
  if (keys_.empty()) return 0;
  for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
    if (keys_[i] == key) return i;
    if (keys_[i] == 0) return keys_.size();
  }
}

void segment_heap::address_index::grow() {
  std::vector<std::uintptr_t> keys(std::max<std::size_t>(64, keys_.size() * 2), 0);
  std::vector<std::uint32_t> ids(keys.size(), none);
  std::swap(keys, keys_);
  std::swap(ids, ids_);
  mask_ = keys_.size() - 1;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == 0) continue;
    std::size_t j = slot_of(keys[i]);
    while (keys_[j] != 0) j = (j + 1) & mask_;
    keys_[j] = keys[i];
    ids_[j] = ids[i];
  }
}

inline void segment_heap::address_index::insert(std::uintptr_t key, std::uint32_t id) noexcept {
  std::size_t i = slot_of(key);
  while (keys_[i] != 0) i = (i + 1) & mask_;
  keys_[i] = key;
  ids_[i] = id;
  ++size_;
}

inline void segment_heap::address_index::erase_slot(std::size_t i) noexcept {
  const std::size_t mask = mask_;
  // Backward-shift deletion: move later entries of the probe run into the hole when their home
  // slot does not lie between the hole and them.
  for (std::size_t j = (i + 1) & mask; keys_[j] != 0; j = (j + 1) & mask) {
    const std::size_t home = slot_of(keys_[j]);
    if (((j - home) & mask) >= ((j - i) & mask)) {
      keys_[i] = keys_[j];
      ids_[i] = ids_[j];
      i = j;
    }
  }
  keys_[i] = 0;
  --size_;
}

// ---- construction ----------------------------------------------------------------------------

segment_heap::segment_heap(backend& device, const config& c)
    : device_(device), config_(c), page_(c.virtual_memory ? device.page_bytes() : 0) {
  if (config_.chunk_bytes == 0 || config_.chunk_bytes % granule != 0) {
    throw std::invalid_argument("cudapool: segment_heap: chunk_bytes must be a nonzero multiple of 256");
  }
  // Growth maps whole pages (chunks without virtual memory): a limit below one could never be met,
  // and every allocation would end in an out-of-memory report.
  const std::size_t unit = page_ != 0 ? page_ : config_.chunk_bytes;
  if (config_.byte_limit != 0 && config_.byte_limit < unit) {
    throw std::invalid_argument("cudapool::pool_options: byte_limit (" + std::to_string(config_.byte_limit) +
                                " bytes) is below the device's smallest mapping (" + std::to_string(unit) +
                                " bytes): nothing could be allocated");
  }
}

segment_heap::~segment_heap() {
  // Per segment, the mapped runs (used and free extents) rounded out to pages, then the segment.
  std::vector<std::vector<std::pair<std::uintptr_t, std::uintptr_t>>> runs(segments_.size());
  for (const extent& e : extents_) {
    if (e.st == state::used || e.st == state::free) runs[e.segment].emplace_back(e.base, e.end());
  }
  for (std::size_t s = 0; s < segments_.size(); ++s) {
    const segment& seg = segments_[s];
    if (seg.bytes == 0) continue;
    if (!seg.vm) {
      device_.free_chunk(reinterpret_cast<void*>(seg.base), seg.bytes);
      continue;
    }
    auto& r = runs[s];
    std::sort(r.begin(), r.end());
    for (std::size_t i = 0; i < r.size();) {
      const std::uintptr_t lo = round_down(r[i].first, page_);
      std::uintptr_t hi = r[i].second;
      for (++i; i < r.size() && r[i].first <= round_up(hi, page_); ++i) hi = std::max(hi, r[i].second);
      hi = round_up(hi, page_);
      device_.unmap(reinterpret_cast<void*>(lo), hi - lo);
    }
    device_.release_address(reinterpret_cast<void*>(seg.base), seg.bytes);
  }
}

bool segment_heap::reserve_initial(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  if (bytes == 0) return true;
  const std::size_t rounded = round_up(bytes, page_ != 0 ? page_ : granule);
  if (config_.byte_limit != 0 && rounded > config_.byte_limit) return false;
  const std::uint32_t id = page_ != 0 ? grow(rounded, granule, {}).first : grow_chunk(rounded, granule);
  if (id == none) return false;
  segment& seg = segments_[extents_[id].segment];
  seg.pinned_end = seg.base + rounded;
  return true;
}

// ---- bins ------------------------------------------------------------------------------------

inline unsigned segment_heap::bin_of(std::size_t bytes) noexcept {
  const std::size_t units = bytes / granule;
  if (units < 16) return static_cast<unsigned>(units);
  const unsigned fl = static_cast<unsigned>(std::bit_width(units)) - 1;  // >= 4
  const unsigned sl = static_cast<unsigned>(units >> (fl - 4)) & 15;
  return std::min(16 * (fl - 3) + sl, bin_count - 1);
}

// The smallest size bin b holds (bin_of's inverse); for b = bin_count (no bin), more than any size.
// A table: best fit asks it of every bin it leaves, and computed it cost 3-4 instructions per
// replayed operation (sim, callgrind, s48 round 2).
inline std::size_t segment_heap::bin_floor(unsigned b) noexcept {
  static constexpr auto floors = [] {
    std::array<std::size_t, bin_count + 1> f{};
    for (unsigned i = 0; i < bin_count; ++i) {
      f[i] = i < 16 ? std::size_t{i} * granule : (std::size_t{16 + i % 16} << (i / 16 - 1)) * granule;
    }
    f[bin_count] = std::numeric_limits<std::size_t>::max();
    return f;
  }();
  return floors[b];
}

inline segment_heap::fit segment_heap::find_fit(std::size_t bytes, unsigned bin, std::size_t alignment, stream_use use,
                                                bool wilderness) const noexcept {
  // From the bin of `bytes`, not of bytes + the worst-case alignment padding: an extent that is
  // already aligned fits exactly (a freed 64 KiB-aligned slab frame serves the next slab).
  // The extent's own bytes first: the wilderness test reads its neighbour (another cache line).
  auto fits = [&](const extent& e) {
    if (align_up(e.base, alignment) + bytes > e.end()) return false;
    return wilderness || e.next == none || extents_[e.next].st != state::unmapped;
  };
  unsigned b = bin;
  std::uint32_t best = none;
  std::size_t best_hole = 0;
  for (bool first = true;; first = false) {
    if (!first) {
      // The next non-empty bin above b.
      unsigned w = (b + 1) / 64;
      if (w >= bin_count / 64) return {best, best_hole};
      std::uint64_t bits = bitmap_[w] & (~std::uint64_t{0} << ((b + 1) % 64));
      while (bits == 0) {
        if (++w == bin_count / 64) return {best, best_hole};
        bits = bitmap_[w];
      }
      b = w * 64 + static_cast<unsigned>(std::countr_zero(bits));
    }
    // The fitting extent the caller may use in the smallest hole: a free extent's hole is the run
    // of free neighbours it lies in, whatever their tags (free() keeps differently tagged ranges
    // apart). Ranked by the piece alone, a small request would take a piece of a large hole and
    // split it while a hole of its own size stays empty. Bins above b hold larger pieces; none of
    // them can be in a smaller hole than the best found once their floor exceeds its hole.
    for (std::uint32_t id = bins_[b]; id != none; id = extents_[id].link_next) {
      const extent& e = extents_[id];
      if (!fits(e) || !safe_for(e.tag, use)) continue;
      const std::size_t h = hole_bytes(id);
      // Ties: the smaller piece, then the lower address (address-ordered best fit keeps the
      // high ranges whole): lm_train's replay with 64 KiB classes 1.037 -> 1.025x its live peak,
      // the default classes' 1.041 -> 1.037, cnn_varbatch 1.034 -> 1.030 (the bin lists' order
      // before, the latest freed first). A hole of exactly the request still ends the search
      // where it is found (below): exact fits are common, and the list may be long.
      if (best == none || std::tuple(h, e.bytes, e.base) < std::tuple(best_hole, extents_[best].bytes, extents_[best].base)) {
        best = id;
        best_hole = h;
        if (h == bytes) break;  // a hole of exactly the request: nothing fits in less
      }
    }
    if (best != none && bin_floor(b + 1) >= best_hole) return {best, best_hole};
  }
}

// The bytes of the run of free extents that id lies in.
inline std::size_t segment_heap::hole_bytes(std::uint32_t id) const noexcept {
  std::size_t h = extents_[id].bytes;
  for (std::uint32_t n = extents_[id].prev; n != none && extents_[n].st == state::free; n = extents_[n].prev) h += extents_[n].bytes;
  for (std::uint32_t n = extents_[id].next; n != none && extents_[n].st == state::free; n = extents_[n].next) h += extents_[n].bytes;
  return h;
}


inline void segment_heap::insert_free(std::uint32_t id) noexcept {
  extent& e = extents_[id];
  e.st = state::free;
  const unsigned b = bin_of(e.bytes);
  e.link_prev = head_of_bin + b;
  e.link_next = bins_[b];
  if (bins_[b] != none) extents_[bins_[b]].link_prev = id;
  bins_[b] = id;
  bitmap_[b / 64] |= std::uint64_t{1} << (b % 64);
  free_bytes_ += e.bytes;
  if (e.in_pending) {
    --stale_pending_;  // listed, and free again
  } else if (e.tag.completed != nullptr) {
    e.in_pending = true;
    pending_.push_back(id);  // capacity >= extents_.size(): does not allocate
    pending_count_.store(pending_.size(), std::memory_order_relaxed);
  }
}

inline void segment_heap::remove_free(std::uint32_t id) noexcept {
  extent& e = extents_[id];
  free_bytes_ -= e.bytes;
  if (e.in_pending) ++stale_pending_;  // listed, and no longer free (until insert_free)
  if (e.link_prev < head_of_bin) {
    extents_[e.link_prev].link_next = e.link_next;
  } else {
    // The head: its link_prev names its bin (computed again, it cost 5-6 instructions per replayed
    // operation, sim, callgrind, s48 round 2).
    const unsigned b = e.link_prev - head_of_bin;
    bins_[b] = e.link_next;
    if (e.link_next == none) bitmap_[b / 64] &= ~(std::uint64_t{1} << (b % 64));
  }
  if (e.link_next != none) extents_[e.link_next].link_prev = e.link_prev;  // a new head takes the bin
  // Its links stay as they are: only a listed extent's are read (insert_free and insert_unmapped
  // set both).
}

void segment_heap::insert_unmapped(std::uint32_t id) noexcept {
  extent& e = extents_[id];
  e.st = state::unmapped;
  e.tag = {};
  e.link_prev = none;
  e.link_next = unmapped_head_;
  if (unmapped_head_ != none) extents_[unmapped_head_].link_prev = id;
  unmapped_head_ = id;
}

void segment_heap::remove_unmapped(std::uint32_t id) noexcept {
  extent& e = extents_[id];
  if (e.link_prev != none) {
    extents_[e.link_prev].link_next = e.link_next;
  } else {
    unmapped_head_ = e.link_next;
  }
  if (e.link_next != none) extents_[e.link_next].link_prev = e.link_prev;
  e.link_prev = e.link_next = none;
}

// ---- extent ids and neighbours ---------------------------------------------------------------

void segment_heap::add_spare(std::size_t n) {
  while (free_ids_.size() < n) {
    const std::size_t want = extents_.size() + 1;
    if (want > head_of_bin) throw std::length_error("cudapool: segment_heap: too many extents");
    free_ids_.reserve(std::max(want, free_ids_.capacity()));
    pending_.reserve(std::max(want, pending_.capacity()));
    resolved_.reserve(std::max(want, resolved_.capacity()));
    extents_.emplace_back();
    requested_.push_back(0);
    free_ids_.push_back(static_cast<std::uint32_t>(extents_.size() - 1));
  }
}

inline std::uint32_t segment_heap::new_extent() noexcept {
  const std::uint32_t id = free_ids_.back();
  free_ids_.pop_back();
  const bool in_pending = extents_[id].in_pending;
  extents_[id] = extent{};
  extents_[id].in_pending = in_pending;
  return id;
}

inline void segment_heap::recycle(std::uint32_t id) noexcept {
  extents_[id].st = state::dead;
  free_ids_.push_back(id);  // capacity >= extents_.size()
}

// id keeps [lo, hi); what lies before and after it becomes new neighbours with id's tag (none when
// empty), for the caller to bin. Needs ensure_spare(2).
inline std::pair<std::uint32_t, std::uint32_t> segment_heap::carve(std::uint32_t id, std::uintptr_t lo, std::uintptr_t hi) noexcept {
  auto beside = [&](bool after, std::uintptr_t from, std::uintptr_t to) {
    // Built in place: new_extent()'s zero fill wrote the 64 bytes that the lines below rewrite. A
    // spare id's extent is dead; the caller's insert_free or insert_unmapped links it.
    const std::uint32_t n = free_ids_.back();
    free_ids_.pop_back();
    extent& a = extents_[id];
    extent& e = extents_[n];
    e.what = kind::large;
    e.base = from;
    e.bytes = to - from;
    e.tag = a.tag;
    e.segment = a.segment;
    std::uint32_t& near = after ? a.next : a.prev;
    (after ? e.prev : e.next) = id;
    (after ? e.next : e.prev) = near;
    if (near != none) (after ? extents_[near].prev : extents_[near].next) = n;
    near = n;
    return n;
  };
  const std::uintptr_t base = extents_[id].base;
  const std::uintptr_t end = extents_[id].end();
  const std::uint32_t front = base < lo ? beside(false, base, lo) : none;
  const std::uint32_t back = hi < end ? beside(true, hi, end) : none;
  extents_[id].base = lo;
  extents_[id].bytes = hi - lo;
  return {front, back};
}

inline void segment_heap::unlink(std::uint32_t id) noexcept {
  extent& e = extents_[id];
  if (e.prev != none) extents_[e.prev].next = e.next;
  if (e.next != none) extents_[e.next].prev = e.prev;
}

// Merges free extent id (not in a bin) with the free neighbours whose tags allow it, and bins it.
// Two resolved ranges merge; two ranges pending on one stream merge under the later epoch (epochs
// of a stream complete in order); ranges pending on two streams stay apart. A resolved range and
// a pending one merge (under the pending tag) only while one stream has ever freed into the heap:
// then the only other user is slab growth, and one extent per hole serves that stream best. Once
// frees come from a second stream they stay apart: merged, the resolved range would wait for the
// neighbour's epoch, and on a 64-thread, 16-stream soak memory that waited so grew with the run
// (19 GiB mapped for 1 GiB live after 5 minutes). A stream still gets the union of its own and
// resolved neighbours: place() and grow() take runs of neighbours (find_run, run_around).
// With `only` (grow: the new range is for `only`'s request), only neighbours it may take merge.
inline std::uint32_t segment_heap::coalesce(std::uint32_t id, const stream_use* only) noexcept {
  // The side a template argument: looped over {true, false} (an initializer_list), the side was a
  // variable in memory, tested on every step (about 15 instructions per free, sim, callgrind, s48).
  merge_side<true>(id, only);
  merge_side<false>(id, only);
  insert_free(id);
  return id;
}

// coalesce() on one side: while the next neighbour merges (a neighbour merged in may border another
// whose epoch completed since: both resolved, not yet merged, resolve_completed has not run).
template <bool left>
inline void segment_heap::merge_side(std::uint32_t id, const stream_use* only) noexcept {
  for (;;) {
    const std::uint32_t n = left ? extents_[id].prev : extents_[id].next;
    if (n == none || extents_[n].st != state::free) break;
    stream_tag t;
    if ((only != nullptr && !safe_for(extents_[n].tag, *only)) ||
        !merge_tags(extents_[id].tag, extents_[n].tag, /*absorb_resolved=*/!multi_stream_.load(std::memory_order_relaxed), &t)) {
      runs_possible_ = true;  // two free neighbours stay apart: a run
      break;
    }
    remove_free(n);
    extent& e = extents_[id];
    if (left) e.base = extents_[n].base;
    e.bytes += extents_[n].bytes;
    e.tag = t;
    unlink(n);
    recycle(n);
  }
}

std::uint32_t segment_heap::merge_unmapped(std::uint32_t id) noexcept {
  for (const bool left : {true, false}) {
    const std::uint32_t n = left ? extents_[id].prev : extents_[id].next;
    if (n == none || extents_[n].st != state::unmapped) continue;
    remove_unmapped(n);
    extent& e = extents_[id];
    if (left) e.base = extents_[n].base;
    e.bytes += extents_[n].bytes;
    unlink(n);
    recycle(n);
  }
  insert_unmapped(id);
  return id;
}

// Free extents whose epoch completed lose their tag and merge with their neighbours.
// Keeps in pending_ (in order) the free extents for which keep(tag) holds; the others leave it
// (insert_free lists them again once they are tagged free extents), and go into *dropped if given.
// Every stale entry leaves too, so stale_seen_ starts again.
template <class Keep>
void segment_heap::prune_pending(Keep keep, std::vector<std::uint32_t>* dropped) noexcept {
  std::size_t kept = 0;
  for (const std::uint32_t id : pending_) {
    extent& e = extents_[id];
    if (e.st == state::free && keep(e.tag)) {
      pending_[kept++] = id;
    } else {
      e.in_pending = false;
      if (dropped != nullptr) dropped->push_back(id);  // capacity >= extents_.size()
    }
  }
  pending_.resize(kept);
  pending_count_.store(kept, std::memory_order_relaxed);
  stale_seen_ = 0;
  stale_pending_ = 0;  // every stale entry left
}

void segment_heap::resolve_completed() noexcept {
  resolved_.clear();
  prune_pending([](const stream_tag& t) { return !t.resolved(); }, &resolved_);
  for (const std::uint32_t id : resolved_) {
    // Still free and tagged (an earlier merge of this loop may have absorbed it); resolved now.
    if (extents_[id].st != state::free || extents_[id].tag.completed == nullptr) continue;
    extents_[id].tag = {};
    remove_free(id);
    coalesce(id);  // may tag it again from a pending neighbour, and list it in pending_
  }
  pending_count_.store(pending_.size(), std::memory_order_relaxed);
}

void segment_heap::drop_stale_pending() noexcept {
  prune_pending([](const stream_tag& t) { return t.completed != nullptr; }, nullptr);
}

inline bool segment_heap::resolve_new_completions() noexcept {
  // A tag resolves only when its stream's completed counter passes its epoch, and pool_core's
  // reclaim counts every such advance (note_completion) after it: no new count, nothing new to
  // merge. A look at every miss of the holes walked pending_ on every allocation that went to the
  // wilderness.
  if (pending_.empty()) return false;
  const std::uint64_t c = completions_.load(std::memory_order_relaxed);
  if (c == completions_seen_) return false;
  completions_seen_ = c;
  resolve_completed();
  return true;
}

void segment_heap::count_mapped(std::size_t bytes) noexcept {
  const std::size_t now = mapped_.load(std::memory_order_relaxed) + bytes;
  mapped_.store(now, std::memory_order_relaxed);
  if (now > peak_mapped_.load(std::memory_order_relaxed)) peak_mapped_.store(now, std::memory_order_relaxed);
}

// ---- allocate --------------------------------------------------------------------------------

void* segment_heap::allocate(std::size_t bytes, std::size_t alignment, kind k, stream_use use, bool may_grow,
                             const void** behind, bool* wait_own) {
  if (bytes == 0 || bytes > (std::size_t{1} << 47) || !power_of_two(alignment)) return nullptr;
  const std::size_t size = round_up(bytes, granule);
  alignment = std::max(alignment, granule);
  std::lock_guard lock(mutex_);
  // Wilderness last (dlmalloc's rule): a free range at the top of the mapped pages serves only
  // what fits no hole below it, so that it stays whole for the next large request instead of
  // being carved by small ones while holes stay empty. On the CNN trace with a batch drawn per
  // step, best fit without this rule reserved 1.31x the live peak, with it 1.05x.
  // Several streams: ranges whose epochs completed since the last look merge first, so that holes
  // are whole.
  if (multi_stream_.load(std::memory_order_relaxed)) (void)resolve_new_completions();
  // Stale entries of pending_ that the walks of find_run met: dropped once they outnumber a walk's
  // worth (O(pending_) each time, so amortised over at least as many stale reads).
  if (stale_seen_ > 64 && stale_seen_ > pending_.size()) drop_stale_pending();
  // Holes first (again once ranges whose epochs completed merged), then the wilderness (not with
  // chunks). One call of place(), inlined: as three calls, their prologues, epilogues and arguments
  // cost about 45 instructions per large allocation (mlp_4stream's replay, sim, callgrind, s48).
  std::size_t hole = 0;  // of the range found
  const unsigned bin = bin_of(size);  // once: gcc computed it again in each pass of the loop
  run r;
  bool wilderness = false;
  for (bool resolved = false;;) {
    r = place(size, bin, alignment, use, wilderness, &hole);
    if (r.first != none || wilderness) break;
    if (!resolved) {
      resolved = true;
      if (resolve_new_completions()) continue;
    }
    if (page_ == 0) break;
    wilderness = true;
  }
  // One stream alone has freed into the heap: nothing waits behind another stream's epoch (and the
  // scan of pending_ below cost a single-stream replay of lm_train 1.3-1.6x its time per operation
  // on the H200, docs/results/2026-12-02-h200-s10 call d). Only for a range in a hole (below the
  // wilderness).
  if (behind != nullptr && r.first != none && !wilderness && multi_stream_.load(std::memory_order_relaxed)) {
    // Eight times: each named stream costs the caller an event (1.7 us on an H200 before s32's
    // backend fix, 0.5 since). On mlp_4stream twice gave 1.028x the live peak for 1.5x the events,
    // eight times 1.04-1.07x for 1.1-1.25x.
    if (hole >= 8 * size) {
      *behind = tighter_behind_epoch(size, alignment, use, hole);
      if (*behind != nullptr) return nullptr;
    }
  }
  if (r.first == none && may_grow && config_.allow_growth) {
    if (page_ != 0) {
      r = grow(size, alignment, use, wait_own);
    } else {
      r.first = r.last = grow_chunk(size, alignment);
    }
  }
  if (r.first == none) return nullptr;
  return take(r, size, alignment, k, bytes);
}

// Where a request goes: into the smallest hole that holds it, as one free extent or as a run of
// neighbours that `use` may all take (ranges of its stream beside resolved ones, which free()
// keeps apart), cut from the start of what `use` may take of the hole (one remnant, not two).
inline segment_heap::run segment_heap::place(std::size_t bytes, unsigned bin, std::size_t alignment, stream_use use,
                                             bool wilderness, std::size_t* hole) const noexcept {
  const fit f = find_fit(bytes, bin, alignment, use, wilderness);
  *hole = f.hole;
  run r = f.id != none ? run_around(f.id, use) : run{none, none};
  // Runs of neighbours only where no free extent fits. With several streams a run in a smaller hole
  // than the extent's could win, but looking for one walks pending_ on every placement. Without
  // that walk the sim's mlp_4stream replay (events elided) took 0.79-0.89x the time per operation
  // in 12 of 12 alternating processes (transformer_lm_train, which never walks it, 0.97-1.05x),
  // and reserved 1.047x its live peak for mutex, lockfree and tls as before, 1.060x for stream
  // (1.047-1.057x before; the H100 gave the same, docs/results/2026-12-06-h100-s37, call F).
  if (r.first == none && !pending_.empty()) {
    if (multi_stream_.load(std::memory_order_relaxed) || runs_possible_) {
      r = find_run(bytes, alignment, use, wilderness, hole);
    } else {
      stale_seen_ += stale_pending_;  // one stream, no run anywhere (runs_possible_): what the walk counts
    }
  }
  return r;
}

const void* segment_heap::tighter_behind_epoch(std::size_t bytes, std::size_t alignment, stream_use use,
                                               std::size_t hole) const noexcept {
  const void* best = nullptr;
  for (const std::uint32_t id : pending_) {
    const extent& e = extents_[id];
    if (e.st != state::free || safe_for(e.tag, use)) continue;
    if (align_up(e.base, alignment) + bytes > e.end()) continue;
    if (e.next != none && extents_[e.next].st == state::unmapped) continue;  // the wilderness
    if (const std::size_t h = hole_bytes(id); h < hole) {
      hole = h;
      best = e.tag.stream;
    }
  }
  return best;
}

// The smallest run of two or more neighbouring free extents, all of which `use` may take, that
// holds an aligned range of `bytes`: {none, none} if there is none. Every such run holds a tagged
// extent (two untagged neighbours are always merged), so the runs grow from pending_'s extents.
segment_heap::run segment_heap::find_run(std::size_t bytes, std::size_t alignment, stream_use use,
                                         bool wilderness, std::size_t* hole) const noexcept {
  run best{none, none};
  std::size_t best_bytes = 0;
  bool neighbours = false;  // a pending free extent with a free neighbour was met
  for (const std::uint32_t id : pending_) {
    const extent& e = extents_[id];
    if (e.st != state::free) {
      ++stale_seen_;
      continue;
    }
    // A run needs a free neighbour: most pending extents have none (one stream's frees merge), and
    // this test reads only what the state test did, not the neighbours' tags.
    if ((e.prev == none || extents_[e.prev].st != state::free) && (e.next == none || extents_[e.next].st != state::free)) continue;
    neighbours = true;
    if (!safe_for(e.tag, use)) continue;
    const auto [first, last] = run_around(id, use);
    if (first != id && pending_tagged_left_of(first, id)) continue;  // seen from its first tagged extent
    if (first == last) continue;
    if (!wilderness && extents_[last].next != none && extents_[extents_[last].next].st == state::unmapped) continue;
    const std::uintptr_t lo = extents_[first].base;
    const std::uintptr_t hi = extents_[last].end();
    if (align_up(lo, alignment) + bytes > hi) continue;
    const std::size_t h = hole_bytes(first);
    if (best.first == none || h < best_bytes) {
      best = {first, last};
      best_bytes = h;
    }
  }
  // Every run holds a pending extent (free neighbours with nothing pending always merge): with none
  // beside a free neighbour there is no run.
  if (!neighbours) runs_possible_ = false;
  if (best.first != none) *hole = best_bytes;
  return best;
}

// Whether a tagged extent lies in [first, id) (walking right from first): the run starting at first
// was then already considered from that extent.
bool segment_heap::pending_tagged_left_of(std::uint32_t first, std::uint32_t id) const noexcept {
  for (std::uint32_t n = first; n != id; n = extents_[n].next) {
    if (extents_[n].tag.completed != nullptr) return true;
  }
  return false;
}

// Cuts [round_up(base, alignment), + bytes) out of the free extents r.first .. r.last (neighbours;
// one extent when equal). What is left before the range keeps its extent's tag, what is left after
// it keeps its own.
inline void* segment_heap::take(run r, std::size_t bytes, std::size_t alignment, kind k, std::size_t requested) {
  ensure_spare(2);
  index_.reserve_one();
  const std::uintptr_t start = align_up(extents_[r.first].base, alignment);
  const std::uintptr_t end = start + bytes;
  // Only the extents the range touches.
  while (extents_[r.first].end() <= start) r.first = extents_[r.first].next;
  while (extents_[r.last].base >= end) r.last = extents_[r.last].prev;
  const stream_tag back_tag = extents_[r.last].tag;
  remove_free(r.first);
  for (std::uint32_t n = r.first; n != r.last;) {
    n = extents_[n].next;
    remove_free(n);
    extents_[r.first].bytes += extents_[n].bytes;
    unlink(n);
    recycle(n);
  }
  const std::uint32_t id = r.first;
  const auto [front, back] = carve(id, start, end);
  if (front != none) insert_free(front);
  if (back != none) {
    extents_[back].tag = back_tag;
    insert_free(back);
  }
  extent& me = extents_[id];
  me.st = state::used;
  me.what = k;
  requested_[id] = requested;
  me.tag = {};
  index_.insert(me.base, id);
  peak_used_ = std::max(peak_used_, mapped_.load(std::memory_order_relaxed) - free_bytes_);
  if (k == kind::large) large_used_.store(large_used_.load(std::memory_order_relaxed) + me.bytes, std::memory_order_relaxed);
  return reinterpret_cast<void*>(me.base);
}

std::uint32_t segment_heap::add_segment(std::uintptr_t base, std::size_t bytes, bool vm, state initial) {
  ensure_spare(1);
  segments_.reserve(segments_.size() + 1);
  const std::uint32_t id = new_extent();
  extent& e = extents_[id];
  e.base = base;
  e.bytes = bytes;
  e.segment = static_cast<std::uint32_t>(segments_.size());
  segments_.push_back({base, bytes, vm, base});
  if (initial == state::unmapped) {
    insert_unmapped(id);
  } else {
    insert_free(id);
  }
  return id;
}

// Virtual memory: maps the fewest pages that make a free range of `bytes` at `alignment`, next to
// a free neighbour the caller may use where there is one, and returns that range (free, binned).
segment_heap::run segment_heap::grow(std::size_t bytes, std::size_t alignment, stream_use use, bool* wait_own) {
  struct candidate {
    std::uint32_t unmapped = none;
    std::uintptr_t lo = 0, hi = 0;  // the pages to map
    std::uintptr_t start = 0;
    std::uintptr_t run_lo = 0, run_hi = 0;  // the free neighbours and pages the range is cut from
  } best;
  auto consider = [&](std::uint32_t u) {
    const extent& U = extents_[u];
    const run around = run_around(u, use);
    const std::uintptr_t from = extents_[around.first].base;
    // Where the range lies: from the start of the free neighbours below u that the caller may take,
    // extending them; with none, up against those above u, extending those; with neither, at u's
    // bottom, unless the free range just below u is one the caller may not take (pending behind a
    // stream's epoch: a slab takes no pending range, another stream none of this one's). That range
    // stays beside the unmapped pages, so that once it is free for all it can grow into them, and
    // the caller's pages come from u's top end. Cut from u's bottom, a slab mapped while a step's
    // frees were pending walled the range off, and the next large request mapped all of its bytes
    // above the wall: lm_infer_varseq alone, its GPU trace with the device never caught up,
    // reserved 1.49x its live peak (the GPU process 1.31x) against 1.07x with every event complete.
    std::uintptr_t start = align_up(from, alignment);
    const bool below_free = U.prev != none && extents_[U.prev].st == state::free;
    if (around.first == u && (around.last != u || below_free)) {
      const std::uintptr_t top = extents_[around.last].end();
      if (top - U.base < bytes) return;
      start = round_down(top - bytes, alignment);
      if (start < U.base) return;
    }
    const std::uintptr_t end = start + bytes;
    if (end > extents_[around.last].end()) return;
    const std::uintptr_t lo = std::max(U.base, round_down(start, page_));
    const std::uintptr_t hi = std::min(round_up(end, page_), U.end());
    if (lo >= hi) return;  // free neighbours alone would do: find_fit saw them as unsafe or short
    if (best.unmapped == none || hi - lo < best.hi - best.lo || (hi - lo == best.hi - best.lo && start < best.start)) {
      best = {u, lo, hi, start, from, extents_[around.last].end()};
    }
  };
  if (config_.byte_limit != 0 && mapped_.load(std::memory_order_relaxed) + round_up(bytes, page_) > config_.byte_limit + page_) {
    return {none, none};  // no placement can stay under the limit
  }
  for (std::uint32_t u = unmapped_head_; u != none; u = extents_[u].link_next) consider(u);
  if (best.unmapped == none) {
    // A new reservation: twice the device's memory (or the byte limit), at least the request.
    const std::size_t base_bytes = config_.reservation_bytes != 0 ? config_.reservation_bytes
                                   : config_.byte_limit != 0      ? 2 * config_.byte_limit
                                                                  : 2 * device_.memory_bytes();
    const std::size_t want = round_up(std::max(base_bytes, bytes + alignment), page_);
    const std::size_t align = std::max(page_, std::bit_floor(std::min(alignment, want)));
    if (bytes > device_.memory_bytes()) return {none, none};  // no device has it: not worth an address range
    void* base = nullptr;
    try {
      base = device_.reserve_address(want, align);
    } catch (const backend_error&) {
      return {none, none};  // out of address space: out of memory to the caller
    }
    try {
      consider(add_segment(reinterpret_cast<std::uintptr_t>(base), want, true, state::unmapped));
    } catch (...) {
      device_.release_address(base, want);
      throw;
    }
    if (best.unmapped == none) return {none, none};
  }
  const std::size_t map_bytes = best.hi - best.lo;
  const std::size_t mapped = mapped_.load(std::memory_order_relaxed);
  if (config_.byte_limit != 0 && mapped + map_bytes > config_.byte_limit) return {none, none};
  // Against the current use, this request included.
  if (config_.remap_ratio > 0.0 &&
      static_cast<double>(mapped + map_bytes) > config_.remap_ratio * static_cast<double>(mapped - free_bytes_ + bytes)) {
    if (wait_own != nullptr && use.given && remap_would_wait(map_bytes, best.run_lo, best.run_hi, use)) {
      ++remap_waits_;
      *wait_own = true;
      return {none, none};
    }
    unmap_elsewhere(map_bytes, best.run_lo, best.run_hi);
  }
  ensure_spare(2);
  if (!device_.map(reinterpret_cast<void*>(best.lo), map_bytes)) return {none, none};
  ++maps_;
  count_mapped(map_bytes);
  // The unmapped extent: [base, lo) and [hi, end) stay unmapped, [lo, hi) is free now.
  const std::uint32_t u = best.unmapped;
  remove_unmapped(u);
  const auto [front, back] = carve(u, best.lo, best.hi);
  if (front != none) insert_unmapped(front);
  if (back != none) insert_unmapped(back);
  extents_[u].tag = {};
  // Merged only with neighbours the caller may use (a pending one would lend it its tag), then
  // with the run of them: the range is for the caller.
  return run_around(coalesce(u, &use), use);
}

// The free extent id (which `use` may take) with the neighbours on either side that `use` may take
// too. For an unmapped id: its free neighbours that `use` may take (id itself where there are none).
inline segment_heap::run segment_heap::run_around(std::uint32_t id, stream_use use) const noexcept {
  auto usable = [&](std::uint32_t n) { return n != none && extents_[n].st == state::free && safe_for(extents_[n].tag, use); };
  run r{id, id};
  while (usable(extents_[r.first].prev)) r.first = extents_[r.first].prev;
  while (usable(extents_[r.last].next)) r.last = extents_[r.last].next;
  return r;
}

// Without virtual memory: one chunk of at least `bytes` at `alignment`, in multiples of chunk_bytes.
std::uint32_t segment_heap::grow_chunk(std::size_t bytes, std::size_t alignment) {
  std::size_t chunk = round_up(bytes, config_.chunk_bytes);
  auto within_limit = [&](std::size_t n) {
    return config_.byte_limit == 0 || mapped_.load(std::memory_order_relaxed) + n <= config_.byte_limit;
  };
  if (!within_limit(chunk)) return none;
  void* p = device_.allocate_chunk(chunk);
  if (p != nullptr && align_up(reinterpret_cast<std::uintptr_t>(p), alignment) + bytes > reinterpret_cast<std::uintptr_t>(p) + chunk) {
    device_.free_chunk(p, chunk);  // misaligned for this request: take room for the alignment
    chunk = round_up(bytes + alignment, config_.chunk_bytes);
    p = within_limit(chunk) ? device_.allocate_chunk(chunk) : nullptr;
  }
  if (p == nullptr) return none;
  std::uint32_t id = none;
  try {
    id = add_segment(reinterpret_cast<std::uintptr_t>(p), chunk, false, state::free);
  } catch (...) {
    device_.free_chunk(p, chunk);
    throw;
  }
  ++maps_;
  count_mapped(chunk);
  return id;
}

// ---- free ------------------------------------------------------------------------------------

segment_heap::free_result segment_heap::free(const void* p, kind k, const stream_tag& tag, std::size_t* requested) noexcept {
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard lock(mutex_);
  // Found and erased in one probe; a used extent of the other kind stays (a caller's error, reported).
  const std::uint32_t id = index_.take_unless(addr, [&](std::uint32_t i) { return extents_[i].what != k; });
  if (id == none || extents_[id].what != k) {
    for (const extent& e : extents_) {  // rare: what is it?
      if (e.st == state::dead || addr < e.base || addr >= e.end()) continue;
      if (e.st == state::used) return e.base == addr ? free_result::foreign : free_result::interior;
      return free_result::double_free;  // freed (and maybe merged or unmapped since)
    }
    return free_result::foreign;
  }
  extent& e = extents_[id];
  if (k == kind::large) large_used_.store(large_used_.load(std::memory_order_relaxed) - e.bytes, std::memory_order_relaxed);
  if (requested != nullptr) *requested = requested_[id];
  e.tag = tag.resolved() ? stream_tag{} : tag;
  if (e.tag.completed != nullptr && e.tag.completed != first_stream_) {
    if (first_stream_ == nullptr) {
      first_stream_ = e.tag.completed;
    } else {
      multi_stream_.store(true, std::memory_order_relaxed);
    }
  }
  requested_[id] = 0;
  coalesce(id);
  return free_result::freed;
}

void segment_heap::forget_stream(const void* stream) noexcept {
  std::lock_guard lock(mutex_);
  for (const std::uint32_t id : pending_) {
    extent& e = extents_[id];
    if (e.st == state::free && e.tag.stream == stream) e.tag.same_stream = false;
  }
}

// ---- trim ------------------------------------------------------------------------------------

// The whole pages inside free extent e that trim may unmap: none if it is pending or pinned.
std::pair<std::uintptr_t, std::uintptr_t> segment_heap::unmappable_range(const extent& e) const noexcept {
  if (!e.tag.resolved()) return {0, 0};
  return whole_pages(e);
}

std::pair<std::uintptr_t, std::uintptr_t> segment_heap::whole_pages(const extent& e) const noexcept {
  const segment& seg = segments_[e.segment];
  if (!seg.vm) {
    const bool whole = e.base == seg.base && e.bytes == seg.bytes && seg.pinned_end == seg.base;
    return whole ? std::pair{e.base, e.end()} : std::pair<std::uintptr_t, std::uintptr_t>{0, 0};
  }
  const std::uintptr_t lo = std::max(round_up(e.base, page_), seg.pinned_end);
  const std::uintptr_t hi = round_down(e.end(), page_);
  return lo < hi ? std::pair{lo, hi} : std::pair<std::uintptr_t, std::uintptr_t>{0, 0};
}

std::size_t segment_heap::trim() {
  std::lock_guard lock(mutex_);
  resolve_completed();
  std::vector<std::uint32_t> candidates;
  for (std::uint32_t b = 0; b < bin_count; ++b) {
    for (std::uint32_t id = bins_[b]; id != none; id = extents_[id].link_next) {
      const auto [lo, hi] = unmappable_range(extents_[id]);
      if (lo < hi) candidates.push_back(id);
    }
  }
  std::size_t released = 0;
  for (const std::uint32_t id : candidates) {
    const auto [lo, hi] = unmappable_range(extents_[id]);
    released += hi - lo;
    segment& seg = segments_[extents_[id].segment];
    if (seg.vm) {
      unmap_range(id, lo, hi);
      continue;
    }
    remove_free(id);
    device_.free_chunk(reinterpret_cast<void*>(seg.base), seg.bytes);
    seg.bytes = 0;
    recycle(id);
    ++unmaps_;
    unmapped_bytes_ += hi - lo;
    mapped_.store(mapped_.load(std::memory_order_relaxed) - (hi - lo), std::memory_order_relaxed);
  }
  return released;
}

// Unmaps [lo, hi) (whole pages) of free extent id: [base, lo) and [hi, end) stay free.
void segment_heap::unmap_range(std::uint32_t id, std::uintptr_t lo, std::uintptr_t hi) {
  ensure_spare(2);
  remove_free(id);
  device_.unmap(reinterpret_cast<void*>(lo), hi - lo);
  const auto [front, back] = carve(id, lo, hi);
  if (front != none) insert_free(front);
  if (back != none) insert_free(back);
  merge_unmapped(id);
  ++unmaps_;
  unmapped_bytes_ += hi - lo;
  mapped_.store(mapped_.load(std::memory_order_relaxed) - (hi - lo), std::memory_order_relaxed);
}

// remap_ratio: up to `bytes` of whole free pages, from the largest free ranges first, none inside
// [keep_lo, keep_hi): the run of free neighbours that growth is about to extend, all of which the
// new range may span (not only the two extents beside the pages it maps).
void segment_heap::unmap_elsewhere(std::size_t bytes, std::uintptr_t keep_lo, std::uintptr_t keep_hi) {
  std::vector<std::uint32_t> candidates;
  for (std::uint32_t b = bin_count; b-- > 0 && candidates.size() < 64;) {
    for (std::uint32_t id = bins_[b]; id != none; id = extents_[id].link_next) {
      const extent& e = extents_[id];
      const auto [lo, hi] = unmappable_range(e);
      if (lo < hi && (e.end() <= keep_lo || e.base >= keep_hi)) candidates.push_back(id);
    }
  }
  for (const std::uint32_t id : candidates) {
    if (bytes == 0) break;
    auto [lo, hi] = unmappable_range(extents_[id]);
    hi = std::min<std::uintptr_t>(hi, lo + bytes);
    unmap_range(id, lo, hi);
    bytes -= hi - lo;
  }
}

bool segment_heap::remap_would_wait(std::size_t bytes, std::uintptr_t keep_lo, std::uintptr_t keep_hi,
                                    stream_use use) const noexcept {
  std::size_t now = 0;
  bool own = false;
  for (std::uint32_t b = bin_count; b-- > 0 && now < bytes;) {
    for (std::uint32_t id = bins_[b]; id != none && now < bytes; id = extents_[id].link_next) {
      const extent& e = extents_[id];
      if (e.end() > keep_lo && e.base < keep_hi) continue;
      const auto [lo, hi] = whole_pages(e);
      if (lo >= hi) continue;
      if (e.tag.resolved()) {
        now += hi - lo;
      } else if (e.tag.stream == use.stream) {
        own = true;
      }
    }
  }
  return now < bytes && own;
}

// ---- reports ---------------------------------------------------------------------------------

segment_heap::info segment_heap::describe(const void* p) const {
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard lock(mutex_);
  for (const extent& e : extents_) {
    if ((e.st != state::used && e.st != state::free) || addr < e.base || addr >= e.end()) continue;
    info i;
    i.found = true;
    i.used = e.st == state::used;
    i.what = e.what;
    i.base = e.base;
    i.bytes = e.bytes;
    i.requested = requested_of(e);
    i.pending = e.st == state::free && !e.tag.resolved();
    if (i.pending) i.pending_stream = e.tag.stream;
    return i;
  }
  return {};
}

heap_stats segment_heap::stats() const {
  std::lock_guard lock(mutex_);
  heap_stats s;
  s.virtual_memory = page_ != 0;
  s.page_bytes = page_;
  s.mapped_bytes = mapped_.load(std::memory_order_relaxed);
  s.peak_mapped_bytes = peak_mapped_.load(std::memory_order_relaxed);
  for (const segment& seg : segments_) {
    if (seg.bytes == 0) continue;
    ++s.segments;
    s.address_bytes += seg.bytes;
  }
  for (const extent& e : extents_) {
    if (e.st == state::used) {
      (e.what == kind::slab ? s.slab_bytes : s.large_bytes) += e.bytes;
      if (e.what == kind::large) ++s.large_count;
    } else if (e.st == state::free) {
      s.free_bytes += e.bytes;
      ++s.free_extents;
      s.largest_free_bytes = std::max(s.largest_free_bytes, e.bytes);
      if (!e.tag.resolved()) s.pending_bytes += e.bytes;
      const auto [lo, hi] = unmappable_range(e);
      s.unmappable_bytes += hi - lo;
    }
  }
  s.fragmentation = s.free_bytes == 0 ? 0.0 : 1.0 - static_cast<double>(s.largest_free_bytes) / static_cast<double>(s.free_bytes);
  s.maps = maps_;
  s.unmaps = unmaps_;
  s.remap_waits = remap_waits_;
  s.unmapped_bytes = unmapped_bytes_;
  s.peak_used_bytes = peak_used_;
  return s;
}

std::vector<std::pair<const void*, std::size_t>> segment_heap::pending_by_stream() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<const void*, std::size_t>> out;
  for (const std::uint32_t id : pending_) {
    const extent& e = extents_[id];
    if (e.st != state::free || e.tag.resolved()) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& x) { return x.first == e.tag.stream; });
    if (it == out.end()) {
      out.emplace_back(e.tag.stream, e.bytes);
    } else {
      it->second += e.bytes;
    }
  }
  return out;
}

std::vector<std::pair<void*, std::size_t>> segment_heap::live_large(std::size_t max, std::size_t* count,
                                                                    std::size_t* bytes) const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<void*, std::size_t>> out;
  *count = 0;
  *bytes = 0;
  for (const extent& e : extents_) {
    if (e.st != state::used || e.what != kind::large) continue;
    ++*count;
    *bytes += e.bytes;
    if (out.size() < max) out.emplace_back(reinterpret_cast<void*>(e.base), requested_of(e));
  }
  return out;
}

}  // namespace cudapool::core
