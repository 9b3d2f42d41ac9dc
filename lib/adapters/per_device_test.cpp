// Tests of cudapool::per_device: on injected simulated devices here, on the real GPUs when there
// are some.
#include <cudapool/per_device.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include <cudapool/mutex_pool.hpp>
#include <cudapool/tls_pool.hpp>

namespace cudapool {
namespace {

// Simulated devices; counts the backends made and lets each thread pick its current device.
struct sim_devices {
  std::atomic<int> made{0};
  std::vector<std::atomic<int>> made_for;
  static inline thread_local int current = 0;

  explicit sim_devices(int n) : made_for(static_cast<std::size_t>(n)) {}
  per_device_source source() {
    return {static_cast<int>(made_for.size()),
            [this](int device) -> std::shared_ptr<backend> {
              made.fetch_add(1);
              made_for[static_cast<std::size_t>(device)].fetch_add(1);
              return make_sim_backend();
            },
            [] { return current; }};
  }
};

TEST(PerDevice, PoolsAreCreatedLazilyOncePerDevice) {
  sim_devices devices(3);
  per_device<mutex_pool> pools(devices.source(), {});
  EXPECT_EQ(pools.device_count(), 3);
  EXPECT_EQ(devices.made.load(), 0) << "nothing is created before first use";
  mutex_pool& p1 = pools.get(1);
  EXPECT_TRUE(pools.created(1));
  EXPECT_FALSE(pools.created(0));
  EXPECT_EQ(&pools.get(1), &p1);
  EXPECT_EQ(devices.made.load(), 1);
  void* p = p1.allocate(4096);
  p1.deallocate(p);
  EXPECT_EQ(p1.stats().allocs, 1u);
  EXPECT_EQ(pools.get(0).stats().allocs, 0u) << "each device has its own pool";
  EXPECT_NE(&pools.get(0), &p1);
}

TEST(PerDevice, CurrentFollowsTheCallingThreadsDevice) {
  sim_devices devices(2);
  per_device<tls_pool> pools(devices.source(), {});
  sim_devices::current = 1;
  EXPECT_EQ(&pools.current(), &pools.get(1));
  sim_devices::current = 0;
  EXPECT_EQ(&pools.current(), &pools.get(0));
  sim_devices::current = 2;
  EXPECT_THROW((void)pools.current(), std::out_of_range);
  sim_devices::current = 0;
}

TEST(PerDevice, OptionsReachEveryPool) {
  sim_devices devices(2);
  pool_options o;
  o.fixed_block_bytes = 8192;
  per_device<mutex_pool> pools(devices.source(), o);
  EXPECT_EQ(pools.get(0).options().fixed_block_bytes, 8192u);
  EXPECT_EQ(pools.get(1).stats().classes.size(), 1u);
}

TEST(PerDevice, ConcurrentFirstUseMakesOnePoolPerDevice) {
  constexpr int threads = 16;
  sim_devices devices(4);
  per_device<mutex_pool> pools(devices.source(), {});
  std::vector<std::atomic<mutex_pool*>> seen(threads);
  std::barrier start(threads);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      start.arrive_and_wait();
      mutex_pool& p = pools.get(t % 4);
      void* q = p.allocate(256);
      p.deallocate(q);
      seen[static_cast<std::size_t>(t)] = &p;
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(devices.made.load(), 4);
  for (int d = 0; d < 4; ++d) EXPECT_EQ(devices.made_for[static_cast<std::size_t>(d)].load(), 1);
  for (int t = 0; t < threads; ++t) EXPECT_EQ(seen[static_cast<std::size_t>(t)].load(), &pools.get(t % 4));
}

TEST(PerDevice, BadDevicesAndSourcesAreClearErrors) {
  sim_devices devices(1);
  per_device<mutex_pool> pools(devices.source(), {});
  EXPECT_THROW((void)pools.get(-1), std::out_of_range);
  EXPECT_THROW((void)pools.get(1), std::out_of_range);
  per_device_source negative = devices.source();
  negative.device_count = -1;
  EXPECT_THROW((per_device<mutex_pool>(negative, {})), std::invalid_argument);
  per_device_source incomplete = devices.source();
  incomplete.make_backend = nullptr;
  EXPECT_THROW((per_device<mutex_pool>(incomplete, {})), std::invalid_argument);
}

TEST(PerDevice, AFailedCreationIsRetried) {
  int calls = 0;
  per_device_source flaky{1,
                          [&](int) -> std::shared_ptr<backend> {
                            if (++calls == 1) throw backend_error("injected: first creation fails");
                            return make_sim_backend();
                          },
                          [] { return 0; }};
  per_device<mutex_pool> pools(flaky, {});
  EXPECT_THROW((void)pools.get(0), backend_error);
  EXPECT_FALSE(pools.created(0));
  EXPECT_NO_THROW((void)pools.get(0));
  EXPECT_EQ(calls, 2);
}

TEST(PerDevice, WithoutCudaTheDefaultSourceHasNoDevicesAndCurrentSaysWhy) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "there are GPUs: see PerDeviceCuda";
  per_device<mutex_pool> pools;
  EXPECT_EQ(pools.device_count(), 0);
  EXPECT_THROW((void)pools.get(0), std::out_of_range);
  EXPECT_THROW((void)cuda_current_device(), backend_error);
}

// Each GPU's pool allocates on its own device, whatever the calling thread's current device is
// (the cuda backend's device guard); current() follows cudaSetDevice.
TEST(PerDeviceCuda, OnePoolPerGpu) {
  const int n = cuda_device_count();
  if (n == 0) GTEST_SKIP() << "no CUDA GPU on this machine (cuda backend built: " << std::boolalpha
                           << cuda_backend_built() << ")";
  per_device<tls_pool> pools;
  ASSERT_EQ(pools.device_count(), n);
  const int before = cuda_current_device();
  for (int d = n - 1; d >= 0; --d) {
    tls_pool& p = pools.get(d);
    EXPECT_EQ(p.device().device(), d);
    const stream_ref s = p.device().create_stream();
    void* q = p.allocate(1 << 16, s);
    p.device().fill(s, q, 1 << 16, 0xC0FFEE00u + static_cast<unsigned>(d));
    p.device().verify(s, q, 1 << 16, 0xC0FFEE00u + static_cast<unsigned>(d));
    p.deallocate(q, s);
    p.flush_stream(s);
    p.device().synchronize(s);
    p.device().destroy_stream(s);
    EXPECT_EQ(p.device().verification_report().mismatched_ranges, 0u);
    EXPECT_EQ(cuda_current_device(), before) << "the device guard restores the caller's device";
  }
  EXPECT_EQ(&pools.current(), &pools.get(before));
}

}  // namespace
}  // namespace cudapool
