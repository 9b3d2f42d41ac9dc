#include <cudapool/detail/core/word_lock.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <mutex>
#include <thread>
#include <vector>

namespace cudapool::core {
namespace {

// Threads add to a plain counter under the lock. A lock that lets two threads in loses increments,
// and under ThreadSanitizer (the tsan preset) is a reported race on the counter.
TEST(WordLock, ExcludesUnderContention) {
  word_lock lock;
  long counter = 0;  // GUARDED_BY(lock)
  constexpr int threads = 4;
  constexpr int rounds = 20000;
  std::latch start(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      start.arrive_and_wait();
      for (int i = 0; i < rounds; ++i) {
        std::lock_guard guard(lock);
        counter = counter + 1;
      }
    });
  }
  for (std::thread& w : workers) w.join();
  EXPECT_EQ(counter, long{threads} * rounds);
}

TEST(WordLock, TryLockFailsWhileHeld) {
  word_lock lock;
  ASSERT_TRUE(lock.try_lock());
  bool other = true;
  std::thread([&] { other = lock.try_lock(); }).join();
  EXPECT_FALSE(other);
  lock.unlock();
  std::thread([&] {
    other = lock.try_lock();
    if (other) lock.unlock();
  }).join();
  EXPECT_TRUE(other);
}

// A thread that finds the lock held sleeps (the contended path) and is woken by the unlock. A lost
// wake-up hangs here (the test's timeout); Relacy's model checks every interleaving of it.
TEST(WordLock, WakesAThreadThatSleptOnIt) {
  word_lock lock;
  lock.lock();
  std::atomic<bool> trying{false};
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    trying.store(true);
    lock.lock();
    got.store(true);
    lock.unlock();
  });
  while (!trying.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // long enough to be asleep, usually
  EXPECT_FALSE(got.load());
  lock.unlock();
  waiter.join();
  EXPECT_TRUE(got.load());
}

}  // namespace
}  // namespace cudapool::core
