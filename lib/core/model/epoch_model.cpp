// epoch_model.cpp - Relacy model of the stream-ordered free protocol: frees published into a
// stream's open epoch, the epoch closed (one event) and reclaimed by another thread, blocks reused
// only after the event completed; and the segment heap's ranges freed on the stream, reusable on
// other streams once stream_tag::resolved() sees the epoch completed.
//
// The protocol's steps are the library's (core/epoch_protocol.hpp, which pool_core calls under its
// shard locks): close_epoch (record the event, then publish the epoch in `closed`),
// collect_completed and collect_epoch (query the oldest closed epoch's event; when it completed take
// its blocks and store-release `completed`), on basic_stream_epochs, with basic_stream_tag's
// resolved() (acquire) and safe_for on the reader's side. Instantiated with Relacy's atomics, a
// backend twin (the event's two flags) and small fixed containers for the epochs' block lists; the
// shard's std::mutex is an rl::mutex here, taken around each call as pool_core takes its own.
// pool_core itself (its std::unordered_map of streams, pending counts, stats, heap) does not run.
// One stream, one shard: the host's defer and mark_stream_free are the model's (a push_back and
// mark_locked under the lock; mark_model below races the lock-free try_mark with a close);
// release_items is a reuse of the block at once, as an allocation on another stream would.
// The device is a thread: stream S's kernel, enqueued before the frees, writes the block and the
// range (rl::var: any access not ordered after it is a data race), then the event completes when S
// reaches it (after it is recorded). A backend event that was never recorded queries as complete,
// as cudaEventQuery does.
//
// Seeded bugs, each of which must be reported as a data race on device memory, each a policy of
// the shared code:
//   CUB's DeviceFree race   a backend whose record() takes effect only after the shard's lock is
//                           released: the epoch is visible in `closed` with its event unrecorded, a
//                           reclaimer in between queries it, sees it complete, and reuses the block
//                           while S still uses it
//   completed w/o release   release_dropped_atomics for basic_stream_epochs: a heap allocation on
//                           another stream that sees the epoch resolved is not ordered after the
//                           event, so its reuse races with S's kernel
//   resolved() w/o acquire  load_acquire_dropped_atomics: the same race from the reader's side
#include <cudapool/types.hpp>
#include <cudapool/detail/core/epoch_protocol.hpp>
#include <cudapool/detail/core/stream_tag.hpp>
#include <cudapool/detail/core/model/model_check.hpp>

namespace cudapool::core::model {
namespace {

// The containers of the model's epochs: a fixed capacity, no allocation inside the simulation.
template <class T, std::size_t N = 4>
struct fixed_vector {
  T data[N]{};
  std::size_t n = 0;
  fixed_vector() = default;
  fixed_vector(fixed_vector&& o) noexcept : n(o.n) {
    for (std::size_t i = 0; i < n; ++i) data[i] = o.data[i];
    o.n = 0;
  }
  fixed_vector& operator=(fixed_vector&& o) noexcept {
    n = o.n;
    for (std::size_t i = 0; i < n; ++i) data[i] = o.data[i];
    o.n = 0;
    return *this;
  }
  [[nodiscard]] bool empty() const { return n == 0; }
  void clear() { n = 0; }
  void push_back(const T& v) {
    RL_ASSERT(n < N);
    data[n++] = v;
  }
  T* begin() { return data; }
  T* end() { return data + n; }
  const T* begin() const { return data; }
  const T* end() const { return data + n; }
  void insert(T* at, const T* first, const T* last) {
    RL_ASSERT(at == end());
    for (; first != last; ++first) push_back(*first);
  }
};
template <class T>
struct fixed_queue {
  fixed_vector<T> items;
  std::size_t head = 0;
  [[nodiscard]] bool empty() const { return head == items.n; }
  void push_back(T&& v) {
    RL_ASSERT(items.n < 4);
    items.data[items.n++] = std::move(v);
  }
  T& front() { return items.data[head]; }
  void pop_front() { ++head; }
};

using model_stream = int;
constexpr model_stream stream_s = 1;
constexpr block_index the_block = 7;

// The backend's event of the epoch: recorded by the host, completed by the device. Deferred: the
// CUB race's backend, whose record() takes effect when the host calls after_unlock().
template <bool Deferred>
struct model_backend {
  relacy_atomics::atomic<int> event_recorded{0};
  relacy_atomics::atomic<int> event_done{0};
  bool record_pending = false;  // the host thread's own

