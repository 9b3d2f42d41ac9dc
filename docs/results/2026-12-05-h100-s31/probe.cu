// Costs of an epoch's completion signal: cudaEventRecord/Query against stream memory ops on a host word.
#include <cuda.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <atomic>
#include <algorithm>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess && e_ != cudaErrorNotReady) { std::printf("%s: %s\n", #x, cudaGetErrorString(e_)); std::exit(1);} } while (0)
#define CD(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_; cuGetErrorString(r_, &s_); std::printf("%s: %s\n", #x, s_); std::exit(1);} } while (0)
using clk = std::chrono::steady_clock;
__global__ void tiny(int* p) { if (p) *p = 1; }
static double ns(clk::time_point a, clk::time_point b, int n) { return std::chrono::duration<double, std::nano>(b - a).count() / n; }
int main() {
  CK(cudaSetDevice(0)); CK(cudaFree(nullptr));
  CUdevice dev; CD(cuDeviceGet(&dev, 0));
  int v1 = 0, v64 = 0, wv = 0;
  cuDeviceGetAttribute(&v1, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, dev);
  cuDeviceGetAttribute(&v64, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, dev);
  cuDeviceGetAttribute(&wv, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, dev);
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  int drv = 0; cudaDriverGetVersion(&drv);
  std::printf("device %s driver %d memops_v1 %d memops64 %d wait_nor %d\n", prop.name, drv, v1, v64, wv);
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  constexpr int ring = 64; const int N = 200000;
  std::vector<cudaEvent_t> ev(ring);
  for (auto& e : ev) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  for (int rep = 0; rep < 3; ++rep) {
    for (auto& e : ev) CK(cudaEventRecord(e, s));
    CK(cudaStreamSynchronize(s));
    auto a = clk::now();
    int inc = 0;
    for (int i = 0; i < N; ++i) { if (cudaEventQuery(ev[i % ring]) == cudaErrorNotReady) ++inc; CK(cudaEventRecord(ev[i % ring], s)); }
    auto b = clk::now();
    CK(cudaStreamSynchronize(s));
    auto c = clk::now();
    for (int i = 0; i < N; ++i) CK(cudaEventRecord(ev[i % ring], s));
    auto d = clk::now();
    CK(cudaStreamSynchronize(s));
    auto e0 = clk::now();
    for (int i = 0; i < N; ++i) CK(cudaEventQuery(ev[i % ring]));
    auto f = clk::now();
    int dd; auto g = clk::now(); for (int i = 0; i < N; ++i) CK(cudaGetDevice(&dd)); auto h = clk::now();
    std::printf("rep %d event record+query %.0f ns (incomplete %d) record %.0f query(complete) %.0f getdevice %.1f\n", rep, ns(a, b, N), inc, ns(c, d, N), ns(e0, f, N), ns(g, h, N));
  }
  // stream memops on a host-mapped word
  std::uint64_t* host = nullptr;
  CK(cudaHostAlloc((void**)&host, 4096, cudaHostAllocMapped | cudaHostAllocPortable));
  for (int i = 0; i < 512; ++i) host[i] = 0;
  CUdeviceptr dptr; CD(cuMemHostGetDevicePointer(&dptr, host, 0));
  for (int rep = 0; rep < 3; ++rep) {
    for (unsigned flags : {0u, (unsigned)CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER}) {
      CK(cudaStreamSynchronize(s));
      std::uint64_t base = (std::uint64_t)rep * 10000000ull + (flags ? 5000000ull : 0) + 1;
      for (int k = 0; k < ring; ++k) host[k * 8] = 0;
      auto a = clk::now();
      int inc = 0;
      for (int i = 0; i < N; ++i) {
        int k = i % ring;
        std::uint64_t want = base + (std::uint64_t)(i - ring);
        if (i >= ring && __atomic_load_n(&host[k * 8], __ATOMIC_ACQUIRE) < want) ++inc;
        CD(cuStreamWriteValue64((CUstream)s, dptr + k * 64, base + i, flags));
      }
      auto b = clk::now();
      CK(cudaStreamSynchronize(s));
      bool ok = __atomic_load_n(&host[((N - 1) % ring) * 8], __ATOMIC_ACQUIRE) == base + N - 1;
      std::printf("rep %d memop write64 flags %u + load: %.0f ns (incomplete %d) final ok %d\n", rep, flags, ns(a, b, N), inc, ok);
    }
  }
  // with a tiny kernel each iteration (a stream with work): events vs memop
  for (int rep = 0; rep < 2; ++rep) {
    auto a = clk::now();
    for (int i = 0; i < N / 4; ++i) tiny<<<1, 1, 0, s>>>(nullptr);
    auto b = clk::now(); CK(cudaStreamSynchronize(s));
    auto c = clk::now(); int inc = 0;
    for (int i = 0; i < N / 4; ++i) { tiny<<<1, 1, 0, s>>>(nullptr); if (cudaEventQuery(ev[i % ring]) == cudaErrorNotReady) ++inc; CK(cudaEventRecord(ev[i % ring], s)); }
    auto d = clk::now(); CK(cudaStreamSynchronize(s));
    auto e0 = clk::now(); int inc2 = 0;
    std::uint64_t base = 90000000ull + rep * 1000000ull;
    for (int i = 0; i < N / 4; ++i) { int k = i % ring; tiny<<<1, 1, 0, s>>>(nullptr);
      if (i >= ring && __atomic_load_n(&host[k * 8], __ATOMIC_ACQUIRE) < base + i - ring) ++inc2;
      CD(cuStreamWriteValue64((CUstream)s, dptr + k * 64, base + i, 0)); }
    auto f = clk::now(); CK(cudaStreamSynchronize(s));
    std::printf("rep %d with kernel: launch %.0f ns; launch+event %.0f (incomplete %d); launch+memop %.0f (incomplete %d)\n", rep, ns(a, b, N / 4), ns(c, d, N / 4), inc, ns(e0, f, N / 4), inc2);
  }
  // wait value: a stream waits on a word the other stream writes
  cudaStream_t s2; CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  {
    auto a = clk::now();
    for (int i = 0; i < 20000; ++i) { CK(cudaEventRecord(ev[i % ring], s)); CK(cudaStreamWaitEvent(s2, ev[i % ring], 0)); }
    auto b = clk::now(); CK(cudaDeviceSynchronize());
    std::uint64_t base = 200000000ull;
    auto c = clk::now();
    for (int i = 0; i < 20000; ++i) { CD(cuStreamWriteValue64((CUstream)s, dptr + 4000 - 8 * 0, base + i, 0)); CD(cuStreamWaitValue64((CUstream)s2, dptr + 4000, base + i, CU_STREAM_WAIT_VALUE_GEQ)); }
    auto d = clk::now(); CK(cudaDeviceSynchronize());
    std::printf("order_after: event record+streamwait %.0f ns; memop write+waitvalue %.0f ns\n", ns(a, b, 20000), ns(c, d, 20000));
  }
  {
    std::vector<cudaStream_t> ss(16);
    for (auto& x : ss) CK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
    for (auto& x : ss) std::printf("stream %p slot(>>4 %%8) %d\n", (void*)x, (int)(((std::uintptr_t)x >> 4) % 8));
    int d = -1; auto a = clk::now();
    for (int i = 0; i < 20000; ++i) CK(cudaStreamGetDevice(ss[i % 16], &d));
    auto b = clk::now();
    unsigned long long id = 0;
    for (int i = 0; i < 20000; ++i) CK(cudaStreamGetId(ss[i % 16], &id));
    auto c = clk::now();
    std::printf("cudaStreamGetDevice %.0f ns cudaStreamGetId %.0f ns\n", ns(a, b, 20000), ns(b, c, 20000));
  }
  std::printf("done\n");
}
