// sim_backend.cpp - the simulated device: host memory, one worker thread per stream.
//
// Glossary
//   sim_stream    a worker thread and the FIFO queue (a list of op_nodes) of operations it runs.
//   event_state   the completion state of an event's records: `recorded` counts record() calls,
//                 `completed` is the last record whose operation has run.
//   sim_event     what an event_handle points to: a host-side mutex, one event_state per stream it
//                 was recorded on, and its latest record.
//
// Why it is built this way: ThreadSanitizer is the stream-safety checker. A pool that lets two
// streams touch one block without an event between them must show up as a data race between the
// two stream workers, so the happens-before edges that involve a worker are the ones CUDA gives:
//   - host -> worker: enqueueing an operation (its node's publication), like a launch;
//   - worker -> host: synchronize() (a signal operation), an event observed complete, and
//     destroy_stream (the join);
//   - worker -> worker: an event observed complete by a stream_wait operation.
// Workers share no lock or atomic on the operation path; the verify-mismatch and guard-failure
// mutexes are taken only when a mismatch or a damaged guard is found. Waiting uses a futex on a word only the awaited side writes, rather
// than std::atomic::wait, whose libstdc++ implementation bumps shared waiter-table counters with
// seq_cst read-modify-writes and so would order unrelated waiters. Linux only, therefore.
//
// Edges beyond CUDA's: host threads enqueueing on one stream are ordered with each other (like
// the driver's stream lock), and an observer of an event may synchronize with a later record of
// the same event on the same stream when that one has completed too.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#if !defined(__linux__)
#error "the sim backend waits with Linux futexes"
#endif
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cudapool/backend.hpp>
#include <cudapool/errors.hpp>

namespace cudapool {
namespace {

// Chunks are aligned like the large pages a cudaMalloc of a few MiB gets, so pools that rely on
// chunk alignment behave as they would on a GPU.
constexpr std::size_t chunk_alignment = std::size_t{64} << 10;
constexpr std::size_t max_recorded_mismatches = 16;

// ---- futex: wait for a 32-bit word without the waiter writing anything --------------------------

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
              std::atomic<std::uint32_t>::is_always_lock_free);

// Blocks while `word` holds `value` (may return spuriously). The kernel reads the word; the
// caller's own loads decide the memory order.
void futex_wait(const std::atomic<std::uint32_t>& word, std::uint32_t value) noexcept {
  ::syscall(SYS_futex, reinterpret_cast<const std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, value,
            nullptr, nullptr, 0);
}

// Only hashes the address: safe to call after the word's owner may have freed it, which
// signal_op and enqueue rely on. Every waiter here loops, so a stray wake is harmless.
void futex_wake_all(const std::atomic<std::uint32_t>& word) noexcept {
  ::syscall(SYS_futex, reinterpret_cast<const std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE,
            std::numeric_limits<int>::max(), nullptr, nullptr, 0);
}

// ---- events --------------------------------------------------------------------------------------

// Record numbers are 32-bit so that the futex can wait on them; they are compared as serial
// numbers, which is exact while fewer than 2^31 records of one state are in flight.
bool reached(std::uint32_t completed, std::uint32_t record) noexcept {
  return static_cast<std::int32_t>(completed - record) >= 0;
}

// INVARIANT: every record of one event_state is enqueued on the same stream (sim_event keeps one
// state per stream), so they complete in record order and `completed` only moves forward.
struct event_state {
  // Written by the host in record(), under the owning sim_event's mutex.
  std::uint32_t recorded = 0;
  // Written only by the worker running this state's record operations, a release store of the
  // record number once the work enqueued before it has run. Read by query()/wait() on the host and
  // by stream_wait operations on other workers: a relaxed check, then an acquire load that pairs
  // with that store, so an observer that sees the record incomplete synchronizes with nothing.
  // A plain store rather than a read-modify-write: the release sequence would otherwise carry the
  // clocks of every earlier record of this pooled event to each new observer.
  std::atomic<std::uint32_t> completed{0};

  bool is_complete(std::uint32_t record) const noexcept {
    if (!reached(completed.load(std::memory_order_relaxed), record)) return false;
    (void)completed.load(std::memory_order_acquire);
    return true;
  }

  void wait_for(std::uint32_t record) const noexcept {
    for (;;) {
      const std::uint32_t seen = completed.load(std::memory_order_relaxed);
      if (reached(seen, record)) break;
      futex_wait(completed, seen);
    }
    (void)completed.load(std::memory_order_acquire);
  }

  void complete(std::uint32_t record) noexcept {
    completed.store(record, std::memory_order_release);
    futex_wake_all(completed);
  }
};

// One record of one event, as captured by record() or stream_wait() at call time.
struct event_record {
  event_state* state = nullptr;
  std::uint32_t record = 0;
};

struct sim_event {
  // Taken by host threads calling record/query/wait/stream_wait on this event; never by workers.
  std::mutex mutex;
  // One state per stream the event was recorded on: the records of a state all run on that one
  // stream, in order, and its worker is the only writer of `completed`. So a waiter synchronizes
  // exactly with the worker that ran the record it captured, as with CUDA, and never with another
  // stream that recorded the same pooled event later. Keyed by the stream object (compared only).
  std::unordered_map<const void*, std::unique_ptr<event_state>> by_stream;
  // States replaced before their record number wraps. Operations already enqueued point into
  // them, so they live as long as the event.
  std::vector<std::unique_ptr<event_state>> retired;
  // The latest record; {nullptr, 0}: never recorded (complete, as CUDA treats it).
  event_record current;

