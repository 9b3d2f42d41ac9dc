// Tests of cudapool::buffer, cudapool::unique_ptr / make_unique_device and pool_ref, on the
// simulated device (paused streams show whether a release is stream-ordered).
#include <cudapool/buffer.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <cudapool/mutex_pool.hpp>
#include <cudapool/registry.hpp>
#include <cudapool/tls_pool.hpp>

namespace cudapool {
namespace {

static_assert(!std::is_copy_constructible_v<buffer> && !std::is_copy_assignable_v<buffer>);
static_assert(std::is_nothrow_move_constructible_v<buffer> && std::is_nothrow_move_assignable_v<buffer>);
static_assert(device_pool<mutex_pool> && device_pool<tls_pool> && device_pool<any_pool>);
static_assert(!device_pool<int>);

// A pool on its own simulated device, with one stream.
template <class Pool>
struct fixture {
  std::shared_ptr<sim_backend> device = make_sim_backend();
  Pool pool{device};
  stream_ref s = device->create_stream();
  ~fixture() {
    device->resume(s);
    pool.flush_stream(s);
    device->synchronize_device();
    device->destroy_stream(s);
  }
};

TEST(Buffer, OwnsOneBlockAndFreesItImmediatelyWithoutAStream) {
  fixture<mutex_pool> f;
  {
    buffer b(f.pool, 5000);
    ASSERT_NE(b.data(), nullptr);
    EXPECT_EQ(b.size(), 5000u);
    EXPECT_FALSE(b.stream().has_value());
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % min_alignment, 0u);
    EXPECT_EQ(b.pool(), pool_ref(f.pool));
    const pool_stats st = f.pool.stats();
    EXPECT_EQ(st.allocs, 1u);
    EXPECT_GE(st.in_use_bytes, 5000u);
    // The block is device memory: the device writes and checks it.
    f.device->fill(f.s, b.data(), 4096, 0x5A5A5A5A);
    f.device->verify(f.s, b.data(), 4096, 0x5A5A5A5A);
    f.device->synchronize(f.s);
  }
  const pool_stats st = f.pool.stats();
  EXPECT_EQ(st.frees, 1u);
  EXPECT_EQ(st.in_use_bytes, 0u);
  EXPECT_EQ(st.pending_bytes, 0u);
  EXPECT_EQ(f.device->verification_report().mismatched_ranges, 0u);
}

TEST(Buffer, WithAStreamTheReleaseWaitsForTheStream) {
  fixture<mutex_pool> f;
  f.device->pause(f.s);
  {
    buffer b(f.pool, 4096, f.s);
    ASSERT_TRUE(b.stream().has_value());
    EXPECT_EQ(*b.stream(), f.s);
    f.device->fill(f.s, b.data(), 4096, 1);  // queued behind the pause
  }
  f.pool.flush_stream(f.s);
  pool_stats st = f.pool.stats();
  EXPECT_EQ(st.in_use_bytes, 0u);
  EXPECT_EQ(st.pending_bytes, 4096u) << "a stream-ordered release must wait for its stream";
  f.device->resume(f.s);
  f.device->synchronize(f.s);
  f.pool.trim();  // reclaims completed epochs first
  st = f.pool.stats();
  EXPECT_EQ(st.pending_bytes, 0u);
  EXPECT_EQ(st.frees, 1u);
}

TEST(Buffer, SetStreamMakesTheReleaseStreamOrdered) {
  fixture<mutex_pool> f;
  f.device->pause(f.s);
  {
    buffer b(f.pool, 4096);
    b.set_stream(f.s);
    EXPECT_EQ(b.stream(), std::optional<stream_ref>(f.s));
  }
  f.pool.flush_stream(f.s);
  EXPECT_EQ(f.pool.stats().pending_bytes, 4096u);
}

TEST(Buffer, MovesTransferOwnershipAndAssignmentFreesTheOldBlock) {
  fixture<tls_pool> f;
  buffer a(f.pool, 1000);
  void* const pa = a.data();
  buffer b(std::move(a));
  EXPECT_EQ(b.data(), pa);
  EXPECT_EQ(b.size(), 1000u);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): a moved-from buffer is empty
  EXPECT_EQ(a.size(), 0u);
  buffer c(f.pool, 2000);
  c = std::move(b);  // c's own block is freed
  EXPECT_EQ(c.data(), pa);
  EXPECT_EQ(f.pool.stats().frees, 1u);
  c = buffer();
  EXPECT_TRUE(c.empty());
  const pool_stats st = f.pool.stats();
  EXPECT_EQ(st.frees, 2u);
  EXPECT_EQ(st.in_use_bytes, 0u);
}