  int acquire_event() { return 1; }
  void release_event(int) noexcept {}
  void record(int, model_stream) {
    if (Deferred) {
      record_pending = true;
    } else {
      event_recorded.store(1, std::memory_order_release);
    }
  }
  void after_unlock() {
    if (record_pending) event_recorded.store(1, std::memory_order_release);
  }
  // cudaEventQuery: an event never recorded reports complete.
  bool query(int) { return event_recorded.load(std::memory_order_acquire) == 0 || event_done.load(std::memory_order_acquire) == 1; }
};

// Atomics: the policy of basic_stream_epochs::completed (the backend's event flags are always sound).
template <bool DeferredRecord, class Atomics>
struct epoch_model : rl::test_suite<epoch_model<DeferredRecord, Atomics>, 4> {
  enum : unsigned { host_freer, device, reclaimer, heap_user };
  static inline std::uint64_t reuses = 0;  // iterations in which the block and the range were reused

  using stream_epochs = basic_stream_epochs<Atomics, model_stream, int, fixed_vector<block_index>, fixed_queue>;
  rl::mutex shard_mutex;
  stream_epochs se;  // GUARDED_BY(shard_mutex), but `completed`
  model_backend<DeferredRecord> backend_twin;
  model_backend<DeferredRecord>* backend = &backend_twin;

  // Device memory of the freed block and of the freed large range.
  rl::var<int> block_memory;
  rl::var<int> range_memory;

  void before() {
    se.stream = stream_s;
    block_memory($) = 0;
    range_memory($) = 0;
  }

  void after() {
    if (block_memory($) == 2 && range_memory($) == 2) ++reuses;
  }

  void thread(unsigned id) {
    switch (id) {
      case host_freer: free_and_close(); break;
      case device: run_stream(); break;
      case reclaimer: reclaim_and_reuse(); break;
      case heap_user: allocate_large_elsewhere(); break;
      default: break;
    }
  }

  // deallocate(block, S), deallocate(range, S), then a close (epoch_batch reached, or flush_stream).
  void free_and_close() {
    shard_mutex.lock($);
    se.open.push_back(the_block);  // defer
    RL_ASSERT(mark_locked(se) == 1 && open_marks(se) == 1);  // mark_stream_free, under the lock
    shard_mutex.unlock($);

    shard_mutex.lock($);  // close_locked
    const bool closed = close_epoch(backend, se);
    RL_ASSERT(closed);
    shard_mutex.unlock($);
    backend_twin.after_unlock();
  }

  // Stream S: its kernel uses the block and the range, then it reaches the event once recorded.
  void run_stream() {
    block_memory($) = 1;
    range_memory($) = 1;
    while (backend_twin.event_recorded.load(std::memory_order_acquire) == 0) rl::yield(1, $);
    backend_twin.event_done.store(1, std::memory_order_release);
  }

  void reclaim_and_reuse() {
    for (int attempt = 0; attempt < 2; ++attempt) {
      fixed_vector<block_index> done;
      shard_mutex.lock($);  // reclaim
      std::size_t epochs = 0;
      collect_completed(
          backend, se,
          [&](typename stream_epochs::epoch& ep) { collect_epoch(backend, se, ep, done, [](block_index) {}); },  // collect_locked
          epochs);
      RL_ASSERT(epochs == (done.empty() ? 0u : 1u));
      shard_mutex.unlock($);
      if (!done.empty()) {  // release_items, then an allocation on another stream uses the block
        RL_ASSERT(*done.begin() == the_block);
        block_memory($) = 2;
        return;
      }
    }
  }

