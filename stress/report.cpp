// report.cpp - the summary table and the JSON object of a stress_result (see report.hpp); the
// JSON is written by nlohmann-json, as the stats are (cudapool/detail/core/json.hpp).
#include "report.hpp"

#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <string_view>

#include <cudapool/detail/core/json.hpp>

#include "format.hpp"

namespace cudapool::stress {

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
  if (r.remap_ratio != 0.0) row("remap ratio", format_double(r.remap_ratio));
  if (r.stream_arenas != 0) row("stream arenas", std::to_string(r.stream_arenas));
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
  using detail::json;
  json o;
  o["allocator"] = r.allocator;
  o["variant"] = r.variant;
  o["tls_transfer"] = r.tls_transfer;
  o["backend"] = r.backend;
  o["backend_note"] = r.backend_note;
  o["threads"] = r.threads;
  o["streams"] = r.streams;
  o["devices"] = r.devices;
  o["seed"] = r.seed;
  o["sizes"] = r.sizes;
  o["trace_scale"] = r.trace_scale;
  o["remap_ratio"] = r.remap_ratio;
  o["stream_arenas"] = r.stream_arenas;
  o["inject"] = to_string(r.inject);
  o["seconds"] = r.seconds;
  o["ops"] = r.ops;
  o["allocations"] = r.allocations;
  o["frees"] = r.frees;
  o["ops_per_second"] = std::llround(r.ops_per_second);
  o["handoffs"] = r.handoffs;
  o["cross_device_handoffs"] = r.cross_device_handoffs;
  o["cross_stream_frees"] = r.cross_stream_frees;
  o["immediate_frees"] = r.immediate_frees;
  o["peak_live_bytes"] = r.peak_live_bytes;
  o["peak_live_blocks"] = r.peak_live_blocks;
  // A peer's figures where it reports them, else null.
  o["peak_reserved_bytes"] = !r.is_peer()                 ? json(r.final_stats.peak_reserved_bytes)
                             : r.peer_peak_reserved_bytes ? json(*r.peer_peak_reserved_bytes)
                                                          : json(nullptr);
  o["pool_events_recorded"] = r.is_peer() ? json(nullptr) : json(r.final_stats.events_recorded);
  o["stress_events_recorded"] = r.stress_events_recorded;
  o["faults_injected"] = r.faults_injected;
  o["violations"] = r.violations;
  o["overlaps"] = r.overlaps;
  o["device_mismatches"] = r.device_mismatches;
  o["invalid_frees"] = r.invalid_frees;
  o["quarantined"] = r.quarantined;
  o["result"] = r.passed() ? "pass" : "fail";
  o["first_violations"] = r.first_violations;
  o["skipped_checks"] = r.skipped_checks;
  o["pool_stats"] = r.is_peer() ? json(nullptr) : detail::to_json_value(r.final_stats);
  if (r.is_peer()) {
    o["device_pool_stats"] = nullptr;
  } else {
    json per_device = json::array();
    for (const pool_stats& st : r.device_stats) per_device.push_back(detail::to_json_value(st));
    o["device_pool_stats"] = per_device;
  }
  return detail::to_text(o);
}

}  // namespace cudapool::stress
