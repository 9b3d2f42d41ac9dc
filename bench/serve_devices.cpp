// serve_devices.cpp - see serve_devices.hpp.
#include "serve_devices.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <cudapool/stream_arenas.hpp>
#include <cudapool/lockfree_pool.hpp>
#include <cudapool/mutex_pool.hpp>
#include <cudapool/per_device.hpp>
#include <cudapool/stream_pool.hpp>
#include <cudapool/tls_pool.hpp>

#include "multi_device.hpp"
#include "serve.hpp"
#include "serve_request.hpp"
#include "workloads.hpp"

namespace bench {
namespace {

using cudapool::stream_ref;

// ---- one allocator per device ------------------------------------------------------------------

// A thread's access to its device's pool.
template <class Pool>
struct pool_access {
  Pool* pool;
  [[nodiscard]] void* allocate(std::size_t bytes, stream_ref s) noexcept {
    try {
      return pool->allocate(bytes, s);
    } catch (const std::exception& e) {
      set_last_error(std::string("pool allocate(") + std::to_string(bytes) + " B): " + e.what());
      return nullptr;
    }
  }
  [[nodiscard]] bool deallocate(void* p, std::size_t, stream_ref s) noexcept {
    pool->deallocate(p, s);
    return true;
  }
};

// The cudapool variants: per_device<Pool> over the run's devices (bench's backends: a program with
// backends of its own gives per_device a source, as here; cuda_devices() would make new ones, and a
// simulated stream belongs to the backend that made it). The current device is the thread's CUDA
// one on cuda and its simulated one on sim.
template <class Pool>
class pool_set {
 public:
  using access_type = pool_access<Pool>;

  // Throws when a pool cannot be made.
  pool_set(const allocator_config& config, int devices) : pools_(source(devices), config.options) {
    for (int d = 0; d < devices; ++d) (void)pools_.get(d);  // before the timed loop, as serve's pool
  }

  // In a thread whose current device is `device` (request_work::attach_thread): the pool a thread
  // of a program takes, pools.current(). Throws std::logic_error if that is not device's.
  [[nodiscard]] access_type access(int device) {
    Pool& pool = pools_.current();
    if (&pool != &pools_.get(device)) {
      throw std::logic_error("serve_devices: the current device is not device " + std::to_string(device));
    }
    return {&pool};
  }
  [[nodiscard]] bool attach_thread(int) noexcept { return true; }
  void detach_thread(int) noexcept {}
  void flush_stream(int device, stream_ref s) { pools_.get(device).flush_stream(s); }
  [[nodiscard]] std::optional<cudapool::pool_stats> stats(int device) {
    if (!pools_.created(device)) return std::nullopt;
    return pools_.get(device).stats();
  }

 private:
  static cudapool::per_device_source source(int devices) {
    const bool cuda = multi_device_backends().front()->name() == "cuda";
    return {devices, [](int d) { return multi_device_backends()[static_cast<std::size_t>(d)]; },
            cuda ? std::function<int()>([] { return cudapool::cuda_current_device(); })
                 : std::function<int()>([] { return cudapool::sim_current_device(); })};
  }

  cudapool::per_device<Pool> pools_;
};

// The peers: one per device (make_peer(name, device)), through the workloads' handle.
class peer_set {
 public:
  using access_type = handle_access;

  peer_set(const allocator_config& config, int devices) {
    for (int d = 0; d < devices; ++d) {
      peers_.push_back(bench_allocator::make(config, multi_device_backends()[static_cast<std::size_t>(d)]));
    }
  }
  [[nodiscard]] access_type access(int device) { return {peers_[static_cast<std::size_t>(device)].get()}; }
  [[nodiscard]] bool attach_thread(int device) noexcept {
    return peers_[static_cast<std::size_t>(device)]->attach_thread();
  }
  void detach_thread(int device) noexcept { peers_[static_cast<std::size_t>(device)]->detach_thread(); }
  void flush_stream(int, stream_ref) {}
  [[nodiscard]] std::optional<cudapool::pool_stats> stats(int) { return std::nullopt; }

