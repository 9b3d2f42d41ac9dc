// epoch_model.cpp - Relacy model of the stream-ordered free protocol: frees published into a
// stream's open epoch, the epoch closed (one event) and reclaimed by another thread, blocks reused
// only after the event completed; and the segment heap's ranges freed on the stream, reusable on
// other streams once stream_tag::resolved() sees the epoch completed.
//
// pool_core itself does not run under Relacy (its backend, its std::mutex shards and its heap
// would all need Relacy twins), so this is a faithful small model of lib/core/pool_core.cpp, one
// stream and one shard, step for step:
//   defer / mark_stream_free   under the shard's lock: the block and a large-range mark join the
//                              open epoch
//   close_locked               under the lock: record the event, then the epoch joins `closed`
//   reclaim / collect_locked   under the lock: query the oldest closed epoch's event; when it has
//                              completed take its blocks and store-release stream_epochs::completed
//   release_items              after the lock: the blocks go back to the free lists (here: reused
//                              at once, as an allocation on another stream would)
//   stream_tag::resolved()     acquire-load of `completed`: a heap range freed in the epoch is
//                              reusable on another stream
// The device is a thread: stream S's kernel, enqueued before the frees, writes the block and the
// range (rl::var: any access not ordered after it is a data race), then the event completes when S
// reaches it (after it is recorded). A backend event that was never recorded queries as complete,
// as cudaEventQuery does.
//
// Seeded bugs, each of which must be reported as a data race on device memory:
//   CUB's DeviceFree race   the epoch made visible in `closed` under the lock, its event recorded
//                           after unlocking: a reclaimer in between queries an unrecorded event,
//                           sees it complete, and reuses the block while S still uses it
//   completed w/o release   collect_locked's store of `completed` relaxed: a heap allocation on
//                           another stream that sees the epoch resolved is not ordered after the
//                           event, so its reuse races with S's kernel
//   resolved() w/o acquire  the same race from the reader's side
#include <cudapool/detail/core/model/model_check.hpp>

namespace cudapool::core::model {
namespace {

enum class close_order { record_then_publish, publish_then_record };

// Atomics: the policy of stream_epochs::completed (the backend's event flags are always sound).
template <close_order Close, class Atomics>
struct epoch_model : rl::test_suite<epoch_model<Close, Atomics>, 4> {
  enum : unsigned { host_freer, device, reclaimer, heap_user };
  static inline std::uint64_t reuses = 0;  // iterations in which the block and the range were reused

  // The shard (pool_core::epoch_shard) and stream S's stream_epochs, GUARDED_BY(shard_mutex).
  rl::mutex shard_mutex;
  rl::var<bool> open_block;    // se.open holds the block
  rl::var<int> open_marks;     // se.open_marks: the large range freed on S
  rl::var<bool> closed_block;  // se.closed.front() holds the block
  rl::var<bool> has_closed;    // se.closed is not empty
  // stream_epochs::completed: written by collect_locked under the lock, read by resolved() without.
  typename Atomics::template atomic<std::uint64_t> completed{0};

  // The backend's event of the epoch: recorded by the host, completed by the device.
  relacy_atomics::atomic<int> event_recorded{0};
  relacy_atomics::atomic<int> event_done{0};

  // Device memory of the freed block and of the freed large range.
  rl::var<int> block_memory;
  rl::var<int> range_memory;

  void before() {
    open_block($) = false;
    open_marks($) = 0;
    closed_block($) = false;
    has_closed($) = false;
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
    open_block($) = true;  // defer
    open_marks($) = open_marks($) + 1;  // mark_stream_free
    shard_mutex.unlock($);

    shard_mutex.lock($);  // close_locked
    if (Close == close_order::record_then_publish) event_recorded.store(1, std::memory_order_release);
    closed_block($) = open_block($);
    has_closed($) = true;
    open_block($) = false;
    open_marks($) = 0;
    shard_mutex.unlock($);
    if (Close == close_order::publish_then_record) event_recorded.store(1, std::memory_order_release);
  }

  // Stream S: its kernel uses the block and the range, then it reaches the event once recorded.
  void run_stream() {
    block_memory($) = 1;
    range_memory($) = 1;
    while (event_recorded.load(std::memory_order_acquire) == 0) rl::yield(1, $);
    event_done.store(1, std::memory_order_release);
  }

  // cudaEventQuery: an event never recorded reports complete.
  bool query_event() {
    return event_recorded.load(std::memory_order_acquire) == 0 || event_done.load(std::memory_order_acquire) == 1;
  }

  void reclaim_and_reuse() {
    for (int attempt = 0; attempt < 2; ++attempt) {
      bool got = false;
      shard_mutex.lock($);  // reclaim
      if (has_closed($) && query_event()) {
        got = closed_block($);  // collect_locked
        completed.store(1, std::memory_order_release);
        has_closed($) = false;
        closed_block($) = false;
      }
      shard_mutex.unlock($);
      if (got) {  // release_items, then an allocation on another stream uses the block
        block_memory($) = 2;
        return;
      }
    }
  }

  // The heap hands the range freed on S to another stream once its tag resolves.
  void allocate_large_elsewhere() {
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (completed.load(std::memory_order_acquire) >= 1) {  // stream_tag::resolved()
        range_memory($) = 2;
        return;
      }
      rl::yield(1, $);
    }
  }
};

using dropped = relacy_atomics_t<weakening::release_dropped>;
using load_acquire_dropped = relacy_atomics_t<weakening::load_acquire_dropped>;

}  // namespace
}  // namespace cudapool::core::model

int main() {
  using namespace cudapool::core::model;
  model_checks m;
  m.sound<epoch_model<close_order::record_then_publish, relacy_atomics>>(
      "epochs: free, close (record, then publish), reclaim on another thread, reuse", 100000,
      epoch_model<close_order::record_then_publish, relacy_atomics>::reuses);
  m.seeded<epoch_model<close_order::publish_then_record, relacy_atomics>>(
      "epochs: event recorded after unlocking (CUB DeviceFree race)", rl::test_result_data_race, 100000);
  m.seeded<epoch_model<close_order::record_then_publish, dropped>>(
      "epochs: collect_locked's store of completed without release", rl::test_result_data_race, 100000);
  m.seeded<epoch_model<close_order::record_then_publish, load_acquire_dropped>>(
      "epochs: stream_tag::resolved()'s load without acquire", rl::test_result_data_race, 100000);
  return m.exit_code();
}
