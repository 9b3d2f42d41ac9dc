// thrust::device_vector<T, cudapool::thrust_allocator<T>> on a real GPU: fill, transform, reduce,
// compared with the same computation on the host. Skips without a GPU.
#include <cudapool/thrust_allocator.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <type_traits>
#include <vector>

#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include <cudapool/backend.hpp>
#include <cudapool/tls_pool.hpp>

namespace cudapool {
namespace {

using int_allocator = thrust_allocator<std::int64_t>;
static_assert(std::is_same_v<int_allocator::pointer, thrust::device_ptr<std::int64_t>>);
static_assert(std::is_same_v<int_allocator::rebind<float>::other, thrust_allocator<float>>);
static_assert(!std::is_default_constructible_v<int_allocator>, "an allocator needs its pool");

struct square_mod {
  __host__ __device__ std::int64_t operator()(std::int64_t x) const { return (x * x) % 1000003; }
};

class ThrustAllocator : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) {
      GTEST_SKIP() << "no CUDA GPU on this machine (cuda backend built: " << std::boolalpha << cuda_backend_built()
                   << ")";
    }
    pool_ = std::make_unique<tls_pool>(make_cuda_backend(0));
  }
  std::unique_ptr<tls_pool> pool_;
};

TEST_F(ThrustAllocator, DeviceVectorFillTransformReduceMatchTheHost) {
  constexpr std::size_t n = 1 << 20;
  std::vector<std::int64_t> host(n);
  std::iota(host.begin(), host.end(), std::int64_t{1});
  std::int64_t expected = 0;
  for (std::int64_t& x : host) {
    x = (x * x) % 1000003;
    expected += x;
  }
  {
    int_allocator alloc(*pool_);
    thrust::device_vector<std::int64_t, int_allocator> v(n, std::int64_t{0}, alloc);
    thrust::device_vector<std::int64_t, int_allocator> w(n, alloc);
    EXPECT_EQ(v.get_allocator(), alloc);
    const pool_stats during = pool_->stats();
    EXPECT_GE(during.in_use_bytes, 2 * n * sizeof(std::int64_t)) << "the vectors' storage comes from the pool";
    EXPECT_EQ(thrust::reduce(v.begin(), v.end()), 0) << "filled with zeros";
    thrust::sequence(v.begin(), v.end(), std::int64_t{1});
    thrust::transform(v.begin(), v.end(), w.begin(), square_mod{});
    EXPECT_EQ(thrust::reduce(w.begin(), w.end(), std::int64_t{0}, thrust::plus<std::int64_t>()), expected);
    std::vector<std::int64_t> back(n);
    thrust::copy(w.begin(), w.end(), back.begin());
    EXPECT_EQ(back, host);

    // A copy with a rebound allocator (other element type, same pool).
    thrust_allocator<double> dalloc(alloc);
    EXPECT_EQ(dalloc.pool(), alloc.pool());
    thrust::device_vector<double, thrust_allocator<double>> d(w.begin(), w.end(), dalloc);
    EXPECT_DOUBLE_EQ(thrust::reduce(d.begin(), d.end(), 0.0), static_cast<double>(expected));
  }
  pool_->device().synchronize_device();
  const pool_stats after = pool_->stats();
  EXPECT_EQ(after.in_use_bytes, 0u);
  EXPECT_EQ(after.allocs, after.frees);
  EXPECT_GE(after.allocs, 3u);
}

// Thrust's own temporary storage (sort) from the pool too, on a stream of the pool's device.
TEST_F(ThrustAllocator, TemporaryStorageThroughAnExecutionPolicy) {
  constexpr std::size_t n = 1 << 18;
  const stream_ref s = pool_->device().create_stream();
  {
    thrust_allocator<char> temp(*pool_, s);
    thrust_allocator<std::int32_t> alloc(*pool_);
    thrust::device_vector<std::int32_t, thrust_allocator<std::int32_t>> v(n, alloc);
    thrust::sequence(v.begin(), v.end());
    const std::uint64_t before = pool_->stats().allocs;
    const auto policy = thrust::cuda::par(temp).on(static_cast<cudaStream_t>(s.native()));
    thrust::sort(policy, v.begin(), v.end(), thrust::greater<std::int32_t>());
    EXPECT_GT(pool_->stats().allocs, before) << "sort's temporary storage comes from the pool";
    pool_->device().synchronize(s);
    std::vector<std::int32_t> back(n);
    thrust::copy(v.begin(), v.end(), back.begin());
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], static_cast<std::int32_t>(n - 1 - i)) << "at " << i;
  }
  pool_->flush_stream(s);
  pool_->device().synchronize_device();
  pool_->device().destroy_stream(s);
  EXPECT_EQ(pool_->stats().in_use_bytes, 0u);
}

}  // namespace
}  // namespace cudapool
