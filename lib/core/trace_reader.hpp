// trace_reader.hpp - one line of the trace format that trace_writer.hpp writes and
// ../shared/traces holds (op,id,bytes,stream[,thread]): the one parser behind bench's replay
// (bench/trace.cpp) and stress's --sizes=trace:FILE (stress/config.cpp). Each of them says where
// (file and line) and keeps its own rules across lines (bench pairs frees with allocations).
//
// A line: blanks around it and around each field are ignored; a blank line, a line whose first
// character is '#' and the header (first field "op") hold no record. Otherwise four or five
// comma-separated fields: op (a or f), id, bytes, stream and, from trace_writer, the host thread
// (0 when absent); all but op are unsigned decimal numbers, and an allocation has bytes > 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace cudapool::core {

struct trace_line {
  bool allocate = false;  // a: true; f: false
  std::uint64_t id = 0;
  std::size_t bytes = 0;
  unsigned stream = 0;
  unsigned thread = 0;
};

// What is wrong with a line (what(): "op must be a or f", "id is not a number", ...).
class trace_line_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The record of a line, or nullopt for a line without one. Throws trace_line_error.
[[nodiscard]] std::optional<trace_line> parse_trace_line(std::string_view line);

}  // namespace cudapool::core
