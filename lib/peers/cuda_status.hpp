// cuda_status.hpp - what the tools do with the status of a CUDA call (the peers in peers.cpp,
// bench's serve workload): every status is checked, and a failure names the call. Part of
// cudapool_peers; with the CUDA toolkit at build time only (cuda_status.cpp is built with it).
#pragma once

#include <cstddef>
#include <string>

#include <cuda_runtime_api.h>

#include <cudapool/types.hpp>

namespace cudapool::peers {

// The CUDA stream of a cuda-backend stream; stream_ref{} names the legacy default stream, as in
// the library's cuda backend.
[[nodiscard]] inline cudaStream_t to_cuda(stream_ref s) noexcept {
  return s.native() != nullptr ? static_cast<cudaStream_t>(s.native()) : cudaStreamLegacy;
}

}  // namespace cudapool::peers

namespace cudapool::peers::cuda_status {

// "<call>[ of N B][ on P] failed: <error name>: <error string>".
[[nodiscard]] std::string describe(const char* call, cudaError_t status, std::size_t bytes = 0,
                                   const void* p = nullptr);

// Hot path: false on failure, with the message in last_error() (peers.hpp) of the calling thread;
// the sticky error state is cleared.
[[nodiscard]] bool ok(cudaError_t status, const char* call, std::size_t bytes = 0, const void* p = nullptr) noexcept;

// Set-up: throws std::runtime_error with the message.
void check(cudaError_t status, const char* call);

// Tear-down (destructors): reports the message on stderr.
void report(cudaError_t status, const char* call) noexcept;

}  // namespace cudapool::peers::cuda_status
