// reports.cpp - text and JSON forms of the reports in cudapool/diagnostics.hpp.
#include <sstream>

#include <cudapool/detail/core/json.hpp>
#include <cudapool/diagnostics.hpp>

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
  detail::json o;
  o["requested_bytes"] = r.requested_bytes;
  o["alignment"] = r.alignment;
  o["size_class"] = r.size_class;
  o["class_bytes"] = r.class_bytes;
  o["byte_limit"] = r.byte_limit;
  o["growth_allowed"] = r.growth_allowed;
  o["releasable_by_trim"] = r.releasable_by_trim;
  o["largest_free_bytes"] = r.largest_free_bytes;
  o["releasable_by_synchronize"] = r.releasable_by_synchronize;
  detail::json streams = detail::json::array();
  for (const oom_report::stream_holding& s : r.streams) {
    streams.push_back({{"stream_id", s.stream_id}, {"free_bytes", s.free_bytes}, {"pending_bytes", s.pending_bytes},
                       {"pending_epochs", s.pending_epochs}, {"in_use_bytes", s.in_use_bytes}});
  }
  o["streams"] = std::move(streams);
  detail::json caches = detail::json::array();
  for (const oom_report::thread_cache_holding& t : r.thread_caches) {
    caches.push_back({{"thread", t.thread}, {"bytes", t.bytes}, {"blocks", t.blocks}});
  }
  o["thread_caches"] = std::move(caches);
  o["stats"] = detail::to_json_value(r.stats);
  return detail::to_text(o);
}

}  // namespace cudapool
