// trace_test.cpp - bench's trace reader loads what the pool's trace recorder writes
// (cudapool::core::trace_writer), so a recorded workload replays with `bench --trace=FILE`.

#include "trace.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <cudapool/detail/core/trace_writer.hpp>

namespace bench {
namespace {

TEST(Trace, LoadsAFileWrittenByTheTraceWriter) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("cudapool_bench_trace_" + std::to_string(::getpid()) + ".csv")).string();
  {
    cudapool::core::trace_writer w(path);
    const std::uint64_t a = w.record_alloc(512, 0x7000);      // stream 0
    const std::uint64_t b = w.record_alloc(1 << 20, 0x9000);  // stream 1
    const std::uint64_t c = w.record_alloc(4096, 0x7000);
    w.record_free(a, 512, 0x9000);  // freed on the other stream
    w.record_free(c, 4096, 0x7000);
    (void)w.record_alloc(2048, 0x9000);  // still live at the end, like b
    (void)b;
  }
  const trace t = load_trace(path);
  std::filesystem::remove(path);
  EXPECT_EQ(t.slots, 4u);
  EXPECT_EQ(t.streams, 2u);
  EXPECT_EQ(t.unmatched, 2u);
  ASSERT_EQ(t.ops.size(), 8u);  // 6 recorded + 2 frees appended for the live ones
  EXPECT_TRUE(t.ops[0].alloc);
  EXPECT_EQ(t.ops[0].bytes, 512u);
  EXPECT_EQ(t.ops[0].stream, 0);
  EXPECT_EQ(t.ops[1].bytes, std::size_t{1} << 20);
  EXPECT_EQ(t.ops[1].stream, 1);
  EXPECT_FALSE(t.ops[3].alloc);
  EXPECT_EQ(t.ops[3].bytes, 512u);
  EXPECT_EQ(t.ops[3].stream, 1);
  EXPECT_EQ(t.ops[3].alloc_stream, 0);
  EXPECT_EQ(t.peak_live, (std::size_t{1} << 20) + 512 + 4096);
  EXPECT_EQ(t.threads, 1u);
  for (const trace_op& o : t.ops) EXPECT_EQ(o.thread, 0);
}

std::string temp_trace(const char* name) {
  return (std::filesystem::temp_directory_path() /
          ("cudapool_bench_" + std::string(name) + "_" + std::to_string(::getpid()) + ".csv"))
      .string();
}

// The writer's thread column: the host thread of each call, as a dense index, kept per operation
// (the appended frees of what is still live take their allocation's thread).
TEST(Trace, KeepsTheThreadOfEachOperation) {
  const std::string path = temp_trace("threads");
  {
    cudapool::core::trace_writer w(path);
    const std::uint64_t a = w.record_alloc(512, 1);  // thread 0 (this one)
    std::uint64_t b = 0;
    std::thread([&] {
      w.record_free(a, 512, 1);          // thread 1
      b = w.record_alloc(4096, 1);       // thread 1, still live at the end
    }).join();
    (void)w.record_alloc(256, 1);  // thread 0 again, freed at the end
    (void)b;
  }
  const trace t = load_trace(path);
  std::filesystem::remove(path);
  EXPECT_EQ(t.threads, 2u);
  ASSERT_EQ(t.ops.size(), 6u);
  const std::uint16_t want[] = {0, 1, 1, 0, /*appended, allocation order: b, then the 256 B*/ 1, 0};
  for (std::size_t i = 0; i < t.ops.size(); ++i) EXPECT_EQ(t.ops[i].thread, want[i]) << "op " << i;
}

// Four fields (../shared/traces) and five (trace_writer) load; anything else names the line.
TEST(Trace, TakesFourOrFiveFieldsAndNamesABadLine) {
  const auto load_text = [](const char* name, const std::string& text) {
    const std::string path = temp_trace(name);
    std::ofstream(path) << text;
    try {
      const trace t = load_trace(path);
      std::filesystem::remove(path);
      return t;
    } catch (...) {
      std::filesystem::remove(path);
      throw;
    }
  };
  const trace four = load_text("four", "op,id,bytes,stream\na,1,512,0\nf,1,512,0\n");
  EXPECT_EQ(four.threads, 1u);
  ASSERT_EQ(four.ops.size(), 2u);
  const trace five = load_text("five", "a,1,512,0,3\nf,1,512,0,2\n");
  EXPECT_EQ(five.threads, 4u);
  EXPECT_EQ(five.ops[0].thread, 3);
  EXPECT_EQ(five.ops[1].thread, 2);
  // The line's own errors are core/trace_reader's (its test has them all); the rest are the replay's.
  for (const auto& [name, text, why] : {std::tuple{"six", "a,1,512,0,0,9\n", "expected op,id,bytes,stream[,thread]"},
                                        std::tuple{"three", "a,1,512\n", "expected op,id,bytes,stream[,thread]"},
                                        std::tuple{"thread", "a,1,512,0,x\n", "thread is not a number"},
                                        std::tuple{"big", "a,1,512,0,65536\n", "thread index over 65535"},
                                        std::tuple{"streams", "a,1,512,70000\n", "stream index over 65535"},
                                        std::tuple{"twice", "a,1,512,0\na,1,512,0\n", "id 1 allocated again while it is live"},
                                        std::tuple{"unpaired", "f,1,512,0\n", "free of id 1, which is not live"}}) {
    try {
      (void)load_text(name, text);
      ADD_FAILURE() << name << ": loaded";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << name << ": " << e.what();
      const std::string at = std::string(name) == "twice" ? ":2:" : ":1:";
      EXPECT_NE(std::string(e.what()).find(at), std::string::npos) << name << ": " << e.what();
    }
  }
}

// A UTF-8 byte-order mark before the header is skipped; a directory is refused as one.
TEST(Trace, SkipsAByteOrderMarkAndRefusesADirectory) {
  const std::string path = temp_trace("bom");
  std::ofstream(path) << "\xEF\xBB\xBFop,id,bytes,stream\na,1,512,0\nf,1,512,0\n";
  const trace t = load_trace(path);
  std::filesystem::remove(path);
  EXPECT_EQ(t.ops.size(), 2u);
  const std::string dir = std::filesystem::temp_directory_path().string();
  try {
    (void)load_trace(dir);
    ADD_FAILURE() << "a directory loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), dir + ": is a directory, not a trace file");
  }
}

// An id freed may be allocated again: it is one more allocation, and ends once if still live.
TEST(Trace, AnIdFreedMayBeAllocatedAgain) {
  const std::string path = temp_trace("again");
  std::ofstream(path) << "a,1,512,0\nf,1,512,0\na,1,4096,0\n";
  const trace t = load_trace(path);
  std::filesystem::remove(path);
  EXPECT_EQ(t.slots, 2u);
  EXPECT_EQ(t.unmatched, 1u);
  ASSERT_EQ(t.ops.size(), 4u);  // 3 recorded + the free of the second allocation
  EXPECT_FALSE(t.ops[3].alloc);
  EXPECT_EQ(t.ops[3].slot, 1u);
  EXPECT_EQ(t.ops[3].bytes, 4096u);
}

}  // namespace
}  // namespace bench
