// Uses the installed package from nvcc: a tls pool on GPU 0 behind thrust_allocator, a
// device_vector filled, transformed and reduced on the device. Without a GPU it says so and
// skips (the test reads "consumer: skipped").
#include <cstdint>
#include <cstdio>
#include <memory>

#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/transform.h>

#include <cudapool/backend.hpp>
#include <cudapool/thrust_allocator.hpp>
#include <cudapool/tls_pool.hpp>

struct twice {
  __host__ __device__ std::int64_t operator()(std::int64_t x) const { return 2 * x; }
};

int main() {
  if (cudapool::cuda_device_count() == 0) {
    std::printf("consumer: skipped: no CUDA device (the .cu consumer built and linked)\n");
    return 0;
  }
  cudapool::tls_pool pool(cudapool::make_cuda_backend(0));
  constexpr std::int64_t n = 1 << 20;
  std::int64_t sum = 0;
  {
    cudapool::thrust_allocator<std::int64_t> alloc(pool);
    thrust::device_vector<std::int64_t, cudapool::thrust_allocator<std::int64_t>> v(n, 0, alloc);
    thrust::sequence(v.begin(), v.end());
    thrust::transform(v.begin(), v.end(), v.begin(), twice{});
    sum = thrust::reduce(v.begin(), v.end(), std::int64_t{0});
  }
  pool.flush_stream({});
  const bool ok = sum == n * (n - 1) && pool.stats().in_use_bytes == 0;
  std::printf("consumer: %s (sum %lld)\n", ok ? "ok" : "FAILED", static_cast<long long>(sum));
  return ok ? 0 : 1;
}
