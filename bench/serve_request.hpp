// serve_request.hpp - one request of a server thread and the timed loop that serves them: the code
// serve/<a>/<mix> (serve.hpp: what a request does, on cuda and on sim) and
// serve_devices/<a>/<mix>/devices:<N> (serve_devices.hpp) share. What differs between the two is
// around the loop: which allocator a thread reaches (its Access), its stream and its device.
//
// An Access gives the loop its memory:
//   void* allocate(std::size_t bytes, cudapool::stream_ref s) noexcept;        // nullptr: failed (last_error())
//   bool deallocate(void* p, std::size_t bytes, cudapool::stream_ref s) noexcept;  // stream-ordered on s
//   void begin_request(const request& r) noexcept;                            // optional (serve/none)
#pragma once

#include <benchmark/benchmark.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_allocator.hpp"
#include <cudapool/backend.hpp>
#include "workloads.hpp"

namespace bench {

enum class request_mix { small, mixed };

struct key_range {
  std::size_t lo;
  std::size_t hi;
};

// Keys per request. Small requests keep the host busy (allocation, launches), mixed ones the device.
constexpr key_range keys_of(request_mix mix) {
  return mix == request_mix::small ? key_range{256, 8192} : key_range{1024, std::size_t{1} << 20};
}

// One request: its size, its number on the thread (from 1), the random bits its pattern comes
// from, and its buffers.
struct request {
  std::size_t keys = 0;
  std::uint64_t number = 0;
  std::uint64_t pattern_bits = 0;
  void* keys_buffer = nullptr;
  void* out = nullptr;
  void* temp = nullptr;
  std::size_t temp_bytes = 0;

  [[nodiscard]] std::size_t buffer_bytes() const noexcept { return keys * sizeof(std::uint32_t); }
};

// ---- the device work of a request ---------------------------------------------------------------

// What a request does on the device between its allocations and its frees, and the count of the
// results that failed their check there. One per run and device, made in set-up (thread 0).
class request_work {
 public:
  virtual ~request_work() = default;
  // In every thread of the device before its first request: makes the device the thread's current
  // one (cudaSetDevice; sim: set_sim_current_device). false on failure (last_error()).
  [[nodiscard]] virtual bool attach_thread() noexcept = 0;
  // The temporary storage a request of `keys` keys needs besides its two buffers.
  [[nodiscard]] virtual bool temp_bytes(std::size_t keys, std::size_t& bytes) noexcept = 0;
  // Enqueues the request's work and its check on s (a stream of the work's device). `thread` is
  // the thread's number in the run, below the `threads` the work was made for. false on failure
  // (last_error()).
  [[nodiscard]] virtual bool enqueue(int thread, cudapool::stream_ref s, const request& r) noexcept = 0;
  // Once, after every thread is done: the failed checks of this run. Throws on device failure.
  [[nodiscard]] virtual std::uint64_t failures() = 0;
};

// The work of requests on `device` (cuda: the keys kernel, CUB's sort and the check kernel, with a
// failure counter per thread of the run; sim: fill, spin and verify), for threads numbered
// 0 .. threads - 1. Throws when it cannot be set up.
[[nodiscard]] std::unique_ptr<request_work> make_request_work(cudapool::backend& device, int threads);

// ---- the loop --------------------------------------------------------------------------------

inline constexpr std::uint64_t requests_per_event = 8;

// Bounds a thread's requests in flight, as a server bounds its queue: after every 8th request the
// host waits for the event it recorded 16 requests before and records it again, so at most 16
// requests are in flight. Without it the simulated device's queues grow without bound (and on a
// GPU the launch queue decides). Throws on backend failure.
class in_flight_bound {
 public:
  in_flight_bound(cudapool::backend& device, cudapool::stream_ref s);
  ~in_flight_bound();
  in_flight_bound(const in_flight_bound&) = delete;
  in_flight_bound& operator=(const in_flight_bound&) = delete;

  void request_enqueued();
  // The last request: its time includes the stream's work.
  void drain() { device_.synchronize(stream_); }

