// sizes.cpp - see sizes.hpp.
#include "sizes.hpp"

#include <string>

namespace cudapool::stress {

std::size_t trace_peak_live(const std::vector<trace_record>& trace) {
  core::trace_live_ids<std::size_t> live;  // bytes by id
  std::size_t now = 0, peak = 0;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const trace_record& r = trace[i];
    try {
      if (r.allocate) {
        live.allocate(r.id, r.bytes);
        now += r.bytes;
        peak = std::max(peak, now);
      } else {
        now -= live.free(r.id);
      }
    } catch (const core::trace_line_error& e) {
      throw config_error("--sizes=trace: record " + std::to_string(i + 1) + " (counting a and f lines only): " + e.what());
    }
  }
  return peak;
}

}  // namespace cudapool::stress
