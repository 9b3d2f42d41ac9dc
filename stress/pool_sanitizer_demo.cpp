// pool_sanitizer_demo - what debug.sanitizer_regions buys under compute-sanitizer, at pool level.
//
// Makes a pool of the chosen variant on the GPU, allocates a 1000-byte block, and has the device
// write one 32-bit element just past it (the backend's fill kernel: device code, as a user's
// kernel would) and, with --use-after-free, into a block already freed. Both writes land inside
// the pool's slab, memory the CUDA runtime handed out, so without the NVTX registration memcheck
// sees nothing wrong. Run as
//
//   compute-sanitizer --tool memcheck pool_sanitizer_demo --variant=tls            # reported
//   compute-sanitizer --tool memcheck pool_sanitizer_demo --variant=tls --off      # missed
//   compute-sanitizer --tool memcheck pool_sanitizer_demo --use-after-free         # reported
//
// Exits 0 when the program itself ran (the sanitizer's report is the output), 1 on a failure, 2
// for a bad command line.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include <cudapool/backend.hpp>
#include <cudapool/registry.hpp>

int main(int argc, char** argv) {
  std::string variant = "tls";
  bool on = true;
  bool use_after_free = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--variant=", 0) == 0) {
      variant = a.substr(10);
    } else if (a == "--off") {
      on = false;
    } else if (a == "--use-after-free") {
      use_after_free = true;
    } else {
      std::fprintf(stderr, "usage: pool_sanitizer_demo [--variant=NAME] [--off] [--use-after-free]\n");
      return 2;
    }
  }
  try {
    if (cudapool::cuda_device_count() == 0) {
      std::fprintf(stderr, "pool_sanitizer_demo: no CUDA GPU\n");
      return 1;
    }
    std::shared_ptr<cudapool::backend> device = cudapool::make_cuda_backend(0);
    cudapool::pool_options o;
    o.debug.sanitizer_regions = on;
    auto pool = cudapool::make_pool(variant, device, o);
    const cudapool::stream_ref s = device->create_stream();
    void* p = pool->allocate(1000, s);
    void* neighbour = pool->allocate(1000, s);  // the next block is live: the write is no pool bug
    std::printf("pool_sanitizer_demo: %s pool, sanitizer_regions %s, block %p (1000 B)\n", variant.c_str(),
                on ? "on" : "off", p);
    if (use_after_free) {
      pool->deallocate(p, s);
      device->synchronize(s);
      std::printf("pool_sanitizer_demo: writing 4 bytes into the freed block %p\n", p);
      device->fill(s, p, 4, 0xDEADBEEFu);
    } else {
      std::printf("pool_sanitizer_demo: writing 4 bytes at %p, just past the block\n", static_cast<char*>(p) + 1000);
      device->fill(s, static_cast<char*>(p) + 1000, 4, 0xDEADBEEFu);
      device->synchronize(s);
      pool->deallocate(p, s);
    }
    device->synchronize(s);
    pool->deallocate(neighbour, s);
    pool->retire_stream(s);
    pool.reset();
    device->destroy_stream(s);
    std::printf("pool_sanitizer_demo: done\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pool_sanitizer_demo: %s\n", e.what());
    return 1;
  }
}