 private:
  std::vector<std::unique_ptr<bench_allocator>> peers_;
};

// ---- the run ---------------------------------------------------------------------------------------

// Device d's share of a run.
struct device_share {
  std::unique_ptr<request_work> work;
  // Of its threads, written after their loops under `m`.
  std::mutex m;
  std::uint64_t requests = 0;
  double seconds = 0;  // its threads' loops, summed
  int threads = 0;
};

// What one registered benchmark keeps between set-up (thread 0) and tear-down (thread 0, after
// every thread is done); `sync` is the barrier.
template <class Set>
struct devices_slot {
  run_context sync;
  std::string setup_error;
  std::vector<std::unique_ptr<device_share>> shares;  // [device]
  std::vector<stream_ref> streams;                    // [thread], each on device thread % N
  std::unique_ptr<Set> set;
};

cudapool::backend& backend_of(int device) { return *multi_device_backends()[static_cast<std::size_t>(device)]; }

template <class Set>
void setup(devices_slot<Set>& slot, const allocator_config& config, int devices, int threads) {
  slot.setup_error.clear();
  try {
    slot.set = std::make_unique<Set>(config, devices);
    for (int d = 0; d < devices; ++d) {
      slot.shares.push_back(std::make_unique<device_share>());
      slot.shares.back()->work = make_request_work(backend_of(d), threads);
    }
    for (int t = 0; t < threads; ++t) slot.streams.push_back(backend_of(t % devices).create_stream());
  } catch (const std::exception& e) {
    slot.setup_error = "set-up of " + config.label + ": " + e.what();
  }
}

// Thread 0, after every thread is done: the counters, then the allocators, the streams and the
// work go. The streams are flushed before their pools are destroyed, and destroyed after.
template <class Set>
void tear_down(benchmark::State& state, devices_slot<Set>& slot, const std::string& name,
               const allocator_config& config, int devices, bool failed) {
  std::string error;
  try {
    if (slot.setup_error.empty()) {
      for (std::size_t t = 0; t < slot.streams.size(); ++t) {
        slot.set->flush_stream(static_cast<int>(t) % devices, slot.streams[t]);
      }
      std::uint64_t failures = 0;
      std::uint64_t requests = 0;
      cudapool::pool_stats all;
      bool pools = false;
      for (int d = 0; d < devices; ++d) {
        const device_share& share = *slot.shares[static_cast<std::size_t>(d)];
        failures += share.work->failures();
        requests += share.requests;
        if (share.seconds > 0) {
          // Over the mean time of its threads, as Google Benchmark times items_per_second.
          state.counters["device" + std::to_string(d) + "_requests_per_second"] =
              static_cast<double>(share.requests) * share.threads / share.seconds;
        }
        if (const auto st = slot.set->stats(d)) {
          pools = true;
          all.allocs += st->allocs;
          all.stream_waits += st->stream_waits;
          all.reserved_bytes += st->reserved_bytes;
          all.grows += st->grows;
          all.events_recorded += st->events_recorded;
          all.heap.maps += st->heap.maps;
          all.heap.unmaps += st->heap.unmaps;
        }
      }
      report_failures(state, name, config, failures, requests);
      if (pools) {
        stream_waits_counter(state, all);
        pool_activity_counters(state, all);
        state.counters["reserved_MiB"] = static_cast<double>(all.reserved_bytes) / mib;
      }
      // Thread 0 (the main thread) on device 0 again, as before the run.
      if (!slot.shares.front()->work->attach_thread()) error = "tear-down: " + last_error();
    }
  } catch (const std::exception& e) {
    error = std::string("tear-down: ") + e.what();
  }
  slot.set.reset();
  for (std::size_t t = 0; t < slot.streams.size(); ++t) {
    try {
      backend_of(static_cast<int>(t) % devices).destroy_stream(slot.streams[t]);
    } catch (const std::exception& e) {
      if (error.empty()) error = std::string("tear-down: ") + e.what();
    }
  }
  slot.streams.clear();
  slot.shares.clear();
  if (!error.empty() && slot.setup_error.empty() && !failed) state.SkipWithError(error.c_str());
}

template <class Set>
void serve_devices(benchmark::State& state, devices_slot<Set>& slot, const allocator_config& config,
                   request_mix mix, const std::string& name, int devices) {
  const int thread = state.thread_index();
  const int device = thread % devices;
  if (thread == 0) setup(slot, config, devices, state.threads());
  slot.sync.sync(state.threads());

  bool failed = false;
  bool left_loop = false;
  const auto fail = [&](const std::string& context, bool in_loop) {
    failed = true;
    left_loop |= in_loop;
    const std::string m = context + ": " + last_error();
    state.SkipWithError(m.c_str());
  };
  bool attached = false;
  std::optional<typename Set::access_type> access;
  device_share* share = nullptr;
  if (!slot.setup_error.empty()) {
    failed = true;
    state.SkipWithError(slot.setup_error.c_str());
  } else {
    share = slot.shares[static_cast<std::size_t>(device)].get();
    attached = share->work->attach_thread() && slot.set->attach_thread(device);
    try {
      if (attached) access.emplace(slot.set->access(device));
    } catch (const std::exception& e) {
      set_last_error(e.what());
    }
    if (!access) fail("serve set-up", false);
  }
  const stream_ref stream = share != nullptr ? slot.streams[static_cast<std::size_t>(thread)] : stream_ref{};
  const server_thread me{&backend_of(device), stream, thread};
  request_work* work = share != nullptr ? share->work.get() : nullptr;
  const served done = serve_loop(state, me, access ? &*access : nullptr, work, mix, fail);
  // A thread that left the loop with `break` finishes it (run_scope::finish says why).
  if (left_loop) (void)state.KeepRunning();
  state.SetItemsProcessed(state.iterations());
  if (share != nullptr) {
    std::lock_guard lock(share->m);
    share->requests += done.requests;
    share->seconds += done.seconds;
    ++share->threads;
  }
  if (attached) slot.set->detach_thread(device);
  slot.sync.sync(state.threads());  // orders the adds above before thread 0 reads them
  if (thread == 0) tear_down(state, slot, name, config, devices, failed);
}

// ---- registration ------------------------------------------------------------------------------

template <class Set>
void add_serve_devices(const allocator_config& a, int devices) {
  std::vector<int> threads;
  for (const int t : thread_counts({1, 2, 4, 8, 16, 32, 64}, a.max_threads)) {
    if (t % devices == 0) threads.push_back(t);
  }
  if (threads.empty()) return;
  for (const auto& [mix, mix_name] : {std::pair{request_mix::small, "small"}, std::pair{request_mix::mixed, "mixed"}}) {
    const request_mix m = mix;  // (clang 14 cannot capture structured bindings)
    const std::string name = "serve_devices/" + a.label + "/" + mix_name + "/devices:" + std::to_string(devices);
    auto slot = std::make_shared<devices_slot<Set>>();
    auto* b = benchmark::RegisterBenchmark(name.c_str(), [slot, a, m, name, devices](benchmark::State& s) {
      serve_devices(s, *slot, a, m, name, devices);
    });
    for (const int t : threads) b->Threads(t);
    b->UseRealTime();
  }
}

template <class F>
bool with_pool_type(const std::string& variant, F&& f) {
  if (variant == "mutex") return f(std::type_identity<cudapool::mutex_pool>{}), true;
  if (variant == "lockfree") return f(std::type_identity<cudapool::lockfree_pool>{}), true;
  if (variant == "tls") return f(std::type_identity<cudapool::tls_pool>{}), true;
  if (variant == "stream") return f(std::type_identity<cudapool::stream_pool>{}), true;
  return false;
}

}  // namespace

void register_serve_devices_benchmarks(const std::vector<allocator_config>& allocators) {
  const int count = static_cast<int>(multi_device_backends().size());
  for (const allocator_config& a : allocators) {
    if (!serves(a)) continue;
    for (int n = 1; n <= count; ++n) {
      if (a.what == allocator_config::kind::peer) {
        add_serve_devices<peer_set>(a, n);
      } else {
        (void)with_pool_type(a.name, [&](auto tag) {
          using pool_type = typename decltype(tag)::type;
          if (a.options.stream_arenas != 0) {  // <v>-arenas: the variant behind stream_arenas
            add_serve_devices<pool_set<cudapool::stream_arenas<pool_type>>>(a, n);
          } else {
            add_serve_devices<pool_set<pool_type>>(a, n);
          }
        });
      }
    }
  }
}

}  // namespace bench
