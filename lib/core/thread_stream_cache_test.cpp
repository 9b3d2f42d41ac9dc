// thread_stream_cache_test.cpp - stream_slot spreads handles the runtime hands out (pointers to
// its stream objects: a fixed stride apart, or page-aligned) over a table, so that a thread
// cycling over a few streams keeps all of them cached. Until s31 the slot was bits 4-6 of the
// handle, and every stride of 128 bytes or more put all of a thread's streams in one slot.
#include <cudapool/detail/core/thread_stream_cache.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

namespace {

using cudapool::stream_ref;
using cudapool::core::stream_slot;
using cudapool::core::thread_stream_cache;

stream_ref handle(std::uintptr_t address) { return stream_ref(reinterpret_cast<void*>(address)); }

// Strides of runtime objects: every multiple of 16 up to a page, then the powers of two up to
// 32 MiB. Bases: 16-byte aligned user-space addresses from a fixed generator.
std::vector<std::uintptr_t> strides() {
  std::vector<std::uintptr_t> out;
  for (std::uintptr_t s = 16; s <= 4096; s += 16) out.push_back(s);
  for (std::uintptr_t s = 8192; s <= (32u << 20); s *= 2) out.push_back(s);
  return out;
}
std::vector<std::uintptr_t> bases(std::size_t n) {
  std::vector<std::uintptr_t> out;
  std::uint64_t x = 0x2545F4914F6CDD1DULL;
  for (std::size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    out.push_back(static_cast<std::uintptr_t>(0x550000000000ULL + (x % 0x2aff00000000ULL)) & ~std::uintptr_t{15});
  }
  return out;
}

struct tag {};

// Four streams a stride apart, put in a thread's cache: all four are found again. By chance three
// of four hashed handles share one of 16 sets under 2% of the time; with bits 4-7 as the set, one
// case in nine lost a stream (and direct-mapped on bits 4-6, as until s31, far more).
TEST(ThreadStreamCache, KeepsFourStreamsAtMostStridesAndBases) {
  using cache = thread_stream_cache<tag, std::uintptr_t>;
  std::size_t cases = 0;
  std::size_t lost = 0;
  for (const std::uintptr_t stride : strides()) {
    for (const std::uintptr_t base : bases(16)) {
      const std::uint64_t owner = cache::new_owner();
      for (std::uintptr_t i = 0; i < 4; ++i) cache::put(owner, handle(base + i * stride), i);
      bool all = true;
      for (std::uintptr_t i = 0; i < 4; ++i) {
        const std::uintptr_t* v = cache::find(owner, handle(base + i * stride));
        if (v == nullptr) {
          all = false;
        } else {
          EXPECT_EQ(*v, i);
        }
      }
      ++cases;
      if (!all) ++lost;
    }
  }
  EXPECT_LE(static_cast<double>(lost) / static_cast<double>(cases), 0.03) << lost << " of " << cases;
}

// The epoch table's shards: sixteen streams a power-of-two stride apart take about ten of sixteen
// shards, as random placement would (bits 4-7 alone: one for every stride of 256 bytes or more).
TEST(StreamSlot, SixteenStreamsSpreadOverTheShards) {
  std::size_t cases = 0;
  std::size_t distinct = 0;
  for (std::uintptr_t stride = 16; stride <= (32u << 20); stride *= 2) {
    for (const std::uintptr_t base : bases(4)) {
      std::set<std::size_t> slots;
      for (std::uintptr_t i = 0; i < 16; ++i) {
        const std::size_t slot = stream_slot<16>(handle(base + i * stride));
        ASSERT_LT(slot, 16u);
        slots.insert(slot);
      }
      ++cases;
      distinct += slots.size();
    }
  }
  EXPECT_GE(static_cast<double>(distinct) / static_cast<double>(cases), 9.5);
}

TEST(ThreadStreamCache, OwnersAndHandlesAreToldApart) {
  using cache = thread_stream_cache<tag, int>;
  const std::uint64_t a = cache::new_owner();
  const std::uint64_t b = cache::new_owner();
  const std::uintptr_t base = 0x7f3a2c000000;
  cache::put(a, handle(base), 1);
  EXPECT_EQ(cache::find(b, handle(base)), nullptr);
  EXPECT_EQ(cache::find(a, handle(base + 8 * 4096)), nullptr);
  ASSERT_NE(cache::find(a, handle(base)), nullptr);
  EXPECT_EQ(*cache::find(a, handle(base)), 1);
  cache::put(a, handle(base), 2);  // in place: no second entry for the same stream
  EXPECT_EQ(*cache::find(a, handle(base)), 2);
}

// Two streams in one set both stay; a third in the set drops the older of the two.
TEST(ThreadStreamCache, ASetKeepsTheTwoLatestStreams) {
  using cache = thread_stream_cache<tag, int, 2>;
  const std::uint64_t owner = cache::new_owner();
  std::uintptr_t same[3] = {};
  std::size_t found = 0;
  for (std::uintptr_t p = 0x7f3a2c000000; found < 3; p += 16) {
    if (stream_slot<2>(handle(p)) == 0) same[found++] = p;
  }
  cache::put(owner, handle(same[0]), 0);
  cache::put(owner, handle(same[1]), 1);
  ASSERT_NE(cache::find(owner, handle(same[0])), nullptr);
  ASSERT_NE(cache::find(owner, handle(same[1])), nullptr);
  cache::put(owner, handle(same[2]), 2);
  EXPECT_EQ(cache::find(owner, handle(same[0])), nullptr);
  EXPECT_EQ(*cache::find(owner, handle(same[1])), 1);
  EXPECT_EQ(*cache::find(owner, handle(same[2])), 2);
}

}  // namespace