  // The heap hands the range freed on S (epoch 1's tag) to another stream once the tag resolves.
  void allocate_large_elsewhere() {
    static const int other_stream = 2;
    const basic_stream_tag<Atomics> tag{&se.completed, 1, &stream_s, true};
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (safe_for(tag, stream_use{&other_stream, true})) {
        range_memory($) = 2;
        return;
      }
      rl::yield(1, $);
    }
  }
};

// A large free marked without the lock (try_mark) racing with a close under it. Stream S is a
// queue of operations in the order the host enqueued them (a counter every enqueue increments: the
// driver's own order); the device runs them in that order. The freer enqueues a kernel that uses
// the range, then marks its free and publishes the range's tag (the heap's insert); the closer
// frees a block on S and closes S's epoch (record = enqueue the event); the reuser reclaims and
// hands the range to another stream once the tag resolves. A mark must never get the number of an
// epoch whose event was enqueued before its kernel. Seeded bugs (copies of the library's steps
// with the one change, each reported as a data race on the range):
//   record_first      the close records the event and only then takes the marks (no closing
//                     bit): a mark in between joins the epoch the event was recorded for
//   mark_ignores_bit  try_mark adds to the word while a close is recording
enum class mark_bug { none, record_first, mark_ignores_bit };

struct stream_queue {
  enum op : int { empty, kernel, event };
  relacy_atomics::atomic<int> enqueued{0};
  relacy_atomics::atomic<int> ops[2] = {0, 0};
  void enqueue(op o) {
    const int at = enqueued.fetch_add(1, std::memory_order_acq_rel);
    ops[at].store(o, std::memory_order_release);
  }
};

struct queue_backend {
  stream_queue* s;
  relacy_atomics::atomic<int> event_recorded{0};
  relacy_atomics::atomic<int> event_done{0};
  int acquire_event() { return 1; }
  void release_event(int) noexcept {}
  void record(int, model_stream) {
    s->enqueue(stream_queue::event);
    event_recorded.store(1, std::memory_order_release);
  }
  bool query(int) { return event_recorded.load(std::memory_order_acquire) == 0 || event_done.load(std::memory_order_acquire) == 1; }
};

template <mark_bug Bug>
struct mark_model : rl::test_suite<mark_model<Bug>, 4> {
  enum : unsigned { freer, closer, device, reuser };
  static inline std::uint64_t reuses = 0;  // iterations in which another stream reused the range
  static inline std::uint64_t late = 0;    // iterations in which the mark found a close under way
  static inline std::uint64_t both = 0;    // min(reuses, late): the sound run must reach both paths

  using stream_epochs = basic_stream_epochs<relacy_atomics, model_stream, int, fixed_vector<block_index>, fixed_queue>;
  rl::mutex shard_mutex;
  stream_epochs se;  // GUARDED_BY(shard_mutex), but `completed` and `marks`
  stream_queue queue;
  queue_backend backend_twin{&queue};
  queue_backend* backend = &backend_twin;
  relacy_atomics::atomic<std::uint64_t> published{0};  // the range's tag epoch once in the heap
  bool marked_late = false;  // the freer's own
  rl::var<int> range_memory;

  void before() {
    se.stream = stream_s;
    range_memory($) = 0;
  }
  void after() {
    if (range_memory($) == 2) ++reuses;
    if (marked_late) ++late;
    both = std::min(reuses, late);
  }

  void thread(unsigned id) {
    switch (id) {
      case freer: free_range(); break;
      case closer: close(); break;
      case device: run_stream(); break;
      case reuser: reuse_elsewhere(); break;
      default: break;
    }
  }

  // Kernel on S using the range, then deallocate(range, S): mark, then the range joins the heap.
  void free_range() {
    queue.enqueue(stream_queue::kernel);
    std::size_t count = 0;
    std::uint64_t seq = Bug == mark_bug::mark_ignores_bit ? mark_ignoring_bit() : try_mark(se, &count);
    if (seq == 0) {
      marked_late = true;
      shard_mutex.lock($);
      seq = mark_locked(se);
      shard_mutex.unlock($);
    }
    published.store(seq, std::memory_order_release);
  }

