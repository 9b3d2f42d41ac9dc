// trace.cpp - the trace reader: lines through core/trace_reader.hpp, frees paired with their allocations.
#include "trace.hpp"

#include <algorithm>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include <cudapool/detail/core/trace_reader.hpp>

namespace bench {

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
    std::optional<cudapool::core::trace_line> l;
    try {
      l = cudapool::core::parse_trace_line(line);
    } catch (const cudapool::core::trace_line_error& e) {
      fail(e.what());
    }
    if (!l) continue;
    const std::uint64_t id = l->id;
    const std::size_t bytes = l->bytes;
    const unsigned stream = l->stream;
    const unsigned thread = l->thread;
    if (stream > 0xFFFF) fail("stream index over 65535");
    if (thread > 0xFFFF) fail("thread index over 65535");
    t.streams = std::max(t.streams, stream + 1);
    t.threads = std::max(t.threads, thread + 1);
    trace_op o;
    o.stream = static_cast<std::uint16_t>(stream);
    o.thread = static_cast<std::uint16_t>(thread);
    if (l->allocate) {
      const auto slot = static_cast<std::uint32_t>(slot_id.size());
      if (!live.emplace(id, live_block{slot, bytes, o.stream, o.thread}).second) fail("id allocated twice");
      slot_id.push_back(id);
      t.slot_stream.push_back(o.stream);
      o.alloc = true;
      o.bytes = bytes;
      o.slot = slot;
      o.alloc_stream = o.stream;
      live_bytes += bytes;
    } else {
      const auto it = live.find(id);
      if (it == live.end()) fail("free of an id that is not live");
      o.bytes = it->second.bytes;
      o.slot = it->second.slot;
      o.alloc_stream = it->second.stream;
      live_bytes -= it->second.bytes;
      live.erase(it);
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
