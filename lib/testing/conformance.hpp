// conformance.hpp - the one typed test suite every variant runs, on every backend.
//
// A variant's test file instantiates it:
//   using configs = ::testing::Types<cudapool::testing::on_sim<my_pool>, cudapool::testing::on_cuda<my_pool>>;
//   INSTANTIATE_TYPED_TEST_SUITE_P(my_variant, conformance, configs);
// Tests that need the simulator's knobs (paused streams, injected failures) skip on CUDA; every
// test on_cuda skips with the reason when there is no GPU. A configuration may also have
// `static std::string set_up()` (run before the backend is made; a non-empty result skips the test
// with that reason) and `static void tear_down()` (after the test): the two-GPU configurations
// (lib/adapters/multi_gpu_test.cpp) set the caller's device there and check it is restored.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <cudapool/backend.hpp>
#include <cudapool/diagnostics.hpp>
#include <cudapool/errors.hpp>
#include <cudapool/options.hpp>

namespace cudapool::testing {

template <class Pool>
struct on_sim {
  using pool = Pool;
  static constexpr bool is_sim = true;
  static std::shared_ptr<backend> make_backend() { return make_sim_backend({}); }
};

template <class Pool>
struct on_cuda {
  using pool = Pool;
  static constexpr bool is_sim = false;
  static std::shared_ptr<backend> make_backend() { return make_cuda_backend(0); }
};

// An allocation call through a plain function pointer, so that noinline call sites show in stacks.
using any_allocate_fn = void* (*)(void* pool, std::size_t bytes);

// A configuration with options of its own (e.g. another implementation of a variant's internals):
// Base's pool and backend, and every test's options passed through Adjust::apply.
template <class Base, class Adjust>
struct with_options : Base {
  static void adjust(pool_options& o) { Adjust::apply(o); }
};

// Whether one pool serves every stream (false for stream_arenas, whose streams keep to their own
// memory: the tests of one stream's frees reused by another skip there; stream_arenas_test covers
// what it does instead).
template <class Pool>
inline constexpr bool one_pool_for_all_streams = !requires(const Pool& p) { p.owned_arenas(); };

// Counts reports from the pool's invalid-free hook.
struct invalid_free_log {
  std::mutex mutex;
  std::vector<std::pair<const void*, invalid_free_reason>> entries;
  static void hook(const void* p, invalid_free_reason r, void* self) {
    auto* log = static_cast<invalid_free_log*>(self);
    std::lock_guard lock(log->mutex);
    log->entries.emplace_back(p, r);
  }
};

template <class Config>
class conformance : public ::testing::Test {
 protected:
  using pool_type = typename Config::pool;

  void SetUp() override {
    if constexpr (requires { Config::set_up(); }) {
      if (const std::string skip = Config::set_up(); !skip.empty()) GTEST_SKIP() << skip;
    }
    if constexpr (!Config::is_sim) {
      if (cuda_device_count() == 0) {
        GTEST_SKIP() << "no CUDA GPU on this machine (cuda backend built: " << std::boolalpha << cuda_backend_built()
                     << "); these tests run on the GPU host";
      }
    }
    device_ = Config::make_backend();
  }

  void TearDown() override {
    if constexpr (requires { Config::tear_down(); }) {
      if (device_ != nullptr) Config::tear_down();
    }
  }

  // Options that report invalid frees into log_ instead of stderr.
  pool_options options() {
    pool_options o;
    o.on_invalid_free = invalid_free_log::hook;
    o.invalid_free_context = &log_;
    if constexpr (requires { Config::adjust(o); }) Config::adjust(o);  // a configuration's own options
    return o;
  }
  std::unique_ptr<pool_type> make(const pool_options& o) { return std::make_unique<pool_type>(device_, o); }
  sim_backend& sim() { return static_cast<sim_backend&>(*device_); }

  // Per class: free + cached + pending + in_use == capacity (only meaningful at quiescence).
  static void expect_balanced(const pool_stats& s) {
    for (std::size_t c = 0; c < s.classes.size(); ++c) {
      const class_stats& k = s.classes[c];
      EXPECT_EQ(k.free_blocks + k.cached_blocks + k.pending_blocks + k.in_use_blocks, k.capacity_blocks)
          << "class " << c << " (" << k.block_bytes << " B): free " << k.free_blocks << " cached " << k.cached_blocks
          << " pending " << k.pending_blocks << " in use " << k.in_use_blocks;
    }
    // Every mapped byte is a slab, a free heap range or a large extent.
    EXPECT_EQ(s.reserved_bytes, s.heap.mapped_bytes);
    EXPECT_EQ(s.heap.mapped_bytes, s.heap.slab_bytes + s.heap.free_bytes + s.heap.large_bytes) << to_json(s);
    EXPECT_LE(s.heap.pending_bytes, s.heap.free_bytes);
  }

  // Stamps every allocation with its own tag on the device, then verifies all of them: any two
  // allocations that overlap make a verify fail.
  void stamp_and_verify(const std::vector<std::pair<void*, std::size_t>>& allocations) {
    std::uint32_t tag = 0x1000;
    for (const auto& [p, n] : allocations) device_->fill({}, p, n / 4 * 4, tag++);
    tag = 0x1000;
    for (const auto& [p, n] : allocations) device_->verify({}, p, n / 4 * 4, tag++);
    const verify_report r = device_->verification_report();
    EXPECT_EQ(r.mismatched_ranges, 0u);
  }

  // Before destroying a stream the pool used: retire_stream where the variant has it.
  static void retire(pool_type& pool, stream_ref s) {
    if constexpr (requires { pool.retire_stream(s); }) {
      pool.retire_stream(s);
    } else {
      pool.flush_stream(s);
    }
  }

  // The end of a test's streams: retired (or flushed), the device drained, then destroyed.
  void finish_streams(pool_type& pool, std::initializer_list<stream_ref> streams) {
    for (const stream_ref s : streams) retire(pool, s);
    device_->synchronize_device();
    for (const stream_ref s : streams) device_->destroy_stream(s);
  }

  static void expect_disjoint(std::vector<std::pair<void*, std::size_t>> v) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i) {
      ASSERT_LE(static_cast<char*>(v[i - 1].first) + v[i - 1].second, static_cast<char*>(v[i].first))
          << "blocks " << v[i - 1].first << " and " << v[i].first << " overlap";
    }
  }

  std::shared_ptr<backend> device_;
  invalid_free_log log_;
};

TYPED_TEST_SUITE_P(conformance);

