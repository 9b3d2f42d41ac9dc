// pair driver: mode 0 = default stream, allocate(4096) + deallocate(p); mode 1 = own stream s, allocate(4096,s) + deallocate(p,s)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cudapool/any_pool.hpp>
#include <cudapool/backend.hpp>
#include <cudapool/registry.hpp>
#include <cudapool/detail/core/arena_backend.hpp>
using namespace cudapool;
__attribute__((noinline)) void run_loop(any_pool* pool, long n, stream_ref s, int mode) {
  for (long i = 0; i < n; ++i) {
    void* p = pool->allocate(4096, s);
    asm volatile("" : : "r"(p) : "memory");
    if (mode == 0) pool->deallocate(p); else pool->deallocate(p, s);
  }
}
int main(int argc, char** argv) {
  const char* v = argv[1]; int arenas = atoi(argv[2]); int mode = atoi(argv[3]); long n = atol(argv[4]); int reps = argc > 5 ? atoi(argv[5]) : 1;
  std::shared_ptr<backend> dev = make_sim_backend();
  pool_options o; o.stream_arenas = arenas;
  if (getenv("RES")) o.address_reservation = strtoull(getenv("RES"), 0, 0);
  if (getenv("MAXC")) o.max_class_bytes = strtoull(getenv("MAXC"), 0, 0);
  if (getenv("AMAXC")) o.arena_max_class_bytes = strtoull(getenv("AMAXC"), 0, 0);
  fprintf(stderr, "mem %zu page %zu\n", dev->memory_bytes(), dev->page_bytes());
  if (getenv("SHIFT")) (void)malloc(strtoull(getenv("SHIFT"),0,0));
  std::shared_ptr<backend> pdev = dev;
  if (getenv("BK")) pdev = std::make_shared<core::arena_backend>(dev, std::make_shared<core::arena_directory>(0), 1);
  auto pool = make_pool(v, pdev, o);
  fprintf(stderr, "pool at %p\n", (void*)pool.get());
  stream_ref s = mode ? dev->create_stream() : stream_ref{};
  run_loop(pool.get(), 1000, s, mode);  // warm
  { void* q = pool->allocate(4096, s); fprintf(stderr, "p=%p\n", q); pool->deallocate(q); }
  double best = 1e9;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    run_loop(pool.get(), n, s, mode);
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
    if (ns < best) best = ns;
  }
  if (reps > 0) printf("%s arenas=%d mode=%d best %.2f ns/pair\n", v, arenas, mode, best);
  if (mode) { pool->flush_stream(s); }
  pool.reset();
  if (mode) dev->destroy_stream(s);
}
