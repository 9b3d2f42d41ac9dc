// config.hpp - what a stress run is asked to do: stress_config and its parts (backend, injected
// fault, sizes, traces), the parsers of their command-line spellings, and validate(). Part of the
// public stress_harness.hpp API.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <cudapool/detail/core/trace_reader.hpp>
#include <cudapool/options.hpp>

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

// One line of a trace in ../shared/traces format, as core/trace_reader.hpp reads it. stream and
// thread are kept, not replayed: every allocation picks one of the run's streams, and stress runs
// its own threads.
using trace_record = core::trace_line;

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

// stress_config::allocator for a cudapool pool (of stress_config::variant); any other name is a peer.
inline constexpr std::string_view pool_allocator = "pool";

struct stress_config {
  // What is stress-tested: the cudapool pool of `variant` (allocator "pool"), or a peer by name
  // (peers::peer_names(): "cudaMallocAsync", "cub", "cudaMalloc"), which runs the same workload
  // and device verification on the CUDA backend only; the pool-only checks are left out.
  std::string allocator{pool_allocator};
  std::string variant = "mutex";  // allocator "pool" only
  backend_choice backend = backend_choice::automatic;
  unsigned threads = 64;  // 1 .. 4095 (the tag has 12 bits for the thread)
  unsigned streams = 16;  // per device
  // Devices, each with its own pool (or peer) and `streams` streams; threads are spread over them
  // (thread t on device t % devices) and hand blocks across them. sim: that many simulated
  // devices; cuda: needs that many GPUs.
  unsigned devices = 1;
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
  // pool_options::first_slab_bytes; 0: the pool's default (--first-slab-bytes).
  std::size_t first_slab_bytes = 0;
  // pool_options::remap_ratio (--remap-ratio): 0, the pool's default, never remaps.
  double remap_ratio = 0.0;
  // pool_options::stream_arenas (--stream-arenas): 0, the pool's default, one pool for all streams.
  std::size_t stream_arenas = 0;
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
// The pool's options the command line asks for (first slab, remap ratio, tls transfer layer); the
// harness adds its invalid-free handler. validate() refuses what cudapool::validate refuses in them.
[[nodiscard]] pool_options pool_options_of(const stress_config& config);

// A run given neither duration_seconds nor ops lasts this long.
inline constexpr double default_duration_seconds = 10.0;

}  // namespace cudapool::stress
