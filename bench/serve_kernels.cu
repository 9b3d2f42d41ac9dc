// serve_kernels.cu - see serve_kernels.hpp.
#include "serve_kernels.hpp"

#include <algorithm>

#include <cub/device/device_radix_sort.cuh>

namespace bench::serve_kernels {
namespace {

constexpr unsigned threads_per_block = 256;
constexpr std::size_t max_blocks = 1024;
constexpr unsigned long long permutation_multiplier = 2147483647ULL;  // prime, above max_keys

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(std::min((n + threads_per_block - 1) / threads_per_block, max_blocks));
}

__device__ std::uint32_t sorted_key(key_pattern p, std::size_t j) {
  return p.base + static_cast<std::uint32_t>(j) * p.step;
}

__global__ void fill_keys_kernel(std::uint32_t* keys, std::size_t n, key_pattern p) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    keys[i] = sorted_key(p, (i * permutation_multiplier + p.offset) % n);
  }
}

__global__ void verify_kernel(const std::uint32_t* out, std::size_t n, key_pattern p, unsigned long long request,
                              failure_counter* counter) {
  __shared__ unsigned int wrong;
  if (threadIdx.x == 0) wrong = 0;
  __syncthreads();
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t j = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; j < n; j += stride) {
    if (out[j] != sorted_key(p, j)) {
      atomicOr(&wrong, 1U);
      break;
    }
  }
  __syncthreads();
  if (threadIdx.x != 0 || wrong == 0) return;
  if (atomicMax(&counter->claimed, request) < request) atomicAdd(&counter->failures, 1ULL);
}

}  // namespace

cudaError_t launch_fill_keys(cudaStream_t stream, std::uint32_t* keys, std::size_t n, key_pattern pattern) noexcept {
  if (n == 0) return cudaSuccess;
  fill_keys_kernel<<<blocks_for(n), threads_per_block, 0, stream>>>(keys, n, pattern);
  return cudaGetLastError();
}

cudaError_t sort_temp_bytes(std::size_t n, std::size_t& bytes) noexcept {
  const std::uint32_t* none = nullptr;
  return cub::DeviceRadixSort::SortKeys(nullptr, bytes, none, const_cast<std::uint32_t*>(none),
                                        static_cast<int>(n));
}

cudaError_t launch_sort(cudaStream_t stream, void* temp, std::size_t temp_bytes, const std::uint32_t* keys,
                        std::uint32_t* out, std::size_t n) noexcept {
  const cudaError_t status =
      cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys, out, static_cast<int>(n), 0, 32, stream);
  return status != cudaSuccess ? status : cudaGetLastError();
}

cudaError_t launch_verify(cudaStream_t stream, const std::uint32_t* out, std::size_t n, key_pattern pattern,
                          unsigned long long request, failure_counter* counter) noexcept {
  if (n == 0) return cudaSuccess;
  verify_kernel<<<blocks_for(n), threads_per_block, 0, stream>>>(out, n, pattern, request, counter);
  return cudaGetLastError();
}

}  // namespace bench::serve_kernels