TYPED_TEST_P(conformance, DistinctNonOverlappingBlocks) {
  auto pool = this->make(this->options());
  std::mt19937 rng(7);
  std::vector<std::pair<void*, std::size_t>> live;
  for (int i = 0; i < 400; ++i) {
    const std::size_t n = std::size_t{4} << (rng() % 19);  // 4 B .. 1 MiB
    live.emplace_back(pool->allocate(n), n);
  }
  live.emplace_back(pool->allocate(3 << 20), 3 << 20);  // large path too
  this->expect_disjoint(live);
  this->stamp_and_verify(live);
  for (auto& [p, n] : live) pool->deallocate(p);
  EXPECT_TRUE(this->log_.entries.empty());
}

TYPED_TEST_P(conformance, Alignment) {
  auto pool = this->make(this->options());
  std::vector<void*> ps;
  for (std::size_t n : {1, 100, 256, 257, 1000, 4096, 70000, 1 << 20, 5 << 20}) {
    void* p = pool->allocate(n);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % min_alignment, 0u) << n;
    ps.push_back(p);
  }
  for (std::size_t align : {512, 1024, 4096, 65536, 1 << 20}) {
    for (std::size_t n : {1, 300, 5000, 3 << 20}) {
      void* p = pool->allocate(n, align);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u) << n << " aligned to " << align;
      ps.push_back(p);
    }
  }
  EXPECT_THROW((void)pool->allocate(100, 300), std::invalid_argument);
  EXPECT_EQ(pool->try_allocate(100, 300), nullptr);
  for (void* p : ps) pool->deallocate(p);
  EXPECT_TRUE(this->log_.entries.empty());
}

TYPED_TEST_P(conformance, EveryClassBoundary) {
  auto pool = this->make(this->options());
  const pool_stats s = pool->stats();
  std::vector<std::pair<void*, std::size_t>> live;
  for (const class_stats& c : s.classes) {
    for (std::size_t n : {c.block_bytes - 1, c.block_bytes, c.block_bytes + 1}) live.emplace_back(pool->allocate(n), n);
  }
  this->expect_disjoint(live);
  this->stamp_and_verify(live);
  // size-1 and size land in the class; size+1 in the next one.
  const pool_stats after = pool->stats();
  for (std::size_t c = 0; c + 1 < after.classes.size(); ++c) EXPECT_EQ(after.classes[c].in_use_blocks, c == 0 ? 2u : 3u) << c;
  for (auto& [p, n] : live) pool->deallocate(p);
}

TYPED_TEST_P(conformance, ZeroSizeRequestsReturnNull) {
  auto pool = this->make(this->options());
  EXPECT_EQ(pool->allocate(0), nullptr);
  EXPECT_EQ(pool->try_allocate(0), nullptr);
  pool->deallocate(nullptr);
  pool->deallocate(nullptr, stream_ref{});
  const pool_stats s = pool->stats();
  EXPECT_EQ(s.allocs, 0u);
  EXPECT_EQ(s.invalid_frees, 0u);
  EXPECT_EQ(s.reserved_bytes, 0u);
}

TYPED_TEST_P(conformance, HugeRequestIsACleanOutOfMemory) {
  pool_options o = this->options();
  o.byte_limit = std::size_t{64} << 20;
  auto pool = this->make(o);
  void* keep = pool->allocate(1000);
  try {
    (void)pool->allocate(std::size_t{1} << 40);
    FAIL() << "expected out_of_memory";
  } catch (const out_of_memory& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("requested 1024.00 GiB"), std::string::npos) << what;
    EXPECT_NE(what.find("reserved"), std::string::npos) << what;
    EXPECT_NE(what.find("in use"), std::string::npos) << what;
  }
  EXPECT_EQ(pool->try_allocate(std::size_t{1} << 40), nullptr);
  std::uint64_t ooms = 2;
  if constexpr (requires { pool->allocate_or_null(1, 1); }) {  // a variant's pool (the arenas' front uses it)
    EXPECT_EQ(pool->allocate_or_null(std::size_t{1} << 40, min_alignment), nullptr);  // exhausted: no throw
    EXPECT_THROW((void)pool->allocate_or_null(1000, 3), std::invalid_argument);      // other errors throw
    ++ooms;
  }
  EXPECT_EQ(pool->stats().ooms, ooms);
  void* p = pool->allocate(1000);  // still works
  EXPECT_NE(p, nullptr);
  pool->deallocate(p);
  pool->deallocate(keep);
  EXPECT_EQ(pool->stats().in_use_bytes, 0u);
}

// A request the backend refuses (no byte limit in the way) leaves no trace in the reserved peak.
TYPED_TEST_P(conformance, ARefusedRequestDoesNotRaiseThePeak) {
  auto pool = this->make(this->options());
  void* keep = pool->allocate(1000);
  std::size_t huge = std::size_t{1} << 50;  // 1 PiB: no GPU has it
  if constexpr (TypeParam::is_sim) {
    this->sim().set_chunk_byte_limit(this->device_->chunk_bytes() + (std::size_t{64} << 20));
    huge = std::size_t{1} << 30;
  }
  EXPECT_EQ(pool->try_allocate(huge), nullptr);
  const pool_stats st = pool->stats();
  EXPECT_LT(st.peak_reserved_bytes, std::size_t{64} << 20) << to_json(st);
  EXPECT_EQ(st.peak_reserved_bytes, st.reserved_bytes);
  pool->deallocate(keep);
}

