#include <cudapool/tls_pool.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <thread>
#include <vector>

#include <cudapool/detail/testing/conformance.hpp>

namespace cudapool::testing {

// The transfer layer as a mutex over a vector of batches (pool_options::tls_transfer), too.
struct mutex_transfer {
  static void apply(pool_options& o) { o.tls_transfer = pool_options::transfer_layer::mutex_batches; }
};
// And as a lock-free stack of batch nodes.
struct stack_transfer {
  static void apply(pool_options& o) { o.tls_transfer = pool_options::transfer_layer::lockfree_stack; }
};
using tls_configs = ::testing::Types<on_sim<tls_pool>, on_cuda<tls_pool>, with_options<on_sim<tls_pool>, mutex_transfer>,
                                     with_options<on_cuda<tls_pool>, mutex_transfer>,
                                     with_options<on_sim<tls_pool>, stack_transfer>,
                                     with_options<on_cuda<tls_pool>, stack_transfer>>;
INSTANTIATE_TYPED_TEST_SUITE_P(tls, conformance, tls_configs);

namespace {

std::size_t cached(const pool_stats& s) {
  std::size_t n = 0;
  for (const class_stats& c : s.classes) n += c.cached_blocks;
  return n;
}

std::shared_ptr<backend> sim() { return make_sim_backend(); }

TEST(TlsPool, ExitedThreadsLeaveNothingStrandedInCaches) {
  tls_pool pool(sim());
  // Every thread allocates before any frees: a thread that grows the pool drains idle caches, so a
  // thread still allocating could otherwise empty another's cache before that one looks at it.
  constexpr int threads = 8;
  std::barrier allocated(threads);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&] {
      std::vector<void*> ps;
      for (int i = 0; i < 500; ++i) ps.push_back(pool.allocate(256 << (i % 6)));
      allocated.arrive_and_wait();
      for (void* p : ps) pool.deallocate(p);
      EXPECT_GT(cached(pool.stats()), 0u);  // this thread's cache holds blocks now
    });
  }
  for (auto& t : ts) t.join();
  const pool_stats s = pool.stats();
  EXPECT_EQ(cached(s), 0u);
  EXPECT_EQ(s.in_use_bytes, 0u);
}

TEST(TlsPool, FlushThreadCacheHandsBlocksBack) {
  tls_pool pool(sim());
  void* p = pool.allocate(4096);
  pool.deallocate(p);
  EXPECT_EQ(cached(pool.stats()), 1u);
  pool.flush_thread_cache();
  EXPECT_EQ(cached(pool.stats()), 0u);
  const pool_stats s = pool.stats();
  EXPECT_EQ(s.classes[11].free_blocks, s.classes[11].capacity_blocks);
}

// Larson-like: each thread frees what its predecessor allocated, then exits.
TEST(TlsPool, SuccessorsInheritBlocksAndTheFootprintStaysFlat) {
  tls_pool pool(sim());
  std::vector<void*> inherited;
  std::size_t reserved_after_warmup = 0;
  for (int generation = 0; generation < 40; ++generation) {
    std::thread t([&] {
      for (void* p : inherited) pool.deallocate(p);
      inherited.clear();
      for (int i = 0; i < 300; ++i) inherited.push_back(pool.allocate(1024 << (i % 4)));
    });
    t.join();
    if (generation == 4) reserved_after_warmup = pool.stats().reserved_bytes;
  }
  EXPECT_LE(pool.stats().reserved_bytes, reserved_after_warmup);  // thread churn: no growth
  for (void* p : inherited) pool.deallocate(p);
  EXPECT_EQ(pool.stats().in_use_bytes, 0u);
}

// xmalloc-like: one set of threads allocates, another frees.
TEST(TlsPool, ProducersAndConsumers) {
  tls_pool pool(sim());
  std::vector<std::atomic<void*>> slots(4096);
  std::atomic<int> produced{0};
  std::thread producer([&] {
    for (auto& s : slots) {
      s.store(pool.allocate(2048));
      ++produced;
    }
  });
  std::thread consumer([&] {
    for (auto& s : slots) {
      void* p = nullptr;
      while ((p = s.load()) == nullptr) std::this_thread::yield();
      pool.deallocate(p);
    }
  });
  producer.join();
  consumer.join();
  const pool_stats st = pool.stats();
  EXPECT_EQ(st.in_use_bytes, 0u);
  EXPECT_EQ(cached(st), 0u);
}