  event_record latest() {
    std::lock_guard lock(mutex);
    return current;
  }
};

// ---- stream operations ---------------------------------------------------------------------------

struct fill_op {
  std::uint32_t* words;
  std::size_t count;
  std::uint32_t pattern;
};
struct verify_op {
  const std::uint32_t* words;
  std::size_t count;
  std::uint32_t pattern;
};
struct fill_guard_op {
  std::uint8_t* bytes;
  std::size_t count;
  std::uint8_t pattern;
};
struct check_guard_op {
  const std::uint8_t* bytes;
  std::size_t count;
  std::uint8_t pattern;
  std::uint64_t tag;
};
struct spin_op {
  std::chrono::nanoseconds duration;
};
struct record_op {
  event_record target;
};
struct wait_op {
  event_record target;
};
// synchronize(): tells the waiting host thread that everything before it has run.
struct signal_op {
  std::atomic<std::uint32_t>* done;
};
// The destructor's last operation: the worker returns.
struct stop_op {};
using stream_op = std::variant<fill_op, verify_op, fill_guard_op, check_guard_op, spin_op, record_op, wait_op,
                               signal_op, stop_op>;

template <class... F>
struct overloaded : F... {
  using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;  // clang 14 has no aggregate deduction

// Where verify operations report. The mutex is taken only after a mismatch was found, so a run
// without mismatches creates no edge between the workers through it.
class mismatch_log {
 public:
  void add(const verify_mismatch& m) {
    std::lock_guard lock(mutex_);
    ++mismatched_ranges_;
    if (first_.size() < max_recorded_mismatches) first_.push_back(m);
  }

  verify_report snapshot() const {
    std::lock_guard lock(mutex_);
    return {mismatched_ranges_, first_};
  }

 private:
  mutable std::mutex mutex_;
  std::uint64_t mismatched_ranges_ = 0;   // GUARDED_BY(mutex_)
  std::vector<verify_mismatch> first_;    // GUARDED_BY(mutex_)
};

// Where check_guard operations report; like mismatch_log, locked only when a guard is damaged
// (and by take(), on the host). Unbounded: the sim has no device memory budget to respect.
class guard_log {
 public:
  void add(const guard_failure& f) {
    std::lock_guard lock(mutex_);
    failures_.push_back(f);
  }

  std::vector<guard_failure> take() {
    std::lock_guard lock(mutex_);
    return std::exchange(failures_, {});
  }

 private:
  std::mutex mutex_;
  std::vector<guard_failure> failures_;  // GUARDED_BY(mutex_)
};

// Device logs the stream workers write into; they outlive the streams.
struct device_logs {
  mismatch_log mismatches;
  guard_log guards;
};

// ---- streams -------------------------------------------------------------------------------------

// Stream ids are unique for the life of the process, across backends, like cudaStreamGetId.
// Relaxed: the counter orders nothing.
std::atomic<std::uint64_t> next_stream_id{1};

// A stream's queue is a linked list of op_nodes (Vyukov's intrusive MPSC queue): host threads
// append at head_, the worker consumes from tail_. It is lock-free rather than a mutex and a
// condition variable because a mutex orders both ways: the worker, re-locking after each
// operation, would acquire whatever a host thread had released into it since (say, after
// synchronizing another stream) and so be ordered after work that CUDA leaves unordered.
struct op_node {
  stream_op op;
  // Written once, by the producer of the following node, before its release store of `linked`.
  op_node* next = nullptr;
  // 0 until the following node is linked. Written once, by that node's producer (release); read
  // by the worker (acquire), which futex-waits on it while the queue is empty. The pair is the
  // enqueue ("launch") edge of the following operation, and a stream's only host -> worker edge.
  std::atomic<std::uint32_t> linked{0};
};

class sim_stream {
 public:
  sim_stream(int device, std::uint64_t seed, std::chrono::nanoseconds max_latency, device_logs& logs)
      : id_(next_stream_id.fetch_add(1, std::memory_order_relaxed)),
        device_(device),
        max_latency_(max_latency),
        random_(seed + id_),
        logs_(logs),
        worker_([this] { run(); }) {}

  sim_stream(const sim_stream&) = delete;
  sim_stream& operator=(const sim_stream&) = delete;

  // Runs what is queued (a paused stream is resumed first), then joins the worker.
  ~sim_stream() {
    resume();
    enqueue(stop_op{});
    worker_.join();
    delete tail_;
  }

  [[nodiscard]] std::uint64_t id() const noexcept { return id_; }
  [[nodiscard]] int device() const noexcept { return device_; }

