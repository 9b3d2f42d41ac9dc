// stress_harness.cpp - the run: set up, start the host threads, monitor, tear down, and the
// end-of-run accounting. See stress_harness.hpp for the glossary and where the other parts are.
//
// Why the end of a run is ordered the way it is: every thread verifies and frees what it holds, the
// main thread frees what is still in the hand-off queues, every stream is flushed (the pool records
// the event of its open epoch), the device is synchronized, trim() reclaims the completed epochs.
// Only then is "nothing in use, nothing pending, the class equations hold" a fair check. Streams are
// destroyed after they were flushed (the pool's stream contract), the pool after that, and then the
// backend must hold no device memory at all. A peer run ends the same way, less the pool's trim,
// stats and chunk checks; the peer is destroyed after the streams.

#include "stress_harness.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "allocator_under_test.hpp"
#include "checkers.hpp"
#include <cudapool/any_pool.hpp>
#include <cudapool/backend.hpp>
#include <cudapool/options.hpp>
#include <cudapool/detail/core/size_classes.hpp>
#include <cudapool/types.hpp>
#include "faults.hpp"
#include "format.hpp"
#include <cudapool/detail/peers/peers.hpp>
#include <cudapool/registry.hpp>
#include "sizes.hpp"
#include "workers.hpp"

