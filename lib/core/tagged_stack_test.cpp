#include <cudapool/detail/core/tagged_stack.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <set>
#include <thread>
#include <vector>

namespace cudapool::core {
namespace {

// Pauses the one thread that armed it between its read of the head and its CAS, until released.
struct pausing_hook {
  static inline thread_local bool armed = false;
  static inline std::latch* reached = nullptr;
  static inline std::latch* release = nullptr;
  static void between_read_and_cas() noexcept {
    if (!armed) return;
    armed = false;
    reached->count_down();
    release->wait();
  }
};

// The classic ABA interleaving on a stack A -> B:
//   thread 1 reads head A and A.next = B, and stalls before its CAS;
//   thread 2 pops A, pops B (B is now live, in its hands), pushes A back;
//   thread 1's CAS compares the head with A.
// Returns what a third pop hands out after thread 1's pop, and what thread 1 got.
template <unsigned TagBits>
std::pair<block_index, block_index> run_aba_interleaving() {
  block_table t;
  t.grow_to(2);
  const block_index A = 0;
  const block_index B = 1;
  const backoff_options no_backoff{0, 0};
  tagged_stack<TagBits, pausing_hook> stack;
  stack.push(t, B, no_backoff);
  stack.push(t, A, no_backoff);  // A -> B

  std::latch reached(1);
  std::latch release(1);
  pausing_hook::reached = &reached;
  pausing_hook::release = &release;
  block_index thread1_got = no_block;
  std::thread thread1([&] {
    pausing_hook::armed = true;
    thread1_got = stack.pop(t, no_backoff);
  });
  reached.wait();
  EXPECT_EQ(stack.pop(t, no_backoff), A);
  EXPECT_EQ(stack.pop(t, no_backoff), B);  // B is live from here on
  stack.push(t, A, no_backoff);
  release.count_down();
  thread1.join();
  return {thread1_got, stack.pop(t, no_backoff)};
}

TEST(TaggedStack, WithoutTheTagTheAbaInterleavingHandsOutALiveBlock) {
  const auto [thread1_got, next_pop] = run_aba_interleaving<0>();
  EXPECT_EQ(thread1_got, 0u);  // A
  EXPECT_EQ(next_pop, 1u) << "expected the corruption: B handed out again while still live";
}

TEST(TaggedStack, TheTagMakesTheStaleCasFailAndNothingLiveIsHandedOut) {
  const auto [thread1_got, next_pop] = run_aba_interleaving<32>();
  EXPECT_EQ(thread1_got, 0u);  // A, popped again after its CAS failed and it re-read the head
  EXPECT_EQ(next_pop, no_block) << "the stack must be empty: B is live";
}

TEST(TaggedStack, ChainPushAndPopAll) {
  block_table t;
  t.grow_to(10);
  const backoff_options bo;
  tagged_stack<> stack;
  for (block_index b = 0; b < 4; ++b) t[b].next.store(b + 1);
  stack.push_chain(t, 0, 4, bo);  // 0 -> 1 -> 2 -> 3 -> 4
  stack.push(t, 9, bo);
  block_index head = stack.pop_all();
  std::vector<block_index> got;
  for (block_index b = head; b != no_block; b = t[b].next.load()) got.push_back(b);
  EXPECT_EQ(got, (std::vector<block_index>{9, 0, 1, 2, 3, 4}));
  EXPECT_EQ(stack.pop(t, bo), no_block);
}

TEST(TaggedStack, ConcurrentPopsAndPushesNeverHandOutABlockTwice) {
  constexpr block_index blocks = 64;
  block_table t;
  t.grow_to(blocks);
  const backoff_options bo;
  tagged_stack<> stack;
  for (block_index b = 0; b < blocks; ++b) stack.push(t, b, bo);
  std::vector<std::atomic<int>> owners(blocks);
  std::atomic<int> double_handouts{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; ++i) {
    ts.emplace_back([&] {
      for (int k = 0; k < 20000; ++k) {
        const block_index b = stack.pop(t, bo);
        if (b == no_block) continue;
        if (owners[b].fetch_add(1) != 0) ++double_handouts;
        owners[b].fetch_sub(1);
        stack.push(t, b, bo);
      }
    });
  }
  for (auto& th : ts) th.join();
  EXPECT_EQ(double_handouts.load(), 0);
  std::set<block_index> all;
  for (block_index b = stack.pop_all(); b != no_block; b = t[b].next.load()) all.insert(b);
  EXPECT_EQ(all.size(), blocks);
}

}  // namespace
}  // namespace cudapool::core
