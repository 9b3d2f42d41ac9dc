// s32: which step of the cudapool CUDA backend's construction makes the bare cudaEventRecord +
// cudaEventQuery ring 4x slower (run_1: 409 ns before make_cuda_backend, 1,552 after, H200).
// `probe4 all`: the constructor's steps in its order, the ring after each; `probe4 K`: step K
// alone in a fresh process; `probe4 backend`: make_cuda_backend, then the ring before and after
// it is destroyed.
#include <cudapool/backend.hpp>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
using clk = std::chrono::steady_clock;
static cudaStream_t s;
static double ring() {
  std::vector<cudaEvent_t> ev(64);
  for (auto& e : ev) { cudaEventCreateWithFlags(&e, cudaEventDisableTiming); cudaEventRecord(e, s); }
  cudaStreamSynchronize(s);
  const int N = 100000; int inc = 0;
  auto a = clk::now();
  for (int i = 0; i < N; ++i) { if (cudaEventQuery(ev[i % 64]) != cudaSuccess) ++inc; cudaEventRecord(ev[i % 64], s); }
  auto b = clk::now();
  cudaStreamSynchronize(s);
  for (auto e : ev) cudaEventDestroy(e);
  return std::chrono::duration<double, std::nano>(b - a).count() / N;
}
static void* p1; static void* p2; static void* h; static void* dh;
static void step(int k) {
  switch (k) {
    case 0: { std::size_t f, t; cudaMemGetInfo(&f, &t); break; }
    case 1: { void* fn = nullptr; cudaDriverEntryPointQueryResult r{}; cudaGetDriverEntryPointByVersion("cuMemCreate", &fn, 12000, cudaEnableDefault, &r); break; }
    case 2: cudaMalloc(&p1, 4096); break;
    case 3: if (!p1) cudaMalloc(&p1, 4096); cudaMemset(p1, 0, 4096); cudaDeviceSynchronize(); break;
    case 4: cudaHostAlloc(&h, 65536, cudaHostAllocMapped); break;
    case 5: if (!h) cudaHostAlloc(&h, 65536, cudaHostAllocMapped); cudaHostGetDevicePointer(&dh, h, 0); break;
    case 6: nvtxDomainCreateA("probe4"); break;
    case 7: { void* q; cudaMallocHost(&q, 65536); break; }
  }
}
static const char* names[] = {"cudaMemGetInfo", "cudaGetDriverEntryPointByVersion", "cudaMalloc", "cudaMemset (a kernel)",
                              "cudaHostAlloc mapped", "cudaHostGetDevicePointer", "nvtxDomainCreateA", "cudaMallocHost (not mapped)"};
int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "all";
  cudaSetDevice(0); cudaFree(nullptr);
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  std::printf("[%s] ring at start: %.0f ns\n", what.c_str(), ring());
  if (what == "all") {
    for (int k = 0; k < 7; ++k) { step(k); std::printf("[all] after %s: %.0f ns\n", names[k], ring()); }
  } else if (what == "backend") {
    { auto d = cudapool::make_cuda_backend(0); std::printf("[backend] with a backend: %.0f ns\n", ring()); }
    std::printf("[backend] after it is destroyed: %.0f ns\n", ring());
  } else {
    const int k = std::stoi(what); step(k);
    std::printf("[%d] after %s alone: %.0f ns\n", k, names[k], ring());
    std::printf("[%d] again: %.0f ns\n", k, ring());
  }
  return 0;
}