// A thread that allocates 8 blocks of 1 MiB, frees them (into its cache, and the transfer layer
// beyond the cache's capacity), then stays alive and idle until destroyed.
class idle_thread {
 public:
  explicit idle_thread(tls_pool& pool)
      : thread_([this, &pool] {
          std::vector<void*> ps;
          for (int i = 0; i < 8; ++i) ps.push_back(pool.allocate(1 << 20));
          for (void* p : ps) pool.deallocate(p);
          filled_ = true;
          while (!done_) std::this_thread::yield();
        }) {
    while (!filled_) std::this_thread::yield();
  }
  idle_thread(const idle_thread&) = delete;
  idle_thread& operator=(const idle_thread&) = delete;
  ~idle_thread() {
    done_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> done_{false};
  std::atomic<bool> filled_{false};
  std::thread thread_;  // last: started once the flags exist
};

TEST(TlsPool, IdleCachesAreDrainedBeforeThePoolGrows) {
  pool_options o;
  o.fixed_block_bytes = 1 << 20;  // 2 blocks per slab
  o.byte_limit = 8 << 20;         // 8 blocks in all
  tls_pool pool(sim(), o);
  {
    const idle_thread idle(pool);  // all 8 now sit in its cache
    EXPECT_GT(cached(pool.stats()), 0u);
    std::vector<void*> mine;
    for (int i = 0; i < 8; ++i) mine.push_back(pool.allocate(1 << 20));  // needs the idle thread's blocks
    for (void* p : mine) pool.deallocate(p);
  }
  EXPECT_EQ(pool.stats().reserved_bytes, std::size_t{8} << 20);
}

// As above with no byte limit, so that the limit's trim cannot hand the idle cache's blocks over:
// only the idle pass before growth (basic_pool's before_growth hook) does. A pass runs at most once
// a millisecond and drains a cache idle since the previous one: the first miss's pass sees the idle
// thread's operations, the next (2 ms later) drains it. Fails without the hook (12 MiB reserved).
TEST(TlsPool, IdleCachesAreDrainedBeforeGrowthWithoutALimit) {
  pool_options o;
  o.fixed_block_bytes = 1 << 20;  // 2 blocks per slab
  tls_pool pool(sim(), o);
  const idle_thread idle(pool);
  ASSERT_GE(cached(pool.stats()), 4u);  // more than one slab's worth: without the drain the pool grows twice
  std::vector<void*> mine;
  for (int i = 0; i < 8; ++i) {
    mine.push_back(pool.allocate(1 << 20));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(cached(pool.stats()), 0u);  // nothing left in the idle cache (main frees nothing yet)
  EXPECT_LE(pool.stats().reserved_bytes, std::size_t{10} << 20);  // at most the first miss's slab
  for (void* p : mine) pool.deallocate(p);
}

TEST(TlsPool, TheCacheBudgetBoundsWhatCachesHold) {
  pool_options o;
  o.cache_budget_bytes = 64 << 10;
  tls_pool pool(sim(), o);
  std::vector<void*> ps;
  for (int i = 0; i < 200; ++i) ps.push_back(pool.allocate(4096));
  for (void* p : ps) pool.deallocate(p);
  EXPECT_LE(pool.stats().classes[11].cached_blocks * 4096, o.cache_budget_bytes);
}

// With no thread caches every free goes to the transfer layer (the moodycamel queue by default) and
// every allocation takes from it, so the queue's blocks fill, drain and are reused all the time.
// Checked: no block twice among a thread's 8 live ones, and allocations and frees balance (handing
// out across threads is stress's to check, with no lock here that would order the threads for TSan).
// Under TSan this is where the queue's own reports come from (variants/tls/tsan.supp, which the
// tsan preset passes).
TEST(TlsPool, TransferQueueChurnWithoutCachesLosesNothing) {
  pool_options o;
  o.cache_budget_bytes = 0;
  tls_pool pool(sim(), o);
  constexpr int threads = 4;
  constexpr int rounds = 4000;
  std::vector<std::thread> workers;
  std::atomic<int> doubles{0};
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&pool, &doubles] {
      std::vector<void*> mine;
      for (int r = 0; r < rounds; ++r) {
        for (int i = 0; i < 8; ++i) mine.push_back(pool.allocate(4096));
        std::sort(mine.begin(), mine.end());
        if (std::adjacent_find(mine.begin(), mine.end()) != mine.end()) ++doubles;
        for (void* p : mine) pool.deallocate(p);
        mine.clear();
      }
    });
  }
  for (std::thread& w : workers) w.join();
  EXPECT_EQ(doubles.load(), 0);
  const pool_stats st = pool.stats();
  EXPECT_EQ(st.in_use_bytes, 0u);
  EXPECT_EQ(st.allocs, st.frees);
  EXPECT_EQ(st.allocs, std::uint64_t{threads} * rounds * 8);
}

}  // namespace
}  // namespace cudapool::testing
