// cuda_kernels.cu - the cuda backend's stream-ordered device operations.

#include <algorithm>
#include <climits>

#include <cudapool/detail/backend/cuda_kernels.hpp>

namespace cudapool::detail {
namespace {

constexpr unsigned threads_per_block = 256;
constexpr std::size_t max_blocks = 1024;

unsigned blocks_for(std::size_t words) {
  return static_cast<unsigned>(std::min((words + threads_per_block - 1) / threads_per_block, max_blocks));
}

__global__ void fill_kernel(std::uint32_t* words, std::size_t count, std::uint32_t pattern) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
    words[i] = pattern;
  }
}

// The offset reported is the lowest wrong word the claiming block saw: each thread stops at its
// first wrong word, so it is a wrong word but not necessarily the range's first one.
__global__ void verify_kernel(const std::uint32_t* words, std::size_t count, std::uint32_t pattern,
                              unsigned long long launch, verify_state* state) {
  __shared__ unsigned long long first_wrong;
  if (threadIdx.x == 0) first_wrong = ULLONG_MAX;
  __syncthreads();

  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
    if (words[i] != pattern) {
      atomicMin(&first_wrong, static_cast<unsigned long long>(i));
      break;
    }
  }
  __syncthreads();

  if (threadIdx.x != 0 || first_wrong == ULLONG_MAX) return;
  if (atomicMax(&state->claimed[launch % verify_claim_slots], launch) >= launch) return;
  atomicAdd(&state->summary.mismatched_ranges, 1ULL);
  const unsigned slot = atomicAdd(&state->summary.records_claimed, 1U);
  if (slot < max_mismatch_records) {
    state->summary.records[slot] = {reinterpret_cast<unsigned long long>(words),
                                    count * sizeof(std::uint32_t), first_wrong, pattern, words[first_wrong]};
  }
}

// One thread sleeps on the global timer, so a spin occupies its stream, not the GPU.
__global__ void spin_kernel(std::uint64_t nanoseconds) {
  auto now = [] {
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
  };
  const std::uint64_t start = now();
  constexpr std::uint64_t max_nap = 100'000;
  for (std::uint64_t elapsed = 0; elapsed < nanoseconds; elapsed = now() - start) {
    const std::uint64_t left = nanoseconds - elapsed;
    __nanosleep(static_cast<unsigned>(left < max_nap ? left : max_nap));
  }
}

// Guards are a few KiB at most: one block walks them byte by byte, any alignment.
__global__ void fill_guard_kernel(std::uint8_t* bytes, std::size_t count, std::uint8_t pattern) {
  for (std::size_t i = threadIdx.x; i < count; i += blockDim.x) bytes[i] = pattern;
}

// Records the lowest differing byte as one failure in the ring, or counts it as dropped when the
// ring holds guard_ring_capacity records the host has not taken yet.
__global__ void check_guard_kernel(const std::uint8_t* bytes, std::size_t count, std::uint8_t pattern,
                                   std::uint64_t tag, guard_counters* counters, guard_ring* ring) {
  __shared__ unsigned long long first_wrong;
  if (threadIdx.x == 0) first_wrong = ULLONG_MAX;
  __syncthreads();
  for (std::size_t i = threadIdx.x; i < count; i += blockDim.x) {
    if (bytes[i] != pattern) {
      atomicMin(&first_wrong, static_cast<unsigned long long>(i));
      break;
    }
  }
  __syncthreads();
  if (threadIdx.x != 0 || first_wrong == ULLONG_MAX) return;

  const volatile unsigned long long* consumed = &ring->consumed;
  unsigned long long claim = atomicAdd(&counters->claimed, 0ULL);
  for (;;) {
    if (claim >= *consumed + guard_ring_capacity) {
      atomicAdd(&counters->dropped, 1ULL);
      return;
    }
    const unsigned long long seen = atomicCAS(&counters->claimed, claim, claim + 1);
    if (seen == claim) break;
    claim = seen;
  }
  guard_record& record = ring->records[claim % guard_ring_capacity];
  record.tag = tag;
  record.byte_offset = first_wrong;
  record.found = bytes[first_wrong];
  record.dropped_before = atomicAdd(&counters->dropped, 0ULL);
  __threadfence_system();  // the fields reach the host before the sequence number does
  *static_cast<volatile unsigned long long*>(&record.sequence) = claim + 1;
}

}  // namespace

cudaError_t launch_fill_guard(cudaStream_t stream, void* p, std::size_t bytes, std::uint8_t pattern) noexcept {
  if (bytes == 0) return cudaSuccess;
  fill_guard_kernel<<<1, threads_per_block, 0, stream>>>(static_cast<std::uint8_t*>(p), bytes, pattern);
  return cudaGetLastError();
}

cudaError_t launch_check_guard(cudaStream_t stream, const void* p, std::size_t bytes, std::uint8_t pattern,
                               std::uint64_t tag, guard_counters* counters, guard_ring* ring) noexcept {
  if (bytes == 0) return cudaSuccess;
  check_guard_kernel<<<1, threads_per_block, 0, stream>>>(static_cast<const std::uint8_t*>(p), bytes, pattern, tag,
                                                           counters, ring);
  return cudaGetLastError();
}

cudaError_t launch_fill(cudaStream_t stream, void* p, std::size_t words, std::uint32_t pattern) noexcept {
  if (words == 0) return cudaSuccess;
  fill_kernel<<<blocks_for(words), threads_per_block, 0, stream>>>(static_cast<std::uint32_t*>(p), words, pattern);
  return cudaGetLastError();
}

cudaError_t launch_verify(cudaStream_t stream, const void* p, std::size_t words, std::uint32_t pattern,
                          unsigned long long launch, verify_state* state) noexcept {
  if (words == 0) return cudaSuccess;
  verify_kernel<<<blocks_for(words), threads_per_block, 0, stream>>>(static_cast<const std::uint32_t*>(p), words,
                                                                      pattern, launch, state);
  return cudaGetLastError();
}

cudaError_t launch_spin(cudaStream_t stream, std::uint64_t nanoseconds) noexcept {
  spin_kernel<<<1, 1, 0, stream>>>(nanoseconds);
  return cudaGetLastError();
}

}  // namespace cudapool::detail
