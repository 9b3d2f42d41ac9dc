// bench - Google Benchmark suites over every built variant (issue 7 extends the workloads and adds
// the peers). Names are <workload>/<allocator>/<size>; Google Benchmark appends /threads:N.
// Items per second count alloc+free pairs.
//
//   bench [--backend=sim|cuda] [Google Benchmark flags]   (default: cuda when a GPU is present)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cudapool/backend.hpp"
#include "registry.hpp"

namespace {

std::shared_ptr<cudapool::backend> g_device;

// One pool per benchmark run, shared by its threads (thread 0 creates it, the last one out drops it).
struct shared_pool {
  std::unique_ptr<cudapool::any_pool> pool;
};

// An allocator under test: a variant with options, under a label.
struct allocator_config {
  std::string label;
  std::string variant;
  cudapool::pool_options options;
};

std::vector<allocator_config> allocators() {
  std::vector<allocator_config> all;
  for (const std::string& v : cudapool::available_variants()) all.push_back({v, v, {}});
  cudapool::pool_options unchecked;
  unchecked.atomic_free_check = false;
  all.push_back({"tls-nocheck", "tls", unchecked});
  all.push_back({"lockfree-nocheck", "lockfree", unchecked});
  // The backoff sweep behind the default (min_spins, max_spins); lockfree itself is {4, 256}.
  for (const auto [lo, hi] : {std::pair{0u, 0u}, std::pair{1u, 64u}, std::pair{16u, 1024u}, std::pair{64u, 4096u}}) {
    cudapool::pool_options o;
    o.backoff = {lo, hi};
    all.push_back({hi == 0 ? "lockfree-nobackoff" : "lockfree-backoff" + std::to_string(lo) + "-" + std::to_string(hi),
                   "lockfree", o});
  }
  return all;
}

void pair(benchmark::State& state, const allocator_config& a, std::size_t bytes) {
  static shared_pool shared;
  if (state.thread_index() == 0) shared.pool = cudapool::make_pool(a.variant, g_device, a.options);
  // Google Benchmark starts the timed loop of all threads together, after thread 0's setup.
  for (auto _ : state) {
    void* p = shared.pool->allocate(bytes, {});
    benchmark::DoNotOptimize(p);
    shared.pool->deallocate(p);
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    state.counters["reserved_MiB"] = static_cast<double>(shared.pool->stats().reserved_bytes) / (1 << 20);
  }
}

void register_all() {
  for (const allocator_config& a : allocators()) {
    for (std::size_t bytes : {std::size_t{256}, std::size_t{4096}, std::size_t{1} << 20}) {
      benchmark::RegisterBenchmark(("pair/" + a.label + "/" + std::to_string(bytes)).c_str(),
                                   [a, bytes](benchmark::State& s) { pair(s, a, bytes); })
          ->ThreadRange(1, 64)
          ->UseRealTime();
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend = cudapool::cuda_device_count() > 0 ? "cuda" : "sim";
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--backend=", 10) == 0) {
      backend = argv[i] + 10;
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (backend == "cuda") {
    g_device = cudapool::make_cuda_backend(0);
  } else if (backend == "sim") {
    g_device = cudapool::make_sim_backend();
  } else {
    std::fprintf(stderr, "bench: --backend must be sim or cuda, got '%s'\n", backend.c_str());
    return 2;
  }
  benchmark::AddCustomContext("cudapool_backend", backend);
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  if (benchmark::ReportUnrecognizedArguments(n, rest.data())) return 2;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  g_device.reset();
  return 0;
}
