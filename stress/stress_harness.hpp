// stress_harness.hpp - the `stress` soak: many host threads x many streams against one pool, every
// allocation stamped and verified on the device, a host shadow map of live ranges, and end-of-run
// accounting. run_stress() is the whole tool except its command line, so tests run it in-process.
//
// Glossary
//   step        one decision of a host thread: allocate a block, or retire one it holds.
//   tag         the 32-bit pattern a block is stamped with on the device: (thread + 1) << 20 | the
//               thread's allocation counter, so a wrong word read back names the thread that wrote
//               it. Never 0 (fresh memory is often 0).
//   retire      verify the tag on the device, then free the block stream-ordered; or hand it to
//               another thread, which does so on its own stream.
//   hand-off    a block given to another host thread through a queue, with an event recorded on
//               the producer's stream that the consumer's stream waits on.
//   cross-stream free
//               a block used on stream A and freed on stream B; the use on A is declared to B with
//               an event + stream wait before deallocate(p, B), as the core stream contract needs.
//   immediate free
//               1 retire in 32: the host waits for the block's stream to pass the verify, then
//               calls deallocate(p) without a stream, which the contract allows once no work on p
//               is pending. Rare, because it stalls the thread; there so that clean runs use the
//               immediate path of every variant too.
//   shadow map  host map of live [start, end) ranges; an overlap at allocation is a violation.
//   violation   anything that proves the pool broke its contract: an overlapping hand-out, a
//               mismatch seen by a device verify, an invalid free reported by the pool, a block
//               that is not 256 B aligned, stats that do not balance after the run, device memory
//               still held after the pool is gone, or an exception escaping a pool call.
//
// This is not a benchmark: the shadow map is one mutex, every byte of every block is written and
// read on the device, and host threads throttle themselves to the device's pace. ops/s is printed
// to see that the run made progress.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cudapool/options.hpp"
#include "cudapool/stats.hpp"

namespace cudapool::stress {

// A configuration the harness cannot run (bad value, unknown variant, unreadable trace). what() is
// one line, meant to be printed as is; the command line exits with status 2.
class config_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class backend_choice { automatic, cuda, sim };
enum class fault {
  none,
  // deallocate(p, s) becomes deallocate(p): the block is reusable while work on s still uses it.
  early_reuse,
  // About one allocation in 256 returns a block that is still live instead of calling the pool.
  double_handout,
};

[[nodiscard]] std::string_view to_string(backend_choice b) noexcept;
[[nodiscard]] std::string_view to_string(fault f) noexcept;
// Parse the command line spellings ("auto", "early-reuse", ...); throw config_error.
[[nodiscard]] backend_choice parse_backend_choice(std::string_view text);
[[nodiscard]] fault parse_fault(std::string_view text);

// One line of a trace in ../shared/traces format (CSV `op,id,bytes,stream`, '#' comments).
struct trace_record {
  bool allocate = false;  // `a`; otherwise `f`
  std::uint64_t id = 0;
  std::size_t bytes = 0;
  unsigned stream = 0;  // kept, not replayed: every allocation picks one of the run's streams
};

// Throws config_error naming the file (and line) when it cannot be read, a line is malformed, or it
// holds no allocation.
[[nodiscard]] std::vector<trace_record> load_trace(const std::string& path);

// --sizes. classes: a size class drawn uniformly over the pool's classes, the request uniform within
// the class (a quarter of them exactly at the class boundary), small requests below 256 B now and
// then, and 1 % large requests of 2..8x the largest class. fixed: every request `fixed_bytes`.
// trace: the trace's sizes and lifetimes, each thread replaying it from its own offset (wrapping
// around; what a thread holds at the end of a pass is freed there), sizes scaled down when
// threads x the trace's peak live bytes exceed stress_config::trace_live_budget.
struct size_spec {
  enum class kind { classes, mixed, fixed, trace } what = kind::classes;
  std::size_t fixed_bytes = 0;
  std::string trace_path;
  std::vector<trace_record> trace;  // loaded by parse_size_spec
  std::string text = "classes";     // as given, for the report
};

// "classes", "mixed" (classes, and one request in 64 of 1 .. 64 MiB, log-uniform: the segment
// heap's large path), "fixed:BYTES" (a suffix K, M or G multiplies by 2^10, 2^20, 2^30) or
// "trace:FILE" (loaded now). Throws config_error.
[[nodiscard]] size_spec parse_size_spec(std::string_view text);

struct stress_config {
  std::string variant = "mutex";
  backend_choice backend = backend_choice::automatic;
  unsigned threads = 64;  // 1 .. 4095 (the tag has 12 bits for the thread)
  unsigned streams = 16;
  // At most one of the two; neither means duration_seconds = 10. ops counts allocations over all
  // threads (split evenly; each block is freed too), so a run with ops is the same work every time.
  std::optional<double> duration_seconds;
  std::optional<std::uint64_t> ops;
  std::uint64_t seed = 1;
  size_spec sizes;
  double handoff = 0.1;       // fraction of retired blocks handed to another thread
  double cross_stream = 0.1;  // fraction of retired blocks freed on another stream
  fault inject = fault::none;
  // The tls variant's transfer layer (pool_options::tls_transfer); ignored by the others.
  pool_options::transfer_layer tls_transfer = pool_options::transfer_layer::concurrent_queue;
  bool progress = true;  // a progress line about every second (--quiet turns it off)

