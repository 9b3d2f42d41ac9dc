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
    case invalid_free_reason::stream_of_another_device:
      return "stream of another device (the free's stream does not belong to the pool's device; the allocation stays live)";
  }
  return "unknown";
}

void default_invalid_free_handler(const void* pointer, invalid_free_reason reason, void*) {
  std::fprintf(stderr, "cudapool: invalid free of %p: %s; ignored\n", pointer, to_string(reason));
}

}  // namespace cudapool
