#include <cudapool/detail/core/page_map.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

namespace cudapool::core {
namespace {

const void* at(std::uintptr_t a) { return reinterpret_cast<const void*>(a); }

TEST(PageMap, MapsEveryPageOfARangeAndNothingElse) {
  page_map m;
  const std::uintptr_t base = 0x7f1234560000;  // 64 KiB aligned
  m.set(at(base), 2 << 20, 42);
  EXPECT_EQ(m.find(at(base)), 42u);
  EXPECT_EQ(m.find(at(base + 12345)), 42u);
  EXPECT_EQ(m.find(at(base + (2 << 20) - 1)), 42u);
  EXPECT_EQ(m.find(at(base + (2 << 20))), 0u);
  EXPECT_EQ(m.find(at(base - 1)), 0u);
  m.set(at(base), 2 << 20, 0);
  EXPECT_EQ(m.find(at(base + 100)), 0u);
}

TEST(PageMap, RangesAcrossInteriorNodesAndFarApart) {
  page_map m;
  const std::uintptr_t straddle = (std::uintptr_t{1} << 32) - (1 << 20);  // crosses a leaf boundary
  m.set(at(straddle), 2 << 20, 1);
  m.set(at(0x10000), 1 << 16, 2);
  EXPECT_EQ(m.find(at(straddle + (3 << 19))), 1u);
  EXPECT_EQ(m.find(at(0x10000)), 2u);
  EXPECT_EQ(m.find(at(0x20000)), 0u);
  EXPECT_EQ(m.find(at(std::uintptr_t{1} << 50)), 0u);  // beyond 48 bits: never ours
  EXPECT_THROW(m.set(at(std::uintptr_t{1} << 48), 1 << 16, 3), std::invalid_argument);
}

}  // namespace
}  // namespace cudapool::core
