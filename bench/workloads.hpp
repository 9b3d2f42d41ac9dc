// workloads.hpp - the bench workloads, written once against bench_allocator, and their
// registration with Google Benchmark (the server workload, serve, is in serve.hpp). Names are
// <workload>/<allocator>[/<parameter>]; Google Benchmark appends /real_time and /threads:N.
// items_per_second counts alloc+free pairs (replay: trace operations), aggregated over all threads.
//
//   pair/<a>/<bytes>         allocate + free one block of 256 B, 4 KiB or 1 MiB; threads 1..64
//   batch/<a>/<order>        allocate 64 blocks of 4 KiB, then free them in lifo, fifo or random
//                            order; threads 1, 4, 16, 64; an item is one block (alloc + free)
//   mix/<a>                  allocate + free one block of a size drawn log-uniformly in
//                            256 B .. 1 MiB (a per-thread table of 4096 sizes); threads 1, 4,
//                            16, 64
//   prodcons/<a>             threads in pairs: a producer allocates 4 KiB blocks and hands them
//                            through an SPSC ring (1024 slots, handed over in batches of 32) to
//                            its consumer, which frees them
//                            (cross-thread frees); threads 2..64; an item is one block
//   larson/<a>               each thread is a lineage of short-lived threads: every benchmark
//                            iteration starts a thread that inherits the lineage's window of 128
//                            live blocks (256 B .. 64 KiB, log-uniform), replaces a random one
//                            4096 times (free + allocate) and exits; the next generation inherits
//                            the window. Thread creation and exit are in the timing. threads 1, 4,
//                            16, 64; an item is one free + allocate
//   streams/<a>/same|cross   16 streams made on the backend; thread t allocates 4 KiB on stream
//                            t % 16 and frees it stream-ordered on the same stream (same) or on
//                            stream (t + 1) % 16 (cross); threads 1..16. Pools report
//                            events_per_free = stats().events_recorded / frees (after the final
//                            flush_stream of every stream) and stream_waits_per_1k_allocs =
//                            1000 x stats().stream_waits / allocs
//   replay/<a>/<trace>       one thread replays a trace operation by operation (an iteration is
//                            one operation, looping over the trace; allocations never freed in the
//                            file are freed at its end): time = ns per operation. Frees are
//                            stream-ordered on the trace's stream (as PyTorch's frees are); one
//                            backend stream per trace stream index. Counters: peak_live_MiB (from
//                            the trace, requested bytes, over the operations replayed),
//                            peak_reserved_MiB and reserved_over_live (pools:
//                            stats().peak_reserved_bytes; cudaMallocAsync: the pool's
//                            ReservedMemHigh; cub: its cached + live bytes sampled after each
//                            allocation; cudaMalloc: omitted)
//                            and pool_activity_counters (pools: grows, events, maps, unmaps per
//                            1000 allocations), events_per_op (pools: events recorded per replayed
//                            operation), device_records|queries|waits_per_op (pools: their calls
//                            to the device per operation, counted by a counting_backend: event
//                            records; event and stream queries; host and device-side waits;
//                            device_incomplete_queries_per_op: event queries that found the event
//                            pending; on the device, device_record_ns_per_call and
//                            device_query_ns_per_call: the time inside those calls where the pool
//                            makes them, against limit/epoch_event's ring). On the sim the pools' events are settled on query
//                            (run_options::settle_sim_events), as the GPU completes them when
//                            nothing runs on the device: sim memory as on the GPU, sim time not
//   replay/<a>/<trace>/elided  pools only: stream-ordered, the pool's event calls answered at once
//                            without the device (counting_backend's elide): its host work alone;
//                            the stream-ordered time minus this is what the event calls cost in place
//   replay/<a>/<trace>/immediate  pools only: the same with immediate frees (deallocate(p)), which
//                            separates the cost of deferred (stream-ordered) frees from the rest
//   replay/<a>/<trace>/per_stream  pools only, traces of several streams: one pool of <a> per trace
//                            stream, a free on the allocating stream immediate in its pool (stream
//                            order makes that stream's reuse safe), one on another stream
//                            stream-ordered there: a bound for streams that keep to their own
//                            memory (reserved = the sum of the pools' peaks; workloads.cpp)
//   replay/<a>/<trace>/per_stream_ordered  the same pools, every free stream-ordered: a pool per
//                            stream as a program can use one today
//   limit/epoch_event        no allocator: the host's cost of one epoch (an event recorded on a
//                            stream, and later one query of it), from a ring of 64 events; times
//                            a replay's events_per_op, what its epochs cost per operation (the
//                            floor of its stream-ordered frees)
//
// Streams of the peers: in the workloads without streams a peer allocates on a stream of its own
// per benchmark thread (non-blocking, made on the backend in set-up) and frees on that stream
// (cudaFreeAsync(p, s); a consumer/successor frees on the allocating thread's stream); the pools
// get stream_ref{} and free immediately (deallocate(p)): in both cases the block is reusable at
// once in the order of the allocating stream.
//
// Every run makes its allocator (and streams) in set-up and destroys them at tear-down, after
// every thread is done: streams are flushed (flush_stream), the allocator is destroyed, and only
// then the streams (so no pool ever sees a destroyed stream: no retire_stream is needed).
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "bench_allocator.hpp"
#include "counting_backend.hpp"
#include <cudapool/backend.hpp>
#include "spsc_ring.hpp"
#include "trace.hpp"

