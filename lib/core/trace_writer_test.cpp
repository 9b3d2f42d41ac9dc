// trace_writer_test.cpp - the trace file's format and pairing, written from several threads.
// bench/trace_test.cpp checks that bench's reader loads what this writer writes.

#include <cudapool/detail/core/trace_writer.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace cudapool::core {
namespace {

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string("cudapool_") + name + "_" +
                                                    std::to_string(::getpid()) + ".csv"))
      .string();
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct parsed_op {
  char op;
  std::uint64_t id;
  std::size_t bytes;
  unsigned stream;
  unsigned thread;
};

// Strict parse of one operation line: "a|f,ID,BYTES,STREAM,THREAD" with decimal numbers.
bool parse(const std::string& line, parsed_op& out) {
  char op = 0;
  unsigned long long id = 0, bytes = 0;
  unsigned stream = 0, thread = 0;
  int consumed = 0;
  if (std::sscanf(line.c_str(), "%c,%llu,%llu,%u,%u%n", &op, &id, &bytes, &stream, &thread, &consumed) != 5) return false;
  if (consumed != static_cast<int>(line.size()) || (op != 'a' && op != 'f')) return false;
  out = {op, id, static_cast<std::size_t>(bytes), stream, thread};
  return true;
}

TEST(TraceWriter, WritesTheHeaderAndOneLinePerOperation) {
  const std::string path = temp_path("format");
  {
    trace_writer w(path);
    const std::uint64_t a = w.record_alloc(512, 0xAAAA);
    const std::uint64_t b = w.record_alloc(1024, 0xBBBB);
    w.record_free(a, 512, 0xBBBB);
    const std::uint64_t c = w.record_alloc(4096, 0xAAAA);
    w.record_free(b, 1024, 0xCCCC);
    EXPECT_EQ(a, 1u);
    EXPECT_EQ(b, 2u);
    EXPECT_EQ(c, 3u);
  }  // the destructor flushes
  const std::vector<std::string> lines = read_lines(path);
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[0].front(), '#');
  EXPECT_EQ(lines[1].rfind("# op,id,bytes,stream,thread", 0), 0u) << lines[1];
  // Streams are dense indices in order of first appearance: 0xAAAA -> 0, 0xBBBB -> 1, 0xCCCC -> 2;
  // so are threads (this one: 0).
  EXPECT_EQ(lines[2], "a,1,512,0,0");
  EXPECT_EQ(lines[3], "a,2,1024,1,0");
  EXPECT_EQ(lines[4], "f,1,512,1,0");
  EXPECT_EQ(lines[5], "a,3,4096,0,0");
  EXPECT_EQ(lines[6], "f,2,1024,2,0");
  std::filesystem::remove(path);
}

TEST(TraceWriter, FlushMakesLinesVisibleBeforeDestruction) {
  const std::string path = temp_path("flush");
  trace_writer w(path);
  (void)w.record_alloc(256, 7);
  w.flush();
  const std::vector<std::string> lines = read_lines(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], "a,1,256,0,0");
  std::filesystem::remove(path);
}

// A writer that is never destroyed (the PyTorch plug-in never destroys its pools) still leaves the
// whole trace behind when the process exits. The writer's buffer holds far more than these lines,
// so without the exit flush the file would have only what an earlier flush wrote: nothing.
TEST(TraceWriter, ALeakedWriterIsFlushedAtExit) {
  const std::string path = temp_path("exit");
  EXPECT_EXIT(
      {
        auto* w = new trace_writer(path);  // never deleted
        for (int i = 0; i < 10; ++i) (void)w->record_alloc(512, 3);
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
  const std::vector<std::string> lines = read_lines(path);
  ASSERT_EQ(lines.size(), 12u);
  EXPECT_EQ(lines[11], "a,10,512,0,0");
  std::filesystem::remove(path);
}

TEST(TraceWriter, RejectsWhatTheFormatCannotSay) {
  const std::string path = temp_path("reject");
  trace_writer w(path);
  EXPECT_THROW((void)w.record_alloc(0, 1), std::invalid_argument);
  const std::uint64_t id = w.record_alloc(512, 1);
  EXPECT_THROW(w.record_free(id + 1, 512, 1), std::invalid_argument);  // never allocated
  EXPECT_THROW(w.record_free(id, 1024, 1), std::invalid_argument);     // not its size
  w.record_free(id, 512, 1);
  EXPECT_THROW(w.record_free(id, 512, 1), std::invalid_argument);  // freed twice
  w.flush();
  const std::vector<std::string> lines = read_lines(path);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2], "a,1,512,0,0");
  EXPECT_EQ(lines[3], "f,1,512,0,0");
  std::filesystem::remove(path);
}

