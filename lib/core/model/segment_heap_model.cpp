// segment_heap_model.cpp - Relacy model of the segment heap's split and coalesce against a
// concurrent stream-ordered free: a range freed on stream S is reusable at once by S, by any other
// stream only once S's epoch's event completed (epoch_table's reclaim stores the epoch in
// stream_epochs::completed, release; stream_tag::resolved() reads it, acquire). The tag rules are
// the library's (core/stream_tag.hpp: basic_stream_tag, safe_for, merge_tags), instantiated with
// Relacy's atomics; the heap's extents are a small model of segment_heap's (its free lists, index
// and backend do not run under Relacy), under one mutex as there: two neighbouring ranges, A (used
// by a kernel on S) and B (free, nothing pending).
//
// 4 threads:
//   S's host   frees A on S (segment_heap::free: tag A, coalesce with B by merge_tags), closes the
//              epoch (records its event), then allocates both ranges on S: safe_for must let it at
//              once, unless another stream took them (after the event)
//   S          the device: A's kernel, then the event completes once recorded
//   reclaimer  queries the event under the shard's lock and stores `completed` (collect_locked)
//   T's host   allocates both ranges on another stream (safe_for with its stream), splits off A and
//              uses it (its kernel, which the host thread stands for: ordered after what it saw)
//
// Seeded bugs, each of which must be reported as a data race on A's memory:
//   merge takes the free side's tag   coalescing pending A with free B into a range with nothing
//                                     pending (RMM #2489): T reuses A before the event
//   resolved() without acquire        T sees the epoch completed but not the kernel before it
#include <cudapool/detail/core/stream_tag.hpp>

#include <cudapool/detail/core/model/model_check.hpp>

namespace cudapool::core::model {
namespace {

enum class merge_rule { library, free_side_wins };

template <merge_rule Rule, class Atomics>
struct heap_model : rl::test_suite<heap_model<Rule, Atomics>, 4> {
  using tag = basic_stream_tag<Atomics>;
  enum : unsigned { host_s, device_s, reclaimer, host_t };
  static inline std::uint64_t reused_elsewhere = 0;  // iterations in which T split off and used A

  int stream_s = 0;  // their addresses are the streams' handles
  int stream_t = 0;

  // stream_epochs::completed of S (written under the shard's lock).
  typename Atomics::template atomic<std::uint64_t> completed{0};
  relacy_atomics::atomic<int> event_recorded{0};
  relacy_atomics::atomic<int> event_done{0};
  rl::mutex shard_mutex;

  // The heap, GUARDED_BY(heap_mutex): A and B free apart (with tags) or merged (one tag).
  rl::mutex heap_mutex;
  rl::var<bool> a_free;
  rl::var<bool> b_free;
  rl::var<bool> merged;
  tag a_tag, b_tag, ab_tag;  // GUARDED_BY(heap_mutex)
  rl::var<bool> s_got;       // S's host's allocation
  rl::var<bool> t_got;

  rl::var<int> memory_a;  // A's device memory

  void before() {
    a_free($) = false;
    b_free($) = true;
    merged($) = false;
    s_got($) = false;
    t_got($) = false;
    memory_a($) = 0;
  }
  void after() {
    if (t_got($)) ++reused_elsewhere;
  }

  bool merge(const tag& a, const tag& b, tag* out) {
    if (Rule == merge_rule::free_side_wins && (a.resolved() || b.resolved())) {
      *out = tag{};
      return true;
    }
    return merge_tags(a, b, /*absorb_resolved=*/true, out);  // the permissive rule: one stream's heap
  }

  // segment_heap::allocate of A and B for `use` (the model's request fits only the merged range),
  // then the split that hands A to the caller (`got`, under the lock); false when no range may be
  // used.
  bool allocate_both(stream_use use, rl::var<bool>& got) {
    heap_mutex.lock($);
    const bool ok = merged($) && safe_for(ab_tag, use);
    if (ok) merged($) = false;
    got($) = ok;
    const bool other_has_it = !ok && t_got($);
    heap_mutex.unlock($);
    if (&got == &s_got && !ok) RL_ASSERT(other_has_it);  // S may reuse at once: only T can have it
    return ok;
  }

  void thread(unsigned id) {
    if (id == host_s) {
      heap_mutex.lock($);  // free(A, large, tag of S's open epoch)
      const tag freed{&completed, 1, &stream_s, true};
      a_tag = freed.resolved() ? tag{} : freed;
      a_free($) = true;
      tag t;
      if (b_free($) && merge(a_tag, b_tag, &t)) {  // coalesce
        ab_tag = t;
        merged($) = true;
        a_free($) = false;
        b_free($) = false;
      }
      heap_mutex.unlock($);
      shard_mutex.lock($);  // close_locked: record the epoch's event on S
      event_recorded.store(1, std::memory_order_release);
      shard_mutex.unlock($);
      (void)allocate_both({&stream_s, true}, s_got);
    } else if (id == device_s) {
      memory_a($) = 1;  // the kernel on S that used A before its free
      while (event_recorded.load(std::memory_order_acquire) == 0) rl::yield(1, $);
      event_done.store(1, std::memory_order_release);
    } else if (id == reclaimer) {
      for (int attempt = 0; attempt < 2; ++attempt) {
        shard_mutex.lock($);  // reclaim: query the event, collect the epoch
        const bool done = event_recorded.load(std::memory_order_acquire) == 1 &&
                          event_done.load(std::memory_order_acquire) == 1;
        if (done) completed.store(1, std::memory_order_release);
        shard_mutex.unlock($);
        if (done) return;
        rl::yield(1, $);
      }
    } else {
      for (int attempt = 0; attempt < 2; ++attempt) {
        if (allocate_both({&stream_t, true}, t_got)) {
          memory_a($) = 2;  // T's kernel on the range split off at A
          return;
        }
        rl::yield(1, $);
      }
    }
  }
};

}  // namespace
}  // namespace cudapool::core::model

int main() {
  using namespace cudapool::core::model;
  model_checks m;
  m.sound<heap_model<merge_rule::library, relacy_atomics>>(
      "segment heap: a range freed on S, coalesced, reused at once by S, by T after the event", 100000,
      heap_model<merge_rule::library, relacy_atomics>::reused_elsewhere);
  m.seeded<heap_model<merge_rule::free_side_wins, relacy_atomics>>(
      "segment heap: pending range merged into a free one, handed to T before the event (RMM #2489)",
      rl::test_result_data_race, 100000);
  m.seeded<heap_model<merge_rule::library, load_acquire_dropped_atomics>>("segment heap: resolved() without acquire",
                                                                 rl::test_result_data_race, 100000);
  return m.exit_code();
}
