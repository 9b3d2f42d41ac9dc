// What bench's replay/<variant>/<trace>[/immediate] measures of memory (peak reserved over peak
// live bytes), on the simulated device with 2 MiB pages, for the traces recorded from PyTorch loops
// (traces/). The GPU figures are in docs/results.md; here CI sees the same heap placement, which
// does not depend on the device.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <cudapool/mutex_pool.hpp>
#include <cudapool/registry.hpp>
#include "counting_backend.hpp"
#include "fit_floor.hpp"
#include "trace.hpp"

namespace {

using namespace cudapool;

// Replays the trace `passes` times with immediate frees; returns peak reserved / peak live.
double reserved_over_live(const bench::trace& t, const pool_options& options, int passes) {
  auto device = std::shared_ptr<backend>(make_sim_backend());
  mutex_pool pool(device, options);
  std::vector<void*> slots(t.slots, nullptr);
  for (int pass = 0; pass < passes; ++pass) {
    for (const bench::trace_op& o : t.ops) {
      if (o.alloc) {
        slots[o.slot] = pool.allocate(o.bytes);
      } else {
        pool.deallocate(slots[o.slot]);
        slots[o.slot] = nullptr;
      }
    }
  }
  const pool_stats st = pool.stats();
  EXPECT_EQ(st.in_use_bytes, 0u);
  return static_cast<double>(st.peak_reserved_bytes) / static_cast<double>(t.peak_live);
}

// As bench's replay/<variant>/<trace> (stream-ordered frees on the trace's streams, as recorded),
// with the sim's events settled on query (counting_backend's settle: the GPU's replay, where nothing
// runs on the device, finds them complete), or elided (replay/.../elided). Returns peak reserved /
// peak live. streams_before: streams created (and left unused) before the trace's.
double ordered_reserved_over_live(const bench::trace& t, std::string_view variant, const pool_options& options,
                                  int passes, unsigned streams_before = 0,
                                  bench::event_mode mode = bench::event_mode::settle, std::uint64_t lag = 0) {
  auto device = std::make_shared<bench::counting_backend>(std::shared_ptr<backend>(make_sim_backend()), mode, lag);
  std::vector<stream_ref> unused;
  for (unsigned i = 0; i < streams_before; ++i) unused.push_back(device->create_stream());
  std::vector<stream_ref> streams;
  for (unsigned i = 0; i < t.streams; ++i) streams.push_back(device->create_stream());
  double ratio = 0;
  {
    const std::unique_ptr<any_pool> pool = make_pool(variant, device, options);
    std::vector<void*> slots(t.slots, nullptr);
    for (int pass = 0; pass < passes; ++pass) {
      for (const bench::trace_op& o : t.ops) {
        if (o.alloc) {
          slots[o.slot] = pool->allocate(o.bytes, streams[o.stream]);
        } else {
          pool->deallocate(std::exchange(slots[o.slot], nullptr), streams[o.stream]);
        }
        device->tick();
      }
    }
    const pool_stats st = pool->stats();
    EXPECT_EQ(st.in_use_bytes, 0u) << variant;
    ratio = static_cast<double>(st.peak_reserved_bytes) / static_cast<double>(t.peak_live);
    for (stream_ref s : streams) pool->retire_stream(s);
  }
  for (stream_ref s : streams) device->destroy_stream(s);
  for (stream_ref s : unused) device->destroy_stream(s);
  return ratio;
}

// Every variant, stream-ordered as recorded (mlp_4stream: 4 streams), with the sim's events settled
// on query, over 10 passes (bench's loop replays a trace many times; the first passes reserve less):
// within max(1.10, floor + 0.01), as the immediate replay below. The figures are the H200's
// (docs/results.md): 1.030, 1.085, 1.041 on the single-stream traces, and on mlp_4stream 1.054 for
// the shared-list pools and 1.132 for the stream variant (s9), before a large request passed over
// a looser fit for a range of its size behind another stream's epoch (MultiStreamReplayInEveryStreamOrder
// below). A large miss that does not close the other streams' range epochs fails it.
TEST(ReplayMemory, StreamOrderedReplaysOfEveryVariant) {
  for (const char* name : {"cnn_varbatch", "lm_infer_varseq", "lm_train", "mlp_4stream"}) {
    const bench::trace t = bench::load_trace(std::string(CUDAPOOL_TRACES_DIR "/") + name + ".csv");
    const double floor = static_cast<double>(bench::best_fit_floor(t, std::size_t{2} << 20)) / static_cast<double>(t.peak_live);
    for (const std::string& v : available_variants()) {
      const double ordered = ordered_reserved_over_live(t, v, {}, 10);
      RecordProperty(std::string(name) + "_" + v, std::to_string(ordered));
      EXPECT_LE(ordered, std::max(1.10, floor + 0.01)) << name << " " << v << ": floor " << floor;
    }
  }
}

// replay/<variant>/<trace>/elided (the events never reach the device; every query finds its event
// complete) makes the decisions of the replay whose events the device completes, so that its time,
// subtracted from the stream-ordered one, is what the device's event calls cost and nothing else:
// on the one-stream traces the same peak reserved bytes; on mlp_4stream, whose figure moves with
// the order of the pool's per-stream tables (the streams' handles: two settled replays in one
// process differ, MultiStreamReplayInEveryStreamOrder), the same bound. Elide answering queries
// "pending" instead fails it.
TEST(ReplayMemory, ElidedEventsReserveAsSettledOnes) {
  for (const char* name : {"cnn_varbatch", "lm_infer_varseq", "lm_train", "mlp_4stream"}) {
    const bench::trace t = bench::load_trace(std::string(CUDAPOOL_TRACES_DIR "/") + name + ".csv");
    for (const std::string& v : available_variants()) {
      const double elided = ordered_reserved_over_live(t, v, {}, 10, 0, bench::event_mode::elide);
      if (t.streams == 1) {
        EXPECT_EQ(elided, ordered_reserved_over_live(t, v, {}, 10)) << name << " " << v;
      } else {
        EXPECT_LE(elided, 1.10) << name << " " << v;
      }
    }
  }
}

// The stream-ordered replay of mlp_4stream (4 streams) with the streams created after 0..7 others:
// the order of the pool's per-stream tables (partitions, epoch shards) moves with the streams'
// handles and ids, and with it which stream's ranges complete first. Every variant within 1.10 for
// every order. Before a large request passed over a looser fit for a range of its size behind
// another stream's epoch (segment_heap::allocate's `behind`), the stream variant took 1.13x in half
// of the orders (1.132 on the H200) and the others 1.054x.
TEST(ReplayMemory, MultiStreamReplayInEveryStreamOrder) {
  const bench::trace t = bench::load_trace(CUDAPOOL_TRACES_DIR "/mlp_4stream.csv");
  for (const std::string& v : available_variants()) {
    for (unsigned before = 0; before < 8; ++before) {
      const double ordered = ordered_reserved_over_live(t, v, {}, 10, before);
      RecordProperty(v + "_" + std::to_string(before), std::to_string(ordered));
      EXPECT_LE(ordered, 1.10) << v << " after " << before << " other streams";
    }
  }
}

// The PyTorch plug-in's settings (classes up to 64 KiB, remap_ratio 1.01), every variant,
// stream-ordered as above: within max(1.10, floor + 0.01). The stream variant's range epochs closed
// only after epoch_batch large frees (its small frees never join an epoch), so its ranges stayed
// pending longer than the other variants', the remap could unmap only the few without pending work,
// and cnn_varbatch reserved 1.34x its live peak (H200 and sim; the others 1.05x) until every
// epoch_batch stream-ordered frees on a stream closed its epoch of ranges
// (epoch_table::close_epoch_of_ranges).
TEST(ReplayMemory, ThePluginsSettingsOnStreamOrderedReplaysOfEveryVariant) {
  pool_options plugin;
  plugin.max_class_bytes = std::size_t{64} << 10;
  plugin.remap_ratio = 1.01;
  for (const char* name : {"cnn_varbatch", "lm_infer_varseq", "lm_train", "mlp_4stream"}) {
    const bench::trace t = bench::load_trace(std::string(CUDAPOOL_TRACES_DIR "/") + name + ".csv");
    const double floor = static_cast<double>(bench::best_fit_floor(t, std::size_t{2} << 20)) / static_cast<double>(t.peak_live);
    for (const std::string& v : available_variants()) {
      const double ordered = ordered_reserved_over_live(t, v, plugin, 10);
      RecordProperty(std::string(name) + "_" + v, std::to_string(ordered));
      EXPECT_LE(ordered, std::max(1.10, floor + 0.01)) << name << " " << v << ": floor " << floor;
    }
  }
}

// lm_train, the PyTorch plug-in's defaults (classes up to 64 KiB, no remap), stream-ordered as
// recorded: within 1.03x its live peak, below what PyTorch's expandable segments held in the same
// loop on the H200 (2840 MiB over the baseline, about 2748 of them the allocator's: 1.033x the
// 2661 MiB live; docs/results/2026-12-02-h200-s12). Equal holes taken latest-freed first (the bin
// lists' order) reserved 1.037x.
TEST(ReplayMemory, LmTrainWithThePluginsDefaultsStaysBelowExpandableSegments) {
  const bench::trace t = bench::load_trace(CUDAPOOL_TRACES_DIR "/lm_train.csv");
  pool_options plugin;
  plugin.max_class_bytes = std::size_t{64} << 10;
  for (const std::string& v : available_variants()) {
    const double ordered = ordered_reserved_over_live(t, v, plugin, 10);
    RecordProperty(v, std::to_string(ordered));
    EXPECT_LE(ordered, 1.03) << v;
  }
}

// remap_ratio on a stream-ordered replay: a growth that would remap pages pending behind its own
// stream's epochs waits for them first (segment_heap::allocate's wait_own), so it moves what an
// immediate replay moves, whatever the device has completed. Every variant, the default classes and
// the plug-in's, 10 passes: within 1.05x the live peak, and never above the same replay without
// remap. Without the wait remap could move only the pages whose epochs had completed, and the
// default classes' replay of cnn_varbatch reserved 1.33x its live peak (1.03x without remap).
TEST(ReplayMemory, StreamOrderedRemapMovesWhatAnImmediateOneMoves) {
  for (const std::size_t max_class : {pool_options{}.max_class_bytes, std::size_t{64} << 10}) {
    pool_options plain;
    plain.max_class_bytes = max_class;
    pool_options remap = plain;
    remap.remap_ratio = 1.01;
    for (const char* name : {"cnn_varbatch", "lm_infer_varseq", "lm_train", "mlp_4stream"}) {
      const bench::trace t = bench::load_trace(std::string(CUDAPOOL_TRACES_DIR "/") + name + ".csv");
      for (const std::string& v : available_variants()) {
        const double moved = ordered_reserved_over_live(t, v, remap, 10);
        const double kept = ordered_reserved_over_live(t, v, plain, 10);
        RecordProperty(std::string(name) + "_" + v + "_" + std::to_string(max_class >> 10) + "k", std::to_string(moved));
        EXPECT_LE(moved, 1.05) << name << " " << v << " classes to " << max_class;
        EXPECT_LE(moved, kept) << name << " " << v << " classes to " << max_class;
      }
    }
  }
}

// Every recorded trace: the pool's default heap stays within 3% of the ideal best fit's floor
// (fit_floor.hpp) and within 10% of the live peak where that floor allows it. Without the
// wilderness rule the CNN trace took 1.31x its live peak against a floor of 1.05x.
TEST(ReplayMemory, TheHeapStaysNearTheBestFitFloorOnEveryRecordedTrace) {
  for (const char* name : {"cnn_varbatch", "lm_infer_varseq", "lm_train", "mlp_4stream"}) {
    const bench::trace t = bench::load_trace(std::string(CUDAPOOL_TRACES_DIR "/") + name + ".csv");
    ASSERT_GE(t.peak_live, std::size_t{64} << 20) << name;
    const double floor = static_cast<double>(bench::best_fit_floor(t, std::size_t{2} << 20)) / static_cast<double>(t.peak_live);
    const double plain = reserved_over_live(t, {}, 2);
    RecordProperty(std::string(name) + "_floor", std::to_string(floor));
    RecordProperty(std::string(name) + "_pool", std::to_string(plain));
    EXPECT_LE(plain, floor + 0.03) << name << ": floor " << floor;
    EXPECT_LE(plain, std::max(1.10, floor + 0.01)) << name << ": floor " << floor;
  }
}

// remap_ratio moves free pages to where a request fits instead of growing: below the floor of a
// heap whose blocks never move.
TEST(ReplayMemory, RemapRatioGoesBelowTheFloor) {
  const bench::trace t = bench::load_trace(CUDAPOOL_TRACES_DIR "/lm_infer_varseq.csv");
  pool_options remap;
  remap.remap_ratio = 1.02;
  const double floor = static_cast<double>(bench::best_fit_floor(t, std::size_t{2} << 20)) / static_cast<double>(t.peak_live);
  const double remapped = reserved_over_live(t, remap, 2);
  RecordProperty("floor", std::to_string(floor));
  RecordProperty("remap_1.02", std::to_string(remapped));
  EXPECT_LT(remapped, floor - 0.02);
}

}  // namespace


