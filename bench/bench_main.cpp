// bench - Google Benchmark suites over every built variant and, on the CUDA backend, the peers a
// user would otherwise use (cudaMalloc, cudaMallocAsync, CUB's CachingDeviceAllocator), in the same
// binary and the same run so that ratios hold. The workloads are described in workloads.hpp and
// serve.hpp.
//
//   bench [--backend=sim|cuda] [--traces=DIR] [--trace=FILE]... [Google Benchmark flags]
//
//   --backend   sim or cuda (default: cuda when a GPU is present). Peers run on cuda only.
//   --traces    a directory whose *.csv files are replayed (default: ../shared/traces when it
//               exists, relative to the current directory); --traces= (empty) replays none of it.
//   --trace     one more trace file to replay (repeatable).
//   --devices   pair_devices and serve_devices run on 1..N devices (default: cuda, every GPU; sim, 2).
//   --serve-check-fault=N  the test of serve's device check (serve.hpp: set_serve_check_fault).
//   --replay-passes=N   whole passes per replay, one run (workloads.hpp: set_replay_passes).
//
// Exit status: 1 when a benchmark of the library's ended in an error (SkipWithError; each named on
// stderr) or a cudapool variant returned wrong results in serve; 3 when only peers' benchmarks
// ended in an error (a result about the peer: its rows carry the message); 2 for a bad argument
// or trace.
//
// The GPU suite (docs/results.md, made by docs/make_results.py from one run's directory):
//   bench --backend=cuda --benchmark_min_time=0.1 --benchmark_repetitions=3
//         --benchmark_report_aggregates_only=true --benchmark_out=bench.json --benchmark_out_format=json
#include <benchmark/benchmark.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench_allocator.hpp"
#include <cudapool/backend.hpp>
#include <cudapool/detail/peers/peers.hpp>
#include <cudapool/detail/core/asymmetric_fence.hpp>
#include "limits.hpp"
#include "multi_device.hpp"
#include <cudapool/registry.hpp>
#include "serve.hpp"
#include "serve_devices.hpp"
#include "trace.hpp"
#include "workloads.hpp"

