// instances.cpp - the `instances` probe (issue 15's single-thread spread): is the spread of
// single-thread pair figures between pool instances the placement of each instance's hot data, or
// the host's state over time?
//
//   instances [--backend=sim|cuda] [--variant=NAME]... [--instances=N] [--rounds=R] [--pairs=P]
//             [--bytes=B] [--seed=S] [--json=FILE] [--processes]
//             [--inject-slow-instance=ITERS] [--inject-drift=ITERS]
//
// N pools of each variant are alive at once in this process (so each has its own memory: thread
// cache, bins, slots, block entries) and are measured in R interleaved rounds on this one thread.
// A round measures every instance once, in a shuffled order: a warm-up of P/10 pairs, then P pairs
// of allocate(B) + deallocate through any_pool, as bench's pair/<variant>/B at 1 thread does. So
// - if placement decides, an instance keeps its speed from round to round and the instances differ;
// - if the host's state over time decides, the instances of one round move together and the rounds
//   differ.
// --processes: each instance is a fresh process instead (this program started again, one pool of
// each variant in it, its own backend and address-space layout), all N alive at once and idle but
// for their turn: the rounds interleave the processes as they interleave instances, so the host's
// state over time lands in the rounds and a process's median is its own (issue 15's five fresh
// processes of one variant; processes run one after another each saw the host at another time,
// docs/results/2026-12-05-h200-s24). The processes inherit this one's CPU affinity (taskset).
// Per variant it prints the instances' and the rounds' medians and how much of the variance of
// log(ns per pair) each explains (two-way layout, rounds x instances, without interaction; F of the
// instance effect against the residual: about 1 when instances do not differ). Exit 0 when every
// measurement ran; 1 when an allocation failed, a process could not be started or the --json file
// could not be written; 2 for a bad command line (an unwritable --json path among them).
// The probe's own tests (bench/CMakeLists.txt): --inject-slow-instance=ITERS makes instance 0 do
// ITERS more volatile increments per pair, a placement effect by construction, which the
// decomposition must attribute to the instances; --inject-drift=ITERS makes every measurement taken
// after the first half of a variant's (in the order taken) do ITERS more, the host's state changing
// over time by construction, which it must attribute to the rounds: it does only while the rounds
// interleave the instances (measured one instance after another, the drift falls on the last
// instances, and the test fails).

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

extern char** environ;

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

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

// A measurement as a round takes it: a warm-up of pairs / 10, then `pairs`.
double measure(cudapool::any_pool& pool, std::size_t bytes, std::size_t pairs, unsigned extra_iters) {
  const double warm = time_pairs(pool, bytes, std::max<std::size_t>(1, pairs / 10), extra_iters);
  return warm < 0 ? warm : time_pairs(pool, bytes, pairs, extra_iters);
}

std::shared_ptr<cudapool::backend> make_backend(const std::string& name) {
  return name == "cuda" ? std::shared_ptr<cudapool::backend>(cudapool::make_cuda_backend(0))
                        : std::shared_ptr<cudapool::backend>(cudapool::make_sim_backend());
}

