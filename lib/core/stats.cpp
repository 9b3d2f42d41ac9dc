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
    << ",\"peak_requested_bytes\":" << s.peak_requested_bytes
    << ",\"allocs\":" << s.allocs << ",\"frees\":" << s.frees << ",\"grows\":" << s.grows
    << ",\"trims\":" << s.trims << ",\"ooms\":" << s.ooms << ",\"invalid_frees\":" << s.invalid_frees
    << ",\"events_recorded\":" << s.events_recorded << ",\"epochs_reclaimed\":" << s.epochs_reclaimed
    << ",\"stream_waits\":" << s.stream_waits << ",\"pending_epochs\":" << s.pending_epochs;
  const heap_stats& h = s.heap;
  o << ",\"heap\":{\"virtual_memory\":" << (h.virtual_memory ? "true" : "false") << ",\"page_bytes\":" << h.page_bytes
    << ",\"mapped_bytes\":" << h.mapped_bytes << ",\"peak_mapped_bytes\":" << h.peak_mapped_bytes
    << ",\"address_bytes\":" << h.address_bytes << ",\"segments\":" << h.segments << ",\"slab_bytes\":" << h.slab_bytes
    << ",\"large_bytes\":" << h.large_bytes << ",\"large_count\":" << h.large_count << ",\"free_bytes\":" << h.free_bytes
    << ",\"free_extents\":" << h.free_extents << ",\"largest_free_bytes\":" << h.largest_free_bytes
    << ",\"fragmentation\":" << h.fragmentation << ",\"pending_bytes\":" << h.pending_bytes
    << ",\"unmappable_bytes\":" << h.unmappable_bytes << ",\"maps\":" << h.maps << ",\"unmaps\":" << h.unmaps
    << ",\"unmapped_bytes\":" << h.unmapped_bytes << ",\"peak_used_bytes\":" << h.peak_used_bytes << "}";
  o << ",\"classes\":[";
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