  // Not on the command line.
  // Each thread holds at most this many live blocks (classes and fixed sizes); it allocates with
  // probability (max - held) / max, so it holds about half on average.
  unsigned max_live_blocks = 32;
  // Trace replay: the host (sim) or device memory the replay may keep live over all threads; trace
  // sizes are scaled down so that threads x the trace's peak live bytes fits. 0: 1 GiB on the sim
  // backend (its device memory is host memory, times TSan's shadow), 32 GiB on a GPU.
  std::size_t trace_live_budget = 0;
  // Sim backend: each device operation first sleeps a random time up to this, which shuffles the
  // order in which streams run. 0 by default: the spins and the queueing behind them already leave
  // wide race windows (an early reuse is seen by ~10 % of all verifies), and the sleeps, at least
  // ~50 us each with Linux timer slack, would slow every run down.
  std::chrono::nanoseconds sim_max_latency{0};
};

// "queue", "mutex" or "stack" (--tls-transfer). Throws config_error.
[[nodiscard]] pool_options::transfer_layer parse_transfer_layer(std::string_view text);
[[nodiscard]] std::string_view to_string(pool_options::transfer_layer l) noexcept;

// Throws config_error for a configuration run_stress would reject.
void validate(const stress_config& config);

struct stress_result {
  // What ran.
  std::string variant;
  std::string tls_transfer;  // variant tls: its transfer layer ("queue", "mutex", "stack"); else empty
  std::string backend;       // "sim" or "cuda"
  std::string backend_note;  // how --backend=auto decided, or empty
  unsigned threads = 0;
  unsigned streams = 0;
  std::uint64_t seed = 0;
  std::string sizes;
  double trace_scale = 1.0;  // trace sizes were multiplied by this (1 unless scaled to the budget)
  fault inject = fault::none;

  // What it did. ops = allocations + frees.
  double seconds = 0;
  std::uint64_t allocations = 0;
  std::uint64_t frees = 0;
  std::uint64_t ops = 0;
  double ops_per_second = 0;
  std::uint64_t handoffs = 0;
  std::uint64_t cross_stream_frees = 0;
  std::uint64_t immediate_frees = 0;  // deallocate(p) after the host waited for the block's stream
  std::uint64_t stress_events_recorded = 0;  // hand-offs, cross-stream frees and throttling
  std::size_t peak_live_bytes = 0;           // requested bytes live at once, exact
  std::size_t peak_live_blocks = 0;
  std::uint64_t faults_injected = 0;  // double hand-outs made by the fault decorator
  pool_stats final_stats;             // after every free, flush, device synchronize and trim()

  // What went wrong. violations is the total; the others say where it came from.
  std::uint64_t violations = 0;
  std::uint64_t overlaps = 0;           // caught by the shadow map
  std::uint64_t device_mismatches = 0;  // verify ranges that saw a wrong word
  std::uint64_t invalid_frees = 0;      // reported by the pool
  std::uint64_t quarantined = 0;        // overlapping blocks the harness never touched nor freed
  std::vector<std::string> first_violations;  // one line each, in the order they were found

  [[nodiscard]] bool passed() const noexcept { return violations == 0; }
};

// Runs the soak. A header line (variant, backend and how --backend=auto chose it, seed, ...) and,
// when config.progress, a progress line about every second go to `progress`. Throws config_error for a bad configuration or a backend that cannot be
// had (--backend=cuda without a GPU); everything the pool does wrong ends up in the result.
[[nodiscard]] stress_result run_stress(const stress_config& config, std::ostream& progress);

// The final table, followed by the first violations.
void print_summary(const stress_result& result, std::ostream& out);
// The same as one JSON object (pool_stats included).
[[nodiscard]] std::string to_json(const stress_result& result);

}  // namespace cudapool::stress
