// Tests of cudapool::per_device: on injected simulated devices here, on the real GPUs when there
// are some.
#include <cudapool/per_device.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include <cudapool/lockfree_pool.hpp>
#include <cudapool/mutex_pool.hpp>
#include <cudapool/stream_pool.hpp>
#include <cudapool/tls_pool.hpp>

namespace cudapool {
namespace {

// Simulated devices (sim_devices()); counts the backends made and lets each thread pick its
// current device.
struct counting_devices {
  std::atomic<int> made{0};
  std::vector<std::atomic<int>> made_for;
  static inline thread_local int current = 0;

  explicit counting_devices(int n) : made_for(static_cast<std::size_t>(n)) {}
  per_device_source source() {
    return {static_cast<int>(made_for.size()),
            [this](int device) -> std::shared_ptr<backend> {
              made.fetch_add(1);
              made_for[static_cast<std::size_t>(device)].fetch_add(1);
              return sim_devices(static_cast<int>(made_for.size())).make_backend(device);
            },
            [] { return current; }};
  }
};

TEST(PerDevice, PoolsAreCreatedLazilyOncePerDevice) {
  counting_devices devices(3);
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
  counting_devices devices(2);
  per_device<tls_pool> pools(devices.source(), {});
  counting_devices::current = 1;
  EXPECT_EQ(&pools.current(), &pools.get(1));
  counting_devices::current = 0;
  EXPECT_EQ(&pools.current(), &pools.get(0));
  counting_devices::current = 2;
  EXPECT_THROW((void)pools.current(), std::out_of_range);
  counting_devices::current = 0;
}

TEST(PerDevice, OptionsReachEveryPool) {
  counting_devices devices(2);
  pool_options o;
  o.fixed_block_bytes = 8192;
  per_device<mutex_pool> pools(devices.source(), o);
  EXPECT_EQ(pools.get(0).options().fixed_block_bytes, 8192u);
  EXPECT_EQ(pools.get(1).stats().classes.size(), 1u);
}

TEST(PerDevice, ConcurrentFirstUseMakesOnePoolPerDevice) {
  constexpr int threads = 16;
  counting_devices devices(4);
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
  counting_devices devices(1);
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

// ---- several simulated devices (sim_devices) -------------------------------------------------

// Every rejected free, with its reason.
struct invalid_free_log {
  std::vector<std::pair<const void*, invalid_free_reason>> entries;
  static void hook(const void* p, invalid_free_reason r, void* self) {
    static_cast<invalid_free_log*>(self)->entries.emplace_back(p, r);
  }
  pool_options options() {
    pool_options o;
    o.on_invalid_free = &hook;
    o.invalid_free_context = this;
    return o;
  }
};

TEST(PerDeviceSim, EachSimulatedDeviceHasItsIdAndItsStreamsTheirs) {
  per_device<mutex_pool> pools(sim_devices(2), {});
  EXPECT_EQ(pools.device_count(), 2);
  EXPECT_FALSE(pools.created(0));
  EXPECT_FALSE(pools.created(1));
  backend& d1 = pools.get(1).device();
  EXPECT_FALSE(pools.created(0)) << "device 0's pool is made only when device 0 is used";
  EXPECT_EQ(d1.device(), 1);
  const stream_ref s1 = d1.create_stream();
  EXPECT_EQ(d1.stream_device(s1), 1);
  EXPECT_EQ(d1.stream_device({}), 1);
  EXPECT_EQ(pools.get(0).device().stream_device(s1), 1) << "any backend tells a stream's device";
  EXPECT_EQ(pools.get(0).device().device(), 0);
  d1.destroy_stream(s1);
  set_sim_current_device(1);
  EXPECT_EQ(&pools.current(), &pools.get(1));
  set_sim_current_device(0);
  EXPECT_EQ(&pools.current(), &pools.get(0));
}

template <class Pool>
class PerDeviceSimVariants : public ::testing::Test {};
using all_variants = ::testing::Types<mutex_pool, lockfree_pool, tls_pool, stream_pool>;
TYPED_TEST_SUITE(PerDeviceSimVariants, all_variants);

// Device 1's blocks (a size-class block and a large extent) freed through device 0's pool, at once
// and stream-ordered: foreign there, counted, and neither pool changes.
TYPED_TEST(PerDeviceSimVariants, APointerOfAnotherDevicesPoolIsForeignAndChangesNothing) {
  invalid_free_log log0;
  invalid_free_log log1;
  per_device_source source = sim_devices(2);
  auto make = source.make_backend;
  TypeParam pool0(make(0), log0.options());
  TypeParam pool1(make(1), log1.options());
  void* small = pool1.allocate(4096);
  void* large = pool1.allocate(std::size_t{64} << 20);
  void* own = pool0.allocate(4096);
  const pool_stats before0 = pool0.stats();
  const pool_stats before1 = pool1.stats();
  const stream_ref s0 = pool0.device().create_stream();

  pool0.deallocate(small);
  pool0.deallocate(large, s0);
  pool0.deallocate(small, s0);
  pool0.flush_stream(s0);

  ASSERT_EQ(log0.entries.size(), 3u);
  for (const auto& [p, reason] : log0.entries) EXPECT_EQ(reason, invalid_free_reason::foreign_pointer);
  EXPECT_EQ(log0.entries[0].first, small);
  EXPECT_EQ(log0.entries[1].first, large);
  const pool_stats after0 = pool0.stats();
  EXPECT_EQ(after0.invalid_frees, before0.invalid_frees + 3);
  EXPECT_EQ(after0.frees, before0.frees);
  EXPECT_EQ(after0.in_use_bytes, before0.in_use_bytes);
  EXPECT_EQ(after0.pending_bytes, 0u);
  EXPECT_EQ(after0.events_recorded, before0.events_recorded) << "no epoch for a foreign pointer";
  const pool_stats after1 = pool1.stats();
  EXPECT_EQ(after1.frees, before1.frees);
  EXPECT_EQ(after1.in_use_bytes, before1.in_use_bytes);
  EXPECT_EQ(pool1.describe(small).status, pointer_info::state::live);
  EXPECT_EQ(pool1.describe(large).status, pointer_info::state::live);

  // Their own pool still frees them, once.
  pool1.deallocate(small);
  pool1.deallocate(large);
  pool0.deallocate(own);
  EXPECT_TRUE(log1.entries.empty());
  EXPECT_EQ(pool1.stats().in_use_bytes, 0u);
  pool0.device().destroy_stream(s0);
}

// A stream of device 1 given to device 0's pool: allocate throws and says which devices, a free on
// it is rejected (the block stays live, no epoch is opened, no event recorded), and the pool works
// on afterwards.
TYPED_TEST(PerDeviceSimVariants, AStreamOfAnotherDeviceIsAClearError) {
  invalid_free_log log;
  per_device_source source = sim_devices(2);
  TypeParam pool0(source.make_backend(0), log.options());
  std::shared_ptr<backend> device1 = source.make_backend(1);
  const stream_ref s1 = device1->create_stream();
  const stream_ref s0 = pool0.device().create_stream();

  try {
    (void)pool0.allocate(4096, s1);
    ADD_FAILURE() << "allocate on a stream of device 1 did not throw";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("stream of device 1"), std::string::npos) << what;
    EXPECT_NE(what.find("pool of device 0"), std::string::npos) << what;
  }
  EXPECT_THROW((void)pool0.allocate(std::size_t{64} << 20, s1), std::invalid_argument);
  EXPECT_EQ(pool0.try_allocate(4096, s1), nullptr);

  void* p = pool0.allocate(4096, s0);
  void* large = pool0.allocate(std::size_t{64} << 20, s0);
  const pool_stats before = pool0.stats();
  pool0.deallocate(p, s1);
  pool0.deallocate(large, s1);
  pool0.flush_stream(s1);
  ASSERT_EQ(log.entries.size(), 2u);
  EXPECT_EQ(log.entries[0], std::make_pair(static_cast<const void*>(p), invalid_free_reason::stream_of_another_device));
  EXPECT_EQ(log.entries[1].second, invalid_free_reason::stream_of_another_device);
  const pool_stats after = pool0.stats();
  EXPECT_EQ(after.invalid_frees, before.invalid_frees + 2);
  EXPECT_EQ(after.frees, before.frees);
  EXPECT_EQ(after.events_recorded, before.events_recorded) << "no cross-device epoch";
  EXPECT_EQ(after.pending_bytes, 0u);
  EXPECT_EQ(pool0.describe(p).status, pointer_info::state::live);
  EXPECT_EQ(pool0.describe(large).status, pointer_info::state::live);

  // Its own device's stream is still taken, the same blocks free normally.
  pool0.deallocate(p, s0);
  pool0.deallocate(large, s0);
  pool0.flush_stream(s0);
  EXPECT_EQ(log.entries.size(), 2u);
  EXPECT_EQ(pool0.stats().in_use_bytes, 0u);
  if constexpr (requires { pool0.record_stream(p, s1); }) {
    void* q = pool0.allocate(4096, s0);
    EXPECT_THROW(pool0.record_stream(q, s1), std::invalid_argument);
    pool0.deallocate(q, s0);
    pool0.retire_stream(s0);
  }
  pool0.flush_stream(s0);
  pool0.device().synchronize_device();
  pool0.device().destroy_stream(s0);
  device1->destroy_stream(s1);
}

// Threads whose current (simulated) device differs use both pools through current() and get(),
// free each other's blocks through the owning pool, and hand blocks across devices.
TEST(PerDeviceSim, ThreadsOnTwoDevicesFreeThroughTheOwningPool) {
  per_device<tls_pool> pools(sim_devices(2), {});
  constexpr int threads = 8;
  constexpr int rounds = 200;
  std::barrier start(threads);
  std::vector<std::thread> ts;
  std::vector<std::vector<void*>> handed(threads);
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      set_sim_current_device(t % 2);
      tls_pool& mine = pools.current();
      start.arrive_and_wait();
      for (int i = 0; i < rounds; ++i) handed[static_cast<std::size_t>(t)].push_back(mine.allocate(256 + 256 * (i % 8)));
      start.arrive_and_wait();
      // Free the other device's blocks of thread t ^ 1 through their pool, from this device.
      for (void* p : handed[static_cast<std::size_t>(t ^ 1)]) pools.get((t ^ 1) % 2).deallocate(p);
      mine.flush_thread_cache();
    });
  }
  for (auto& t : ts) t.join();
  for (int d = 0; d < 2; ++d) {
    const pool_stats st = pools.get(d).stats();
    EXPECT_EQ(st.allocs, static_cast<std::uint64_t>(threads / 2 * rounds));
    EXPECT_EQ(st.frees, st.allocs);
    EXPECT_EQ(st.invalid_frees, 0u);
    EXPECT_EQ(st.in_use_bytes, 0u);
  }
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
