// cuda_status.cpp - see cuda_status.hpp.
#include <cudapool/detail/peers/cuda_status.hpp>

#include <cstdio>
#include <stdexcept>

#include <cudapool/detail/peers/peers.hpp>

namespace cudapool::peers::cuda_status {

std::string describe(const char* call, cudaError_t status, std::size_t bytes, const void* p) {
  std::string m = call;
  if (bytes != 0) m += " of " + std::to_string(bytes) + " B";
  if (p != nullptr) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " on %p", p);
    m += buf;
  }
  return m + " failed: " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status);
}

bool ok(cudaError_t status, const char* call, std::size_t bytes, const void* p) noexcept {
  if (status == cudaSuccess) [[likely]] return true;
  (void)cudaGetLastError();
  try {
    set_last_error(describe(call, status, bytes, p));
  } catch (...) {
    set_last_error(call);
  }
  return false;
}

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    throw std::runtime_error(describe(call, status));
  }
}

void report(cudaError_t status, const char* call) noexcept {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();
  std::fprintf(stderr, "teardown: %s failed: %s: %s\n", call, cudaGetErrorName(status),
               cudaGetErrorString(status));
}

}  // namespace cudapool::peers::cuda_status
