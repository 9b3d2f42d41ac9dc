// cuda_backend.cpp - the cudart backend: cudaMalloc'd chunks, pooled events, kernels for the
// stream-ordered device operations.
//
// Every CUDA call runs with the backend's device current (device_guard) and its status checked:
// a failure throws backend_error naming the call, the error and the device, except in noexcept
// functions, which write that message to stderr. A failed call's error is cleared with
// cudaGetLastError so that it does not resurface at the next launch check.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "cuda_kernels.hpp"
#include "cudapool/backend.hpp"
#include "cudapool/errors.hpp"

namespace cudapool {
namespace {

std::string describe_cuda_error(const char* call, cudaError_t status, int device) {
  return std::string(call) + " failed: " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status) +
         " (device " + std::to_string(device) + ")";
}

[[noreturn]] void throw_cuda_error(const char* call, cudaError_t status, int device) {
  (void)cudaGetLastError();
  throw backend_error(describe_cuda_error(call, status, device));
}

void check(cudaError_t status, const char* call, int device) {
  if (status != cudaSuccess) throw_cuda_error(call, status, device);
}

void report(const char* message) noexcept { std::fprintf(stderr, "cudapool: cuda backend: %s\n", message); }

// For noexcept paths. At process exit the runtime may already be unloading, and then there is
// nothing left to release, so that status is not reported.
void report_failure(cudaError_t status, const char* call, int device) noexcept {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();
  if (status == cudaErrorCudartUnloading) return;
  try {
    report(describe_cuda_error(call, status, device).c_str());
  } catch (const std::exception&) {
    report(call);
  }
}

// Makes `device` current for the guard's scope and gives the calling thread its previous device
// back afterwards, so the backend never changes which device a caller's own CUDA calls use.
class device_guard {
 public:
  explicit device_guard(int device) : device_(device) {
    check(cudaGetDevice(&previous_), "cudaGetDevice", device);
    if (previous_ != device_) check(cudaSetDevice(device_), "cudaSetDevice", device_);
  }
  ~device_guard() {
    if (previous_ != device_) report_failure(cudaSetDevice(previous_), "cudaSetDevice (restoring the caller's device)", previous_);
  }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int device_;
  int previous_ = 0;
};

// stream_ref{} is the legacy default stream, whichever default-stream mode this file is built in.
cudaStream_t to_cuda(stream_ref s) noexcept {
  return s.native() != nullptr ? static_cast<cudaStream_t>(s.native()) : cudaStreamLegacy;
}

cudaEvent_t to_cuda(event_handle e) noexcept { return static_cast<cudaEvent_t>(e); }

void check_range(const char* what, const void* p, std::size_t bytes) {
  if (bytes % sizeof(std::uint32_t) != 0 || reinterpret_cast<std::uintptr_t>(p) % alignof(std::uint32_t) != 0) {
    throw std::invalid_argument(std::string("cuda backend: ") + what +
                                ": the range must be 4-byte aligned and a multiple of 4 bytes, got " +
                                std::to_string(bytes) + " bytes");
  }
}

class cuda_backend final : public backend {
 public:
  explicit cuda_backend(int device) : device_(device) {
    device_guard guard(device_);
    void* state = nullptr;
    check(cudaMalloc(&state, sizeof(detail::verify_state)), "cudaMalloc (verify state)", device_);
    verify_state_ = static_cast<detail::verify_state*>(state);
    const cudaError_t status = cudaMemset(verify_state_, 0, sizeof(detail::verify_state));
    if (status != cudaSuccess) {
      report_failure(cudaFree(verify_state_), "cudaFree (verify state)", device_);
      throw_cuda_error("cudaMemset (verify state)", status, device_);
    }
  }

