// Tests of cudapool::stream_arenas (cudapool/stream_arenas.hpp) and its device (core/arena_backend):
// what each stream keeps, what moves between arenas, the fence before an arena unmaps. Every
// variant's conformance suite with arenas on: stream_arenas_conformance_test.cpp.
#include <cudapool/stream_arenas.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include <cudapool/lockfree_pool.hpp>
#include <cudapool/mutex_pool.hpp>
#include <cudapool/registry.hpp>
#include <cudapool/stream_pool.hpp>
#include <cudapool/tls_pool.hpp>


namespace cudapool {
namespace {

using namespace std::chrono_literals;
constexpr std::size_t mib = std::size_t{1} << 20;


// ---- the directory and the device of an arena -------------------------------------------------

TEST(ArenaBackend, MapClaimsPagesAndChargesTheSharedLimit) {
  std::shared_ptr<backend> sim = make_sim_backend({});
  auto dir = std::make_shared<core::arena_directory>(4 * mib);
  core::arena_backend a(sim, dir, 2);
  core::arena_backend b(sim, dir, 3);
  void* ra = a.reserve_address(64 * mib, a.page_bytes());
  void* rb = b.reserve_address(64 * mib, b.page_bytes());
  ASSERT_TRUE(a.map(ra, 2 * mib));
  ASSERT_TRUE(b.map(rb, 2 * mib));
  EXPECT_EQ(dir->find(static_cast<char*>(ra) + 12345), 2u);
  EXPECT_EQ(dir->find(static_cast<char*>(rb) + 2 * mib - 1), 3u);
  EXPECT_EQ(dir->find(static_cast<char*>(rb) + 2 * mib + (64u << 10)), 0u) << "never mapped";
  EXPECT_FALSE(a.map(static_cast<char*>(ra) + 2 * mib, 2 * mib)) << "the limit bounds both arenas together";
  EXPECT_EQ(dir->mapped_bytes(), 4 * mib);
  b.unmap(rb, 2 * mib);
  EXPECT_TRUE(a.map(static_cast<char*>(ra) + 2 * mib, 2 * mib));
  EXPECT_EQ(dir->peak_mapped_bytes(), 4 * mib);
  a.unmap(ra, 4 * mib);
  a.release_address(ra, 64 * mib);
  b.release_address(rb, 64 * mib);
  EXPECT_EQ(dir->mapped_bytes(), 0u);
}

TEST(ArenaBackend, UnmapSynchronizesTheOwnerFirst) {
  auto sim = std::shared_ptr<sim_backend>(make_sim_backend({}));
  auto dir = std::make_shared<core::arena_directory>(0);
  core::arena_backend a(sim, dir, 2);
  void* r = a.reserve_address(64 * mib, a.page_bytes());
  ASSERT_TRUE(a.map(r, 4 * mib));
  a.unmap(r, 2 * mib);
  EXPECT_EQ(a.fences(), 0u) << "no owner, nothing to wait for";
  const stream_ref s = sim->create_stream();
  a.set_owner(s.native());
  sim->pause(s);
  auto unmapped = std::async(std::launch::async, [&] { a.unmap(static_cast<char*>(r) + 2 * mib, 2 * mib); });
  EXPECT_EQ(unmapped.wait_for(100ms), std::future_status::timeout) << "the owner's work has not completed";
  sim->resume(s);
  unmapped.get();
  EXPECT_EQ(a.fences(), 1u);
  a.set_owner(nullptr);
  a.release_address(r, 64 * mib);
  sim->destroy_stream(s);
}

// ---- stream_arenas ---------------------------------------------------------------------------

struct arenas_fixture : ::testing::Test {
  std::shared_ptr<sim_backend> sim = std::shared_ptr<sim_backend>(make_sim_backend({}));
  stream_ref s1 = sim->create_stream();
  stream_ref s2 = sim->create_stream();
  void TearDown() override {
    sim->destroy_stream(s1);
    sim->destroy_stream(s2);
  }
  static pool_options with_arenas(std::size_t n) {
    pool_options o;
    o.stream_arenas = n;
    return o;
  }
};

TEST_F(arenas_fixture, AFreeOnTheOwnerStreamIsReusedAtOnceWithoutAnEvent) {
  stream_arenas<lockfree_pool> pool(sim, with_arenas(4));
  sim->pause(s1);  // its work never completes during the test: only stream order protects the reuse
  for (const std::size_t bytes : {std::size_t{4096}, 3 * mib}) {
    void* p = pool.allocate(bytes, s1);
    pool.deallocate(p, s1);
    EXPECT_EQ(pool.allocate(bytes, s1), p) << bytes << " B: reused by its own stream at once";
    pool.deallocate(p, s1);
  }
  EXPECT_EQ(pool.owned_arenas(), 1u);
  EXPECT_EQ(pool.stats().events_recorded, 0u) << "no epoch, no event";
  sim->resume(s1);
  pool.flush_stream(s1);
}

TEST_F(arenas_fixture, AnotherStreamNeverGetsMemoryAStreamStillUses) {
  stream_arenas<lockfree_pool> pool(sim, with_arenas(4));
  sim->pause(s1);
  void* small = pool.allocate(4096, s1);
  void* large = pool.allocate(3 * mib, s1);
  pool.deallocate(small, s1);
  pool.deallocate(large, s1);
  void* a = pool.allocate(4096, s2);
  void* b = pool.allocate(3 * mib, s2);
  EXPECT_NE(a, small);
  EXPECT_NE(b, large);
  EXPECT_EQ(pool.owned_arenas(), 2u);
  pool.deallocate(a, s2);
  pool.deallocate(b, s2);
  sim->resume(s1);
  pool.flush_stream(s1);
  pool.flush_stream(s2);
}

TEST_F(arenas_fixture, AFreeOnAnotherStreamWaitsForThatStream) {
  stream_arenas<lockfree_pool> pool(sim, with_arenas(4));
  for (const std::size_t bytes : {std::size_t{4096}, 3 * mib}) {
    void* p = pool.allocate(bytes, s1);
    sim->pause(s2);
    pool.deallocate(p, s2);  // s1's arena, stream-ordered behind s2
    void* q = pool.allocate(bytes, s1);
    EXPECT_NE(q, p) << bytes << " B: s2 has not got there";
    sim->resume(s2);
    pool.deallocate(q, s1);
  }
  EXPECT_GT(pool.stats().events_recorded, 0u);
  pool.flush_stream(s1);
  pool.flush_stream(s2);
}

TEST_F(arenas_fixture, FlushStreamHandsTheArenaToTheNextStreamOnceItsWorkCompleted) {
  stream_arenas<mutex_pool> pool(sim, with_arenas(1));
  void* p = pool.allocate(3 * mib, s1);
  sim->pause(s1);
  pool.deallocate(p, s1);
  EXPECT_EQ(pool.owned_arenas(), 1u);
  void* shared = pool.allocate(3 * mib, s2);  // the one arena is s1's: s2 shares arena 0
  EXPECT_NE(shared, p);
  pool.deallocate(shared, s2);
  pool.flush_stream(s1);  // s1 is paused: no wait, an event
  pool.flush_stream(s2);
  EXPECT_EQ(pool.owned_arenas(), 0u);
  stream_ref s3 = sim->create_stream();
  void* q = pool.allocate(3 * mib, s3);
  EXPECT_NE(q, p) << "s1 may still use p: its arena waits for s1's event";
  EXPECT_EQ(pool.owned_arenas(), 0u) << "s3 shares arena 0 meanwhile";
  pool.deallocate(q, s3);
  pool.flush_stream(s3);
  sim->resume(s1);
  sim->synchronize(s1);
  stream_ref s4 = sim->create_stream();
  EXPECT_EQ(pool.allocate(3 * mib, s4), p) << "s4 owns s1's arena now, and what s1 freed";
  EXPECT_EQ(pool.owned_arenas(), 1u);
  pool.deallocate(p, s4);
  pool.flush_stream(s4);
  sim->destroy_stream(s3);
  sim->destroy_stream(s4);
}

TEST_F(arenas_fixture, AStreamWhoseArenaWentToAnotherNeverAllocatesThere) {
  // s1 lets its arena go, s2 takes it; s1's way back to it (the hint pool_for keeps per stream)
  // now names s2's arena, which must not serve s1: what s2 freed there, with s2 paused, is reused
  // only by s2.
  stream_arenas<mutex_pool> pool(sim, with_arenas(2));
  void* p = pool.allocate(3 * mib, s1);
  pool.deallocate(p, s1);
  pool.flush_stream(s1);
  sim->synchronize(s1);
  EXPECT_EQ(pool.allocate(3 * mib, s2), p) << "s2 owns s1's former arena";
  sim->pause(s2);
  pool.deallocate(p, s2);
  void* q = pool.allocate(3 * mib, s1);
  EXPECT_NE(q, p) << "s2 may still use p";
  EXPECT_EQ(pool.owned_arenas(), 2u) << "s1 took the other arena";
  pool.deallocate(q, s1);
  sim->resume(s2);
  pool.flush_stream(s1);
  pool.flush_stream(s2);
}

TEST_F(arenas_fixture, AStreamBeyondTheArenasTakesOneOnceItsOwnerLetsItGo) {
  // With every arena owned a further stream shares arena 0 without taking the arenas' lock; once
  // an owner lets its arena go and its work has completed, that stream takes the arena.
  stream_arenas<lockfree_pool> pool(sim, with_arenas(1));
  void* a = pool.allocate(4096, s1);
  void* b = pool.allocate(4096, s2);  // beyond the one arena: arena 0
  EXPECT_EQ(pool.owned_arenas(), 1u);
  pool.deallocate(b, s2);
  pool.deallocate(a, s1);
  pool.flush_stream(s1);
  sim->synchronize(s1);
  void* c = pool.allocate(4096, s2);
  EXPECT_EQ(c, a) << "s2 owns s1's former arena, and what s1 freed there";
  EXPECT_EQ(pool.owned_arenas(), 1u);
  pool.deallocate(c, s2);
  pool.flush_stream(s2);
}

TEST_F(arenas_fixture, AnOwnerWhoseHintAnotherStreamTookKeepsItsArena) {
  // Two streams of one hint slot own the only two arenas: the second's claim rewrote the slot, so
  // the first misses its hint on every allocation, and with every arena owned and none let go it
  // must still find its own arena (where its frees are immediate), not arena 0.
  using pool_type = stream_arenas<lockfree_pool>;
  std::vector<stream_ref> others;
  stream_ref b = sim->create_stream();
  while (pool_type::hint_slot(b) != pool_type::hint_slot(s1)) {
    others.push_back(b);
    b = sim->create_stream();
  }
  for (stream_ref o : others) sim->destroy_stream(o);
  pool_type pool(sim, with_arenas(2));
  void* a0 = pool.allocate(4096, s1);
  void* b0 = pool.allocate(4096, b);
  ASSERT_EQ(pool.owned_arenas(), 2u);
  void* p = pool.allocate(4096, s1);
  pool.deallocate(p, s1);
  EXPECT_EQ(pool.describe(p).status, pointer_info::state::free) << "s1's own arena: its free on s1 is immediate";
  pool.deallocate(a0, s1);
  pool.deallocate(b0, b);
  pool.flush_stream(s1);
  pool.flush_stream(b);
  sim->synchronize(b);
  sim->destroy_stream(b);
}

TEST_F(arenas_fixture, TheDefaultStreamAndStreamsBeyondTheArenasShareArenaZero) {
  stream_arenas<lockfree_pool> pool(sim, with_arenas(1));
  void* d = pool.allocate(4096);
  EXPECT_EQ(pool.owned_arenas(), 0u);
  pool.deallocate(d);
  void* a = pool.allocate(4096, s1);
  void* b = pool.allocate(4096, s2);
  pool.deallocate(a, s1);
  pool.deallocate(b, s2);
  const pool_stats st = pool.stats();
  EXPECT_EQ(st.allocs, 3u);
  EXPECT_EQ(st.frees, 3u);
  std::size_t pending = 0;
  for (const class_stats& c : st.classes) pending += c.pending_blocks;
  EXPECT_EQ(pending, 1u) << "s2's free is stream-ordered in arena 0; s1's is immediate in its arena";
  pool.flush_stream(s1);
  pool.flush_stream(s2);
}

TEST_F(arenas_fixture, AnArenaOutOfMemoryTakesWhatTheOthersHoldFree) {
  pool_options o = with_arenas(4);
  o.byte_limit = 8 * mib;
  stream_arenas<tls_pool> pool(sim, o);
  void* p = pool.allocate(6 * mib, s1);
  pool.deallocate(p, s1);  // s1's arena keeps its pages
  void* q = pool.allocate(6 * mib, s2);  // the limit leaves s2's arena nothing: s1's arena trims
  ASSERT_NE(q, nullptr);
  EXPECT_GE(pool.fences(), 1u) << "s1 was synchronized before its pages went";
  EXPECT_LE(pool.stats().reserved_bytes, 8 * mib);
  EXPECT_THROW((void)pool.allocate(6 * mib, s1), out_of_memory);
  pool.deallocate(q, s2);
  pool.flush_stream(s1);
  pool.flush_stream(s2);
}

TEST_F(arenas_fixture, TrimWaitsForAnOwnerThatStillUsesItsFreeMemory) {
  stream_arenas<stream_pool> pool(sim, with_arenas(4));
  void* p = pool.allocate(6 * mib, s1);
  sim->pause(s1);
  pool.deallocate(p, s1);
  auto trimmed = std::async(std::launch::async, [&] { return pool.trim(); });
  EXPECT_EQ(trimmed.wait_for(100ms), std::future_status::timeout) << "s1 may still use the pages";
  sim->resume(s1);
  EXPECT_GE(trimmed.get(), 6 * mib);
  pool.flush_stream(s1);
}

TEST_F(arenas_fixture, StatsSumTheArenasAndTheirMappedPeak) {
  stream_arenas<lockfree_pool> pool(sim, with_arenas(4));
  void* a = pool.allocate(4 * mib, s1);
  void* b = pool.allocate(4 * mib, s2);
  const pool_stats st = pool.stats();
  EXPECT_EQ(st.heap.large_count, 2u);
  EXPECT_EQ(st.heap.large_bytes, 8 * mib);
  EXPECT_EQ(st.peak_reserved_bytes, st.reserved_bytes);
  EXPECT_EQ(pool.describe(b).what, pointer_info::kind::large);
  EXPECT_EQ(pool.describe(b).status, pointer_info::state::live);
  pool.deallocate(a, s1);
  pool.deallocate(b, s2);
  pool.flush_stream(s1);
  pool.flush_stream(s2);
}

TEST_F(arenas_fixture, EveryArenasClassesStopAtArenaMaxClassBytes) {
  // 512 KiB is a class of the default pool (classes up to 1 MiB); with arenas, a best-fit extent
  // of the heap in an owned arena and in arena 0 alike, unless arena_max_class_bytes lets it be one.
  for (const std::size_t cap : {std::size_t{256} << 10, mib}) {
    pool_options o = with_arenas(4);
    o.arena_max_class_bytes = cap;
    stream_arenas<tls_pool> pool(sim, o);
    const pointer_info::kind want = cap < (512u << 10) ? pointer_info::kind::large : pointer_info::kind::block;
    void* owned = pool.allocate(512u << 10, s1);
    void* shared = pool.allocate(512u << 10, stream_ref{});
    EXPECT_EQ(pool.describe(owned).what, want) << cap;
    EXPECT_EQ(pool.describe(shared).what, want) << cap;
    void* small = pool.allocate(256u << 10, s1);
    EXPECT_EQ(pool.describe(small).what, pointer_info::kind::block) << "a class below the cap";
    pool.deallocate(small, s1);
    EXPECT_EQ(pool.options().max_class_bytes, mib) << "the caller's options as given";
    pool.deallocate(owned, s1);
    pool.deallocate(shared, stream_ref{});
    pool.flush_stream(s1);
  }
  pool_options off;  // without arenas the option does nothing
  off.arena_max_class_bytes = 256u << 10;
  stream_arenas<tls_pool> plain(sim, off);
  void* p = plain.allocate(512u << 10, s1);
  EXPECT_EQ(plain.describe(p).what, pointer_info::kind::block);
  plain.deallocate(p, s1);
}

TEST(StreamArenasOptions, APoolTypeRefusesThemAndMakePoolAppliesThem) {
  std::shared_ptr<backend> sim = make_sim_backend({});
  pool_options o;
  o.stream_arenas = 4;
  EXPECT_THROW(lockfree_pool(sim, o), std::invalid_argument);
  o.stream_arenas = 65;
  EXPECT_THROW(validate(o), std::invalid_argument);
  o.stream_arenas = 4;
  for (const std::size_t bad : {std::size_t{0}, std::size_t{128}, std::size_t{300} << 10}) {
    o.arena_max_class_bytes = bad;
    EXPECT_THROW(validate(o), std::invalid_argument) << bad;
    EXPECT_THROW((void)make_pool("mutex", sim, o), std::invalid_argument) << bad;
  }
  o.arena_max_class_bytes = std::size_t{256} << 10;
  o.stream_arenas = 4;
  auto pool = make_pool("mutex", sim, o);
  const stream_ref s = sim->create_stream();
  void* p = pool->allocate(4096, s);
  pool->deallocate(p, s);
  EXPECT_EQ(pool->allocate(4096, s), p);
  pool->deallocate(p, s);
  EXPECT_EQ(pool->stats().events_recorded, 0u);
  pool->flush_stream(s);
  sim->destroy_stream(s);
}

TEST(StreamArenasOptions, WithoutVirtualMemoryOrWithDebugEveryStreamSharesArenaZero) {
  std::shared_ptr<backend> sim = make_sim_backend({});
  pool_options o;
  o.stream_arenas = 4;
  o.virtual_memory = false;
  EXPECT_EQ(stream_arenas<mutex_pool>(sim, o).arena_count(), 0u);
  o.virtual_memory = true;
  o.debug.guard_bytes = 64;
  EXPECT_EQ(stream_arenas<mutex_pool>(sim, o).arena_count(), 0u);
  o.debug.guard_bytes = 0;
  EXPECT_EQ(stream_arenas<mutex_pool>(sim, o).arena_count(), 4u);
}

}  // namespace
}  // namespace cudapool
