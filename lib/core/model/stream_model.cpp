// stream_model.cpp - Relacy models of the stream pool's partitions (variants/stream/): the partition
// steal of basic_pool::refill (steal_mode::completed: take, query the donor's stream, push back if
// busy; steal_mode::ordered: take behind a device-side wait), retire_stream racing an allocation on
// the retired stream, the donation of a partition's surplus (donate_from), and record_stream. steal_from and drain_partition (stream/partition_steal.hpp),
// basic_recorded_streams (core/recorded_streams.hpp) and tagged_stack are the library's code,
// instantiated with Relacy's atomics; the backend (a stream query, an event, a device-side wait),
// epoch_table's epoch and the recorded streams' map are the model's.
//
// Streams are device threads where their order matters: a kernel is a use of the blocks' device
// memory (model_blocks.hpp's payload, an rl::var), and a stream's completion is a release store its
// device thread makes after its kernels (a query or a wait acquires it). Work that a host thread
// enqueues after an acquire, with nothing else before it on its stream, is written by the host
// thread itself: it is ordered after what the host saw, and before nothing, as the kernel would be.
//
// Seeded bugs, each of which must be reported:
//   completed steal without the query     the donor's blocks used while its kernel runs: data race
//   push-back without release             only the steal's push-back weakened (weakened_in_scope):
//                                         the partition's next pop reads the chain's tail link
//                                         stale and loses the block pushed meanwhile: broken stack
//   ordered steal without the wait        the taker's kernel races the donor's: data race
//   donation without the epoch            the donated blocks reused before P's work completed:
//                                         data race
//   donation's push-back without release  the partition's next pop reads the kept chain's link
//                                         stale: broken stack
//   retire_stream draining one class      a block left in the retired partition: assert
//   retire_stream without an epoch        the retired blocks reused before the stream's work
//                                         completed: data race
//   record_stream not counted             a map that reports the record's key present: the free
//                                         skips the wait for the recorded stream: data race
#include <cudapool/detail/stream/partition_steal.hpp>

#include <array>
#include <utility>

#include <cudapool/detail/core/recorded_streams.hpp>

#include <cudapool/detail/core/model/model_check.hpp>
#include <cudapool/detail/core/model/model_blocks.hpp>

namespace cudapool::core::model {
namespace {

constexpr backoff_policy no_backoff{0, 0};
template <block_index N>
using table_of = model_table<in_scope_atomics, N>;
using stack = tagged_stack<32, no_stack_hook, in_scope_atomics>;

// Claims and counts the blocks of `chain` (walked through the table: the caller owns them).
template <class Table>
void claim_chain(Table& t, const block_chain& chain, bool use) {
  block_index b = chain.head;
  for (std::size_t i = 0; i < chain.count; ++i) {
    t.claim(b);
    if (use) t.use(b);
    if (i + 1 < chain.count) b = t[b].next.load(std::memory_order_relaxed);
  }
}

// Every block exactly once: on one of the stacks (and not held), in `chain`, or held.
template <class Table, std::size_t N>
void check_accounted(Table& t, std::array<int, N>& seen, const block_chain* chain) {
  if (chain != nullptr) {
    block_index b = chain->head;
    for (std::size_t i = 0; i < chain->count; ++i) {
      RL_ASSERT(seen[b] == 0);
      seen[b] = 1;
      if (i + 1 < chain->count) b = t[b].next.load(std::memory_order_relaxed);
    }
  }
  for (block_index b = 0; b < N; ++b) {
    const bool held = t[b].held($);
    RL_ASSERT((seen[b] == 1) != held);  // lost (neither), or held and listed (both)
  }
}

// ---- steal_mode::completed ----------------------------------------------------------------------

enum class steal_bug { none, no_query, push_back_relaxed, no_wait };

// 3 threads. The owner frees three blocks on P (their kernel was enqueued on P before) and then
// allocates on P until its partition is empty; P's device thread runs the kernel and completes; a
// thread allocating on S steals P's blocks (twice at most: a busy donor's blocks go back).
template <steal_bug Bug>
struct completed_steal_model : rl::test_suite<completed_steal_model<Bug>, 3> {
  enum : unsigned { owner, device_p, stealer };
  static inline std::uint64_t reached = 0;  // iterations with a push-back and then a steal