namespace bench {

void register_benchmarks(const std::vector<allocator_config>& allocators,
                         const std::vector<std::shared_ptr<const trace>>& traces,
                         std::shared_ptr<cudapool::backend> device);

// Before register_benchmarks: every replay runs exactly `passes` whole passes of its trace, one run
// (no iteration estimate, so the same work in every process: instruction counts under callgrind
// difference two pass counts exactly). 0: Google Benchmark's timing decides (the default).
void set_replay_passes(std::uint64_t passes) noexcept;

// Drops the workloads' reference to the backend (after RunSpecifiedBenchmarks).
void release_backend() noexcept;

// ---- the pieces of a workload, for the workloads of other units (serve, serve_devices) --------

inline constexpr std::size_t kib = 1024;
inline constexpr std::size_t mib = 1024 * 1024;

// The backend every workload runs on (register_benchmarks' `device`).
[[nodiscard]] const std::shared_ptr<cudapool::backend>& shared_device() noexcept;

// ---- small tools -----------------------------------------------------------------------------

// xorshift64*: cheap enough for the timed loops.
struct fast_random {
  std::uint64_t s;
  explicit fast_random(std::uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull | 1) {}
  std::uint64_t operator()() noexcept {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
};

// `count` sizes drawn log-uniformly in [lo, hi].
inline std::vector<std::size_t> log_uniform_sizes(std::size_t count, std::size_t lo, std::size_t hi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(std::log(static_cast<double>(lo)), std::log(static_cast<double>(hi)));
  std::vector<std::size_t> sizes(count);
  for (std::size_t& s : sizes) {
    s = std::clamp(static_cast<std::size_t>(std::llround(std::exp(u(rng)))), lo, hi);
  }
  return sizes;
}

// ---- the shared state of one benchmark run -------------------------------------------------

// One per registered benchmark; every run (Google Benchmark runs a benchmark several times: the
// iteration estimate and each repetition) sets it up afresh in thread 0 and tears it down after
// all threads are done.
struct run_context {
  // A barrier over the run's threads (their number changes between runs).
  void sync(int n) {
    std::unique_lock lock(mutex);
    const std::uint64_t phase = barrier_phase;
    if (++barrier_waiting == n) {
      barrier_waiting = 0;
      ++barrier_phase;
      cv.notify_all();
      return;
    }
    cv.wait(lock, [&] { return barrier_phase != phase; });
  }

  std::mutex mutex;
  std::condition_variable cv;
  int barrier_waiting = 0;
  std::uint64_t barrier_phase = 0;

