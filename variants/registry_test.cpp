#include "registry.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace cudapool {
namespace {

TEST(Registry, MakesEveryAvailableVariantByName) {
  auto device = std::shared_ptr<backend>(make_sim_backend());
  ASSERT_FALSE(available_variants().empty());
  for (const std::string& name : available_variants()) {
    auto pool = make_pool(name, device);
    EXPECT_EQ(pool->variant(), name);
    void* p = pool->allocate(1000, {});
    pool->deallocate(p);
    EXPECT_EQ(pool->stats().in_use_bytes, 0u);
  }
}

TEST(Registry, UnknownVariantNamesTheAvailableOnes) {
  auto device = std::shared_ptr<backend>(make_sim_backend());
  try {
    (void)make_pool("nope", device);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("available: mutex, lockfree, tls, stream"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cudapool
