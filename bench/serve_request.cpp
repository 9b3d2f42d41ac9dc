// serve_request.cpp - see serve_request.hpp: the device work of a request, the bound on requests in
// flight, the failure report.
#include "serve_request.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include <cudapool/per_device.hpp>

#include "serve.hpp"

#if CUDAPOOL_HAS_CUDA
#include <cudapool/detail/peers/cuda_status.hpp>
#include "serve_kernels.hpp"
#endif

namespace bench {
namespace {

using cudapool::stream_ref;

#if CUDAPOOL_HAS_CUDA
// The CUDA status helpers the peers use too (lib/peers/cuda_status.hpp).
namespace cuda_status = cudapool::peers::cuda_status;
using cudapool::peers::to_cuda;
#endif

// Set by the first cudapool variant (or serve/none) whose results the device saw wrong; read by main.
std::atomic<bool> g_pool_failures{false};

// set_serve_check_fault: 0, or every how many requests the device check is handed a wrong result.
std::uint64_t g_fault_every = 0;

[[nodiscard]] bool faulted(const request& r) noexcept { return g_fault_every != 0 && r.number % g_fault_every == 0; }

// The simulated device: fill both buffers, spin, verify both. A buffer that another request (on
// another stream) was handed while this one still used it holds that request's pattern when the
// verify runs; the spin keeps the window open long enough for it to happen.
class sim_work final : public request_work {
 public:
  // The backend counts mismatches over its lifetime: the ones before this run are not ours.
  explicit sim_work(cudapool::backend& device)
      : device_(device), before_(device.verification_report().mismatched_ranges) {}

  bool attach_thread() noexcept override {
    cudapool::set_sim_current_device(device_.device());
    return true;
  }

  bool temp_bytes(std::size_t, std::size_t& bytes) noexcept override {
    bytes = 0;
    return true;
  }

  bool enqueue(int, stream_ref s, const request& r) noexcept override {
    const auto pattern = static_cast<std::uint32_t>(r.pattern_bits);
    try {
      device_.fill(s, r.keys_buffer, r.buffer_bytes(), pattern);
      // A faulted request's output holds what its check does not expect (set_serve_check_fault).
      device_.fill(s, r.out, r.buffer_bytes(), faulted(r) ? ~pattern ^ 1 : ~pattern);
      device_.spin(s, std::chrono::nanoseconds(r.keys));
      device_.verify(s, r.keys_buffer, r.buffer_bytes(), pattern);
      device_.verify(s, r.out, r.buffer_bytes(), ~pattern);
      return true;
    } catch (const std::exception& e) {
      set_last_error(std::string("device work: ") + e.what());
      return false;
    }
  }

  std::uint64_t failures() override { return device_.verification_report().mismatched_ranges - before_; }

 private:
  cudapool::backend& device_;
  std::uint64_t before_;
};

#if CUDAPOOL_HAS_CUDA
// The GPU: the keys kernel, CUB's radix sort with its temporary storage from the allocator, the
// check kernel counting into the thread's failure_counter.
class cuda_work final : public request_work {
 public:
  cuda_work(int device, int threads) : device_(device), threads_(static_cast<std::size_t>(threads)) {
    cuda_status::check(cudaSetDevice(device_), "cudaSetDevice");
    cuda_status::check(cudaMalloc(reinterpret_cast<void**>(&counters_), counter_bytes()),
                       "cudaMalloc(failure counters)");
    try {
      cuda_status::check(cudaMemset(counters_, 0, counter_bytes()), "cudaMemset(failure counters)");
      // The threads' streams need not order after the legacy stream the memset ran on.
      cuda_status::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    } catch (...) {
      cuda_status::report(cudaFree(counters_), "cudaFree(failure counters)");
      throw;
    }
  }
  ~cuda_work() override { cuda_status::report(cudaFree(counters_), "cudaFree(failure counters)"); }
  cuda_work(const cuda_work&) = delete;
  cuda_work& operator=(const cuda_work&) = delete;

  bool attach_thread() noexcept override { return cuda_status::ok(cudaSetDevice(device_), "cudaSetDevice"); }

  bool temp_bytes(std::size_t keys, std::size_t& bytes) noexcept override {
    return cuda_status::ok(serve_kernels::sort_temp_bytes(keys, bytes),
                           "cub::DeviceRadixSort::SortKeys (temporary storage size)");
  }

