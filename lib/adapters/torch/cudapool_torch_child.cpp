// cudapool_torch_child.cpp - drives libcudapool_torch.so through its C ABI the way PyTorch's
// CUDAPluggableAllocator does (dlopen, dlsym, malloc/free with a device and a stream), in a process
// of its own so that cudapool_torch_test can check what the library writes at exit.
//
// Usage: cudapool_torch_child LIBRARY MODE. Exit 0 when every check of MODE held, 3 when one failed
// (the reason on stderr), 2 for bad usage or a library that does not load.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <cudapool/cudapool_torch.h>

namespace {

using malloc_fn = void* (*)(std::size_t, int, cudaStream_t);
using free_fn = void (*)(void*, std::size_t, int, cudaStream_t);

malloc_fn torch_malloc = nullptr;
free_fn torch_free = nullptr;
std::atomic<int> failures{0};

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "child check failed: %s\n", what);
    failures.fetch_add(1);
  }
}

struct block {
  void* p;
  std::size_t bytes;
  int device;
};

// Distinct, 256 B aligned, non-overlapping blocks on each device.
void check_layout(std::vector<block> blocks) {
  std::sort(blocks.begin(), blocks.end(), [](const block& a, const block& b) {
    return std::pair(a.device, reinterpret_cast<std::uintptr_t>(a.p)) <
           std::pair(b.device, reinterpret_cast<std::uintptr_t>(b.p));
  });
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    check(reinterpret_cast<std::uintptr_t>(blocks[i].p) % 256 == 0, "block is 256 B aligned");
    if (i > 0 && blocks[i].device == blocks[i - 1].device) {
      check(reinterpret_cast<std::uintptr_t>(blocks[i - 1].p) + blocks[i - 1].bytes <=
                reinterpret_cast<std::uintptr_t>(blocks[i].p),
            "live blocks do not overlap");
    }
  }
}

// Every class boundary region, the large path, two devices, three rounds (the later ones reuse).
void sizes() {
  const std::size_t sizes[] = {1, 255, 256, 257, 4096, 65536, (std::size_t{1} << 20), (std::size_t{1} << 20) + 1,
                               std::size_t{8} << 20};
  for (int round = 0; round < 3; ++round) {
    std::vector<block> live;
    for (int device = 0; device < 2; ++device) {
      for (const std::size_t bytes : sizes) {
        void* p = torch_malloc(bytes, device, nullptr);
        check(p != nullptr, "allocation of a nonzero size succeeds");
        if (p != nullptr) live.push_back({p, bytes, device});
      }
    }
    check_layout(live);
    for (const block& b : live) torch_free(b.p, b.bytes, b.device, nullptr);
  }
  check(torch_malloc(0, 0, nullptr) == nullptr, "size 0 gives NULL");
  torch_free(nullptr, 0, 0, nullptr);
}

void leak() { check(torch_malloc(4096, 0, nullptr) != nullptr, "allocation succeeds"); }

void zero() {
  check(torch_malloc(0, 0, nullptr) == nullptr, "size 0 gives NULL");
  torch_free(nullptr, 0, 0, nullptr);
}

// The message of the exception `allocate` throws ("" when it returns), as PyTorch would see it.
template <class Exception, class Allocate>
std::string thrown(Allocate allocate) {
  try {
    allocate();
  } catch (const Exception& e) {
    return e.what();
  }
  return "";
}

// Run with CUDAPOOL_BYTE_LIMIT=8m: 64 MiB cannot fit, and the pool still serves what fits after.
void oom() {
  for (int attempt = 0; attempt < 2; ++attempt) {
    const std::string what = thrown<std::bad_alloc>([] { (void)torch_malloc(std::size_t{64} << 20, 0, nullptr); });
    check(what.find("out of memory") != std::string::npos, "64 MiB over an 8 MiB limit throws out_of_memory");
    check(what.find("lockfree pool") != std::string::npos, "the message gives the pool's account (the default variant's)");
  }
  void* p = torch_malloc(4096, 0, nullptr);
  check(p != nullptr, "4 KiB still fits after an out-of-memory");
  torch_free(p, 4096, 0, nullptr);
}

void bad_device() {
  for (const int device : {-1, 1000}) {
    const std::string what = thrown<std::exception>([device] { (void)torch_malloc(256, device, nullptr); });
    check(what.find("device " + std::to_string(device) + " is out of range") != std::string::npos,
          "a device out of range throws, naming it");
  }
  int local = 0;
  torch_free(&local, 256, 5, nullptr);  // no pool on device 5: reported and ignored
}

// Threads racing to create the pools of two devices, then allocating and freeing on both.
void threads() {
  std::vector<std::thread> workers;
  for (int t = 0; t < 8; ++t) {
    workers.emplace_back([t] {
      for (int i = 0; i < 2000; ++i) {
        const int device = (t + i) % 2;
        const std::size_t bytes = std::size_t{256} << (i % 8);
        void* p = torch_malloc(bytes, device, nullptr);
        check(p != nullptr, "threaded allocation succeeds");
        torch_free(p, bytes, device, nullptr);
      }
    });
  }
  for (std::thread& w : workers) w.join();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: cudapool_torch_child LIBRARY sizes|leak|zero|oom|bad-device|threads\n");
    return 2;
  }
  // As ctypes.CDLL loads it.
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 2;
  }
  torch_malloc = reinterpret_cast<malloc_fn>(dlsym(lib, "cudapool_torch_malloc"));
  torch_free = reinterpret_cast<free_fn>(dlsym(lib, "cudapool_torch_free"));
  if (torch_malloc == nullptr || torch_free == nullptr) {
    std::fprintf(stderr, "dlsym: the library does not export both entry points\n");
    return 2;
  }
  const std::string_view mode = argv[2];
  if (mode == "sizes") {
    sizes();
  } else if (mode == "leak") {
    leak();
  } else if (mode == "zero") {
    zero();
  } else if (mode == "oom") {
    oom();
  } else if (mode == "bad-device") {
    bad_device();
  } else if (mode == "threads") {
    threads();
  } else {
    std::fprintf(stderr, "unknown mode '%s'\n", argv[2]);
    return 2;
  }
  return failures.load() == 0 ? 0 : 3;  // exit() runs the library's exit handler: CUDAPOOL_STATS
}
