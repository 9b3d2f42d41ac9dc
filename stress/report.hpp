// report.hpp - what a stress run found (stress_result) and how it is reported: the summary table
// and one JSON object. Part of the public stress_harness.hpp API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "config.hpp"
#include <cudapool/stats.hpp>

namespace cudapool::stress {

struct stress_result {
  // What ran.
  std::string allocator{pool_allocator};  // "pool", or the peer that ran (variant is then empty)
  std::string variant;
  std::string tls_transfer;  // variant tls: its transfer layer ("queue", "mutex", "stack"); else empty
  std::string backend;       // "sim" or "cuda"
  std::string backend_note;  // how --backend=auto decided, or empty
  unsigned threads = 0;
  unsigned streams = 0;  // per device
  unsigned devices = 1;
  std::uint64_t seed = 0;
  std::string sizes;
  double trace_scale = 1.0;  // trace sizes were multiplied by this (1 unless scaled to the budget)
  double remap_ratio = 0.0;       // the pool's pool_options::remap_ratio (--remap-ratio); 0: off
  std::size_t stream_arenas = 0;  // the pool's pool_options::stream_arenas (--stream-arenas); 0: off
  fault inject = fault::none;

  // What it did. ops = allocations + frees.
  double seconds = 0;
  std::uint64_t allocations = 0;
  std::uint64_t frees = 0;
  std::uint64_t ops = 0;
  double ops_per_second = 0;
  std::uint64_t handoffs = 0;
  std::uint64_t cross_device_handoffs = 0;  // hand-offs to a thread of another device
  std::uint64_t cross_stream_frees = 0;
  std::uint64_t immediate_frees = 0;  // deallocate(p) after the host waited for the block's stream
  std::uint64_t stress_events_recorded = 0;  // hand-offs, cross-stream frees and throttling
  std::size_t peak_live_bytes = 0;           // requested bytes live at once, exact
  std::size_t peak_live_blocks = 0;
  std::uint64_t faults_injected = 0;  // double hand-outs made by the fault decorator
  pool_stats final_stats;             // after every free, flush, device synchronize and trim(); pools only
                                      // (device 0's pool with --devices)
  std::vector<pool_stats> device_stats;  // every device's pool, the same way; pools only
  // Peers only: the peak bytes the peer reserved, where it can tell (cudaMallocAsync), and the
  // pool-only checks the run left out, as one line for the report.
  std::optional<std::size_t> peer_peak_reserved_bytes;
  std::string skipped_checks;

  // What went wrong. violations is the total; the others say where it came from.
  std::uint64_t violations = 0;
  std::uint64_t overlaps = 0;           // caught by the shadow map
  std::uint64_t device_mismatches = 0;  // verify ranges that saw a wrong word
  std::uint64_t invalid_frees = 0;      // reported by the pool
  std::uint64_t quarantined = 0;        // overlapping blocks the harness never touched nor freed
  std::vector<std::string> first_violations;  // one line each, in the order they were found

  [[nodiscard]] bool passed() const noexcept { return violations == 0; }
  [[nodiscard]] bool is_peer() const noexcept { return allocator != pool_allocator; }
};

// The final table, followed by the first violations.
void print_summary(const stress_result& result, std::ostream& out);
// The same as one JSON object (pool_stats included; null, with the pool-only figures, for a peer).
[[nodiscard]] std::string to_json(const stress_result& result);

}  // namespace cudapool::stress
