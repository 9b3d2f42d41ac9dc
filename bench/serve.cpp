// serve.cpp - see serve.hpp for what serve measures.
#include "serve.hpp"

#include <benchmark/benchmark.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "workloads.hpp"

#if CUDAPOOL_HAS_CUDA
#include <cudapool/detail/peers/cuda_status.hpp>
#include <cudapool/resource.hpp>
#include "serve_kernels.hpp"
#include <cudapool/tls_pool.hpp>
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
// results that failed their check there. One per run, made in set-up (thread 0).
class request_work {
 public:
  virtual ~request_work() = default;
  // In every thread before its first request. false on failure (last_error()).
  [[nodiscard]] virtual bool attach_thread() noexcept { return true; }
  // The temporary storage a request of `keys` keys needs besides its two buffers.
  [[nodiscard]] virtual bool temp_bytes(std::size_t keys, std::size_t& bytes) noexcept = 0;
  // Enqueues the request's work and its check on s. false on failure (last_error()).
  [[nodiscard]] virtual bool enqueue(int thread, stream_ref s, const request& r) noexcept = 0;
  // Once, after every thread is done: the failed checks of this run. Throws on device failure.
  [[nodiscard]] virtual std::uint64_t failures() = 0;
};

// The simulated device: fill both buffers, spin, verify both. A buffer that another request (on
// another stream) was handed while this one still used it holds that request's pattern when the
// verify runs; the spin keeps the window open long enough for it to happen.
class sim_work final : public request_work {
 public:
  // The backend counts mismatches over its lifetime: the ones before this run are not ours.
  explicit sim_work(cudapool::backend& device)
      : device_(device), before_(device.verification_report().mismatched_ranges) {}

  bool temp_bytes(std::size_t, std::size_t& bytes) noexcept override {
    bytes = 0;
    return true;
  }

