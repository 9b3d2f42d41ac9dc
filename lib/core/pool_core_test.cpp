// Tests of the core's own mechanisms (epochs, growth, validation), through basic_pool with a
// trivial free-list policy, so that no variant is needed.
#include <cudapool/detail/core/pool_core.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <initializer_list>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <cudapool/detail/core/basic_pool.hpp>

namespace cudapool::core {
namespace {

// One global lock, vectors of indices: the simplest correct FreeLists.
class vector_lists {
 public:
  static constexpr std::string_view name = "vector";
  explicit vector_lists(pool_core& core) : blocks_(core.blocks()), lists_(core.classes().count()) {}
  block_index pop(size_class c) noexcept {
    std::lock_guard lock(mutex_);
    if (lists_[c].empty()) return no_block;
    const block_index b = lists_[c].back();
    lists_[c].pop_back();
    return b;
  }
  void push(size_class c, block_index b) noexcept {
    std::lock_guard lock(mutex_);
    lists_[c].push_back(b);
  }
  void push_chain(size_class c, block_chain ch) noexcept {
    std::lock_guard lock(mutex_);
    for (block_index b = ch.head; b != no_block; b = blocks_[b].next.load()) lists_[c].push_back(b);
  }
  block_chain take_all(size_class c) noexcept {
    std::lock_guard lock(mutex_);
    block_chain ch;
    for (block_index b : lists_[c]) {
      blocks_[b].next.store(ch.head);
      if (ch.empty()) ch.tail = b;
      ch.head = b;
      ++ch.count;
    }
    lists_[c].clear();
    return ch;
  }
  std::size_t free_blocks(size_class c) const noexcept {
    std::lock_guard lock(mutex_);
    return lists_[c].size();
  }
  std::size_t cached_blocks(size_class) const noexcept { return 0; }