  table_of<3> table;
  stack partition_p;
  relacy_atomics::atomic<int> p_done{0};  // P has run everything enqueued on it
  rl::var<int> pushed_back;
  rl::var<bool> stole;

  struct donor {
    completed_steal_model& m;
    bool completed() {
      if (Bug == steal_bug::no_query) return true;
      const bool done = m.p_done.load(std::memory_order_acquire) == 1;
      if (!done) m.pushed_back($) = m.pushed_back($) + 1;
      return done;
    }
    void order() { RL_ASSERT(false); }
  };

  void before() {
    weakened_in_scope::reset();
    table.reset(true);
    pushed_back($) = 0;
    stole($) = false;
  }
  void thread(unsigned id) {
    if (id == owner) {
      for (block_index b = 0; b < 3; ++b) {
        table.give_up(b);
        partition_p.push(table, b, no_backoff);
      }
      for (int k = 0; k < 3; ++k) {  // stream order: no use of device memory to model
        const block_index b = partition_p.pop(table, no_backoff);
        if (b != no_block) table.claim(b);
      }
    } else if (id == device_p) {
      for (block_index b = 0; b < 3; ++b) table.use(b);
      p_done.store(1, std::memory_order_release);
    } else {
      for (int attempt = 0; attempt < 2; ++attempt) {
        donor d{*this};
        block_chain chain;
        {
          weakened_in_scope w(Bug == steal_bug::push_back_relaxed ? weakening::release_dropped : weakening::none);
          chain = steal_from(partition_p, table, steal_mode::completed, d, no_backoff);
        }
        if (!chain.empty()) {
          claim_chain(table, chain, true);  // S's kernels on the blocks
          stole($) = true;
          return;
        }
        rl::yield(1, $);
      }
    }
  }
  void after() {
    std::array<int, 3> seen{};
    mark_stack(table, partition_p, seen);
    check_accounted(table, seen, nullptr);
    if (pushed_back($) > 0 && stole($)) ++reached;
  }
};

// ---- steal_mode::ordered ------------------------------------------------------------------------

// 4 threads. The owner frees two blocks on P; P's device thread runs their kernel and completes; a
// thread allocating on S steals them behind a device-side wait (donor.order(): S waits for an
// event recorded on P now) and enqueues its kernel on S; S's device thread runs the wait, then the
// kernel.
template <steal_bug Bug>
struct ordered_steal_model : rl::test_suite<ordered_steal_model<Bug>, 4> {
  enum : unsigned { owner, device_p, stealer, device_s };
  enum : int { queued_nothing = 1, queued_kernel = 2 };
  static inline std::uint64_t reached = 0;  // iterations whose wait found P's kernel still running

  table_of<2> table;
  stack partition_p;
  relacy_atomics::atomic<int> p_done{0};
  relacy_atomics::atomic<int> s_queue{0};  // what the stealer enqueued on S (release: its chain)
  rl::var<bool> s_waits;                   // S waits for P's event before the kernel
  rl::var<bool> waited_busy;
  block_chain taken;                       // written before s_queue's release, read after its acquire
  rl::var<int> taken_guard;

  struct donor {
    ordered_steal_model& m;
    bool completed() {
      RL_ASSERT(false);
      return false;
    }
    void order() {
      if (Bug == steal_bug::no_wait) return;
      m.s_waits($) = true;
      if (m.p_done.load(std::memory_order_relaxed) == 0) m.waited_busy($) = true;
    }
  };