namespace {

using bench::allocator_config;

std::vector<allocator_config> allocators(bool with_peers) {
  std::vector<allocator_config> all;
  const std::vector<std::string> variants = cudapool::available_variants();
  for (const std::string& v : variants) all.push_back({v, allocator_config::kind::pool, v, {}});
  if (with_peers) {
    for (const std::string& p : bench::peer_names()) {
      allocator_config c{p, allocator_config::kind::peer, p, {}};
      // Run time of the GPU suite (min_time 0.1 s x 3 repetitions): cudaMalloc/cudaFree take
      // device-wide locks (2.3-84 us per pair there)
      // and do not scale: its curves are flat well before 16 threads, so it stops at 16 threads,
      // and at 4 in larson, where one iteration is 4096 operations per thread (16 threads would
      // be seconds per iteration).
      if (p == "cudaMalloc") {
        c.max_threads = 16;
        c.max_larson_threads = 4;
      }
      all.push_back(c);
    }
  }
  // Option variations, measured on pair/4096 only (the issue-4/5 plots): validation off, and the
  // backoff sweep behind lockfree's default (min_spins, max_spins) = {64, 4096}, the best of the sweep
  // on the H200 host on 2026-11-29 (docs/results/archive/results-2026-12-01-handwritten.md).
  const auto built = [&](std::string_view v) { return std::find(variants.begin(), variants.end(), v) != variants.end(); };
  cudapool::pool_options unchecked;
  unchecked.atomic_free_check = false;
  if (built("tls")) {
    all.push_back({"tls-nocheck", allocator_config::kind::pool, "tls", unchecked, false});
    // The other transfer layer (issue 5: the mutex layer against the default lock-free queue of
    // batches), on every workload.
    cudapool::pool_options mutex_layer;
    mutex_layer.tls_transfer = cudapool::pool_options::transfer_layer::mutex_batches;
    all.push_back({"tls-mutex", allocator_config::kind::pool, "tls", mutex_layer, true});
    // The lock-free stack of batch heads, with a short backoff (1..64 pauses; the lockfree default,
    // 64..4096, made it 3x slower in producer -> consumer on the development VM).
    cudapool::pool_options stack_layer;
    stack_layer.tls_transfer = cudapool::pool_options::transfer_layer::lockfree_stack;
    stack_layer.backoff = {1, 64};
    all.push_back({"tls-stack", allocator_config::kind::pool, "tls", stack_layer, true});
    // Batches of 64 and 128 KiB (16 and 32 blocks of 4 KiB) against the default 256 KiB (64): the
    // batch-size default.
    for (const std::size_t kib : {64, 128}) {
      cudapool::pool_options o;
      o.tls_batch_bytes = kib << 10;
      all.push_back({"tls-batch" + std::to_string(kib) + "k", allocator_config::kind::pool, "tls", o, true});
    }
  }
  // The segment heap's remap_ratio (issue 14), every variant: pages of holes move to where a request
  // needs them once mapped bytes would exceed 1.05x the bytes in use; memory against map/unmap time.
  cudapool::pool_options remap;
  remap.remap_ratio = 1.05;
  for (const std::string& v : variants) all.push_back({v + "-remap", allocator_config::kind::pool, v, remap, true});
  // Streams that keep to their own memory (pool_options::stream_arenas, s45), every variant: up to
  // 16 streams own an arena each, whose frees on its own stream are immediate there, with classes up
  // to arena_max_class_bytes (256 KiB by default since s46; s45's -arenas-256k). -arenas-remap adds
  // remap_ratio 1.05; -arenas-1m keeps the classes up to 1 MiB in every arena (s45's -arenas: each
  // arena keeps slabs of the 320 KiB .. 1 MiB classes, a few blocks each).
  cudapool::pool_options arenas;
  arenas.stream_arenas = 16;
  cudapool::pool_options arenas_remap = arenas;
  arenas_remap.remap_ratio = 1.05;
  cudapool::pool_options arenas_1m = arenas;
  arenas_1m.arena_max_class_bytes = std::size_t{1} << 20;
  for (const std::string& v : variants) {
    allocator_config own{v + "-arenas", allocator_config::kind::pool, v, arenas, true};
    own.serve = true;  // serve's threads each have a stream of their own
    all.push_back(own);
    all.push_back({v + "-arenas-remap", allocator_config::kind::pool, v, arenas_remap, true});
    all.push_back({v + "-arenas-1m", allocator_config::kind::pool, v, arenas_1m, true});
  }
  // Memory first, for deep-learning programs (PyTorch's plug-in): classes up to 64 KiB (larger
  // requests are best-fit extents of the heap, not blocks of 4 classes per doubling in slabs of
  // their own) and remap_ratio 1.01; on the sim's deterministic replay of the recorded traces
  // (immediate frees) they take lm_train from 1.041x its live peak to 1.010x. The PyTorch plug-in's
  // memory-first setting (CUDAPOOL_REMAP_RATIO=1.01); on the H200's stream-ordered replays, with no
  // device work between steps, the remap (which waits for its own stream since s12) moves pages
  // back and forth: 1.011-1.055x the live peak on every trace at 0.5-7.9 us per operation
  // (docs/results/2026-12-02-h200-s12).
  cudapool::pool_options tight;
  tight.max_class_bytes = std::size_t{64} << 10;
  tight.remap_ratio = 1.01;
  for (const std::string& v : variants) all.push_back({v + "-tight", allocator_config::kind::pool, v, tight, true});
  // poll_before_growth off (the default polls 20 us): a miss that has just closed other streams'
  // epochs grows at once when their events are still pending.
  cudapool::pool_options nopoll;
  nopoll.poll_before_growth = std::chrono::nanoseconds(0);
  // The stream variant's gap on serve/mixed at 64 threads (s20, docs/results/2026-12-04-h200-s20):
  // stream and lockfree run -nopoll in serve too (does the poll, a spin of up to 20 us per miss
  // that would grow, cost requests/s with 64 threads on 16 CPUs?), and -batch16 (epoch_batch 16,
  // default 64) on pair/4096 and in serve (do the stream variant's large ranges, whose epochs close
  // every epoch_batch frees on their stream, reach other streams too late?).
  auto serving = [](allocator_config c) {
    c.serve = true;
    return c;
  };
  cudapool::pool_options batch16;
  batch16.epoch_batch = 16;
  for (const std::string& v : variants) {
    const allocator_config no_poll{v + "-nopoll", allocator_config::kind::pool, v, nopoll, true};
    if (v != "stream" && v != "lockfree") {
      all.push_back(no_poll);
      continue;
    }
    all.push_back(serving(no_poll));
    all.push_back(serving({v + "-batch16", allocator_config::kind::pool, v, batch16, false}));
  }
  // lockfree with epoch_batch 256 on every workload (s32): a replay's time against its events
  // (one a quarter as often as the default 64's), beside the in-place cost of the event calls
  // (replay's device_query_ns_per_call): what an epoch costs where the pool makes it.
  if (built("lockfree")) {
    cudapool::pool_options batch256;
    batch256.epoch_batch = 256;
    all.push_back({"lockfree-batch256", allocator_config::kind::pool, "lockfree", batch256, true});
  }
  // Segments from cudaMalloc chunks instead of mapped pages (virtual_memory off), lockfree, in
  // serve too: whether the device work on the pool's memory runs slower on pages mapped through the
  // virtual memory API (2 MiB each) than on cudaMalloc's, as serve/none's ring is.
  if (built("lockfree")) {
    cudapool::pool_options chunks;
    chunks.virtual_memory = false;
    all.push_back(serving({"lockfree-chunks", allocator_config::kind::pool, "lockfree", chunks, true}));
  }
  // Every slab 2 MiB (first_slab_bytes = slab_bytes, the layout before slabs doubled from 64 KiB),
  // on every workload: what the doubling does to the hot paths and to memory.
  cudapool::pool_options whole_slabs;
  whole_slabs.first_slab_bytes = whole_slabs.slab_bytes;
  for (const std::string& v : variants) all.push_back({v + "-slab2m", allocator_config::kind::pool, v, whole_slabs, true});
  if (built("lockfree")) {
    all.push_back({"lockfree-nocheck", allocator_config::kind::pool, "lockfree", unchecked, false});
    for (const auto& [lo, hi] :
         {std::pair{0u, 0u}, std::pair{1u, 64u}, std::pair{4u, 256u}, std::pair{16u, 1024u}}) {
      cudapool::pool_options o;
      o.backoff = {lo, hi};
      all.push_back({hi == 0 ? "lockfree-nobackoff" : "lockfree-backoff" + std::to_string(lo) + "-" + std::to_string(hi),
                     allocator_config::kind::pool, "lockfree", o, false});
    }
  }
  // The cost of the debug layer (docs/debugging.md): each variant built without debug hooks
  // ("-plain") beside the default build with every debug option off (the plain label), and with
  // guards, stacks and sanitizer regions on ("-debug").
  cudapool::pool_options debug;
  debug.debug.guard_bytes = 64;
  debug.debug.record_stacks = true;
  debug.debug.sanitizer_regions = true;
  for (const std::string& v : variants) {
    allocator_config plain{v + "-plain", allocator_config::kind::pool, v, {}, false};
    plain.plain = true;
    all.push_back(plain);
    all.push_back({v + "-debug", allocator_config::kind::pool, v, debug, false});
  }
  return all;
}

// A run's SkipWithError message, nullopt when it did not end in an error (Google Benchmark 1.7:
// error_occurred and error_message; 1.8 replaced them with skipped and skip_message).
template <class Run>
std::optional<std::string> run_error(const Run& r) {
  if constexpr (requires { r.error_occurred; }) {
    if (r.error_occurred) return r.error_message;
  } else {
    if (r.skipped == decltype(r.skipped)::SkippedWithError) return r.skip_message;
  }
  return std::nullopt;
}

// Google Benchmark's own display reporter (--benchmark_format), keeping each benchmark that ended
// in an error, so that bench can fail on it: Google Benchmark itself exits 0 after any error. It
// sees what is reported: with --benchmark_report_aggregates_only, an error in some repetitions of a
// benchmark whose other repetitions still make aggregates is dropped (from the JSON too).
class error_keeping_reporter final : public benchmark::BenchmarkReporter {
 public:
  struct error {
    std::string benchmark;
    std::string message;  // the first run's
    bool peer;            // a peer's (<workload>/<peer>/...): a result about the peer, not a failure of bench
  };