  std::unique_ptr<bench_allocator> alloc;
  std::shared_ptr<counting_backend> counted;  // the pool's device, when run_options::count_device_calls
  std::vector<cudapool::stream_ref> home;     // per thread: a peer's own stream; {} for pools
  std::vector<cudapool::stream_ref> streams;  // the workload's streams (streams, replay, serve)
  std::string setup_error;
  std::atomic<bool> abort{false};   // a thread failed: partners stop waiting for it
  std::atomic<std::uint64_t> frees{0};
  std::vector<std::unique_ptr<spsc_ring<void*>>> rings;  // prodcons
};

struct run_options {
  bool home_streams = true;  // peers get one stream per thread
  unsigned streams = 0;      // streams made for the workload
  bool track_reserved = false;
  bool count_device_calls = false;  // pools: their device is a counting_backend (context.counted)
  // With count_device_calls, on the sim only: the counting_backend settles events on query
  // (settle_on_query: a query waits for its event), as the GPU completes them when nothing runs on
  // the device. For workloads without device work (replay): memory then does not depend on when
  // the development machine schedules the sim's stream workers.
  bool settle_sim_events = false;
  // With count_device_calls, on any backend (workloads without device work only): the pools' event
  // calls never reach the device and find their events complete (counting_backend's elide).
  bool elide_events = false;
  std::function<void(run_context&, int threads)> setup;  // workload set-up in thread 0
};


// Set-up before the timed loop and tear-down after it, for every workload. Construct before the
// loop; call finish() after it. When set-up fails the thread has already called SkipWithError and
// the loop runs no iteration.
class run_scope {
 public:
  run_scope(benchmark::State& state, run_context& ctx, const allocator_config& config, const run_options& options)
      : state_(state), ctx_(ctx), thread_(state.thread_index()), threads_(state.threads()) {
    if (thread_ == 0) setup(config, options);
    ctx_.sync(threads_);
    if (!ctx_.setup_error.empty()) {
      state_.SkipWithError(ctx_.setup_error.c_str());
      return;
    }
    attached_ = ctx_.alloc->attach_thread();
    if (!attached_) {
      fail({}, false);
      return;
    }
    ok_ = true;
  }

  [[nodiscard]] bool ok() const noexcept { return ok_ && !failed_; }
  [[nodiscard]] bench_allocator* allocator() const noexcept { return ctx_.alloc.get(); }
  [[nodiscard]] cudapool::stream_ref home() const noexcept {
    return static_cast<std::size_t>(thread_) < ctx_.home.size() ? ctx_.home[thread_] : cudapool::stream_ref{};
  }
  [[nodiscard]] cudapool::stream_ref home_of(int thread) const noexcept {
    return static_cast<std::size_t>(thread) < ctx_.home.size() ? ctx_.home[thread] : cudapool::stream_ref{};
  }
  [[nodiscard]] int thread() const noexcept { return thread_; }
  [[nodiscard]] int threads() const noexcept { return threads_; }
  [[nodiscard]] run_context& context() const noexcept { return ctx_; }

  // Reports the calling thread's last_error() and tells the other threads to stop waiting.
  // in_loop: called in the timed loop, which the caller then leaves with `break`.
  void fail(const std::string& context = {}, bool in_loop = true) {
    failed_ = true;
    left_loop_ |= in_loop;
    std::string m = last_error();
    if (!context.empty()) m = context + ": " + m;
    if (m.empty()) m = "failed";
    state_.SkipWithError(m.c_str());  // first: the run reports the first thread's message
    ctx_.abort.store(true, std::memory_order_relaxed);
  }
  // A thread that leaves its loop because another one failed (Google Benchmark requires every
  // thread that stops early to have skipped).
  void abandon() {
    failed_ = true;
    left_loop_ = true;
    state_.SkipWithError("stopped: another thread of this benchmark failed");
  }