  ~cuda_backend() override {
    try {
      device_guard guard(device_);
      // Work still queued may record these events or write the verify state.
      report_failure(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device_);
      for (cudaEvent_t e : events_) report_failure(cudaEventDestroy(e), "cudaEventDestroy", device_);
      report_failure(cudaFree(verify_state_), "cudaFree (verify state)", device_);
    } catch (const backend_error& e) {
      report(e.what());
    }
  }

  cuda_backend(const cuda_backend&) = delete;
  cuda_backend& operator=(const cuda_backend&) = delete;

  [[nodiscard]] std::string_view name() const noexcept override { return "cuda"; }
  [[nodiscard]] int device() const noexcept override { return device_; }

  // ---- chunks ----

  [[nodiscard]] void* allocate_chunk(std::size_t bytes) override {
    if (bytes == 0) throw std::invalid_argument("cuda backend: allocate_chunk(0)");
    device_guard guard(device_);
    void* chunk = nullptr;
    const cudaError_t status = cudaMalloc(&chunk, bytes);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return nullptr;
    }
    check(status, "cudaMalloc", device_);
    chunk_bytes_.fetch_add(bytes, std::memory_order_relaxed);
    return chunk;
  }

  void free_chunk(void* chunk, std::size_t bytes) noexcept override {
    if (chunk == nullptr) return;
    // The pool has forgotten the chunk whatever cudaFree says.
    chunk_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    try {
      device_guard guard(device_);
      report_failure(cudaFree(chunk), "cudaFree", device_);
    } catch (const backend_error& e) {
      report(e.what());
    }
  }

  [[nodiscard]] std::size_t chunk_bytes() const noexcept override {
    return chunk_bytes_.load(std::memory_order_relaxed);
  }

  // ---- streams ----

  [[nodiscard]] stream_ref create_stream() override {
    device_guard guard(device_);
    cudaStream_t stream = nullptr;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", device_);
    return stream_ref(stream);
  }

  void destroy_stream(stream_ref s) override {
    if (s == stream_ref{}) throw std::invalid_argument("cuda backend: the default stream cannot be destroyed");
    device_guard guard(device_);
    check(cudaStreamDestroy(to_cuda(s)), "cudaStreamDestroy", device_);
  }

  [[nodiscard]] std::uint64_t stream_id(stream_ref s) override {
    device_guard guard(device_);
    unsigned long long id = 0;
    check(cudaStreamGetId(to_cuda(s), &id), "cudaStreamGetId", device_);
    return id;
  }

  void synchronize(stream_ref s) override {
    device_guard guard(device_);
    check(cudaStreamSynchronize(to_cuda(s)), "cudaStreamSynchronize", device_);
  }

