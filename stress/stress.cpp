// stress.cpp - the `stress` soak binary: the command line around run_stress().
//
//   stress [--variant=mutex|lockfree|tls|stream | --allocator=pool|cudaMallocAsync|cub|cudaMalloc]
//          [--backend=auto|cuda|sim] [--threads=N]
//          [--streams=N] [--devices=N] [--duration=SECONDS | --ops=N] [--seed=N]
//          [--sizes=fixed:BYTES|classes|mixed|trace:FILE] [--handoff=FRACTION] [--cross-stream=FRACTION]
//          [--json=FILE] [--inject=none|early-reuse|double-handout] [--tls-transfer=queue|mutex|stack]
//          [--first-slab-bytes=N] [--remap-ratio=R] [--stream-arenas=N]
//          [--quiet]
//
// Exit status: 0 when the run saw no violation, 1 when it saw any (the first few are printed),
// 2 for a bad command line (one line on stderr). A peer (--allocator other than pool, CUDA backend
// only) runs the same workload and device verification as a pool; its violations are a result, and
// exit 1 like a pool's.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <exception>
#include <fstream>
#include <iostream>
#include <random>
#include <string>

#include "stress_harness.hpp"

namespace {

constexpr int exit_passed = 0;
constexpr int exit_violations = 1;
constexpr int exit_usage = 2;

std::uint64_t random_seed() {
  std::random_device device;
  return (std::uint64_t{device()} << 32) ^ device();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cudapool::stress;

  CLI::App app{
      "Soak-tests a cudapool pool (or, with --allocator, a peer): many host threads x many streams, every\n"
      "block stamped and verified on the device, a host shadow map of live ranges, and balanced accounting\n"
      "at the end. Not a benchmark."};
  std::string allocator{pool_allocator};
  std::string variant = "mutex";
  std::string backend = "auto";
  unsigned threads = 64;
  unsigned streams = 16;
  unsigned devices = 1;
  double duration = 0;
  std::uint64_t ops = 0;
  std::uint64_t seed = 0;
  std::string sizes = "classes";
  double handoff = 0.1;
  double cross_stream = 0.1;
  std::string json_path;
  std::string inject = "none";
  std::string tls_transfer = "queue";
  bool quiet = false;

  CLI::Option* variant_option =
      app.add_option("--variant", variant, "pool variant (mutex, lockfree, tls, stream; those built)")->capture_default_str();
  app.add_option("--allocator", allocator,
                 "pool (the --variant pool), or a peer on the CUDA backend: cudaMallocAsync, cub, cudaMalloc")
      ->capture_default_str();
  app.add_option("--backend", backend, "auto (cuda when a GPU is present, else sim), cuda or sim")->capture_default_str();
  app.add_option("--threads", threads, "host threads")->capture_default_str();
  app.add_option("--streams", streams, "streams shared by the threads (per device)")->capture_default_str();
  app.add_option("--devices", devices,
                 "devices, each with its own pool and streams; threads spread over them, hand-offs across them "
                 "(sim: simulated devices; cuda: GPUs 0..N-1)")
      ->capture_default_str();
  CLI::Option* duration_option = app.add_option("--duration", duration, "run for SECONDS (default 10)");
  // CLI11 reads -1 into an unsigned option as 2^64 - 1: a sign is refused first.
  const CLI::Validator no_sign(
      [](std::string& s) { return s.find('-') != std::string::npos ? "must not be negative, got " + s : std::string(); },
      "");
  CLI::Option* ops_option = app.add_option("--ops", ops, "run N allocations over all threads instead")->check(no_sign);
  duration_option->excludes(ops_option);
  CLI::Option* seed_option = app.add_option("--seed", seed, "random seed (default: random, printed)");
  app.add_option("--sizes", sizes, "fixed:BYTES, classes, mixed (1 in 64 of 1 .. 64 MiB) or trace:FILE")->capture_default_str();
  app.add_option("--handoff", handoff, "fraction of blocks handed to another thread")->capture_default_str();
  app.add_option("--cross-stream", cross_stream, "fraction of blocks freed on another stream")->capture_default_str();
  app.add_option("--json", json_path, "also write the summary as JSON to FILE");
  app.add_option("--inject", inject, "none, early-reuse or double-handout: break the pool on purpose")
      ->capture_default_str();
  app.add_option("--tls-transfer", tls_transfer, "tls variant: its transfer layer, queue, mutex or stack")
      ->capture_default_str();
  std::size_t first_slab_bytes = 0;
  app.add_option("--first-slab-bytes", first_slab_bytes, "pool_options::first_slab_bytes (0: the default, 64 KiB)")
      ->check(no_sign)
      ->capture_default_str();
  double remap_ratio = 0.0;
  app.add_option("--remap-ratio", remap_ratio,
                 "pool_options::remap_ratio: 0 (off) or >= 1; with --sizes=mixed the large requests move pages")
      ->capture_default_str();
  std::size_t stream_arenas = 0;
  app.add_option("--stream-arenas", stream_arenas,
                 "pool_options::stream_arenas: up to this many streams keep to their own arena (0: off, <= 64)")
      ->check(no_sign)
      ->capture_default_str();
  app.add_flag("--quiet", quiet, "no progress lines (the header and the summary are still printed)");

  stress_config config;
  try {
    app.parse(argc, argv);
    if (allocator != pool_allocator && variant_option->count() > 0) {
      throw config_error("--variant names a cudapool pool; it does not go with --allocator=" + allocator);
    }
    config.allocator = allocator;
    config.variant = variant;
    config.backend = parse_backend_choice(backend);
    config.threads = threads;
    config.streams = streams;
    config.devices = devices;
    if (duration_option->count() > 0) config.duration_seconds = duration;
    if (ops_option->count() > 0) config.ops = ops;
    config.seed = seed_option->count() > 0 ? seed : random_seed();
    config.sizes = parse_size_spec(sizes);
    config.handoff = handoff;
    config.cross_stream = cross_stream;
    config.inject = parse_fault(inject);
    config.tls_transfer = parse_transfer_layer(tls_transfer);
    config.first_slab_bytes = first_slab_bytes;
    config.remap_ratio = remap_ratio;
    config.stream_arenas = stream_arenas;
    config.progress = !quiet;
    validate(config);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help
    std::cerr << "stress: " << e.what() << '\n';
    return exit_usage;
  } catch (const config_error& e) {
    std::cerr << "stress: " << e.what() << '\n';
    return exit_usage;
  }

  // Opened now, so that an unwritable path is a usage error before a long run rather than after it.
  std::ofstream json;
  if (!json_path.empty()) {
    json.open(json_path);
    if (!json) {
      std::cerr << "stress: --json: cannot write " << json_path << '\n';
      return exit_usage;
    }
  }

  stress_result result;
  try {
    result = run_stress(config, std::cout);
  } catch (const config_error& e) {
    std::cerr << "stress: " << e.what() << '\n';
    return exit_usage;
  } catch (const std::exception& e) {
    std::cerr << "stress: the run failed: " << e.what() << " (seed " << config.seed << ")\n";
    return exit_violations;
  }

  print_summary(result, std::cout);
  if (json.is_open()) {
    json << to_json(result) << '\n';
    json.close();
    if (!json) {
      std::cerr << "stress: --json: writing " << json_path << " failed\n";
      if (result.passed()) return exit_usage;  // a clean run whose report is missing is not a pass
    }
  }
  return result.passed() ? exit_passed : exit_violations;
}