  bool enqueue(int, stream_ref s, const request& r) noexcept override {
    const auto pattern = static_cast<std::uint32_t>(r.pattern_bits);
    try {
      device_.fill(s, r.keys_buffer, r.buffer_bytes(), pattern);
      device_.fill(s, r.out, r.buffer_bytes(), ~pattern);
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
    auto* keys = static_cast<std::uint32_t*>(r.keys_buffer);
    auto* out = static_cast<std::uint32_t*>(r.out);
    return cuda_status::ok(serve_kernels::launch_fill_keys(stream, keys, r.keys, pattern), "fill_keys_kernel") &&
           cuda_status::ok(serve_kernels::launch_sort(stream, r.temp, r.temp_bytes, keys, out, r.keys),
                           "cub::DeviceRadixSort::SortKeys", r.keys) &&
           cuda_status::ok(serve_kernels::launch_verify(stream, out, r.keys, pattern, r.number, counters_ + thread),
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

// Throws when the work cannot be set up.
std::unique_ptr<request_work> make_work(int threads) {
  cudapool::backend& device = *shared_device();
#if CUDAPOOL_HAS_CUDA
  if (device.name() == "cuda") return std::make_unique<cuda_work>(device.device(), threads);
#endif
  (void)threads;
  return std::make_unique<sim_work>(device);
}

// ---- how the loop reaches the allocator ------------------------------------------------------

// Through the workloads' handle: pools get deallocate(p, s), peers cudaFreeAsync(p, s) / DeviceFree.
struct handle_access {
  bench_allocator* a;
  [[nodiscard]] void* allocate(std::size_t bytes, stream_ref s) noexcept { return a->allocate(bytes, s); }
  [[nodiscard]] bool deallocate(void* p, std::size_t, stream_ref s) noexcept { return a->deallocate(p, s, s); }
};

#if CUDAPOOL_HAS_CUDA
// Through CCCL's cuda::mr, as a CCCL user holds a pool: an async_resource_ref over
// cudapool::resource. Refers to res: neither copied nor moved.
template <class Pool>
struct resource_access {
  static constexpr std::size_t alignment = ::cuda::mr::default_cuda_malloc_alignment;

  explicit resource_access(Pool& pool) : res(pool), ref(res) {}
  resource_access(const resource_access&) = delete;
  resource_access& operator=(const resource_access&) = delete;

  [[nodiscard]] void* allocate(std::size_t bytes, stream_ref s) noexcept {
    try {
      return ref.allocate_async(bytes, alignment, cudapool::to_cuda_stream(s));
    } catch (const std::exception& e) {
      set_last_error(std::string("cuda::mr allocate_async(") + std::to_string(bytes) + " B): " + e.what());
      return nullptr;
    }
  }
  [[nodiscard]] bool deallocate(void* p, std::size_t bytes, stream_ref s) noexcept {
    ref.deallocate_async(p, bytes, alignment, cudapool::to_cuda_stream(s));
    return true;
  }

  cudapool::resource<Pool> res;
  ::cuda::mr::async_resource_ref<::cuda::mr::device_accessible> ref;
};
#endif

// ---- the loop --------------------------------------------------------------------------------

constexpr std::uint64_t requests_per_event = 8;

// Bounds a thread's requests in flight, as a server bounds its queue: after every 8th request the
// host waits for the event it recorded 16 requests before and records it again, so at most 16
// requests are in flight. Without it the simulated device's queues grow without bound (and on a
// GPU the launch queue decides). Throws on backend failure.
class in_flight_bound {
 public:
  in_flight_bound(cudapool::backend& device, stream_ref s) : device_(device), stream_(s) {
    events_[0] = device_.acquire_event();
    try {
      events_[1] = device_.acquire_event();
    } catch (...) {
      device_.release_event(events_[0]);
      throw;
    }
  }
  ~in_flight_bound() {
    for (cudapool::event_handle e : events_) device_.release_event(e);
  }
  in_flight_bound(const in_flight_bound&) = delete;
  in_flight_bound& operator=(const in_flight_bound&) = delete;

  void request_enqueued() {
    if (++requests_ % requests_per_event != 0) return;
    cudapool::event_handle& oldest = events_[turn_];
    device_.wait(oldest);  // a never-recorded event is complete
    device_.record(oldest, stream_);
    turn_ ^= 1;
  }
  // The last request: its time includes the stream's work.
  void drain() { device_.synchronize(stream_); }

 private:
  cudapool::backend& device_;
  stream_ref stream_;
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
constexpr std::uint64_t max_in_flight = 3 * requests_per_event - 1;

// serve/none, the ceiling: no allocator. Each thread serves its requests from a ring of slots of
// memory of its own, made in set-up before the timed loop (backend allocate_chunk: cudaMalloc on
// cuda) and freed after the run; request i takes slot i % 32 and bumps its buffers from it; a free
// does nothing. Safe because 32 > max_in_flight: the slot's previous request, i - 32, is at or
// before i - 1 - max_in_flight, so it is complete when i is handed the slot: the ring does not
// even lean on the order of the thread's stream (which alone would make reuse safe: all of a
// thread's requests run on its one stream). The device check still runs. A slot holds the largest request of the mode (two
// buffers of keys_of(mix).hi keys and the sort storage of that many keys); a request that does not
// fit fails (not expected: CUB's storage grows with the keys), it is not served from elsewhere.
class thread_ring {
 public:
  static constexpr std::uint64_t slots = 32;
  static_assert(slots > max_in_flight, "a slot is reused only after its request is complete");
  static constexpr std::size_t alignment = 256;  // as cudaMalloc's

  static constexpr std::size_t aligned(std::size_t bytes) noexcept {
    return (bytes + alignment - 1) / alignment * alignment;
  }

  // Throws when the memory cannot be had.
  thread_ring(cudapool::backend& device, std::size_t slot_bytes)
      : device_(device), slot_bytes_(aligned(slot_bytes)), base_(static_cast<char*>(device.allocate_chunk(bytes()))) {
    if (base_ == nullptr) {
      throw std::runtime_error("serve/none: allocate_chunk(" + std::to_string(bytes()) + " B): out of memory");
    }
  }
  ~thread_ring() { device_.free_chunk(base_, bytes()); }
  thread_ring(const thread_ring&) = delete;
  thread_ring& operator=(const thread_ring&) = delete;

  // The access of serve_request.
  void begin_request(const request& r) noexcept {
    slot_ = base_ + (r.number % slots) * slot_bytes_;
    used_ = 0;
  }
  [[nodiscard]] void* allocate(std::size_t bytes, stream_ref) noexcept {
    const std::size_t take = aligned(bytes);
    if (take > slot_bytes_ - used_) [[unlikely]] {
      set_last_error("serve/none: " + std::to_string(bytes) + " B do not fit in the slot (" +
                     std::to_string(slot_bytes_ - used_) + " B left)");
      return nullptr;
    }
    void* p = slot_ + used_;
    used_ += take;
    return p;
  }
  [[nodiscard]] bool deallocate(void*, std::size_t, stream_ref) noexcept { return true; }

 private:
  [[nodiscard]] std::size_t bytes() const noexcept { return slots * slot_bytes_; }

  cudapool::backend& device_;
  std::size_t slot_bytes_;
  char* base_;
  char* slot_ = nullptr;
  std::size_t used_ = 0;
};

template <class Access>
[[nodiscard]] bool allocate_into(Access& access, void*& p, std::size_t bytes, stream_ref s) noexcept {
  p = access.allocate(bytes, s);
  return p != nullptr;
}

template <class Access>
[[nodiscard]] bool free_stream_ordered(Access& access, void* p, std::size_t bytes, stream_ref s,
                                       std::uint64_t& frees) noexcept {
  if (p == nullptr) return true;
  ++frees;
  return access.deallocate(p, bytes, s);
}

// One request on the thread's stream s. Its buffers are freed (stream-ordered on s) right after
// its work is enqueued, as a server does: stream order keeps them until the work is done. false on
// failure (last_error()), with whatever was allocated freed.
template <class Access>
[[nodiscard]] bool serve_request(Access& access, request_work& work, int thread, stream_ref s, request& r,
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

struct served {
  std::uint64_t requests = 0;
  std::uint64_t frees = 0;  // stream-ordered
};

// The timed loop of one thread.
// access == nullptr: set-up failed (the thread has skipped), the loop runs no request.
template <class Access>
served serve_loop(benchmark::State& state, run_scope& run, Access* access, request_work* work, request_mix mix) {
  const stream_ref s = run.ok() ? run.context().streams[run.thread()] : stream_ref{};
  const key_range range = keys_of(mix);
  const std::vector<std::size_t> sizes = log_uniform_sizes(4096, range.lo, range.hi, 1515 + run.thread());
  fast_random rng(77 + run.thread());
  std::optional<in_flight_bound> bound;
  if (run.ok()) {
    try {
      bound.emplace(*shared_device(), s);
    } catch (const std::exception& e) {
      set_last_error(e.what());
      run.fail("serve set-up", false);
    }
  }
  served out;
  benchmark::IterationCount done = 0;
  for (auto _ : state) {
    if (access == nullptr || !bound) [[unlikely]] break;
    request r;
    r.keys = sizes[done & 4095];
    r.number = static_cast<std::uint64_t>(done) + 1;
    r.pattern_bits = rng();
    if (!serve_request(*access, *work, run.thread(), s, r, out.frees)) [[unlikely]] {
      run.fail("serve request " + std::to_string(r.number));
      break;
    }
    try {
      if (++done == state.max_iterations) {
        bound->drain();
      } else {
        bound->request_enqueued();
      }
    } catch (const std::exception& e) {
      set_last_error(e.what());
      run.fail("serve request " + std::to_string(r.number));
      break;
    }
  }
  out.requests = static_cast<std::uint64_t>(done);
  return out;
}

// A failed check is a result the device saw wrong. For a cudapool variant that is a bug (a block
// handed out while the device still used it): the benchmark ends with an error and bench exits
// non-zero; so is it for serve/none (its ring reused a slot too early). A peer's failures are what
// it does, reported as measured.
void report_failures(benchmark::State& state, const allocator_config& config, std::uint64_t failures,
                     std::uint64_t requests) {
  state.counters["failures"] = static_cast<double>(failures);
  if (failures == 0 || config.what == allocator_config::kind::peer) return;
  g_pool_failures.store(true, std::memory_order_relaxed);
  const std::string m = "serve/" + config.label + ": " + std::to_string(failures) + " failed device checks in " +
                        std::to_string(requests) + " requests: memory handed out while the device still used it?";
  std::fprintf(stderr, "bench: %s\n", m.c_str());
  state.SkipWithError(m.c_str());
}

enum class access_path { handle, resource };

// What one registered serve benchmark keeps between set-up and tear-down.
struct serve_slot {
  std::unique_ptr<request_work> work;
  std::vector<std::unique_ptr<thread_ring>> rings;  // serve/none: one per thread
  std::atomic<std::uint64_t> requests{0};  // of all threads, added after their loops
};

void serve(benchmark::State& state, run_context& ctx, const allocator_config& config, request_mix mix,
           access_path path, serve_slot& slot) {
  run_options options;
  options.home_streams = false;  // every allocator gets a stream per thread
  options.setup = [&slot, &config, mix](run_context& c, int threads) {
    for (int t = 0; t < threads; ++t) c.streams.push_back(shared_device()->create_stream());
    slot.work = make_work(threads);
    slot.requests.store(0, std::memory_order_relaxed);
    if (config.what == allocator_config::kind::none) {
      const std::size_t keys = keys_of(mix).hi;
      std::size_t temp = 0;
      if (!slot.work->temp_bytes(keys, temp)) throw std::runtime_error(last_error());
      const std::size_t slot_bytes =
          2 * thread_ring::aligned(keys * sizeof(std::uint32_t)) + thread_ring::aligned(temp);
      for (int t = 0; t < threads; ++t) {
        slot.rings.push_back(std::make_unique<thread_ring>(*shared_device(), slot_bytes));
      }
    }
  };
  run_scope run(state, ctx, config, options);
  if (run.ok() && !slot.work->attach_thread()) run.fail("serve set-up", false);
  request_work* work = run.ok() ? slot.work.get() : nullptr;
  served done;
  if (config.what == allocator_config::kind::none) {
    thread_ring* ring = work != nullptr ? slot.rings[static_cast<std::size_t>(run.thread())].get() : nullptr;
    done = serve_loop(state, run, ring, work, mix);
  } else if (path == access_path::handle) {
    handle_access access{run.allocator()};
    done = serve_loop(state, run, work != nullptr ? &access : nullptr, work, mix);
  } else {
#if CUDAPOOL_HAS_CUDA
    cudapool::tls_pool* pool = work != nullptr ? run.allocator()->concrete<cudapool::tls_pool>() : nullptr;
    if (pool == nullptr && run.ok()) run.fail("serve through cuda::mr: not a tls pool", false);
    std::optional<resource_access<cudapool::tls_pool>> access;
    if (pool != nullptr) access.emplace(*pool);
    done = serve_loop(state, run, access ? &*access : nullptr, work, mix);
#endif
  }
  state.SetItemsProcessed(state.iterations());
  // Before finish(): its barrier orders these adds before thread 0 reads the sum.
  slot.requests.fetch_add(done.requests, std::memory_order_relaxed);
  run.finish(done.frees, [&](run_context& c) {
    report_failures(state, config, slot.work->failures(), slot.requests.load(std::memory_order_relaxed));
    if (auto st = c.alloc->stats()) {
      stream_waits_counter(state, *st);
      pool_activity_counters(state, *st);
    }
    pool_reserved_counter(state, c);
  });
  if (run.thread() == 0) {
    if (!slot.rings.empty()) {
      // No device work may use the rings when they are freed (a failed run may have left some).
      try {
        shared_device()->synchronize_device();
      } catch (const std::exception& e) {
        state.SkipWithError((std::string("serve/none tear-down: ") + e.what()).c_str());
      }
      slot.rings.clear();
    }
    slot.work.reset();
  }
}

// ---- registration ------------------------------------------------------------------------------

// The four variants as they are (no option variations) and the stream-ordered peers; serve/none is
// added by register_serve_benchmarks.
bool serves(const allocator_config& a) {
  if (a.what == allocator_config::kind::pool) return a.all_workloads && !a.plain && a.name == a.label;
  return a.name == "cudaMallocAsync" || a.name == "cub";
}

void add_serve(const allocator_config& a, access_path path) {
  for (const auto& [mix, name] : {std::pair{request_mix::small, "small"}, std::pair{request_mix::mixed, "mixed"}}) {
    const request_mix m = mix;  // (clang 14 cannot capture structured bindings)
    add("serve/" + a.label + "/" + name, thread_counts({1, 4, 16, 64}, a.max_threads),
        [a, m, path, slot = std::make_shared<serve_slot>()](benchmark::State& s, run_context& c) {
          serve(s, c, a, m, path, *slot);
        });
  }
}

}  // namespace

void register_serve_benchmarks(const std::vector<allocator_config>& allocators) {
  for (const allocator_config& a : allocators) {
    if (!serves(a)) continue;
    add_serve(a, access_path::handle);
#if CUDAPOOL_HAS_CUDA
    if (a.what == allocator_config::kind::pool && a.name == "tls") {
      allocator_config through_mr = a;
      through_mr.label = "tls-mr";
      add_serve(through_mr, access_path::resource);
    }
#endif
  }
  // The ceiling, for serve only: the same requests with no allocator (thread_ring).
  add_serve({"none", allocator_config::kind::none, "none", {}}, access_path::handle);
}

bool serve_pool_failures_seen() noexcept { return g_pool_failures.load(std::memory_order_relaxed); }

}  // namespace bench
