// s32: probe4 found the bare event ring slow only while a cudapool CUDA backend is alive (1,957 ns,
// 661 once destroyed). Which of its live parts: `probe5 sync` (a backend, then
// cudaDeviceSynchronize, then destroyed), `probe5 replica` (the constructor's calls with the same
// sizes, then each resource released in the destructor's order).
#include <cudapool/backend.hpp>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>
#include "../../../lib/backend/cuda_kernels.hpp"
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
#define P(label) std::printf("[%s] %s: %.0f ns\n", what.c_str(), label, ring())
int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "sync";
  cudaSetDevice(0); cudaFree(nullptr);
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  P("start");
  P("start again");
  if (what == "sync") {
    auto d = cudapool::make_cuda_backend(0);
    P("with a backend");
    cudaDeviceSynchronize();
    P("after cudaDeviceSynchronize");
    d.reset();
    P("destroyed");
  } else if (what == "two") {
    auto d = cudapool::make_cuda_backend(0);
    P("with a backend");
    auto d2 = cudapool::make_cuda_backend(0);
    P("with two");
    d.reset(); d2.reset();
    P("destroyed");
  } else if (what == "nvtx") {
    auto dom = nvtxDomainCreateA("cudapool");
    P("after nvtxDomainCreateA"); P("again"); P("again");
    nvtxDomainDestroy(dom);
    P("after nvtxDomainDestroy");
  } else if (what == "hostalloc") {
    void* ringp; cudaHostAlloc(&ringp, sizeof(cudapool::detail::guard_ring), cudaHostAllocMapped);
    void* dr; cudaHostGetDevicePointer(&dr, ringp, 0);
    P("after the mapped guard ring"); P("again"); P("again");
    cudaFreeHost(ringp);
    P("after cudaFreeHost");
  } else if (what == "devstate") {
    void* vs; cudaMalloc(&vs, sizeof(cudapool::detail::verify_state)); cudaMemset(vs, 0, sizeof(cudapool::detail::verify_state));
    P("after cudaMalloc + cudaMemset"); P("again"); P("again");
    cudaFree(vs);
    P("after cudaFree");
  } else {
    std::size_t f, t; cudaMemGetInfo(&f, &t);
    void* fn[3] = {}; cudaDriverEntryPointQueryResult r{};
    cudaGetDriverEntryPointByVersion("cuDeviceGet", &fn[0], 12000, cudaEnableDefault, &r);
    cudaGetDriverEntryPointByVersion("cuDeviceGetAttribute", &fn[1], 12000, cudaEnableDefault, &r);
    cudaGetDriverEntryPointByVersion("cuMemGetAllocationGranularity", &fn[2], 12000, cudaEnableDefault, &r);
    CUdevice dev = 0; reinterpret_cast<CUresult (*)(CUdevice*, int)>(fn[0])(&dev, 0);
    int vmm = 0; reinterpret_cast<CUresult (*)(int*, CUdevice_attribute, CUdevice)>(fn[1])(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev);
    CUmemAllocationProp prop{}; prop.type = CU_MEM_ALLOCATION_TYPE_PINNED; prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE; prop.location.id = 0;
    std::size_t g = 0; reinterpret_cast<CUresult (*)(std::size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags)>(fn[2])(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    P("after the driver queries");
    void* vs; cudaMalloc(&vs, sizeof(cudapool::detail::verify_state)); cudaMemset(vs, 0, sizeof(cudapool::detail::verify_state));
    void* gc; cudaMalloc(&gc, sizeof(cudapool::detail::guard_counters)); cudaMemset(gc, 0, sizeof(cudapool::detail::guard_counters));
    P("after the device state");
    void* ringp; cudaHostAlloc(&ringp, sizeof(cudapool::detail::guard_ring), cudaHostAllocMapped);
    void* dr; cudaHostGetDevicePointer(&dr, ringp, 0);
    P("after the mapped guard ring");
    auto dom = nvtxDomainCreateA("cudapool");
    P("after nvtxDomainCreateA (the whole constructor)");
    cudaDeviceSynchronize();
    P("after cudaDeviceSynchronize");
    cudaFreeHost(ringp);
    P("after cudaFreeHost (guard ring)");
    cudaFree(gc); cudaFree(vs);
    P("after cudaFree x2");
    nvtxDomainDestroy(dom);
    P("after nvtxDomainDestroy");
  }
  return 0;
}