TYPED_TEST_P(conformance, InvalidFreesAreRejectedAndLeaveThePoolUnchanged) {
  auto pool = this->make(this->options());
  auto other = this->make(this->options());
  void* small = pool->allocate(1024);
  void* large = pool->allocate(3 << 20);
  void* theirs = other->allocate(1024);
  int on_stack = 0;
  const pool_stats before = pool->stats();

  pool->deallocate(&on_stack);                               // foreign
  pool->deallocate(theirs);                                  // foreign: another pool's block
  pool->deallocate(static_cast<char*>(small) + 256);         // interior
  pool->deallocate(static_cast<char*>(large) + 4096);        // interior of a large allocation
  void* extra = pool->allocate(1024);
  pool->deallocate(extra);
  pool->deallocate(extra);                                   // double free
  pool->deallocate(extra, stream_ref{});                     // double free, stream-ordered

  ASSERT_EQ(this->log_.entries.size(), 6u);
  EXPECT_EQ(this->log_.entries[0].second, invalid_free_reason::foreign_pointer);
  EXPECT_EQ(this->log_.entries[1].second, invalid_free_reason::foreign_pointer);
  EXPECT_EQ(this->log_.entries[2].second, invalid_free_reason::interior_pointer);
  EXPECT_EQ(this->log_.entries[3].second, invalid_free_reason::interior_pointer);
  EXPECT_EQ(this->log_.entries[4].second, invalid_free_reason::double_free);
  EXPECT_EQ(this->log_.entries[5].second, invalid_free_reason::double_free);
  EXPECT_EQ(this->log_.entries[2].first, static_cast<char*>(small) + 256);

  const pool_stats after = pool->stats();
  EXPECT_EQ(after.invalid_frees, 6u);
  EXPECT_EQ(after.in_use_bytes, before.in_use_bytes);
  EXPECT_EQ(after.reserved_bytes, before.reserved_bytes);
  EXPECT_EQ(after.frees, before.frees + 1);  // only the one legitimate free of `extra`
  EXPECT_EQ(after.allocs, before.allocs + 1);
  this->expect_balanced(after);
  EXPECT_EQ(other->stats().invalid_frees, 0u);

  pool->deallocate(small);
  pool->deallocate(large);
  other->deallocate(theirs);
  EXPECT_EQ(this->log_.entries.size(), 6u);
  EXPECT_EQ(pool->stats().in_use_bytes, 0u);
}

TYPED_TEST_P(conformance, OutOfMemoryAndRecoveryWithInjectedFailures) {
  if constexpr (!TypeParam::is_sim) GTEST_SKIP() << "needs the simulator's failure injection";
  pool_options o = this->options();
  o.first_slab_bytes = o.slab_bytes;  // page-sized slabs: the next class's slab needs a new page
  auto pool = this->make(o);
  void* warm = pool->allocate(4096);  // one slab of the 4 KiB class exists
  this->sim().set_chunk_failure_probability(1.0);
  EXPECT_THROW((void)pool->allocate(8192), out_of_memory);  // needs a new slab: fails
  EXPECT_EQ(pool->try_allocate(3 << 20), nullptr);          // large: fails
  void* same_class = pool->allocate(4096);                  // existing slab still serves
  EXPECT_NE(same_class, nullptr);
  this->expect_balanced(pool->stats());
  this->sim().set_chunk_failure_probability(0.0);
  void* p = pool->allocate(8192);
  void* q = pool->allocate(3 << 20);
  EXPECT_NE(p, nullptr);
  EXPECT_NE(q, nullptr);
  for (void* x : {warm, same_class, p, q}) pool->deallocate(x);
  const pool_stats s = pool->stats();
  EXPECT_EQ(s.ooms, 2u);
  EXPECT_EQ(s.in_use_bytes, 0u);
  this->expect_balanced(s);
}

TYPED_TEST_P(conformance, ByteLimitThenRecoveryAfterFrees) {
  pool_options o = this->options();
  o.byte_limit = std::size_t{8} << 20;  // four 2 MiB slabs
  auto pool = this->make(o);
  std::vector<void*> ps;
  while (void* p = pool->try_allocate(512 << 10)) ps.push_back(p);
  EXPECT_EQ(ps.size(), 16u) << to_json(pool->stats());  // 8 MiB in slabs of 1, 2, 4, 4, 4 and 1 blocks
  EXPECT_LE(pool->stats().reserved_bytes, o.byte_limit);
  EXPECT_THROW((void)pool->allocate(1 << 10), out_of_memory);  // no room for a 1 KiB slab either
  for (void* p : ps) pool->deallocate(p);
  // The 512 KiB slabs are wholly free: the slow path gives them back to make room.
  void* small = pool->allocate(1 << 10);
  EXPECT_NE(small, nullptr);
  pool->deallocate(small);
  this->expect_balanced(pool->stats());
}

TYPED_TEST_P(conformance, TrimGivesWhollyFreeSlabsBack) {
  auto pool = this->make(this->options());
  const std::size_t base = this->device_->chunk_bytes();
  std::vector<void*> ps;
  for (int i = 0; i < 300; ++i) ps.push_back(pool->allocate(64 << 10));
  ps.push_back(pool->allocate(5 << 20));
  const std::size_t reserved = pool->stats().reserved_bytes;
  EXPECT_EQ(this->device_->chunk_bytes() - base, reserved);
  void* kept = ps.front();
  for (std::size_t i = 1; i < ps.size(); ++i) pool->deallocate(ps[i]);
  const std::size_t released = pool->trim();
  const pool_stats s = pool->stats();
  EXPECT_GT(released, 0u);
  EXPECT_EQ(s.reserved_bytes, reserved - released);
  EXPECT_EQ(s.reserved_bytes, std::size_t{2} << 20);  // only the slab holding `kept`
  EXPECT_EQ(this->device_->chunk_bytes() - base, s.reserved_bytes);
  this->expect_balanced(s);
  pool->deallocate(kept);
  EXPECT_EQ(pool->trim(), std::size_t{2} << 20);
  EXPECT_EQ(this->device_->chunk_bytes(), base);
  void* again = pool->allocate(64 << 10);  // the pool grows again after a full trim
  pool->deallocate(again);
}

TYPED_TEST_P(conformance, LargeAllocationsAreReusedFromTheHeap) {
  auto pool = this->make(this->options());
  void* a = pool->allocate(3 << 20);
  pool->deallocate(a);
  void* b = pool->allocate(3 << 20);
  EXPECT_EQ(a, b);  // best fit: the freed range
  const pool_stats s = pool->stats();
  EXPECT_EQ(s.heap.large_count, 1u);
  EXPECT_EQ(s.grows, 0u);
  EXPECT_EQ(s.heap.maps, 1u);
  pool->deallocate(b);
  EXPECT_EQ(pool->stats().heap.large_count, 0u);
  EXPECT_EQ(pool->stats().heap.free_bytes, std::size_t{4} << 20);  // 3 MiB in 2 MiB pages (or a 4 MiB chunk)
  EXPECT_EQ(pool->trim(), std::size_t{4} << 20);
  this->expect_balanced(pool->stats());
}