  bool enqueue(int thread, stream_ref s, const request& r) noexcept override {
    const cudaStream_t stream = to_cuda(s);
    const serve_kernels::key_pattern pattern = pattern_of(r);
    // A faulted request's check expects other keys than the sort made (set_serve_check_fault): the
    // sorted keys are base + j * step, whatever the offset.
    serve_kernels::key_pattern expected = pattern;
    if (faulted(r)) expected.base ^= 1;
    auto* keys = static_cast<std::uint32_t*>(r.keys_buffer);
    auto* out = static_cast<std::uint32_t*>(r.out);
    return cuda_status::ok(serve_kernels::launch_fill_keys(stream, keys, r.keys, pattern), "fill_keys_kernel") &&
           cuda_status::ok(serve_kernels::launch_sort(stream, r.temp, r.temp_bytes, keys, out, r.keys),
                           "cub::DeviceRadixSort::SortKeys", r.keys) &&
           cuda_status::ok(serve_kernels::launch_verify(stream, out, r.keys, expected, r.number, counters_ + thread),
                           "verify_kernel");
  }

  std::uint64_t failures() override {
    cuda_status::check(cudaSetDevice(device_), "cudaSetDevice");
    cuda_status::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    std::vector<serve_kernels::failure_counter> host(threads_);
    cuda_status::check(cudaMemcpy(host.data(), counters_, counter_bytes(), cudaMemcpyDeviceToHost),
                       "cudaMemcpy(failure counters)");
    std::uint64_t total = 0;
    for (const auto& c : host) total += c.failures;
    return total;
  }

 private:
  // base < 2^31, step in 1 .. 2047 (serve_kernels::key_pattern), offset anything.
  static serve_kernels::key_pattern pattern_of(const request& r) noexcept {
    return {static_cast<std::uint32_t>(r.pattern_bits & 0x7FFF'FFFF),
            static_cast<std::uint32_t>(1 + ((r.pattern_bits >> 31) % 2047)),
            static_cast<std::uint32_t>(r.pattern_bits >> 42)};
  }
  [[nodiscard]] std::size_t counter_bytes() const noexcept {
    return threads_ * sizeof(serve_kernels::failure_counter);
  }

  int device_;
  std::size_t threads_;
  serve_kernels::failure_counter* counters_ = nullptr;
};
static_assert(keys_of(request_mix::mixed).hi <= serve_kernels::max_keys, "the key pattern covers every request");
#endif

}  // namespace

std::unique_ptr<request_work> make_request_work(cudapool::backend& device, int threads) {
#if CUDAPOOL_HAS_CUDA
  if (device.name() == "cuda") return std::make_unique<cuda_work>(device.device(), threads);
#endif
  (void)threads;
  return std::make_unique<sim_work>(device);
}

// ---- in_flight_bound -----------------------------------------------------------------------------

in_flight_bound::in_flight_bound(cudapool::backend& device, stream_ref s) : device_(device), stream_(s) {
  events_[0] = device_.acquire_event();
  try {
    events_[1] = device_.acquire_event();
  } catch (...) {
    device_.release_event(events_[0]);
    throw;
  }
}

in_flight_bound::~in_flight_bound() {
  for (cudapool::event_handle e : events_) device_.release_event(e);
}

void in_flight_bound::request_enqueued() {
  if (++requests_ % requests_per_event != 0) return;
  cudapool::event_handle& oldest = events_[turn_];
  device_.wait(oldest);  // a never-recorded event is complete
  device_.record(oldest, stream_);
  turn_ ^= 1;
}

// ---- results -----------------------------------------------------------------------------------

void report_failures(benchmark::State& state, const std::string& name, const allocator_config& config,
                     std::uint64_t failures, std::uint64_t requests) {
  state.counters["failures"] = static_cast<double>(failures);
  if (failures == 0 || config.what == allocator_config::kind::peer) return;
  g_pool_failures.store(true, std::memory_order_relaxed);
  const std::string m = name + ": " + std::to_string(failures) + " failed device checks in " +
                        std::to_string(requests) + " requests: memory handed out while the device still used it?";
  std::fprintf(stderr, "bench: %s\n", m.c_str());
  state.SkipWithError(m.c_str());
}

void set_serve_check_fault(std::uint64_t every) noexcept { g_fault_every = every; }

bool serve_pool_failures_seen() noexcept { return g_pool_failures.load(std::memory_order_relaxed); }

}  // namespace bench
