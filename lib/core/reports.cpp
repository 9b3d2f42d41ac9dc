// reports.cpp - text and JSON forms of the reports in cudapool/diagnostics.hpp.
#include <sstream>

#include "cudapool/diagnostics.hpp"

namespace cudapool {

const char* to_string(pointer_info::kind k) noexcept {
  switch (k) {
    case pointer_info::kind::foreign: return "foreign";
    case pointer_info::kind::block: return "block";
    case pointer_info::kind::interior: return "interior";
    case pointer_info::kind::large: return "large";
  }
  return "?";
}

const char* to_string(pointer_info::state s) noexcept {
  switch (s) {
    case pointer_info::state::none: return "none";
    case pointer_info::state::live: return "live";
    case pointer_info::state::free: return "free";
    case pointer_info::state::pending: return "pending";
  }
  return "?";
}

std::string to_string(const pointer_info& i) {
  std::ostringstream out;
  if (i.what == pointer_info::kind::foreign) return "not memory of this pool";
  out << to_string(i.what);
  if (i.what == pointer_info::kind::interior) out << " (" << i.offset << " bytes into " << i.base << ")";
  if (i.size_class >= 0) {
    out << " of size class " << i.size_class << " (" << i.capacity_bytes << " B blocks), block " << i.block;
  } else {
    out << " allocation of a " << i.capacity_bytes << " B chunk";
  }
  out << ", " << to_string(i.status);
  if (i.status == pointer_info::state::live && i.requested_bytes != 0) out << ", " << i.requested_bytes << " bytes requested";
  if (i.status == pointer_info::state::pending) {
    out << " behind stream ";
    if (i.pending_stream_id != 0) {
      out << i.pending_stream_id;
    } else {
      out << "(unknown)";
    }
  }
  if (!i.alloc_stack.empty()) out << "; allocated at:\n" << i.alloc_stack;
  return out.str();
}

std::string to_json(const oom_report& r) {
  std::ostringstream o;
  o << "{\"requested_bytes\":" << r.requested_bytes << ",\"alignment\":" << r.alignment
    << ",\"size_class\":" << r.size_class << ",\"class_bytes\":" << r.class_bytes << ",\"byte_limit\":" << r.byte_limit
    << ",\"growth_allowed\":" << (r.growth_allowed ? "true" : "false")
    << ",\"releasable_by_trim\":" << r.releasable_by_trim << ",\"largest_free_bytes\":" << r.largest_free_bytes
    << ",\"releasable_by_synchronize\":" << r.releasable_by_synchronize << ",\"streams\":[";
  for (std::size_t k = 0; k < r.streams.size(); ++k) {
    const auto& s = r.streams[k];
    o << (k ? "," : "") << "{\"stream_id\":" << s.stream_id << ",\"free_bytes\":" << s.free_bytes
      << ",\"pending_bytes\":" << s.pending_bytes << ",\"pending_epochs\":" << s.pending_epochs
      << ",\"in_use_bytes\":" << s.in_use_bytes << "}";
  }
  o << "],\"thread_caches\":[";
  for (std::size_t k = 0; k < r.thread_caches.size(); ++k) {
    const auto& t = r.thread_caches[k];
    o << (k ? "," : "") << "{\"thread\":" << t.thread << ",\"bytes\":" << t.bytes << ",\"blocks\":" << t.blocks << "}";
  }
  o << "],\"stats\":" << to_json(r.stats) << "}";
  return o.str();
}

}  // namespace cudapool
