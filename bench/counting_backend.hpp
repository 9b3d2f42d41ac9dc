// counting_backend.hpp - a backend that forwards every call to another one and counts the calls a
// pool makes to the device on its slow paths: event records, event and stream queries, host waits
// and device-side waits. bench wraps the shared device in one for replay, so that the figures say
// where the stream-ordered frees' time goes on the device (docs/results.md): the pools' own stats
// count the epochs they close, not the queries they make to find them complete.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <unordered_map>

#include <cudapool/backend.hpp>

namespace bench {

struct device_call_counts {
  std::uint64_t records = 0;        // record()
  std::uint64_t queries = 0;        // query() and query_stream()
  std::uint64_t stream_queries = 0; // query_stream() alone (the stream variant's steals)
  std::uint64_t waits = 0;          // wait(), synchronize(), synchronize_device()
  std::uint64_t stream_waits = 0;   // stream_wait()
  std::uint64_t incomplete_queries = 0;  // query() that found its event pending
  std::uint64_t busy_stream_queries = 0;  // query_stream() that found the stream busy
  // forward mode: the time spent inside the inner backend's record() and event query(), in ns
  // (steady_clock around each call): what the calls cost where the pool makes them, caches as the
  // pool leaves them, against limit/epoch_event's ring of the same calls back to back.
  std::uint64_t record_ns = 0;
  std::uint64_t query_ns = 0;
  std::uint64_t stream_query_ns = 0;  // inside query_stream()
};

// What the counted event calls do (every mode counts them):
//   forward: they go to the inner backend.
//   settle (workloads with no device work only: it waits): a query waits for its event (or stream)
//     on the inner backend and so always finds it complete, as the GPU's replay does, where nothing
//     runs on the device (0 incomplete queries on the H200, docs/results/2026-12-02-h200-s8). The
//     sim's stream workers reach their events only when the 2-core development machine schedules
//     them: without it the sim's stream-ordered replays find the epochs pending for milliseconds,
//     grow, and measure the scheduler rather than the pool (reserved/live 1.5-2.5 where the H200
//     measures 1.03-1.13).
//   elide (workloads with no device work only): event records, event and stream queries, waits
//     and device-side waits never reach the device, and every query finds its event complete, as
//     the device would with nothing running: the pool's host work alone, whose difference to the
//     same workload with the device's calls is what those calls cost in place (replay's /elided).
//   lag (workloads with no device work only, one host thread): as settle, but the device runs
//     `lag` host operations behind the host: the workload calls tick() once per operation (a
//     replay: per allocation and free), and an event recorded at tick t is complete from tick
//     t + lag on, or once the host waited for it, its stream or the device. A replay has no kernels
//     between its allocations, so its events complete at once (settle), where a PyTorch loop's
//     device runs up to a step behind: that step's frees are pending when the next allocations
//     come. lag models that deterministically, in the workload's own operations (not in events,
//     whose number is the pool's choice).
enum class event_mode { forward, settle, elide, lag };

class counting_backend final : public cudapool::backend {
 public:
  explicit counting_backend(std::shared_ptr<cudapool::backend> inner, event_mode mode = event_mode::forward,
                            std::uint64_t lag = 0)
      : inner_(std::move(inner)), mode_(mode), lag_(lag) {}

  // lag: one host operation of the workload has passed.
  void tick() noexcept { ++ticks_; }

  [[nodiscard]] device_call_counts counts() const noexcept {
    return {records_.load(std::memory_order_relaxed), queries_.load(std::memory_order_relaxed),
            stream_queries_.load(std::memory_order_relaxed), waits_.load(std::memory_order_relaxed),
            stream_waits_.load(std::memory_order_relaxed), incomplete_queries_.load(std::memory_order_relaxed),
            busy_stream_queries_.load(std::memory_order_relaxed), record_ns_.load(std::memory_order_relaxed),
            query_ns_.load(std::memory_order_relaxed), stream_query_ns_.load(std::memory_order_relaxed)};
  }

