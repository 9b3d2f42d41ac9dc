// serve.cpp - see serve.hpp for what serve measures.
#include "serve.hpp"

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "serve_request.hpp"
#include "workloads.hpp"

#if CUDAPOOL_HAS_CUDA
#include <cudapool/resource.hpp>
#include <cudapool/tls_pool.hpp>
#endif

namespace bench {
namespace {

using cudapool::stream_ref;

// ---- how the loop reaches the allocator (and handle_access, serve_request.hpp) ---------------

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
  options.count_device_calls = true;
  options.setup = [&slot, &config, mix](run_context& c, int threads) {
    for (int t = 0; t < threads; ++t) c.streams.push_back(shared_device()->create_stream());
    slot.work = make_request_work(*shared_device(), threads);
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
  const server_thread me{shared_device().get(), work != nullptr ? ctx.streams[run.thread()] : stream_ref{},
                         run.thread()};
  const auto fail = [&run](const std::string& context, bool in_loop) { run.fail(context, in_loop); };
  served done;
  if (config.what == allocator_config::kind::none) {
    thread_ring* ring = work != nullptr ? slot.rings[static_cast<std::size_t>(run.thread())].get() : nullptr;
    done = serve_loop(state, me, ring, work, mix, fail);
  } else if (path == access_path::handle) {
    handle_access access{run.allocator()};
    done = serve_loop(state, me, work != nullptr ? &access : nullptr, work, mix, fail);
  } else {
#if CUDAPOOL_HAS_CUDA
    cudapool::tls_pool* pool = work != nullptr ? run.allocator()->concrete<cudapool::tls_pool>() : nullptr;
    if (pool == nullptr && run.ok()) run.fail("serve through cuda::mr: not a tls pool", false);
    std::optional<resource_access<cudapool::tls_pool>> access;
    if (pool != nullptr) access.emplace(*pool);
    done = serve_loop(state, me, access ? &*access : nullptr, work, mix, fail);
#endif
  }
  state.SetItemsProcessed(state.iterations());
  // Before finish(): its barrier orders these adds before thread 0 reads the sum.
  slot.requests.fetch_add(done.requests, std::memory_order_relaxed);
  run.finish(done.frees, [&](run_context& c) {
    report_failures(state, "serve/" + config.label, config, slot.work->failures(),
                    slot.requests.load(std::memory_order_relaxed));
    if (auto st = c.alloc->stats()) {
      stream_waits_counter(state, *st);
      pool_activity_counters(state, *st);
      close_reason_counters(state, *st, static_cast<double>(st->allocs), "per_1k_allocs");
      device_call_counters(state, c, static_cast<double>(st->allocs) / 1000.0, "per_1k_allocs");
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

bool serves(const allocator_config& a) {
  if (a.what == allocator_config::kind::pool) return (a.all_workloads && !a.plain && a.name == a.label) || a.serve;
  return a.name == "cudaMallocAsync" || a.name == "cub";
}

void register_serve_benchmarks(const std::vector<allocator_config>& allocators) {
  for (const allocator_config& a : allocators) {
    if (!serves(a)) continue;
    add_serve(a, access_path::handle);
#if CUDAPOOL_HAS_CUDA
    if (a.what == allocator_config::kind::pool && a.name == "tls" && a.label == "tls") {
      allocator_config through_mr = a;
      through_mr.label = "tls-mr";
      add_serve(through_mr, access_path::resource);
    }
#endif
  }
  // The ceiling, for serve only: the same requests with no allocator (thread_ring).
  add_serve({"none", allocator_config::kind::none, "none", {}}, access_path::handle);
}

}  // namespace bench
