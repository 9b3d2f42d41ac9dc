// sim_backend_test.cpp - the simulated device's contract. Run under ThreadSanitizer too: every
// cross-stream access here is ordered by an event, so TSan must stay silent.

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <cudapool/detail/backend/backend_checks.hpp>
#include <cudapool/backend.hpp>

namespace cudapool {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

constexpr std::size_t chunk_size = std::size_t{64} << 10;

// A chunk that goes back to the backend at scope exit.
class chunk {
 public:
  chunk(backend& b, std::size_t bytes) : backend_(b), bytes_(bytes), p_(b.allocate_chunk(bytes)) {}
  ~chunk() { backend_.free_chunk(p_, bytes_); }
  chunk(const chunk&) = delete;
  chunk& operator=(const chunk&) = delete;
  [[nodiscard]] void* get() const noexcept { return p_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

 private:
  backend& backend_;
  std::size_t bytes_;
  void* p_;
};

void* offset(void* p, std::size_t bytes) { return static_cast<char*>(p) + bytes; }

TEST(SimBackend, NameAndDevice) {
  auto b = make_sim_backend();
  EXPECT_EQ(b->name(), "sim");
  EXPECT_EQ(b->device(), 0);
}

// Two simulated devices: each backend's streams are of its device; work launched or recorded on
// the other device's stream is refused as CUDA refuses it, while synchronizing, querying and
// waiting on it (device-side, for an event of another device) are allowed. Device 1's kernels may
// read device 0's memory (the sim models peer access as always enabled).
TEST(SimBackend, StreamsBelongToTheirDevice) {
  sim_options o;
  o.device = 1;
  const auto d0 = make_sim_backend();
  const auto d1 = make_sim_backend(o);
  EXPECT_EQ(d1->device(), 1);
  const stream_ref s0 = d0->create_stream();
  const stream_ref s1 = d1->create_stream();
  EXPECT_EQ(d0->stream_device(s0), 0);
  EXPECT_EQ(d0->stream_device({}), 0);
  EXPECT_EQ(d0->stream_device(s1), 1);
  EXPECT_EQ(d1->stream_device({}), 1);
  chunk c(*d0, chunk_size);
  event_handle e = d0->acquire_event();
  EXPECT_THROW(d0->record(e, s1), std::invalid_argument);
  EXPECT_THROW(d0->fill(s1, c.get(), 256, 1), std::invalid_argument);
  EXPECT_THROW(d0->verify(s1, c.get(), 256, 1), std::invalid_argument);
  EXPECT_THROW(d0->spin(s1, 1us), std::invalid_argument);
  EXPECT_THROW(d0->fill_guard(s1, c.get(), 16, 1), std::invalid_argument);
  EXPECT_THROW(d0->check_guard(s1, c.get(), 16, 1, 7), std::invalid_argument);

  d0->fill(s0, c.get(), 256, 0xABCD0123u);
  d0->record(e, s0);
  d1->stream_wait(s1, e);  // device 1's stream waits for device 0's event
  d1->verify(s1, c.get(), 256, 0xABCD0123u);
  d0->synchronize(s1);
  EXPECT_TRUE(d0->query_stream(s1));
  EXPECT_EQ(d1->verification_report().mismatched_ranges, 0u);
  d0->release_event(e);
  d0->destroy_stream(s0);
  d1->destroy_stream(s1);
}

TEST(SimBackend, FillThenVerifyPasses) {
  auto b = make_sim_backend();
  chunk c(*b, chunk_size);
  ASSERT_NE(c.get(), nullptr);
  b->fill({}, c.get(), c.bytes(), 0xA5A5A5A5u);
  b->verify({}, c.get(), c.bytes(), 0xA5A5A5A5u);
  const verify_report report = b->verification_report();
  EXPECT_EQ(report.mismatched_ranges, 0u);
  EXPECT_TRUE(report.first.empty());
}

TEST(SimBackend, VerifyRecordsTheFirstWrongWord) {
  auto b = make_sim_backend();
  const stream_ref s = b->create_stream();
  chunk c(*b, chunk_size);
  b->fill(s, c.get(), c.bytes(), 0x11111111u);
  b->fill(s, offset(c.get(), 40 * 4), 8, 0x22222222u);  // words 40 and 41
  b->verify(s, c.get(), c.bytes(), 0x11111111u);
  const verify_report report = b->verification_report();
  ASSERT_EQ(report.mismatched_ranges, 1u);
  ASSERT_EQ(report.first.size(), 1u);
  const verify_mismatch& m = report.first[0];
  EXPECT_EQ(m.block, reinterpret_cast<std::uintptr_t>(c.get()));
  EXPECT_EQ(m.bytes, c.bytes());
  EXPECT_EQ(m.word_offset, 40u);
  EXPECT_EQ(m.expected, 0x11111111u);
  EXPECT_EQ(m.found, 0x22222222u);
  b->destroy_stream(s);
}

TEST(SimBackend, VerifyKeepsSixteenRecordsAndCountsAll) {
  auto b = make_sim_backend();
  chunk c(*b, chunk_size);
  b->fill({}, c.get(), c.bytes(), 1);
  for (int i = 0; i < 20; ++i) b->verify({}, c.get(), 256, 2);
  const verify_report report = b->verification_report();
  EXPECT_EQ(report.mismatched_ranges, 20u);
  EXPECT_EQ(report.first.size(), 16u);
}

TEST(SimBackend, RangesMustBeWholeWords) {
  auto b = make_sim_backend();
  chunk c(*b, chunk_size);
  EXPECT_THROW(b->fill({}, c.get(), 6, 0), std::invalid_argument);
  EXPECT_THROW(b->verify({}, c.get(), 3, 0), std::invalid_argument);
  EXPECT_THROW(b->fill({}, offset(c.get(), 2), 8, 0), std::invalid_argument);
}

TEST(SimBackend, EventBehindSpinCompletesOnlyAfterIt) {
  auto b = make_sim_backend();
  const stream_ref s = b->create_stream();
  event_handle e = b->acquire_event();
  const auto start = clock_type::now();
  b->spin(s, 200ms);
  b->record(e, s);
  const bool early = b->query(e);
  // Only a query that provably ran before the spin could end must see the event incomplete.
  if (clock_type::now() - start < 200ms) {
    EXPECT_FALSE(early);
  }
  b->wait(e);
  EXPECT_GE(clock_type::now() - start, 200ms);
  EXPECT_TRUE(b->query(e));
  b->release_event(e);
  b->destroy_stream(s);
}

TEST(SimBackend, NeverRecordedEventIsComplete) {
  auto b = make_sim_backend();
  event_handle e = b->acquire_event();
  EXPECT_TRUE(b->query(e));
  b->wait(e);
  b->stream_wait({}, e);
  b->synchronize({});
  b->release_event(e);
}

TEST(SimBackend, PausedStreamHoldsItsEventsUntilResumed) {
  auto b = make_sim_backend();
  const stream_ref s = b->create_stream();
  event_handle e = b->acquire_event();
  b->pause(s);
  b->record(e, s);
  EXPECT_FALSE(b->query(e));
  auto sync = std::async(std::launch::async, [&] { b->synchronize(s); });
  // Bounded checks: nothing may complete while the stream is paused.
  EXPECT_EQ(sync.wait_for(20ms), std::future_status::timeout);
  EXPECT_FALSE(b->query(e));
  b->resume(s);
  sync.get();
  EXPECT_TRUE(b->query(e));
  b->release_event(e);
  b->destroy_stream(s);
}

TEST(SimBackend, PauseLetsTheRunningOperationFinishAndNothingAfter) {
  auto b = make_sim_backend();
  const stream_ref s = b->create_stream();
  event_handle before = b->acquire_event();
  event_handle after = b->acquire_event();
  b->record(before, s);
  b->spin(s, 50ms);
  b->record(after, s);
  b->wait(before);
  b->pause(s);  // lands before or during the spin
  std::this_thread::sleep_for(100ms);  // bounded check: longer than the spin that may be running
  EXPECT_FALSE(b->query(after));
  b->resume(s);
  b->wait(after);
  b->release_event(before);
  b->release_event(after);
  b->destroy_stream(s);
}

// A writes after a delay; B waits for A's event and reads. Under TSan this is also the check that
// the event is the edge between the two workers.
TEST(SimBackend, StreamWaitOrdersTheWaiterAfterTheRecordedWork) {
  auto b = make_sim_backend();
  const stream_ref a = b->create_stream();
  const stream_ref w = b->create_stream();
  chunk c(*b, chunk_size);
  event_handle e = b->acquire_event();
  b->spin(a, 50ms);
  b->fill(a, c.get(), c.bytes(), 0xC0FFEEu);
  b->record(e, a);
  b->stream_wait(w, e);
  b->verify(w, c.get(), c.bytes(), 0xC0FFEEu);
  EXPECT_EQ(b->verification_report().mismatched_ranges, 0u);
  b->release_event(e);
  b->destroy_stream(a);
  b->destroy_stream(w);
}

// cudaStreamWaitEvent waits for the record current at the call; a later record does not move it.
TEST(SimBackend, StreamWaitCapturesTheRecordAtCallTime) {
  auto b = make_sim_backend();
  const stream_ref a = b->create_stream();
  const stream_ref w = b->create_stream();
  const stream_ref other = b->create_stream();
  event_handle e = b->acquire_event();
  event_handle after_wait = b->acquire_event();
  b->pause(a);
  b->record(e, a);
  b->stream_wait(w, e);
  b->record(e, other);  // re-recorded while the first record is still pending on a paused stream
  b->wait(e);           // the latest record completes...
  EXPECT_TRUE(b->query(e));
  b->record(after_wait, w);
  auto waiter = std::async(std::launch::async, [&] { b->wait(after_wait); });
  EXPECT_EQ(waiter.wait_for(20ms), std::future_status::timeout);  // ...but w still waits for the first
  EXPECT_FALSE(b->query(after_wait));
  b->resume(a);
  waiter.get();
  b->release_event(e);
  b->release_event(after_wait);
  b->destroy_stream(a);
  b->destroy_stream(w);
  b->destroy_stream(other);
}

// Ping-pong over one buffer through events on four streams, with random latency: correct data
// and, under TSan, no race.
TEST(SimBackend, EventChainAcrossStreamsWithLatency) {
  auto b = make_sim_backend({.seed = 7, .max_latency = 200us});
  std::vector<stream_ref> streams;
  for (int i = 0; i < 4; ++i) streams.push_back(b->create_stream());
  chunk c(*b, 4096);
  event_handle e = b->acquire_event();
  b->fill(streams[0], c.get(), c.bytes(), 0);
  b->record(e, streams[0]);
  for (std::uint32_t step = 0; step < 40; ++step) {
    // Each step re-records e on the next stream, often while the previous record is in flight.
    const stream_ref s = streams[(step + 1) % streams.size()];
    b->stream_wait(s, e);
    b->verify(s, c.get(), c.bytes(), step);
    b->fill(s, c.get(), c.bytes(), step + 1);
    b->record(e, s);
  }
  EXPECT_EQ(b->verification_report().mismatched_ranges, 0u);
  b->release_event(e);
  for (const stream_ref s : streams) b->destroy_stream(s);
}

// Host threads enqueue on one stream concurrently; each checks its own region in stream order.
TEST(SimBackend, HostThreadsShareAStream) {
  auto b = make_sim_backend({.seed = 5, .max_latency = 20us});
  const stream_ref s = b->create_stream();
  chunk c(*b, chunk_size);
  std::vector<std::thread> threads;
  for (std::uint32_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      void* region = offset(c.get(), t * 1024);
      for (std::uint32_t i = 0; i < 100; ++i) {
        b->fill(s, region, 1024, t * 1000 + i);
        b->verify(s, region, 1024, t * 1000 + i);
      }
      b->synchronize(s);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(b->verification_report().mismatched_ranges, 0u);
  b->destroy_stream(s);
}

TEST(SimBackend, SynchronizeDeviceWaitsForEveryStream) {
  auto b = make_sim_backend();
  const stream_ref s = b->create_stream();
  const auto start = clock_type::now();
  b->spin(s, 30ms);
  b->spin({}, 30ms);
  b->synchronize_device();
  EXPECT_GE(clock_type::now() - start, 30ms);
  b->destroy_stream(s);
}

TEST(SimBackend, ChunksAreAlignedAndCounted) {
  auto b = make_sim_backend();
  EXPECT_EQ(b->chunk_bytes(), 0u);
  void* p = b->allocate_chunk(100'000);
  void* q = b->allocate_chunk(4096);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % (64 << 10), 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(q) % (64 << 10), 0u);
  EXPECT_EQ(b->chunk_bytes(), 104'096u);
  b->free_chunk(p, 100'000);
  EXPECT_EQ(b->chunk_bytes(), 4096u);
  b->free_chunk(q, 4096);
  EXPECT_EQ(b->chunk_bytes(), 0u);
}

TEST(SimBackend, ChunkFailureProbability) {
  auto b = make_sim_backend({.chunk_failure_probability = 1.0});
  EXPECT_EQ(b->allocate_chunk(4096), nullptr);
  EXPECT_EQ(b->chunk_bytes(), 0u);
  b->set_chunk_failure_probability(0.0);
  void* p = b->allocate_chunk(4096);
  EXPECT_NE(p, nullptr);
  b->free_chunk(p, 4096);
  EXPECT_THROW(b->set_chunk_failure_probability(1.5), std::invalid_argument);
  EXPECT_THROW((void)make_sim_backend({.chunk_failure_probability = -0.1}), std::invalid_argument);
}

TEST(SimBackend, ChunkByteLimit) {
  auto b = make_sim_backend({.chunk_byte_limit = 1 << 20});
  void* p = b->allocate_chunk(512 << 10);
  void* q = b->allocate_chunk(512 << 10);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(b->allocate_chunk(1), nullptr);
  b->free_chunk(p, 512 << 10);
  p = b->allocate_chunk(256 << 10);
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(b->allocate_chunk(std::size_t{2} << 20), nullptr);
  b->set_chunk_byte_limit(0);  // unlimited
  void* big = b->allocate_chunk(std::size_t{2} << 20);
  EXPECT_NE(big, nullptr);
  b->free_chunk(big, std::size_t{2} << 20);
  b->free_chunk(p, 256 << 10);
  b->free_chunk(q, 512 << 10);
  EXPECT_EQ(b->chunk_bytes(), 0u);
}

TEST(SimBackend, LeftoverChunksAreFreedWithTheBackend) {
  auto b = make_sim_backend();
  EXPECT_NE(b->allocate_chunk(4096), nullptr);  // a leak checker would report it otherwise
}

TEST(SimBackend, StreamIdsAreUniqueAndNeverReused) {
  auto b = make_sim_backend();
  std::set<std::uint64_t> seen{b->stream_id({})};
  for (int i = 0; i < 8; ++i) {
    const stream_ref s = b->create_stream();
    EXPECT_TRUE(seen.insert(b->stream_id(s)).second);
    b->destroy_stream(s);  // the next stream may get this handle back, never this id
  }
  auto other = make_sim_backend();
  EXPECT_TRUE(seen.insert(other->stream_id({})).second);
  EXPECT_THROW(b->destroy_stream({}), std::invalid_argument);
}

TEST(SimBackend, EventsComeBackFromThePool) {
  auto b = make_sim_backend();
  event_handle e = b->acquire_event();
  b->record(e, {});
  b->wait(e);
  b->release_event(e);
  event_handle again = b->acquire_event();
  EXPECT_EQ(again, e);
  event_handle second = b->acquire_event();
  EXPECT_NE(second, e);
  // A reused event behaves like a fresh one once recorded again.
  const stream_ref s = b->create_stream();
  b->pause(s);
  b->record(again, s);
  EXPECT_FALSE(b->query(again));
  b->resume(s);
  b->wait(again);
  EXPECT_TRUE(b->query(again));
  b->release_event(again);
  b->release_event(second);
  b->destroy_stream(s);
}

TEST(SimBackend, OperationsRunInOrderWithLatency) {
  auto b = make_sim_backend({.seed = 3, .max_latency = 100us});
  const stream_ref s = b->create_stream();
  chunk c(*b, 4096);
  for (std::uint32_t i = 0; i < 50; ++i) b->fill(s, c.get(), c.bytes(), i);
  b->verify(s, c.get(), c.bytes(), 49);
  EXPECT_EQ(b->verification_report().mismatched_ranges, 0u);
  b->destroy_stream(s);
}

TEST(SimBackend, DestroyingTheBackendDrainsPausedStreams) {
  auto b = make_sim_backend();
  const stream_ref a = b->create_stream();
  const stream_ref w = b->create_stream();
  event_handle e = b->acquire_event();
  b->pause(a);
  b->record(e, a);
  b->stream_wait(w, e);
  b.reset();  // must not hang: destruction resumes every stream before draining them
}

// ---- debug: guard bytes ----

TEST(SimBackend, GuardFilledThenCheckedIsClean) {
  auto b = make_sim_backend({.max_latency = 20us});
  chunk c(*b, 4096);
  // Unaligned pointers and sizes, and an empty guard.
  for (const auto& [at, bytes] : {std::pair<std::size_t, std::size_t>{3, 37}, {1, 1}, {64, 256}, {7, 4001 - 7}, {9, 0}}) {
    b->fill_guard({}, offset(c.get(), at), bytes, 0xCD);
    b->check_guard({}, offset(c.get(), at), bytes, 0xCD, at);
  }
  b->synchronize({});
  EXPECT_TRUE(b->take_guard_failures().empty());
}

TEST(SimBackend, GuardDamagedByAFillIsReportedOnceWithTagAndOffset) {
  auto b = make_sim_backend();
  chunk c(*b, 4096);
  void* guard = offset(c.get(), 5);
  b->fill_guard({}, guard, 100, 0xCD);
  // A word write at offset 8 of the chunk: guard bytes 3..6.
  b->fill({}, offset(c.get(), 8), 4, 0x11223344u);
  b->check_guard({}, guard, 100, 0xCD, 77);
  b->synchronize({});
  const std::vector<guard_failure> failures = b->take_guard_failures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].tag, 77u);
  EXPECT_EQ(failures[0].byte_offset, 3u);
  EXPECT_EQ(failures[0].found, 0x44);  // the word's lowest byte (little-endian)
  EXPECT_TRUE(b->take_guard_failures().empty()) << "reported twice";
}

TEST(SimBackend, GuardChecksReportInStreamOrderEachWithItsOwnTag) {
  auto b = make_sim_backend();
  chunk c(*b, 4096);
  void* guard = offset(c.get(), 1);
  b->fill_guard({}, guard, 200, 0xAB);
  b->check_guard({}, guard, 200, 0xAB, 1);     // clean
  b->fill_guard({}, offset(guard, 150), 10, 0xEE);  // damages bytes 150..159
  b->check_guard({}, guard, 200, 0xAB, 2);
  b->fill_guard({}, offset(guard, 20), 1, 0x00);    // and byte 20
  b->check_guard({}, guard, 200, 0xAB, 3);
  b->check_guard({}, offset(guard, 160), 40, 0xAB, 4);  // the tail is still clean
  b->synchronize({});
  const std::vector<guard_failure> failures = b->take_guard_failures();
  ASSERT_EQ(failures.size(), 2u);
  checks::expect_failure(failures[0], 2u, 150u, 0xEE);
  checks::expect_failure(failures[1], 3u, 20u, 0x00);
}

TEST(SimBackend, TakeGuardFailuresDoesNotWaitForQueuedChecks) {
  auto b = make_sim_backend();
  const stream_ref s = b->create_stream();
  chunk c(*b, 4096);
  b->fill_guard(s, c.get(), 64, 0x5A);
  b->fill_guard(s, offset(c.get(), 10), 1, 0x00);
  b->synchronize(s);
  b->pause(s);
  b->check_guard(s, c.get(), 64, 0x5A, 9);
  EXPECT_TRUE(b->take_guard_failures().empty());  // the check has not run
  b->resume(s);
  b->synchronize(s);
  const std::vector<guard_failure> failures = b->take_guard_failures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].tag, 9u);
  EXPECT_EQ(failures[0].byte_offset, 10u);
  b->destroy_stream(s);
}

// The pattern a pool uses: the guard is filled at allocation on one stream and checked at free on
// another, ordered by an event; under ThreadSanitizer this must not race.
TEST(SimBackend, GuardFilledOnOneStreamCheckedOnAnotherAfterAnEvent) {
  auto b = make_sim_backend({.max_latency = 50us});
  const stream_ref a = b->create_stream();
  const stream_ref w = b->create_stream();
  chunk c(*b, 4096);
  event_handle e = b->acquire_event();
  for (std::uint64_t round = 0; round < 20; ++round) {
    void* guard = offset(c.get(), 13 + round);
    b->fill_guard(a, guard, 50, static_cast<std::uint8_t>(round));
    if (round % 5 == 4) b->fill_guard(a, offset(guard, 49), 1, 0xFF);
    b->record(e, a);
    b->stream_wait(w, e);
    b->check_guard(w, guard, 50, static_cast<std::uint8_t>(round), round);
    b->record(e, w);
    b->stream_wait(a, e);
  }
  b->synchronize(a);
  b->synchronize(w);
  std::vector<std::uint64_t> tags;
  for (const guard_failure& f : b->take_guard_failures()) {
    EXPECT_EQ(f.byte_offset, 49u);
    tags.push_back(f.tag);
  }
  EXPECT_EQ(tags, (std::vector<std::uint64_t>{4, 9, 14, 19}));
  b->release_event(e);
  b->destroy_stream(a);
  b->destroy_stream(w);
}

TEST(SimBackend, GuardRangesMayNotBeNull) {
  auto b = make_sim_backend();
  checks::expect_null_guard_ranges_rejected(*b);
}

// ---- debug: NVTX-style heaps ----

TEST(SimBackend, HeapsAndRegionsRegisterAndUnregisterInBalance) {
  auto b = make_sim_backend();
  chunk c(*b, chunk_size);
  void* heap = b->register_heap(c.get(), c.bytes());
  ASSERT_NE(heap, nullptr);
  EXPECT_EQ(b->registered_heaps(), 1u);
  b->register_region(heap, c.get(), 1024);
  b->register_region(heap, offset(c.get(), 1024), 512);
  b->register_region(heap, offset(c.get(), c.bytes() - 256), 256);  // ends at the heap's end
  EXPECT_EQ(b->registered_regions(), 3u);
  b->unregister_region(heap, offset(c.get(), 1024));
  EXPECT_EQ(b->registered_regions(), 2u);
  b->register_region(heap, offset(c.get(), 1024), 2048);  // the freed range, reused
  EXPECT_EQ(b->registered_regions(), 3u);
  b->unregister_region(heap, c.get());
  EXPECT_EQ(b->registered_regions(), 2u);
  // Unregistering the heap takes its remaining regions with it, as nvtxMemHeapUnregister does.
  b->unregister_heap(heap);
  EXPECT_EQ(b->registered_heaps(), 0u);
  EXPECT_EQ(b->registered_regions(), 0u);
  EXPECT_EQ(b->registration_errors(), 0u);
}

TEST(SimBackend, RegionsOutsideTheirHeapOrOverlappingAreRejected) {
  auto b = make_sim_backend();
  chunk c(*b, chunk_size);
  void* const half = offset(c.get(), c.bytes() / 2);
  void* heap = b->register_heap(half, c.bytes() / 2);
  b->register_region(heap, offset(half, 4096), 4096);
  EXPECT_THROW(b->register_region(heap, c.get(), 16), std::logic_error);                        // before the heap
  EXPECT_THROW(b->register_region(heap, offset(half, c.bytes() / 2 - 8), 16), std::logic_error);  // past its end
  EXPECT_THROW(b->register_region(heap, offset(half, c.bytes() / 2 + 8), 0), std::logic_error);   // beyond it
  EXPECT_THROW(b->register_region(heap, offset(half, 4096), 16), std::logic_error);              // registered twice
  EXPECT_THROW(b->register_region(heap, offset(half, 4000), 100), std::logic_error);             // overlaps from below
  EXPECT_THROW(b->register_region(heap, offset(half, 8191), 1), std::logic_error);               // overlaps inside
  EXPECT_THROW(b->register_region(c.get(), c.get(), 16), std::logic_error);                      // not a heap
  b->register_region(heap, offset(half, 4000), 96);  // touches it: fine
  EXPECT_EQ(b->registered_regions(), 2u);
  // Heaps may not overlap either.
  EXPECT_THROW((void)b->register_heap(c.get(), c.bytes() / 2 + 1), std::logic_error);
  EXPECT_THROW((void)b->register_heap(offset(half, 64), 64), std::logic_error);
  EXPECT_THROW((void)b->register_heap(nullptr, 64), std::invalid_argument);
  EXPECT_THROW((void)b->register_heap(c.get(), 0), std::invalid_argument);
  void* low = b->register_heap(c.get(), c.bytes() / 2);  // adjacent: fine
  EXPECT_EQ(b->registered_heaps(), 2u);
  b->unregister_heap(low);
  b->unregister_heap(heap);
  EXPECT_EQ(b->registered_regions(), 0u);
  EXPECT_EQ(b->registration_errors(), 0u);
}

TEST(SimBackend, UnregisteringWhatIsNotRegisteredIsCounted) {
  auto b = make_sim_backend();
  chunk c(*b, chunk_size);
  void* heap = b->register_heap(c.get(), c.bytes());
  b->register_region(heap, c.get(), 64);
  b->unregister_region(heap, offset(c.get(), 64));  // no region there
  EXPECT_EQ(b->registration_errors(), 1u);
  b->unregister_region(offset(c.get(), 8), c.get());  // not a heap
  EXPECT_EQ(b->registration_errors(), 2u);
  b->unregister_region(heap, c.get());
  b->unregister_region(heap, c.get());  // twice
  EXPECT_EQ(b->registration_errors(), 3u);
  b->unregister_heap(heap);
  b->unregister_heap(heap);  // twice
  EXPECT_EQ(b->registration_errors(), 4u);
  EXPECT_EQ(b->registered_heaps(), 0u);
  EXPECT_EQ(b->registered_regions(), 0u);
}

}  // namespace
}  // namespace cudapool
