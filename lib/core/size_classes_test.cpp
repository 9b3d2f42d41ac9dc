#include <cudapool/detail/core/size_classes.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace cudapool::core {
namespace {

TEST(SizeClasses, DefaultsAreGeometricMultiplesOf256) {
  const size_classes sc(pool_options{});
  const std::size_t expected[] = {256, 512, 768, 1024, 1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096, 5120};
  for (std::size_t i = 0; i < std::size(expected); ++i) EXPECT_EQ(sc.bytes(i), expected[i]) << i;
  for (std::size_t c = 0; c < sc.count(); ++c) {
    EXPECT_EQ(sc.bytes(c) % 256, 0u);
    if (c > 0) {
      EXPECT_GT(sc.bytes(c), sc.bytes(c - 1));
    }
  }
  EXPECT_EQ(sc.max_bytes(), std::size_t{1} << 20);
}

TEST(SizeClasses, LookupIsTheSmallestClassThatFits) {
  for (unsigned k : {1u, 2u, 4u, 8u}) {
    pool_options o;
    o.classes_per_doubling = k;
    o.max_class_bytes = 4 << 20;
    const size_classes sc(o);
    size_class c = 0;
    for (std::size_t n = 1; n <= sc.max_bytes(); n += (n < 70000 ? 1 : 997)) {
      while (sc.bytes(c) < n) ++c;
      ASSERT_EQ(sc.lookup(n), c) << "k=" << k << " n=" << n;
    }
    EXPECT_EQ(sc.lookup(sc.max_bytes()), sc.count() - 1);
    EXPECT_EQ(sc.lookup(sc.max_bytes() + 1), large_class);
  }
}

TEST(SizeClasses, AlignedLookupPicksAClassWhoseSizeIsAMultipleOfTheAlignment) {
  const size_classes sc(pool_options{});
  EXPECT_EQ(sc.bytes(sc.lookup(300, 1024)), 1024u);
  EXPECT_EQ(sc.bytes(sc.lookup(5000, 4096)), 8192u);
  EXPECT_EQ(sc.lookup(100, 1 << 17), large_class);  // more than a slab's alignment
  EXPECT_EQ(sc.lookup(300, 256), sc.lookup(300));
}

TEST(SizeClasses, SingleClassIsTheClassicFixedBlockPool) {
  pool_options o;
  o.fixed_block_bytes = 3 * 256;
  const size_classes sc(o);
  EXPECT_EQ(sc.count(), 1u);
  EXPECT_EQ(sc.lookup(1), 0u);
  EXPECT_EQ(sc.lookup(768), 0u);
  EXPECT_EQ(sc.lookup(769), large_class);
}

TEST(SizeClasses, BadConfigurationsAreRejectedWithTheReason) {
  pool_options o;
  o.classes_per_doubling = 3;
  EXPECT_THROW(size_classes{o}, std::invalid_argument);
  o = {};
  o.max_class_bytes = 1000;
  EXPECT_THROW(size_classes{o}, std::invalid_argument);
  o = {};
  o.fixed_block_bytes = 1000;
  try {
    size_classes{o};
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("multiple of 256"), std::string::npos);
  }
}

// class_set: insert says whether a class is new, and for_each visits each class once, in class
// order, across its words.
TEST(ClassSet, VisitsEachInsertedClassOnceInOrder) {
  class_set set;
  for (const size_class c : {127u, 0u, 64u, 63u, 5u}) EXPECT_TRUE(set.insert(c)) << c;
  EXPECT_FALSE(set.insert(64));
  EXPECT_FALSE(set.insert(0));
  std::vector<size_class> seen;
  set.for_each([&](size_class c) { seen.push_back(c); });
  EXPECT_EQ(seen, (std::vector<size_class>{0, 5, 63, 64, 127}));
}

}  // namespace
}  // namespace cudapool::core