namespace cudapool::stress {

namespace {

struct opened_backend {
  std::vector<std::shared_ptr<backend>> devices;  // config.devices of them, device d at [d]
  std::string note;
};

opened_backend open_backend(const stress_config& c) {
  const int wanted = static_cast<int>(c.devices);
  bool use_cuda = c.backend == backend_choice::cuda;
  std::string note;
  if (c.backend == backend_choice::automatic) {
    const int gpus = cuda_device_count();
    use_cuda = gpus > 0;
    if (!use_cuda && c.allocator != pool_allocator) {
      throw config_error("--allocator=" + c.allocator + " needs a GPU (the CUDA backend): no CUDA device found");
    }
    note = use_cuda                ? "auto: " + std::to_string(gpus) + " CUDA device(s), using " +
                                         (wanted == 1 ? std::string("device 0") : "devices 0.." + std::to_string(wanted - 1))
           : cuda_backend_built() ? "auto: no CUDA device found, using the simulated device"
                                  : "auto: built without CUDA, using the simulated device";
  }
  opened_backend opened{{}, note};
  if (use_cuda) {
    if (const int gpus = cuda_device_count(); gpus < wanted) {
      throw config_error("--devices=" + std::to_string(wanted) + " needs " + std::to_string(wanted) +
                         " GPUs; this machine has " + std::to_string(gpus));
    }
    try {
      for (int d = 0; d < wanted; ++d) opened.devices.push_back(make_cuda_backend(d));
    } catch (const std::exception& e) {
      throw config_error(std::string("--backend=cuda: ") + e.what());
    }
    return opened;
  }
  for (int d = 0; d < wanted; ++d) {
    sim_options options;
    options.device = d;
    options.seed = c.seed + static_cast<std::uint64_t>(d);
    options.max_latency = c.sim_max_latency;
    opened.devices.push_back(make_sim_backend(options));
  }
  return opened;
}

// pending_epochs: the pool's; none for a peer.
std::string progress_line(double elapsed, double ops_per_second, const shadow_map::totals& live,
                          std::optional<std::size_t> pending_epochs, std::uint64_t violations) {
  char pending[32] = "";
  if (pending_epochs) std::snprintf(pending, sizeof pending, "  pending epochs %5zu", *pending_epochs);
  char text[160];
  std::snprintf(text, sizeof text, "[%7.1fs] %10.0f ops/s  live %6zu blocks %11s%s  violations %llu", elapsed,
                ops_per_second, live.blocks, format_bytes(double(live.bytes)).c_str(), pending,
                static_cast<unsigned long long>(violations));
  return text;
}

// What a peer run leaves out, for the report: the checks of a cudapool pool's own contract.
constexpr const char* peer_skipped_checks =
    "pool-only checks, not run for a peer: stats accounting after the run, invalid-free reports, "
    "device memory held after teardown, --inject";

}  // namespace

// ---- the run ------------------------------------------------------------------------------------

stress_result run_stress(const stress_config& config, std::ostream& progress) {
  using clock = std::chrono::steady_clock;
  validate(config);

  stress_result result;
  result.allocator = config.allocator;
  const bool peer_run = result.is_peer();
  if (!peer_run) {
    result.variant = config.variant;
    if (config.variant == "tls") result.tls_transfer = to_string(config.tls_transfer);
    result.remap_ratio = config.remap_ratio;
    result.stream_arenas = config.stream_arenas;
  }
  result.threads = config.threads;
  result.streams = config.streams;
  result.seed = config.seed;
  result.sizes = config.sizes.text;
  result.inject = config.inject;

  opened_backend opened = open_backend(config);
  const std::size_t device_count = opened.devices.size();
  result.devices = config.devices;
  result.backend = std::string(opened.devices[0]->name());
  result.backend_note = opened.note;

  violation_log violations;  // outlives the pools, whose invalid-free hooks write to it
  shadow_map shadow;
  // Per device, exactly one of pools[d] and peers[d]; allocators[d] is what the workers call.
  std::vector<std::unique_ptr<any_pool>> pools;
  std::vector<std::unique_ptr<peers::peer>> peers;
  std::vector<std::unique_ptr<allocator_under_test>> allocators;
  std::vector<double_handout_pool*> doublers;
  std::vector<std::size_t> class_bytes;
  for (std::size_t d = 0; d < device_count; ++d) {
    const std::shared_ptr<backend>& device = opened.devices[d];
    if (peer_run) {
      try {
        peers.push_back(peers::make_peer(config.allocator, device->device()));
      } catch (const std::exception& e) {
        throw config_error("--allocator=" + config.allocator + ": " + e.what());
      }
      allocators.push_back(std::make_unique<peer_under_test>(*peers.back()));
      continue;
    }
    pool_options options = pool_options_of(config);
    options.on_invalid_free = &on_invalid_free;
    options.invalid_free_context = &violations;
    std::unique_ptr<any_pool> pool = make_pool(config.variant, device, options);
    if (config.inject == fault::early_reuse) {
      pool = std::make_unique<early_reuse_pool>(std::move(pool));
    } else if (config.inject == fault::double_handout) {
      auto doubler = std::make_unique<double_handout_pool>(std::move(pool));
      doublers.push_back(doubler.get());
      pool = std::move(doubler);
    }
    allocators.push_back(std::make_unique<pool_under_test>(*pool));
    pools.push_back(std::move(pool));
  }
  if (peer_run) {
    // The size classes of a default pool, so that a peer sees the requests a pool run makes.
    const core::size_classes classes{pool_options{}};
    for (core::size_class c = 0; c < classes.count(); ++c) class_bytes.push_back(classes.bytes(c));
  } else {
    for (const class_stats& c : pools[0]->stats().classes) class_bytes.push_back(c.block_bytes);
  }
  if (class_bytes.empty()) class_bytes.push_back(min_alignment);  // every request takes the large path

  // Trace replay: each thread holds at most the trace's peak live bytes (it replays a subset of the
  // trace's allocations at each point), so scaling every size by budget / (threads x peak) bounds
  // the whole run's live memory while keeping the trace's size ratios and lifetimes.
  if (config.sizes.what == size_spec::kind::trace) {
    const std::size_t budget = config.trace_live_budget != 0 ? config.trace_live_budget
                               : result.backend == "sim"     ? std::size_t{1} << 30
                                                             : std::size_t{32} << 30;
    const double need = double(config.threads) * double(trace_peak_live(config.sizes.trace));
    result.trace_scale = need > double(budget) ? double(budget) / need : 1.0;
  }
  const size_source sizes(config.sizes, class_bytes, result.trace_scale);

  run_context ctx{.config = config, .lanes = {}, .sizes = sizes, .shadow = shadow, .violations = violations,
                  .inboxes = {}};
  for (std::size_t d = 0; d < device_count; ++d) {
    ctx.lanes.push_back({*allocators[d], *opened.devices[d], {}});
    for (unsigned i = 0; i < config.streams; ++i) ctx.lanes.back().streams.push_back(opened.devices[d]->create_stream());
  }
  for (unsigned i = 0; i < config.threads; ++i) ctx.inboxes.push_back(std::make_unique<inbox>());
  const auto pending_epochs = [&] {
    std::size_t n = 0;
    for (const auto& p : pools) n += p->stats().pending_epochs;
    return n;
  };

  const std::uint64_t total_ops = config.ops.value_or(0);
  std::vector<std::unique_ptr<worker>> workers;
  for (unsigned i = 0; i < config.threads; ++i) {
    const std::uint64_t quota = total_ops / config.threads + (i < total_ops % config.threads ? 1 : 0);
    const std::size_t offset = config.sizes.trace.empty() ? 0 : std::size_t(i) * config.sizes.trace.size() / config.threads;
    workers.push_back(std::make_unique<worker>(ctx, i, quota, offset));
  }

  // The header is printed even without progress lines: it names the seed, and a run that a
  // sanitizer stops never reaches its summary.
  const double duration = config.duration_seconds.value_or(default_duration_seconds);
  {
    progress << "stress: " << (peer_run ? "allocator " + config.allocator + " (a peer)" : "variant " + config.variant)
             << ", backend " << result.backend
             << (opened.note.empty() ? "" : " (" + opened.note + ")") << ", "
             << (config.devices > 1 ? std::to_string(config.devices) + " devices, " : std::string()) << config.threads
             << " threads, " << config.streams << (config.devices > 1 ? " streams per device, " : " streams, ")
             << (config.ops ? std::to_string(*config.ops) + " allocations" : format_double(duration) + " s")
             << ", seed " << config.seed << ", sizes " << config.sizes.text
             << (config.inject != fault::none ? ", inject " + std::string(to_string(config.inject)) : "") << '\n';
    if (result.trace_scale < 1.0) {
      progress << "stress: trace sizes scaled by " << result.trace_scale << " to fit the memory budget\n";
    }
    progress << std::flush;
  }

  const auto total_ops_done = [&] {
    std::uint64_t n = 0;
    for (const auto& w : workers) {
      n += w->counters.allocations.load(std::memory_order_relaxed) + w->counters.frees.load(std::memory_order_relaxed);
    }
    return n;
  };

  // Run, and report progress from this thread.
  const clock::time_point start = clock::now();
  std::vector<std::thread> threads;
  threads.reserve(config.threads);
  for (const auto& w : workers) threads.emplace_back([&w] { w->run(); });
  const clock::time_point deadline =
      start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(duration));
  clock::time_point last_report = start;
  std::uint64_t ops_at_last_report = 0;
  while (ctx.finished.load(std::memory_order_relaxed) < config.threads) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const clock::time_point now = clock::now();
    if (!config.ops && now >= deadline) ctx.stop.store(true, std::memory_order_relaxed);
    if (config.progress && now - last_report >= std::chrono::seconds(1)) {
      const std::uint64_t ops = total_ops_done();
      const double interval = std::chrono::duration<double>(now - last_report).count();
      progress << progress_line(std::chrono::duration<double>(now - start).count(),
                                double(ops - ops_at_last_report) / interval, shadow.now(),
                                peer_run ? std::nullopt : std::optional(pending_epochs()), violations.total())
               << '\n'
               << std::flush;
      last_report = now;
      ops_at_last_report = ops;
    }
  }
  for (std::thread& t : threads) t.join();
  result.seconds = std::chrono::duration<double>(clock::now() - start).count();

  // Blocks still in the hand-off queues: their event was recorded on the stream they were used on,
  // so verifying and freeing them on that same stream is in order without a wait.
  worker_counters drained;
  for (auto& a : allocators) {
    try {
      a->attach_thread();
    } catch (const std::exception& e) {
      violations.add(violation_kind::error, std::string("the main thread could not attach: ") + e.what());
    }
  }
  try {
    for (auto& box : ctx.inboxes) {
      handoff h;
      while (box->try_dequeue(h)) {
        device_lane& lane = ctx.lanes[h.block.lane];
        const stream_ref s = lane.streams[h.block.stream];
        lane.device.verify(s, h.block.p, round_down4(h.block.bytes), h.block.tag);
        lane.device.release_event(h.ready);
        if (!shadow.release(reinterpret_cast<std::uintptr_t>(h.block.p), config.threads,
                            h.block.lane * config.streams + h.block.stream, retire_kind::handed_off)) {
          violations.add(violation_kind::error, "harness: a handed-off block was not in the shadow map");
        }
        lane.allocator.deallocate(h.block.p, s, s);
        worker_counters::bump(drained.frees);
      }
    }
  } catch (const std::exception& e) {  // a peer's failed call
    violations.add(violation_kind::error, std::string("the main thread could not free the handed-off blocks: ") + e.what());
  }
  for (auto& a : allocators) a->detach_thread();
  if (const shadow_map::totals left = shadow.now(); left.blocks != 0) {
    violations.add(violation_kind::error, "harness: " + std::to_string(left.blocks) + " blocks still live after the drain");
  }

  for (device_lane& lane : ctx.lanes) {
    for (const stream_ref s : lane.streams) lane.allocator.retire_stream(s);  // the contract before destroying s
  }
  for (device_lane& lane : ctx.lanes) lane.device.synchronize_device();
  for (auto& p : pools) p->trim();
  for (device_lane& lane : ctx.lanes) {
    report_device_mismatches(lane.device.verification_report(), shadow, config.threads, violations);
  }
  for (auto& p : pools) {
    result.device_stats.push_back(p->stats());
    check_accounting(result.device_stats.back(), violations);
  }
  if (!pools.empty()) result.final_stats = result.device_stats[0];
  for (const double_handout_pool* d : doublers) result.faults_injected += d->injected();

  for (device_lane& lane : ctx.lanes) {
    for (const stream_ref s : lane.streams) lane.device.destroy_stream(s);
    lane.streams.clear();
  }
  allocators.clear();
  if (!peer_run) {
    pools.clear();
    for (const std::shared_ptr<backend>& device : opened.devices) {
      if (const std::size_t held = device->chunk_bytes(); held != 0) {
        violations.add(violation_kind::accounting, "device " + std::to_string(device->device()) + " memory: " +
                                                       std::to_string(held) +
                                                       " bytes still held in backend chunks after the pool was destroyed");
      }
    }
  } else {
    std::size_t reserved = 0;
    bool known = true;
    for (const auto& p : peers) {
      const std::optional<std::size_t> r = p->peak_reserved_bytes();
      known = known && r.has_value();
      reserved += r.value_or(0);
    }
    if (known) result.peer_peak_reserved_bytes = reserved;
    peers.clear();
    result.skipped_checks = peer_skipped_checks;
  }

  for (const auto& w : workers) {
    result.allocations += w->counters.allocations.load(std::memory_order_relaxed);
    result.frees += w->counters.frees.load(std::memory_order_relaxed);
    result.handoffs += w->counters.handoffs.load(std::memory_order_relaxed);
    result.cross_stream_frees += w->counters.cross_stream_frees.load(std::memory_order_relaxed);
    result.immediate_frees += w->counters.immediate_frees.load(std::memory_order_relaxed);
    result.stress_events_recorded += w->counters.events.load(std::memory_order_relaxed);
    result.quarantined += w->counters.quarantined.load(std::memory_order_relaxed);
    result.cross_device_handoffs += w->counters.cross_device_handoffs.load(std::memory_order_relaxed);
  }
  result.frees += drained.frees.load(std::memory_order_relaxed);
  result.ops = result.allocations + result.frees;
  result.ops_per_second = result.seconds > 0 ? double(result.ops) / result.seconds : 0;
  const shadow_map::totals peak = shadow.now();
  result.peak_live_bytes = peak.peak_bytes;
  result.peak_live_blocks = peak.peak_blocks;
  result.violations = violations.total();
  result.overlaps = violations.of(violation_kind::overlap);
  result.device_mismatches = violations.of(violation_kind::device_mismatch);
  result.invalid_frees = violations.of(violation_kind::invalid_free);
  result.first_violations = violations.first();
  return result;
}

}  // namespace cudapool::stress