// Split and coalesce at every boundary: the first extent, the last, one with free neighbours on
// both sides. Freed neighbours serve a request of their joint size without new memory.
TYPED_TEST_P(conformance, LargeFreesCoalesceAtEveryBoundary) {
  auto pool = this->make(this->options());
  constexpr std::size_t mib = std::size_t{1} << 20;
  void* a = pool->allocate(2 * mib);
  void* b = pool->allocate(3 * mib);
  void* c = pool->allocate(3 * mib);
  void* d = pool->allocate(2 * mib);
  const pool_stats before = pool->stats();
  pool->deallocate(b);                       // neighbours used on both sides
  void* b2 = pool->allocate(3 * mib);
  if (before.heap.virtual_memory) EXPECT_EQ(b2, b);
  pool->deallocate(b2);
  pool->deallocate(a);                       // the first, merging with b
  pool->deallocate(c);                       // free neighbours on both sides: a+b and (not yet) d
  void* abc = pool->allocate(8 * mib);       // a, b and c together
  pool->deallocate(d);                       // the last
  const pool_stats s = pool->stats();
  if (before.heap.virtual_memory) {
    EXPECT_EQ(abc, a) << "the three freed neighbours were not merged";
    EXPECT_EQ(s.heap.maps, before.heap.maps) << "a merged range was not reused";
    EXPECT_EQ(s.reserved_bytes, before.reserved_bytes);
  }
  pool->deallocate(abc);
  const pool_stats after = pool->stats();
  if (after.heap.virtual_memory) {
    EXPECT_EQ(after.heap.free_extents, 1u);
    EXPECT_EQ(after.heap.fragmentation, 0.0);
  }
  this->expect_balanced(after);
  pool->trim();
  EXPECT_EQ(pool->stats().reserved_bytes, 0u);
}

TYPED_TEST_P(conformance, LargeAlignmentUpToOneGiB) {
  auto pool = this->make(this->options());
  std::vector<void*> ps;
  for (std::size_t align = 512; align <= (std::size_t{1} << 30); align <<= 3) {
    void* p = pool->allocate(3 << 20, align);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u) << align;
    ps.push_back(p);
  }
  void* gib = pool->allocate(1000, std::size_t{1} << 30);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(gib) % (std::size_t{1} << 30), 0u);
  ps.push_back(gib);
  std::vector<std::pair<void*, std::size_t>> ranges;
  for (std::size_t i = 0; i + 1 < ps.size(); ++i) ranges.emplace_back(ps[i], 3 << 20);
  this->stamp_and_verify(ranges);
  for (void* p : ps) pool->deallocate(p);
  this->expect_balanced(pool->stats());
}

// Memory freed by large allocations serves the slabs of any class without new device memory; and
// under a byte limit, memory held by free slabs serves a large request again.
TYPED_TEST_P(conformance, SlabsAndLargeRequestsShareTheHeap) {
  pool_options o = this->options();
  o.byte_limit = std::size_t{8} << 20;
  auto pool = this->make(o);
  void* big = pool->allocate(8 << 20);
  const pool_stats before = pool->stats();
  pool->deallocate(big);
  std::vector<void*> small;
  for (int i = 0; i < 64; ++i) small.push_back(pool->allocate(64 << 10));  // 4 MiB of slabs
  for (int i = 0; i < 8; ++i) small.push_back(pool->allocate(256 << 10));  // 2 MiB more
  pool_stats s = pool->stats();
  EXPECT_EQ(s.heap.maps, before.heap.maps) << to_json(s);
  EXPECT_EQ(s.reserved_bytes, before.reserved_bytes);
  EXPECT_GE(s.heap.slab_bytes, std::size_t{6} << 20);
  EXPECT_LE(s.heap.slab_bytes, std::size_t{8} << 20);
  for (void* p : small) pool->deallocate(p);
  void* again = pool->allocate(8 << 20);  // only if the free slabs make room
  s = pool->stats();
  EXPECT_LE(s.peak_reserved_bytes, o.byte_limit) << to_json(s);
  pool->deallocate(again);
  this->expect_balanced(pool->stats());
}

TYPED_TEST_P(conformance, ByteLimitBoundsLargeRequests) {
  pool_options o = this->options();
  o.byte_limit = std::size_t{8} << 20;
  auto pool = this->make(o);
  void* a = pool->allocate(6 << 20);
  EXPECT_EQ(pool->try_allocate(4 << 20), nullptr);
  EXPECT_THROW((void)pool->allocate(3 << 20), out_of_memory);
  EXPECT_LE(pool->stats().peak_reserved_bytes, o.byte_limit);
  pool->deallocate(a);
  void* b = pool->allocate(4 << 20);
  void* c = pool->allocate(4 << 20);
  EXPECT_LE(pool->stats().peak_reserved_bytes, o.byte_limit);
  pool->deallocate(b);
  pool->deallocate(c);
  this->expect_balanced(pool->stats());
}

// Map failures injected at random points of a mixed workload leave the pool consistent: every
// failed request is a clean nullptr, and everything is given back at the end.
TYPED_TEST_P(conformance, InjectedMapFailuresLeaveThePoolConsistent) {
  if constexpr (!TypeParam::is_sim) GTEST_SKIP() << "needs the simulator's failure injection";
  auto pool = this->make(this->options());
  const stream_ref s = this->device_->create_stream();
  std::mt19937 rng(11);
  this->sim().set_chunk_failure_probability(0.3);
  std::vector<std::pair<void*, std::size_t>> live;
  std::size_t failed = 0;
  for (int i = 0; i < 2000; ++i) {
    if (live.size() < 40 && rng() % 3 != 0) {
      const std::size_t n = rng() % 4 == 0 ? (std::size_t{1} << 20) + rng() % (12 << 20) : 256 + rng() % (300 << 10);
      void* p = pool->try_allocate(n, s);
      if (p == nullptr) {
        ++failed;
      } else {
        live.emplace_back(p, n);
      }
    } else if (!live.empty()) {
      const std::size_t k = rng() % live.size();
      if (rng() % 2) {
        pool->deallocate(live[k].first, s);
      } else {
        this->device_->synchronize(s);
        pool->deallocate(live[k].first);
      }
      live[k] = live.back();
      live.pop_back();
    }
  }
  this->sim().set_chunk_failure_probability(0.0);
  EXPECT_GT(failed, 0u) << "no injected failure was hit";
  this->device_->synchronize(s);
  this->stamp_and_verify(live);
  this->expect_balanced(pool->stats());
  for (const auto& [p, n] : live) pool->deallocate(p, s);
  pool->flush_stream(s);
  this->device_->synchronize(s);
  pool->trim();
  const pool_stats st = pool->stats();
  EXPECT_EQ(st.reserved_bytes, 0u) << to_json(st);
  EXPECT_EQ(this->device_->chunk_bytes(), 0u);
  this->device_->destroy_stream(s);
}

