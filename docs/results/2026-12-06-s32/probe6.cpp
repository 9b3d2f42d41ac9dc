// s32: the bare cudaEventRecord + cudaEventQuery ring (probe5's) with a cudapool CUDA backend whose
// verify state, guard ring and NVTX domain are made on first use, then after each is made: which
// of them makes the ring slow, and whether a backend that made none leaves it fast.
#include <cudapool/backend.hpp>
#include <cuda_runtime_api.h>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>
using clk = std::chrono::steady_clock;
static cudaStream_t s;
static double ring() {
  std::vector<cudaEvent_t> ev(64);
  for (auto& e : ev) { cudaEventCreateWithFlags(&e, cudaEventDisableTiming); cudaEventRecord(e, s); }
  cudaStreamSynchronize(s);
  const int N = 100000;
  auto a = clk::now();
  for (int i = 0; i < N; ++i) { (void)cudaEventQuery(ev[i % 64]); cudaEventRecord(ev[i % 64], s); }
  auto b = clk::now();
  cudaStreamSynchronize(s);
  for (auto e : ev) cudaEventDestroy(e);
  return std::chrono::duration<double, std::nano>(b - a).count() / N;
}
#define P(label) std::printf("[%s] %s: %.0f ns\n", order.c_str(), label, ring())
int main(int argc, char** argv) {
  const std::string order = argc > 1 ? argv[1] : "vgn";  // v: verify, g: guard, n: nvtx heap
  cudaSetDevice(0); cudaFree(nullptr);
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  P("start");
  P("start again");
  auto d = cudapool::make_cuda_backend(0);
  P("with a backend (lazy)");
  P("again");
  void* chunk = d->allocate_chunk(1 << 20);
  P("after allocate_chunk (cudaMalloc 1 MiB)");
  void* heap = nullptr;
  for (char c : order) {
    if (c == 'v') { d->fill(cudapool::stream_ref{}, chunk, 4096, 7); d->verify(cudapool::stream_ref{}, chunk, 4096, 7); (void)d->verification_report(); P("after a verify (the verify state)"); }
    if (c == 'g') { d->fill_guard(cudapool::stream_ref{}, chunk, 64, 0xab); d->check_guard(cudapool::stream_ref{}, chunk, 64, 0xab, 1); d->synchronize_device(); (void)d->take_guard_failures(); P("after a guard check (mapped guard ring)"); }
    if (c == 'n') { heap = d->register_heap(chunk, 1 << 20); P("after register_heap (NVTX domain)"); }
    P("again");
  }
  if (heap) d->unregister_heap(heap);
  d->free_chunk(chunk, 1 << 20);
  d.reset();
  P("backend destroyed");
  return 0;
}
