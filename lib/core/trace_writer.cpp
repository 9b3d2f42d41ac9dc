// trace_writer.cpp - the trace file (format: trace_writer.hpp).

#include <cudapool/detail/core/trace_writer.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>

namespace cudapool::core {

namespace {

// Every live writer, so that a process that never destroys its pool (a PyTorch plug-in) still
// gets its whole trace: one atexit handler flushes them all. Never destroyed (used at exit).
struct live_writers {
  std::mutex mutex;
  std::set<trace_writer*> writers;  // GUARDED_BY(mutex)
  bool registered = false;          // GUARDED_BY(mutex)
};
live_writers& all_writers() {
  static auto* w = new live_writers;
  return *w;
}

void flush_at_exit() noexcept {
  live_writers& w = all_writers();
  std::lock_guard lock(w.mutex);
  for (trace_writer* t : w.writers) {
    try {
      t->flush();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
    }
  }
}

}  // namespace

trace_writer::trace_writer(const std::string& path) : path_(path) {
  out_.open(path, std::ios::out | std::ios::trunc);
  if (!out_) {
    throw std::runtime_error("cudapool: cannot open trace file '" + path + "': " + std::strerror(errno));
  }
  out_ << "# cudapool allocation trace (replay: bench --trace=" << path << ")\n"
       << "# op,id,bytes,stream,thread  (op a=alloc f=free; id pairs an alloc with its free; stream and thread"
          " (the host thread that made the call) are dense indices)\n";
  check_written();
  live_writers& w = all_writers();
  std::lock_guard lock(w.mutex);
  if (!w.registered) w.registered = std::atexit(flush_at_exit) == 0;
  w.writers.insert(this);
}

trace_writer::~trace_writer() {
  {
    live_writers& w = all_writers();
    std::lock_guard lock(w.mutex);
    w.writers.erase(this);
  }
  try {
    flush();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
}

std::uint64_t trace_writer::record_alloc(std::size_t bytes, std::uint64_t stream_key) {
  if (bytes == 0) throw std::invalid_argument("cudapool: trace_writer: an allocation of 0 bytes");
  std::lock_guard lock(mutex_);
  const std::uint64_t id = next_id_;
  const unsigned stream = stream_index(stream_key);
  live_.emplace(id, bytes);
  ++next_id_;
  out_ << "a," << id << ',' << bytes << ',' << stream << ',' << thread_index() << '\n';
  check_written();
  return id;
}

void trace_writer::record_free(std::uint64_t id, std::size_t bytes, std::uint64_t stream_key) {
  std::lock_guard lock(mutex_);
  const auto it = live_.find(id);
  if (it == live_.end()) {
    throw std::invalid_argument("cudapool: trace_writer: free of id " + std::to_string(id) +
                                ", which is not a live allocation");
  }
  if (it->second != bytes) {
    throw std::invalid_argument("cudapool: trace_writer: free of id " + std::to_string(id) + " with " +
                                std::to_string(bytes) + " bytes, allocated with " + std::to_string(it->second));
  }
  const unsigned stream = stream_index(stream_key);
  live_.erase(it);
  out_ << "f," << id << ',' << bytes << ',' << stream << ',' << thread_index() << '\n';
  check_written();
}

void trace_writer::flush() {
  std::lock_guard lock(mutex_);
  out_.flush();
  check_written();
}

unsigned trace_writer::stream_index(std::uint64_t stream_key) {
  return stream_index_.try_emplace(stream_key, static_cast<unsigned>(stream_index_.size())).first->second;
}

unsigned trace_writer::thread_index() {
  return thread_index_.try_emplace(std::this_thread::get_id(), static_cast<unsigned>(thread_index_.size())).first->second;
}

void trace_writer::check_written() {
  if (!out_) throw std::runtime_error("cudapool: cannot write trace file '" + path_ + "'");
}

}  // namespace cudapool::core
