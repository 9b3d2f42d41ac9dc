// spin_wait.hpp - the bench threads' wait: spin briefly, then yield (the hosts may run more
// benchmark threads than cores). Shared by the workloads and the limit benchmarks.
#pragma once

#include <thread>

namespace bench {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

struct spin_wait {
  unsigned spins = 0;
  void operator()() noexcept {
    if (++spins < 64) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
};

}  // namespace bench