TEST(TraceWriter, AnUnopenablePathThrowsNamingIt) {
  const std::string path = "/nonexistent-cudapool-dir/trace.csv";
  try {
    trace_writer w(path);
    FAIL() << "opened " << path;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(TraceWriter, ThreadsWriteWellFormedPairedLines) {
  const std::string path = temp_path("threads");
  constexpr int threads = 8;
  constexpr int iterations = 2000;
  {
    trace_writer w(path);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&w, t] {
        std::vector<std::pair<std::uint64_t, std::size_t>> live;
        for (int i = 0; i < iterations; ++i) {
          const std::size_t bytes = 512 * static_cast<std::size_t>(1 + (t * 7 + i) % 13);
          // Two streams per thread; frees may go to the other one.
          live.emplace_back(w.record_alloc(bytes, 100 + 2 * t + i % 2), bytes);
          if (live.size() > 4 || i % 3 == 0) {
            w.record_free(live.front().first, live.front().second, 100 + 2 * t + (i + 1) % 2);
            live.erase(live.begin());
          }
        }
        // Leave a few live, as a real trace does (still live when recording stopped).
        while (live.size() > 2) {
          w.record_free(live.back().first, live.back().second, 100 + 2 * t);
          live.pop_back();
        }
      });
    }
    for (auto& worker : workers) worker.join();
  }

  std::map<std::uint64_t, std::size_t> live;  // id -> bytes
  std::set<std::uint64_t> ever;
  unsigned max_stream = 0, allocs = 0, frees = 0;
  std::set<unsigned> streams_seen_in_order;
  unsigned next_new_stream = 0;
  std::set<unsigned> threads_seen_in_order;
  unsigned next_new_thread = 0;
  // Each worker uses its own two streams: a stream's lines all name one thread, and no other
  // stream's thread (so the column is the calling thread, not a counter).
  std::map<unsigned, unsigned> thread_of_stream;
  std::map<unsigned, std::set<unsigned>> streams_of_thread;
  for (const std::string& line : read_lines(path)) {
    if (line.empty() || line.front() == '#') continue;
    parsed_op op{};
    ASSERT_TRUE(parse(line, op)) << "malformed line '" << line << "'";
    // Dense stream indices in order of first appearance.
    if (streams_seen_in_order.insert(op.stream).second) {
      EXPECT_EQ(op.stream, next_new_stream) << line;
      ++next_new_stream;
    }
    max_stream = std::max(max_stream, op.stream);
    if (threads_seen_in_order.insert(op.thread).second) {
      EXPECT_EQ(op.thread, next_new_thread) << line;
      ++next_new_thread;
    }
    EXPECT_EQ(thread_of_stream.try_emplace(op.stream, op.thread).first->second, op.thread) << line;
    streams_of_thread[op.thread].insert(op.stream);
    if (op.op == 'a') {
      ++allocs;
      EXPECT_TRUE(ever.insert(op.id).second) << "id reused: " << line;
      live.emplace(op.id, op.bytes);
    } else {
      ++frees;
      const auto it = live.find(op.id);
      ASSERT_NE(it, live.end()) << "free before (or without) its allocation: " << line;
      EXPECT_EQ(it->second, op.bytes) << "free with another size: " << line;
      live.erase(it);
    }
  }
  EXPECT_EQ(allocs, static_cast<unsigned>(threads * iterations));
  EXPECT_EQ(live.size(), static_cast<std::size_t>(threads * 2));
  EXPECT_EQ(frees, allocs - threads * 2);
  EXPECT_EQ(max_stream + 1, static_cast<unsigned>(threads * 2));
  EXPECT_EQ(next_new_thread, static_cast<unsigned>(threads));
  for (const auto& [thread, streams] : streams_of_thread) EXPECT_EQ(streams.size(), 2u) << "thread " << thread;
  // Ids are 1 .. allocs, each once.
  EXPECT_EQ(*ever.begin(), 1u);
  EXPECT_EQ(*ever.rbegin(), static_cast<std::uint64_t>(allocs));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace cudapool::core
