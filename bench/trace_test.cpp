// trace_test.cpp - bench's trace reader loads what the pool's trace recorder writes
// (cudapool::core::trace_writer), so a recorded workload replays with `bench --trace=FILE`.

#include "trace.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

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
}

}  // namespace
}  // namespace bench
