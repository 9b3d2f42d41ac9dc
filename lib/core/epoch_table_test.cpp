// Tests of the epoch table alone: a block table and a heap, no pool and no free lists. Blocks are
// made by hand (an entry's class and state), deferred on sim streams that a test may pause, and
// reclaimed into a sink that records what it got.
#include <cudapool/detail/core/epoch_table.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

namespace cudapool::core {
namespace {

struct recording_sink final : free_list_sink {
  std::vector<std::pair<size_class, block_index>> got;  // (class, block), in chain order
  void push_chain(size_class c, block_chain chain) noexcept override {
    block_index b = chain.head;
    for (std::size_t i = 0; i < chain.count; ++i) {
      got.emplace_back(c, b);
      b = table->operator[](b).next.load();
    }
  }
  block_table* table = nullptr;
};

struct counting_observer final : epoch_observer {
  int released_calls = 0;
  int reclaimed_calls = 0;
  void released() noexcept override { ++released_calls; }
  void reclaimed() override { ++reclaimed_calls; }
};

constexpr std::size_t class_count = 4;

struct fixture {
  explicit fixture(pool_options o = {}) : table(*device, blocks, heap, class_count, o, observer) {
    blocks.grow_to(64);
    sink.table = &blocks;
  }
  // Block b of class c, retired to pending (as basic_pool's deallocate does before defer).
  block_index pending_block(block_index b, size_class c) {
    block_entry& e = blocks[b];
    e.address_and_class = (std::uint64_t{b + 1} << 16) | c;
    e.meta.store(block_entry::pack(block_state::pending, 0));
    return b;
  }
  // A new stream; a paused one runs nothing (its events stay incomplete) until resumed.
  stream_ref stream(bool paused = false) {
    const stream_ref s = device->create_stream();
    if (paused) device->pause(s);
    return s;
  }
  [[nodiscard]] pool_stats stats() const {
    pool_stats st;
    st.classes.resize(class_count);
    table.add_stats(st);
    return st;
  }
  void finish(std::initializer_list<stream_ref> streams) {
    for (const stream_ref s : streams) {
      table.flush_stream(s);
      device->synchronize(s);
      device->destroy_stream(s);
    }
  }