  // Thread-safe.
  void enqueue(stream_op op) {
    enqueued_.fetch_add(1, std::memory_order_relaxed);
    auto* node = new op_node{std::move(op)};
    // acq_rel: the producer of `prev` initialized it, and the next producer writes into `node`.
    op_node* prev = head_.exchange(node, std::memory_order_acq_rel);
    prev->next = node;
    prev->linked.store(1, std::memory_order_release);
    // From here the worker may free `prev`; FUTEX_WAKE only hashes the address, never reads it.
    futex_wake_all(prev->linked);
  }

  // Thread-safe. True once everything enqueued before the call has run. The acquire pairs with
  // the worker's release after each operation: the host is ordered after the work, as by
  // synchronize(). (An operation enqueued concurrently may or may not be counted: it is not
  // "before the call".)
  [[nodiscard]] bool idle() const noexcept {
    const std::uint64_t enqueued = enqueued_.load(std::memory_order_relaxed);
    return completed_.load(std::memory_order_acquire) >= enqueued;
  }

  // Thread-safe. Returns once everything enqueued before the call has run.
  void synchronize() {
    std::atomic<std::uint32_t> done{0};
    enqueue(signal_op{&done});
    wait_for_signal(done);
  }

  // For synchronize_device: signal every stream first, then wait for each.
  static void wait_for_signal(const std::atomic<std::uint32_t>& done) noexcept {
    // The acquire pairs with the worker's release store in signal_op: the host synchronizes with
    // the stream as of that point, and with nothing it ran later.
    for (std::uint32_t seen; (seen = done.load(std::memory_order_acquire)) == 0;) futex_wait(done, seen);
  }

  // Relaxed: a pause only has to be seen by operations enqueued after it, and their enqueue edge
  // orders it; a resume is seen through the futex.
  void pause() noexcept { paused_.store(1, std::memory_order_relaxed); }
  void resume() noexcept {
    paused_.store(0, std::memory_order_relaxed);
    futex_wake_all(paused_);
  }

 private:
  void run() {
    for (;;) {
      op_node* const done = tail_;
      for (std::uint32_t seen; (seen = done->linked.load(std::memory_order_acquire)) == 0;) {
        futex_wait(done->linked, seen);
      }
      tail_ = done->next;
      delete done;
      if (std::holds_alternative<stop_op>(tail_->op)) return;
      // The node stays as the queue's stub until the next one is linked.
      for (std::uint32_t seen; (seen = paused_.load(std::memory_order_relaxed)) != 0;) futex_wait(paused_, seen);
      inject_latency();
      // A signal counts as completed before it wakes its waiter: idle() right after a
      // synchronize() is true.
      const bool signal = std::holds_alternative<signal_op>(tail_->op);
      if (signal) completed_.fetch_add(1, std::memory_order_release);
      execute(tail_->op);
      if (!signal) completed_.fetch_add(1, std::memory_order_release);
    }
  }

  void inject_latency() {
    if (max_latency_.count() <= 0) return;
    std::uniform_int_distribution<std::int64_t> delay(0, max_latency_.count());
    std::this_thread::sleep_for(std::chrono::nanoseconds(delay(random_)));
  }

  void execute(const stream_op& op) {
    std::visit(overloaded{
                   [](const fill_op& f) { run_fill(f); },
                   [this](const verify_op& v) { run_verify(v); },
                   [](const fill_guard_op& f) { run_fill_guard(f); },
                   [this](const check_guard_op& c) { run_check_guard(c); },
                   [](const spin_op& s) { std::this_thread::sleep_for(s.duration); },
                   [](const record_op& r) { r.target.state->complete(r.target.record); },
                   [](const wait_op& w) { w.target.state->wait_for(w.target.record); },
                   [](const signal_op& s) {
                     s.done->store(1, std::memory_order_release);
                     futex_wake_all(*s.done);  // the waiter may have returned: the address only
                   },
                   [](const stop_op&) {},
               },
               op);
  }

  // Device memory is read and written with plain accesses so that ThreadSanitizer checks them.
  // Not inlined, so that a race report names the operation.
  [[gnu::noinline]] static void run_fill(const fill_op& f) { std::fill_n(f.words, f.count, f.pattern); }

  [[gnu::noinline]] void run_verify(const verify_op& v) {
    const std::uint32_t* end = v.words + v.count;
    const std::uint32_t* wrong = std::find_if(v.words, end, [&](std::uint32_t w) { return w != v.pattern; });
    if (wrong == end) return;
    logs_.mismatches.add({.block = reinterpret_cast<std::uintptr_t>(v.words),
                     .bytes = v.count * sizeof(std::uint32_t),
                     .word_offset = static_cast<std::size_t>(wrong - v.words),
                     .expected = v.pattern,
                     .found = *wrong});
  }

  [[gnu::noinline]] static void run_fill_guard(const fill_guard_op& f) { std::fill_n(f.bytes, f.count, f.pattern); }

  [[gnu::noinline]] void run_check_guard(const check_guard_op& c) {
    const std::uint8_t* end = c.bytes + c.count;
    const std::uint8_t* wrong = std::find_if(c.bytes, end, [&](std::uint8_t b) { return b != c.pattern; });
    if (wrong == end) return;
    logs_.guards.add({.tag = c.tag, .byte_offset = static_cast<std::size_t>(wrong - c.bytes), .found = *wrong});
  }

