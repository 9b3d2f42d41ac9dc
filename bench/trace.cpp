// trace.cpp - the trace reader: lines through core/trace_reader.hpp, frees paired with their allocations.
#include "trace.hpp"

#include <algorithm>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string_view>

#include <cudapool/detail/core/trace_reader.hpp>

namespace bench {

trace load_trace(const std::string& path) {
  std::ifstream in;
  try {
    in = cudapool::core::open_trace_file(path);
  } catch (const cudapool::core::trace_file_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
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
  cudapool::core::trace_live_ids<live_block> live;
  std::vector<std::uint64_t> slot_id;  // for the appended frees, in allocation order
  std::size_t live_bytes = 0;
  std::string line;
  std::size_t line_no = 0;
  auto fail = [&](const std::string& why) {
    throw std::runtime_error(path + ":" + std::to_string(line_no) + ": " + why + ": '" + line + "'");
  };
  while (std::getline(in, line)) {
    ++line_no;
    try {
      const std::optional<cudapool::core::trace_line> l = cudapool::core::parse_trace_line(line);
      if (!l) continue;
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
        live.allocate(l->id, live_block{slot, l->bytes, o.stream, o.thread});
        slot_id.push_back(l->id);
        t.slot_stream.push_back(o.stream);
        o.alloc = true;
        o.bytes = l->bytes;
        o.slot = slot;
        o.alloc_stream = o.stream;
        live_bytes += l->bytes;
      } else {
        const live_block b = live.free(l->id);
        o.bytes = b.bytes;
        o.slot = b.slot;
        o.alloc_stream = b.stream;
        live_bytes -= b.bytes;
      }
      t.ops.push_back(o);
    } catch (const cudapool::core::trace_line_error& e) {
      fail(e.what());
    }
    t.peak_live = std::max(t.peak_live, live_bytes);
    t.peak_live_upto.push_back(t.peak_live);
  }
  if (t.ops.empty()) throw std::runtime_error(path + ": no operations");
  // Free what is still live, in allocation order, on the stream and thread it was allocated on (an
  // id allocated again after its free is live once).
  for (const std::uint64_t id : slot_id) {
    const std::optional<live_block> b = live.take(id);
    if (!b) continue;
    trace_op o;
    o.bytes = b->bytes;
    o.slot = b->slot;
    o.stream = o.alloc_stream = b->stream;
    o.thread = b->thread;
    t.ops.push_back(o);
    t.peak_live_upto.push_back(t.peak_live);
    ++t.unmatched;
  }
  t.slots = slot_id.size();
  return t;
}

}  // namespace bench
