// The JSON of the stats and of the out-of-memory report: valid JSON for any string (quotes,
// backslashes, control characters, bytes that are not UTF-8), every field where a reader finds it.
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <string>

#include <cudapool/diagnostics.hpp>
#include <cudapool/stats.hpp>

namespace cudapool {
namespace {

// Every byte below 0x20, quotes, a backslash, DEL, and a UTF-8 letter.
std::string hostile_name() {
  std::string name = "a\"b\\c/";
  for (char ch = 1; ch < 0x20; ++ch) name += ch;
  return name + "\x7f" + "\xc3\xa9";
}

pool_stats sample() {
  pool_stats s;
  s.variant = hostile_name();
  s.backend = std::string("sim\xff\xfe") + '\0' + "end";  // not UTF-8, and a NUL inside
  s.reserved_bytes = 4u << 20;
  s.in_use_bytes = 8192;
  s.peak_in_use_bytes = 1u << 20;
  s.ooms = 3;
  s.heap.virtual_memory = true;
  s.heap.fragmentation = 0.25;
  class_stats c;
  c.block_bytes = 4096;
  c.capacity_blocks = 512;
  c.in_use_blocks = 2;
  s.classes = {class_stats{}, c};  // the first is untouched and left out
  return s;
}

// Parses (throws on invalid JSON) and checks that no raw control character is in the text.
nlohmann::json parse(const std::string& text) {
  for (const char ch : text) EXPECT_GE(static_cast<unsigned char>(ch), 0x20u) << "raw control character in " << text;
  return nlohmann::json::parse(text);
}

TEST(StatsJson, AnyStringGivesValidJson) {
  const nlohmann::json j = parse(to_json(sample()));
  EXPECT_EQ(j.at("variant").get<std::string>(), hostile_name());
  const std::string backend = j.at("backend").get<std::string>();
  EXPECT_EQ(backend.substr(0, 3), "sim");
  EXPECT_NE(backend.find("\xef\xbf\xbd"), std::string::npos) << "bytes that are not UTF-8 become U+FFFD";
  EXPECT_NE(backend.find(std::string("\0end", 4)), std::string::npos) << "a NUL is kept, escaped";
}

TEST(StatsJson, FieldsWhereReadersFindThem) {
  const std::string text = to_json(sample());
  const nlohmann::json j = parse(text);
  EXPECT_EQ(j.at("reserved_bytes"), 4u << 20);
  EXPECT_EQ(j.at("in_use_bytes"), 8192u);
  EXPECT_EQ(j.at("peak_in_use_bytes"), 1u << 20);
  EXPECT_EQ(j.at("ooms"), 3u);
  EXPECT_EQ(j.at("heap").at("virtual_memory"), true);
  EXPECT_DOUBLE_EQ(j.at("heap").at("fragmentation").get<double>(), 0.25);
  ASSERT_EQ(j.at("classes").size(), 1u);
  EXPECT_EQ(j.at("classes")[0].at("block_bytes"), 4096u);
  EXPECT_EQ(j.at("classes")[0].at("in_use_blocks"), 2u);
  EXPECT_NE(text.find("\"in_use_bytes\":8192"), std::string::npos) << "compact: " << text;
  EXPECT_LT(text.find("\"variant\""), text.find("\"classes\"")) << "keys in the order written";
}

TEST(StatsJson, OutOfMemoryReport) {
  oom_report r;
  r.requested_bytes = 1u << 30;
  r.size_class = -1;
  r.growth_allowed = false;
  r.stats = sample();
  r.streams = {{7, 256, 512, 1, 1024}};
  r.thread_caches = {{42, 4096, 16}};
  const nlohmann::json j = parse(to_json(r));
  EXPECT_EQ(j.at("requested_bytes"), 1u << 30);
  EXPECT_EQ(j.at("size_class"), -1);
  EXPECT_EQ(j.at("growth_allowed"), false);
  EXPECT_EQ(j.at("streams")[0].at("stream_id"), 7u);
  EXPECT_EQ(j.at("streams")[0].at("pending_epochs"), 1u);
  EXPECT_EQ(j.at("thread_caches")[0].at("blocks"), 16u);
  EXPECT_EQ(j.at("stats").at("variant").get<std::string>(), hostile_name());
}

}  // namespace
}  // namespace cudapool