// The device a step behind the host, as in a PyTorch loop (workloads.py synchronises once a step),
// where a replay's events complete at once: the plug-in's defaults (classes up to 64 KiB, no
// remap), every variant, each one-stream trace with its events complete one step of the trace
// later (its operations over the 30 steps it recorded, 25 and 5 of warm-up: lm_train 808,
// cnn_varbatch 565, lm_infer_varseq 245): within max(1.10, floor + 0.01), as settled. s28 measured
// on the sim, every variant alike: lm_train 1.037, cnn_varbatch 1.091, lm_infer_varseq 1.077, against
// 1.025, 1.021 and 1.071 settled (3 passes, mutex). Four or more steps
// behind (a loop that never synchronises) lm_infer_varseq reserved 1.18-1.25x (docs/design.md).
TEST(ReplayMemory, StreamOrderedReplaysWithTheDeviceAStepBehind) {
  pool_options plugin;
  plugin.max_class_bytes = std::size_t{64} << 10;
  for (const char* name : {"cnn_varbatch", "lm_infer_varseq", "lm_train"}) {
    const bench::trace t = bench::load_trace(std::string(CUDAPOOL_TRACES_DIR "/") + name + ".csv");
    const double floor = static_cast<double>(bench::best_fit_floor(t, std::size_t{2} << 20)) / static_cast<double>(t.peak_live);
    const std::uint64_t step = t.ops.size() / 30;
    for (const std::string& v : available_variants()) {
      const double lagged = ordered_reserved_over_live(t, v, plugin, 3, 0, bench::event_mode::lag, step);
      RecordProperty(std::string(name) + "_" + v, std::to_string(lagged));
      EXPECT_LE(lagged, std::max(1.10, floor + 0.01)) << name << " " << v << ", the device " << step
                                                       << " operations behind: floor " << floor;
    }
  }
}