  void before() {
    weakened_in_scope::reset();
    table.reset(true);
    s_waits($) = false;
    waited_busy($) = false;
    taken_guard($) = 0;
  }
  void thread(unsigned id) {
    if (id == owner) {
      for (block_index b = 0; b < 2; ++b) {
        table.give_up(b);
        partition_p.push(table, b, no_backoff);
      }
    } else if (id == device_p) {
      for (block_index b = 0; b < 2; ++b) table.use(b);
      p_done.store(1, std::memory_order_release);
    } else if (id == stealer) {
      for (int attempt = 0; attempt < 2; ++attempt) {
        donor d{*this};
        const block_chain chain = steal_from(partition_p, table, steal_mode::ordered, d, no_backoff);
        if (!chain.empty()) {
          claim_chain(table, chain, false);
          taken = chain;
          taken_guard($) = 1;
          s_queue.store(queued_kernel, std::memory_order_release);
          return;
        }
        rl::yield(1, $);
      }
      s_queue.store(queued_nothing, std::memory_order_release);
    } else {
      int q = 0;
      while ((q = s_queue.load(std::memory_order_acquire)) == 0) rl::yield(1, $);
      if (q != queued_kernel) return;
      if (s_waits($)) {
        while (p_done.load(std::memory_order_acquire) == 0) rl::yield(1, $);
      }
      RL_ASSERT(taken_guard($) == 1);
      block_index b = taken.head;
      for (std::size_t i = 0; i < taken.count; ++i) {
        table.use(b);
        if (i + 1 < taken.count) b = table[b].next.load(std::memory_order_relaxed);
      }
    }
  }
  void after() {
    std::array<int, 2> seen{};
    mark_stack(table, partition_p, seen);
    check_accounted(table, seen, nullptr);
    if (waited_busy($)) ++reached;
  }
};

// ---- an epoch behind a stream, reclaimed by another stream (retire_stream, donation) ------------

// pool_core's side of a chain that leaves a partition behind stream X's event: defer_chain (the
// epoch, under the shard's lock), then on another stream reclaim (the event queried: X's device
// thread has stored x_done) and release_items (onto the shared stack), then a pop and that
// stream's kernel on the block.
template <class Table>
struct epoch_elsewhere {
  rl::mutex shard_mutex;
  rl::var<bool> open;  // GUARDED_BY(shard_mutex): the chain's epoch, not yet reclaimed
  block_chain chain;   // GUARDED_BY(shard_mutex)
  stack shared;

  void reset() { open($) = false; }
  void defer(const block_chain& c) {
    shard_mutex.lock($);
    chain = c;
    open($) = true;
    shard_mutex.unlock($);
  }
  // The blocks a thread took from X's partition: into an epoch behind X's event (defer_chain), or,
  // the seeded bug, straight onto the shared lists.
  void hand_over(Table& t, const block_chain& c, bool without_epoch) {
    if (without_epoch) {
      shared.push_chain(t, c.head, c.tail, no_backoff);
    } else {
      defer(c);
    }
  }
  // Up to three attempts; true when a block was reused.
  bool reclaim_and_reuse(Table& t, relacy_atomics::atomic<int>& x_done) {
    for (int attempt = 0; attempt < 3; ++attempt) {
      block_chain done;
      shard_mutex.lock($);
      if (open($) && x_done.load(std::memory_order_acquire) == 1) {
        done = chain;
        open($) = false;
      }
      shard_mutex.unlock($);
      if (!done.empty()) shared.push_chain(t, done.head, done.tail, no_backoff);
      if (const block_index b = shared.pop(t, no_backoff); b != no_block) {
        t.claim(b);
        t.use(b);  // the other stream's kernel
        return true;
      }
      rl::yield(1, $);
    }
    return false;
  }
  // In after(): marks the shared stack's blocks; the chain still in an open epoch, or nullptr.
  template <std::size_t N>
  const block_chain* mark(const Table& t, std::array<int, N>& seen) {
    mark_stack(t, shared, seen);
    return open($) ? &chain : nullptr;
  }
};

// X's device thread: its kernel uses every block, then X has run everything enqueued on it.
template <class Table>
void run_stream(Table& t, relacy_atomics::atomic<int>& x_done) {
  for (block_index b = 0; b < Table::count; ++b) t.use(b);
  x_done.store(1, std::memory_order_release);
}

// The two threads of a model besides X's: one on another stream reclaims the epoch once X's event
// completed and reuses a block (then *reused is true), the other is X's device thread.
template <class Table>
void elsewhere_or_device(bool elsewhere, epoch_elsewhere<Table>& epoch, Table& t, relacy_atomics::atomic<int>& x_done,
                         rl::var<bool>& reused) {
  if (!elsewhere) return run_stream(t, x_done);
  if (epoch.reclaim_and_reuse(t, x_done)) reused($) = true;
}

// ---- retire_stream ------------------------------------------------------------------------------

enum class retire_bug { none, one_class_drained, no_epoch };

// 4 threads. S's partition holds blocks 0 and 2 (class 0) and 1 (class 1), all freed on S behind
// S's kernel. A thread allocates on S (pops class 0) while another retires S
// (drain_partition, then epoch_table::defer_chain: one epoch behind an event recorded on S); a thread
// on another stream reclaims the epoch once its event completed (epoch_table::reclaim, under the
// shard's lock) and reuses a block; S's device thread runs the kernel and completes.
template <retire_bug Bug>
struct retire_model : rl::test_suite<retire_model<Bug>, 4> {
  enum : unsigned { allocator_s, retirer, other_stream, device_s };
  static inline std::uint64_t reached = 0;  // iterations with an allocation on S and a reuse elsewhere

