#include <cudapool/errors.hpp>

#include <cstdio>

namespace cudapool {

const char* to_string(invalid_free_reason r) noexcept {
  switch (r) {
    case invalid_free_reason::foreign_pointer:
      return "foreign pointer (not allocated by this pool)";
    case invalid_free_reason::interior_pointer:
      return "interior pointer (not the start of an allocation)";
    case invalid_free_reason::double_free:
      return "double free (the allocation is not live)";
  }
  return "unknown";
}

void default_invalid_free_handler(const void* pointer, invalid_free_reason reason, void*) {
  std::fprintf(stderr, "cudapool: invalid free of %p: %s; ignored\n", pointer, to_string(reason));
}

}  // namespace cudapool