// LM inference alone in a fresh process (testdata/lm_infer_varseq_alone.csv, recorded on the GPU
// with the plug-in: 65 steps, a new sequence length each) with the device behind the host: a
// step's frees are pending when the next step allocates. A slab takes no pending range, so it maps a
// page; cut from the bottom of the unmapped space, that page walled the step's pending range off
// from the pages above it, and the next, larger request mapped all of its bytes past the wall:
// 1.18x the live peak with the device 1/30 of the trace behind, 1.49x with it never caught up
// (the GPU process mapped 1,312 MiB for 1,004 MiB live, docs/results/2026-12-06-h100-s38), against
// 1.07x with every event complete. The growth now maps from the top of the unmapped range when the
// range below it is one the caller may not take (segment_heap::grow).
TEST(ReplayMemory, ASlabMappedWhileRangesArePendingDoesNotWallThemOff) {
  pool_options plugin;
  plugin.max_class_bytes = std::size_t{64} << 10;
  const bench::trace t = bench::load_trace(CUDAPOOL_TESTDATA_DIR "/lm_infer_varseq_alone.csv");
  const double floor = static_cast<double>(bench::best_fit_floor(t, std::size_t{2} << 20)) / static_cast<double>(t.peak_live);
  for (const std::uint64_t lag : {std::uint64_t{t.ops.size() / 30}, std::uint64_t{1} << 40}) {
    for (const std::string& v : available_variants()) {
      const double lagged = ordered_reserved_over_live(t, v, plugin, 1, 0, bench::event_mode::lag, lag);
      RecordProperty("lag_" + std::to_string(lag) + "_" + v, std::to_string(lagged));
      EXPECT_LE(lagged, std::max(1.10, floor + 0.01)) << v << ", the device " << lag << " operations behind: floor " << floor;
    }
  }
}

