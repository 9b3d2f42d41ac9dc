// trace_reader_test.cpp - the one trace line parser (bench's replay and stress's --sizes=trace:
// read through it): records, lines without one, every error, and every line trace_writer writes;
// and the one pairing of ids (trace_live_ids).

#include <cudapool/detail/core/trace_reader.hpp>
#include <cudapool/detail/core/trace_writer.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

namespace cudapool::core {
namespace {

void expect_record(std::string_view line, bool allocate, std::uint64_t id, std::size_t bytes, unsigned stream,
                   unsigned thread) {
  const auto r = parse_trace_line(line);
  ASSERT_TRUE(r.has_value()) << "'" << line << "'";
  EXPECT_EQ(r->allocate, allocate) << "'" << line << "'";
  EXPECT_EQ(r->id, id) << "'" << line << "'";
  EXPECT_EQ(r->bytes, bytes) << "'" << line << "'";
  EXPECT_EQ(r->stream, stream) << "'" << line << "'";
  EXPECT_EQ(r->thread, thread) << "'" << line << "'";
}

TEST(TraceReader, ReadsFourAndFiveFields) {
  expect_record("a,7,4096,2", true, 7, 4096, 2, 0);  // no thread: the first
  expect_record(" f , 7 , 4096 , 2 , 3 \r", false, 7, 4096, 2, 3);
}

TEST(TraceReader, BlankCommentAndHeaderLinesHoldNoRecord) {
  for (const char* line : {"", "   \t", "\r", "# a comment", "  # indented, 1,2,3", "op,id,bytes,stream",
                           "op,id,bytes,stream,thread"}) {
    EXPECT_FALSE(parse_trace_line(line).has_value()) << "'" << line << "'";
  }
}

// A UTF-8 byte-order mark (some editors and spreadsheets start a CSV file with one) is skipped.
TEST(TraceReader, SkipsAUtf8ByteOrderMark) {
  EXPECT_FALSE(parse_trace_line("\xEF\xBB\xBFop,id,bytes,stream").has_value());
  expect_record("\xEF\xBB\xBF" "a,7,4096,2", true, 7, 4096, 2, 0);
}

// A file that cannot be a trace says so: a directory, a path that does not exist.
TEST(TraceReader, OpenTraceFileSaysWhyNot) {
  const auto error_of = [](const std::string& path) -> std::string {
    try {
      (void)open_trace_file(path);
    } catch (const trace_file_error& e) {
      return e.what();
    }
    return "opened";
  };
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  EXPECT_EQ(error_of(dir.string()), "is a directory, not a trace file");
  EXPECT_EQ(error_of((dir / "cudapool_no_such_trace.csv").string()), "cannot be read: No such file or directory");
}

TEST(TraceReader, EveryErrorSaysWhat) {
  for (const auto& [line, why] : {std::tuple{"a,1,512", "expected op,id,bytes,stream[,thread]"},
                                  std::tuple{"a,1,512,0,0,9", "expected op,id,bytes,stream[,thread]"},
                                  std::tuple{"x,1,512,0", "op must be a or f"},
                                  std::tuple{"a,one,512,0", "id is not a number"},
                                  std::tuple{"a,1,-5,0", "bytes is not a number"},
                                  std::tuple{"a,1,512,", "stream is not a number"},
                                  std::tuple{"a,1,512,0,x", "thread is not a number"},
                                  std::tuple{"a,1,0,0", "an allocation of 0 bytes"},
                                  std::tuple{"a,1,512 kB,0", "bytes is not a number"}}) {
    try {
      (void)parse_trace_line(line);
      ADD_FAILURE() << "'" << line << "' was accepted";
    } catch (const trace_line_error& e) {
      EXPECT_EQ(std::string(e.what()), why) << "'" << line << "'";
    }
  }
  EXPECT_TRUE(parse_trace_line("f,1,0,0").has_value());  // a free's bytes may be anything
}

// Ids pair: an allocation of a live id and a free of one not live (never allocated, freed already)
// are refused, naming the id; an id freed may be allocated again.
TEST(TraceLiveIds, RefusesIdsThatDoNotPair) {
  const auto error_of = [](auto&& op) -> std::string {
    try {
      op();
    } catch (const trace_line_error& e) {
      return e.what();
    }
    return "accepted";
  };
  trace_live_ids<std::size_t> live;
  live.allocate(7, 512);
  EXPECT_EQ(error_of([&] { live.allocate(7, 256); }), "id 7 allocated again while it is live");
  EXPECT_EQ(error_of([&] { (void)live.free(8); }),
            "free of id 8, which is not live (never allocated, or freed already)");
  EXPECT_EQ(live.free(7), 512u);
  EXPECT_EQ(error_of([&] { (void)live.free(7); }),
            "free of id 7, which is not live (never allocated, or freed already)");
  live.allocate(7, 1024);
  EXPECT_EQ(live.take(7), std::optional<std::size_t>(1024));
  EXPECT_EQ(live.take(7), std::nullopt);
}

// Every line the writer writes reads back as what was recorded.
TEST(TraceReader, ReadsWhatTheWriterWrites) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("cudapool_trace_reader_" + std::to_string(::getpid()) + ".csv")).string();
  {
    trace_writer w(path);
    const std::uint64_t a = w.record_alloc(512, 11);
    const std::uint64_t b = w.record_alloc(1 << 20, 22);
    w.record_free(a, 512, 22);
    w.record_free(b, 1 << 20, 11);
  }
  std::ifstream in(path);
  std::size_t records = 0;
  const std::tuple<bool, std::uint64_t, std::size_t, unsigned> expected[] = {
      {true, 1, 512, 0}, {true, 2, 1 << 20, 1}, {false, 1, 512, 1}, {false, 2, 1 << 20, 0}};
  for (std::string line; std::getline(in, line);) {
    const auto r = parse_trace_line(line);
    if (!r) continue;
    ASSERT_LT(records, std::size(expected)) << line;
    const auto& [allocate, id, bytes, stream] = expected[records++];
    EXPECT_EQ(r->allocate, allocate) << line;
    EXPECT_EQ(r->id, id) << line;
    EXPECT_EQ(r->bytes, bytes) << line;
    EXPECT_EQ(r->stream, stream) << line;
    EXPECT_EQ(r->thread, 0u) << line;  // one thread
  }
  EXPECT_EQ(records, std::size(expected));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace cudapool::core
