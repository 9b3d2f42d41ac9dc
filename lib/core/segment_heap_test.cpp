#include <cudapool/detail/core/segment_heap.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace cudapool::core {
namespace {

constexpr std::size_t kib = 1024;
constexpr std::size_t page = 64 * kib;  // the sim's page in these tests

using kind = segment_heap::kind;

class SegmentHeap : public ::testing::TestWithParam<bool> {  // param: virtual memory
 protected:
  SegmentHeap() {
    sim_options o;
    o.page_bytes = GetParam() ? page : 0;
    device_ = make_sim_backend(o);
  }
  // Every heap of a test is gone by now: it gave back every page, reservation and chunk.
  ~SegmentHeap() override {
    EXPECT_EQ(device_->mapped_bytes(), 0u);
    EXPECT_EQ(device_->reserved_address_bytes(), 0u);
    EXPECT_EQ(device_->chunk_bytes(), 0u);
  }
  std::unique_ptr<segment_heap> make(segment_heap::config c = {}) {
    if (c.reservation_bytes == 0) c.reservation_bytes = std::size_t{64} << 20;
    c.chunk_bytes = page;
    return std::make_unique<segment_heap>(*device_, c);
  }
  static std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

  std::unique_ptr<sim_backend> device_;
};

TEST_P(SegmentHeap, SplitsAndCoalescesAtEveryBoundary) {
  auto heap = make();
  // Three neighbours in one fresh page run: a, b, c.
  void* a = heap->allocate(16 * kib, 256, kind::large, {}, true);
  void* b = heap->allocate(16 * kib, 256, kind::large, {}, true);
  void* c = heap->allocate(16 * kib, 256, kind::large, {}, true);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(addr(b), addr(a) + 16 * kib);
  ASSERT_EQ(addr(c), addr(b) + 16 * kib);
  const auto base = heap->stats();
  // The middle one: its neighbours are used, so it stays alone; a request of its size takes it.
  EXPECT_EQ(heap->free(b, kind::large, {}), segment_heap::free_result::freed);
  EXPECT_EQ(heap->stats().free_extents, base.free_extents + 1);
  EXPECT_EQ(heap->allocate(16 * kib, 256, kind::large, {}, true), b);
  // Free first and middle: they merge, so twice the size fits at a.
  EXPECT_EQ(heap->free(a, kind::large, {}), segment_heap::free_result::freed);
  EXPECT_EQ(heap->free(b, kind::large, {}), segment_heap::free_result::freed);
  EXPECT_EQ(heap->stats().free_extents, base.free_extents + 1);
  void* ab = heap->allocate(32 * kib, 256, kind::large, {}, true);
  EXPECT_EQ(ab, a);
  // Free both sides of c, then c: one free extent again, as before any allocation.
  EXPECT_EQ(heap->free(ab, kind::large, {}), segment_heap::free_result::freed);
  EXPECT_EQ(heap->free(c, kind::large, {}), segment_heap::free_result::freed);
  const auto after = heap->stats();
  EXPECT_EQ(after.free_extents, 1u);
  EXPECT_EQ(after.large_bytes, 0u);
  EXPECT_EQ(after.free_bytes, after.mapped_bytes);
  EXPECT_EQ(after.largest_free_bytes, after.free_bytes);
  EXPECT_EQ(after.mapped_bytes, page);  // 48 KiB never needed a second page
}

TEST_P(SegmentHeap, ReportsWhatAnInvalidFreeIs) {
  auto heap = make();
  void* a = heap->allocate(4 * kib, 256, kind::large, {}, true);
  void* s = heap->allocate(page, page, kind::slab, {}, true);
  EXPECT_EQ(heap->free(static_cast<char*>(a) + 256, kind::large, {}), segment_heap::free_result::interior);
  EXPECT_EQ(heap->free(s, kind::large, {}), segment_heap::free_result::foreign);  // a slab is not the user's
  int host = 0;
  EXPECT_EQ(heap->free(&host, kind::large, {}), segment_heap::free_result::foreign);
  EXPECT_EQ(heap->free(a, kind::large, {}), segment_heap::free_result::freed);
  EXPECT_EQ(heap->free(a, kind::large, {}), segment_heap::free_result::double_free);
  EXPECT_EQ(heap->free(s, kind::slab, {}), segment_heap::free_result::freed);
}

TEST_P(SegmentHeap, HonoursAlignmentUpToOneGiB) {
  segment_heap::config c;
  c.reservation_bytes = std::size_t{4} << 30;  // address space only
  auto heap = make(c);
  for (std::size_t align = 256; align <= (std::size_t{1} << 30); align <<= 2) {
    void* p = heap->allocate(1000, align, kind::large, {}, true);
    ASSERT_NE(p, nullptr) << align;
    EXPECT_EQ(addr(p) % align, 0u) << align;
  }
  // The padding in front of an aligned range is not mapped (virtual memory) beyond one page per
  // request: mapped bytes stay small although the alignments span a GiB.
  if (GetParam()) EXPECT_LE(heap->stats().mapped_bytes, 12 * page);
}

// Alignments are powers of two (the pools reject others before they reach the heap); the heap
// answers another with nothing rather than a misaligned range.
TEST_P(SegmentHeap, AnAlignmentThatIsNotAPowerOfTwoGetsNothing) {
  auto heap = make();
  EXPECT_EQ(heap->allocate(1000, 3 * 256, kind::large, {}, true), nullptr);
  EXPECT_EQ(heap->stats().mapped_bytes, 0u);
  void* p = heap->allocate(1000, 4 * 256, kind::large, {}, true);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(addr(p) % (4 * 256), 0u);
  EXPECT_EQ(heap->free(p, kind::large, {}), segment_heap::free_result::freed);
}

TEST_P(SegmentHeap, StreamOrderedReuse) {
  auto heap = make();
  std::atomic<std::uint64_t> completed{0};
  int s_handle = 0;
  int t_handle = 0;
  const stream_use on_s{&s_handle, true};
  const stream_use on_t{&t_handle, true};
  // a and b fill one page (chunk); a is freed on s, pending behind epoch 1.
  void* a = heap->allocate(48 * kib, 256, kind::large, on_s, true);
  void* b = heap->allocate(16 * kib, 256, kind::large, on_s, true);
  ASSERT_EQ(addr(b), addr(a) + 48 * kib);
  const stream_tag pending_on_s{&completed, 1, &s_handle, true};
  ASSERT_EQ(heap->free(a, kind::large, pending_on_s), segment_heap::free_result::freed);
  EXPECT_EQ(heap->stats().pending_bytes, 48 * kib);
  auto outside_a = [&](const void* p, std::size_t n) { return addr(p) + n <= addr(a) || addr(p) >= addr(a) + 48 * kib; };
  // Another stream and slabs never see it before the epoch completes; they get other memory.
  void* t = heap->allocate(48 * kib, 256, kind::large, on_t, true);
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(outside_a(t, 48 * kib));
  void* slab = heap->allocate(page, page, kind::slab, {}, true);
  EXPECT_TRUE(outside_a(slab, page));
  // The stream itself reuses it at once (the only free 48 KiB).
  void* again = heap->allocate(48 * kib, 256, kind::large, on_s, false);
  EXPECT_EQ(again, a);
  ASSERT_EQ(heap->free(again, kind::large, pending_on_s), segment_heap::free_result::freed);
  // After a forget_stream, not even the stream itself (its handle may name a new stream).
  heap->forget_stream(&s_handle);
  void* s2 = heap->allocate(48 * kib, 256, kind::large, on_s, true);
  EXPECT_TRUE(outside_a(s2, 48 * kib));
  // Once the epoch completed, anyone.
  completed.store(1);
  void* t2 = heap->allocate(48 * kib, 256, kind::large, on_t, false);
  EXPECT_EQ(t2, a);
  EXPECT_EQ(heap->stats().pending_bytes, 0u);
}

// pending_ lists tagged free extents; one that is taken stays listed until resolve_completed
// prunes it, which runs only after an epoch completes. Misses walk the list (find_run), so the heap
// drops the stale entries once the walks have read more of them than the list holds: has_pending()
// then says false again while the epoch is still open.
TEST_P(SegmentHeap, DropsPendingEntriesOnceTheirExtentsAreTaken) {
  auto heap = make();
  std::atomic<std::uint64_t> completed{0};  // the epoch never completes in this test
  int s_handle = 0;
  const stream_use on_s{&s_handle, true};
  constexpr int n = 100;
  std::vector<void*> held;
  std::vector<void*> spacers;
  for (int i = 0; i < n; ++i) {  // separated by used spacers: freed, they stay n extents
    held.push_back(heap->allocate(4 * kib, 256, kind::large, on_s, true));
    spacers.push_back(heap->allocate(4 * kib, 256, kind::large, on_s, true));
    ASSERT_NE(held.back(), nullptr);
  }
  for (void* p : held) {
    ASSERT_EQ(heap->free(p, kind::large, {&completed, 1, &s_handle, true}), segment_heap::free_result::freed);
  }
  EXPECT_TRUE(heap->has_pending());
  for (int i = 0; i < n; ++i) ASSERT_NE(heap->allocate(4 * kib, 256, kind::large, on_s, false), nullptr);  // all taken back
  EXPECT_EQ(heap->stats().pending_bytes, 0u);
  // Requests that fit no hole: each walks the n stale entries; then they are dropped.
  for (int i = 0; i < 3; ++i) ASSERT_NE(heap->allocate(256 * kib, 256, kind::large, on_s, true), nullptr);
  EXPECT_FALSE(heap->has_pending());
}

// A range pending on one stream and a free range next to it: a request of their joint size from
// another stream must not get the pending part, merged or not (RMM #2489).
TEST_P(SegmentHeap, NeverMergesPendingIntoReusable) {
  auto heap = make();
  std::atomic<std::uint64_t> completed_s{0};
  std::atomic<std::uint64_t> completed_u{0};
  int s = 0, t = 0, u = 0;
  void* a = heap->allocate(16 * kib, 256, kind::large, {}, true);
  void* b = heap->allocate(16 * kib, 256, kind::large, {}, true);
  void* c = heap->allocate(16 * kib, 256, kind::large, {}, true);
  void* d = heap->allocate(16 * kib, 256, kind::large, {}, true);  // the page's last quarter
  ASSERT_EQ(heap->free(a, kind::large, {}), segment_heap::free_result::freed);
  ASSERT_EQ(heap->free(b, kind::large, {&completed_s, 1, &s, true}), segment_heap::free_result::freed);
  ASSERT_EQ(heap->free(c, kind::large, {&completed_u, 1, &u, true}), segment_heap::free_result::freed);
  void* p = heap->allocate(page, 256, kind::large, {&t, true}, true);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(addr(p) >= addr(d) + 16 * kib || addr(p) + page <= addr(a)) << "got pending memory";
  // Stream s may take a+b (b is its own), but not c (pending on u).
  void* q = heap->allocate(48 * kib, 256, kind::large, {&s, true}, true);
  EXPECT_TRUE(addr(q) >= addr(d) + 16 * kib || addr(q) + 48 * kib <= addr(a)) << "got u's pending memory";
  void* r = heap->allocate(32 * kib, 256, kind::large, {&s, true}, true);
  EXPECT_EQ(r, a);
}

// Frees a range pending on a stream of its own, which never completes: from then on the heap has
// seen frees from two streams (coalesce keeps resolved and pending ranges apart). Call after the
// blocks under test are allocated.
std::atomic<std::uint64_t> never_completes{0};
int other_stream = 0;
void free_on_another_stream(segment_heap& heap) {
  void* x = heap.allocate(8 * kib, 256, kind::large, {}, true);
  ASSERT_EQ(heap.free(x, kind::large, {&never_completes, 1, &other_stream, true}), segment_heap::free_result::freed);
}

// Four 16 KiB neighbours filling one page (chunk).
struct quarters {
  void* q[4];
};
quarters fill_page(segment_heap& heap) {
  quarters r{};
  for (void*& p : r.q) p = heap.allocate(16 * kib, 256, kind::large, {}, true);
  return r;
}

// A range with nothing pending beside one pending on a stream stays reusable by every stream: had
// it merged into the pending range, it would wait for that range's epoch (on a 64-thread soak,
// memory that waited so grew with the run's length).
TEST_P(SegmentHeap, AResolvedRangeBesideAPendingOneStaysReusableByAll) {
  auto heap = make();
  std::atomic<std::uint64_t> completed{0};
  int s = 0, t = 0;
  const quarters p = fill_page(*heap);
  ASSERT_EQ(addr(p.q[3]), addr(p.q[0]) + 48 * kib);
  free_on_another_stream(*heap);
  ASSERT_EQ(heap->free(p.q[1], kind::large, {&completed, 1, &s, true}), segment_heap::free_result::freed);
  ASSERT_EQ(heap->free(p.q[0], kind::large, {}), segment_heap::free_result::freed);
  EXPECT_EQ(heap->allocate(16 * kib, 256, kind::large, {&t, true}, false), p.q[0]);
  EXPECT_EQ(heap->allocate(16 * kib, 256, kind::large, {&t, true}, false), nullptr);  // q[1] is s's
}

// While one stream alone frees into the heap, a resolved range joins its pending neighbour: one
// extent per hole for that stream (slab growth, the only other user, waits for the epoch).
TEST_P(SegmentHeap, WithOneStreamAResolvedRangeJoinsItsPendingNeighbour) {
  auto heap = make();
  std::atomic<std::uint64_t> completed{0};
  int s = 0;
  const quarters p = fill_page(*heap);
  ASSERT_EQ(heap->free(p.q[1], kind::large, {&completed, 1, &s, true}), segment_heap::free_result::freed);
  ASSERT_EQ(heap->free(p.q[0], kind::large, {}), segment_heap::free_result::freed);
  EXPECT_EQ(heap->stats().pending_bytes, 32 * kib);
  EXPECT_EQ(heap->allocate(16 * kib, page, kind::slab, {}, false), nullptr);
  completed.store(1);
  EXPECT_EQ(heap->allocate(32 * kib, 256, kind::large, {}, false), p.q[0]);
}

// Growth next to a range pending on the one stream: the new pages are for the caller (here slab
// growth, which may use nothing pending) and do not merge into that range (found by stress: a
// large block freed on one stream was handed to a slab while its work still ran).
TEST_P(SegmentHeap, GrowthBesideAPendingRangeDoesNotHandItOut) {
  if (!GetParam()) GTEST_SKIP() << "chunks do not grow beside a range";
  auto heap = make();
  std::atomic<std::uint64_t> completed{0};
  int s = 0;
  void* a = heap->allocate(16 * kib, 256, kind::large, {&s, true}, true);
  ASSERT_EQ(heap->free(a, kind::large, {&completed, 1, &s, true}), segment_heap::free_result::freed);
  EXPECT_EQ(heap->stats().pending_bytes, page);  // the whole page, a and the rest beside it
  void* slab = heap->allocate(page, page, kind::slab, {}, true);
  ASSERT_NE(slab, nullptr);
  EXPECT_TRUE(addr(slab) >= addr(a) + page || addr(slab) + page <= addr(a)) << "got s's pending page";
}

// A slab mapped while the range below the unmapped pages is pending does not wall it off: its page
// comes from the top of the unmapped range, and once the range is free for all, a large request
// grows it by the pages it lacks (s38: cut from the bottom, the slab sat between the range and the
// unmapped pages, and the request mapped all of its bytes above the slab; lm_infer_varseq alone,
// with the device behind, reserved 1.49x its live peak).
TEST_P(SegmentHeap, ASlabMappedBesideAPendingRangeLeavesItRoomToGrow) {
  if (!GetParam()) GTEST_SKIP() << "chunks do not grow beside a range";
  auto heap = make();
  std::atomic<std::uint64_t> completed{0};
  int s = 0;
  void* a = heap->allocate(4 * page, 256, kind::large, {&s, true}, true);
  ASSERT_EQ(heap->free(a, kind::large, {&completed, 1, &s, true}), segment_heap::free_result::freed);
  void* slab = heap->allocate(page, page, kind::slab, {}, true);
  ASSERT_NE(slab, nullptr);
  EXPECT_NE(addr(slab), addr(a) + 4 * page) << "the slab's page walls the pending range off";
  completed.store(1);  // the range is free for all now
  const std::size_t mapped = heap->stats().mapped_bytes;
  void* big = heap->allocate(6 * page, 256, kind::large, {}, true);
  EXPECT_EQ(big, a) << "the range grew into the pages above it";
  EXPECT_EQ(heap->stats().mapped_bytes, mapped + 2 * page);
  ASSERT_EQ(heap->free(big, kind::large, {}), segment_heap::free_result::freed);
  ASSERT_EQ(heap->free(slab, kind::slab, {}), segment_heap::free_result::freed);
}

// Growth with a free range the caller may take above the unmapped pages and none below (an island
// left by the rule above, or by trim) places the request up against that range: it maps only the
// pages the range lacks, not all of its bytes at the bottom of the unmapped pages.
TEST_P(SegmentHeap, GrowthExtendsAFreeRangeAboveTheUnmappedPages) {
  if (!GetParam()) GTEST_SKIP() << "chunks do not grow beside a range";
  auto heap = make();
  std::atomic<std::uint64_t> completed{0};
  int s = 0;
  int t = 0;
  void* a = heap->allocate(4 * page, 256, kind::large, {&s, true}, true);
  ASSERT_EQ(heap->free(a, kind::large, {&completed, 1, &s, true}), segment_heap::free_result::freed);
  void* slab = heap->allocate(page, page, kind::slab, {}, true);  // an island at the top
  ASSERT_GT(addr(slab), addr(a) + 4 * page);
  ASSERT_EQ(heap->free(slab, kind::slab, {}), segment_heap::free_result::freed);  // free for all
  const std::size_t mapped = heap->stats().mapped_bytes;
  void* p = heap->allocate(3 * page, 256, kind::large, {&t, true}, true);  // a's range is not t's
  EXPECT_EQ(addr(p), addr(slab) - 2 * page) << "placed up against the island";
  EXPECT_EQ(heap->stats().mapped_bytes, mapped + 2 * page);
  ASSERT_EQ(heap->free(p, kind::large, {}), segment_heap::free_result::freed);
}

// With one stream, growth for a slab into a hole between used memory and a range pending on that
// stream leaves the rest of the new page free beside the pending range and apart from it (the slab
// may not use it): a run the stream may take whole. With one stream place() looks for runs only
// after such a refused merge (runs_possible_); without it the request below grew instead.
TEST_P(SegmentHeap, WithOneStreamARunLeftBySlabGrowthIsTaken) {
  if (!GetParam()) GTEST_SKIP() << "chunks leave no unmapped holes";
  auto heap = make();
  std::atomic<std::uint64_t> completed{0};
  int s = 0;
  void* a = heap->allocate(page, page, kind::large, {&s, true}, true);
  void* b = heap->allocate(page, page, kind::large, {&s, true}, true);
  void* c = heap->allocate(page, page, kind::large, {&s, true}, true);
  ASSERT_EQ(addr(b), addr(a) + page);
  ASSERT_EQ(addr(c), addr(b) + page);
  ASSERT_EQ(heap->free(b, kind::large, {}), segment_heap::free_result::freed);
  ASSERT_EQ(heap->trim(), page);  // b's page unmapped: a hole between a and c
  ASSERT_EQ(heap->free(c, kind::large, {&completed, 1, &s, true}), segment_heap::free_result::freed);
  // A half-page slab maps b's page again (the lowest of the equal choices) and starts it.
  void* slab = heap->allocate(page / 2, page / 2, kind::slab, {}, true);
  ASSERT_EQ(slab, b);
  const std::size_t mapped = heap->mapped_bytes();
  // s may take the rest of b's page and its own pending c as one range: no growth.
  void* r = heap->allocate(page / 2 + page, 256, kind::large, {&s, true}, true);
  EXPECT_EQ(addr(r), addr(b) + page / 2);
  EXPECT_EQ(heap->mapped_bytes(), mapped);
  ASSERT_EQ(heap->free(r, kind::large, {}), segment_heap::free_result::freed);
  ASSERT_EQ(heap->free(slab, kind::slab, {}), segment_heap::free_result::freed);
  ASSERT_EQ(heap->free(a, kind::large, {}), segment_heap::free_result::freed);
}

// Two frees of one stream in different epochs merge under the later one: reusable by others once
// it completed (epochs of a stream complete in order), by the stream at once as one range.
TEST_P(SegmentHeap, OneStreamsRangesMergeUnderTheLaterEpoch) {
  auto heap = make();
  std::atomic<std::uint64_t> completed{0};
  int s = 0, t = 0;
  const quarters p = fill_page(*heap);
  free_on_another_stream(*heap);
  ASSERT_EQ(heap->free(p.q[0], kind::large, {&completed, 1, &s, true}), segment_heap::free_result::freed);
  ASSERT_EQ(heap->free(p.q[1], kind::large, {&completed, 2, &s, true}), segment_heap::free_result::freed);
  completed.store(1);
  EXPECT_EQ(heap->allocate(16 * kib, 256, kind::large, {&t, true}, false), nullptr);
  completed.store(2);
  EXPECT_EQ(heap->allocate(32 * kib, 256, kind::large, {&t, true}, false), p.q[0]);
}

// A stream gets the union of its own pending ranges (of any epochs) and resolved ones beside them,
// without new memory; what is left of the last range keeps that range's epoch.
TEST_P(SegmentHeap, AStreamTakesARunOfItsOwnAndResolvedRanges) {
  auto heap = make();
  std::atomic<std::uint64_t> completed{0};
  int s = 0, t = 0;
  const quarters p = fill_page(*heap);
  free_on_another_stream(*heap);
  ASSERT_EQ(heap->free(p.q[0], kind::large, {}), segment_heap::free_result::freed);
  ASSERT_EQ(heap->free(p.q[1], kind::large, {&completed, 1, &s, true}), segment_heap::free_result::freed);
  ASSERT_EQ(heap->free(p.q[2], kind::large, {&completed, 2, &s, true}), segment_heap::free_result::freed);
  EXPECT_EQ(heap->allocate(48 * kib, 256, kind::large, {&t, true}, false), nullptr);  // t: only q[0]
  void* r = heap->allocate(40 * kib, 256, kind::large, {&s, true}, false);
  ASSERT_EQ(r, p.q[0]);
  // The last 8 KiB of q[2] are left, pending behind epoch 2 (besides the other stream's page).
  EXPECT_EQ(heap->stats().pending_bytes, 8 * kib + page);
  completed.store(1);
  EXPECT_EQ(heap->allocate(8 * kib, 256, kind::large, {&t, true}, false), nullptr);
  completed.store(2);
  EXPECT_EQ(addr(heap->allocate(8 * kib, 256, kind::large, {&t, true}, false)), addr(p.q[2]) + 8 * kib);
}

// A free merges through every neighbour that is free with its tag, not only the nearest: ranges
// whose epochs completed since they were freed (not yet merged) join it in one extent.
TEST_P(SegmentHeap, AFreeMergesThroughNeighboursWhoseEpochsCompleted) {
  auto heap = make();
  std::atomic<std::uint64_t> completed{0};
  int s = 0;
  const quarters p = fill_page(*heap);
  free_on_another_stream(*heap);
  const std::size_t before = heap->stats().free_extents;
  ASSERT_EQ(heap->free(p.q[0], kind::large, {}), segment_heap::free_result::freed);
  ASSERT_EQ(heap->free(p.q[1], kind::large, {&completed, 1, &s, true}), segment_heap::free_result::freed);
  ASSERT_EQ(heap->free(p.q[2], kind::large, {&completed, 2, &s, true}), segment_heap::free_result::freed);
  EXPECT_EQ(heap->stats().free_extents, before + 2);  // q[0] apart; q[1] and q[2] one range of s
  completed.store(2);
  ASSERT_EQ(heap->free(p.q[3], kind::large, {}), segment_heap::free_result::freed);
  EXPECT_EQ(heap->stats().free_extents, before + 1);
  EXPECT_EQ(heap->stats().largest_free_bytes, page);
}

// Best fit by hole: a request goes to the smallest hole with a piece it may use, not to the
// smallest piece, which here is part of a larger hole (a piece that is free and one pending).
TEST_P(SegmentHeap, BestFitRanksPiecesByTheirHole) {
  auto heap = make();
  std::atomic<std::uint64_t> completed{0};
  int s = 0, t = 0;
  void* p[8];
  for (void*& x : p) x = heap->allocate(8 * kib, 256, kind::large, {}, true);
  ASSERT_EQ(addr(p[7]), addr(p[0]) + 56 * kib);
  free_on_another_stream(*heap);
  ASSERT_EQ(heap->free(p[3], kind::large, {}), segment_heap::free_result::freed);  // a hole of 8 KiB
  ASSERT_EQ(heap->free(p[0], kind::large, {}), segment_heap::free_result::freed);  // with p[1]: 16 KiB
  ASSERT_EQ(heap->free(p[1], kind::large, {&completed, 1, &s, true}), segment_heap::free_result::freed);
  EXPECT_EQ(heap->allocate(8 * kib, 256, kind::large, {&t, true}, false), p[3]);
  EXPECT_EQ(heap->allocate(16 * kib, 256, kind::large, {&s, true}, false), p[0]);  // s: the whole hole
}

// With `behind`, a request that would split a hole at least eight times its size while a hole of
// its size waits behind another stream's epoch gets nullptr and that stream; without it, the
// looser fit. A request whose looser fit is under eight times its size is served as before.
TEST_P(SegmentHeap, ATighterFitBehindAnotherStreamsEpochIsNamed) {
  auto heap = make();
  std::atomic<std::uint64_t> t_done{0};
  int s = 0, t = 0;
  const stream_use on_s{&s, true};
  void* p[16];
  for (void*& x : p) x = heap->allocate(4 * kib, 256, kind::large, {}, true);
  ASSERT_EQ(addr(p[15]), addr(p[0]) + 60 * kib);
  free_on_another_stream(*heap);
  // p[1..8]: a 32 KiB hole with nothing pending; p[10]: 4 KiB pending behind t's epoch 1.
  for (int i = 1; i <= 8; ++i) ASSERT_EQ(heap->free(p[i], kind::large, {}), segment_heap::free_result::freed);
  ASSERT_EQ(heap->free(p[10], kind::large, {&t_done, 1, &t, true}), segment_heap::free_result::freed);
  const void* behind = nullptr;
  EXPECT_EQ(heap->allocate(4 * kib, 256, kind::large, on_s, false, &behind), nullptr);
  EXPECT_EQ(behind, &t);
  // 8 KiB: the 32 KiB hole is four times it; served, and nothing named.
  behind = nullptr;
  void* q = heap->allocate(8 * kib, 256, kind::large, on_s, false, &behind);
  EXPECT_EQ(q, p[1]);
  EXPECT_EQ(behind, nullptr);
  ASSERT_EQ(heap->free(q, kind::large, {}), segment_heap::free_result::freed);
  // Without `behind`: the looser fit at once.
  q = heap->allocate(4 * kib, 256, kind::large, on_s, false);
  EXPECT_EQ(q, p[1]);
  ASSERT_EQ(heap->free(q, kind::large, {}), segment_heap::free_result::freed);
  // Once t's epoch completed, the hole of its size is everyone's best fit.
  t_done.store(1);
  behind = nullptr;
  EXPECT_EQ(heap->allocate(4 * kib, 256, kind::large, on_s, false, &behind), p[10]);
  EXPECT_EQ(behind, nullptr);
}

// While one stream alone has freed into the heap nothing waits behind another stream's epoch: no
// look for a tighter fit (its scan of the pending ranges cost a one-stream replay time).
TEST_P(SegmentHeap, WithOneStreamNoTighterFitIsLookedFor) {
  auto heap = make();
  std::atomic<std::uint64_t> s_done{0};
  int s = 0;
  void* p[16];
  for (void*& x : p) x = heap->allocate(4 * kib, 256, kind::large, {}, true);
  for (int i = 1; i <= 8; ++i) ASSERT_EQ(heap->free(p[i], kind::large, {}), segment_heap::free_result::freed);
  ASSERT_EQ(heap->free(p[10], kind::large, {&s_done, 1, &s, true}), segment_heap::free_result::freed);
  const void* behind = nullptr;
  int t = 0;  // a stream that has freed nothing: p[10] is not its to take yet
  EXPECT_EQ(heap->allocate(4 * kib, 256, kind::large, {&t, true}, false, &behind), p[1]);
  EXPECT_EQ(behind, nullptr);
}

TEST_P(SegmentHeap, TrimUnmapsExactlyTheWhollyFreePages) {
  auto heap = make();
  void* a = heap->allocate(page, 256, kind::large, {}, true);
  void* b = heap->allocate(2 * page + 4 * kib, 256, kind::large, {}, true);  // spills into a 4th page
  void* c = heap->allocate(8 * kib, 256, kind::large, {}, true);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(heap->stats().mapped_bytes, 4 * page);
  EXPECT_EQ(device_->chunk_bytes(), GetParam() ? 4 * page : heap->stats().mapped_bytes);
  EXPECT_EQ(heap->trim(), 0u);  // nothing wholly free
  ASSERT_EQ(heap->free(b, kind::large, {}), segment_heap::free_result::freed);
  // b covered pages 1, 2 and part of 3, which c shares: pages 1 and 2 go (virtual memory); a
  // chunk goes only when wholly free.
  EXPECT_EQ(heap->stats().unmappable_bytes, GetParam() ? 2 * page : 0u);
  EXPECT_EQ(heap->trim(), GetParam() ? 2 * page : 0u);
  EXPECT_EQ(device_->chunk_bytes(), heap->stats().mapped_bytes);
  ASSERT_EQ(heap->free(a, kind::large, {}), segment_heap::free_result::freed);
  ASSERT_EQ(heap->free(c, kind::large, {}), segment_heap::free_result::freed);
  heap->trim();
  EXPECT_EQ(heap->stats().mapped_bytes, 0u);
  EXPECT_EQ(device_->chunk_bytes(), 0u);
  // And it grows again, into the unmapped range.
  void* again = heap->allocate(3 * page, 256, kind::large, {}, true);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(heap->stats().mapped_bytes, 3 * page);
  EXPECT_EQ(heap->free(again, kind::large, {}), segment_heap::free_result::freed);
}

TEST_P(SegmentHeap, TrimLeavesPendingRangesAndTheInitialReservation) {
  auto heap = make();
  ASSERT_TRUE(heap->reserve_initial(2 * page));
  std::atomic<std::uint64_t> completed{0};
  int s = 0;
  void* a = heap->allocate(4 * page, page, kind::large, {}, true);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(heap->free(a, kind::large, {&completed, 1, &s, true}), segment_heap::free_result::freed);
  EXPECT_EQ(heap->trim(), 0u);  // pending: its device work may still run
  completed.store(1);
  // Virtual memory: the two pages mapped beyond the reservation; chunks: the request's own chunk.
  EXPECT_EQ(heap->trim(), GetParam() ? 2 * page : 4 * page);
  EXPECT_EQ(heap->stats().mapped_bytes, 2 * page);
}

TEST_P(SegmentHeap, MapFailuresLeaveTheHeapUnchanged) {
  auto heap = make();
  void* a = heap->allocate(8 * kib, 256, kind::large, {}, true);
  ASSERT_NE(a, nullptr);
  const auto before = heap->stats();
  device_->set_chunk_failure_probability(1.0);
  EXPECT_EQ(heap->allocate(2 * page, 256, kind::large, {}, true), nullptr);
  EXPECT_EQ(heap->allocate(page, page, kind::slab, {}, true), nullptr);
  const auto after = heap->stats();
  EXPECT_EQ(after.mapped_bytes, before.mapped_bytes);
  EXPECT_EQ(after.free_bytes, before.free_bytes);
  EXPECT_EQ(after.free_extents, before.free_extents);
  EXPECT_EQ(heap->allocate(8 * kib, 256, kind::large, {}, true), static_cast<char*>(a) + 8 * kib);  // fits: no map
  device_->set_chunk_failure_probability(0.0);
  EXPECT_NE(heap->allocate(2 * page, 256, kind::large, {}, true), nullptr);
}

TEST_P(SegmentHeap, ByteLimitBoundsMappedBytes) {
  segment_heap::config c;
  c.byte_limit = 4 * page;
  auto heap = make(c);
  void* a = heap->allocate(3 * page, 256, kind::large, {}, true);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(heap->allocate(2 * page, 256, kind::large, {}, true), nullptr);  // 5 pages > 4
  void* b = heap->allocate(page, 256, kind::large, {}, true);
  ASSERT_NE(b, nullptr);
  EXPECT_LE(heap->stats().mapped_bytes, c.byte_limit);
  // Freed memory serves a request of another shape without growing.
  ASSERT_EQ(heap->free(a, kind::large, {}), segment_heap::free_result::freed);
  EXPECT_NE(heap->allocate(2 * page, page, kind::slab, {}, true), nullptr);
  EXPECT_LE(heap->stats().peak_mapped_bytes, c.byte_limit);
}

TEST_P(SegmentHeap, NoGrowthServesOnlyTheInitialReservation) {
  segment_heap::config c;
  c.allow_growth = false;
  auto heap = make(c);
  ASSERT_TRUE(heap->reserve_initial(2 * page));
  void* a = heap->allocate(2 * page, 256, kind::large, {}, true);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(heap->allocate(256, 256, kind::large, {}, true), nullptr);
  EXPECT_EQ(heap->free(a, kind::large, {}), segment_heap::free_result::freed);
  EXPECT_EQ(heap->allocate(page, page, kind::slab, {}, true), a);
}

TEST_P(SegmentHeap, ReusesFreedRangesForOtherShapes) {
  if (!GetParam()) GTEST_SKIP() << "chunks are apart: other shapes need one contiguous range";
  auto heap = make();
  std::vector<void*> live;
  for (int i = 0; i < 16; ++i) live.push_back(heap->allocate((i % 5 + 1) * 24 * kib, 256, kind::large, {}, true));
  const std::size_t mapped = heap->stats().mapped_bytes;
  for (void* p : live) ASSERT_EQ(heap->free(p, kind::large, {}), segment_heap::free_result::freed);
  // All free and merged: one extent per contiguous run; the same bytes in other shapes fit.
  live.clear();
  for (int i = 0; i < 4; ++i) live.push_back(heap->allocate(mapped / 4 - 4 * kib, 256, kind::large, {}, true));
  for (void* p : live) EXPECT_NE(p, nullptr);
  EXPECT_EQ(heap->stats().mapped_bytes, mapped);
  for (void* p : live) heap->free(p, kind::large, {});
}

// An aligned hole of exactly the request's size is found: the search does not skip the bins
// below size + worst-case padding (a freed 64 KiB-aligned slab frame serves the next slab).
TEST_P(SegmentHeap, AnAlignedHoleOfExactlyTheSizeIsReused) {
  auto heap = make();
  void* a = heap->allocate(128 * kib, page, kind::slab, {}, true);
  void* b = heap->allocate(128 * kib, page, kind::slab, {}, true);
  void* c = heap->allocate(128 * kib, page, kind::slab, {}, true);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(heap->free(b, kind::slab, {}), segment_heap::free_result::freed);
  const std::size_t mapped = heap->stats().mapped_bytes;
  EXPECT_EQ(heap->allocate(128 * kib, page, kind::slab, {}, false), b);
  EXPECT_EQ(heap->stats().mapped_bytes, mapped);
  for (void* p : {a, b, c}) heap->free(p, kind::slab, {});
}

// Best fit among equal holes takes the lowest address, not the latest freed (the head of the bin's
// list): two holes of 2 pages between used extents, the higher one freed last; a request a little
// smaller takes the lower one, and the next one the higher. (A hole of exactly the request ends the
// search where it is found.)
TEST_P(SegmentHeap, EqualHolesGoLowestAddressFirst) {
  auto heap = make();
  std::vector<void*> p;
  for (int i = 0; i < 5; ++i) p.push_back(heap->allocate(2 * page, page, kind::large, {}, true));
  // (Chunks lie where the backend put them: p[3] may be below p[1].)
  void* lo = addr(p[1]) < addr(p[3]) ? p[1] : p[3];
  void* hi = lo == p[1] ? p[3] : p[1];
  ASSERT_EQ(heap->free(lo, kind::large, {}), segment_heap::free_result::freed);
  ASSERT_EQ(heap->free(hi, kind::large, {}), segment_heap::free_result::freed);
  void* first = heap->allocate(2 * page - 4 * kib, 256, kind::large, {}, true);
  void* second = heap->allocate(2 * page - 4 * kib, 256, kind::large, {}, true);
  EXPECT_EQ(first, lo);
  EXPECT_EQ(second, hi);
  for (void* q : {p[0], p[2], p[4], first, second}) EXPECT_EQ(heap->free(q, kind::large, {}), segment_heap::free_result::freed);
}

// remap_ratio: a request that fits no hole takes pages from the holes instead of growing the
// mapped bytes. Without it, the same pattern maps more.
TEST_P(SegmentHeap, RemapRatioMovesFreePagesInsteadOfGrowing) {
  if (!GetParam()) GTEST_SKIP() << "chunks cannot be remapped";
  for (const double ratio : {0.0, 1.0}) {
    segment_heap::config c;
    c.remap_ratio = ratio;
    auto heap = make(c);
    std::vector<void*> p;
    for (int i = 0; i < 4; ++i) p.push_back(heap->allocate(2 * page, page, kind::large, {}, true));
    ASSERT_EQ(heap->free(p[0], kind::large, {}), segment_heap::free_result::freed);
    ASSERT_EQ(heap->free(p[2], kind::large, {}), segment_heap::free_result::freed);  // two holes of 2 pages
    void* big = heap->allocate(4 * page, page, kind::large, {}, true);
    ASSERT_NE(big, nullptr);
    const heap_stats st = heap->stats();
    EXPECT_EQ(st.mapped_bytes, ratio == 0.0 ? 12 * page : 8 * page) << ratio;
    EXPECT_EQ(st.peak_mapped_bytes, st.mapped_bytes) << "pages are unmapped before new ones are mapped";
    EXPECT_EQ(device_->mapped_bytes(), st.mapped_bytes);
    std::vector<std::pair<void*, std::size_t>> live{{p[1], 2 * page}, {p[3], 2 * page}, {big, 4 * page}};
    std::uint32_t tag = 1;
    for (const auto& [q, n] : live) device_->fill({}, q, n, tag++);
    tag = 1;
    for (const auto& [q, n] : live) device_->verify({}, q, n, tag++);
    EXPECT_EQ(device_->verification_report().mismatched_ranges, 0u);
  }
}

// remap_ratio never unmaps pages of the run that growth extends: here the request on stream s takes
// a resolved range (4 pages), a range pending on s itself (1 page) and 2 new pages; the resolved
// range is also the largest free one, the first that remap would take pages from. Taking them
// handed out a range over unmapped pages (H200: cuMemMap failed with CUDA_ERROR_INVALID_VALUE later
// on, when the heap mapped pages it believed unmapped).
TEST_P(SegmentHeap, RemapKeepsTheRunThatGrowthExtends) {
  if (!GetParam()) GTEST_SKIP() << "chunks cannot be remapped";
  segment_heap::config c;
  c.remap_ratio = 1.0;
  auto heap = make(c);
  std::atomic<std::uint64_t> s_done{0}, t_done{0};
  int s_handle = 0, t_handle = 0;
  const stream_tag on_s{&s_done, 1, &s_handle, true};
  const stream_tag on_t{&t_done, 1, &t_handle, true};
  void* x0 = heap->allocate(2 * page, page, kind::large, {}, true);
  void* p2 = heap->allocate(4 * page, page, kind::large, {}, true);
  void* p1 = heap->allocate(page, page, kind::large, {}, true);
  ASSERT_EQ(addr(p2), addr(x0) + 2 * page);
  ASSERT_EQ(addr(p1), addr(p2) + 4 * page);
  ASSERT_EQ(heap->free(p1, kind::large, on_s), segment_heap::free_result::freed);
  ASSERT_EQ(heap->free(x0, kind::large, on_t), segment_heap::free_result::freed);  // a second stream
  ASSERT_EQ(heap->free(p2, kind::large, {}), segment_heap::free_result::freed);    // between two pending
  ASSERT_EQ(heap->stats().free_extents, 3u);
  void* big = heap->allocate(7 * page, page, kind::large, {&s_handle, true}, true);
  ASSERT_EQ(big, p2);
  const heap_stats st = heap->stats();
  EXPECT_EQ(st.mapped_bytes, device_->mapped_bytes());
  EXPECT_EQ(st.mapped_bytes, 9 * page);
  device_->fill({}, big, 7 * page, 7);
  device_->verify({}, big, 7 * page, 7);
  EXPECT_EQ(device_->verification_report().mismatched_ranges, 0u);
  EXPECT_EQ(heap->free(big, kind::large, {}), segment_heap::free_result::freed);
  t_done.store(1);
}

// remap_ratio with wait_own: a growth on stream s whose only movable pages are pending behind s's
// own epochs asks s to wait (nullptr, *wait_own) instead of growing; once s's epoch completed the
// same request moves them. Another stream's growth is never told to wait for s: it grows.
TEST_P(SegmentHeap, RemapWaitsForItsOwnStreamNeverForAnother) {
  if (!GetParam()) GTEST_SKIP() << "chunks cannot be remapped";
  int s_handle = 0, t_handle = 0;
  for (const bool own : {true, false}) {
    segment_heap::config c;
    c.remap_ratio = 1.0;
    auto heap = make(c);
    std::atomic<std::uint64_t> s_done{0};
    const stream_tag on_s{&s_done, 1, &s_handle, true};
    // Holes of 2 pages between used extents, both pending on s: 9 pages mapped, 5 in use.
    std::vector<void*> p;
    for (const std::size_t n : {2, 2, 2, 2, 1}) p.push_back(heap->allocate(n * page, page, kind::large, {}, true));
    ASSERT_EQ(heap->free(p[0], kind::large, on_s), segment_heap::free_result::freed);
    ASSERT_EQ(heap->free(p[2], kind::large, on_s), segment_heap::free_result::freed);
    const stream_use use{own ? static_cast<const void*>(&s_handle) : &t_handle, true};
    bool wait_own = false;
    void* big = heap->allocate(4 * page, page, kind::large, use, true, nullptr, &wait_own);
    if (own) {
      EXPECT_EQ(big, nullptr);
      EXPECT_TRUE(wait_own);
      EXPECT_EQ(heap->stats().remap_waits, 1u);
      EXPECT_EQ(heap->stats().mapped_bytes, 9 * page) << "nothing mapped or unmapped before the wait";
      s_done.store(1);  // s's epoch completed: the caller's wait returned
      wait_own = false;
      big = heap->allocate(4 * page, page, kind::large, use, true, nullptr, &wait_own);
    }
    ASSERT_NE(big, nullptr) << own;
    EXPECT_FALSE(wait_own) << own;
    const heap_stats st = heap->stats();
    // s: the holes' 4 pages moved to the top; t: it may not wait for s, so it grows.
    EXPECT_EQ(st.mapped_bytes, (own ? 9 : 13) * page) << own;
    EXPECT_EQ(st.remap_waits, own ? 1u : 0u);
    EXPECT_EQ(device_->mapped_bytes(), st.mapped_bytes);
    device_->fill({}, big, 4 * page, 9);
    device_->verify({}, big, 4 * page, 9);
    EXPECT_EQ(device_->verification_report().mismatched_ranges, 0u);
    for (void* q : {big, p[1], p[3], p[4]}) EXPECT_EQ(heap->free(q, kind::large, {}), segment_heap::free_result::freed);
    s_done.store(1);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, SegmentHeap, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "virtual_memory" : "chunks"; });

}  // namespace
}  // namespace cudapool::core