  const std::uint64_t id_;
  const int device_;  // the simulated device of the backend that made the stream
  const std::chrono::nanoseconds max_latency_;
  std::mt19937_64 random_;  // only the worker uses it
  device_logs& logs_;

  // INVARIANT: following `next` from tail_ reaches head_; tail_'s operation has run (or is the
  // initial stub's), every later node's has not.
  op_node* tail_ = new op_node{stop_op{}};     // only the worker (and the destructor, after join)
  std::atomic<op_node*> head_{tail_};          // host threads in enqueue()
  std::atomic<std::uint32_t> paused_{0};       // written by pause/resume, read by the worker
  std::atomic<std::uint64_t> enqueued_{0};     // operations enqueued (host threads)
  std::atomic<std::uint64_t> completed_{0};    // operations run (the worker; release)

  std::thread worker_;  // last: starts after every field above is initialized
};

// ---- the backend ---------------------------------------------------------------------------------

std::size_t checked_page_bytes(std::size_t page) {
  if (page % chunk_alignment != 0) {
    throw std::invalid_argument("sim backend: page_bytes must be 0 or a multiple of 64 KiB, got " + std::to_string(page));
  }
  return page;
}

double checked_probability(double p) {
  if (!(p >= 0.0 && p <= 1.0)) {
    throw std::invalid_argument("sim backend: chunk_failure_probability must be in [0, 1], got " +
                                std::to_string(p));
  }
  return p;
}

class sim_backend_impl final : public sim_backend {
 public:
  explicit sim_backend_impl(const sim_options& options)
      : options_(options),
        chunk_random_(options.seed),
        failure_probability_(checked_probability(options.chunk_failure_probability)),
        byte_limit_(options.chunk_byte_limit),
        page_bytes_(checked_page_bytes(options.page_bytes)),
        default_stream_(new_stream()) {}

  ~sim_backend_impl() override {
    // Workers first: their queued operations may still point at events and chunks. Resume them all
    // before draining any, since a stream_wait may be queued behind a record on a paused stream.
    default_stream_->resume();
    for (const auto& [native, stream] : streams_) stream->resume();
    default_stream_.reset();
    streams_.clear();
    for (const auto& [chunk, bytes] : live_chunks_) ::operator delete(chunk, std::align_val_t{chunk_alignment});
    for (const auto& [base, r] : reservations_) ::munmap(reinterpret_cast<void*>(base), r.bytes);
  }

  [[nodiscard]] std::string_view name() const noexcept override { return "sim"; }
  [[nodiscard]] int device() const noexcept override { return options_.device; }

  // ---- chunks ----

  [[nodiscard]] void* allocate_chunk(std::size_t bytes) override {
    if (bytes == 0) throw std::invalid_argument("sim backend: allocate_chunk(0)");
    std::lock_guard lock(chunk_mutex_);
    if (injected_failure_locked(bytes)) return nullptr;
    const std::size_t held = chunk_bytes_.load(std::memory_order_relaxed);
    void* chunk = ::operator new(bytes, std::align_val_t{chunk_alignment}, std::nothrow);
    if (chunk == nullptr) return nullptr;
    live_chunks_.emplace(chunk, bytes);
    chunk_bytes_.store(held + bytes, std::memory_order_relaxed);
    return chunk;
  }

  void free_chunk(void* chunk, std::size_t bytes) noexcept override {
    if (chunk == nullptr) return;
    std::lock_guard lock(chunk_mutex_);
    const auto it = live_chunks_.find(chunk);
    if (it == live_chunks_.end()) {
      std::fprintf(stderr, "cudapool: sim backend: free_chunk(%p): not a live chunk, ignored\n", chunk);
      return;
    }
    if (it->second != bytes) {
      std::fprintf(stderr, "cudapool: sim backend: free_chunk(%p, %zu): the chunk has %zu bytes\n", chunk,
                   bytes, it->second);
    }
    chunk_bytes_.store(chunk_bytes_.load(std::memory_order_relaxed) - it->second, std::memory_order_relaxed);
    live_chunks_.erase(it);
    ::operator delete(chunk, std::align_val_t{chunk_alignment});
  }

  [[nodiscard]] std::size_t chunk_bytes() const noexcept override {
    return chunk_bytes_.load(std::memory_order_relaxed);
  }

  [[nodiscard]] std::size_t memory_bytes() const noexcept override { return options_.memory_bytes; }

  // ---- virtual memory: PROT_NONE host address space, made readable and writable page by page ----

  [[nodiscard]] std::size_t page_bytes() const noexcept override { return page_bytes_; }