// A miss on t that finds a range freed on s still pending polls the epochs
// (options().poll_before_growth) before it maps new memory: once s gets there (resumed 100 ms
// later), t gets the range and the pool has not grown. With the poll off t grows at once.
TYPED_TEST_P(conformance, AMissPollsPendingFreesBeforeGrowing) {
  if constexpr (!one_pool_for_all_streams<typename TypeParam::pool>) {
    GTEST_SKIP() << "stream arenas: another stream does not take this stream's memory";
  }
  if constexpr (!TypeParam::is_sim) GTEST_SKIP() << "needs the simulator's paused streams";
  constexpr std::size_t n = std::size_t{16} << 20;
  for (const bool poll : {true, false}) {
    pool_options o = this->options();
    o.poll_before_growth = poll ? std::chrono::nanoseconds(std::chrono::seconds(60)) : std::chrono::nanoseconds(0);
    auto pool = this->make(o);
    const stream_ref s = this->device_->create_stream();
    const stream_ref t = this->device_->create_stream();
    void* p = pool->allocate(n, s);
    this->sim().pause(s);
    pool->deallocate(p, s);
    const std::size_t reserved = pool->stats().reserved_bytes;
    std::thread resumer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      this->sim().resume(s);
    });
    void* q = pool->allocate(n, t);  // closes s's epoch; its event completes once s resumes
    resumer.join();
    if (poll) {
      EXPECT_EQ(q, p) << "the poll did not wait for s";
      EXPECT_EQ(pool->stats().reserved_bytes, reserved);
    } else {
      EXPECT_NE(q, p);
      EXPECT_GT(pool->stats().reserved_bytes, reserved);
    }
    pool->deallocate(q, t);
    this->finish_streams(*pool, {s, t});
  }
}

// A large range freed on a paused stream s is never handed to another stream before s gets there,
// whether or not it merged with free neighbours; s itself may reuse it at once.
TYPED_TEST_P(conformance, StreamOrderedLargeFreeWaitsForItsStream) {
  if constexpr (!one_pool_for_all_streams<typename TypeParam::pool>) {
    GTEST_SKIP() << "stream arenas: another stream does not take this stream's memory";
  }
  if constexpr (!TypeParam::is_sim) GTEST_SKIP() << "needs the simulator's paused streams";
  auto pool = this->make(this->options());
  const stream_ref s = this->device_->create_stream();
  const stream_ref t = this->device_->create_stream();
  constexpr std::size_t n = 3 << 20;
  void* left = pool->allocate(n, s);
  void* p = pool->allocate(n, s);
  this->sim().pause(s);
  this->device_->fill(s, p, n, 0xA);
  pool->deallocate(left);  // free now: p's range merges with it
  pool->deallocate(p, s);
  pool->flush_stream(s);
  std::vector<void*> others;
  for (std::uint32_t i = 0; i < 8; ++i) {
    void* q = pool->allocate(n, t);
    this->device_->fill(t, q, n, 0xB0000 + i);
    others.push_back(q);
  }
  const auto lo = reinterpret_cast<std::uintptr_t>(p);
  for (void* q : others) {
    const auto a = reinterpret_cast<std::uintptr_t>(q);
    EXPECT_TRUE(a + n <= lo || a >= lo + n) << "another stream got the pending range";
  }
  this->sim().resume(s);
  this->device_->synchronize_device();
  for (std::uint32_t i = 0; i < others.size(); ++i) this->device_->verify(t, others[i], n, 0xB0000 + i);
  EXPECT_EQ(this->device_->verification_report().mismatched_ranges, 0u);
  // Once s completed (and the pool saw it), t gets the range, merged. (t's ranges stay live: freed,
  // they would be a hole that best fit prefers to the merged range, which borders the unmapped
  // pages since t's growth mapped above them, segment_heap::grow.)
  void* back = pool->allocate(2 * n, t);
  EXPECT_EQ(back, left < p ? left : p) << "the freed neighbours did not come back merged";
  pool->deallocate(back, t);
  for (void* q : others) pool->deallocate(q, t);
  pool->flush_stream(t);
  this->finish_streams(*pool, {s, t});
}

// A block freed on a paused stream s may be handed out again before s resumes only if the new
// owner's stream is made to wait for s on the device. Checked on the data: s writes A into the block
// (while paused), the new owners write their own tags on t; after s resumes, every live block must
// hold its owner's tag (an unordered reuse leaves A there, written last).
TYPED_TEST_P(conformance, StreamOrderedFreeIsNotReusedBeforeTheStreamGetsThere) {
  if constexpr (!TypeParam::is_sim) GTEST_SKIP() << "needs the simulator's paused streams";
  auto pool = this->make(this->options());
  const stream_ref s = this->device_->create_stream();
  const stream_ref t = this->device_->create_stream();
  void* p = pool->allocate(4096, s);
  this->sim().pause(s);
  this->device_->fill(s, p, 4096, 0xA);
  pool->deallocate(p, s);
  pool->flush_stream(s);
  std::vector<void*> others;
  for (std::uint32_t i = 0; i < 2000; ++i) {  // enough to need reclaim and growth several times
    void* q = pool->allocate(4096, t);
    this->device_->fill(t, q, 4096, 0xB0000 + i);
    others.push_back(q);
  }
  this->sim().resume(s);
  this->device_->synchronize_device();
  for (std::uint32_t i = 0; i < others.size(); ++i) this->device_->verify(t, others[i], 4096, 0xB0000 + i);
  EXPECT_EQ(this->device_->verification_report().mismatched_ranges, 0u)
      << "a block was reused on another stream before the stream it was freed on got there";
  for (void* q : others) pool->deallocate(q, t);
  pool->flush_stream(t);
  this->device_->synchronize_device();
  // Once every stream is idle, the block comes back.
  bool reused = false;
  for (int i = 0; i < 4000 && !reused; ++i) {
    void* q = pool->allocate(4096, s);
    reused = q == p;
    others.push_back(q);
  }
  EXPECT_TRUE(reused) << "the block never came back after its stream completed";
  for (std::size_t i = 2000; i < others.size(); ++i) pool->deallocate(others[i], s);
  pool->flush_stream(s);
  this->device_->synchronize_device();
  this->device_->destroy_stream(s);
  this->device_->destroy_stream(t);
}

