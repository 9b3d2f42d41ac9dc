#include <cudapool/stream_pool.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include <cudapool/detail/testing/conformance.hpp>

namespace cudapool::testing {

using stream_configs = ::testing::Types<on_sim<stream_pool>, on_cuda<stream_pool>>;
INSTANTIATE_TYPED_TEST_SUITE_P(stream, conformance, stream_configs);

namespace {

struct StreamPool : ::testing::Test {
  // One class of 1 MiB blocks, two per slab: the tests of which stream gets which block.
  static pool_options two_block_slabs() {
    pool_options o;
    o.fixed_block_bytes = 1 << 20;
    o.first_slab_bytes = o.slab_bytes;
    return o;
  }
  std::shared_ptr<sim_backend> device{make_sim_backend()};
  stream_ref a = device->create_stream();
  stream_ref b = device->create_stream();
  void TearDown() override {
    device->destroy_stream(a);
    device->destroy_stream(b);
  }
};

TEST_F(StreamPool, SameStreamReuseIsImmediateAndNeedsNoEvent) {
  stream_pool pool(device);
  device->pause(a);  // even with the stream stalled, its own frees are reusable on it
  void* p = pool.allocate(4096, a);
  pool.deallocate(p, a);
  EXPECT_EQ(pool.allocate(4096, a), p);
  EXPECT_EQ(pool.stats().events_recorded, 0u);
  pool.deallocate(p, a);
  device->resume(a);
  pool.retire_stream(a);
}

TEST_F(StreamPool, PressureStealsFromAnotherStreamWithADeviceSideWaitNotAHostSync) {
  pool_options o;
  o.fixed_block_bytes = 1 << 20;
  o.initial_reservation = 2 << 20;  // two blocks, no growth
  o.allow_growth = false;
  stream_pool pool(device, o);
  void* p = pool.allocate(1, a);
  void* q = pool.allocate(1, a);
  device->pause(a);
  device->fill(a, p, 1 << 20, 0xA);  // a's last use of p, still pending
  pool.deallocate(p, a);
  // b needs a block: the pool must not wait on the host for a (paused: that would hang); it makes b
  // wait for a on the device and hands p over.
  void* r = pool.allocate(1, b);
  EXPECT_EQ(r, p);
  EXPECT_EQ(pool.stats().events_recorded, 1u);
  EXPECT_EQ(pool.stats().stream_waits, 1u);  // the only way left: counted
  device->fill(b, r, 1 << 20, 0xB);  // must run after a's fill
  device->resume(a);
  device->synchronize_device();
  device->verify(b, r, 1 << 20, 0xB);
  EXPECT_EQ(device->verification_report().mismatched_ranges, 0u);
  pool.deallocate(q);
  pool.deallocate(r, b);
  pool.retire_stream(a);
  pool.retire_stream(b);
}

TEST_F(StreamPool, PressureReclaimsCompletedEpochsBeforeStealing) {
  pool_options o;
  o.fixed_block_bytes = 1 << 20;
  o.initial_reservation = 2 << 20;
  o.allow_growth = false;
  stream_pool pool(device, o);
  void* p = pool.allocate(1, a);
  void* q = pool.allocate(1, b);
  pool.deallocate(q, b);
  pool.retire_stream(b);  // q leaves b's partition behind one event (b is idle: it completes)
  device->synchronize(b);
  device->pause(a);
  pool.deallocate(p, a);  // p sits in a's partition behind a paused stream
  EXPECT_EQ(pool.allocate(1), q);  // the completed epoch serves first; nothing from a is taken
  EXPECT_EQ(pool.stats().classes[0].cached_blocks, 1u);
  device->resume(a);
  pool.deallocate(q);
  pool.retire_stream(a);
}

// While memory can be had otherwise, no stream waits on another (issue 15: RMM #850's
// over-synchronisation): a busy stream's free block is left alone and the pool grows.
TEST_F(StreamPool, GrowsRatherThanWaitOnABusyStream) {
  stream_pool pool(device, two_block_slabs());
  void* p = pool.allocate(1, a);
  void* q = pool.allocate(1, a);
  const std::uint64_t grows = pool.stats().grows;
  device->pause(a);
  device->fill(a, p, 1 << 20, 0xA);  // a still uses p
  pool.deallocate(p, a);
  void* r = pool.allocate(1, b);
  EXPECT_NE(r, p);
  EXPECT_EQ(pool.stats().grows, grows + 1);
  EXPECT_EQ(pool.stats().stream_waits, 0u);
  device->resume(a);
  pool.deallocate(r, b);
  pool.deallocate(q);
  pool.retire_stream(a);
  pool.retire_stream(b);
}

// stats().stream_queries counts the queries of other streams' progress: a miss asks each
// partition that holds blocks of the class (tried and not kept: at most two per miss,
// docs/design.md), grows while they are busy, and takes an idle one's block without growth.
TEST_F(StreamPool, StreamQueriesCountTheBusyStreamsAMissAsks) {
  stream_pool pool(device, two_block_slabs());
  std::vector<stream_ref> donors;
  std::vector<void*> freed;  // each donor's block freed on it behind paused work
  std::vector<void*> held;   // the slabs' other blocks: nothing is left in the shared stack
  for (int i = 0; i < 5; ++i) {
    const stream_ref d = device->create_stream();
    donors.push_back(d);
    freed.push_back(pool.allocate(1, d));
    held.push_back(pool.allocate(1, d));
    device->pause(d);
    device->fill(d, freed.back(), 1 << 20, 0xD);
    pool.deallocate(freed.back(), d);
  }
  const pool_stats before = pool.stats();
  held.push_back(pool.allocate(1, b));  // 5 busy partitions: each asked, then growth
  const pool_stats after = pool.stats();
  EXPECT_EQ(after.stream_queries - before.stream_queries, 5u);
  EXPECT_EQ(after.grows, before.grows + 1);
  EXPECT_EQ(after.stream_waits, 0u);
  held.push_back(pool.allocate(1, b));  // the new slab's other block
  device->resume(donors[3]);
  device->synchronize(donors[3]);
  const pool_stats was = pool.stats();
  void* q = pool.allocate(1, b);
  EXPECT_EQ(q, freed[3]) << "the idle stream's block";
  EXPECT_EQ(pool.stats().grows, was.grows);
  EXPECT_GE(pool.stats().stream_queries - was.stream_queries, 1u);
  EXPECT_LE(pool.stats().stream_queries - was.stream_queries, 5u);
  held.push_back(q);
  for (const stream_ref d : donors) device->resume(d);
  device->synchronize_device();
  for (void* p : held) pool.deallocate(p);
  for (const stream_ref s : donors) pool.retire_stream(s);
  for (const stream_ref s : donors) device->destroy_stream(s);
  pool.retire_stream(b);
}

// A busy stream's partition does not hoard while another stream grows: its blocks beyond one
// refill batch join an epoch on it (one event, no wait) and serve the other stream once that
// completes, with no growth; never before.
TEST_F(StreamPool, ABusyStreamsSurplusServesAnotherOnceItsEventCompletes) {
  stream_pool pool(device, two_block_slabs());  // 1 MiB blocks: a refill batch of one
  std::vector<void*> mine;
  for (int i = 0; i < 4; ++i) mine.push_back(pool.allocate(1, a));
  device->pause(a);
  for (void* p : mine) device->fill(a, p, 1 << 20, 0xA);
  for (void* p : mine) pool.deallocate(p, a);
  const pool_stats before = pool.stats();
  // b finds nothing: a is busy, so a's surplus (3 of 4) is donated behind an event and b grows
  // (two slabs: nothing of b's own is left over).
  std::vector<void*> theirs;
  for (int i = 0; i < 4; ++i) theirs.push_back(pool.allocate(1, b));
  for (void* r : theirs) EXPECT_EQ(std::count(mine.begin(), mine.end(), r), 0) << "handed out before a's event";
  const pool_stats during = pool.stats();
  EXPECT_EQ(during.events_recorded, before.events_recorded + 1);
  EXPECT_EQ(during.stream_waits, 0u);
  EXPECT_EQ(during.classes[0].cached_blocks, 1u);  // a keeps its batch
  device->resume(a);
  device->synchronize(a);
  // Once a has passed the event, the donated blocks serve b without growth.
  std::vector<void*> donated;
  for (int i = 0; i < 3; ++i) donated.push_back(pool.allocate(1, b));
  for (void* r : donated) EXPECT_EQ(std::count(mine.begin(), mine.end(), r), 1) << "not a donated block";
  EXPECT_EQ(pool.stats().grows, during.grows);
  EXPECT_EQ(pool.stats().stream_waits, 0u);
  for (void* r : donated) device->fill(b, r, 1 << 20, 0xB);
  device->synchronize_device();
  for (void* r : donated) device->verify(b, r, 1 << 20, 0xB);
  EXPECT_EQ(device->verification_report().mismatched_ranges, 0u);
  for (void* r : donated) pool.deallocate(r, b);
  for (void* r : theirs) pool.deallocate(r, b);
  pool.retire_stream(a);
  pool.retire_stream(b);
}

// With several streams in the heap, a large range's epoch closes once its ranges hold a share of
// the mapped bytes (the stream variant's small frees never close epochs): another stream reuses the
// range as soon as the freeing stream has reached it, not only after a miss records the event.
TEST_F(StreamPool, ALargeFreeOnAStreamServesAnotherOnceTheStreamHasReachedIt) {
  stream_pool pool(device);
  constexpr std::size_t big = 8 << 20;
  // Both streams in the heap, with ranges too small for the request below.
  for (stream_ref s : {a, b}) pool.deallocate(pool.allocate(2 << 20, s), s);
  device->synchronize_device();
  void* p = pool.allocate(big, a);
  device->fill(a, p, big, 0xA);
  const pool_stats before = pool.stats();
  pool.deallocate(p, a);  // one free, far below epoch_batch: closed for its bytes
  EXPECT_EQ(pool.stats().events_recorded, before.events_recorded + 1);
  EXPECT_EQ(pool.stats().epochs_closed_bytes, before.epochs_closed_bytes + 1);
  device->synchronize(a);  // a has reached the free
  device->pause(a);        // and is busy from now on: an event recorded now would not complete
  const std::uint64_t maps = pool.stats().heap.maps;
  void* q = pool.allocate(big, b);
  EXPECT_EQ(pool.stats().heap.maps, maps) << "grew while p's range was reusable";
  device->fill(b, q, big, 0xB);
  device->resume(a);
  device->synchronize_device();
  device->verify(b, q, big, 0xB);
  EXPECT_EQ(device->verification_report().mismatched_ranges, 0u);
  pool.deallocate(q, b);
  pool.retire_stream(a);
  pool.retire_stream(b);
}

// The partition reuses a stream's small frees without an epoch, so an epoch of large ranges would
// fill with large frees alone; every epoch_batch stream-ordered frees on the stream close it
// instead, as in the other variants, whose epochs hold those frees too. No event for a stream whose
// epoch holds no range.
TEST_F(StreamPool, ARangesEpochClosesAfterEpochBatchFreesOnItsStream) {
  stream_pool pool(device);
  const std::size_t batch = pool.options().epoch_batch;
  std::vector<void*> small;
  for (std::size_t i = 0; i < 2 * batch; ++i) small.push_back(pool.allocate(4096, a));
  std::vector<void*> others;
  for (std::size_t i = 0; i < batch; ++i) others.push_back(pool.allocate(4096, b));
  pool.deallocate(pool.allocate(4 << 20, a), a);  // a large range pending on a's open epoch
  const pool_stats before = pool.stats();
  for (std::size_t i = 0; i + 1 < batch; ++i) pool.deallocate(small[i], a);
  EXPECT_EQ(pool.stats().events_recorded, before.events_recorded);
  pool.deallocate(small[batch - 1], a);  // the epoch_batch-th free on a
  EXPECT_EQ(pool.stats().events_recorded, before.events_recorded + 1);
  EXPECT_EQ(pool.stats().epochs_closed_full, before.epochs_closed_full + 1);
  for (void* q : others) pool.deallocate(q, b);  // b's epoch holds no range: no event
  for (std::size_t i = batch; i < small.size(); ++i) pool.deallocate(small[i], a);  // nor a's new one
  EXPECT_EQ(pool.stats().events_recorded, before.events_recorded + 1);
  pool.retire_stream(a);
  pool.retire_stream(b);
}

// A stream that has run all its work gives its partition's blocks to another stream without a
// wait and without growth (a stream query, no event).
TEST_F(StreamPool, AnIdleStreamsBlocksServeAnotherWithoutAWait) {
  stream_pool pool(device, two_block_slabs());
  void* p = pool.allocate(1, a);
  void* q = pool.allocate(1, a);
  device->fill(a, p, 1 << 20, 0xA);
  pool.deallocate(p, a);
  device->synchronize(a);
  const pool_stats before = pool.stats();
  void* r = pool.allocate(1, b);
  EXPECT_EQ(r, p);
  const pool_stats after = pool.stats();
  EXPECT_EQ(after.grows, before.grows);
  EXPECT_EQ(after.stream_waits, 0u);
  EXPECT_EQ(after.events_recorded, before.events_recorded);
  pool.deallocate(r, b);
  pool.deallocate(q);
  pool.retire_stream(a);
  pool.retire_stream(b);
}

// Under a byte limit that leaves no other way, the pool still serves: it waits (on the device)
// rather than fail.
TEST_F(StreamPool, UnderAByteLimitItWaitsRatherThanFail) {
  pool_options o;
  o.fixed_block_bytes = 1 << 20;
  o.byte_limit = 2 << 20;
  stream_pool pool(device, o);
  void* p = pool.allocate(1, a);
  void* q = pool.allocate(1, a);
  device->pause(a);  // a is behind (however loaded the host): its fill of p is pending
  device->fill(a, p, 1 << 20, 0xA);
  pool.deallocate(p, a);
  void* r = pool.allocate(1, b);
  EXPECT_EQ(r, p);
  EXPECT_EQ(pool.stats().ooms, 0u);
  EXPECT_EQ(pool.stats().stream_waits, 1u);
  device->fill(b, r, 1 << 20, 0xB);  // after a's fill, through the device-side wait
  device->resume(a);
  device->synchronize_device();
  device->verify(b, r, 1 << 20, 0xB);
  EXPECT_EQ(device->verification_report().mismatched_ranges, 0u);
  pool.deallocate(r, b);
  pool.deallocate(q);
  pool.retire_stream(a);
  pool.retire_stream(b);
}

TEST_F(StreamPool, RecordStreamMakesTheFreeWaitForTheOtherStream) {
  stream_pool pool(device);
  void* p = pool.allocate(4096, a);
  pool.record_stream(p, b);
  device->pause(b);
  device->fill(b, p, 4096, 0xB);  // b still uses p
  pool.deallocate(p, a);
  void* again = pool.allocate(4096, a);  // same-stream reuse on a ...
  EXPECT_EQ(again, p);
  device->fill(a, again, 4096, 0xA);  // ... but a's new work waits for b's use
  device->resume(b);
  device->synchronize_device();
  device->verify(a, again, 4096, 0xA);
  EXPECT_EQ(device->verification_report().mismatched_ranges, 0u);
  EXPECT_THROW(pool.record_stream(static_cast<char*>(again) + 256, b), std::invalid_argument);
  pool.deallocate(again, a);
  pool.retire_stream(a);
  pool.retire_stream(b);
}

// record_stream covers large allocations too: the stream-ordered free waits for the other stream.
TEST_F(StreamPool, RecordStreamOfALargeAllocation) {
  stream_pool pool(device);
  constexpr std::size_t big = std::size_t{3} << 20;
  void* p = pool.allocate(big, a);
  pool.record_stream(p, b);
  EXPECT_THROW(pool.record_stream(static_cast<char*>(p) + 4096, b), std::invalid_argument);
  device->pause(b);
  device->fill(b, p, big, 0xB);  // b still uses p
  pool.deallocate(p, a);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a alone would be done by now
  // The range may come back on a at once (stream order) only because a now waits for b on the
  // device: a's write must land after b's.
  void* other = pool.allocate(big, a);
  device->fill(a, other, big, 0xC);
  device->resume(b);
  device->synchronize_device();
  device->verify(a, other, big, 0xC);
  EXPECT_EQ(device->verification_report().mismatched_ranges, 0u) << "reused while the recorded stream still used it";
  pool.deallocate(other, a);
  pool.retire_stream(a);
  pool.retire_stream(b);
  EXPECT_EQ(pool.stats().in_use_bytes, 0u);
}

TEST_F(StreamPool, RetiredStreamLeavesNothingStrandedAndAReusedHandleStartsAfresh) {
  stream_pool pool(device);
  std::vector<void*> ps;
  for (int i = 0; i < 100; ++i) ps.push_back(pool.allocate(4096, a));
  for (void* p : ps) pool.deallocate(p, a);
  // The 100, plus what is left of the last batch the partition took from the shared stack (4 KiB
  // blocks come in batches of 16).
  const std::size_t held = pool.stats().classes[11].cached_blocks;
  EXPECT_GE(held, 100u);
  EXPECT_LT(held, 100u + 16);
  const std::uint64_t events_before = pool.stats().events_recorded;
  pool.retire_stream(a);
  pool_stats s = pool.stats();
  EXPECT_EQ(s.events_recorded, events_before + 1);  // one final event for all of them
  EXPECT_EQ(s.classes[11].cached_blocks, 0u);
  EXPECT_EQ(s.classes[11].pending_blocks, held);
  device->destroy_stream(a);
  a = device->create_stream();  // may reuse the handle value; never the id
  device->synchronize_device();
  pool.trim();
  s = pool.stats();
  EXPECT_EQ(s.classes[11].pending_blocks, 0u);
  EXPECT_EQ(s.reserved_bytes, 0u);
  void* p = pool.allocate(4096, a);
  pool.deallocate(p, a);
  EXPECT_EQ(pool.stats().classes[11].cached_blocks, 16u);  // a new partition: one batch
  pool.retire_stream(a);
}

// An empty partition takes a batch of consecutive blocks from the shared stack, so that streams
// used by different threads do not share host entry cache lines block by block.
TEST_F(StreamPool, AnEmptyPartitionTakesABatchFromTheSharedStack) {
  pool_options o;
  o.first_slab_bytes = o.slab_bytes;  // one slab of 512 blocks: b's batch comes from the shared stack
  stream_pool pool(device, o);
  void* pa = pool.allocate(4096, a);
  void* pb = pool.allocate(4096, b);
  const pool_stats st = pool.stats();
  EXPECT_EQ(st.classes[11].cached_blocks, 30u);  // 15 more in each partition
  // b's block comes after a's whole batch, not right after a's block.
  EXPECT_EQ(static_cast<char*>(pb) - static_cast<char*>(pa), 16 * 4096);
  pool.deallocate(pa, a);
  pool.deallocate(pb, b);
  pool.retire_stream(a);
  pool.retire_stream(b);
}

TEST_F(StreamPool, OutOfMemorySaysWhereTheMemoryIs) {
  pool_options o;
  o.byte_limit = 2 << 20;
  o.first_slab_bytes = o.slab_bytes;  // p and q share one slab: freeing p releases nothing
  stream_pool pool(device, o);
  void* p = pool.allocate(1 << 20, a);
  void* q = pool.allocate(1 << 20, a);
  pool.deallocate(p, a);
  try {
    (void)pool.allocate(4096, b);  // needs a new slab: over the limit; a's free block is another class
    FAIL();
  } catch (const out_of_memory& e) {
    // The pressure path trimmed: a was synchronized and p is free for every stream now.
    const std::string what = e.what();
    EXPECT_NE(what.find("free 1.00 MiB"), std::string::npos) << what;
    EXPECT_NE(what.find("1.00 MiB: 1/1/0/0/2"), std::string::npos) << what;
  }
  pool.deallocate(q, a);
  pool.retire_stream(a);
  pool.retire_stream(b);
}

// out_of_memory says, per stream, what is free in its partition and what is in use there.
TEST_F(StreamPool, OutOfMemoryListsInUseBytesPerStream) {
  pool_options o;
  o.byte_limit = 4 << 20;
  stream_pool pool(device, o);
  std::vector<void*> on_a;
  std::vector<void*> on_b;
  for (int i = 0; i < 3; ++i) on_a.push_back(pool.allocate(64 << 10, a));
  on_b.push_back(pool.allocate(64 << 10, b));
  void* no_stream = pool.allocate(64 << 10);  // on the default stream
  try {
    for (;;) on_b.push_back(pool.allocate(1 << 20, b));  // a second class until the limit
  } catch (const out_of_memory& e) {
    const oom_report* r = e.report();
    ASSERT_NE(r, nullptr);
    auto holding = [&](stream_ref s) {
      const std::uint64_t id = device->stream_id(s);
      for (const auto& h : r->streams) {
        if (h.stream_id == id) return h;
      }
      return oom_report::stream_holding{};
    };
    EXPECT_EQ(holding(a).in_use_bytes, 3u * (64 << 10)) << to_json(*r);
    EXPECT_EQ(holding(b).in_use_bytes, (64u << 10) + (on_b.size() - 1) * (1u << 20)) << to_json(*r);
    const std::string what = e.what();
    EXPECT_NE(what.find(std::to_string(device->stream_id(a)) + ": "), std::string::npos) << what;
    EXPECT_NE(what.find(std::to_string(3 * (64 << 10)) + " B in use"), std::string::npos) << what;
    EXPECT_EQ(holding(stream_ref{}).in_use_bytes, 64u << 10) << to_json(*r);  // the default stream's partition
  }
  for (void* p : on_a) pool.deallocate(p, a);
  for (void* p : on_b) pool.deallocate(p, b);
  pool.deallocate(no_stream);
  pool.retire_stream(a);
  pool.retire_stream(b);
}

}  // namespace
}  // namespace cudapool::testing
