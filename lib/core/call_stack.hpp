// call_stack.hpp - capture, symbolize and deduplicate host call stacks (debug: leak and guard
// reports name the code that allocated a block).
//
// capture_stack is glibc backtrace(): a walk of the unwind tables, roughly a microsecond per
// frame, so a pool records stacks only when asked to. Its first call loads the libgcc unwinder
// (dlopen, which allocates and takes the loader lock); call_stack.cpp makes that first call during
// static initialization, so a capture inside an allocation path does not.
//
// symbolize needs the symbols in the dynamic symbol table: executables that want their own
// function names link with ENABLE_EXPORTS (-rdynamic); otherwise frames show as module+offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace cudapool::core {

struct call_stack {
  static constexpr int max_frames = 24;
  void* frames[max_frames] = {};  // return addresses, innermost first
  int depth = 0;                  // frames[0 .. depth) are valid

  friend bool operator==(const call_stack& a, const call_stack& b) noexcept;
};

// The calling thread's stack, innermost first, without capture_stack's own frame and the `skip`
// frames above it (a caller passes how many of its own frames to leave out). Thread-safe.
[[nodiscard]] call_stack capture_stack(int skip = 0) noexcept;

// One frame per line, "#i 0xADDR function+0xOFF (module)": the demangled function name when the
// dynamic symbol table has it (dladdr + abi::__cxa_demangle), else "module+0xOFF". Thread-safe.
[[nodiscard]] std::string symbolize(const call_stack& s);

// Deduplicates stacks. intern returns a dense id >= 1, the same one for equal stacks; 0 means
// "no stack" and is never returned. Thread-safe (one mutex: recording stacks is a debug mode).
class stack_table {
 public:
  std::uint32_t intern(const call_stack& s);
  // The stack with that id; an empty one (depth 0) for 0 or an id never returned.
  [[nodiscard]] call_stack get(std::uint32_t id) const;
  // How many distinct stacks were interned.
  [[nodiscard]] std::size_t size() const;

 private:
  struct hash {
    std::size_t operator()(const call_stack& s) const noexcept;
  };
  mutable std::mutex mutex_;
  std::vector<call_stack> stacks_;                         // GUARDED_BY(mutex_); id - 1 -> stack
  std::unordered_map<call_stack, std::uint32_t, hash> ids_;  // GUARDED_BY(mutex_); stack -> id
};

}  // namespace cudapool::core