// --processes: one instance in a process of its own, this program started again with --child.
// Requests and replies are lines on its standard input and output: "m V EXTRA" (measure variant V
// with EXTRA more increments per pair) -> ns per pair, negative when an allocation failed; "q" or
// the end of input -> it exits. Its first line: "ready ADDR..." (where each variant's pool object
// lies) or "failed WHY".
class child_process {
 public:
  explicit child_process(const std::vector<std::string>& args) {
    int in[2], out[2];  // in: to the child; out: from it
    if (pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    if (pipe2(out, O_CLOEXEC) != 0) {
      close(in[0]);
      close(in[1]);
      throw std::runtime_error("pipe2 failed");
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);  // dup2 clears O_CLOEXEC on 0 and 1
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    to_ = fdopen(in[1], "w");
    from_ = fdopen(out[0], "r");
    if (rc != 0 || to_ == nullptr || from_ == nullptr) {
      if (to_ != nullptr) std::fclose(to_); else close(in[1]);
      if (from_ != nullptr) std::fclose(from_); else close(out[0]);
      if (rc == 0) waitpid(pid_, nullptr, 0);
      throw std::runtime_error("cannot start a process: " + std::string(rc != 0 ? std::strerror(rc) : "fdopen failed"));
    }
  }
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;
  ~child_process() {
    std::fputs("q\n", to_);
    std::fclose(to_);
    std::fclose(from_);
    waitpid(pid_, nullptr, 0);
  }
  // The next line from the child, without its newline; empty at its end.
  std::string line() {
    char buf[4096];
    if (std::fgets(buf, sizeof buf, from_) == nullptr) return {};
    std::string s(buf);
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }
  double measure(std::size_t variant, unsigned extra) {
    std::fprintf(to_, "m %zu %u\n", variant, extra);
    std::fflush(to_);
    const std::string reply = line();
    try {
      return reply.empty() ? gone : std::stod(reply);
    } catch (const std::exception&) {  // not a number: not our child's reply
      return gone;
    }
  }
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  static constexpr double gone = -2;  // measure(): the process ended

 private:
  pid_t pid_ = 0;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
};

// The child's side of the protocol above.
int run_child(const std::string& backend, const std::vector<std::string>& variants, std::size_t pairs, std::size_t bytes,
              unsigned slow_iters) {
  std::vector<std::unique_ptr<cudapool::any_pool>> pools;
  try {
    const std::shared_ptr<cudapool::backend> device = make_backend(backend);
    for (const std::string& v : variants) pools.push_back(cudapool::make_pool(v, device));
  } catch (const std::exception& e) {
    std::printf("failed %s\n", e.what());
    return 1;
  }
  std::printf("ready");
  for (const auto& pool : pools) std::printf(" %ju", static_cast<std::uintmax_t>(reinterpret_cast<std::uintptr_t>(pool.get())));
  std::printf("\n");
  std::fflush(stdout);
  char buf[256];
  while (std::fgets(buf, sizeof buf, stdin) != nullptr) {
    std::size_t v = 0;
    unsigned extra = 0;
    if (std::sscanf(buf, "m %zu %u", &v, &extra) != 2) break;  // "q"
    const double ns = v < pools.size() ? measure(*pools[v], bytes, pairs, extra + slow_iters) : -1;
    std::printf("%.17g\n", ns);
    std::fflush(stdout);
  }
  return 0;
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
  bool processes = false;
  bool child = false;
  unsigned slow_iters = 0;
  unsigned drift_iters = 0;
  app.add_option("--backend", backend, "sim or cuda (device 0)")->check(CLI::IsMember({"sim", "cuda"}));
  app.add_option("--variant", variants, "variant to measure (repeatable)")->check(CLI::IsMember(cudapool::available_variants()));
  app.add_option("--instances", instances, "pools of each variant alive at once")->check(CLI::Range(2u, 1000u));
  app.add_option("--rounds", rounds, "rounds; each measures every instance once")->check(CLI::Range(2u, 100000u));
  app.add_option("--pairs", pairs, "allocate + deallocate pairs per measurement")->check(CLI::Range(std::size_t{10}, std::size_t{1} << 40));
  app.add_option("--bytes", bytes, "bytes per allocation")->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30));
  app.add_option("--seed", seed, "seed of the rounds' shuffles");
  app.add_option("--json", json_path, "write every measurement here");
  app.add_flag("--processes", processes, "each instance a fresh process of its own (this program again), all alive at once");
  app.add_flag("--child", child, "(internal) serve --processes' requests on standard input")->group("");
  app.add_option("--inject-slow-instance", slow_iters, "the probe's test: instance 0 does this many more increments per pair");
  app.add_option("--inject-drift", drift_iters,
                 "the probe's test: the second half of a variant's measurements, in time, do this many more increments per pair");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help
    std::fprintf(stderr, "instances: %s\n", e.what());
    return 2;
  }
  if (child) return run_child(backend, variants, pairs, bytes, slow_iters);
  // Opened now, so that an unwritable path is a bad command line before the run rather than after it.
  std::ofstream json;
  if (!json_path.empty()) {
    json.open(json_path);
    if (!json) {
      std::fprintf(stderr, "instances: --json: cannot write %s: %s\n", json_path.c_str(), std::strerror(errno));
      return 2;
    }
  }

  // Per instance i and variant v: a pool in this process (made per variant, below), or process i.
  std::vector<std::unique_ptr<child_process>> children;
  if (processes) std::signal(SIGPIPE, SIG_IGN);  // a process that ended: its request fails, its reply is missing
  std::vector<std::vector<std::uintptr_t>> child_addresses;  // [i][v]
  std::shared_ptr<cudapool::backend> device;
  try {
    if (processes) {
      for (unsigned i = 0; i < instances; ++i) {
        std::vector<std::string> args{"instances", "--child", "--backend=" + backend, "--pairs=" + std::to_string(pairs),
                                      "--bytes=" + std::to_string(bytes)};
        for (const std::string& v : variants) args.push_back("--variant=" + v);
        if (i == 0 && slow_iters != 0) args.push_back("--inject-slow-instance=" + std::to_string(slow_iters));
        children.push_back(std::make_unique<child_process>(args));
        std::string ready = children.back()->line();
        if (ready.rfind("ready", 0) != 0) {
          throw std::runtime_error("process " + std::to_string(i) + ": " + (ready.empty() ? "exited" : ready));
        }
        std::vector<std::uintptr_t> addresses;
        for (std::size_t pos = 5; pos < ready.size();) {
          std::size_t used = 0;
          addresses.push_back(std::stoull(ready.substr(pos), &used));
          pos += used;
        }
        child_addresses.push_back(addresses);
      }
    } else {
      device = make_backend(backend);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "instances: %s\n", e.what());
    return 1;
  }

  nlohmann::ordered_json out;
  out["backend"] = backend;
  out["mode"] = processes ? "processes" : "one process";
  out["instances"] = instances;
  out["rounds"] = rounds;
  out["pairs"] = pairs;
  out["bytes"] = bytes;
  out["seed"] = seed;
  if (processes) {
    std::vector<long> pids;
    for (const auto& c : children) pids.push_back(c->pid());
    out["pids"] = pids;
  }
  std::mt19937_64 rng(seed);
  int status = 0;
  for (std::size_t vi = 0; vi < variants.size(); ++vi) {
    const std::string& variant = variants[vi];
    std::vector<std::unique_ptr<cudapool::any_pool>> pools;
    try {
      for (unsigned i = 0; i < instances && !processes; ++i) pools.push_back(cudapool::make_pool(variant, device));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "instances: cannot make a %s pool: %s\n", variant.c_str(), e.what());
      return 1;
    }
    std::vector<std::vector<double>> ns(rounds, std::vector<double>(instances, 0));
    std::vector<std::vector<unsigned>> order(rounds);
    std::vector<unsigned> perm(instances);
    std::iota(perm.begin(), perm.end(), 0u);
    bool failed = false;
    std::size_t taken = 0;  // measurements of this variant so far
    for (unsigned r = 0; r < rounds && !failed; ++r) {
      std::shuffle(perm.begin(), perm.end(), rng);
      order[r] = perm;
      for (const unsigned i : perm) {
        const unsigned drift = 2 * taken++ >= std::size_t{rounds} * instances ? drift_iters : 0;
        ns[r][i] = processes ? children[i]->measure(vi, drift)
                             : measure(*pools[i], bytes, pairs, drift + (i == 0 ? slow_iters : 0));
        if (ns[r][i] < 0) {
          if (ns[r][i] == child_process::gone) {
            std::fprintf(stderr, "instances: process %u (%s) ended\n", i, variant.c_str());
          } else {
            std::fprintf(stderr, "instances: %s instance %u: allocate(%zu) failed\n", variant.c_str(), i, bytes);
          }
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
    std::printf("%s: %u %s x %u rounds of %zu pairs of %zu B\n", variant.c_str(), instances,
                processes ? "processes" : "instances", rounds, pairs, bytes);
    std::printf("  instances' medians (ns/pair):");
    for (const double m : by_instance) std::printf(" %.1f", m);
    std::printf("  max/min %.2fx\n  rounds' medians (ns/pair):   ", spread(by_instance));
    for (const double m : by_round) std::printf(" %.1f", m);
    std::printf("  max/min %.2fx\n", spread(by_round));
    std::printf("  variance of log(ns) explained: instances %.0f%%, rounds %.0f%%, residual %.0f%%; F instances %.1f, F rounds %.1f\n",
                100 * d.instance_share, 100 * d.round_share, 100 * d.residual_share, d.f_instances, d.f_rounds);
    nlohmann::ordered_json v;
    std::vector<std::uintptr_t> addresses;  // where each instance's pool object lies (its hot fields at fixed offsets)
    for (unsigned i = 0; i < instances; ++i) {
      addresses.push_back(processes ? (vi < child_addresses[i].size() ? child_addresses[i][vi] : 0)
                                    : reinterpret_cast<std::uintptr_t>(pools[i].get()));
    }
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
  if (json.is_open()) {
    json << out.dump(1) << '\n';
    json.close();
    if (!json) {
      std::fprintf(stderr, "instances: --json: writing %s failed\n", json_path.c_str());
      return 1;
    }
  }
  return status;
}