  [[nodiscard]] std::string_view name() const noexcept override { return inner_->name(); }
  [[nodiscard]] int device() const noexcept override { return inner_->device(); }
  [[nodiscard]] void* allocate_chunk(std::size_t bytes) override { return inner_->allocate_chunk(bytes); }
  void free_chunk(void* chunk, std::size_t bytes) noexcept override { inner_->free_chunk(chunk, bytes); }
  [[nodiscard]] std::size_t chunk_bytes() const noexcept override { return inner_->chunk_bytes(); }
  [[nodiscard]] std::size_t memory_bytes() const noexcept override { return inner_->memory_bytes(); }
  [[nodiscard]] std::size_t page_bytes() const noexcept override { return inner_->page_bytes(); }
  [[nodiscard]] void* reserve_address(std::size_t bytes, std::size_t alignment) override {
    return inner_->reserve_address(bytes, alignment);
  }
  void release_address(void* base, std::size_t bytes) noexcept override { inner_->release_address(base, bytes); }
  [[nodiscard]] bool map(void* p, std::size_t bytes) override { return inner_->map(p, bytes); }
  void unmap(void* p, std::size_t bytes) noexcept override { inner_->unmap(p, bytes); }
  [[nodiscard]] cudapool::stream_ref create_stream() override { return inner_->create_stream(); }
  void destroy_stream(cudapool::stream_ref s) override { inner_->destroy_stream(s); }
  [[nodiscard]] std::uint64_t stream_id(cudapool::stream_ref s) override { return inner_->stream_id(s); }
  [[nodiscard]] int stream_device(cudapool::stream_ref s) override { return inner_->stream_device(s); }
  void synchronize(cudapool::stream_ref s) override {
    count(waits_);
    if (mode_ == event_mode::elide) return;
    if (mode_ == event_mode::lag) caught_up_ = std::max(caught_up_, last_of(s));
    inner_->synchronize(s);
  }
  void synchronize_device() override {
    count(waits_);
    if (mode_ == event_mode::elide) return;
    if (mode_ == event_mode::lag) caught_up_ = ticks_ + 1;
    inner_->synchronize_device();
  }
  [[nodiscard]] bool query_stream(cudapool::stream_ref s) override {
    count(queries_);
    count(stream_queries_);
    if (mode_ == event_mode::elide) return true;
    return answer([&] { inner_->synchronize(s); }, last_of(s), [&] { return inner_->query_stream(s); }, stream_query_ns_,
                  busy_stream_queries_);
  }
  [[nodiscard]] cudapool::event_handle acquire_event() override { return inner_->acquire_event(); }
  void release_event(cudapool::event_handle e) noexcept override { inner_->release_event(e); }
  void record(cudapool::event_handle e, cudapool::stream_ref s) override {
    count(records_);
    if (mode_ == event_mode::elide) return;
    if (mode_ == event_mode::lag) {
      recorded_at_[e] = ticks_ + 1;  // 0: never recorded
      last_on_[s.native()] = ticks_ + 1;
    }
    if (mode_ != event_mode::forward) return inner_->record(e, s);
    const auto t0 = std::chrono::steady_clock::now();
    inner_->record(e, s);
    add_ns(record_ns_, t0);
  }
  [[nodiscard]] bool query(cudapool::event_handle e) override {
    count(queries_);
    if (mode_ == event_mode::elide) return true;
    return answer([&] { inner_->wait(e); }, recorded_at(e), [&] { return inner_->query(e); }, query_ns_, incomplete_queries_);
  }
  void wait(cudapool::event_handle e) override {
    count(waits_);
    if (mode_ == event_mode::elide) return;
    if (mode_ == event_mode::lag) caught_up_ = std::max(caught_up_, recorded_at(e));
    inner_->wait(e);
  }
  void stream_wait(cudapool::stream_ref waiter, cudapool::event_handle e) override {
    count(stream_waits_);
    if (mode_ == event_mode::elide) return;
    inner_->stream_wait(waiter, e);
  }
  void fill(cudapool::stream_ref s, void* p, std::size_t bytes, std::uint32_t pattern) override {
    inner_->fill(s, p, bytes, pattern);
  }
  void verify(cudapool::stream_ref s, const void* p, std::size_t bytes, std::uint32_t pattern) override {
    inner_->verify(s, p, bytes, pattern);
  }
  void spin(cudapool::stream_ref s, std::chrono::nanoseconds duration) override { inner_->spin(s, duration); }
  [[nodiscard]] cudapool::verify_report verification_report() override { return inner_->verification_report(); }
  void fill_guard(cudapool::stream_ref s, void* p, std::size_t bytes, std::uint8_t pattern) override {
    inner_->fill_guard(s, p, bytes, pattern);
  }
  void check_guard(cudapool::stream_ref s, const void* p, std::size_t bytes, std::uint8_t pattern,
                   std::uint64_t tag) override {
    inner_->check_guard(s, p, bytes, pattern, tag);
  }
  [[nodiscard]] std::vector<cudapool::guard_failure> take_guard_failures() override { return inner_->take_guard_failures(); }
  void* register_heap(void* base, std::size_t bytes) override { return inner_->register_heap(base, bytes); }
  void unregister_heap(void* heap) noexcept override { inner_->unregister_heap(heap); }
  void register_region(void* heap, const void* p, std::size_t bytes) override { inner_->register_region(heap, p, bytes); }
  void unregister_region(void* heap, const void* p) noexcept override { inner_->unregister_region(heap, p); }

