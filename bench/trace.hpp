// trace.hpp - allocation traces for the replay workload (format: ../shared/traces/README.md).
//
//   op,id,bytes,stream[,thread]   op: a = allocate, f = free; id pairs them (never reused); stream
//                                 and thread (the host thread that made the call; trace_writer
//                                 records it, ../shared/traces lack it: 0): dense indices
//
// Lines starting with '#' and blank lines are comments; a line whose first field is "op" is a header
// (each line is read by core/trace_reader.hpp, as stress's --sizes=trace: reads it).
// Allocations never freed in the file are freed at the end, in allocation order, on their stream
// and thread, so that a replay can loop over the trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bench {

struct trace_op {
  std::size_t bytes = 0;        // requested size
  std::uint32_t slot = 0;       // dense index of the allocation (its id, renumbered)
  std::uint16_t stream = 0;     // the stream of this operation
  std::uint16_t alloc_stream = 0;  // for a free: the stream its block was allocated on
  std::uint16_t thread = 0;     // the host thread of this operation (0 in four-field files)
  bool alloc = false;
};

struct trace {
  std::string name;   // the file name without directory and .csv
  std::string path;
  std::vector<trace_op> ops;
  std::size_t slots = 0;         // allocations
  std::vector<std::uint16_t> slot_stream;  // per allocation: the stream it was allocated on
  std::size_t unmatched = 0;     // allocations freed by the appended frees
  unsigned streams = 1;          // highest stream index + 1
  unsigned threads = 1;          // highest thread index + 1
  std::size_t peak_live = 0;     // peak of the sum of requested bytes live
  // peak_live_upto[i]: the peak over ops[0..i], for runs that replay only a prefix.
  std::vector<std::size_t> peak_live_upto;
};

// Throws std::runtime_error naming the file (and line) for anything malformed: a file
// core::open_trace_file refuses (a directory, one that cannot be read), what
// core::parse_trace_line refuses (a field count other than 4 or 5, an unknown op, a field that is
// not a number, an allocation of 0 bytes), what core::trace_live_ids refuses (an id allocated again
// while it is live, a free of an id not live), more than 65536 streams or threads.
[[nodiscard]] trace load_trace(const std::string& path);

}  // namespace bench