  std::shared_ptr<sim_backend> device{make_sim_backend()};
  block_table blocks;
  segment_heap heap{*device, segment_heap::config{}};
  counting_observer observer;
  epoch_table table;
  recording_sink sink;
};

// A deferred block goes back to the free lists only once the event of its epoch completed, free
// again and in a chain of its own class; the observer hears of the release and of every reclaim.
TEST(EpochTable, DeferredBlocksComeBackOnlyAfterTheirEventCompleted) {
  fixture f;
  const stream_ref s = f.stream(/*paused=*/true);
  f.table.defer(f.pending_block(0, 1), s);
  f.table.defer(f.pending_block(1, 2), s);
  f.table.defer(f.pending_block(2, 1), s);
  EXPECT_EQ(f.stats().classes[1].pending_blocks, 2u);
  EXPECT_EQ(f.stats().classes[2].pending_blocks, 1u);
  f.table.close_open_epochs();
  EXPECT_EQ(f.stats().pending_epochs, 1u);
  EXPECT_EQ(f.table.reclaim(f.sink), 0u);  // the stream is paused: its event is not complete
  EXPECT_TRUE(f.sink.got.empty());
  EXPECT_EQ(f.observer.released_calls, 0);
  EXPECT_EQ(f.observer.reclaimed_calls, 1);
  f.device->resume(s);
  f.device->synchronize(s);
  EXPECT_EQ(f.table.reclaim(f.sink), 1u);
  ASSERT_EQ(f.sink.got.size(), 3u);
  for (const auto& [c, b] : f.sink.got) {
    EXPECT_EQ(c, f.blocks[b].size_class());
    EXPECT_EQ(block_entry::state_of(f.blocks[b].meta.load()), block_state::free);
  }
  EXPECT_EQ(f.observer.released_calls, 1);
  const pool_stats st = f.stats();
  EXPECT_EQ(st.pending_epochs, 0u);
  EXPECT_EQ(st.classes[1].pending_blocks + st.classes[2].pending_blocks, 0u);
  EXPECT_EQ(st.epochs_reclaimed, 1u);
  EXPECT_EQ(st.epochs_closed_slow_path, 1u);
  EXPECT_EQ(st.events_recorded, 1u);
  f.finish({s});
}

// epoch_batch frees close their epoch (one event), counted as full.
TEST(EpochTable, AFullEpochClosesItself) {
  pool_options o;
  o.epoch_batch = 4;
  fixture f(o);
  const stream_ref s = f.stream();
  for (block_index b = 0; b < 9; ++b) f.table.defer(f.pending_block(b, 0), s);
  pool_stats st = f.stats();
  EXPECT_EQ(st.epochs_closed_full, 2u);  // 8 of 9; the ninth waits in the open epoch
  EXPECT_EQ(st.events_recorded, 2u);
  f.table.flush_stream(s);
  st = f.stats();
  EXPECT_EQ(st.epochs_closed_other, 1u);
  EXPECT_EQ(st.events_recorded, 3u);
  f.device->synchronize(s);
  EXPECT_EQ(f.table.reclaim(f.sink), 3u);
  EXPECT_EQ(f.sink.got.size(), 9u);
  f.finish({s});
}

// A large free (a mark) fills its epoch like a block, also while one stream alone has freed into
// the heap: the range is its own stream's at once, but the slabs (every stream's) may take it only
// once its epoch's event completed, and an epoch that never closes never lets them. s25's rule (marks
// counted only once a second stream came) left the four marks below in an open epoch; in a PyTorch
// process (one stream) the slabs then mapped ten pages more (docs/design.md, "Epochs of one stream").
TEST(EpochTable, LargeFreesFillTheEpochWithOneStreamInTheHeap) {
  pool_options o;
  o.epoch_batch = 4;
  fixture f(o);
  const stream_ref s = f.stream();
  auto free_large = [&](stream_ref on) {  // as pool_core's stream-ordered large free
    void* p = f.heap.allocate(std::size_t{1} << 20, 256, segment_heap::kind::large, {on.native(), true}, true);
    EXPECT_NE(p, nullptr);
    epoch_table::stream_state* state = nullptr;
    const stream_tag tag = f.table.mark_stream_free(on, &state);
    EXPECT_EQ(f.heap.free(p, segment_heap::kind::large, tag), segment_heap::free_result::freed);
  };
  for (int i = 0; i < 3; ++i) free_large(s);
  EXPECT_EQ(f.stats().epochs_closed_full, 0u);
  free_large(s);  // the fourth mark
  EXPECT_FALSE(f.heap.several_streams());
  EXPECT_EQ(f.stats().epochs_closed_full, 1u);
  EXPECT_EQ(f.stats().events_recorded, 1u);
  for (int i = 0; i < 2; ++i) free_large(s);
  for (block_index b = 0; b < 2; ++b) f.table.defer(f.pending_block(b, 0), s);  // marks and blocks together
  EXPECT_EQ(f.stats().epochs_closed_full, 2u);
  f.finish({s});
}

// A miss on s takes a block of its class freed on s, from the open or a closed epoch, with no
// event; never a block of another class, and never one freed on another stream.
TEST(EpochTable, OwnEpochsServeTheirStreamAlone) {
  fixture f;
  const stream_ref s = f.stream(/*paused=*/true);
  const stream_ref t = f.stream();
  f.table.defer(f.pending_block(7, 2), s);
  f.table.defer(f.pending_block(5, 1), s);  // the latest: a search that ignored the class finds it
  EXPECT_EQ(f.table.take_from_own_epochs(1, t), no_block);
  EXPECT_EQ(f.table.take_from_own_epochs(3, s), no_block);
  EXPECT_EQ(f.table.take_from_own_epochs(1, stream_ref{}), no_block);
  EXPECT_EQ(f.table.take_from_own_epochs(2, s), 7u);
  EXPECT_EQ(f.table.take_from_own_epochs(2, s), no_block);
  EXPECT_EQ(f.table.take_from_own_epochs(1, s), 5u);
  EXPECT_EQ(block_entry::state_of(f.blocks[5].meta.load()), block_state::free);
  EXPECT_EQ(f.stats().classes[1].pending_blocks, 0u);
  f.table.defer(f.pending_block(6, 1), s);
  f.table.close_open_epochs();  // a closed epoch whose event is not complete
  EXPECT_EQ(f.table.take_from_own_epochs(1, t), no_block);
  EXPECT_EQ(f.table.take_from_own_epochs(1, s), 6u);
  EXPECT_EQ(f.stats().events_recorded, 1u);
  f.device->resume(s);
  f.finish({s, t});
}

// A miss of class c closes only the open epochs holding blocks of c: one event each.
TEST(EpochTable, AMissOfAClassClosesOnlyEpochsHoldingIt) {
  fixture f;
  const stream_ref s = f.stream();
  const stream_ref t = f.stream();
  f.table.defer(f.pending_block(0, 1), s);
  f.table.defer(f.pending_block(1, 2), t);
  EXPECT_EQ(f.table.close_epochs_for(3), 0u);
  EXPECT_EQ(f.table.close_epochs_for(1), 1u);
  EXPECT_EQ(f.table.close_epochs_for(1), 0u);  // closed already; t's holds class 2
  EXPECT_EQ(f.table.close_epochs_of_ranges(), 0u);  // no large range in either
  const pool_stats st = f.stats();
  EXPECT_EQ(st.epochs_closed_slow_path, 1u);
  EXPECT_EQ(st.events_recorded, 1u);
  f.finish({s, t});
}

// wait_stream blocks until that stream's epochs completed and returns their blocks; the other
// stream's stay pending. describe's question, which stream holds a pending block, is answered.
TEST(EpochTable, WaitStreamReturnsThatStreamsBlocksAlone) {
  fixture f;
  const stream_ref s = f.stream();
  const stream_ref t = f.stream(/*paused=*/true);
  f.table.defer(f.pending_block(0, 1), s);
  f.table.defer(f.pending_block(1, 1), t);
  EXPECT_EQ(f.table.pending_stream_of(0), f.device->stream_id(s));
  EXPECT_EQ(f.table.pending_stream_of(1), f.device->stream_id(t));
  EXPECT_EQ(f.table.pending_stream_of(2), 0u);
  EXPECT_EQ(f.table.wait_stream(s, f.sink), 1u);
  ASSERT_EQ(f.sink.got.size(), 1u);
  EXPECT_EQ(f.sink.got[0].second, 0u);
  EXPECT_EQ(f.stats().classes[1].pending_blocks, 1u);
  oom_report r;
  f.table.add_holdings(r, {}, [](size_class) { return std::size_t{4096}; });
  ASSERT_EQ(r.streams.size(), 1u);  // s holds nothing now
  EXPECT_EQ(r.streams[0].stream_id, f.device->stream_id(t));
  EXPECT_EQ(r.streams[0].pending_bytes, 4096u);
  f.device->resume(t);
  EXPECT_EQ(f.table.wait_pending(f.sink), 1u);
  EXPECT_EQ(f.sink.got.size(), 2u);
  f.finish({s, t});
}

// order_after makes the waiter's later work wait for the producer's (a device-side wait), counted
// as a stream wait and an event.
TEST(EpochTable, OrderAfterMakesTheWaiterWaitOnTheDevice) {
  fixture f;
  const stream_ref producer = f.stream(/*paused=*/true);
  const stream_ref waiter = f.stream();
  f.device->spin(producer, std::chrono::microseconds(100));  // work the waiter must not overtake
  f.table.order_after(waiter, producer);
  EXPECT_FALSE(f.device->query_stream(waiter));  // behind the paused producer
  f.device->resume(producer);
  f.device->synchronize(waiter);
  const pool_stats st = f.stats();
  EXPECT_EQ(st.stream_waits, 1u);
  EXPECT_EQ(st.events_recorded, 1u);
  f.finish({producer, waiter});
}

}  // namespace
}  // namespace cudapool::core
