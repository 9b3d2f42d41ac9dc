#include <cudapool/detail/core/asymmetric_fence.hpp>

#include <cstdio>
#include <cstdlib>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace cudapool::core {

namespace {

#if defined(__linux__)
long membarrier(int cmd) noexcept { return syscall(__NR_membarrier, cmd, 0, 0); }
#endif

bool register_membarrier() noexcept {
#if defined(__linux__)
  const long commands = membarrier(MEMBARRIER_CMD_QUERY);
  if (commands < 0 || (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
#else
  return false;
#endif
}

}  // namespace

bool asymmetric_fences_available() noexcept {
  static const bool available = register_membarrier();
  return available;
}

void heavy_fence(bool asymmetric) noexcept {
  if (!asymmetric) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return;
  }
#if defined(__linux__)
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
#endif
  // Registered, then refused: owners run with compiler barriers only, so no fence here is enough.
  std::fprintf(stderr, "cudapool: membarrier failed after registration; cannot continue safely\n");
  std::abort();
}

}  // namespace cudapool::core
