// workloads.cpp - see workloads.hpp for what each workload measures.
#include "workloads.hpp"

#include "fit_floor.hpp"

#include <cudapool/lockfree_pool.hpp>
#include <cudapool/mutex_pool.hpp>
#include <cudapool/stream_pool.hpp>
#include <cudapool/tls_pool.hpp>
#include "spin_wait.hpp"
#include "spsc_ring.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

namespace bench {
namespace {

using cudapool::stream_ref;

std::shared_ptr<cudapool::backend> g_device;
std::uint64_t g_replay_passes = 0;  // set_replay_passes

// ---- workloads ---------------------------------------------------------------------------------

// allocate(next_size()) + deallocate on the thread's home stream, once per iteration.
template <class NextSize>
void alloc_free_pairs(benchmark::State& state, run_context& ctx, const allocator_config& config, NextSize next_size) {
  run_scope run(state, ctx, config, {});
  bench_allocator* a = run.allocator();
  const stream_ref home = run.home();
  for (auto _ : state) {
    void* p = a->allocate(next_size(run), home);
    if (p == nullptr) [[unlikely]] {
      run.fail();
      break;
    }
    benchmark::DoNotOptimize(p);
    if (!a->deallocate(p, home)) [[unlikely]] {
      run.fail();
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  run.finish(0, [&](run_context& c) { pool_reserved_counter(state, c); });
}

// pair with the pool's concrete type: what a program that names its variant pays, without the
// any_pool virtual calls and the handle's error wrapper that every other workload goes through.
template <class Pool>
void pair_direct(benchmark::State& state, run_context& ctx, const allocator_config& config, std::size_t bytes) {
  run_scope run(state, ctx, config, {});
  Pool* pool = run.ok() ? run.allocator()->concrete<Pool>() : nullptr;
  if (pool == nullptr && run.ok()) run.fail("pair_direct: not a " + std::string(Pool::variant()) + " pool", false);
  for (auto _ : state) {
    if (pool == nullptr) [[unlikely]] break;
    void* p = pool->try_allocate(bytes);
    if (p == nullptr) [[unlikely]] {
      run.fail();
      break;
    }
    benchmark::DoNotOptimize(p);
    pool->deallocate(p);
  }
  state.SetItemsProcessed(state.iterations());
  run.finish(0, [&](run_context& c) { pool_reserved_counter(state, c); });
}

void pair(benchmark::State& state, run_context& ctx, const allocator_config& config, std::size_t bytes) {
  alloc_free_pairs(state, ctx, config, [bytes](run_scope&) { return bytes; });
}

enum class batch_order { lifo, fifo, random };
constexpr std::size_t batch_size = 64;

void batch(benchmark::State& state, run_context& ctx, const allocator_config& config, batch_order order) {
  run_scope run(state, ctx, config, {});
  bench_allocator* a = run.allocator();
  const stream_ref home = run.home();
  // The free orders, cycled per iteration: one for lifo and fifo, 8 shuffles for random.
  std::vector<std::array<std::uint8_t, batch_size>> orders(order == batch_order::random ? 8 : 1);
  std::mt19937_64 rng(1234 + run.thread());
  for (auto& o : orders) {
    std::iota(o.begin(), o.end(), std::uint8_t{0});
    if (order == batch_order::lifo) std::reverse(o.begin(), o.end());
    if (order == batch_order::random) std::shuffle(o.begin(), o.end(), rng);
  }
  std::array<void*, batch_size> blocks{};
  std::size_t next_order = 0;
  for (auto _ : state) {
    std::size_t n = 0;
    for (; n < batch_size; ++n) {
      blocks[n] = a->allocate(4 * kib, home);
      if (blocks[n] == nullptr) [[unlikely]] break;
    }
    if (n < batch_size) [[unlikely]] {
      run.fail();
      for (std::size_t i = 0; i < n; ++i) (void)a->deallocate(blocks[i], home);
      break;
    }
    const auto& o = orders[next_order++ % orders.size()];
    std::size_t i = 0;
    for (; i < batch_size; ++i) {
      if (!a->deallocate(blocks[o[i]], home)) [[unlikely]] break;
    }
    if (i < batch_size) [[unlikely]] {
      run.fail();
      for (++i; i < batch_size; ++i) (void)a->deallocate(blocks[o[i]], home);
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(batch_size));
  run.finish(0, [&](run_context& c) { pool_reserved_counter(state, c); });
}

void mix(benchmark::State& state, run_context& ctx, const allocator_config& config) {
  std::vector<std::size_t> sizes;
  std::size_t i = 0;
  alloc_free_pairs(state, ctx, config, [&](run_scope& run) {
    if (sizes.empty()) sizes = log_uniform_sizes(4096, 256, mib, 42 + run.thread());
    return sizes[i++ & 4095];
  });
}

// Threads 2k (producer) and 2k + 1 (consumer) share ring k. Both run the same number of
// iterations, so every block handed over is freed by the end of the loop.
void prodcons(benchmark::State& state, run_context& ctx, const allocator_config& config) {
  run_options options;
  options.setup = [](run_context& c, int threads) {
    for (int k = 0; k < threads / 2; ++k) c.rings.push_back(std::make_unique<spsc_ring<void*>>());
  };
  run_scope run(state, ctx, config, options);
  bench_allocator* a = run.allocator();
  const int pair_index = run.thread() / 2;
  const bool producer = run.thread() % 2 == 0;
  // An odd last thread (never registered) would have no partner.
  const bool has_ring = static_cast<std::size_t>(pair_index) < ctx.rings.size() && run.ok();
  spsc_ring<void*>* ring = has_ring ? ctx.rings[pair_index].get() : nullptr;
  const stream_ref producer_stream = run.home_of(pair_index * 2);
  if (ring == nullptr && run.ok()) run.fail("prodcons needs an even number of threads", false);
  std::atomic<bool>& abort = ctx.abort;
  benchmark::IterationCount done = 0;
  for (auto _ : state) {
    if (producer) {
      void* p = a->allocate(4 * kib, producer_stream);
      if (p == nullptr) [[unlikely]] {
        run.fail();
        break;
      }
      spin_wait wait;
      bool handed_over = true;
      while (!ring->push(p)) {
        if (abort.load(std::memory_order_relaxed)) [[unlikely]] {
          handed_over = false;
          break;
        }
        wait();
      }
      if (!handed_over) [[unlikely]] {
        (void)a->deallocate(p, producer_stream);
        run.abandon();
        break;
      }
      // The last pointers of a partial batch, inside the loop: Google Benchmark's threads wait
      // for each other at its end, so the consumer must have them before.
      if (++done == state.max_iterations) ring->flush();
    } else {
      void* p = nullptr;
      spin_wait wait;
      while ((p = ring->pop()) == nullptr) {
        if (abort.load(std::memory_order_relaxed)) [[unlikely]] break;
        wait();
      }
      if (p == nullptr) [[unlikely]] {
        run.abandon();
        break;
      }
      if (!a->deallocate(p, producer_stream)) [[unlikely]] {
        run.fail();
        break;
      }
    }
  }
  if (producer) state.SetItemsProcessed(state.iterations());
  run.finish(0, [&](run_context& c) {
    // After a failure, blocks may be left in the rings: free them.
    for (std::size_t k = 0; k < c.rings.size(); ++k) {
      const stream_ref s = k * 2 < c.home.size() ? c.home[k * 2] : stream_ref{};
      while (void* p = c.rings[k]->pop()) (void)c.alloc->deallocate(p, s);
    }
    pool_reserved_counter(state, c);
  });
}

constexpr std::size_t larson_window = 128;
constexpr std::size_t larson_ops = 4096;  // per generation (one benchmark iteration)

void larson(benchmark::State& state, run_context& ctx, const allocator_config& config) {
  run_scope run(state, ctx, config, {});
  bench_allocator* a = run.allocator();
  const stream_ref home = run.home();
  const std::vector<std::size_t> sizes = log_uniform_sizes(4096, 256, 64 * kib, 7 + run.thread());
  std::vector<void*> window(larson_window, nullptr);
  fast_random rng(99 + run.thread());
  if (run.ok()) {
    for (void*& p : window) {
      p = a->allocate(sizes[rng() & 4095], home);
      if (p == nullptr) {
        run.fail("larson set-up", false);
        break;
      }
    }
  }
  std::string generation_error;
  for (auto _ : state) {
    // The next generation: a fresh thread that inherits the window and leaves it to its successor.
    std::thread generation([&] {
      if (!a->attach_thread()) {
        generation_error = last_error();
        return;
      }
      for (std::size_t op = 0; op < larson_ops; ++op) {
        const std::uint64_t r = rng();
        void*& slot = window[r % larson_window];
        if (!a->deallocate(slot, home)) [[unlikely]] {
          generation_error = last_error();
          slot = nullptr;
          break;
        }
        slot = a->allocate(sizes[(r >> 32) & 4095], home);
        if (slot == nullptr) [[unlikely]] {
          generation_error = last_error();
          break;
        }
      }
      a->detach_thread();
    });
    generation.join();
    if (!generation_error.empty()) [[unlikely]] {
      set_last_error(generation_error);
      run.fail();
      break;
    }
  }
  // The last generation's window (or what set-up got of it) is freed, untimed.
  if (a != nullptr) {
    for (void* p : window) {
      if (p != nullptr) (void)a->deallocate(p, home);
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(larson_ops));
  run.finish(0, [&](run_context& c) { pool_reserved_counter(state, c); });
}

constexpr unsigned stream_count = 16;

void streams(benchmark::State& state, run_context& ctx, const allocator_config& config, bool cross) {
  run_options options;
  options.home_streams = false;
  options.streams = stream_count;
  run_scope run(state, ctx, config, options);
  bench_allocator* a = run.allocator();
  const stream_ref alloc_stream = run.ok() ? ctx.streams[run.thread() % stream_count] : stream_ref{};
  const stream_ref free_stream =
      run.ok() ? ctx.streams[(run.thread() + (cross ? 1 : 0)) % stream_count] : stream_ref{};
  std::uint64_t frees = 0;
  for (auto _ : state) {
    void* p = a->allocate(4 * kib, alloc_stream);
    if (p == nullptr) [[unlikely]] {
      run.fail();
      break;
    }
    benchmark::DoNotOptimize(p);
    if (!a->deallocate(p, alloc_stream, free_stream)) [[unlikely]] {
      run.fail();
      break;
    }
    ++frees;
  }
  state.SetItemsProcessed(state.iterations());
  run.finish(frees, [&](run_context& c) {
    if (auto st = c.alloc->stats()) {
      const std::uint64_t n = c.frees.load(std::memory_order_relaxed);
      if (n > 0) state.counters["events_per_free"] = static_cast<double>(st->events_recorded) / static_cast<double>(n);
      stream_waits_counter(state, *st);
      state.counters["reserved_MiB"] = static_cast<double>(st->reserved_bytes) / mib;
    }
  });
}

// best_fit_floor of a trace at 2 MiB pages, computed once per trace (every allocator's replay
// reports it).
std::size_t floor_of(const trace& t) {
  static std::mutex m;
  static std::map<const trace*, std::size_t> floors;
  std::lock_guard lock(m);
  auto [it, fresh] = floors.try_emplace(&t, 0);
  if (fresh) it->second = best_fit_floor(t, std::size_t{2} << 20);
  return it->second;
}

// How replay frees: stream-ordered on the trace's stream (as recorded), stream-ordered with the
// pool's event calls elided (counting_backend's elide: they never reach the device and find their
// events complete; pools only), or immediately (pools only). threads: stream-ordered, each
// operation made by the host thread the trace names (trace_writer's thread column), in the trace's
// order (pools only, traces of several threads): what a variant keeps per thread (tls's caches)
// meets the program's threads as recorded. Its times include the hand-over between threads.
// per_stream (pools only, traces of several streams): a bound for a design in which streams keep
// to their own memory, measured with today's pools: one pool of the variant per trace stream; an
// allocation on stream s comes from s's pool, a free on the stream it was allocated on goes back
// at once (only s allocates from that pool, so stream order makes the reuse safe: no epoch, no
// event), a free on another stream is stream-ordered in the allocating stream's pool. Its peak
// reserved bytes are the sum of the pools' peaks: what such a design holds when memory never
// moves between streams. per_stream_ordered: the same pools with every free stream-ordered, as a
// program can use them today (a pool per stream, like cudapool::per_device's pool per device; an
// immediate free would let the pool unmap a page the stream still uses).
enum class replay_mode { ordered, elided, immediate, threads, per_stream, per_stream_ordered };

// The host threads of a threads replay other than the benchmark's own (trace thread 0): each runs
// the operation it is handed, and hands it back, so that the trace's order holds exactly.
class replay_threads {
 public:
  // run(pos, thread) makes operation pos on trace thread `thread` (>= 1); false: it failed.
  template <class Step>
  replay_threads(unsigned threads, Step step) {
    for (unsigned i = 1; i < threads; ++i) workers_.push_back(std::make_unique<worker>());
    try {
      for (auto& worker_ptr : workers_) start(*worker_ptr, step);
    } catch (...) {
      stop_all();  // those started; std::thread throws (std::system_error) when none can be made
      throw;
    }
  }
  replay_threads(const replay_threads&) = delete;
  replay_threads& operator=(const replay_threads&) = delete;
  ~replay_threads() { stop_all(); }
  // Operation pos on trace thread t (>= 1), waited for.
  bool run(std::size_t pos, unsigned t) {
    worker& w = *workers_[t - 1];
    w.job.store(static_cast<std::int64_t>(pos), std::memory_order_release);
    spin_wait wait;
    while (w.job.load(std::memory_order_acquire) != idle) wait();
    return w.ok.load(std::memory_order_relaxed);
  }
  // Operations the other threads made.
  [[nodiscard]] std::uint64_t ran() const {
    std::uint64_t n = 0;
    for (const auto& w : workers_) n += w->ran.load(std::memory_order_relaxed);
    return n;
  }

 private:
  static constexpr std::int64_t idle = -1;
  static constexpr std::int64_t stop = -2;
  struct worker {
    std::atomic<std::int64_t> job{idle};
    std::atomic<bool> ok{true};
    std::atomic<std::uint64_t> ran{0};
    std::thread thread;
  };

  template <class Step>
  static void start(worker& w, Step step) {
    w.thread = std::thread([&w, step] {
      for (;;) {
        spin_wait wait;
        std::int64_t job;
        while ((job = w.job.load(std::memory_order_acquire)) == idle) wait();
        if (job == stop) return;
        const bool ok = step(static_cast<std::size_t>(job));
        w.ok.store(ok, std::memory_order_relaxed);
        w.ran.fetch_add(1, std::memory_order_relaxed);
        w.job.store(idle, std::memory_order_release);
      }
    });
  }
  void stop_all() noexcept {
    for (auto& w : workers_) {
      if (!w->thread.joinable()) continue;
      w->job.store(stop, std::memory_order_release);
      w->thread.join();
    }
  }

  std::vector<std::unique_ptr<worker>> workers_;
};

// One operation of a replay (trace operation i); false when the allocator refused it. pool_of(s):
// the allocator of trace stream s; ordered: frees stream-ordered on the trace's stream, except, with
// OwnImmediate, a free on the allocating stream (per_stream), which is immediate.
template <bool OwnImmediate, class PoolOf>
auto replay_step(const trace& t, std::vector<void*>& slots, const std::vector<stream_ref>& streams, PoolOf pool_of,
                 bool ordered) {
  return [&t, &slots, &streams, pool_of, ordered](std::size_t i) {
    const trace_op& o = t.ops[i];
    if (o.alloc) {
      void* p = pool_of(o.stream)->allocate(o.bytes, streams[o.stream]);
      if (p == nullptr) [[unlikely]] return false;
      slots[o.slot] = p;
      return true;
    }
    void* p = std::exchange(slots[o.slot], nullptr);
    bench_allocator* home = pool_of(o.alloc_stream);
    if constexpr (OwnImmediate) {
      if (o.alloc_stream == o.stream) return home->deallocate(p, streams[o.alloc_stream]);
    }
    return ordered ? home->deallocate(p, streams[o.alloc_stream], streams[o.stream]) : home->deallocate(p, streams[o.alloc_stream]);
  };
}

void replay(benchmark::State& state, run_context& ctx, const allocator_config& config, const trace& t,
            replay_mode mode) {
  const bool ordered = mode != replay_mode::immediate;
  run_options options;
  options.home_streams = false;
  options.streams = t.streams;
  options.track_reserved = true;
  options.count_device_calls = true;
  options.settle_sim_events = true;
  options.elide_events = mode == replay_mode::elided;
  run_scope run(state, ctx, config, options);
  bench_allocator* a = run.allocator();
  const std::vector<stream_ref>& streams = ctx.streams;
  // per_stream modes: the run's pool serves trace stream 0, one more pool of the same configuration
  // on the same (counted) device each other stream.
  const bool per_stream = mode == replay_mode::per_stream || mode == replay_mode::per_stream_ordered;
  std::vector<std::unique_ptr<bench_allocator>> more;
  std::vector<bench_allocator*> pool_of{a};  // by trace stream (per_stream modes)
  if (per_stream && run.ok()) {
    try {
      std::shared_ptr<cudapool::backend> device = ctx.counted;
      if (device == nullptr) device = shared_device();
      for (unsigned i = 1; i < t.streams; ++i) {
        more.push_back(bench_allocator::make(config, device));
        pool_of.push_back(more.back().get());
      }
    } catch (const std::exception& e) {
      set_last_error(std::string("per-stream pools: ") + e.what());
      run.fail({}, false);
    }
  }
  std::vector<void*> slots(t.slots, nullptr);
  const std::size_t n = t.ops.size();
  std::size_t pos = 0;
  const auto loop = [&](auto step) {  // the modes' loop: nothing but the operation
    for (auto _ : state) {
      if (!step(pos)) [[unlikely]] {
        run.fail(t.name + " operation " + std::to_string(pos));
        break;
      }
      if (++pos == n) pos = 0;
    }
  };
  const auto single = replay_step<false>(t, slots, streams, [a](unsigned) { return a; }, ordered);
  const auto by_stream = [&pool_of](unsigned s) { return pool_of[s]; };
  std::optional<replay_threads> others;
  if (mode == replay_mode::threads && a != nullptr) others.emplace(t.threads, single);
  if (others) {
    for (auto _ : state) {
      const unsigned thread = t.ops[pos].thread;
      if (!(thread == 0 ? single(pos) : others->run(pos, thread))) [[unlikely]] {
        run.fail(t.name + " operation " + std::to_string(pos));
        break;
      }
      if (++pos == n) pos = 0;
    }
  } else if (mode == replay_mode::per_stream) {
    if (run.ok()) loop(replay_step<true>(t, slots, streams, by_stream, ordered));
  } else if (per_stream) {
    if (run.ok()) loop(replay_step<false>(t, slots, streams, by_stream, ordered));
  } else {
    loop(single);
  }
  const std::uint64_t on_other_threads = others ? others->ran() : 0;
  others.reset();
  const std::uint64_t replayed = static_cast<std::uint64_t>(state.iterations());
  // What is still live when the loop stops mid-trace (or fails) is freed, untimed.
  const bool ok = run.ok();
  if (a != nullptr) {  // (no slot is filled unless every pool was made)
    for (std::size_t i = 0; i < slots.size(); ++i) {
      if (slots[i] == nullptr) continue;
      const unsigned home = t.slot_stream[i];
      const stream_ref s = streams[home];
      if (!pool_of[per_stream ? home : 0]->deallocate(slots[i], s, s) && run.ok()) run.fail("replay clean-up", false);
    }
  }
  // per_stream modes: the other pools' peaks (memory never moves between them) and events, taken
  // before they go (run.finish then flushes and reads the run's own pool).
  std::size_t more_reserved = 0;
  std::uint64_t more_events = 0;
  std::uint64_t more_allocs = 0;
  try {
    for (const auto& pool : more) {
      for (const stream_ref s : streams) pool->flush_stream(s);
      more_reserved += pool->peak_reserved_bytes().value_or(0);
      if (const auto st = pool->stats()) {
        more_events += st->events_recorded;
        more_allocs += st->allocs;
      }
    }
  } catch (const std::exception& e) {
    if (run.ok()) {
      set_last_error(e.what());
      run.fail("tear-down", false);
    }
  }
  more.clear();  // before run.finish destroys the streams
  state.SetItemsProcessed(state.iterations());
  run.finish(0, [&](run_context& c) {
    if (!ok || replayed == 0) return;
    if (mode == replay_mode::threads) state.counters["ops_on_other_threads"] = static_cast<double>(on_other_threads);
    const std::size_t live = t.peak_live_upto[std::min<std::uint64_t>(replayed, n) - 1];
    state.counters["peak_live_MiB"] = static_cast<double>(live) / mib;
    if (const auto own = c.alloc->peak_reserved_bytes()) {
      const std::size_t reserved = *own + more_reserved;
      state.counters["peak_reserved_MiB"] = static_cast<double>(reserved) / mib;
      if (live > 0) state.counters["reserved_over_live"] = static_cast<double>(reserved) / static_cast<double>(live);
    }
    if (per_stream) {
      // The pools' events summed (pool_activity_counters reads one pool's stats).
      const auto st = c.alloc->stats();
      const std::uint64_t events = more_events + (st ? st->events_recorded : 0);
      const std::uint64_t allocs = more_allocs + (st ? st->allocs : 0);
      if (allocs > 0) state.counters["events_per_1k_allocs"] = 1000.0 * static_cast<double>(events) / static_cast<double>(allocs);
      state.counters["events_per_op"] = static_cast<double>(events) / static_cast<double>(replayed);
    } else if (const auto st = c.alloc->stats()) {
      pool_activity_counters(state, *st);
      // x limit/epoch_event's ns: what the epochs of the stream-ordered frees cost per operation.
      state.counters["events_per_op"] = static_cast<double>(st->events_recorded) / static_cast<double>(replayed);
      close_reason_counters(state, *st, static_cast<double>(replayed), "per_1k_ops");  // why they closed
    }
    device_call_counters(state, c, static_cast<double>(replayed), "per_op");
    // The floor of non-moving best fit at 2 MiB pages (fit_floor.hpp), for whole passes.
    if (live > 0 && replayed >= n) {
      state.counters["floor_over_live"] =
          static_cast<double>(floor_of(t)) / static_cast<double>(t.peak_live);
    }
  });
}


// limit/epoch_event: the host's cost of one epoch of stream-ordered frees, which every pool pays
// per closed epoch whatever its variant: an event recorded on a stream (close_epoch, core/epoch_protocol.hpp)
// and, later, one query (reclaim). A ring of 64 events on one stream, as a pool reuses its
// events: each iteration queries the event recorded 64 iterations before, once (a pool does not
// wait either), and records it again. incomplete_queries_per_1k counts the queries that found
// the event still pending: where it is high, the device completes events more slowly than the
// host records them, and the figure is the host's cost only.
void epoch_event(benchmark::State& state) {
  cudapool::backend& device = *g_device;
  constexpr std::size_t ring = 64;
  cudapool::stream_ref s{};
  std::vector<cudapool::event_handle> events;
  std::uint64_t incomplete = 0;
  try {
    s = device.create_stream();
    for (std::size_t i = 0; i < ring; ++i) {
      events.push_back(device.acquire_event());
      device.record(events.back(), s);
    }
    std::size_t next = 0;
    for (auto _ : state) {
      const cudapool::event_handle e = events[next];
      if (!device.query(e)) ++incomplete;
      device.record(e, s);
      next = (next + 1) % ring;
    }
    device.synchronize(s);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
  for (const cudapool::event_handle e : events) device.release_event(e);
  if (s.native() != nullptr) {
    try {
      device.destroy_stream(s);
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
    }
  }
  state.SetItemsProcessed(state.iterations());
  if (state.iterations() > 0) {
    state.counters["incomplete_queries_per_1k"] = 1000.0 * static_cast<double>(incomplete) / static_cast<double>(state.iterations());
  }
}

}  // namespace

const std::shared_ptr<cudapool::backend>& shared_device() noexcept { return g_device; }

void register_benchmarks(const std::vector<allocator_config>& allocators,
                         const std::vector<std::shared_ptr<const trace>>& traces,
                         std::shared_ptr<cudapool::backend> device) {
  g_device = std::move(device);
  benchmark::RegisterBenchmark("limit/epoch_event", epoch_event)->UseRealTime();
  const auto up_to_64 = {1, 2, 4, 8, 16, 32, 64};
  for (const allocator_config& a : allocators) {
    const std::vector<int> all = thread_counts(up_to_64, a.max_threads);
    for (const std::size_t bytes : {std::size_t{256}, 4 * kib, mib}) {
      if (!a.all_workloads && bytes != 4 * kib) continue;
      add("pair/" + a.label + "/" + std::to_string(bytes), all,
          [a, bytes](benchmark::State& s, run_context& c) { pair(s, c, a, bytes); });
    }
    if (a.what == allocator_config::kind::pool && a.all_workloads && a.name == a.label && !a.plain) {
      const std::vector<int> direct = thread_counts({1, 16}, a.max_threads);
      auto add_direct = [&](auto tag) {
        using pool_type = typename decltype(tag)::type;
        add("pair_direct/" + a.label + "/4096", direct,
            [a](benchmark::State& s, run_context& c) { pair_direct<pool_type>(s, c, a, 4 * kib); });
      };
      if (a.name == "mutex") add_direct(std::type_identity<cudapool::mutex_pool>{});
      if (a.name == "lockfree") add_direct(std::type_identity<cudapool::lockfree_pool>{});
      if (a.name == "tls") add_direct(std::type_identity<cudapool::tls_pool>{});
      if (a.name == "stream") add_direct(std::type_identity<cudapool::stream_pool>{});
    }
    if (!a.all_workloads) continue;
    // batch, mix and larson at 1, 4, 16 and 64 threads only: the GPU suite (every allocator, peers
    // included, min_time 0.1 s x 3 repetitions) must stay within about 5 minutes.
    const std::vector<int> some = thread_counts({1, 4, 16, 64}, a.max_threads);
    for (const auto& o : {std::pair{batch_order::lifo, "lifo"}, std::pair{batch_order::fifo, "fifo"},
                          std::pair{batch_order::random, "random"}}) {
      const batch_order order = o.first;  // (clang 14 cannot capture structured bindings)
      add("batch/" + a.label + "/" + o.second, some,
          [a, order](benchmark::State& s, run_context& c) { batch(s, c, a, order); });
    }
    add("mix/" + a.label, some, [a](benchmark::State& s, run_context& c) { mix(s, c, a); });
    add("prodcons/" + a.label, thread_counts({2, 4, 8, 16, 32, 64}, a.max_threads),
        [a](benchmark::State& s, run_context& c) { prodcons(s, c, a); });
    add("larson/" + a.label, thread_counts({1, 4, 16, 64}, std::min(a.max_threads, a.max_larson_threads)),
        [a](benchmark::State& s, run_context& c) { larson(s, c, a); });
    for (const bool cross : {false, true}) {
      add("streams/" + a.label + (cross ? "/cross" : "/same"), thread_counts({1, 2, 4, 8, 16}, a.max_threads),
          [a, cross](benchmark::State& s, run_context& c) { streams(s, c, a, cross); });
    }
    for (const std::shared_ptr<const trace>& t : traces) {
      // Peers: an immediate free is a free on the allocation stream, which is what the trace does.
      for (const auto& [mode, suffix] : {std::pair{replay_mode::ordered, ""}, std::pair{replay_mode::elided, "/elided"},
                                         std::pair{replay_mode::immediate, "/immediate"}, std::pair{replay_mode::threads, "/threads"},
                                         std::pair{replay_mode::per_stream, "/per_stream"},
                                         std::pair{replay_mode::per_stream_ordered, "/per_stream_ordered"}}) {
        if (mode != replay_mode::ordered && a.what != allocator_config::kind::pool) continue;
        if (mode == replay_mode::threads && t->threads < 2) continue;  // the ordered replay itself
        if ((mode == replay_mode::per_stream || mode == replay_mode::per_stream_ordered) && t->streams < 2) continue;
        auto ctx = std::make_shared<run_context>();
        const replay_mode m = mode;  // (clang 14 cannot capture structured bindings)
        auto* b = benchmark::RegisterBenchmark(("replay/" + a.label + "/" + t->name + suffix).c_str(),
                                               [ctx, a, t, m](benchmark::State& s) { replay(s, *ctx, a, *t, m); });
        b->UseRealTime();
        if (g_replay_passes != 0) b->Iterations(static_cast<benchmark::IterationCount>(g_replay_passes * t->ops.size()));
      }
    }
  }
}

void set_replay_passes(std::uint64_t passes) noexcept { g_replay_passes = passes; }

void release_backend() noexcept { g_device.reset(); }

}  // namespace bench
