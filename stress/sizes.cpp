// sizes.cpp - see sizes.hpp.
#include "sizes.hpp"

#include <map>

namespace cudapool::stress {

std::size_t trace_peak_live(const std::vector<trace_record>& trace) {
  std::map<std::uint64_t, std::size_t> live;
  std::size_t now = 0, peak = 0;
  for (const trace_record& r : trace) {
    if (r.allocate) {
      live[r.id] += r.bytes;
      now += r.bytes;
      peak = std::max(peak, now);
    } else if (const auto it = live.find(r.id); it != live.end()) {
      now -= it->second;
      live.erase(it);
    }
  }
  return peak;
}

}  // namespace cudapool::stress
