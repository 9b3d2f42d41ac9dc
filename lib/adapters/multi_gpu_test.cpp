// multi_gpu_test.cpp - the two-GPU runs: each skips, saying why, on a machine with fewer than two
// GPUs (the simulated-device versions are in per_device_test.cpp and run everywhere).
//
//   - the conformance suite of every variant on device 0 and on device 1, with the calling thread's
//     current device set to the other one; after each test the caller's device is still that one
//     (the cuda backend's device guard restores it around every call);
//   - blocks of device 0's pool freed from threads whose current device is 1 (immediate and
//     stream-ordered frees);
//   - peer access: a kernel on device 1 (the backend's verify) reads a block of device 0's pool,
//     ordered after device 0's fill by an event and before the block's stream-ordered free by
//     another.
#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <cudapool/backend.hpp>
#include <cudapool/per_device.hpp>
#include <cudapool/lockfree_pool.hpp>
#include <cudapool/mutex_pool.hpp>
#include <cudapool/stream_pool.hpp>
#include <cudapool/detail/testing/conformance.hpp>
#include <cudapool/tls_pool.hpp>

namespace cudapool::testing {
namespace {

void check(cudaError_t status, const char* call) {
  ASSERT_EQ(status, cudaSuccess) << call << ": " << cudaGetErrorName(status) << ": " << cudaGetErrorString(status);
}

std::string fewer_than_two_gpus() {
  const int n = cuda_device_count();
  if (n >= 2) return {};
  return "needs two GPUs; this machine has " + std::to_string(n) + " (cuda backend built: " +
         (cuda_backend_built() ? "true" : "false") + ")";
}

// The calling thread's current device, or -1 after a failure (reported).
int current_device() {
  int d = -1;
  const cudaError_t status = cudaGetDevice(&d);
  EXPECT_EQ(status, cudaSuccess) << "cudaGetDevice: " << cudaGetErrorName(status);
  return status == cudaSuccess ? d : -1;
}

void set_current_device(int d) {
  const cudaError_t status = cudaSetDevice(d);
  EXPECT_EQ(status, cudaSuccess) << "cudaSetDevice(" << d << "): " << cudaGetErrorName(status);
}

// The pool on CUDA device `Device`; the caller's current device is the other one.
template <class Pool, int Device>
struct on_gpu_of_two {
  using pool = Pool;
  static constexpr bool is_sim = false;
  static constexpr int caller = 1 - Device;
  static std::string set_up() {
    if (std::string skip = fewer_than_two_gpus(); !skip.empty()) return skip;
    set_current_device(caller);
    return {};
  }
  static std::shared_ptr<backend> make_backend() { return make_cuda_backend(Device); }
  static void tear_down() {
    EXPECT_EQ(current_device(), caller) << "the pool of device " << Device << " left the caller on another device";
    set_current_device(0);
  }
};

using two_gpu_configs =
    ::testing::Types<on_gpu_of_two<mutex_pool, 0>, on_gpu_of_two<mutex_pool, 1>, on_gpu_of_two<lockfree_pool, 0>,
                     on_gpu_of_two<lockfree_pool, 1>, on_gpu_of_two<tls_pool, 0>, on_gpu_of_two<tls_pool, 1>,
                     on_gpu_of_two<stream_pool, 0>, on_gpu_of_two<stream_pool, 1>>;
INSTANTIATE_TYPED_TEST_SUITE_P(two_gpus, conformance, two_gpu_configs);

template <class Pool>
class TwoGpus : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string skip = fewer_than_two_gpus(); !skip.empty()) GTEST_SKIP() << skip;
  }
};
using variants = ::testing::Types<mutex_pool, lockfree_pool, tls_pool, stream_pool>;
TYPED_TEST_SUITE(TwoGpus, variants);

