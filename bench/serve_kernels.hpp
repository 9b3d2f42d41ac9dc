// serve_kernels.hpp - the device work of one serve request on a GPU (serve_kernels.cu, built with
// nvcc): the request's keys, CUB's radix sort of them, and a check of the sorted result on the
// device. Host code calls these functions only; each returns the status of its CUDA calls
// (cudaGetLastError() after a launch).
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace bench::serve_kernels {

// The keys of one request are a permutation of the increasing sequence base + j * step
// (j = 0 .. n - 1), so that the sorted result is known element by element and the check needs no
// reduction: out[j] == base + j * step checks the order and the contents at once.
//   keys[i] = base + ((i * 2147483647 + offset) % n) * step      (2^31 - 1 is prime, > n: a bijection)
// base < 2^31 and step < 2^11 keep every key below 2^32 for n <= max_keys.
struct key_pattern {
  std::uint32_t base;
  std::uint32_t step;
  std::uint32_t offset;
};
inline constexpr std::size_t max_keys = std::size_t{1} << 20;

// One per host thread, in device memory, zeroed before the first request; only verify kernels
// write it. A request counts once however many of its blocks see a wrong key: request numbers
// grow along the thread's stream, and the block that raises `claimed` to its request's number
// (atomicMax) is the one that counts.
struct failure_counter {
  unsigned long long claimed;
  unsigned long long failures;
};

cudaError_t launch_fill_keys(cudaStream_t stream, std::uint32_t* keys, std::size_t n, key_pattern pattern) noexcept;

// The temporary storage cub::DeviceRadixSort::SortKeys needs for n keys (no device work).
cudaError_t sort_temp_bytes(std::size_t n, std::size_t& bytes) noexcept;
// cub::DeviceRadixSort::SortKeys of all 32 bits of keys[0, n) into out, in stream order.
cudaError_t launch_sort(cudaStream_t stream, void* temp, std::size_t temp_bytes, const std::uint32_t* keys,
                        std::uint32_t* out, std::size_t n) noexcept;

// Counts request `request` (from 1, increasing on this stream) in *counter when out[0, n) is not
// base + j * step.
cudaError_t launch_verify(cudaStream_t stream, const std::uint32_t* out, std::size_t n, key_pattern pattern,
                          unsigned long long request, failure_counter* counter) noexcept;

}  // namespace bench::serve_kernels
