// cudapool/errors.hpp - exceptions and the invalid-free reporting hook.
#pragma once

#include <memory>
#include <new>
#include <stdexcept>
#include <string>

namespace cudapool {

struct oom_report;  // cudapool/diagnostics.hpp

// Thrown by allocate() when the request cannot be met even after reclaiming pending frees,
// trimming caches and growing. what() says what was asked and what the pool holds where; report()
// (include cudapool/diagnostics.hpp) gives the same as data, and to_json(*report()) as JSON.
class out_of_memory : public std::bad_alloc {
 public:
  explicit out_of_memory(std::string message, std::shared_ptr<const oom_report> report = {})
      : message_(std::make_shared<const std::string>(std::move(message))), report_(std::move(report)) {}
  [[nodiscard]] const char* what() const noexcept override { return message_->c_str(); }
  // nullptr for errors raised outside allocate() (e.g. an initial_reservation that cannot be had).
  [[nodiscard]] const oom_report* report() const noexcept { return report_.get(); }

 private:
  std::shared_ptr<const std::string> message_;  // shared: copying an exception must not throw
  std::shared_ptr<const oom_report> report_;
};

// Thrown when a backend call fails for a reason other than exhaustion (a CUDA error, a bad
// device ordinal). The message names the call and the error.
class backend_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class invalid_free_reason {
  foreign_pointer,   // not inside any block of this pool
  interior_pointer,  // inside a block, but not its start
  double_free,       // the block is not live (already freed, or pending a stream-ordered free)
  stream_of_another_device,  // deallocate(p, s): s belongs to another device than the pool's
};

[[nodiscard]] const char* to_string(invalid_free_reason r) noexcept;

// Called (from the thread that called deallocate) for every rejected free. The pool is left
// unchanged. The default handler writes one line to stderr.
using invalid_free_handler = void (*)(const void* pointer, invalid_free_reason reason, void* context);

void default_invalid_free_handler(const void* pointer, invalid_free_reason reason, void* context);

}  // namespace cudapool
