// What bench's replay/<variant>/<trace>/immediate measures of memory (peak reserved over peak live
// bytes), on the simulated device with 2 MiB pages, for a trace recorded from a PyTorch loop
// (traces/cnn_varbatch.csv, the most fragmenting of the recorded ones). The GPU figures are in
// docs/results.md; here CI sees the same heap placement, which does not depend on the device.

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "mutex/mutex_pool.hpp"
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

TEST(ReplayMemory, RemapRatioKeepsARecordedTraceWithinTenPercentOfItsLivePeak) {
  const bench::trace t = bench::load_trace(CUDAPOOL_TRACES_DIR "/cnn_varbatch.csv");
  ASSERT_GE(t.peak_live, std::size_t{64} << 20);
  pool_options remap;
  remap.remap_ratio = 1.05;
  const double plain = reserved_over_live(t, {}, 2);
  const double remapped = reserved_over_live(t, remap, 2);
  RecordProperty("plain", std::to_string(plain));
  RecordProperty("remap_1.05", std::to_string(remapped));
  EXPECT_LE(remapped, 1.10) << "plain best fit: " << plain;
  // The option is what does it: best fit alone leaves this trace fragmented (1.32x on the H200).
  EXPECT_GT(plain, remapped + 0.1);
}

}  // namespace