TYPED_TEST_P(conformance, OutOfMemoryWaitsForPendingFreesFirst) {
  pool_options o = this->options();
  o.fixed_block_bytes = 1 << 20;
  o.initial_reservation = 2 << 20;  // exactly two blocks, and never more
  o.allow_growth = false;
  auto pool = this->make(o);
  const stream_ref s = this->device_->create_stream();
  void* a = pool->allocate(1 << 20);
  void* b = pool->allocate(1 << 20);
  EXPECT_EQ(pool->try_allocate(1), nullptr);
  this->device_->spin(s, std::chrono::milliseconds(50));
  pool->deallocate(a, s);
  void* c = pool->allocate(100);  // waits for s instead of failing
  EXPECT_EQ(c, a);
  pool->deallocate(b);
  pool->deallocate(c);
  this->device_->destroy_stream(s);
}

TYPED_TEST_P(conformance, FixedPoolNeverCallsTheBackendAfterStartUp) {
  pool_options o = this->options();
  o.fixed_block_bytes = 4096;
  o.initial_reservation = 4 << 20;
  o.allow_growth = false;
  const std::size_t base = this->device_->chunk_bytes();
  auto pool = this->make(o);
  const std::size_t held = this->device_->chunk_bytes() - base;
  EXPECT_EQ(held, std::size_t{4} << 20);
  std::vector<void*> ps;
  while (void* p = pool->try_allocate(4096)) ps.push_back(p);
  EXPECT_EQ(ps.size(), 1024u);
  EXPECT_EQ(pool->try_allocate(5000), nullptr);  // above the one class: large path, no growth
  for (void* p : ps) pool->deallocate(p);
  pool->trim();  // frames of the reservation are kept
  EXPECT_EQ(this->device_->chunk_bytes() - base, held);
  for (int i = 0; i < 1024; ++i) ps[i] = pool->allocate(1);
  for (void* p : ps) pool->deallocate(p);
}

TYPED_TEST_P(conformance, StatsBalanceAtQuiescence) {
  auto pool = this->make(this->options());
  const stream_ref s = this->device_->create_stream();
  std::mt19937 rng(3);
  std::vector<void*> live;
  for (int i = 0; i < 3000; ++i) {
    if (live.empty() || rng() % 3 != 0) {
      live.push_back(pool->allocate(256 + rng() % (200 << 10)));
    } else {
      const std::size_t k = rng() % live.size();
      if (rng() % 2) {
        pool->deallocate(live[k], s);
      } else {
        pool->deallocate(live[k]);
      }
      live[k] = live.back();
      live.pop_back();
    }
  }
  pool_stats st = pool->stats();
  this->expect_balanced(st);
  EXPECT_EQ(st.allocs - st.frees, live.size());
  // Epochs for the frees on s; the stream variant keeps them in s's partition instead and hands
  // them to other streams once s is idle (no event).
  if (TestFixture::pool_type::variant() != "stream") EXPECT_GT(st.events_recorded, 0u);
  EXPECT_EQ(st.requested_bytes > 0, true);
  for (void* p : live) pool->deallocate(p, s);
  pool->flush_stream(s);
  this->device_->synchronize(s);
  pool->trim();
  st = pool->stats();
  this->expect_balanced(st);
  EXPECT_EQ(st.in_use_bytes, 0u);
  EXPECT_EQ(st.requested_bytes, 0u);
  EXPECT_EQ(st.pending_bytes, 0u);
  EXPECT_EQ(st.reserved_bytes, 0u);
  EXPECT_NE(to_json(st).find("\"in_use_bytes\":0"), std::string::npos);
  this->device_->destroy_stream(s);
}

TYPED_TEST_P(conformance, ManyThreadsAllocateAndFreeConcurrently) {
  auto pool = this->make(this->options());
  std::mutex shadow_mutex;
  std::map<std::uintptr_t, std::uintptr_t> shadow;  // live [start, end)
  std::atomic<int> overlaps{0};
  constexpr int threads = 8;
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::vector<std::pair<void*, std::size_t>> mine;
      for (int i = 0; i < 3000; ++i) {
        if (mine.size() < 32 && (mine.empty() || rng() % 2)) {
          const std::size_t n = 256 << (rng() % 8);
          void* p = pool->allocate(n);
          const auto a = reinterpret_cast<std::uintptr_t>(p);
          std::lock_guard lock(shadow_mutex);
          auto next = shadow.lower_bound(a);
          if ((next != shadow.end() && next->first < a + n) ||
              (next != shadow.begin() && std::prev(next)->second > a)) {
            ++overlaps;
          }
          shadow.emplace(a, a + n);
          mine.emplace_back(p, n);
        } else {
          const std::size_t k = rng() % mine.size();
          {
            std::lock_guard lock(shadow_mutex);
            shadow.erase(reinterpret_cast<std::uintptr_t>(mine[k].first));
          }
          pool->deallocate(mine[k].first);
          mine[k] = mine.back();
          mine.pop_back();
        }
      }
      for (auto& [p, n] : mine) {
        {
          std::lock_guard lock(shadow_mutex);
          shadow.erase(reinterpret_cast<std::uintptr_t>(p));
        }
        pool->deallocate(p);
      }
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(overlaps.load(), 0);
  const pool_stats s = pool->stats();
  EXPECT_EQ(s.in_use_bytes, 0u);
  EXPECT_EQ(s.allocs, s.frees);
  this->expect_balanced(s);
  EXPECT_TRUE(this->log_.entries.empty());
}

TYPED_TEST_P(conformance, LeakReportAtDestructionStillReleasesMemory) {
  const std::size_t base = this->device_->chunk_bytes();
  auto pool = this->make(this->options());
  void* leaked = pool->allocate(1000);
  (void)pool->allocate(3 << 20);
  ::testing::internal::CaptureStderr();
  pool.reset();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("leak report"), std::string::npos) << err;
  EXPECT_NE(err.find("2 live allocations"), std::string::npos) << err;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", leaked);
  EXPECT_NE(err.find(buf), std::string::npos) << err;
  EXPECT_EQ(this->device_->chunk_bytes(), base);
}

// ---- debug features (debug_options) --------------------------------------------------------

// Collects guard reports.
struct guard_log {
  std::mutex mutex;
  std::vector<guard_report> reports;
  static void hook(const guard_report& r, void* self) {
    auto* log = static_cast<guard_log*>(self);
    std::lock_guard lock(log->mutex);
    log->reports.push_back(r);
  }
};