 private:
  block_table& blocks_;
  mutable std::mutex mutex_;
  std::vector<std::vector<block_index>> lists_;
};

using test_pool = basic_pool<vector_lists>;

// The end of a test's streams: each one's open epoch closed, its work done, then destroyed.
void finish_streams(test_pool& pool, sim_backend& device, std::initializer_list<stream_ref> streams) {
  for (const stream_ref s : streams) pool.flush_stream(s);
  for (const stream_ref s : streams) {
    device.synchronize(s);
    device.destroy_stream(s);
  }
}

TEST(PoolCore, OneEventPerBatchOfStreamOrderedFrees) {
  auto device = std::shared_ptr<sim_backend>(make_sim_backend());
  pool_options o;
  o.epoch_batch = 64;
  test_pool pool(device, o);
  const stream_ref s = device->create_stream();
  std::vector<void*> ps;
  for (int i = 0; i < 200; ++i) ps.push_back(pool.allocate(4096));
  for (void* p : ps) pool.deallocate(p, s);
  EXPECT_EQ(pool.stats().events_recorded, 3u);  // 3 full batches of 64; 8 frees still open
  EXPECT_EQ(pool.stats().epochs_closed_full, 3u);
  EXPECT_EQ(pool.stats().classes[11].pending_blocks, 200u);
  pool.flush_stream(s);
  EXPECT_EQ(pool.stats().events_recorded, 4u);
  EXPECT_EQ(pool.stats().epochs_closed_other, 1u);  // the flush
  EXPECT_EQ(pool.stats().epochs_closed_slow_path, 0u);
  EXPECT_EQ(pool.stats().epochs_closed_bytes, 0u);
  device->synchronize(s);
  EXPECT_EQ(pool.trim(), std::size_t{2} << 20);  // trim reclaims first: all 200 are free again
  const pool_stats st = pool.stats();
  EXPECT_EQ(st.epochs_reclaimed, 4u);
  EXPECT_EQ(st.pending_epochs, 0u);
  EXPECT_EQ(st.classes[11].pending_blocks, 0u);
  device->destroy_stream(s);
}

// A miss with frees pending in an open epoch closes it (the slow path's step 2), counted apart
// from full epochs.
TEST(PoolCore, AMissClosesTheOpenEpochs) {
  auto device = std::shared_ptr<sim_backend>(make_sim_backend());
  test_pool pool(device);
  const stream_ref s = device->create_stream();
  void* p = pool.allocate(64 << 10);  // the class's first slab: this one block
  pool.deallocate(p, s);
  EXPECT_EQ(pool.stats().events_recorded, 0u);
  void* q = pool.allocate(64 << 10);
  const pool_stats st = pool.stats();
  EXPECT_EQ(st.events_recorded, 1u);
  EXPECT_EQ(st.epochs_closed_slow_path, 1u);
  EXPECT_EQ(st.epochs_closed_full + st.epochs_closed_bytes + st.epochs_closed_other, 0u);
  pool.deallocate(q);
  pool.flush_stream(s);
  device->synchronize(s);
  device->destroy_stream(s);
}

// A miss closes only the open epochs that can give its class something: one holding blocks of the
// class, and before a new slab one holding a large range (the slab may take it once the event
// completed: a slab's frame has nothing pending on any stream). An epoch of other classes' blocks
// stays open: no event for it.
TEST(PoolCore, AMissClosesOnlyTheEpochsThatCanServeIt) {
  auto device = std::shared_ptr<sim_backend>(make_sim_backend());
  test_pool pool(device);
  const stream_ref s = device->create_stream();
  const stream_ref t = device->create_stream();
  void* p = pool.allocate(64 << 10);  // class A's first slab: this one block
  pool.deallocate(p, s);               // s's open epoch holds class A
  void* q = pool.allocate(32 << 10);  // a miss of class B: s's epoch cannot serve it
  EXPECT_EQ(pool.stats().events_recorded, 0u);
  void* r = pool.allocate(64 << 10);  // a miss of class A: s's epoch holds p
  EXPECT_EQ(pool.stats().epochs_closed_slow_path, 1u);
  void* large = pool.allocate(std::size_t{4} << 20, t);
  pool.deallocate(large, t);               // t's open epoch holds a large range
  void* u = pool.allocate(16 << 10, t);  // a miss of class C, on t too: the range may serve it
  pool_stats st = pool.stats();
  EXPECT_EQ(st.epochs_closed_slow_path, 2u);
  EXPECT_EQ(st.events_recorded, 2u);
  pool.deallocate(u, t);                // t's new open epoch: class C, no range
  void* w = pool.allocate(4 << 10, s);  // a miss of class E: nothing to close
  EXPECT_EQ(pool.stats().events_recorded, 2u);
  for (void* x : {q, r, w}) pool.deallocate(x);
  finish_streams(pool, *device, {s, t});
}

// A miss that a block of its class serves closes no epoch of large ranges: those close only before
// a new slab (epoch_table::close_epochs_of_ranges). Closed by every miss before, they cost the replay
// of mlp_4stream 29 of its 56 events per 1000 operations.
TEST(PoolCore, AMissServedByItsClassClosesNoRangeEpoch) {
  auto device = std::shared_ptr<sim_backend>(make_sim_backend());
  pool_options o;
  o.poll_before_growth = std::chrono::seconds(60);  // the miss polls s's epoch until the sim completes it
  test_pool pool(device, o);
  const stream_ref s = device->create_stream();
  const stream_ref t = device->create_stream();
  const stream_ref u = device->create_stream();
  // Mapped bytes far above the range freed below, so that its epoch does not close by the byte rule.
  void* keep = pool.allocate(std::size_t{256} << 20);
  void* p = pool.allocate(64 << 10);  // class A's first slab: this one block
  pool.deallocate(p, s);              // s's open epoch: class A
  void* large = pool.allocate(std::size_t{4} << 20, t);
  pool.deallocate(large, t);  // t's open epoch: a large range
  const pool_stats before = pool.stats();
  EXPECT_EQ(before.events_recorded, 0u);
  void* q = pool.allocate(64 << 10, u);  // a miss of class A: s's epoch serves it
  EXPECT_EQ(q, p);
  const pool_stats st = pool.stats();
  EXPECT_EQ(st.epochs_closed_slow_path, 1u);
  EXPECT_EQ(st.events_recorded, 1u);  // s's epoch only
  EXPECT_EQ(st.grows, before.grows);  // no new slab
  pool.deallocate(q, u);
  pool.deallocate(keep);
  finish_streams(pool, *device, {s, t, u});
}

// A large request that fits no free range closes only the open epochs of large ranges freed on
// other streams: its own stream's ranges are its own at once, and blocks never become ranges.
TEST(PoolCore, ALargeMissClosesOnlyOtherStreamsRangeEpochs) {
  auto device = std::shared_ptr<sim_backend>(make_sim_backend());
  test_pool pool(device);
  const stream_ref s = device->create_stream();
  const stream_ref t = device->create_stream();
  const stream_ref u = device->create_stream();
  // Mapped bytes far above the ranges freed below, so that no epoch closes by the byte rule.
  void* keep = pool.allocate(std::size_t{256} << 20);
  void* a = pool.allocate(std::size_t{4} << 20, s);
  void* b = pool.allocate(std::size_t{4} << 20, t);
  void* x = pool.allocate(1024, u);
  pool.deallocate(a, s);  // s's open epoch: a range of its own
  pool.deallocate(b, t);  // t's: a range of another stream
  pool.deallocate(x, u);  // u's: a block
  void* big = pool.allocate(std::size_t{64} << 20, s);
  const pool_stats st = pool.stats();
  EXPECT_EQ(st.epochs_closed_slow_path, 1u);
  EXPECT_EQ(st.events_recorded, 1u);
  pool.deallocate(big, s);
  pool.deallocate(keep);
  finish_streams(pool, *device, {s, t, u});
}

// A miss on s takes a block freed on s from s's open epoch, with no event and no wait (s is paused:
// the free's work has not run). Another stream, and the null stream, never get it before the event.
TEST(PoolCore, AMissReusesABlockFreedOnItsOwnStreamAtOnce) {
  auto device = std::shared_ptr<sim_backend>(make_sim_backend());
  test_pool pool(device);
  const stream_ref s = device->create_stream();
  const stream_ref t = device->create_stream();
  void* p = pool.allocate(64 << 10, s);  // the class's first slab: this one block
  device->pause(s);
  pool.deallocate(p, s);
  void* on_t = pool.allocate(64 << 10, t);  // closes s's epoch: p waits behind its event
  EXPECT_NE(on_t, p);
  void* on_null = pool.allocate(64 << 10);
  EXPECT_NE(on_null, p);
  pool.deallocate(on_t, s);  // s's new open epoch
  pool.deallocate(on_null, s);
  const std::uint64_t events = pool.stats().events_recorded;
  void* again = pool.allocate(64 << 10, s);
  EXPECT_TRUE(again == on_t || again == on_null);
  void* again2 = pool.allocate(64 << 10, s);
  EXPECT_TRUE((again2 == on_t || again2 == on_null) && again2 != again);
  const pool_stats st = pool.stats();
  EXPECT_EQ(st.events_recorded, events);
  std::size_t pending = 0;
  for (const auto& c : st.classes) pending += c.pending_blocks;
  EXPECT_EQ(pending, 1u);  // p, behind the closed epoch's event
  device->resume(s);
  for (void* x : {again, again2}) pool.deallocate(x, s);
  finish_streams(pool, *device, {s, t});
}

// A miss on s also takes a block freed on s from one of s's closed epochs whose event s has not
// reached (s is paused): stream order protects it as in the open epoch. No growth, no event.
TEST(PoolCore, AMissReusesABlockFreedOnItsOwnStreamFromAClosedEpoch) {
  auto device = std::shared_ptr<sim_backend>(make_sim_backend());
  test_pool pool(device);
  const stream_ref s = device->create_stream();
  void* p = pool.allocate(64 << 10, s);  // the class's first slab: this one block
  device->pause(s);
  pool.deallocate(p, s);
  pool.flush_stream(s);  // closes the epoch: p waits behind its event
  const pool_stats before = pool.stats();
  void* again = pool.allocate(64 << 10, s);
  EXPECT_EQ(again, p);
  const pool_stats after = pool.stats();
  EXPECT_EQ(after.grows, before.grows);
  EXPECT_EQ(after.events_recorded, before.events_recorded);
  device->resume(s);
  pool.deallocate(again, s);
  finish_streams(pool, *device, {s});
}

// A small-class miss that closes another stream's epoch polls it before growing
// (poll_before_growth): t gets the block freed on s once s gets there (resumed 100 ms later), with
// no growth. A stream that never gets there costs the poll's budget, then the pool grows.
TEST(PoolCore, ASmallMissPollsTheEpochItClosedBeforeGrowing) {
  auto device = std::shared_ptr<sim_backend>(make_sim_backend());
  for (const bool resumed : {true, false}) {
    pool_options o;
    o.poll_before_growth = resumed ? std::chrono::nanoseconds(std::chrono::seconds(60))
                                   : std::chrono::nanoseconds(std::chrono::milliseconds(50));
    test_pool pool(device, o);
    const stream_ref s = device->create_stream();
    const stream_ref t = device->create_stream();
    void* p = pool.allocate(64 << 10, s);  // the class's first slab: this one block
    device->pause(s);
    pool.deallocate(p, s);
    const std::uint64_t grows = pool.stats().grows;
    std::thread resumer;
    if (resumed) {
      resumer = std::thread([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        device->resume(s);
      });
    }
    const auto start = std::chrono::steady_clock::now();
    void* q = pool.allocate(64 << 10, t);  // closes s's epoch: p waits behind its event
    const auto waited = std::chrono::steady_clock::now() - start;
    if (resumer.joinable()) resumer.join();
    if (resumed) {
      EXPECT_EQ(q, p);
      EXPECT_EQ(pool.stats().grows, grows);
    } else {
      EXPECT_NE(q, p);
      EXPECT_EQ(pool.stats().grows, grows + 1);
      EXPECT_GE(waited, std::chrono::milliseconds(50));  // it polled its budget first
      device->resume(s);
    }
    pool.deallocate(q, t);
    finish_streams(pool, *device, {s, t});
  }
}

// trim() closes the open epochs: a large range freed on a stream (fewer frees than epoch_batch, and
// no miss since) is given back once the stream has got there, without any other call.
TEST(PoolCore, TrimGivesBackWhatWaitsInAnOpenEpochOnceTheStreamGetsThere) {
  auto device = std::shared_ptr<sim_backend>(make_sim_backend());
  test_pool pool(device);
  const stream_ref s = device->create_stream();
  void* p = pool.allocate(std::size_t{16} << 20, s);
  pool.deallocate(p, s);
  ASSERT_GE(pool.stats().reserved_bytes, std::size_t{16} << 20);
  device->pause(s);
  pool.trim();  // closes the epoch; the range still waits for s
  EXPECT_GE(pool.stats().reserved_bytes, std::size_t{16} << 20);
  device->resume(s);
  device->synchronize(s);
  pool.trim();
  EXPECT_EQ(pool.stats().reserved_bytes, 0u);
  finish_streams(pool, *device, {s});
}

TEST(PoolCore, EpochsOfDifferentStreamsAreIndependent) {
  auto device = std::shared_ptr<sim_backend>(make_sim_backend());
  test_pool pool(device);
  const stream_ref a = device->create_stream();
  const stream_ref b = device->create_stream();
  void* pa = pool.allocate(1024);
  void* pb = pool.allocate(1024);
  device->pause(a);
  pool.deallocate(pa, a);
  pool.deallocate(pb, b);
  pool.flush_stream(a);
  pool.flush_stream(b);
  device->synchronize(b);
  pool.trim();  // reclaims b's epoch, not a's
  EXPECT_EQ(pool.stats().classes[3].pending_blocks, 1u);
  device->resume(a);
  device->synchronize(a);
  pool.trim();
  EXPECT_EQ(pool.stats().classes[3].pending_blocks, 0u);
  EXPECT_EQ(pool.stats().reserved_bytes, 0u);
  device->destroy_stream(a);
  device->destroy_stream(b);
}

TEST(PoolCore, DestructionWaitsForPendingFreesBeforeReleasingMemory) {
  auto device = std::shared_ptr<sim_backend>(make_sim_backend());
  const stream_ref s = device->create_stream();
  {
    test_pool pool(device);
    void* p = pool.allocate(4096);
    device->spin(s, std::chrono::milliseconds(20));
    device->fill(s, p, 4096, 1);  // runs after the spin: the chunk must still exist then
    pool.deallocate(p, s);
  }
  EXPECT_EQ(device->chunk_bytes(), 0u);
  EXPECT_EQ(device->verification_report().mismatched_ranges, 0u);
  device->destroy_stream(s);
}

TEST(PoolCore, InvalidOptionsAreRejected) {
  auto device = std::shared_ptr<sim_backend>(make_sim_backend());
  pool_options o;
  o.slab_bytes = 1 << 20;
  o.max_class_bytes = 2 << 20;
  EXPECT_THROW(test_pool(device, o), std::invalid_argument);
  o = {};
  o.slab_bytes = 100000;
  EXPECT_THROW(test_pool(device, o), std::invalid_argument);
  o = {};
  o.epoch_batch = 0;
  EXPECT_THROW(test_pool(device, o), std::invalid_argument);
  o.epoch_batch = std::size_t{1} << 23;  // the marks' count word holds 2^24 - 1
  EXPECT_THROW(test_pool(device, o), std::invalid_argument);
  o.epoch_batch = (std::size_t{1} << 23) - 1;
  EXPECT_NO_THROW(test_pool(device, o));
  o = {};
  o.poll_before_growth = std::chrono::nanoseconds(-1);
  EXPECT_THROW(test_pool(device, o), std::invalid_argument);
  o = {};
  o.remap_ratio = 0.5;  // mapped bytes can never be below the bytes in use: refused
  EXPECT_THROW(test_pool(device, o), std::invalid_argument);
  o.remap_ratio = std::numeric_limits<double>::infinity();  // "never remap" is 0
  EXPECT_THROW(test_pool(device, o), std::invalid_argument);
  // A byte limit below the smallest mapping (the sim's 2 MiB page; without virtual memory the
  // 2 MiB chunk) could never be met: every allocation failed with an out-of-memory report.
  o = {};
  o.byte_limit = std::size_t{1} << 20;
  EXPECT_THROW(test_pool(device, o), std::invalid_argument);
  o.virtual_memory = false;
  EXPECT_THROW(test_pool(device, o), std::invalid_argument);
  o.byte_limit = std::size_t{2} << 20;
  EXPECT_NO_THROW(test_pool(device, o));
  o.virtual_memory = true;
  EXPECT_NO_THROW(test_pool(device, o));
  for (const std::size_t first : {std::size_t{0}, std::size_t{100000}, std::size_t{4} << 20}) {
    o = {};
    o.first_slab_bytes = first;  // 0, no multiple of 64 KiB, above slab_bytes
    EXPECT_THROW(test_pool(device, o), std::invalid_argument) << first;
  }
  EXPECT_THROW(test_pool(nullptr, {}), std::invalid_argument);
}

// cudapool::validate holds the rules the constructor applies (tools and the plug-in call it on
// their input): the same options pass or fail, and the message names the option.
TEST(PoolCore, ValidateAppliesTheConstructorsRules) {
  auto device = std::shared_ptr<sim_backend>(make_sim_backend());
  EXPECT_NO_THROW(validate(pool_options{}));
  const auto message = [](const pool_options& o) {
    try {
      validate(o);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  pool_options o;
  o.remap_ratio = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(message(o).find("remap_ratio"), std::string::npos) << message(o);
  EXPECT_THROW(test_pool(device, o), std::invalid_argument);
  o = {};
  o.max_class_bytes = 3 << 10;  // the size classes' rule, not pool_core's
  EXPECT_NE(message(o).find("max_class_bytes must be a power of two"), std::string::npos) << message(o);
  o.max_class_bytes = 4 << 20;  // above the 2 MiB slab
  EXPECT_NE(message(o).find("must be >= the largest class"), std::string::npos) << message(o);
  o = {};
  o.first_slab_bytes = 100000;
  EXPECT_NE(message(o).find("first_slab_bytes"), std::string::npos) << message(o);
  // A byte limit below the backend's page: only a pool, which knows its backend, refuses it.
  o = {};
  o.byte_limit = std::size_t{1} << 20;
  EXPECT_NO_THROW(validate(o));
  EXPECT_THROW(test_pool(device, o), std::invalid_argument);
}

TEST(PoolCore, InitialReservationBeyondTheLimitIsAnOutOfMemory) {
  auto device = std::shared_ptr<sim_backend>(make_sim_backend());
  pool_options o;
  o.initial_reservation = 8 << 20;
  o.byte_limit = 4 << 20;
  EXPECT_THROW(test_pool(device, o), out_of_memory);
  o.byte_limit = 0;
  device->set_chunk_failure_probability(1.0);
  EXPECT_THROW(test_pool(device, o), out_of_memory);
  EXPECT_EQ(device->chunk_bytes(), 0u);
}

TEST(PoolCore, ReleaseThresholdGivesIdleSlabsBack) {
  auto device = std::shared_ptr<sim_backend>(make_sim_backend());
  pool_options o;
  o.release_threshold = 4 << 20;
  test_pool pool(device, o);
  std::vector<void*> ps;
  for (int i = 0; i < 40; ++i) ps.push_back(pool.allocate(256 << 10));  // 5 slabs of 8 blocks
  for (void* p : ps) pool.deallocate(p);
  EXPECT_EQ(pool.stats().reserved_bytes, std::size_t{10} << 20);
  void* q = pool.allocate(1024);  // growth: the slow path notices 10 MiB idle > 4 MiB
  EXPECT_LE(pool.stats().reserved_bytes, std::size_t{4} << 20);
  pool.deallocate(q);
}

// stats() counts what every thread holds (in-use and requested bytes, summed over the threads'
// counter blocks), blocks and large extents alike, and the peaks it samples stay once they are freed.
TEST(PoolCore, InUseAndItsPeaksCountEveryThreadsBlocks) {
  auto device = std::shared_ptr<sim_backend>(make_sim_backend());
  test_pool pool(device, {});
  constexpr int threads = 8;
  constexpr int blocks = 100;
  constexpr std::size_t large = std::size_t{3} << 20;  // above the largest class (1 MiB)
  std::vector<std::vector<void*>> held(threads);
  {
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        for (int i = 0; i < blocks; ++i) held[t].push_back(pool.allocate(1024));
        held[t].push_back(pool.allocate(large));
        held[t].push_back(pool.allocate(256));
      });
    }
    for (std::thread& t : ts) t.join();
  }
  const std::size_t in_use = threads * (blocks * std::size_t{1024} + large + 256);
  pool_stats s = pool.stats();
  EXPECT_EQ(s.in_use_bytes, in_use);
  EXPECT_EQ(s.requested_bytes, in_use);
  EXPECT_EQ(s.peak_in_use_bytes, in_use);
  EXPECT_EQ(s.peak_requested_bytes, in_use);
  {
    std::vector<std::thread> ts;  // freed on other threads than the ones that allocated
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        for (void* p : held[(t + 1) % threads]) pool.deallocate(p);
      });
    }
    for (std::thread& t : ts) t.join();
  }
  s = pool.stats();
  EXPECT_EQ(s.in_use_bytes, 0u);
  EXPECT_EQ(s.requested_bytes, 0u);
  EXPECT_EQ(s.peak_in_use_bytes, in_use);
  EXPECT_EQ(s.peak_requested_bytes, in_use);
}

