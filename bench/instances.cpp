// instances.cpp - the `instances` probe (issue 15's single-thread spread): is the spread of
// single-thread pair figures between pool instances the placement of each instance's hot data, or
// the host's state over time?
//
//   instances [--backend=sim|cuda] [--variant=NAME]... [--instances=N] [--rounds=R] [--pairs=P]
//             [--bytes=B] [--seed=S] [--json=FILE] [--inject-slow-instance=ITERS]
//
// N pools of each variant are alive at once in this process (so each has its own memory: thread
// cache, bins, slots, block entries) and are measured in R interleaved rounds on this one thread.
// A round measures every instance once, in a shuffled order: a warm-up of P/10 pairs, then P pairs
// of allocate(B) + deallocate through any_pool, as bench's pair/<variant>/B at 1 thread does. So
// - if placement decides, an instance keeps its speed from round to round and the instances differ;
// - if the host's state over time decides, the instances of one round move together and the rounds
//   differ.
// Per variant it prints the instances' and the rounds' medians and how much of the variance of
// log(ns per pair) each explains (two-way layout, rounds x instances, without interaction; F of the
// instance effect against the residual: about 1 when instances do not differ). Exit 0 when every
// measurement ran; 1 when an allocation failed; 2 for a bad command line.
// --inject-slow-instance=ITERS (the probe's own test, bench/CMakeLists.txt): instance 0 does ITERS
// more volatile increments per pair, a placement effect by construction, which the decomposition
// must attribute to the instances.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <cudapool/any_pool.hpp>
#include <cudapool/backend.hpp>
#include <cudapool/registry.hpp>

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// ns per pair of `pairs` allocate + deallocate; negative when an allocation failed.
double time_pairs(cudapool::any_pool& pool, std::size_t bytes, std::size_t pairs, unsigned extra_iters) {
  volatile unsigned sink = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < pairs; ++i) {
    void* p = pool.allocate(bytes, cudapool::stream_ref{});
    if (p == nullptr) return -1;
    asm volatile("" : : "r"(p) : "memory");  // as benchmark::DoNotOptimize
    pool.deallocate(p);
    for (unsigned k = 0; k < extra_iters; ++k) sink = sink + 1;
  }
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
         static_cast<double>(pairs);
}

struct decomposition {
  double instance_share, round_share, residual_share, f_instances, f_rounds;
};