  explicit error_keeping_reporter(std::vector<std::string> peers)
      : display_(benchmark::CreateDefaultDisplayReporter()), peers_(std::move(peers)) {}

  bool ReportContext(const Context& context) override { return display_->ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      const std::optional<std::string> message = run_error(r);
      const std::string name = r.benchmark_name();
      if (!message || std::any_of(errors_.begin(), errors_.end(), [&](const error& e) { return e.benchmark == name; })) {
        continue;
      }
      const std::string_view rest = std::string_view(name).substr(name.find('/') + 1);
      const std::string_view allocator = rest.substr(0, rest.find('/'));
      errors_.push_back({name, *message, std::find(peers_.begin(), peers_.end(), allocator) != peers_.end()});
    }
    display_->ReportRuns(runs);
  }
  void Finalize() override { display_->Finalize(); }

  // In the order the benchmarks ran.
  [[nodiscard]] const std::vector<error>& errors() const { return errors_; }

 private:
  const std::unique_ptr<benchmark::BenchmarkReporter> display_;
  const std::vector<std::string> peers_;
  std::vector<error> errors_;
};

void usage() {
  std::printf(
      "bench [--backend=sim|cuda] [--traces=DIR] [--trace=FILE]... [Google Benchmark flags]\n"
      "  --backend=sim|cuda  the device (default: cuda when a GPU is present); peers run on cuda only\n"
      "  --traces=DIR        replay every DIR/*.csv (default: ../shared/traces if it exists; empty: none)\n"
      "  --trace=FILE        replay FILE too (repeatable)\n"
      "  --devices=N         pair_devices and serve_devices run on 1..N devices, N <= 64 (default:\n"
      "                      cuda, every GPU; sim, 2 simulated)\n"
      "  --serve-check-fault=N  test of serve's check: every Nth request of a thread gets a wrong\n"
      "                      result, which must be counted in failures (and make bench exit 1)\n"
      "  --replay-passes=N   each replay runs exactly N (<= 1000000) whole passes of its trace, once (the same\n"
      "                      work in every process: for instruction counts under callgrind)\n"
      "Names: <workload>/<allocator>[/<param>][/real_time][/threads:N]; workloads pair, batch, mix,\n"
      "prodcons, larson, streams, replay (workloads.hpp), serve (serve.hpp), pair_devices\n"
      "(multi_device.hpp), serve_devices (serve_devices.hpp); limit (no pool: the bare\n"
      "mechanism). Google Benchmark's own flags follow.\n"
      "Exit status: 1 when a benchmark ended in an error (each named on stderr) or a cudapool variant\n"
      "returned wrong results in serve; 3 when only peers' benchmarks did; 2 for a bad argument or trace.\n\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend;
  std::string traces_dir;
  bool traces_dir_given = false;
  std::vector<std::string> trace_files;
  std::vector<char*> rest;
  int devices = 0;  // 0: the default for the backend
  // A flag's whole number in [1, max] into *value, or a message and false: the digits and nothing
  // else (atoll read "3junk" as 3 and "1e6" as 1), and a bound (a pass count whose iterations
  // overflowed aborted inside Google Benchmark; 100000 sim devices took 20 s to fail).
  const auto positive = [](std::string_view arg, std::string_view flag, long long max, long long* value) {
    const std::string text(arg.substr(flag.size()));
    long long v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (!text.empty() && ec == std::errc{} && end == text.data() + text.size() && v >= 1 && v <= max) {
      *value = v;
      return true;
    }
    std::fprintf(stderr, "bench: %.*s must be a whole number from 1 to %lld, got '%s'\n",
                 static_cast<int>(flag.size() - 1), flag.data(), max, text.c_str());
    return false;
  };
  long long number = 0;  // positive()'s
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (i > 0 && arg.starts_with("--backend=")) {
      backend = arg.substr(10);
    } else if (i > 0 && arg.starts_with("--devices=")) {
      if (!positive(arg, "--devices=", 64, &number)) return 2;
      devices = static_cast<int>(number);
    } else if (i > 0 && arg.starts_with("--serve-check-fault=")) {
      if (!positive(arg, "--serve-check-fault=", std::numeric_limits<long long>::max(), &number)) return 2;
      bench::set_serve_check_fault(static_cast<std::uint64_t>(number));
    } else if (i > 0 && arg.starts_with("--replay-passes=")) {
      if (!positive(arg, "--replay-passes=", 1'000'000, &number)) return 2;
      bench::set_replay_passes(static_cast<std::uint64_t>(number));
    } else if (i > 0 && arg.starts_with("--traces=")) {
      traces_dir = arg.substr(9);
      traces_dir_given = true;
    } else if (i > 0 && arg.starts_with("--trace=")) {
      trace_files.emplace_back(arg.substr(8));
    } else {
      if (i > 0 && (arg == "--help" || arg == "-h")) usage();
      rest.push_back(argv[i]);
    }
  }
  if (backend.empty()) backend = cudapool::cuda_device_count() > 0 ? "cuda" : "sim";
  if (backend != "cuda" && backend != "sim") {
    std::fprintf(stderr, "bench: --backend must be sim or cuda, got '%s'\n", backend.c_str());
    return 2;
  }

  // Traces: the directory's *.csv in name order, then the --trace files.
  std::vector<std::string> trace_paths;
  if (!traces_dir_given && std::filesystem::is_directory("../shared/traces")) traces_dir = "../shared/traces";
  if (!traces_dir.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(traces_dir, ec)) {
      std::fprintf(stderr, "bench: --traces=%s is not a directory\n", traces_dir.c_str());
      return 2;
    }
    std::vector<std::string> found;
    for (const auto& e : std::filesystem::directory_iterator(traces_dir, ec)) {
      if (e.is_regular_file() && e.path().extension() == ".csv") found.push_back(e.path().string());
    }
    std::sort(found.begin(), found.end());
    trace_paths = std::move(found);
  }
  trace_paths.insert(trace_paths.end(), trace_files.begin(), trace_files.end());
  std::vector<std::shared_ptr<const bench::trace>> traces;
  for (const std::string& path : trace_paths) {
    try {
      traces.push_back(std::make_shared<const bench::trace>(bench::load_trace(path)));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench: %s\n", e.what());
      return 2;
    }
    // A replay's benchmarks are named by the file name alone: two of one name would share them.
    const bench::trace& t = *traces.back();
    const auto same = std::find_if(traces.begin(), traces.end() - 1, [&](const auto& o) { return o->name == t.name; });
    if (same != traces.end() - 1) {
      std::fprintf(stderr,
                   "bench: traces %s and %s are both named '%s' (replay/<allocator>/<name>, the file name without"
                   " directory and .csv): give one another file name\n",
                   (*same)->path.c_str(), t.path.c_str(), t.name.c_str());
      return 2;
    }
  }

  std::shared_ptr<cudapool::backend> device;
  std::vector<std::shared_ptr<cudapool::backend>> device_list;  // pair_devices: device d at [d]
  try {
    if (backend == "cuda") {
      const int gpus = cudapool::cuda_device_count();
      if (devices > gpus) {
        std::fprintf(stderr, "bench: --devices=%d, but this machine has %d GPU(s)\n", devices, gpus);
        return 2;
      }
      device = cudapool::make_cuda_backend(0);
      device_list.push_back(device);
      for (int d = 1; d < (devices == 0 ? gpus : devices); ++d) device_list.push_back(cudapool::make_cuda_backend(d));
    } else {
      device = cudapool::make_sim_backend();
      device_list.push_back(device);
      for (int d = 1; d < (devices == 0 ? 2 : devices); ++d) {
        cudapool::sim_options o;
        o.device = d;
        device_list.push_back(cudapool::make_sim_backend(o));
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench: cannot make the %s backend: %s\n", backend.c_str(), e.what());
    return 1;
  }

  benchmark::AddCustomContext("cudapool_backend", backend);
  benchmark::AddCustomContext("cudapool_devices", std::to_string(device_list.size()));
  // Whether tls's owner fast path runs with compiler barriers (membarrier available) or full fences.
  benchmark::AddCustomContext("cudapool_asymmetric_fences",
                              cudapool::core::asymmetric_fences_available() ? "membarrier" : "full fences");
  std::string trace_list;
  for (const auto& t : traces) trace_list += (trace_list.empty() ? "" : ",") + t->path;
  benchmark::AddCustomContext("cudapool_traces", trace_list.empty() ? "none" : trace_list);
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  if (benchmark::ReportUnrecognizedArguments(n, rest.data())) return 2;

  const bool with_peers = backend == "cuda" && !bench::peer_names().empty();
  const std::vector<allocator_config> all = allocators(with_peers);
  bench::register_benchmarks(all, traces, device);
  bench::register_serve_benchmarks(all);
  bench::register_multi_device_benchmarks(all, std::move(device_list));
  bench::register_serve_devices_benchmarks(all);
  bench::register_limit_benchmarks();
  error_keeping_reporter reporter(bench::peer_names());
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  // Every run destroyed its allocator and streams; the backend goes last.
  bench::release_backend();
  bench::release_multi_device_backends();
  device.reset();
  // A pool that handed out memory still in use fails the run (CI), not only its benchmark (serve,
  // serve_devices); so does any other benchmark of the library's that ended in an error.
  bool failed = bench::serve_pool_failures_seen();
  if (failed) {
    std::fprintf(stderr,
                 "bench: a cudapool variant (or serve/none) returned wrong results in serve or serve_devices"
                 " (see above)\n");
  }
  for (const auto& e : reporter.errors()) {
    std::fprintf(stderr, "bench: %s ended in an error%s: %s\n", e.benchmark.c_str(), e.peer ? " (a peer's)" : "",
                 e.message.c_str());
    failed = failed || !e.peer;
  }
  if (failed) return 1;
  return reporter.errors().empty() ? 0 : 3;
}
