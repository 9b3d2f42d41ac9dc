#include "cudapool/stats.hpp"

#include <sstream>

namespace cudapool {

namespace {

// Variant and backend names are identifiers; escape the two characters JSON requires anyway.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

}  // namespace

std::string to_json(const pool_stats& s) {
  std::ostringstream o;
  o << "{\"variant\":" << quoted(s.variant) << ",\"backend\":" << quoted(s.backend)
    << ",\"reserved_bytes\":" << s.reserved_bytes << ",\"in_use_bytes\":" << s.in_use_bytes
    << ",\"requested_bytes\":" << s.requested_bytes << ",\"free_bytes\":" << s.free_bytes
    << ",\"cached_bytes\":" << s.cached_bytes << ",\"pending_bytes\":" << s.pending_bytes
    << ",\"peak_reserved_bytes\":" << s.peak_reserved_bytes << ",\"peak_in_use_bytes\":" << s.peak_in_use_bytes
    << ",\"peak_requested_bytes\":" << s.peak_requested_bytes << ",\"large_live\":" << s.large_live
    << ",\"large_in_use_bytes\":" << s.large_in_use_bytes << ",\"virtual_memory\":" << (s.virtual_memory ? "true" : "false")
    << ",\"page_bytes\":" << s.page_bytes << ",\"address_bytes\":" << s.address_bytes << ",\"segments\":" << s.segments << ",\"slab_bytes\":" << s.slab_bytes
    << ",\"heap_free_bytes\":" << s.heap_free_bytes << ",\"heap_free_extents\":" << s.heap_free_extents
    << ",\"heap_largest_free_bytes\":" << s.heap_largest_free_bytes << ",\"heap_fragmentation\":" << s.heap_fragmentation
    << ",\"heap_pending_bytes\":" << s.heap_pending_bytes << ",\"heap_unmappable_bytes\":" << s.heap_unmappable_bytes
    << ",\"maps\":" << s.maps << ",\"unmaps\":" << s.unmaps
    << ",\"allocs\":" << s.allocs << ",\"frees\":" << s.frees << ",\"grows\":" << s.grows
    << ",\"trims\":" << s.trims << ",\"ooms\":" << s.ooms << ",\"invalid_frees\":" << s.invalid_frees
    << ",\"events_recorded\":" << s.events_recorded << ",\"epochs_reclaimed\":" << s.epochs_reclaimed
    << ",\"pending_epochs\":" << s.pending_epochs << ",\"classes\":[";
  bool first = true;
  for (const class_stats& c : s.classes) {
    if (c.capacity_blocks == 0 && c.allocs == 0 && c.pending_blocks == 0) continue;  // untouched
    o << (first ? "" : ",") << "{\"block_bytes\":" << c.block_bytes << ",\"capacity_blocks\":" << c.capacity_blocks
      << ",\"free_blocks\":" << c.free_blocks << ",\"cached_blocks\":" << c.cached_blocks
      << ",\"pending_blocks\":" << c.pending_blocks << ",\"in_use_blocks\":" << c.in_use_blocks
      << ",\"allocs\":" << c.allocs << ",\"frees\":" << c.frees << ",\"slabs\":" << c.slabs << "}";
    first = false;
  }
  o << "]}";
  return o.str();
}

}  // namespace cudapool