// A class's slabs start at first_slab_bytes and double up to slab_bytes: a class used by one block
// holds 64 KiB, a busy one reaches full slabs after a few growths.
TEST(PoolCore, SlabsOfAClassDoubleFromTheFirstSize) {
  auto device = std::shared_ptr<sim_backend>(make_sim_backend());
  test_pool pool(device, {});
  std::vector<void*> ps{pool.allocate(256)};
  pool_stats s = pool.stats();
  EXPECT_EQ(s.heap.slab_bytes, std::size_t{64} << 10);
  EXPECT_EQ(s.classes[0].capacity_blocks, 256u);
  // 256 B blocks in slabs of 64, 128, 256 KiB (all in the first mapped page).
  while (ps.size() < 256 + 512 + 1024) ps.push_back(pool.allocate(256));
  s = pool.stats();
  EXPECT_EQ(s.classes[0].slabs, 3u);
  EXPECT_EQ(s.heap.slab_bytes, std::size_t{448} << 10);
  // ... and on up to 2 MiB, never beyond.
  while (ps.size() < 40000) ps.push_back(pool.allocate(256));
  s = pool.stats();
  EXPECT_LE(s.heap.slab_bytes, s.classes[0].slabs * (std::size_t{2} << 20));
  EXPECT_GE(s.heap.slab_bytes, std::size_t{40000} * 256);
  // A class larger than first_slab_bytes starts with one block's worth (rounded to 64 KiB).
  ps.push_back(pool.allocate(320 << 10));
  EXPECT_EQ(pool.stats().heap.slab_bytes - s.heap.slab_bytes, std::size_t{320} << 10);
  for (void* p : ps) pool.deallocate(p);
  // first_slab_bytes = slab_bytes: every slab is 2 MiB, as before the option.
  pool_options whole;
  whole.first_slab_bytes = whole.slab_bytes;
  test_pool big(device, whole);
  void* p = big.allocate(256);
  EXPECT_EQ(big.stats().heap.slab_bytes, whole.slab_bytes);
  big.deallocate(p);
}

