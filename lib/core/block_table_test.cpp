#include <cudapool/detail/core/block_table.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace cudapool::core {
namespace {

TEST(BlockTable, EntriesNeverMoveWhenTheTableGrows) {
  block_table t;
  t.grow_to(10);
  block_entry* first = &t[3];
  t.grow_to(3 * block_table::segment_size + 5);
  EXPECT_EQ(&t[3], first);
  EXPECT_EQ(t.size(), 3 * block_table::segment_size + 5);
  t[static_cast<std::uint32_t>(3 * block_table::segment_size + 4)].next.store(7);
  EXPECT_EQ(t[static_cast<std::uint32_t>(3 * block_table::segment_size + 4)].next.load(), 7u);
}

TEST(BlockTable, ReadersRaceSafelyWithGrowth) {
  block_table t;
  t.grow_to(1);
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) {
      const auto n = static_cast<std::uint32_t>(t.size());
      ASSERT_EQ(t[n - 1].next.load(std::memory_order_relaxed), no_block);
    }
  });
  for (std::size_t n = 2; n < 8 * block_table::segment_size; n += 4099) t.grow_to(n);
  done = true;
  reader.join();
}

TEST(BlockTable, MetaPacksStateAndRequestedBytes) {
  const std::uint32_t m = block_entry::pack(block_state::pending, 12345);
  EXPECT_EQ(block_entry::state_of(m), block_state::pending);
  EXPECT_EQ(m & block_entry::bytes_mask, 12345u);
  block_entry e;
  e.address_and_class = 0x7f0000001000ull | 17;
  EXPECT_EQ(e.address(), reinterpret_cast<void*>(0x7f0000001000ull));
  EXPECT_EQ(e.size_class(), 17u);
}

TEST(BlockTable, GrowingPastTheMaximumThrows) {
  segmented_table<int, 4, 2> tiny;
  tiny.grow_to(32);
  EXPECT_THROW(tiny.grow_to(33), std::length_error);
}

}  // namespace
}  // namespace cudapool::core