// Two call sites that stay frames of their own, under their own names: not inlined or cloned (gcc's
// noipa; clang does not clone these), and no tail call (the empty asm after the call keeps the frame).
#if defined(__clang__)
#define CUDAPOOL_TEST_OWN_FRAME [[gnu::noinline]]
#else
#define CUDAPOOL_TEST_OWN_FRAME [[gnu::noipa]]
#endif
CUDAPOOL_TEST_OWN_FRAME inline void* debug_alloc_site_a(any_allocate_fn f, void* pool, std::size_t n) {
  void* p = f(pool, n);
  asm volatile("" : : "r"(p) : "memory");
  return p;
}
CUDAPOOL_TEST_OWN_FRAME inline void* debug_alloc_site_b(any_allocate_fn f, void* pool, std::size_t n) {
  void* p = f(pool, n);
  asm volatile("" : : "r"(p) : "memory");
  return p;
}

TYPED_TEST_P(conformance, GuardBytesCatchAnOverrunAtFree) {
  guard_log glog;
  pool_options o = this->options();
  o.debug.guard_bytes = 64;
  o.debug.record_stacks = true;
  o.debug.on_guard_damage = guard_log::hook;
  o.debug.guard_context = &glog;
  auto pool = this->make(o);
  const stream_ref s = this->device_->create_stream();
  // Clean: the user writes exactly its 1000 bytes (stream-ordered free) and 3 MiB (large, immediate).
  void* clean = pool->allocate(1000, s);
  this->device_->fill(s, clean, 1000, 0x11111111u);
  pool->deallocate(clean, s);
  void* big = pool->allocate(3 << 20);
  this->device_->fill({}, big, 3 << 20, 0x22222222u);
  pool->deallocate(big);
  // Overruns: one word past a block's end (immediate free), one past a large allocation's
  // (stream-ordered free).
  void* bad = pool->allocate(1000);
  this->device_->fill({}, static_cast<char*>(bad) + 1000, 4, 0xDEADBEEFu);
  pool->deallocate(bad);
  void* bad_big = pool->allocate((3 << 20) + 8, s);
  this->device_->fill(s, static_cast<char*>(bad_big) + (3 << 20) + 8 + 60, 4, 0x01020304u);
  pool->deallocate(bad_big, s);
  this->device_->synchronize(s);
  pool->check_guards();  // frees and slow paths may have reported some already
  {
    std::lock_guard lock(glog.mutex);
    ASSERT_EQ(glog.reports.size(), 2u);
    std::sort(glog.reports.begin(), glog.reports.end(), [](auto& a, auto& b) { return a.bytes < b.bytes; });
    const guard_report& r = glog.reports[0];
    EXPECT_EQ(r.pointer, bad);
    EXPECT_EQ(r.bytes, 1000u);
    EXPECT_EQ(r.guard_offset, 0u);
    EXPECT_EQ(r.found, 0xEF);
    EXPECT_EQ(r.free_stream_id, 0u);
    EXPECT_NE(r.alloc_stack.find("GuardBytesCatchAnOverrunAtFree"), std::string::npos) << r.alloc_stack;
    const guard_report& q = glog.reports[1];
    EXPECT_EQ(q.pointer, bad_big);
    EXPECT_EQ(q.bytes, (3u << 20) + 8);
    EXPECT_EQ(q.guard_offset, 60u);
    EXPECT_EQ(q.alloc_stream_id, this->device_->stream_id(s));
    EXPECT_EQ(q.free_stream_id, this->device_->stream_id(s));
    EXPECT_NE(to_string(q).find("guard damaged"), std::string::npos);
  }
  EXPECT_EQ(pool->check_guards(), 0u);  // each failure is reported once
  EXPECT_EQ(glog.reports.size(), 2u);
  this->retire(*pool, s);
  const pool_stats st = pool->stats();
  EXPECT_EQ(st.in_use_bytes, 0u);
  EXPECT_TRUE(this->log_.entries.empty());
  pool.reset();
  this->device_->destroy_stream(s);
}

TYPED_TEST_P(conformance, DescribeTellsWhatAPointerIs) {
  pool_options o = this->options();
  o.debug.record_stacks = true;
  auto pool = this->make(o);
  const stream_ref s = this->device_->create_stream();
  int host = 0;
  EXPECT_EQ(pool->describe(&host).what, pointer_info::kind::foreign);
  void* p = pool->allocate(3000);
  pointer_info i = pool->describe(p);
  EXPECT_EQ(i.what, pointer_info::kind::block);
  EXPECT_EQ(i.status, pointer_info::state::live);
  EXPECT_EQ(i.requested_bytes, 3000u);
  EXPECT_GE(i.capacity_bytes, 3000u);
  EXPECT_GE(i.size_class, 0);
  EXPECT_NE(i.alloc_stack.find("DescribeTellsWhatAPointerIs"), std::string::npos) << i.alloc_stack;
  i = pool->describe(static_cast<char*>(p) + 100);
  EXPECT_EQ(i.what, pointer_info::kind::interior);
  EXPECT_EQ(i.base, p);
  EXPECT_EQ(i.offset, 100u);
  pool->deallocate(p);
  EXPECT_EQ(pool->describe(p).status, pointer_info::state::free);
  void* q = pool->allocate(3000, s);
  pool->deallocate(q, s);
  i = pool->describe(q);
  if (i.status == pointer_info::state::pending) {  // the stream variant reuses it on s at once: free
    EXPECT_EQ(i.pending_stream_id, this->device_->stream_id(s));
  } else {
    EXPECT_EQ(i.status, pointer_info::state::free);
  }
  void* big = pool->allocate(5 << 20);
  i = pool->describe(big);
  EXPECT_EQ(i.what, pointer_info::kind::large);
  EXPECT_EQ(i.status, pointer_info::state::live);
  EXPECT_EQ(i.requested_bytes, std::size_t{5} << 20);
  EXPECT_EQ(pool->describe(static_cast<char*>(big) + 4096).what, pointer_info::kind::interior);
  EXPECT_NE(to_string(pool->describe(big)).find("live"), std::string::npos);
  pool->deallocate(big);
  this->retire(*pool, s);
  pool.reset();
  this->device_->destroy_stream(s);
}