  table_of<3> table;
  stack partition_s[2];
  epoch_elsewhere<table_of<3>> epoch;
  relacy_atomics::atomic<int> s_done{0};
  rl::var<bool> allocated_on_s;
  rl::var<bool> reused_elsewhere;

  void before() {
    weakened_in_scope::reset();
    table.reset(false);
    partition_s[0].push(table, 2, no_backoff);
    partition_s[0].push(table, 0, no_backoff);
    partition_s[1].push(table, 1, no_backoff);
    epoch.reset();
    allocated_on_s($) = false;
    reused_elsewhere($) = false;
  }
  void thread(unsigned id) {
    if (id == allocator_s) {
      const block_index b = partition_s[0].pop(table, no_backoff);  // stream order: no device use to model
      if (b == no_block) return;
      table.claim(b);
      allocated_on_s($) = true;
    } else if (id == retirer) {
      const std::size_t classes = Bug == retire_bug::one_class_drained ? 1 : 2;
      const block_chain all = drain_partition(table, classes, [this](size_class c) -> stack& { return partition_s[c]; });
      if (all.empty()) return;
      epoch.hand_over(table, all, Bug == retire_bug::no_epoch);  // defer_chain: an event recorded on S now
    } else {
      elsewhere_or_device(id == other_stream, epoch, table, s_done, reused_elsewhere);
    }
  }
  void after() {
    std::array<int, 3> seen{};
    mark_stack(table, partition_s[0], seen);
    mark_stack(table, partition_s[1], seen);
    RL_ASSERT(partition_s[0].peek_unsafe() == no_block && partition_s[1].peek_unsafe() == no_block);  // drained
    check_accounted(table, seen, epoch.mark(table, seen));
    if (allocated_on_s($) && reused_elsewhere($)) ++reached;
  }
};

// ---- donation (donate_from) ----------------------------------------------------------------------

enum class donate_bug { none, no_epoch, push_back_relaxed };

// 4 threads. P's partition holds blocks 0, 1 and 2, freed on P behind P's kernel. P's host
// allocates and frees on P (a pop, then a push of the same block: stream order, no device use to
// model) while a miss on S donates P's surplus (donate_from, keeping one block; the rest join an
// epoch behind an event recorded on P now: epoch_table::defer_chain); a thread on another stream
// reclaims the epoch once its event completed and reuses a block; P's device thread runs the kernel
// and completes.
template <donate_bug Bug>
struct donate_model : rl::test_suite<donate_model<Bug>, 4> {
  enum : unsigned { owner_p, donor, other_stream, device_p };
  static inline std::uint64_t reached = 0;  // iterations with a donation and a reuse elsewhere

  table_of<3> table;
  stack partition_p;
  epoch_elsewhere<table_of<3>> epoch;
  relacy_atomics::atomic<int> p_done{0};
  rl::var<bool> donated;
  rl::var<bool> reused_elsewhere;