  [[nodiscard]] void* reserve_address(std::size_t bytes, std::size_t alignment) override {
    if (page_bytes_ == 0) throw std::logic_error("sim backend: reserve_address without virtual memory support");
    if (bytes == 0 || bytes % page_bytes_ != 0 || alignment < page_bytes_ || (alignment & (alignment - 1)) != 0) {
      throw std::invalid_argument("sim backend: reserve_address(" + std::to_string(bytes) + ", " +
                                  std::to_string(alignment) + "): not whole pages, or a bad alignment");
    }
    // Over-reserve by the alignment and give the slack back, so the range is aligned.
    const std::size_t span = bytes + alignment;
    void* raw = ::mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) throw backend_error("sim backend: reserving " + std::to_string(bytes) + " bytes of address space failed");
    const auto start = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t base = (start + alignment - 1) & ~(std::uintptr_t{alignment} - 1);
    if (base > start) ::munmap(raw, base - start);
    if (start + span > base + bytes) ::munmap(reinterpret_cast<void*>(base + bytes), start + span - base - bytes);
    std::lock_guard lock(chunk_mutex_);
    reservations_[base] = reservation{bytes, {}};
    reserved_address_bytes_ += bytes;
    return reinterpret_cast<void*>(base);
  }

  void release_address(void* base, std::size_t bytes) noexcept override {
    std::lock_guard lock(chunk_mutex_);
    const auto it = reservations_.find(reinterpret_cast<std::uintptr_t>(base));
    if (it == reservations_.end() || it->second.bytes != bytes) {
      std::fprintf(stderr, "cudapool: sim backend: release_address(%p, %zu): not a reservation, ignored\n", base, bytes);
      return;
    }
    if (!it->second.mapped.empty()) {
      std::fprintf(stderr, "cudapool: sim backend: release_address(%p): %zu pages still mapped (unmapped now)\n", base,
                   it->second.mapped.size());
      unmap_locked(it->second, it->second.mapped);
    }
    ::munmap(base, bytes);
    reserved_address_bytes_ -= bytes;
    reservations_.erase(it);
  }