  // After the timed loop, in every thread. `frees`: stream-ordered frees this thread made.
  // Thread 0 then, once every thread is done: flushes the streams, calls on_last (counters),
  // destroys the allocator and the streams.
  void finish(std::uint64_t frees = 0, const std::function<void(run_context&)>& on_last = {}) {
    // A thread that left the loop with `break` has not passed Google Benchmark's end-of-loop
    // barrier, which the other threads wait in: this call (total iterations 0 after
    // SkipWithError) finishes its loop.
    if (left_loop_) (void)state_.KeepRunning();
    ctx_.frees.fetch_add(frees, std::memory_order_relaxed);
    if (attached_) ctx_.alloc->detach_thread();
    ctx_.sync(threads_);
    if (thread_ != 0) return;
    std::string error;
    try {
      if (ctx_.alloc != nullptr) {
        for (const cudapool::stream_ref s : ctx_.streams) ctx_.alloc->flush_stream(s);
        for (const cudapool::stream_ref s : ctx_.home) ctx_.alloc->flush_stream(s);
        if (on_last && ctx_.setup_error.empty()) on_last(ctx_);
      }
    } catch (const std::exception& e) {
      error = std::string("tear-down: ") + e.what();
    }
    ctx_.alloc.reset();
    ctx_.counted.reset();
    ctx_.rings.clear();
    for (const cudapool::stream_ref s : ctx_.streams) destroy_stream(s, error);
    for (const cudapool::stream_ref s : ctx_.home) destroy_stream(s, error);
    ctx_.streams.clear();
    ctx_.home.clear();
    if (!error.empty() && ctx_.setup_error.empty() && !failed_) state_.SkipWithError(error.c_str());
  }

 private:
  void setup(const allocator_config& config, const run_options& options) {
    ctx_.setup_error.clear();
    ctx_.abort.store(false, std::memory_order_relaxed);
    ctx_.frees.store(0, std::memory_order_relaxed);
    try {
      std::shared_ptr<cudapool::backend> device = shared_device();
      if (options.count_device_calls && config.what == allocator_config::kind::pool) {
        const event_mode mode = options.elide_events ? event_mode::elide
                                : options.settle_sim_events && device->name() == "sim" ? event_mode::settle
                                                                                       : event_mode::forward;
        ctx_.counted = std::make_shared<counting_backend>(device, mode);
        device = ctx_.counted;
      }
      ctx_.alloc = bench_allocator::make(config, device);
      if (options.track_reserved) ctx_.alloc->track_reserved();
      if (options.home_streams && ctx_.alloc->wants_home_streams()) {
        for (int t = 0; t < threads_; ++t) ctx_.home.push_back(shared_device()->create_stream());
      }
      for (unsigned i = 0; i < options.streams; ++i) ctx_.streams.push_back(shared_device()->create_stream());
      if (options.setup) options.setup(ctx_, threads_);
    } catch (const std::exception& e) {
      ctx_.setup_error = "set-up of " + config.label + ": " + e.what();
    }
  }

  static void destroy_stream(cudapool::stream_ref s, std::string& error) {
    try {
      shared_device()->destroy_stream(s);
    } catch (const std::exception& e) {
      if (error.empty()) error = std::string("tear-down: ") + e.what();
    }
  }

