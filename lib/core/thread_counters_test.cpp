#include <cudapool/detail/core/thread_counters.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

namespace cudapool::core {
namespace {

// sum() adds every thread's block (and the shared one): exact at quiescence, whichever threads
// added, and a thread that exited leaves its counts (its slot's next owner adds to them).
TEST(ThreadCounters, SumsCountEveryThreadAtQuiescence) {
  thread_counters<4> counters;
  constexpr int threads = 6;
  constexpr int adds = 1000;
  for (int wave = 0; wave < 2; ++wave) {  // the second wave reuses the first one's slots
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        for (int i = 0; i < adds; ++i) counters.add(0, 1, 1 + t % 3, t);
      });
    }
    for (std::thread& t : ts) t.join();
  }
  counters.add(3, -5);  // this thread's block
  EXPECT_EQ(counters.sum(0), 2 * threads * adds);
  EXPECT_EQ(counters.sum(1), 2 * adds * (0 + 3));
  EXPECT_EQ(counters.sum(2), 2 * adds * (1 + 4));
  EXPECT_EQ(counters.sum(3), 2 * adds * (2 + 5) - 5);
  // sum_each: the sums of chosen counters, in any order, in one pass.
  const std::size_t index[3] = {3, 0, 2};
  std::int64_t each[3] = {-1, -1, -1};
  counters.sum_each(index, 3, each);
  EXPECT_EQ(each[0], counters.sum(3));
  EXPECT_EQ(each[1], counters.sum(0));
  EXPECT_EQ(each[2], counters.sum(2));
}

// A thread that alternates between pools (stream arenas: a pool per stream) keeps each one's
// shortcut: counters made one after another take different ways, so only each one's first add
// takes the slow path. More counters than ways share ways, and their sums stay exact.
TEST(ThreadCounters, AThreadAlternatingBetweenCountersKeepsEachShortcut) {
  std::vector<std::unique_ptr<thread_counters<2>>> c;
  for (std::size_t i = 0; i < detail::counters_shortcuts; ++i) c.push_back(std::make_unique<thread_counters<2>>());
  for (int round = 0; round < 100; ++round) {
    for (auto& k : c) k->add(0, 1, 1, 2);
  }
  for (auto& k : c) {
    EXPECT_EQ(k->slow_adds(), 1);
    EXPECT_EQ(k->sum(0), 100);
    EXPECT_EQ(k->sum(1), 200);
  }
  thread_counters<2> extra;  // shares a way with one of c
  for (int round = 0; round < 100; ++round) {
    extra.add(0, 1);
    for (auto& k : c) k->add(0, 1);
  }
  EXPECT_EQ(extra.sum(0), 100);
  for (auto& k : c) EXPECT_EQ(k->sum(0), 200);
  std::int64_t slow = extra.slow_adds();
  for (auto& k : c) slow += k->slow_adds() - 1;
  EXPECT_EQ(slow, 200) << "the shared way's two counters each miss every round";
}

}  // namespace
}  // namespace cudapool::core