  void synchronize_device() override {
    device_guard guard(device_);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device_);
  }

  // ---- events ----

  [[nodiscard]] event_handle acquire_event() override {
    {
      std::lock_guard lock(events_mutex_);
      if (!free_events_.empty()) {
        cudaEvent_t e = free_events_.back();
        free_events_.pop_back();
        return e;
      }
    }
    device_guard guard(device_);
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags", device_);
    try {
      std::lock_guard lock(events_mutex_);
      // release_event is noexcept: keep room for every event on the free list.
      free_events_.reserve(events_.size() + 1);
      events_.push_back(e);
    } catch (...) {
      report_failure(cudaEventDestroy(e), "cudaEventDestroy", device_);
      throw;
    }
    return e;
  }

  void release_event(event_handle e) noexcept override {
    std::lock_guard lock(events_mutex_);
    free_events_.push_back(to_cuda(e));
  }

  void record(event_handle e, stream_ref s) override {
    device_guard guard(device_);
    check(cudaEventRecord(to_cuda(e), to_cuda(s)), "cudaEventRecord", device_);
  }

  [[nodiscard]] bool query(event_handle e) override {
    device_guard guard(device_);
    const cudaError_t status = cudaEventQuery(to_cuda(e));
    if (status == cudaSuccess) return true;
    if (status != cudaErrorNotReady) throw_cuda_error("cudaEventQuery", status, device_);
    // Not an error, but clear it if the runtime kept it as one; leave any other error in place.
    if (cudaPeekAtLastError() == cudaErrorNotReady) (void)cudaGetLastError();
    return false;
  }

  void wait(event_handle e) override {
    device_guard guard(device_);
    check(cudaEventSynchronize(to_cuda(e)), "cudaEventSynchronize", device_);
  }

  void stream_wait(stream_ref waiter, event_handle e) override {
    device_guard guard(device_);
    check(cudaStreamWaitEvent(to_cuda(waiter), to_cuda(e), cudaEventWaitDefault), "cudaStreamWaitEvent", device_);
  }

  // ---- device operations ----

  void fill(stream_ref s, void* p, std::size_t bytes, std::uint32_t pattern) override {
    check_range("fill", p, bytes);
    device_guard guard(device_);
    check(detail::launch_fill(to_cuda(s), p, bytes / sizeof(std::uint32_t), pattern), "fill kernel launch", device_);
  }

  void verify(stream_ref s, const void* p, std::size_t bytes, std::uint32_t pattern) override {
    check_range("verify", p, bytes);
    device_guard guard(device_);
    const unsigned long long launch = next_verify_launch_.fetch_add(1, std::memory_order_relaxed);
    check(detail::launch_verify(to_cuda(s), p, bytes / sizeof(std::uint32_t), pattern, launch, verify_state_),
          "verify kernel launch", device_);
  }

  void spin(stream_ref s, std::chrono::nanoseconds duration) override {
    device_guard guard(device_);
    const auto nanoseconds = static_cast<std::uint64_t>(std::max<std::int64_t>(duration.count(), 0));
    check(detail::launch_spin(to_cuda(s), nanoseconds), "spin kernel launch", device_);
  }

  // The only device-to-host read of the backend.
  [[nodiscard]] verify_report verification_report() override {
    device_guard guard(device_);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device_);
    detail::verify_summary summary{};
    check(cudaMemcpy(&summary, &verify_state_->summary, sizeof(summary), cudaMemcpyDeviceToHost),
          "cudaMemcpy (verify state)", device_);
    verify_report report{.mismatched_ranges = summary.mismatched_ranges, .first = {}};
    const unsigned kept = std::min(summary.records_claimed, detail::max_mismatch_records);
    for (unsigned i = 0; i < kept; ++i) {
      const detail::device_mismatch& m = summary.records[i];
      report.first.push_back({.block = static_cast<std::uintptr_t>(m.block),
                              .bytes = static_cast<std::size_t>(m.bytes),
                              .word_offset = static_cast<std::size_t>(m.word_offset),
                              .expected = m.expected,
                              .found = m.found});
    }
    return report;
  }

 private:
  const int device_;
  detail::verify_state* verify_state_ = nullptr;  // device memory, written only by verify kernels
  // allocate_chunk minus free_chunk; any thread, relaxed: a statistic that orders nothing.
  std::atomic<std::size_t> chunk_bytes_{0};
  // Numbers verify launches; any thread, relaxed: only uniqueness matters. Starts at 1 because 0
  // is the claim slots' initial value.
  std::atomic<unsigned long long> next_verify_launch_{1};

  // Taken by acquire_event and release_event only.
  std::mutex events_mutex_;
  std::vector<cudaEvent_t> events_;       // GUARDED_BY(events_mutex_); every event made, destroyed at the end
  std::vector<cudaEvent_t> free_events_;  // GUARDED_BY(events_mutex_)
};

}  // namespace

bool cuda_backend_built() noexcept { return true; }

int cuda_device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

std::unique_ptr<backend> make_cuda_backend(int device) {
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount", device);
  if (device < 0 || device >= count) {
    throw backend_error("cuda backend: no CUDA device " + std::to_string(device) + " (this machine has " +
                        std::to_string(count) + ")");
  }
  return std::make_unique<cuda_backend>(device);
}

}  // namespace cudapool
