// stack_sweep.hpp - runs a benchmark's timed loop at many placements of the calling thread's stack.
//
// Why: a single-thread alloc/free pair costs 18 ns in one process and 30 ns in the next with the
// same binary, pool and host (H200 host, docs/results/2026-12-01-h200-s5/t). With address
// randomisation off, the figure is reproducible to 1-3% for one environment and jumps between those
// two levels when only the environment's size changes, that is, when only the main thread's stack
// moves; the bare array stack of limit/stack, which has no pool in it, moves between 1.7 and 2.0 ns
// the same way. The pair's loads and stores to the stack (return addresses, saved registers) and to
// the pool's hot data (the thread's cache, the block's entry, the counters) then collide or not in
// the low 12 address bits, which the core compares first when it checks a load against older
// stores (4K aliasing). Linux moves the main thread's stack by up to 8 KiB at random at each start,
// so each fresh process draws one placement: that is the spread, and it says nothing about the pool.
//
// So the pair workloads run their loop in batches, each at the next of `offsets` stack placements
// 64 bytes apart (4 KiB in all at the default 64), visited in a scattered order, every placement
// equally often. The benchmark's time is the mean over placements, which a fresh process draws
// again the same. Counters: fast_ns and slow_ns, the cheapest and dearest placement's ns per
// iteration, and slow_share, the share of placements more than 10% above fast_ns: the spread that
// one placement alone would show. `bench --stack-offsets=1` runs at the thread's own placement only.
#pragma once

#include <benchmark/benchmark.h>

#include <alloca.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace bench {

// How many stack placements the pair workloads visit (bench --stack-offsets=N, 1..64).
inline unsigned& stack_offsets() {
  static unsigned n = 64;
  return n;
}

namespace detail {
// Calls f() with the stack `bytes` lower than here. Out of line, and pad kept alive past the call,
// so the compiler can neither drop the alloca nor turn the call into a jump.
template <class F>
[[gnu::noinline]] void at_stack_offset(std::size_t bytes, F& f) {
  void* pad = alloca(bytes + 16);
  benchmark::DoNotOptimize(pad);
  f();
  benchmark::DoNotOptimize(pad);
}
}  // namespace detail

// Runs body(n), which must run n iterations and return false on failure (the loop stops), until
// the state's iterations are done. Per batch one placement; counters as above.
template <class Body>
void swept_loop(benchmark::State& state, Body body) {
  constexpr std::size_t step = 64;
  constexpr benchmark::IterationCount batch = 256;
  const unsigned offsets = std::clamp(stack_offsets(), 1u, 64u);
  std::vector<double> seconds(offsets, 0.0);
  std::vector<std::uint64_t> runs(offsets, 0);
  unsigned next = 0;
  bool ok = true;
  while (ok && state.KeepRunningBatch(batch)) {
    // 37 is odd and so coprime with any power of two: 64 placements all visited, scattered.
    const unsigned k = offsets == 64 ? (next * 37) % 64 : next % offsets;
    ++next;
    auto run = [&] { ok = body(batch); };
    const auto t0 = std::chrono::steady_clock::now();
    detail::at_stack_offset(k * step, run);
    seconds[k] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    runs[k] += batch;
  }
  double fast = 0, slow = 0;
  std::vector<double> ns;
  for (unsigned k = 0; k < offsets; ++k) {
    if (runs[k] > 0) ns.push_back(1e9 * seconds[k] / static_cast<double>(runs[k]));
  }
  if (ns.empty()) return;
  fast = *std::min_element(ns.begin(), ns.end());
  slow = *std::max_element(ns.begin(), ns.end());
  const auto slow_count = std::count_if(ns.begin(), ns.end(), [&](double x) { return x > 1.1 * fast; });
  state.counters["fast_ns"] = benchmark::Counter(fast, benchmark::Counter::kAvgThreads);
  state.counters["slow_ns"] = benchmark::Counter(slow, benchmark::Counter::kAvgThreads);
  state.counters["slow_share"] =
      benchmark::Counter(static_cast<double>(slow_count) / static_cast<double>(ns.size()), benchmark::Counter::kAvgThreads);
}

}  // namespace bench
