// call_stack.cpp - glibc backtrace(), dladdr and the C++ ABI demangler.

#include <cudapool/detail/core/call_stack.hpp>

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace cudapool::core {
namespace {

// backtrace()'s first call dlopens libgcc_s; do it before main rather than inside the first
// allocation that records a stack.
[[maybe_unused]] const bool unwinder_loaded = [] {
  void* frame[1];
  return ::backtrace(frame, 1) >= 0;
}();

std::string hex(std::uintptr_t value) {
  char text[2 + 2 * sizeof(value) + 1];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string module_name(const char* path) {
  if (path == nullptr || *path == '\0') return "?";
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

std::string demangle(const char* name) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> text(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                                         &std::free);
  return status == 0 && text ? std::string(text.get()) : std::string(name);
}

}  // namespace

bool operator==(const call_stack& a, const call_stack& b) noexcept {
  return a.depth == b.depth && std::equal(a.frames, a.frames + a.depth, b.frames);
}

// Not inlined, so that its return address is the caller's frame. backtrace() lists this function
// first, and under a sanitizer also the interceptor wrapping backtrace(): the caller's frame is
// found by that return address rather than at a fixed index.
[[gnu::noinline]] call_stack capture_stack(int skip) noexcept {
  constexpr int own_frames_at_most = 4;
  void* frames[call_stack::max_frames + own_frames_at_most];
  const int captured = ::backtrace(frames, call_stack::max_frames + own_frames_at_most);
  void* const caller = __builtin_extract_return_addr(__builtin_return_address(0));
  int first = 1;
  for (int i = 0; i < std::min(captured, own_frames_at_most); ++i) {
    if (frames[i] == caller) {
      first = i;
      break;
    }
  }
  first += std::max(skip, 0);
  call_stack s;
  for (int i = first; i < captured && s.depth < call_stack::max_frames; ++i) s.frames[s.depth++] = frames[i];
  return s;
}

std::string symbolize(const call_stack& s) {
  std::string out;
  for (int i = 0; i < s.depth; ++i) {
    const auto address = reinterpret_cast<std::uintptr_t>(s.frames[i]);
    out += "#" + std::to_string(i) + " " + hex(address) + " ";
    // A return address points after the call; look up the byte before it so that a call at the
    // very end of a function is attributed to that function.
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(address - 1), &info) == 0) {
      out += "?\n";
      continue;
    }
    const std::string module = module_name(info.dli_fname);
    if (info.dli_sname != nullptr && info.dli_saddr != nullptr) {
      out += demangle(info.dli_sname) + "+" + hex(address - reinterpret_cast<std::uintptr_t>(info.dli_saddr)) +
             " (" + module + ")\n";
    } else {
      out += module + "+" + hex(address - reinterpret_cast<std::uintptr_t>(info.dli_fbase)) + "\n";
    }
  }
  return out;
}

std::size_t stack_table::hash::operator()(const call_stack& s) const noexcept {
  // FNV-1a over the frame addresses.
  std::uint64_t h = 1469598103934665603ULL;
  for (int i = 0; i < s.depth; ++i) {
    h ^= reinterpret_cast<std::uintptr_t>(s.frames[i]);
    h *= 1099511628211ULL;
  }
  return static_cast<std::size_t>(h ^ static_cast<std::uint64_t>(s.depth));
}

std::uint32_t stack_table::intern(const call_stack& s) {
  std::lock_guard lock(mutex_);
  const auto [it, inserted] = ids_.try_emplace(s, static_cast<std::uint32_t>(stacks_.size() + 1));
  if (inserted) {
    try {
      stacks_.push_back(s);
    } catch (...) {
      ids_.erase(it);
      throw;
    }
  }
  return it->second;
}

call_stack stack_table::get(std::uint32_t id) const {
  std::lock_guard lock(mutex_);
  return id >= 1 && id <= stacks_.size() ? stacks_[id - 1] : call_stack{};
}

std::size_t stack_table::size() const {
  std::lock_guard lock(mutex_);
  return stacks_.size();
}

}  // namespace cudapool::core