 private:
  static void count(std::atomic<std::uint64_t>& c) noexcept { c.fetch_add(1, std::memory_order_relaxed); }
  static void add_ns(std::atomic<std::uint64_t>& c, std::chrono::steady_clock::time_point since) noexcept {
    const auto d = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since);
    c.fetch_add(static_cast<std::uint64_t>(d.count()), std::memory_order_relaxed);
  }

  // A query's answer (elide answered already): settle and lag wait for the work on the inner
  // backend (`wait`) and answer from the model (settle: complete; lag: whether the device has
  // reached what was recorded at tick `recorded` - 1); forward asks the inner backend, timed into
  // ns. A pending answer is counted in `pending`.
  template <class Wait, class Ask>
  bool answer(Wait wait, std::uint64_t recorded, Ask ask, std::atomic<std::uint64_t>& ns,
              std::atomic<std::uint64_t>& pending) {
    bool done = true;
    if (mode_ == event_mode::settle || mode_ == event_mode::lag) {
      wait();
      done = mode_ == event_mode::settle || complete(recorded);
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      done = ask();
      add_ns(ns, t0);
    }
    if (!done) count(pending);
    return done;
  }

  // lag: 1 + the tick at which an event, or a stream's last event, was recorded; 0 for none.
  [[nodiscard]] std::uint64_t recorded_at(cudapool::event_handle e) const {
    const auto it = recorded_at_.find(e);
    return it == recorded_at_.end() ? 0 : it->second;
  }
  [[nodiscard]] std::uint64_t last_of(cudapool::stream_ref s) const {
    const auto it = last_on_.find(s.native());
    return it == last_on_.end() ? 0 : it->second;
  }
  // Whether the device, lag_ ticks behind the host unless the host waited, has reached what was
  // recorded at tick n - 1.
  [[nodiscard]] bool complete(std::uint64_t n) const noexcept { return n <= caught_up_ || n + lag_ <= ticks_ + 1; }

  std::shared_ptr<cudapool::backend> inner_;
  event_mode mode_;
  std::uint64_t lag_ = 0;
  // lag's state (one host thread: not synchronised).
  std::unordered_map<cudapool::event_handle, std::uint64_t> recorded_at_;
  std::unordered_map<void*, std::uint64_t> last_on_;  // by stream_ref::native()
  std::uint64_t caught_up_ = 0;  // the host waited for everything recorded up to this (1 + tick)
  std::uint64_t ticks_ = 0;
  std::atomic<std::uint64_t> incomplete_queries_{0};
  std::atomic<std::uint64_t> busy_stream_queries_{0};
  std::atomic<std::uint64_t> records_{0};
  std::atomic<std::uint64_t> queries_{0};
  std::atomic<std::uint64_t> stream_queries_{0};
  std::atomic<std::uint64_t> waits_{0};
  std::atomic<std::uint64_t> stream_waits_{0};
  std::atomic<std::uint64_t> record_ns_{0};
  std::atomic<std::uint64_t> query_ns_{0};
  std::atomic<std::uint64_t> stream_query_ns_{0};
};

}  // namespace bench