// lookup() reaches a slab's block entries directly when the slab's index range lies in one segment
// of the block table (growth skips to the next segment rather than straddle one), and through the
// table when a slab has more blocks than a segment: both resolve every block and reject a second
// free.
TEST(PoolCore, LookupAcrossBlockTableSegments) {
  struct shape {
    std::size_t block_bytes, slab_bytes, allocations;
  };
  // 85 blocks per slab (65536 is no multiple of 85); then 131072 blocks per slab (> a segment).
  for (const shape sh : {shape{768, 64 << 10, 85 * 800}, shape{256, 32 << 20, 140000}}) {
    auto device = std::shared_ptr<sim_backend>(make_sim_backend());
    pool_options o;
    o.fixed_block_bytes = sh.block_bytes;
    o.max_class_bytes = sh.block_bytes;
    o.slab_bytes = sh.slab_bytes;
    o.on_invalid_free = [](const void*, invalid_free_reason, void* n) { ++*static_cast<int*>(n); };
    int invalid = 0;
    o.invalid_free_context = &invalid;
    test_pool pool(device, o);
    std::vector<void*> ps;
    for (std::size_t i = 0; i < sh.allocations; ++i) ps.push_back(pool.allocate(sh.block_bytes));
    for (void* p : ps) {
      const pointer_info info = pool.describe(p);
      ASSERT_EQ(info.base, p);
    }
    for (void* p : ps) pool.deallocate(p);
    EXPECT_EQ(invalid, 0);
    pool.deallocate(ps[ps.size() / 2]);
    pool.deallocate(ps.back());
    EXPECT_EQ(invalid, 2);
    EXPECT_EQ(pool.stats().in_use_bytes, 0u);
  }
}

}  // namespace
}  // namespace cudapool::core
