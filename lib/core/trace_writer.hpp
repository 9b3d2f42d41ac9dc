// trace_writer.hpp - records an allocation trace in the ../shared/traces CSV format, which
// `bench --trace=FILE` replays (bench/trace.cpp reads it):
//
//   # comment lines
//   a,ID,BYTES,STREAM,THREAD     an allocation of BYTES on STREAM, by host thread THREAD
//   f,ID,BYTES,STREAM,THREAD     its free (BYTES: the allocation's size), on the freeing stream
//
// IDs start at 1 and are never reused; STREAM is a dense index of the stream keys in order of
// first appearance (0 = the first stream seen), THREAD the same of the host threads that made the
// calls (the ../shared/traces files have four fields; the reader takes both). A free line always
// follows its allocation line, and the writer rejects a free it has no live allocation for, so
// every file it writes parses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

namespace cudapool::core {

// Thread-safe: one mutex around a buffered file (a debug feature, not a fast path).
class trace_writer {
 public:
  // Creates or truncates the file and writes the header. Throws std::runtime_error naming the path
  // when it cannot be opened.
  explicit trace_writer(const std::string& path);
  trace_writer(const trace_writer&) = delete;
  trace_writer& operator=(const trace_writer&) = delete;
  ~trace_writer();  // flushes; a write error there is reported on stderr
  // A writer still alive at exit (its pool never destroyed) is flushed by an atexit handler.

  // Records an allocation and returns its id (>= 1). stream_key is any value that names the stream
  // (a stream id, a handle). Throws std::invalid_argument for 0 bytes (the format has no such
  // allocation) and std::runtime_error when the file cannot be written.
  std::uint64_t record_alloc(std::size_t bytes, std::uint64_t stream_key);
  // Records the free of a live allocation. Throws std::invalid_argument when `id` is not live or
  // `bytes` is not its size, and std::runtime_error when the file cannot be written.
  void record_free(std::uint64_t id, std::size_t bytes, std::uint64_t stream_key);
  // Writes what is buffered; throws std::runtime_error on a write error.
  void flush();

  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  unsigned stream_index(std::uint64_t stream_key);  // requires mutex_
  unsigned thread_index();                          // requires mutex_; the calling thread's
  void check_written();                              // requires mutex_

  const std::string path_;
  std::mutex mutex_;
  std::ofstream out_;                                         // GUARDED_BY(mutex_)
  std::uint64_t next_id_ = 1;                                 // GUARDED_BY(mutex_)
  std::unordered_map<std::uint64_t, std::size_t> live_;       // GUARDED_BY(mutex_); id -> bytes
  std::unordered_map<std::uint64_t, unsigned> stream_index_;  // GUARDED_BY(mutex_); key -> dense index
  std::unordered_map<std::thread::id, unsigned> thread_index_;  // GUARDED_BY(mutex_); thread -> dense index
};

}  // namespace cudapool::core
