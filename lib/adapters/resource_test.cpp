// cudapool::resource<Pool>: every variant models CCCL's
// cuda::mr::async_resource_with<..., cuda::mr::device_accessible> (the static_asserts below, one
// per variant), and allocates and frees through cuda::mr::async_resource_ref. The adaptor does not
// call the CUDA runtime (a cuda::stream_ref only carries a handle), so the tests run on the
// simulated device: a simulator stream travels inside the cuda::stream_ref as its handle. Built
// only with the CUDA toolkit (CCCL's headers).
#include <cudapool/resource.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <type_traits>

#include <cudapool/lockfree_pool.hpp>
#include <cudapool/mutex_pool.hpp>
#include <cudapool/stream_pool.hpp>
#include <cudapool/tls_pool.hpp>

namespace cudapool {

static_assert(cuda::mr::async_resource_with<resource<mutex_pool>, cuda::mr::device_accessible>);
static_assert(cuda::mr::async_resource_with<resource<lockfree_pool>, cuda::mr::device_accessible>);
static_assert(cuda::mr::async_resource_with<resource<tls_pool>, cuda::mr::device_accessible>);
static_assert(cuda::mr::async_resource_with<resource<stream_pool>, cuda::mr::device_accessible>);
// Device memory only: the host must not touch it.
static_assert(!cuda::mr::resource_with<resource<tls_pool>, cuda::mr::host_accessible>);

namespace {

using device_ref = cuda::mr::async_resource_ref<cuda::mr::device_accessible>;

template <class Pool>
class Resource : public ::testing::Test {
 protected:
  std::shared_ptr<sim_backend> device_ = make_sim_backend();
  Pool pool_{device_};
  resource<Pool> res_{pool_};
};

using all_variants = ::testing::Types<mutex_pool, lockfree_pool, tls_pool, stream_pool>;
TYPED_TEST_SUITE(Resource, all_variants);

TYPED_TEST(Resource, AllocatesAndFreesThroughAnAsyncResourceRef) {
  device_ref ref(this->res_);
  const stream_ref s = this->device_->create_stream();
  const cuda::stream_ref cs = to_cuda_stream(s);
  EXPECT_EQ(from_cuda_stream(cs), s);

  void* a = ref.allocate_async(10000, 1024, cs);
  void* b = ref.allocate(300, 256);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 1024, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % 256, 0u);
  this->device_->fill(s, a, 10000 / 4 * 4, 0xAB);
  this->device_->verify(s, a, 10000 / 4 * 4, 0xAB);
  pool_stats st = this->pool_.stats();
  EXPECT_EQ(st.allocs, 2u);
  EXPECT_GE(st.in_use_bytes, 10300u);

  ref.deallocate_async(a, 10000, 1024, cs);  // stream-ordered on s
  ref.deallocate(b, 300, 256);               // immediate
  st = this->pool_.stats();
  EXPECT_EQ(st.frees, 2u);
  EXPECT_EQ(st.in_use_bytes, 0u);

  this->pool_.flush_stream(s);
  this->device_->synchronize(s);
  EXPECT_EQ(this->device_->verification_report().mismatched_ranges, 0u);
  this->device_->destroy_stream(s);
}

TYPED_TEST(Resource, StreamOrderedFreeWaitsForItsStream) {
  if constexpr (std::is_same_v<TypeParam, stream_pool>) {
    // The stream variant reuses a block at once on the stream it was freed on (stream order makes
    // that safe), and not on another stream while that one is behind.
    device_ref ref(this->res_);
    const stream_ref s = this->device_->create_stream();
    const stream_ref t = this->device_->create_stream();
    this->device_->pause(s);
    void* a = ref.allocate_async(4096, 256, to_cuda_stream(s));
    this->device_->fill(s, a, 4096, 0x5);  // s is behind: its work on a is pending
    ref.deallocate_async(a, 4096, 256, to_cuda_stream(s));
    void* on_t = ref.allocate_async(4096, 256, to_cuda_stream(t));
    EXPECT_NE(on_t, a);
    void* again = ref.allocate_async(4096, 256, to_cuda_stream(s));
    EXPECT_EQ(again, a);
    ref.deallocate_async(again, 4096, 256, to_cuda_stream(s));
    ref.deallocate_async(on_t, 4096, 256, to_cuda_stream(t));
    this->device_->resume(s);
    this->pool_.retire_stream(s);
    this->pool_.retire_stream(t);
    this->device_->synchronize_device();
    this->device_->destroy_stream(s);
    this->device_->destroy_stream(t);
  } else {
    device_ref ref(this->res_);
    const stream_ref s = this->device_->create_stream();
    this->device_->pause(s);
    void* a = ref.allocate_async(4096, 256, to_cuda_stream(s));
    ref.deallocate_async(a, 4096, 256, to_cuda_stream(s));
    this->pool_.flush_stream(s);
    EXPECT_EQ(this->pool_.stats().pending_bytes, 4096u);
    this->device_->resume(s);
    this->device_->synchronize(s);
    this->pool_.trim();
    EXPECT_EQ(this->pool_.stats().pending_bytes, 0u);
    this->device_->destroy_stream(s);
  }
}

TYPED_TEST(Resource, EqualityMeansTheSamePool) {
  resource deduced(this->pool_);  // class template argument deduction, as in docs/api.md
  static_assert(std::is_same_v<decltype(deduced), resource<TypeParam>>);
  EXPECT_TRUE(deduced == this->res_);
  TypeParam other(this->device_);
  resource<TypeParam> same(this->pool_);
  resource<TypeParam> different(other);
  EXPECT_TRUE(this->res_ == same);
  EXPECT_FALSE(this->res_ != same);
  EXPECT_TRUE(this->res_ != different);
  EXPECT_TRUE(device_ref(this->res_) == device_ref(same));
  EXPECT_FALSE(device_ref(this->res_) == device_ref(different));
  EXPECT_EQ(&same.pool(), &this->pool_);
}

TYPED_TEST(Resource, ErrorsComeFromThePool) {
  device_ref ref(this->res_);
  EXPECT_THROW((void)ref.allocate(256, 3), std::invalid_argument);
  pool_options o;
  o.byte_limit = 2 << 20;
  TypeParam small(this->device_, o);
  resource<TypeParam> r(small);
  EXPECT_THROW((void)r.allocate_async(std::size_t{1} << 30, 256, cuda::stream_ref{}), out_of_memory);
}

}  // namespace
}  // namespace cudapool