TEST(Buffer, ReleaseGivesUpOwnershipAndResetFreesNow) {
  fixture<mutex_pool> f;
  void* p = nullptr;
  {
    buffer b(f.pool, 300);
    p = b.release();
    EXPECT_TRUE(b.empty());
  }
  EXPECT_EQ(f.pool.stats().frees, 0u) << "a released block is the caller's";
  f.pool.deallocate(p);
  buffer b(f.pool, 300);
  b.reset();
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(f.pool.stats().frees, 2u);
  EXPECT_EQ(f.pool.stats().in_use_bytes, 0u);
}

TEST(Buffer, ZeroBytesOwnsNothingAndExhaustionThrows) {
  pool_options o;
  o.byte_limit = 2 << 20;  // one slab
  mutex_pool pool(make_sim_backend(), o);
  buffer empty(pool, 0);
  EXPECT_TRUE(empty.empty());
  EXPECT_THROW(buffer(pool, std::size_t{64} << 20), out_of_memory);
  EXPECT_EQ(pool.stats().in_use_bytes, 0u);
}

TEST(Buffer, WorksWithAPoolMadeByName) {
  std::shared_ptr<sim_backend> device = make_sim_backend();
  const stream_ref s = device->create_stream();
  {
    std::unique_ptr<any_pool> pool = make_pool("stream", device);
    {
      buffer b(*pool, 8192, s);
      device->fill(s, b.data(), 8192, 7);
      device->verify(s, b.data(), 8192, 7);
    }
    pool->retire_stream(s);
    device->synchronize_device();
    EXPECT_EQ(pool->stats().in_use_bytes, 0u);
    EXPECT_EQ(pool->stats().frees, 1u);
  }
  EXPECT_EQ(device->verification_report().mismatched_ranges, 0u);
  device->destroy_stream(s);
}

TEST(UniquePtr, TypedDeviceArrayFreedByItsDeleter) {
  fixture<tls_pool> f;
  {
    unique_ptr<float[]> a = make_unique_device<float[]>(f.pool, 1000);
    ASSERT_NE(a.get(), nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.get()) % min_alignment, 0u);
    EXPECT_FALSE(a.get_deleter().stream().has_value());
    EXPECT_GE(f.pool.stats().in_use_bytes, 1000 * sizeof(float));
  }
  EXPECT_EQ(f.pool.stats().frees, 1u);
  EXPECT_EQ(f.pool.stats().in_use_bytes, 0u);
}

TEST(UniquePtr, StreamOrderedRelease) {
  fixture<mutex_pool> f;
  f.device->pause(f.s);
  auto a = make_unique_device<std::uint32_t[]>(f.pool, 1024, f.s);
  EXPECT_EQ(a.get_deleter().stream(), std::optional<stream_ref>(f.s));
  f.device->fill(f.s, a.get(), 1024 * sizeof(std::uint32_t), 3);
  a.reset();
  f.pool.flush_stream(f.s);
  EXPECT_EQ(f.pool.stats().pending_bytes, 4096u);
}

TEST(UniquePtr, ZeroElementsIsEmptyAndOverflowIsRejected) {
  fixture<mutex_pool> f;
  EXPECT_EQ(make_unique_device<double[]>(f.pool, 0), nullptr);
  EXPECT_THROW((void)make_unique_device<double[]>(f.pool, std::numeric_limits<std::size_t>::max() / 4),
               std::length_error);
  EXPECT_EQ(f.pool.stats().allocs, 0u);
}

}  // namespace
}  // namespace cudapool