// Device 0's blocks, allocated and stamped on device 0, verified and freed by threads whose current
// device is 1: immediately (after the host waited for the verify) or stream-ordered on device 0's
// stream. A device-1 stream given to device 0's pool is refused.
TYPED_TEST(TwoGpus, BlocksOfDeviceZeroFreedFromThreadsOnDeviceOne) {
  per_device<TypeParam> pools;
  ASSERT_GE(pools.device_count(), 2);
  TypeParam& pool0 = pools.get(0);
  backend& d0 = pool0.device();
  constexpr int threads = 4;
  constexpr int per_thread = 64;
  std::vector<stream_ref> streams;
  for (int t = 0; t < threads; ++t) streams.push_back(d0.create_stream());
  std::vector<std::vector<void*>> blocks(threads);
  for (int t = 0; t < threads; ++t) {
    for (int i = 0; i < per_thread; ++i) {
      const std::size_t bytes = 256u << (i % 8);
      void* p = pool0.allocate(bytes, streams[static_cast<std::size_t>(t)]);
      d0.fill(streams[static_cast<std::size_t>(t)], p, bytes, 0xD0000000u + static_cast<std::uint32_t>(t * per_thread + i));
      blocks[static_cast<std::size_t>(t)].push_back(p);
    }
  }
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      set_current_device(1);
      const stream_ref s = streams[static_cast<std::size_t>(t)];
      for (int i = 0; i < per_thread; ++i) {
        void* p = blocks[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)];
        d0.verify(s, p, 256u << (i % 8), 0xD0000000u + static_cast<std::uint32_t>(t * per_thread + i));
        if (i % 2 == 0) {
          pool0.deallocate(p, s);
        } else {
          d0.synchronize(s);
          pool0.deallocate(p);
        }
        EXPECT_EQ(current_device(), 1) << "a call of device 0's pool changed the thread's device";
      }
      pool0.flush_stream(s);
    });
  }
  for (auto& t : ts) t.join();

  TypeParam& pool1 = pools.get(1);
  const stream_ref s1 = pool1.device().create_stream();
  EXPECT_THROW((void)pool0.allocate(4096, s1), std::invalid_argument);
  void* q = pool0.allocate(4096);
  const std::uint64_t invalid_before = pool0.stats().invalid_frees;
  pool0.deallocate(q, s1);
  EXPECT_EQ(pool0.stats().invalid_frees, invalid_before + 1) << "a device-1 stream's free is refused";
  pool0.deallocate(q);
  pool1.device().destroy_stream(s1);

  d0.synchronize_device();
  for (const stream_ref s : streams) {
    if constexpr (requires { pool0.retire_stream(s); }) pool0.retire_stream(s);
    d0.destroy_stream(s);
  }
  (void)pool0.trim();
  EXPECT_EQ(d0.verification_report().mismatched_ranges, 0u);
  const pool_stats st = pool0.stats();
  EXPECT_EQ(st.in_use_bytes, 0u);
  EXPECT_EQ(st.invalid_frees, invalid_before + 1);
  EXPECT_EQ(st.frees, st.allocs);
}

// With peer access (cuda_devices(true)), a kernel on device 1 reads a block of device 0's pool:
// device 0 fills it on s0, an event on s0 orders device 1's verify on s1 after the fill, an event on
// s1 orders s0 after the verify, and the block is freed stream-ordered on s0. A second block
// allocated at once on s0 may be the same memory: its fill runs after the verify on the device.
TYPED_TEST(TwoGpus, AKernelOnDeviceOneReadsABlockOfDeviceZerosPool) {
  int can = 0;
  check(cudaDeviceCanAccessPeer(&can, 1, 0), "cudaDeviceCanAccessPeer");
  if (can == 0) GTEST_SKIP() << "device 1 cannot access device 0's memory (cudaDeviceCanAccessPeer)";
  per_device<TypeParam> pools(cuda_devices(/*peer_access=*/true), {});
  TypeParam& pool0 = pools.get(0);
  backend& d0 = pool0.device();
  backend& d1 = pools.get(1).device();
  const stream_ref s0 = d0.create_stream();
  const stream_ref s1 = d1.create_stream();
  for (const std::size_t bytes : {std::size_t{4096}, std::size_t{1} << 20, std::size_t{64} << 20}) {
    SCOPED_TRACE(bytes);
    void* p = pool0.allocate(bytes, s0);
    d0.fill(s0, p, bytes, 0x0E0E0000u | static_cast<std::uint32_t>(bytes >> 12));
    event_handle filled = d0.acquire_event();
    d0.record(filled, s0);
    d1.stream_wait(s1, filled);  // device 1's stream waits for device 0's event
    d1.verify(s1, p, bytes, 0x0E0E0000u | static_cast<std::uint32_t>(bytes >> 12));
    event_handle read = d1.acquire_event();
    d1.record(read, s1);
    d0.stream_wait(s0, read);
    pool0.deallocate(p, s0);
    void* again = pool0.allocate(bytes, s0);
    d0.fill(s0, again, bytes, 0xBAD0BAD0u);
    d0.release_event(filled);
    d1.release_event(read);
    pool0.deallocate(again, s0);
  }
  pool0.flush_stream(s0);
  if constexpr (requires { pool0.retire_stream(s0); }) pool0.retire_stream(s0);
  EXPECT_EQ(d1.verification_report().mismatched_ranges, 0u) << "device 1 read what device 0 wrote";
  d0.synchronize_device();
  d0.destroy_stream(s0);
  d1.destroy_stream(s1);
  EXPECT_EQ(pool0.stats().in_use_bytes, 0u);
}

// Each backend tells a stream's device (cudaStreamGetDevice), whichever device is current.
TEST(TwoGpusStreams, AStreamKnowsItsDevice) {
  if (std::string skip = fewer_than_two_gpus(); !skip.empty()) GTEST_SKIP() << skip;
  const auto d0 = make_cuda_backend(0);
  const auto d1 = make_cuda_backend(1);
  const stream_ref s0 = d0->create_stream();
  const stream_ref s1 = d1->create_stream();
  set_current_device(1);
  EXPECT_EQ(d0->stream_device(s0), 0);
  EXPECT_EQ(d0->stream_device(s1), 1);
  EXPECT_EQ(d0->stream_device({}), 0) << "the default stream is the backend's own device's";
  EXPECT_EQ(d1->stream_device(s0), 0);
  EXPECT_EQ(current_device(), 1);
  set_current_device(0);
  d0->destroy_stream(s0);
  d1->destroy_stream(s1);
}

}  // namespace
}  // namespace cudapool::testing
