// call_stack_test.cpp - capture, symbolize and intern host call stacks. The test binary links with
// ENABLE_EXPORTS (-rdynamic), so its own functions have names in the dynamic symbol table.

#include <cudapool/detail/core/call_stack.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>
#include <vector>

namespace cudapool::core {

// Outside any namespace-local linkage so that -rdynamic exports them; noinline so that each is a
// real frame. The volatile use keeps the compiler from turning the calls into tail calls.
[[gnu::noinline]] call_stack call_stack_test_named_leaf(int skip) {
  call_stack s = capture_stack(skip);
  asm volatile("" ::: "memory");
  return s;
}

[[gnu::noinline]] call_stack call_stack_test_named_caller() {
  call_stack s = call_stack_test_named_leaf(0);
  asm volatile("" ::: "memory");
  return s;
}

[[gnu::noinline]] call_stack call_stack_test_site_a() {
  call_stack s = capture_stack();
  asm volatile("" ::: "memory");
  return s;
}

[[gnu::noinline]] call_stack call_stack_test_site_b() {
  call_stack s = capture_stack();
  asm volatile("" ::: "memory");
  return s;
}

namespace {

[[gnu::noinline]] void unexported_function() { asm volatile("" ::: "memory"); }

TEST(CallStack, SymbolizeNamesTheCapturingFunctionAndItsCaller) {
  const call_stack s = call_stack_test_named_caller();
  ASSERT_GE(s.depth, 2);
  ASSERT_LE(s.depth, call_stack::max_frames);
  const std::string text = symbolize(s);
  // The innermost frame is the function that called capture_stack, not capture_stack itself.
  const std::string first_line = text.substr(0, text.find('\n'));
  EXPECT_NE(first_line.find("call_stack_test_named_leaf"), std::string::npos) << text;
  EXPECT_EQ(text.find("capture_stack"), std::string::npos) << text;
  EXPECT_NE(text.find("call_stack_test_named_caller"), std::string::npos) << text;
  // One line per frame.
  EXPECT_EQ(static_cast<int>(std::count(text.begin(), text.end(), '\n')), s.depth) << text;
}

TEST(CallStack, SkipDropsTheCallersOwnFrames) {
  const call_stack s = call_stack_test_named_caller();
  const call_stack skipped = call_stack_test_named_leaf(1);  // leaves out call_stack_test_named_leaf
  ASSERT_GE(skipped.depth, 1);
  const std::string text = symbolize(skipped);
  EXPECT_EQ(text.find("call_stack_test_named_leaf"), std::string::npos) << text;
  EXPECT_NE(symbolize(s).find("call_stack_test_named_leaf"), std::string::npos);
}

TEST(CallStack, AFrameOutsideAnyModuleIsAQuestionMark) {
  call_stack s;
  s.frames[0] = reinterpret_cast<void*>(std::uintptr_t{0x10});
  s.depth = 1;
  EXPECT_EQ(symbolize(s), "#0 0x10 ?\n");
  EXPECT_EQ(symbolize(call_stack{}), "");
}

TEST(CallStack, AFrameWithoutADynamicSymbolIsModulePlusOffset) {
  // Internal linkage: not in the dynamic symbol table even with -rdynamic.
  call_stack s;
  s.frames[0] = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(&unexported_function) + 1);
  s.depth = 1;
  const std::string text = symbolize(s);
  EXPECT_NE(text.find(" diagnostics_test+0x"), std::string::npos) << text;
}

TEST(StackTable, InternDedupesEqualStacksFromALoop) {
  stack_table table;
  std::set<std::uint32_t> ids;
  call_stack last;
  for (int i = 0; i < 100; ++i) {
    last = call_stack_test_site_a();
    ids.insert(table.intern(last));
  }
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_GE(*ids.begin(), 1u);
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.get(*ids.begin()), last);
  // Called from another line, the same function is another stack.
  EXPECT_NE(table.intern(call_stack_test_site_a()), *ids.begin());
}

TEST(StackTable, DifferentCallSitesGetDifferentIds) {
  stack_table table;
  const std::uint32_t a = table.intern(call_stack_test_site_a());
  const std::uint32_t b = table.intern(call_stack_test_site_b());
  EXPECT_NE(a, b);
  EXPECT_EQ(table.size(), 2u);
  EXPECT_NE(symbolize(table.get(a)).find("call_stack_test_site_a"), std::string::npos);
  EXPECT_NE(symbolize(table.get(b)).find("call_stack_test_site_b"), std::string::npos);
  // Ids are dense, and 0 or an unknown id reads as no stack.
  EXPECT_EQ(std::max(a, b), 2u);
  EXPECT_EQ(table.get(0).depth, 0);
  EXPECT_EQ(table.get(3).depth, 0);
}

TEST(StackTable, ThreadsInterningTheSameStacksAgreeOnIds) {
  stack_table table;
  const call_stack a = call_stack_test_site_a();
  const call_stack b = call_stack_test_site_b();
  constexpr int threads = 8;
  // Per thread: (which stack: 0 = a, 1 = b, 2 = captured there, id).
  std::vector<std::vector<std::pair<int, std::uint32_t>>> seen(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        seen[t].emplace_back(i % 2, table.intern(i % 2 == 0 ? a : b));
        if (i % 100 == 0) seen[t].emplace_back(2, table.intern(capture_stack()));
      }
    });
  }
  for (auto& w : workers) w.join();
  const std::uint32_t id_a = table.intern(a);
  const std::uint32_t id_b = table.intern(b);
  EXPECT_NE(id_a, id_b);
  for (const auto& ids : seen) {
    for (const auto& [kind, id] : ids) {
      if (kind == 0) EXPECT_EQ(id, id_a);
      if (kind == 1) EXPECT_EQ(id, id_b);
      if (kind == 2) EXPECT_TRUE(id != id_a && id != id_b && id <= table.size());
    }
  }
  for (std::uint32_t id = 1; id <= table.size(); ++id) EXPECT_GT(table.get(id).depth, 0);
}

}  // namespace
}  // namespace cudapool::core
