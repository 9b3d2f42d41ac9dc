// trace.cpp - the trace reader.
#include "trace.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

namespace bench {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

template <class T>
bool parse_number(std::string_view s, T& out) {
  s = trim(s);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}

}  // namespace

trace load_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open trace " + path);
  trace t;
  t.path = path;
  std::string_view base = path;
  if (const auto slash = base.find_last_of('/'); slash != std::string_view::npos) base.remove_prefix(slash + 1);
  if (base.size() > 4 && base.substr(base.size() - 4) == ".csv") base.remove_suffix(4);
  t.name = std::string(base);

  struct live_block {
    std::uint32_t slot;
    std::size_t bytes;
    std::uint16_t stream;
    std::uint16_t thread;
  };
  std::unordered_map<std::uint64_t, live_block> live;
  std::vector<std::uint64_t> slot_id;  // for the appended frees, in allocation order
  std::size_t live_bytes = 0;
  std::string line;
  std::size_t line_no = 0;
  auto fail = [&](const std::string& why) {
    throw std::runtime_error(path + ":" + std::to_string(line_no) + ": " + why + ": '" + line + "'");
  };
  while (std::getline(in, line)) {
    ++line_no;
    const std::string_view l = trim(line);
    if (l.empty() || l.front() == '#' || l.starts_with("op,")) continue;
    std::string_view field[5];
    std::size_t n = 0, start = 0;
    for (std::size_t i = 0; i <= l.size() && n < 6; ++i) {
      if (i == l.size() || l[i] == ',') {
        if (n < 5) field[n] = l.substr(start, i - start);
        ++n;
        start = i + 1;
      }
    }
    if (n != 4 && n != 5) fail("expected 4 fields (op,id,bytes,stream) or 5 (and thread)");
    const std::string_view op = trim(field[0]);
    std::uint64_t id = 0;
    std::size_t bytes = 0;
    unsigned stream = 0;
    if (!parse_number(field[1], id)) fail("bad id");
    if (!parse_number(field[2], bytes)) fail("bad size");
    if (!parse_number(field[3], stream) || stream > 0xFFFF) fail("bad stream index");
    unsigned thread = 0;
    if (n == 5 && (!parse_number(field[4], thread) || thread > 0xFFFF)) fail("bad thread index");
    t.streams = std::max(t.streams, stream + 1);
    t.threads = std::max(t.threads, thread + 1);
    trace_op o;
    o.stream = static_cast<std::uint16_t>(stream);
    o.thread = static_cast<std::uint16_t>(thread);
    if (op == "a") {
      if (bytes == 0) fail("allocation of 0 bytes");
      const auto slot = static_cast<std::uint32_t>(slot_id.size());
      if (!live.emplace(id, live_block{slot, bytes, o.stream, o.thread}).second) fail("id allocated twice");
      slot_id.push_back(id);
      t.slot_stream.push_back(o.stream);
      o.alloc = true;
      o.bytes = bytes;
      o.slot = slot;
      o.alloc_stream = o.stream;
      live_bytes += bytes;
    } else if (op == "f") {
      const auto it = live.find(id);
      if (it == live.end()) fail("free of an id that is not live");
      o.bytes = it->second.bytes;
      o.slot = it->second.slot;
      o.alloc_stream = it->second.stream;
      live_bytes -= it->second.bytes;
      live.erase(it);
    } else {
      fail("op must be a or f");
    }
    t.ops.push_back(o);
    t.peak_live = std::max(t.peak_live, live_bytes);
    t.peak_live_upto.push_back(t.peak_live);
  }
  if (t.ops.empty()) throw std::runtime_error(path + ": no operations");
  // Free what is still live, in allocation order, on the stream and thread it was allocated on.
  for (const std::uint64_t id : slot_id) {
    const auto it = live.find(id);
    if (it == live.end()) continue;
    trace_op o;
    o.bytes = it->second.bytes;
    o.slot = it->second.slot;
    o.stream = o.alloc_stream = it->second.stream;
    o.thread = it->second.thread;
    t.ops.push_back(o);
    t.peak_live_upto.push_back(t.peak_live);
    ++t.unmatched;
  }
  t.slots = slot_id.size();
  return t;
}

}  // namespace bench
