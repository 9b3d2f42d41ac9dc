// report.cpp - the summary table and the JSON object of a stress_result (see report.hpp).
#include "report.hpp"

#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>

#include "format.hpp"

namespace cudapool::stress {

namespace {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(ch));
          out += esc;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

}  // namespace

void print_summary(const stress_result& r, std::ostream& out) {
  const auto row = [&](std::string_view name, const std::string& value) {
    out << "  " << name << std::string(name.size() < 20 ? 20 - name.size() : 1, ' ') << value << '\n';
  };
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.0f", r.ops_per_second);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f s", r.seconds);
  out << "stress summary\n";
  if (r.is_peer()) {
    row("allocator", r.allocator + " (a peer, not a cudapool pool)");
  } else {
    row("variant", r.variant + (r.tls_transfer.empty() ? "" : " (transfer layer: " + r.tls_transfer + ")"));
  }
  row("backend", r.backend + (r.backend_note.empty() ? "" : " (" + r.backend_note + ")"));
  row("threads", std::to_string(r.threads));
  if (r.devices > 1) row("devices", std::to_string(r.devices));
  row("streams", std::to_string(r.streams) + (r.devices > 1 ? " per device" : ""));
  row("seed", std::to_string(r.seed));
  row("sizes", r.sizes + (r.trace_scale < 1.0 ? " (scaled by " + format_double(r.trace_scale) + ")" : ""));
  if (r.inject != fault::none) row("inject", std::string(to_string(r.inject)));
  row("time", seconds);
  row("ops", std::to_string(r.ops) + " (" + std::to_string(r.allocations) + " allocations, " +
                 std::to_string(r.frees) + " frees)");
  row("ops/s", rate);
  row("handoffs", std::to_string(r.handoffs) +
                      (r.devices > 1 ? " (" + std::to_string(r.cross_device_handoffs) + " to another device)" : ""));
  row("cross-stream frees", std::to_string(r.cross_stream_frees));
  row("immediate frees", std::to_string(r.immediate_frees));
  row("peak live", format_bytes(double(r.peak_live_bytes)) + " in " + std::to_string(r.peak_live_blocks) + " blocks");
  if (r.is_peer()) {
    row("reserved peak", r.peer_peak_reserved_bytes ? format_bytes(double(*r.peer_peak_reserved_bytes))
                                                    : "not known (" + r.allocator + " does not say)");
    row("events recorded", std::to_string(r.stress_events_recorded) + " by stress");
  } else {
    row("reserved peak", format_bytes(double(r.final_stats.peak_reserved_bytes)) + (r.devices > 1 ? " (device 0)" : ""));
    row("events recorded", std::to_string(r.final_stats.events_recorded) + " by the pool (one per epoch), " +
                               std::to_string(r.stress_events_recorded) + " by stress");
  }
  if (r.inject == fault::double_handout) row("faults injected", std::to_string(r.faults_injected));
  row("violations", std::to_string(r.violations) + " (overlaps " + std::to_string(r.overlaps) +
                        ", device mismatches " + std::to_string(r.device_mismatches) + ", invalid frees " +
                        std::to_string(r.invalid_frees) + ")");
  if (!r.skipped_checks.empty()) row("skipped", r.skipped_checks);
  row("result", r.passed() ? "PASS" : "FAIL");
  if (!r.first_violations.empty()) {
    out << "first violations:\n";
    for (const std::string& v : r.first_violations) out << "  " << v << '\n';
    if (r.violations > r.first_violations.size()) {
      out << "  ... and " << r.violations - r.first_violations.size() << " more\n";
    }
  }
}

std::string to_json(const stress_result& r) {
  // A peer's figure where it reports one, else null.
  const std::string peak_reserved =
      !r.is_peer()                 ? std::to_string(r.final_stats.peak_reserved_bytes)
      : r.peer_peak_reserved_bytes ? std::to_string(*r.peer_peak_reserved_bytes)
                                   : "null";
  std::ostringstream out;
  out.precision(6);
  out << "{\"allocator\":" << json_string(r.allocator) << ",\"variant\":" << json_string(r.variant) << ",\"tls_transfer\":" << json_string(r.tls_transfer)
      << ",\"backend\":" << json_string(r.backend)
      << ",\"backend_note\":" << json_string(r.backend_note) << ",\"threads\":" << r.threads
      << ",\"streams\":" << r.streams << ",\"devices\":" << r.devices << ",\"seed\":" << r.seed << ",\"sizes\":" << json_string(r.sizes)
      << ",\"trace_scale\":" << r.trace_scale << ",\"inject\":" << json_string(to_string(r.inject))
      << ",\"seconds\":" << r.seconds << ",\"ops\":" << r.ops << ",\"allocations\":" << r.allocations
      << ",\"frees\":" << r.frees << ",\"ops_per_second\":" << std::llround(r.ops_per_second)
      << ",\"handoffs\":" << r.handoffs << ",\"cross_device_handoffs\":" << r.cross_device_handoffs << ",\"cross_stream_frees\":" << r.cross_stream_frees
      << ",\"immediate_frees\":" << r.immediate_frees
      << ",\"peak_live_bytes\":" << r.peak_live_bytes << ",\"peak_live_blocks\":" << r.peak_live_blocks
      << ",\"peak_reserved_bytes\":" << peak_reserved
      << ",\"pool_events_recorded\":" << (r.is_peer() ? "null" : std::to_string(r.final_stats.events_recorded))
      << ",\"stress_events_recorded\":" << r.stress_events_recorded << ",\"faults_injected\":" << r.faults_injected
      << ",\"violations\":" << r.violations << ",\"overlaps\":" << r.overlaps
      << ",\"device_mismatches\":" << r.device_mismatches << ",\"invalid_frees\":" << r.invalid_frees
      << ",\"quarantined\":" << r.quarantined << ",\"result\":" << json_string(r.passed() ? "pass" : "fail")
      << ",\"first_violations\":[";
  for (std::size_t i = 0; i < r.first_violations.size(); ++i) {
    out << (i ? "," : "") << json_string(r.first_violations[i]);
  }
  out << "],\"skipped_checks\":" << json_string(r.skipped_checks)
      << ",\"pool_stats\":" << (r.is_peer() ? "null" : cudapool::to_json(r.final_stats)) << ",\"device_pool_stats\":";
  if (r.is_peer()) {
    out << "null";
  } else {
    out << '[';
    for (std::size_t d = 0; d < r.device_stats.size(); ++d) out << (d ? "," : "") << cudapool::to_json(r.device_stats[d]);
    out << ']';
  }
  out << "}";
  return out.str();
}

}  // namespace cudapool::stress