// Two-way layout without interaction over y[r][i] = log(ns[r][i]).
decomposition decompose(const std::vector<std::vector<double>>& ns) {
  const std::size_t rounds = ns.size();
  const std::size_t n = ns.front().size();
  std::vector<std::vector<double>> y(rounds, std::vector<double>(n));
  std::vector<double> row(rounds, 0), col(n, 0);
  double grand = 0;
  for (std::size_t r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      y[r][i] = std::log(ns[r][i]);
      row[r] += y[r][i] / static_cast<double>(n);
      col[i] += y[r][i] / static_cast<double>(rounds);
      grand += y[r][i] / static_cast<double>(rounds * n);
    }
  }
  double total = 0, ss_rounds = 0, ss_instances = 0;
  for (const auto& yr : y) {
    for (const double v : yr) total += (v - grand) * (v - grand);
  }
  for (const double m : row) ss_rounds += static_cast<double>(n) * std::pow(m - grand, 2);
  for (const double m : col) ss_instances += static_cast<double>(rounds) * std::pow(m - grand, 2);
  const double ss_residual = std::max(0.0, total - ss_rounds - ss_instances);
  const double df_residual = static_cast<double>((rounds - 1) * (n - 1));
  const double ms_residual = ss_residual / df_residual;
  decomposition d{};
  d.instance_share = total > 0 ? ss_instances / total : 0;
  d.round_share = total > 0 ? ss_rounds / total : 0;
  d.residual_share = total > 0 ? ss_residual / total : 0;
  d.f_instances = ms_residual > 0 ? (ss_instances / static_cast<double>(n - 1)) / ms_residual : 0;
  d.f_rounds = ms_residual > 0 ? (ss_rounds / static_cast<double>(rounds - 1)) / ms_residual : 0;
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Measures N instances of a pool variant, alive at once, in interleaved rounds on one thread: does an\n"
      "instance keep its single-thread pair speed (placement of its data) or do rounds move together (host)?"};
  std::string backend = "sim";
  std::vector<std::string> variants{"tls"};
  unsigned instances = 6;
  unsigned rounds = 15;
  std::size_t pairs = 200000;
  std::size_t bytes = 4096;
  std::uint64_t seed = 1;
  std::string json_path;
  unsigned slow_iters = 0;
  app.add_option("--backend", backend, "sim or cuda (device 0)")->check(CLI::IsMember({"sim", "cuda"}));
  app.add_option("--variant", variants, "variant to measure (repeatable)")->check(CLI::IsMember(cudapool::available_variants()));
  app.add_option("--instances", instances, "pools of each variant alive at once")->check(CLI::Range(2u, 1000u));
  app.add_option("--rounds", rounds, "rounds; each measures every instance once")->check(CLI::Range(2u, 100000u));
  app.add_option("--pairs", pairs, "allocate + deallocate pairs per measurement")->check(CLI::Range(std::size_t{10}, std::size_t{1} << 40));
  app.add_option("--bytes", bytes, "bytes per allocation")->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30));
  app.add_option("--seed", seed, "seed of the rounds' shuffles");
  app.add_option("--json", json_path, "write every measurement here");
  app.add_option("--inject-slow-instance", slow_iters, "the probe's test: instance 0 does this many more increments per pair");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help
    std::fprintf(stderr, "instances: %s\n", e.what());
    return 2;
  }

  std::shared_ptr<cudapool::backend> device;
  try {
    device = backend == "cuda" ? std::shared_ptr<cudapool::backend>(cudapool::make_cuda_backend(0))
                               : std::shared_ptr<cudapool::backend>(cudapool::make_sim_backend());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "instances: cannot make the %s backend: %s\n", backend.c_str(), e.what());
    return 1;
  }

  nlohmann::ordered_json out;
  out["backend"] = backend;
  out["instances"] = instances;
  out["rounds"] = rounds;
  out["pairs"] = pairs;
  out["bytes"] = bytes;
  out["seed"] = seed;
  std::mt19937_64 rng(seed);
  int status = 0;
  for (const std::string& variant : variants) {
    std::vector<std::unique_ptr<cudapool::any_pool>> pools;
    try {
      for (unsigned i = 0; i < instances; ++i) pools.push_back(cudapool::make_pool(variant, device));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "instances: cannot make a %s pool: %s\n", variant.c_str(), e.what());
      return 1;
    }
    std::vector<std::vector<double>> ns(rounds, std::vector<double>(instances, 0));
    std::vector<std::vector<unsigned>> order(rounds);
    std::vector<unsigned> perm(instances);
    std::iota(perm.begin(), perm.end(), 0u);
    bool failed = false;
    for (unsigned r = 0; r < rounds && !failed; ++r) {
      std::shuffle(perm.begin(), perm.end(), rng);
      order[r] = perm;
      for (const unsigned i : perm) {
        const unsigned extra = i == 0 ? slow_iters : 0;
        const double warm = time_pairs(*pools[i], bytes, std::max<std::size_t>(1, pairs / 10), extra);
        ns[r][i] = warm < 0 ? warm : time_pairs(*pools[i], bytes, pairs, extra);
        if (ns[r][i] < 0) {
          std::fprintf(stderr, "instances: %s instance %u: allocate(%zu) failed\n", variant.c_str(), i, bytes);
          failed = true;
          break;
        }
      }
    }
    if (failed) {
      status = 1;
      continue;
    }
    std::vector<double> by_instance(instances), by_round(rounds);
    for (unsigned i = 0; i < instances; ++i) {
      std::vector<double> v;
      for (unsigned r = 0; r < rounds; ++r) v.push_back(ns[r][i]);
      by_instance[i] = median(v);
    }
    for (unsigned r = 0; r < rounds; ++r) by_round[r] = median(ns[r]);
    const decomposition d = decompose(ns);
    auto spread = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()) / *std::min_element(v.begin(), v.end()); };
    std::printf("%s: %u instances x %u rounds of %zu pairs of %zu B\n", variant.c_str(), instances, rounds, pairs, bytes);
    std::printf("  instances' medians (ns/pair):");
    for (const double m : by_instance) std::printf(" %.1f", m);
    std::printf("  max/min %.2fx\n  rounds' medians (ns/pair):   ", spread(by_instance));
    for (const double m : by_round) std::printf(" %.1f", m);
    std::printf("  max/min %.2fx\n", spread(by_round));
    std::printf("  variance of log(ns) explained: instances %.0f%%, rounds %.0f%%, residual %.0f%%; F instances %.1f, F rounds %.1f\n",
                100 * d.instance_share, 100 * d.round_share, 100 * d.residual_share, d.f_instances, d.f_rounds);
    nlohmann::ordered_json v;
    std::vector<std::uintptr_t> addresses;  // where each instance's pool object lies (its hot fields at fixed offsets)
    for (const auto& pool : pools) addresses.push_back(reinterpret_cast<std::uintptr_t>(pool.get()));
    v["pool_addresses"] = addresses;
    v["ns_per_pair"] = ns;
    v["order"] = order;
    v["instance_medians"] = by_instance;
    v["round_medians"] = by_round;
    v["instance_share"] = d.instance_share;
    v["round_share"] = d.round_share;
    v["residual_share"] = d.residual_share;
    v["f_instances"] = d.f_instances;
    v["f_rounds"] = d.f_rounds;
    out["variants"][variant] = v;
  }
  if (!json_path.empty()) {
    std::ofstream f(json_path);
    f << out.dump(1) << '\n';
    if (!f) {
      std::fprintf(stderr, "instances: cannot write %s\n", json_path.c_str());
      return 1;
    }
  }
  return status;
}