// The lag model itself: an event recorded at operation n completes from operation n + lag on, or
// once the host waited for it, its stream or the device.
TEST(ReplayMemory, TheLaggedDeviceCompletesEventsLagOperationsLater) {
  bench::counting_backend device(std::shared_ptr<backend>(make_sim_backend()), bench::event_mode::lag, 3);
  const stream_ref s = device.create_stream();
  const event_handle e = device.acquire_event();
  const event_handle f = device.acquire_event();
  device.record(e, s);
  EXPECT_FALSE(device.query(e));
  device.tick();
  device.tick();
  EXPECT_FALSE(device.query(e));
  EXPECT_FALSE(device.query_stream(s));
  device.tick();
  EXPECT_TRUE(device.query(e));
  EXPECT_TRUE(device.query_stream(s));
  device.record(f, s);
  EXPECT_FALSE(device.query(f));
  device.wait(f);  // the host waited: complete now
  EXPECT_TRUE(device.query(f));
  device.tick();
  device.record(e, s);
  EXPECT_FALSE(device.query_stream(s));
  device.synchronize(s);
  EXPECT_TRUE(device.query(e));
  EXPECT_EQ(device.counts().incomplete_queries, 3u);  // query()'s alone, as in forward mode
  EXPECT_EQ(device.counts().busy_stream_queries, 2u);  // query_stream()'s alone
  device.release_event(e);
  device.release_event(f);
  device.destroy_stream(s);
}

