// multi_device.cpp - see multi_device.hpp.
#include "multi_device.hpp"

#include <benchmark/benchmark.h>

#include <exception>
#include <string>
#include <utility>

#include "workloads.hpp"

namespace bench {
namespace {

std::vector<std::shared_ptr<cudapool::backend>> g_devices;

// The run's pools, made by thread 0 before the loop and destroyed by it after every thread is done
// (run_context::sync is the barrier).
struct device_pools {
  run_context sync;
  std::vector<std::unique_ptr<bench_allocator>> pools;
  std::string setup_error;
};

void pair_devices(benchmark::State& state, device_pools& ctx, const allocator_config& config, std::size_t bytes,
                  int devices) {
  const int thread = state.thread_index();
  if (thread == 0) {
    ctx.setup_error.clear();
    ctx.pools.clear();
    try {
      for (int d = 0; d < devices; ++d) ctx.pools.push_back(bench_allocator::make(config, g_devices[d]));
    } catch (const std::exception& e) {
      ctx.setup_error = "set-up of " + config.label + ": " + e.what();
    }
  }
  ctx.sync.sync(state.threads());
  if (!ctx.setup_error.empty()) {
    state.SkipWithError(ctx.setup_error.c_str());
  } else {
    bench_allocator* a = ctx.pools[static_cast<std::size_t>(thread % devices)].get();
    for (auto _ : state) {
      void* p = a->allocate(bytes, {});
      if (p == nullptr || !a->deallocate(p, {})) [[unlikely]] {
        state.SkipWithError(last_error().c_str());
        break;
      }
      benchmark::DoNotOptimize(p);
    }
    state.SetItemsProcessed(state.iterations());
  }
  ctx.sync.sync(state.threads());
  if (thread == 0) ctx.pools.clear();
}

}  // namespace

void register_multi_device_benchmarks(const std::vector<allocator_config>& allocators,
                                      std::vector<std::shared_ptr<cudapool::backend>> devices) {
  g_devices = std::move(devices);
  const int count = static_cast<int>(g_devices.size());
  if (count < 1) return;
  for (const allocator_config& config : allocators) {
    if (config.what != allocator_config::kind::pool || !config.all_workloads) continue;
    for (const std::size_t bytes : {std::size_t{256}, 4 * kib}) {
      for (int n = 1; n <= count; ++n) {
        const std::string name = "pair_devices/" + config.label + "/" + std::to_string(bytes) + "/devices:" + std::to_string(n);
        auto ctx = std::make_shared<device_pools>();
        auto* b = benchmark::RegisterBenchmark(name.c_str(), [ctx, config, bytes, n](benchmark::State& s) {
          pair_devices(s, *ctx, config, bytes, n);
        });
        for (const int t : thread_counts({1, 2, 4, 8, 16}, config.max_threads)) b->Threads(t);
        b->UseRealTime();
      }
    }
  }
}

void release_multi_device_backends() noexcept { g_devices.clear(); }

const std::vector<std::shared_ptr<cudapool::backend>>& multi_device_backends() noexcept { return g_devices; }

}  // namespace bench