  [[nodiscard]] bool map(void* p, std::size_t bytes) override {
    std::lock_guard lock(chunk_mutex_);
    auto [r, first] = pages_of_locked("map", p, bytes);
    for (std::uintptr_t page = first; page < first + bytes; page += page_bytes_) {
      if (r.mapped.count(page) != 0) throw std::logic_error("sim backend: map: a page of the range is mapped already");
    }
    if (injected_failure_locked(bytes)) return false;
    if (::mprotect(p, bytes, PROT_READ | PROT_WRITE) != 0) return false;  // the host is out of memory
    for (std::uintptr_t page = first; page < first + bytes; page += page_bytes_) r.mapped.insert(page);
    chunk_bytes_.store(chunk_bytes_.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
    mapped_bytes_ += bytes;
    return true;
  }

  void unmap(void* p, std::size_t bytes) noexcept override {
    std::lock_guard lock(chunk_mutex_);
    try {
      auto [r, first] = pages_of_locked("unmap", p, bytes);
      std::set<std::uintptr_t> pages;
      for (std::uintptr_t page = first; page < first + bytes; page += page_bytes_) {
        if (r.mapped.count(page) == 0) throw std::logic_error("sim backend: unmap: a page of the range is not mapped");
        pages.insert(page);
      }
      unmap_locked(r, pages);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cudapool: %s (unmap(%p, %zu) ignored)\n", e.what(), p, bytes);
    }
  }

  [[nodiscard]] std::size_t mapped_bytes() const override {
    std::lock_guard lock(chunk_mutex_);
    return mapped_bytes_;
  }
  [[nodiscard]] std::size_t reserved_address_bytes() const override {
    std::lock_guard lock(chunk_mutex_);
    return reserved_address_bytes_;
  }

  void set_chunk_failure_probability(double p) override {
    const double checked = checked_probability(p);
    std::lock_guard lock(chunk_mutex_);
    failure_probability_ = checked;
  }

  void set_chunk_byte_limit(std::size_t bytes) override {
    std::lock_guard lock(chunk_mutex_);
    byte_limit_ = bytes;
  }

  // ---- streams ----

  [[nodiscard]] stream_ref create_stream() override {
    std::shared_ptr<sim_stream> stream = new_stream();
    stream_ref ref(stream.get());
    std::lock_guard lock(streams_mutex_);
    streams_.emplace(stream.get(), std::move(stream));
    return ref;
  }

  void destroy_stream(stream_ref s) override {
    if (s == stream_ref{}) throw std::invalid_argument("sim backend: the default stream cannot be destroyed");
    std::shared_ptr<sim_stream> stream;
    {
      std::lock_guard lock(streams_mutex_);
      const auto it = streams_.find(s.native());
      if (it == streams_.end()) throw std::invalid_argument("sim backend: destroy_stream of an unknown stream");
      stream = std::move(it->second);
      streams_.erase(it);
    }
    // The last reference (ours, unless synchronize_device holds one) drains and joins the worker.
  }

  [[nodiscard]] std::uint64_t stream_id(stream_ref s) override { return resolve_any(s).id(); }
  [[nodiscard]] int stream_device(stream_ref s) override { return resolve_any(s).device(); }

  // Any device's stream, as cudaStreamSynchronize and cudaStreamQuery take.
  void synchronize(stream_ref s) override { resolve_any(s).synchronize(); }
  [[nodiscard]] bool query_stream(stream_ref s) override { return resolve_any(s).idle(); }

  void synchronize_device() override {
    std::vector<std::shared_ptr<sim_stream>> all{default_stream_};
    {
      std::lock_guard lock(streams_mutex_);
      for (const auto& [native, stream] : streams_) all.push_back(stream);
    }
    // Signal every stream before waiting for any, so that they drain in parallel.
    std::vector<std::atomic<std::uint32_t>> done(all.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i]->enqueue(signal_op{&done[i]});
    for (const auto& d : done) sim_stream::wait_for_signal(d);
  }

  void pause(stream_ref s) override { resolve_any(s).pause(); }
  void resume(stream_ref s) override { resolve_any(s).resume(); }

  // ---- events ----

  [[nodiscard]] event_handle acquire_event() override {
    std::lock_guard lock(events_mutex_);
    if (free_events_.empty()) {
      events_.push_back(std::make_unique<sim_event>());
      // release_event is noexcept: keep room for every event on the free list.
      free_events_.reserve(events_.size());
      return events_.back().get();
    }
    sim_event* e = free_events_.back();
    free_events_.pop_back();
    return e;
  }

  void release_event(event_handle e) noexcept override {
    std::lock_guard lock(events_mutex_);
    free_events_.push_back(static_cast<sim_event*>(e));
  }

  void record(event_handle e, stream_ref s) override {
    sim_stream& stream = resolve(s, "record");
    sim_event& event = *static_cast<sim_event*>(e);
    std::lock_guard lock(event.mutex);
    std::unique_ptr<event_state>& slot = event.by_stream[&stream];
    if (!slot || slot->recorded == std::numeric_limits<std::uint32_t>::max()) {
      // New stream, or the record number would wrap to 0 ("never recorded"): a fresh state.
      if (slot) event.retired.push_back(std::move(slot));
      slot = std::make_unique<event_state>();
    }
    event_state* state = slot.get();
    // Enqueue under the event mutex so that records of this state reach the stream in order.
    stream.enqueue(record_op{{state, state->recorded + 1}});
    ++state->recorded;
    event.current = {state, state->recorded};
  }

  [[nodiscard]] bool query(event_handle e) override {
    const event_record latest = static_cast<sim_event*>(e)->latest();
    return latest.state == nullptr || latest.state->is_complete(latest.record);
  }

  void wait(event_handle e) override {
    const event_record latest = static_cast<sim_event*>(e)->latest();
    if (latest.state != nullptr) latest.state->wait_for(latest.record);
  }

  // The waiter may be a stream of any device, as with cudaStreamWaitEvent.
  void stream_wait(stream_ref waiter, event_handle e) override {
    sim_stream& stream = resolve_any(waiter);
    const event_record latest = static_cast<sim_event*>(e)->latest();
    // Record 0 is "never recorded", which CUDA treats as complete. The operation is enqueued even
    // for a completed record: its acquire load is the edge from the recorded work to the waiter.
    if (latest.record != 0) stream.enqueue(wait_op{latest});
  }

  // ---- device operations ----

  void fill(stream_ref s, void* p, std::size_t bytes, std::uint32_t pattern) override {
    check_range("fill", p, bytes);
    resolve(s, "fill").enqueue(fill_op{static_cast<std::uint32_t*>(p), bytes / sizeof(std::uint32_t), pattern});
  }

  void verify(stream_ref s, const void* p, std::size_t bytes, std::uint32_t pattern) override {
    check_range("verify", p, bytes);
    resolve(s, "verify").enqueue(verify_op{static_cast<const std::uint32_t*>(p), bytes / sizeof(std::uint32_t), pattern});
  }

  void spin(stream_ref s, std::chrono::nanoseconds duration) override {
    resolve(s, "spin").enqueue(spin_op{duration});
  }

  [[nodiscard]] verify_report verification_report() override {
    synchronize_device();
    return logs_.mismatches.snapshot();
  }

  // ---- debug: guard bytes ----

  void fill_guard(stream_ref s, void* p, std::size_t bytes, std::uint8_t pattern) override {
    check_guard_range("fill_guard", p, bytes);
    resolve(s, "fill_guard").enqueue(fill_guard_op{static_cast<std::uint8_t*>(p), bytes, pattern});
  }

  void check_guard(stream_ref s, const void* p, std::size_t bytes, std::uint8_t pattern, std::uint64_t tag) override {
    check_guard_range("check_guard", p, bytes);
    resolve(s, "check_guard").enqueue(check_guard_op{static_cast<const std::uint8_t*>(p), bytes, pattern, tag});
  }

  [[nodiscard]] std::vector<guard_failure> take_guard_failures() override { return logs_.guards.take(); }

  // ---- debug: NVTX-style heaps, checked ----

  void* register_heap(void* base, std::size_t bytes) override {
    if (base == nullptr || bytes == 0) {
      throw std::invalid_argument("sim backend: register_heap needs a non-null base and a non-zero size");
    }
    const auto begin = reinterpret_cast<std::uintptr_t>(base);
    std::lock_guard lock(heaps_mutex_);
    // Heaps may not overlap: the one starting at or after begin, and the one before it.
    const auto next = heaps_.lower_bound(begin);
    if ((next != heaps_.end() && next->first - begin < bytes) ||
        (next != heaps_.begin() && begin - std::prev(next)->first < std::prev(next)->second.bytes)) {
      throw std::logic_error("sim backend: register_heap(" + pointer_text(base) + ", " + std::to_string(bytes) +
                             "): overlaps a registered heap");
    }
    heaps_.emplace(begin, heap_record{bytes, {}});
    return base;
  }

  void unregister_heap(void* heap) noexcept override {
    std::lock_guard lock(heaps_mutex_);
    const auto it = heaps_.find(reinterpret_cast<std::uintptr_t>(heap));
    if (it == heaps_.end()) {
      registration_error("unregister_heap: not a registered heap", heap);
      return;
    }
    region_count_ -= it->second.regions.size();
    heaps_.erase(it);
  }

  void register_region(void* heap, const void* p, std::size_t bytes) override {
    std::lock_guard lock(heaps_mutex_);
    const auto it = heaps_.find(reinterpret_cast<std::uintptr_t>(heap));
    if (it == heaps_.end()) {
      throw std::logic_error("sim backend: register_region(" + pointer_text(p) + "): " + pointer_text(heap) +
                             " is not a registered heap");
    }
    const std::uintptr_t heap_begin = it->first;
    const auto begin = reinterpret_cast<std::uintptr_t>(p);
    auto& regions = it->second.regions;
    const auto fail = [&](const char* why) {
      throw std::logic_error("sim backend: register_region(" + pointer_text(p) + ", " + std::to_string(bytes) +
                             ") in heap " + pointer_text(heap) + ": " + why);
    };
    if (begin < heap_begin || begin - heap_begin > it->second.bytes || bytes > it->second.bytes - (begin - heap_begin)) {
      fail("outside the heap");
    }
    // Live blocks never overlap: check the region starting at or after p, and the one before it.
    const auto next = regions.lower_bound(begin);
    if (next != regions.end() && (next->first == begin || next->first - begin < bytes)) fail("overlaps a live region");
    if (next != regions.begin() && begin - std::prev(next)->first < std::prev(next)->second) {
      fail("overlaps a live region");
    }
    regions.emplace(begin, bytes);
    ++region_count_;
  }

  void unregister_region(void* heap, const void* p) noexcept override {
    std::lock_guard lock(heaps_mutex_);
    const auto it = heaps_.find(reinterpret_cast<std::uintptr_t>(heap));
    if (it == heaps_.end()) {
      registration_error("unregister_region: the heap is not registered", heap);
      return;
    }
    if (it->second.regions.erase(reinterpret_cast<std::uintptr_t>(p)) == 0) {
      registration_error("unregister_region: not a registered region", p);
      return;
    }
    --region_count_;
  }

  [[nodiscard]] std::size_t registered_heaps() const override {
    std::lock_guard lock(heaps_mutex_);
    return heaps_.size();
  }

  [[nodiscard]] std::size_t registered_regions() const override {
    std::lock_guard lock(heaps_mutex_);
    return region_count_;
  }

  [[nodiscard]] std::size_t registration_errors() const override {
    std::lock_guard lock(heaps_mutex_);
    return registration_errors_;
  }

 private:
  std::shared_ptr<sim_stream> new_stream() {
    return std::make_shared<sim_stream>(options_.device, options_.seed, options_.max_latency, logs_);
  }

  static void check_guard_range(const char* what, const void* p, std::size_t bytes) {
    if (p == nullptr && bytes != 0) {
      throw std::invalid_argument(std::string("sim backend: ") + what + ": null pointer with " +
                                  std::to_string(bytes) + " bytes");
    }
  }

  static std::string pointer_text(const void* p) {
    char text[2 + 2 * sizeof(void*) + 1];
    std::snprintf(text, sizeof text, "%p", p);
    return text;
  }

  // Called with heaps_mutex_ held, from noexcept functions.
  void registration_error(const char* what, const void* p) noexcept {
    ++registration_errors_;
    std::fprintf(stderr, "cudapool: sim backend: %s (%p)\n", what, p);
  }

  struct heap_record {
    std::size_t bytes;
    std::map<std::uintptr_t, std::size_t> regions;  // begin -> bytes; INVARIANT: disjoint, inside the heap
  };

  // A stream_ref given to the backend names a live stream of this or another sim backend: the
  // lookup takes no lock, so host threads using different streams share nothing here.
  sim_stream& resolve_any(stream_ref s) noexcept {
    return s.native() != nullptr ? *static_cast<sim_stream*>(s.native()) : *default_stream_;
  }
  // For work launched or recorded on s, which CUDA takes only on the stream's own device.
  sim_stream& resolve(stream_ref s, const char* what) {
    sim_stream& stream = resolve_any(s);
    if (stream.device() != options_.device) [[unlikely]] {
      throw std::invalid_argument(std::string("sim backend of device ") + std::to_string(options_.device) + ": " +
                                  what + " on a stream of device " + std::to_string(stream.device()));
    }
    return stream;
  }

  static void check_range(const char* what, const void* p, std::size_t bytes) {
    if (bytes % sizeof(std::uint32_t) != 0 || reinterpret_cast<std::uintptr_t>(p) % alignof(std::uint32_t) != 0) {
      throw std::invalid_argument(std::string("sim backend: ") + what +
                                  ": the range must be 4-byte aligned and a multiple of 4 bytes, got " +
                                  std::to_string(bytes) + " bytes");
    }
  }

  struct reservation {
    std::size_t bytes = 0;
    std::set<std::uintptr_t> mapped;  // page addresses
  };

  // Injected chunk and map failures: the failure probability, then the byte limit. Under chunk_mutex_.
  bool injected_failure_locked(std::size_t bytes) {
    if (failure_probability_ > 0.0 && std::bernoulli_distribution(failure_probability_)(chunk_random_)) return true;
    const std::size_t held = chunk_bytes_.load(std::memory_order_relaxed);
    return byte_limit_ != 0 && (bytes > byte_limit_ || held > byte_limit_ - bytes);
  }

  // The reservation holding [p, p + bytes), which must be whole pages. Under chunk_mutex_.
  std::pair<reservation&, std::uintptr_t> pages_of_locked(const char* what, const void* p, std::size_t bytes) {
    const auto first = reinterpret_cast<std::uintptr_t>(p);
    if (page_bytes_ == 0 || bytes == 0 || first % page_bytes_ != 0 || bytes % page_bytes_ != 0) {
      throw std::logic_error(std::string("sim backend: ") + what + ": not whole pages");
    }
    auto it = reservations_.upper_bound(first);
    if (it == reservations_.begin()) throw std::logic_error(std::string("sim backend: ") + what + ": outside every reservation");
    --it;
    if (first + bytes > it->first + it->second.bytes) {
      throw std::logic_error(std::string("sim backend: ") + what + ": outside every reservation");
    }
    return {it->second, first};
  }

  // Gives the pages' memory back to the host and makes them fault again. Under chunk_mutex_.
  void unmap_locked(reservation& r, const std::set<std::uintptr_t>& pages) noexcept {
    for (const std::uintptr_t page : pages) {
      ::madvise(reinterpret_cast<void*>(page), page_bytes_, MADV_DONTNEED);
      ::mprotect(reinterpret_cast<void*>(page), page_bytes_, PROT_NONE);
      r.mapped.erase(page);
    }
    const std::size_t bytes = pages.size() * page_bytes_;
    chunk_bytes_.store(chunk_bytes_.load(std::memory_order_relaxed) - bytes, std::memory_order_relaxed);
    mapped_bytes_ -= bytes;
  }

  const sim_options options_;
  device_logs logs_;  // before the streams, whose workers report into it

  // Taken by the chunk and virtual memory calls and the fault-injection setters; never by workers.
  mutable std::mutex chunk_mutex_;
  std::mt19937_64 chunk_random_;                         // GUARDED_BY(chunk_mutex_)
  double failure_probability_;                           // GUARDED_BY(chunk_mutex_)
  std::size_t byte_limit_;                               // GUARDED_BY(chunk_mutex_)
  std::unordered_map<void*, std::size_t> live_chunks_;   // GUARDED_BY(chunk_mutex_)
  const std::size_t page_bytes_;
  std::map<std::uintptr_t, reservation> reservations_;   // GUARDED_BY(chunk_mutex_); base -> range
  std::size_t mapped_bytes_ = 0;                         // GUARDED_BY(chunk_mutex_)
  std::size_t reserved_address_bytes_ = 0;               // GUARDED_BY(chunk_mutex_)
  // INVARIANT: chunk_bytes_ == sum of live_chunks_ sizes + mapped_bytes_. Written under chunk_mutex_; read
  // relaxed by chunk_bytes(), a statistic that orders nothing.
  std::atomic<std::size_t> chunk_bytes_{0};

  // Taken by acquire_event and release_event only.
  std::mutex events_mutex_;
  std::vector<std::unique_ptr<sim_event>> events_;  // GUARDED_BY(events_mutex_); every event ever made
  std::vector<sim_event*> free_events_;             // GUARDED_BY(events_mutex_)

  // Taken by create/destroy_stream and synchronize_device only; operations on a stream resolve
  // its stream_ref directly.
  std::mutex streams_mutex_;
  std::unordered_map<void*, std::shared_ptr<sim_stream>> streams_;  // GUARDED_BY(streams_mutex_)
  std::shared_ptr<sim_stream> default_stream_;                      // set once, at construction

  // Taken by the heap and region calls and their accessors; never by workers.
  mutable std::mutex heaps_mutex_;
  std::map<std::uintptr_t, heap_record> heaps_;  // GUARDED_BY(heaps_mutex_); base -> heap, disjoint
  std::size_t region_count_ = 0;                 // GUARDED_BY(heaps_mutex_); regions in all heaps
  std::size_t registration_errors_ = 0;          // GUARDED_BY(heaps_mutex_)
};

}  // namespace

std::unique_ptr<sim_backend> make_sim_backend(const sim_options& options) {
  return std::make_unique<sim_backend_impl>(options);
}

}  // namespace cudapool