  benchmark::State& state_;
  run_context& ctx_;
  int thread_;
  int threads_;
  bool ok_ = false;
  bool failed_ = false;
  bool left_loop_ = false;
  bool attached_ = false;
};

inline void pool_reserved_counter(benchmark::State& state, run_context& ctx) {
  if (auto st = ctx.alloc->stats()) {
    state.counters["reserved_MiB"] = static_cast<double>(st->reserved_bytes) / mib;
  }
}

// Device-side waits of one stream on another per 1000 allocations (pools): how often the pool made
// a stream wait for another's unrelated work to find memory (each wait can serialise the two).
inline void stream_waits_counter(benchmark::State& state, const cudapool::pool_stats& st) {
  if (st.allocs > 0) {
    state.counters["stream_waits_per_1k_allocs"] =
        1000.0 * static_cast<double>(st.stream_waits) / static_cast<double>(st.allocs);
  }
}

// Why the pool's epochs closed (pool_stats::epochs_closed_*), per 1000 of `of` (operations,
// allocations): counters closed_<full|bytes|slow_path|other>_<name>.
inline void close_reason_counters(benchmark::State& state, const cudapool::pool_stats& st, double of, const char* name) {
  if (of <= 0) return;
  const std::pair<const char*, std::uint64_t> closed[] = {{"full", st.epochs_closed_full},
                                                             {"bytes", st.epochs_closed_bytes},
                                                             {"slow_path", st.epochs_closed_slow_path},
                                                             {"other", st.epochs_closed_other}};
  for (const auto& [why, n] : closed) {
    state.counters[std::string("closed_") + why + "_" + name] = 1000.0 * static_cast<double>(n) / of;
  }
}

// Where a pool's slow paths went, per 1000 allocations (serve): slab and heap growth, epochs
// closed (one event each), backend maps and unmaps. What tells two variants of equal hot paths
// apart when a whole program runs.
inline void pool_activity_counters(benchmark::State& state, const cudapool::pool_stats& st) {
  if (st.allocs == 0) return;
  const double per_1k = 1000.0 / static_cast<double>(st.allocs);
  state.counters["grows_per_1k_allocs"] = per_1k * static_cast<double>(st.grows);
  state.counters["events_per_1k_allocs"] = per_1k * static_cast<double>(st.events_recorded);
  state.counters["maps_per_1k_allocs"] = per_1k * static_cast<double>(st.heap.maps);
  state.counters["unmaps_per_1k_allocs"] = per_1k * static_cast<double>(st.heap.unmaps);
}

// The pool's device calls (run_options::count_device_calls), per `unit` of `of` (operations,
// allocations): counters device_records_<name>, device_queries_<name> (of which
// device_stream_queries_<name>: stream queries, the rest event queries; device_busy_stream_queries_<name>:
// the stream queries that found the stream busy), device_waits_<name>.
inline void device_call_counters(benchmark::State& state, const run_context& ctx, double of, const char* name) {
  if (!ctx.counted || of <= 0) return;
  const device_call_counts n = ctx.counted->counts();
  const auto per = [&](std::uint64_t v) { return static_cast<double>(v) / of; };
  state.counters[std::string("device_records_") + name] = per(n.records);
  state.counters[std::string("device_queries_") + name] = per(n.queries);
  state.counters[std::string("device_stream_queries_") + name] = per(n.stream_queries);
  state.counters[std::string("device_incomplete_queries_") + name] = per(n.incomplete_queries);
  if (n.stream_queries > 0) state.counters[std::string("device_busy_stream_queries_") + name] = per(n.busy_stream_queries);
  state.counters[std::string("device_waits_") + name] = per(n.waits + n.stream_waits);
  // forward mode only (0 otherwise): ns inside record(), event query() and query_stream() per call.
  if (n.records > 0 && n.record_ns > 0) state.counters["device_record_ns_per_call"] = double(n.record_ns) / double(n.records);
  const std::uint64_t event_queries = n.queries - n.stream_queries;
  if (event_queries > 0 && n.query_ns > 0) state.counters["device_query_ns_per_call"] = double(n.query_ns) / double(event_queries);
  if (n.stream_queries > 0 && n.stream_query_ns > 0) {
    state.counters["device_stream_query_ns_per_call"] = double(n.stream_query_ns) / double(n.stream_queries);
  }
}

// ---- registration ------------------------------------------------------------------------------

inline std::vector<int> thread_counts(std::initializer_list<int> counts, int max_threads) {
  std::vector<int> out;
  for (const int t : counts) {
    if (t <= max_threads) out.push_back(t);
  }
  return out;
}

template <class F>
void add(const std::string& name, const std::vector<int>& threads, F&& body) {
  if (threads.empty()) return;
  auto ctx = std::make_shared<run_context>();
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [ctx, body](benchmark::State& s) { body(s, *ctx); });
  for (const int t : threads) b->Threads(t);
  b->UseRealTime();
}

}  // namespace bench
