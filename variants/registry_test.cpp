#include <cudapool/registry.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

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

TEST(Registry, PlainPoolsAreTheSameVariantsWithoutDebugHooks) {
  auto device = std::shared_ptr<backend>(make_sim_backend());
  for (const std::string& name : available_variants()) {
    auto pool = make_plain_pool(name, device);
    EXPECT_EQ(pool->variant(), name);
    void* p = pool->allocate(1000, {});
    pool->deallocate(p);
    EXPECT_EQ(pool->stats().in_use_bytes, 0u);
    pool_options debug;
    debug.debug.record_stacks = true;
    EXPECT_THROW((void)make_plain_pool(name, device, debug), std::invalid_argument);
  }
}

// CUDAPOOL_TRACE: every pool of the process records into the one file while it is set.
TEST(Registry, TheTraceEnvironmentVariableRecordsEveryPool) {
  const std::string path = ::testing::TempDir() + "cudapool_env_trace.csv";
  ASSERT_EQ(setenv("CUDAPOOL_TRACE", path.c_str(), 1), 0);
  auto device = std::shared_ptr<backend>(make_sim_backend());
  {
    auto a = make_pool("tls", device);
    auto b = make_pool("stream", device);
    pool_options no_env;
    no_env.debug.trace_from_environment = false;
    auto c = make_pool("mutex", device, no_env);  // opted out
    void* p = a->allocate(1000, {});
    void* q = b->allocate(3000, {});
    void* r = c->allocate(5000, {});
    a->deallocate(p);
    b->deallocate(q);
    c->deallocate(r);
  }
  ASSERT_EQ(unsetenv("CUDAPOOL_TRACE"), 0);
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  }
  const std::vector<std::string> expected = {"a,1,1000,0,0", "a,2,3000,0,0", "f,1,1000,0,0", "f,2,3000,0,0"};
  EXPECT_EQ(lines, expected);
}

}  // namespace
}  // namespace cudapool