  void before() {
    weakened_in_scope::reset();
    table.reset(false);
    for (block_index b = 3; b-- > 0;) partition_p.push(table, b, no_backoff);
    epoch.reset();
    donated($) = false;
    reused_elsewhere($) = false;
  }
  void thread(unsigned id) {
    if (id == owner_p) {
      const block_index b = partition_p.pop(table, no_backoff);
      if (b == no_block) return;
      table.claim(b);
      table.give_up(b);
      partition_p.push(table, b, no_backoff);  // freed on P again: P's order protects it
    } else if (id == donor) {
      block_chain rest;
      {
        weakened_in_scope w(Bug == donate_bug::push_back_relaxed ? weakening::release_dropped : weakening::none);
        rest = donate_from(partition_p, table, 1, no_backoff);
      }
      if (rest.empty()) return;
      donated($) = true;
      epoch.hand_over(table, rest, Bug == donate_bug::no_epoch);  // defer_chain: an event recorded on P now
    } else {
      elsewhere_or_device(id == other_stream, epoch, table, p_done, reused_elsewhere);
    }
  }
  void after() {
    std::array<int, 3> seen{};
    mark_stack(table, partition_p, seen);
    check_accounted(table, seen, epoch.mark(table, seen));
    if (donated($) && reused_elsewhere($)) ++reached;
  }
};

// ---- record_stream ------------------------------------------------------------------------------

// The mutex policy of basic_recorded_streams (std::mutex in the library).
struct model_mutex {
  rl::mutex m;
  void lock() { m.lock($); }
  void unlock() { m.unlock($); }
};

// The map policy (std::unordered_map<block_index, std::vector<stream_ref>> in the library): one
// entry at most, its stream list a fixed array. Forgetful: the seeded bug's map, whose try_emplace
// reports the key as already present (never fresh), so that record() adds the stream uncounted.
template <bool Forgetful>
struct one_entry_map {
  struct stream_list {
    int streams[2] = {};
    int n = 0;
    void push_back(int s) {
      RL_ASSERT(n < 2);
      streams[n++] = s;
    }
  };
  using value_type = std::pair<block_index, stream_list>;
  using iterator = value_type*;
  value_type slot;
  rl::var<bool> used;  // an access not under the mutex is a data race

  void reset() { used($) = false; }
  iterator end() { return nullptr; }
  iterator find(block_index k) { return used($) && slot.first == k ? &slot : nullptr; }
  std::pair<iterator, bool> try_emplace(block_index k) {
    if (used($)) return {&slot, false};
    slot = {k, {}};
    used($) = true;
    return {&slot, !Forgetful};
  }
  void erase(iterator) { used($) = false; }
  std::size_t erase(block_index k) {
    if (find(k) == end()) return 0;
    used($) = false;
    return 1;
  }
};

constexpr int stream_s2 = 2;

// 4 threads; the library's basic_recorded_streams (core/recorded_streams.hpp: record_stream's
// record, the free's any() and take) with Relacy's atomics and mutex and a one-entry map, and the
// library's tagged_stack as S's partition. A thread records block b (live, allocated on S) on S2
// and enqueues a kernel using it on S2, then hands b to a second thread (release/acquire), which
// frees it on S (push(c, b, s): any(), then wait_for_recorded's take, then S waits, device-side,
// for S2's work so far), allocates it on S again and enqueues a kernel on S. S2's and S's device
// threads run them. Forgetful: the seeded map (record_stream not counted).
template <bool Forgetful>
struct record_stream_model : rl::test_suite<record_stream_model<Forgetful>, 4> {
  enum : unsigned { recorder, freer, device_s2, device_s };
  static inline std::uint64_t reached = 0;  // iterations in which S's wait found S2's kernel running

  table_of<1> table;
  stack partition_s;
  basic_recorded_streams<relacy_atomics, model_mutex> recorded_streams;  // stream_free_lists::recorded_streams_
  one_entry_map<Forgetful> recorded;                                      // stream_free_lists::recorded_
  relacy_atomics::atomic<int> handed{0};
  relacy_atomics::atomic<int> s2_queue{0};
  relacy_atomics::atomic<int> s2_done{0};
  relacy_atomics::atomic<int> s_queue{0};
  rl::var<bool> s_waits;  // written before s_queue's release
  rl::var<bool> waited_busy;