  std::uint64_t mark_ignoring_bit() {
    std::uint64_t w = se.marks.load(std::memory_order_relaxed);
    while (!se.marks.compare_exchange_weak(w, w + 1, std::memory_order_release, std::memory_order_relaxed)) {
    }
    return w >> mark_seq_shift;
  }

  // A block freed on S (defer: the epoch holds something whether or not the mark came first), and
  // the close (epoch_batch reached).
  void close() {
    shard_mutex.lock($);
    se.open.push_back(the_block);
    const bool closed = Bug == mark_bug::record_first ? close_recording_first() : close_epoch(backend, se);
    RL_ASSERT(closed);
    shard_mutex.unlock($);
  }

  bool close_recording_first() {
    if (se.open.empty() && open_marks(se) == 0) return false;
    const std::uint64_t seq = open_seq(se);
    const int e = backend->acquire_event();
    backend->record(e, se.stream);
    se.closed.push_back({e, std::move(se.open), seq});
    se.open.clear();
    se.marks.store((seq + 1) << mark_seq_shift, std::memory_order_release);
    return true;
  }

  // S runs its two operations in the order enqueued.
  void run_stream() {
    for (int i = 0; i < 2; ++i) {
      int o = stream_queue::empty;
      while ((o = queue.ops[i].load(std::memory_order_acquire)) == stream_queue::empty) rl::yield(1, $);
      if (o == stream_queue::kernel) {
        range_memory($) = 1;
      } else {
        backend_twin.event_done.store(1, std::memory_order_release);
      }
    }
  }

  // reclaim, then an allocation on another stream takes the range once its tag resolves.
  void reuse_elsewhere() {
    static const int other_stream = 2;
    for (int attempt = 0; attempt < 3; ++attempt) {
      shard_mutex.lock($);
      std::size_t epochs = 0;
      fixed_vector<block_index> done;
      collect_completed(
          backend, se,
          [&](typename stream_epochs::epoch& ep) { collect_epoch(backend, se, ep, done, [](block_index) {}); }, epochs);
      shard_mutex.unlock($);
      const std::uint64_t seq = published.load(std::memory_order_acquire);
      const basic_stream_tag<relacy_atomics> tag{&se.completed, seq, &stream_s, true};
      if (seq != 0 && safe_for(tag, stream_use{&other_stream, true})) {
        range_memory($) = 2;
        return;
      }
      rl::yield(1, $);
    }
  }
};

}  // namespace
}  // namespace cudapool::core::model

int main() {
  using namespace cudapool::core::model;
  using sound = epoch_model<false, relacy_atomics>;
  model_checks m;
  m.sound<sound>("epochs: free, close (record, then publish), reclaim on another thread, reuse", 100000,
                 sound::reuses);
  m.seeded<epoch_model<true, relacy_atomics>>("epochs: event recorded after unlocking (CUB DeviceFree race)",
                                              rl::test_result_data_race, 100000);
  m.seeded<epoch_model<false, release_dropped_atomics>>("epochs: collect_locked's store of completed without release",
                                                        rl::test_result_data_race, 100000);
  m.seeded<epoch_model<false, load_acquire_dropped_atomics>>("epochs: stream_tag::resolved()'s load without acquire",
                                                             rl::test_result_data_race, 100000);
  m.sound<mark_model<mark_bug::none>>("epochs: a large free marked without the lock racing with a close", 100000,
                                      mark_model<mark_bug::none>::both);
  m.seeded<mark_model<mark_bug::record_first>>("epochs: a close that records before it stops the marks",
                                               rl::test_result_data_race, 100000);
  m.seeded<mark_model<mark_bug::mark_ignores_bit>>("epochs: a lock-free mark that ignores the closing bit",
                                                   rl::test_result_data_race, 100000);
  return m.exit_code();
}
