// tls_transfer_model.cpp - Relacy model of the tls pool's transfer layer, the lock-free stack layer
// (variants/tls/batch_stack.hpp, pool_options::transfer_layer::lockfree_stack): whole batches
// handed between threads on nodes of two tagged stacks. batch_stack is the library's class,
// instantiated with Relacy's atomics and a batch whose contents are rl::vars (any read of a batch
// not ordered after its writer's, or write not ordered after the previous reader's, is a data
// race). The moodycamel queue layer (the default) and the mutex layer are not modelled: the first is
// moodycamel's own (model-checked by its author with Relacy), the second takes a mutex.
//
// 3 threads: the owner of a cache overflows twice (put: batches 1 and 2), another thread refills
// twice (take), a third takes one batch and gives it back (put), so that nodes are recycled through
// `spare` while batches are in flight. Checked: every batch taken holds what its put wrote, none is
// taken twice, none is lost (at the end the batches taken and those still held are {1, 2, 3}: the
// third thread's is its own copy, 3 for what it put back).
//
// Seeded bugs, each of which must be reported as a data race on a batch:
//   put's push without release    the owner's batch is not published with its node
//   take's spare push w/o release the next filler of the node overwrites the batch under the
//                                 taker's copy
#include <cudapool/detail/tls/batch_stack.hpp>

#include <cudapool/detail/core/model/model_check.hpp>

namespace cudapool::core::model {
namespace {

constexpr backoff_policy no_backoff{0, 0};

// What a batch holds (a count standing for its block array), as an rl::var.
struct model_batch {
  rl::var<int> value;
  model_batch() { value($) = 0; }
  explicit model_batch(int v) { value($) = v; }
  model_batch(const model_batch& o) { value($) = o.value($); }
  model_batch& operator=(const model_batch& o) {
    value($) = o.value($);
    return *this;
  }
  int get() const { return value($); }
};

enum class transfer_bug { none, put_relaxed, spare_relaxed };

template <transfer_bug Bug>
struct transfer_model : rl::test_suite<transfer_model<Bug>, 3> {
  enum : unsigned { owner, refiller, recycler };
  static inline std::uint64_t recycled = 0;  // iterations in which a node was refilled after a take

  batch_stack<model_batch, in_scope_atomics, 2> layer;  // segments of 4 nodes
  rl::var<int> taken[3];  // per thread: the batches it took for good, by value (bit v)

  // The three nodes the threads use, made now and spare: growth (a new segment of the node table,
  // a mutex and an allocation) is not what the model checks, and its constructors would be
  // scheduling points enough to keep the threads from overlapping.
  void before() {
    weakened_in_scope::reset();
    for (auto& t : taken) t($) = 0;
    for (int k = 0; k < 3; ++k) RL_ASSERT(layer.put(model_batch(0), no_backoff));
    for (model_batch got; layer.take(got, no_backoff);) {
    }
  }
  void put(int v) {
    weakened_in_scope w(Bug == transfer_bug::put_relaxed ? weakening::release_dropped : weakening::none);
    RL_ASSERT(layer.put(model_batch(v), no_backoff));
  }
  bool take(model_batch& out) {
    weakened_in_scope w(Bug == transfer_bug::spare_relaxed ? weakening::release_dropped : weakening::none);
    return layer.take(out, no_backoff);
  }
  void keep(unsigned id, int v) {
    RL_ASSERT(v >= 1 && v <= 3);
    RL_ASSERT((taken[id]($) & (1 << v)) == 0);  // taken twice
    taken[id]($) = taken[id]($) | (1 << v);
  }
  void thread(unsigned id) {
    if (id == owner) {
      put(1);
      put(2);
    } else if (id == refiller) {
      for (int k = 0; k < 2; ++k) {
        model_batch got;
        if (take(got)) keep(id, got.get());
      }
    } else {
      model_batch got;
      if (!take(got)) return;
      RL_ASSERT(got.get() == 1 || got.get() == 2);
      put(3);  // gives back a batch of its own: the node it used is refilled meanwhile
      keep(id, got.get());
    }
  }
  void after() {
    int mask = 0;
    for (auto& t : taken) {
      RL_ASSERT((mask & t($)) == 0);  // taken by two threads
      mask |= t($);
    }
    for (model_batch got; layer.take(got, no_backoff);) {
      RL_ASSERT((mask & (1 << got.get())) == 0);
      mask |= 1 << got.get();
    }
    // 1 and 2 always (taken or still held); 3 when the recycler took one and put it back.
    RL_ASSERT((mask & 6) == 6);
    if ((mask & 8) != 0) ++recycled;
  }
};

}  // namespace
}  // namespace cudapool::core::model

int main() {
  using namespace cudapool::core::model;
  model_checks m;
  m.sound<transfer_model<transfer_bug::none>>("tls transfer layer (stack): batches handed over, nodes recycled", 100000,
                                              transfer_model<transfer_bug::none>::recycled);
  m.seeded<transfer_model<transfer_bug::put_relaxed>>("tls transfer layer: put's push without release",
                                                      rl::test_result_data_race, 100000);
  m.seeded<transfer_model<transfer_bug::spare_relaxed>>("tls transfer layer: take's spare push without release",
                                                        rl::test_result_data_race, 100000);
  return m.exit_code();
}