TYPED_TEST_P(conformance, OutOfMemoryCarriesAStructuredReport) {
  pool_options o = this->options();
  o.byte_limit = std::size_t{8} << 20;
  auto pool = this->make(o);
  std::vector<void*> live;
  try {
    for (;;) live.push_back(pool->allocate(100000));
  } catch (const out_of_memory& e) {
    const oom_report* r = e.report();
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->requested_bytes, 100000u);
    EXPECT_GE(r->size_class, 0);
    EXPECT_GE(r->class_bytes, 100000u);
    EXPECT_EQ(r->byte_limit, std::size_t{8} << 20);
    EXPECT_LE(r->stats.reserved_bytes, std::size_t{8} << 20);
    EXPECT_EQ(r->stats.in_use_bytes, live.size() * r->class_bytes);
    EXPECT_EQ(r->stats.variant, TestFixture::pool_type::variant());
    EXPECT_EQ(r->releasable_by_trim, 0u);  // nothing wholly free: the pool trimmed before throwing
    const std::string json = to_json(*r);
    for (const char* key : {"\"requested_bytes\":100000", "\"streams\":[", "\"thread_caches\":[", "\"stats\":{",
                            "\"releasable_by_trim\":0"}) {
      EXPECT_NE(json.find(key), std::string::npos) << key << " in " << json;
    }
  }
  EXPECT_FALSE(live.empty());
  for (void* p : live) pool->deallocate(p);
}

TYPED_TEST_P(conformance, LeakReportGroupsLeaksByAllocationStack) {
  pool_options o = this->options();
  o.debug.record_stacks = true;
  auto pool = this->make(o);
  any_allocate_fn f = [](void* self, std::size_t n) { return static_cast<typename TestFixture::pool_type*>(self)->allocate(n); };
  volatile int n = 3;  // a loop the compiler cannot unroll into three call sites
  for (int i = 0; i < n; ++i) (void)debug_alloc_site_a(f, pool.get(), 1000);
  (void)debug_alloc_site_b(f, pool.get(), 5000);
  ::testing::internal::CaptureStderr();
  pool.reset();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("4 live allocations"), std::string::npos) << err;
  EXPECT_NE(err.find("from 2 call stacks"), std::string::npos) << err;
  EXPECT_NE(err.find("3 allocations, 3000 bytes"), std::string::npos) << err;
  EXPECT_NE(err.find("debug_alloc_site_a"), std::string::npos) << err;
  EXPECT_NE(err.find("debug_alloc_site_b"), std::string::npos) << err;
}

TYPED_TEST_P(conformance, TraceRecordsEveryAllocationAndFree) {
  const std::string path = ::testing::TempDir() + "cudapool_trace_" + std::string(TestFixture::pool_type::variant()) +
                           (TypeParam::is_sim ? "_sim" : "_cuda") + ".csv";
  pool_options o = this->options();
  o.debug.trace_path = path;
  auto pool = this->make(o);
  const stream_ref s = this->device_->create_stream();
  void* a = pool->allocate(512);
  void* b = pool->allocate(4096, s);
  void* c = pool->allocate(3 << 20);
  pool->deallocate(a);
  pool->deallocate(b, s);
  void* d = pool->allocate(700);
  pool->deallocate(c);
  pool->deallocate(d);
  this->retire(*pool, s);
  pool.reset();
  this->device_->destroy_stream(s);
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  }
  // The last field: the host thread that made the call (this one, thread 0).
  const std::vector<std::string> expected = {"a,1,512,0,0", "a,2,4096,1,0", "a,3,3145728,0,0", "f,1,512,0,0",
                                             "f,2,4096,1,0", "a,4,700,0,0", "f,3,3145728,0,0", "f,4,700,0,0"};
  EXPECT_EQ(lines, expected);
}

TYPED_TEST_P(conformance, SanitizerRegionsFollowLiveAllocations) {
  if constexpr (!TypeParam::is_sim) GTEST_SKIP() << "the sim backend counts registrations; CUDA is checked by compute-sanitizer";
  pool_options o = this->options();
  o.debug.sanitizer_regions = true;
  auto pool = this->make(o);
  std::vector<void*> live;
  for (int i = 0; i < 50; ++i) live.push_back(pool->allocate(1000 + 97 * i));
  live.push_back(pool->allocate(3 << 20));
  EXPECT_EQ(this->sim().registered_regions(), live.size());
  EXPECT_GE(this->sim().registered_heaps(), 2u);  // slabs and the large chunk
  for (void* p : live) pool->deallocate(p);
  EXPECT_EQ(this->sim().registered_regions(), 0u);
  pool->trim();
  EXPECT_EQ(this->sim().registered_heaps(), 0u);  // every slab and chunk went back
  (void)pool->allocate(1000);
  EXPECT_EQ(this->sim().registered_regions(), 1u);
  ::testing::internal::CaptureStderr();
  pool.reset();
  (void)::testing::internal::GetCapturedStderr();
  EXPECT_EQ(this->sim().registered_regions(), 0u);
  EXPECT_EQ(this->sim().registered_heaps(), 0u);
}

REGISTER_TYPED_TEST_SUITE_P(conformance, DistinctNonOverlappingBlocks, Alignment, EveryClassBoundary,
                            ZeroSizeRequestsReturnNull, HugeRequestIsACleanOutOfMemory, ARefusedRequestDoesNotRaiseThePeak,
                            InvalidFreesAreRejectedAndLeaveThePoolUnchanged, OutOfMemoryAndRecoveryWithInjectedFailures,
                            ByteLimitThenRecoveryAfterFrees, TrimGivesWhollyFreeSlabsBack,
                            LargeAllocationsAreReusedFromTheHeap, LargeFreesCoalesceAtEveryBoundary,
                            LargeAlignmentUpToOneGiB, SlabsAndLargeRequestsShareTheHeap, ByteLimitBoundsLargeRequests,
                            InjectedMapFailuresLeaveThePoolConsistent, AMissPollsPendingFreesBeforeGrowing,
                            StreamOrderedLargeFreeWaitsForItsStream,
                            StreamOrderedFreeIsNotReusedBeforeTheStreamGetsThere,
                            OutOfMemoryWaitsForPendingFreesFirst, FixedPoolNeverCallsTheBackendAfterStartUp,
                            StatsBalanceAtQuiescence, ManyThreadsAllocateAndFreeConcurrently,
                            LeakReportAtDestructionStillReleasesMemory, GuardBytesCatchAnOverrunAtFree,
                            DescribeTellsWhatAPointerIs, OutOfMemoryCarriesAStructuredReport,
                            LeakReportGroupsLeaksByAllocationStack, TraceRecordsEveryAllocationAndFree,
                            SanitizerRegionsFollowLiveAllocations);

}  // namespace cudapool::testing
