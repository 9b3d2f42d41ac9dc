#include <cudapool/stream_arenas.hpp>

#include <algorithm>
#include <cstdlib>

namespace cudapool::detail {

namespace {

void add(class_stats& t, const class_stats& p) {
  t.capacity_blocks += p.capacity_blocks;
  t.free_blocks += p.free_blocks;
  t.cached_blocks += p.cached_blocks;
  t.pending_blocks += p.pending_blocks;
  t.in_use_blocks += p.in_use_blocks;
  t.allocs += p.allocs;
  t.frees += p.frees;
  t.slabs += p.slabs;
}

void add(heap_stats& t, const heap_stats& p) {
  t.mapped_bytes += p.mapped_bytes;
  t.peak_mapped_bytes += p.peak_mapped_bytes;
  t.address_bytes += p.address_bytes;
  t.segments += p.segments;
  t.slab_bytes += p.slab_bytes;
  t.large_bytes += p.large_bytes;
  t.large_count += p.large_count;
  t.free_bytes += p.free_bytes;
  t.free_extents += p.free_extents;
  t.largest_free_bytes = std::max(t.largest_free_bytes, p.largest_free_bytes);
  t.fragmentation = t.free_bytes != 0 ? 1.0 - static_cast<double>(t.largest_free_bytes) / static_cast<double>(t.free_bytes) : 0.0;
  t.pending_bytes += p.pending_bytes;
  t.unmappable_bytes += p.unmappable_bytes;
  t.maps += p.maps;
  t.unmaps += p.unmaps;
  t.unmapped_bytes += p.unmapped_bytes;
  t.remap_waits += p.remap_waits;
  t.peak_used_bytes += p.peak_used_bytes;
}

}  // namespace

void add_arena_stats(pool_stats& total, const pool_stats& part) {
  if (total.classes.size() < part.classes.size()) total.classes.resize(part.classes.size());
  for (std::size_t c = 0; c < part.classes.size(); ++c) {
    total.classes[c].block_bytes = part.classes[c].block_bytes;
    add(total.classes[c], part.classes[c]);
  }
  total.reserved_bytes += part.reserved_bytes;
  total.in_use_bytes += part.in_use_bytes;
  total.requested_bytes += part.requested_bytes;
  total.free_bytes += part.free_bytes;
  total.cached_bytes += part.cached_bytes;
  total.pending_bytes += part.pending_bytes;
  total.peak_reserved_bytes += part.peak_reserved_bytes;
  total.peak_in_use_bytes += part.peak_in_use_bytes;
  total.peak_requested_bytes += part.peak_requested_bytes;
  add(total.heap, part.heap);
  total.allocs += part.allocs;
  total.frees += part.frees;
  total.grows += part.grows;
  total.trims += part.trims;
  total.ooms += part.ooms;
  total.invalid_frees += part.invalid_frees;
  total.events_recorded += part.events_recorded;
  total.epochs_closed_full += part.epochs_closed_full;
  total.epochs_closed_bytes += part.epochs_closed_bytes;
  total.epochs_closed_slow_path += part.epochs_closed_slow_path;
  total.epochs_closed_other += part.epochs_closed_other;
  total.stream_waits += part.stream_waits;
  total.stream_queries += part.stream_queries;
  total.epochs_reclaimed += part.epochs_reclaimed;
  total.pending_epochs += part.pending_epochs;
}

bool arenas_possible(const pool_options& o, const backend& device) noexcept {
  const debug_options& d = o.debug;
  const bool debugging = d.sanitizer_regions || d.guard_bytes != 0 || d.record_stacks || !d.trace_path.empty();
  const char* trace = std::getenv("CUDAPOOL_TRACE");
  const bool tracing = d.trace_from_environment && trace != nullptr && *trace != '\0';
  return o.stream_arenas != 0 && o.virtual_memory && o.allow_growth && device.page_bytes() != 0 && !debugging && !tracing;
}

}  // namespace cudapool::detail
