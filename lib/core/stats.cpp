#include <cudapool/stats.hpp>

#include <cudapool/detail/core/json.hpp>

namespace cudapool {

namespace detail {

json to_json_value(const pool_stats& s) {
  json o;
  o["variant"] = s.variant;
  o["backend"] = s.backend;
  o["reserved_bytes"] = s.reserved_bytes;
  o["in_use_bytes"] = s.in_use_bytes;
  o["requested_bytes"] = s.requested_bytes;
  o["free_bytes"] = s.free_bytes;
  o["cached_bytes"] = s.cached_bytes;
  o["pending_bytes"] = s.pending_bytes;
  o["peak_reserved_bytes"] = s.peak_reserved_bytes;
  o["peak_in_use_bytes"] = s.peak_in_use_bytes;
  o["peak_requested_bytes"] = s.peak_requested_bytes;
  o["allocs"] = s.allocs;
  o["frees"] = s.frees;
  o["grows"] = s.grows;
  o["trims"] = s.trims;
  o["ooms"] = s.ooms;
  o["invalid_frees"] = s.invalid_frees;
  o["events_recorded"] = s.events_recorded;
  o["epochs_closed"] = {{"full", s.epochs_closed_full}, {"bytes", s.epochs_closed_bytes},
                        {"slow_path", s.epochs_closed_slow_path}, {"other", s.epochs_closed_other}};
  o["epochs_reclaimed"] = s.epochs_reclaimed;
  o["stream_waits"] = s.stream_waits;
  o["stream_queries"] = s.stream_queries;
  o["pending_epochs"] = s.pending_epochs;
  const heap_stats& h = s.heap;
  json heap;
  heap["virtual_memory"] = h.virtual_memory;
  heap["page_bytes"] = h.page_bytes;
  heap["mapped_bytes"] = h.mapped_bytes;
  heap["peak_mapped_bytes"] = h.peak_mapped_bytes;
  heap["address_bytes"] = h.address_bytes;
  heap["segments"] = h.segments;
  heap["slab_bytes"] = h.slab_bytes;
  heap["large_bytes"] = h.large_bytes;
  heap["large_count"] = h.large_count;
  heap["free_bytes"] = h.free_bytes;
  heap["free_extents"] = h.free_extents;
  heap["largest_free_bytes"] = h.largest_free_bytes;
  heap["fragmentation"] = h.fragmentation;
  heap["pending_bytes"] = h.pending_bytes;
  heap["unmappable_bytes"] = h.unmappable_bytes;
  heap["maps"] = h.maps;
  heap["unmaps"] = h.unmaps;
  heap["unmapped_bytes"] = h.unmapped_bytes;
  heap["remap_waits"] = h.remap_waits;
  heap["peak_used_bytes"] = h.peak_used_bytes;
  o["heap"] = std::move(heap);
  json classes = json::array();
  for (const class_stats& c : s.classes) {
    if (c.capacity_blocks == 0 && c.allocs == 0 && c.pending_blocks == 0) continue;  // untouched
    json k;
    k["block_bytes"] = c.block_bytes;
    k["capacity_blocks"] = c.capacity_blocks;
    k["free_blocks"] = c.free_blocks;
    k["cached_blocks"] = c.cached_blocks;
    k["pending_blocks"] = c.pending_blocks;
    k["in_use_blocks"] = c.in_use_blocks;
    k["allocs"] = c.allocs;
    k["frees"] = c.frees;
    k["slabs"] = c.slabs;
    classes.push_back(std::move(k));
  }
  o["classes"] = std::move(classes);
  return o;
}

std::string to_text(const json& doc) {
  return doc.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

}  // namespace detail

std::string to_json(const pool_stats& s) { return detail::to_text(detail::to_json_value(s)); }

}  // namespace cudapool