// Forward mode counts the stream queries that found their stream busy and times every stream query
// (serve's device_busy_stream_queries and device_stream_query_ns_per_call: the stream variant's
// steals).
TEST(ReplayMemory, ForwardModeCountsBusyStreamQueries) {
  bench::counting_backend device{std::shared_ptr<backend>(make_sim_backend())};
  const stream_ref s = device.create_stream();
  device.spin(s, std::chrono::milliseconds(200));
  EXPECT_FALSE(device.query_stream(s));
  device.synchronize(s);
  EXPECT_TRUE(device.query_stream(s));
  const bench::device_call_counts n = device.counts();
  EXPECT_EQ(n.stream_queries, 2u);
  EXPECT_EQ(n.busy_stream_queries, 1u);
  EXPECT_GT(n.stream_query_ns, 0u);
  EXPECT_EQ(n.incomplete_queries, 0u);  // event queries alone
  device.destroy_stream(s);
}

// One stream alone in the heap (a PyTorch loop): its large frees close its epochs like small ones,
// so that once the device has passed them the slabs, which serve every stream and so take only
// ranges whose epoch completed, reuse their pages. s25's rule (a lone stream's large frees kept out
// of its epochs until a second stream came, 4f44010) left them in an open epoch that only a slab's
// slow path closed, whose event the device had not reached: the slabs below mapped new pages, as
// they mapped ten more in a PyTorch process on the GPU (docs/design.md, "Epochs of one stream").
TEST(ReplayMemory, SlabsReuseALoneStreamsLargeFreesOnceTheDevicePassedThem) {
  pool_options o;
  o.max_class_bytes = std::size_t{64} << 10;  // the plug-in's classes
  o.epoch_batch = 8;
  constexpr std::uint64_t lag = 4;
  for (const std::string& v : available_variants()) {
    auto device = std::make_shared<bench::counting_backend>(std::shared_ptr<backend>(make_sim_backend()), bench::event_mode::lag, lag);
    const stream_ref s = device->create_stream();
    {
      const std::unique_ptr<any_pool> pool = make_pool(v, device, o);
      std::vector<void*> large;
      for (std::size_t i = 0; i < o.epoch_batch; ++i) {
        large.push_back(pool->allocate(std::size_t{2} << 20, s));
        device->tick();
      }
      for (void* p : large) {
        pool->deallocate(p, s);
        device->tick();
      }
      for (std::uint64_t i = 0; i < lag; ++i) device->tick();  // the device passes the frees
      const std::size_t mapped = pool->stats().reserved_bytes;
      std::vector<void*> small;
      for (std::size_t bytes = 256; bytes <= o.max_class_bytes; bytes *= 2) {  // a new slab each
        small.push_back(pool->allocate(bytes, s));
        device->tick();
      }
      EXPECT_EQ(pool->stats().reserved_bytes, mapped) << v << ": the slabs mapped new pages beside the freed ranges";
      for (void* p : small) pool->deallocate(p, s);
      pool->retire_stream(s);
    }
    device->destroy_stream(s);
  }
}