  void before() {
    table.reset(true);
    recorded.reset();
    s_waits($) = false;
    waited_busy($) = false;
  }
  void thread(unsigned id) {
    if (id == recorder) {
      recorded_streams.record(recorded, block_index{0}, stream_s2);  // record_stream(b, S2)
      s2_queue.store(1, std::memory_order_release);                  // a kernel using b on S2
      handed.store(1, std::memory_order_release);
    } else if (id == freer) {
      while (handed.load(std::memory_order_acquire) == 0) rl::yield(1, $);
      if (recorded_streams.any()) {  // push(c, b, S): wait_for_recorded
        typename one_entry_map<Forgetful>::stream_list streams;
        if (recorded_streams.take(recorded, block_index{0}, streams)) {
          RL_ASSERT(streams.n == 1 && streams.streams[0] == stream_s2);
          s_waits($) = true;  // order_after(S, S2): S waits for S2's work so far
        }
      }
      table.give_up(0);
      partition_s.push(table, 0, no_backoff);
      const block_index b = partition_s.pop(table, no_backoff);  // allocate on S
      RL_ASSERT(b == 0);
      table.claim(b);
      s_queue.store(1, std::memory_order_release);  // a kernel using b on S
    } else if (id == device_s2) {
      while (s2_queue.load(std::memory_order_acquire) == 0) rl::yield(1, $);
      table.use(0);
      s2_done.store(1, std::memory_order_release);
    } else {
      while (s_queue.load(std::memory_order_acquire) == 0) rl::yield(1, $);
      if (s_waits($)) {
        if (s2_done.load(std::memory_order_relaxed) == 0) waited_busy($) = true;
        while (s2_done.load(std::memory_order_acquire) == 0) rl::yield(1, $);
      }
      table.use(0);
    }
  }
  void after() {
    if (waited_busy($)) ++reached;
  }
};

}  // namespace
}  // namespace cudapool::core::model

int main() {
  using namespace cudapool::core::model;
  model_checks m;
  m.sound<completed_steal_model<steal_bug::none>>(
      "stream steal (completed): take, query the donor, push back if busy", 100000,
      completed_steal_model<steal_bug::none>::reached);
  m.seeded<completed_steal_model<steal_bug::no_query>>("stream steal (completed) without the query",
                                                       rl::test_result_data_race, 100000);
  m.seeded<completed_steal_model<steal_bug::push_back_relaxed>>("stream steal: push-back without release",
                                                                rl::test_result_user_assert_failed, 100000);
  m.sound<ordered_steal_model<steal_bug::none>>("stream steal (ordered): take behind a device-side wait", 100000,
                                                ordered_steal_model<steal_bug::none>::reached);
  m.seeded<ordered_steal_model<steal_bug::no_wait>>("stream steal (ordered) without the wait",
                                                    rl::test_result_data_race, 100000);
  m.sound<retire_model<retire_bug::none>>("stream retire_stream racing an allocation on the retired stream", 100000,
                                          retire_model<retire_bug::none>::reached);
  m.seeded<retire_model<retire_bug::one_class_drained>>("stream retire_stream draining one class only",
                                                        rl::test_result_user_assert_failed, 100000);
  m.seeded<retire_model<retire_bug::no_epoch>>("stream retire_stream: blocks shared without an epoch",
                                               rl::test_result_data_race, 100000);
  m.sound<donate_model<donate_bug::none>>("stream donation: the surplus behind an epoch on its stream", 100000,
                                          donate_model<donate_bug::none>::reached);
  m.seeded<donate_model<donate_bug::no_epoch>>("stream donation without the epoch", rl::test_result_data_race, 100000);
  m.seeded<donate_model<donate_bug::push_back_relaxed>>("stream donation: the kept blocks pushed back without release",
                                                        rl::test_result_user_assert_failed, 100000);
  m.sound<record_stream_model<false>>("stream record_stream: the free waits for the recorded stream", 100000,
                                      record_stream_model<false>::reached);
  m.seeded<record_stream_model<true>>("stream record_stream not counted",
                                                         rl::test_result_data_race, 100000);
  return m.exit_code();
}
