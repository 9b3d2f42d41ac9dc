// trace_reader.hpp - one line of the trace format that trace_writer.hpp writes and
// ../shared/traces holds (op,id,bytes,stream[,thread]): the one parser behind bench's replay
// (bench/trace.cpp) and stress's --sizes=trace:FILE (stress/config.cpp). Each of them says where
// (file and line); trace_live_ids below is the one rule across lines, that ids pair, and
// open_trace_file the one opening of a file.
//
// A line: a UTF-8 byte-order mark before it (some editors and spreadsheets start a CSV file with
// one) and blanks around it and around each field are ignored; a blank line, a line whose first
// character is '#' and the header (first field "op") hold no record. Otherwise four or five
// comma-separated fields: op (a or f), id, bytes, stream and, from trace_writer, the host thread
// (0 when absent); all but op are unsigned decimal numbers, and an allocation has bytes > 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace cudapool::core {

struct trace_line {
  bool allocate = false;  // a: true; f: false
  std::uint64_t id = 0;
  std::size_t bytes = 0;
  unsigned stream = 0;
  unsigned thread = 0;
};

// What is wrong with a trace file as a whole (what(): "is a directory, not a trace file", "cannot be
// read: No such file or directory"); the caller says which file.
class trace_file_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The trace file at path, open for reading. Throws trace_file_error (a directory opens, and then
// reads as an error or as nothing, which said neither what nor where).
[[nodiscard]] std::ifstream open_trace_file(const std::string& path);

// What is wrong with a line (what(): "op must be a or f", "id is not a number", ...).
class trace_line_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The record of a line, or nullopt for a line without one. Throws trace_line_error.
[[nodiscard]] std::optional<trace_line> parse_trace_line(std::string_view line);

// What a trace_live_ids refuses; what(): "id 7 allocated again while it is live", "free of id 7,
// which is not live (never allocated, or freed already)".
[[noreturn]] void throw_id_live(std::uint64_t id);
[[noreturn]] void throw_id_not_live(std::uint64_t id);

// The live allocations of a trace, by id, as its records pair them: an allocation takes an id that
// is not live (one freed may be allocated again), a free gives back one that is. Block: what a
// reader keeps per live allocation (bench: its slot and stream; stress: its bytes). Not thread-safe.
template <class Block>
class trace_live_ids {
 public:
  // Throws trace_line_error when id is live.
  void allocate(std::uint64_t id, Block block) {
    if (!live_.emplace(id, std::move(block)).second) throw_id_live(id);
  }
  // The block id was allocated with. Throws trace_line_error when id is not live.
  Block free(std::uint64_t id) {
    std::optional<Block> b = take(id);
    if (!b) throw_id_not_live(id);
    return std::move(*b);
  }
  // As free, for a reader that ends the allocations still live: nullopt when id is not live.
  [[nodiscard]] std::optional<Block> take(std::uint64_t id) {
    const auto it = live_.find(id);
    if (it == live_.end()) return std::nullopt;
    std::optional<Block> b(std::move(it->second));
    live_.erase(it);
    return b;
  }

 private:
  std::unordered_map<std::uint64_t, Block> live_;
};

}  // namespace cudapool::core