 private:
  cudapool::backend& device_;
  cudapool::stream_ref stream_;
  std::array<cudapool::event_handle, 2> events_{};
  std::uint64_t requests_ = 0;
  unsigned turn_ = 0;
};

// Requests that may still be in flight (enqueued, not known complete) when a thread allocates for
// its next one, request i (numbered from 1, as in_flight_bound counts them). Let k be the largest
// multiple of 8 below i: after enqueueing request k the host waited for the event recorded after
// request k - 16 (for k <= 16 one never recorded: nothing, and k - 16 <= 0), and it has not waited
// since. So requests 1 .. k - 16 are complete and at most i - 1 - (k - 16) <= 8 + 15 = 23 earlier
// requests are not: 3 x 8 - 1.
inline constexpr std::uint64_t max_in_flight = 3 * requests_per_event - 1;

template <class Access>
[[nodiscard]] bool allocate_into(Access& access, void*& p, std::size_t bytes, cudapool::stream_ref s) noexcept {
  p = access.allocate(bytes, s);
  return p != nullptr;
}

template <class Access>
[[nodiscard]] bool free_stream_ordered(Access& access, void* p, std::size_t bytes, cudapool::stream_ref s,
                                       std::uint64_t& frees) noexcept {
  if (p == nullptr) return true;
  ++frees;
  return access.deallocate(p, bytes, s);
}

// One request on the thread's stream s. Its buffers are freed (stream-ordered on s) right after
// its work is enqueued, as a server does: stream order keeps them until the work is done. false on
// failure (last_error()), with whatever was allocated freed.
template <class Access>
[[nodiscard]] bool serve_request(Access& access, request_work& work, int thread, cudapool::stream_ref s, request& r,
                                 std::uint64_t& frees) noexcept {
  if constexpr (requires { access.begin_request(r); }) access.begin_request(r);
  bool ok = work.temp_bytes(r.keys, r.temp_bytes) && allocate_into(access, r.keys_buffer, r.buffer_bytes(), s) &&
            allocate_into(access, r.out, r.buffer_bytes(), s) &&
            (r.temp_bytes == 0 || allocate_into(access, r.temp, r.temp_bytes, s)) && work.enqueue(thread, s, r);
  ok &= free_stream_ordered(access, r.keys_buffer, r.buffer_bytes(), s, frees);
  ok &= free_stream_ordered(access, r.out, r.buffer_bytes(), s, frees);
  ok &= free_stream_ordered(access, r.temp, r.temp_bytes, s, frees);
  return ok;
}

// Through the workloads' handle: pools get deallocate(p, s), peers cudaFreeAsync(p, s) / DeviceFree.
struct handle_access {
  bench_allocator* a;
  [[nodiscard]] void* allocate(std::size_t bytes, cudapool::stream_ref s) noexcept { return a->allocate(bytes, s); }
  [[nodiscard]] bool deallocate(void* p, std::size_t, cudapool::stream_ref s) noexcept {
    return a->deallocate(p, s, s);
  }
};

// A thread of the server: the device its stream belongs to, that stream, its number in the run
// (its request sizes, patterns and failure counter follow from it: thread t serves the same
// requests in serve and serve_devices).
struct server_thread {
  cudapool::backend* device = nullptr;
  cudapool::stream_ref stream;
  int number = 0;
};

struct served {
  std::uint64_t requests = 0;
  std::uint64_t frees = 0;  // stream-ordered
  double seconds = 0;       // from the first request's start to the last one's work done (0: failed)
};

// The timed loop of one thread. access == nullptr: set-up failed (the thread has skipped), the
// loop runs no request. On a failure it calls fail(context, in_loop) (the caller's run_scope::fail)
// and stops.
template <class Access, class Fail>
served serve_loop(benchmark::State& state, const server_thread& t, Access* access, request_work* work,
                  request_mix mix, Fail&& fail) {
  const key_range range = keys_of(mix);
  const std::vector<std::size_t> sizes = log_uniform_sizes(4096, range.lo, range.hi, 1515 + t.number);
  fast_random rng(77 + t.number);
  std::optional<in_flight_bound> bound;
  if (access != nullptr) {
    try {
      bound.emplace(*t.device, t.stream);
    } catch (const std::exception& e) {
      set_last_error(e.what());
      fail("serve set-up", false);
    }
  }
  served out;
  benchmark::IterationCount done = 0;
  std::chrono::steady_clock::time_point start;
  for (auto _ : state) {
    if (access == nullptr || !bound) [[unlikely]] break;
    if (done == 0) start = std::chrono::steady_clock::now();
    request r;
    r.keys = sizes[done & 4095];
    r.number = static_cast<std::uint64_t>(done) + 1;
    r.pattern_bits = rng();
    if (!serve_request(*access, *work, t.number, t.stream, r, out.frees)) [[unlikely]] {
      fail("serve request " + std::to_string(r.number), true);
      break;
    }
    try {
      if (++done == state.max_iterations) {
        bound->drain();
        // Before Google Benchmark's end-of-loop barrier, as its own timer stops.
        out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      } else {
        bound->request_enqueued();
      }
    } catch (const std::exception& e) {
      set_last_error(e.what());
      fail("serve request " + std::to_string(r.number), true);
      break;
    }
  }
  out.requests = static_cast<std::uint64_t>(done);
  return out;
}

// ---- results -----------------------------------------------------------------------------------

// Sets the `failures` counter (thread 0, after the run). A failed check is a result the device
// saw wrong. For a cudapool variant that is a bug (a block handed out while the device still used
// it): the benchmark ends with an error and bench exits non-zero (serve_pool_failures_seen()); so
// is it for serve/none (its ring reused a slot too early). A peer's failures are what it does,
// reported as measured. `name` names the benchmark in the message.
void report_failures(benchmark::State& state, const std::string& name, const allocator_config& config,
                     std::uint64_t failures, std::uint64_t requests);

}  // namespace bench
