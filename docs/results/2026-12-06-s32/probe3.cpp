// One process: the raw cudaEventRecord/cudaEventQuery ring before and after a cudapool CUDA backend
// exists, and the same ring through the backend (record/query). s32 (from s31's probe2): also each
// call timed alone with host work between that evicts the caches (a pool's ~150 operations between
// epochs), to tell a call that is slow where the pool makes it from one that is slow back to back.
#include <cudapool/backend.hpp>
#include <cuda_runtime_api.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <cstdint>
using clk = std::chrono::steady_clock;
static double ns(clk::time_point a, clk::time_point b, int n) { return std::chrono::duration<double, std::nano>(b - a).count() / n; }
static double raw_ring(cudaStream_t s) {
  std::vector<cudaEvent_t> ev(64);
  for (auto& e : ev) { cudaEventCreateWithFlags(&e, cudaEventDisableTiming); cudaEventRecord(e, s); }
  cudaStreamSynchronize(s);
  const int N = 200000; int inc = 0;
  auto a = clk::now();
  for (int i = 0; i < N; ++i) { if (cudaEventQuery(ev[i % 64]) != cudaSuccess) ++inc; cudaEventRecord(ev[i % 64], s); }
  auto b = clk::now();
  cudaStreamSynchronize(s);
  for (auto e : ev) cudaEventDestroy(e);
  if (inc) std::printf("  (incomplete %d)\n", inc);
  return ns(a, b, N);
}
// Query the event recorded `lag` iterations before (a pool queries an epoch's event soon after
// recording it), and record it again.
static void lag_ring(cudaStream_t s, int lag, int spin_ns) {
  std::vector<cudaEvent_t> ev(lag);
  for (auto& e : ev) { cudaEventCreateWithFlags(&e, cudaEventDisableTiming); cudaEventRecord(e, s); }
  cudaStreamSynchronize(s);
  const int N = 100000; int inc = 0;
  auto a = clk::now();
  for (int i = 0; i < N; ++i) {
    if (spin_ns) { auto t = clk::now(); while (clk::now() - t < std::chrono::nanoseconds(spin_ns)) {} }
    if (cudaEventQuery(ev[i % lag]) != cudaSuccess) ++inc;
    cudaEventRecord(ev[i % lag], s);
  }
  auto b = clk::now();
  cudaStreamSynchronize(s);
  for (auto e : ev) cudaEventDestroy(e);
  std::printf("lag %d, %d ns of host work between: %.0f ns per iteration less the work, incomplete %d\n", lag, spin_ns, ns(a, b, N) - spin_ns, inc);
}
static double backend_ring(cudapool::backend& d, cudapool::stream_ref s, int gap_ops) {
  std::vector<cudapool::event_handle> ev;
  for (int i = 0; i < 64; ++i) { ev.push_back(d.acquire_event()); d.record(ev.back(), s); }
  d.synchronize(s);
  const int N = 200000; int inc = 0;
  auto a = clk::now();
  for (int i = 0; i < N; ++i) { if (!d.query(ev[i % 64])) ++inc; d.record(ev[i % 64], s); }
  auto b = clk::now();
  d.synchronize(s);
  for (auto e : ev) d.release_event(e);
  if (inc) std::printf("  (incomplete %d)\n", inc);
  (void)gap_ops;
  return ns(a, b, N);
}
// Record an event, then `kb` KiB of memory touched (a line each 64 bytes, read and written) and
// query the event recorded `lag` iterations before: the two calls timed alone.
static std::vector<unsigned char> junk(64u << 20);
static void cold_ring(cudaStream_t s, int lag, std::size_t kb) {
  std::vector<cudaEvent_t> ev(lag);
  for (auto& e : ev) { cudaEventCreateWithFlags(&e, cudaEventDisableTiming); cudaEventRecord(e, s); }
  cudaStreamSynchronize(s);
  const int N = kb >= 1024 ? 1000 : 20000; int inc = 0;
  double rec = 0, qry = 0; std::size_t off = 0; unsigned sum = 0;
  for (int i = 0; i < N; ++i) {
    for (std::size_t b = 0; b < kb * 1024; b += 64) { sum += junk[(off + b) % junk.size()]++; }
    off += kb * 1024;
    auto t0 = clk::now();
    if (cudaEventQuery(ev[i % lag]) != cudaSuccess) ++inc;
    auto t1 = clk::now();
    cudaEventRecord(ev[i % lag], s);
    auto t2 = clk::now();
    qry += std::chrono::duration<double, std::nano>(t1 - t0).count();
    rec += std::chrono::duration<double, std::nano>(t2 - t1).count();
  }
  cudaStreamSynchronize(s);
  for (auto e : ev) cudaEventDestroy(e);
  std::printf("cold lag %d, %zu KiB touched between: query %.0f ns, record %.0f ns, incomplete %d (%u)\n", lag, kb, qry / N, rec / N, inc, sum & 1);
}
int main() {
  cudaSetDevice(0); cudaFree(nullptr);
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  std::printf("raw ring before the backend: %.0f ns\n", raw_ring(s));
  auto d = cudapool::make_cuda_backend(0);
  std::printf("raw ring after the backend: %.0f ns\n", raw_ring(s));
  cudapool::stream_ref bs = d->create_stream();
  std::printf("backend ring on its stream: %.0f ns\n", backend_ring(*d, bs, 0));
  std::printf("backend ring on the raw stream: %.0f ns\n", backend_ring(*d, cudapool::stream_ref(s), 0));
  std::printf("raw ring on the backend's stream: %.0f ns\n", raw_ring(static_cast<cudaStream_t>(bs.native())));
  std::printf("raw ring again: %.0f ns\n", raw_ring(s));
  d->destroy_stream(bs);
  for (int lag : {1, 2, 4, 16, 64}) for (int spin : {0, 2000, 8000}) lag_ring(s, lag, spin);
  for (std::size_t kb : {0, 16, 64, 256, 1024, 8192}) cold_ring(s, 64, kb);
  cold_ring(s, 1, 256);
  std::vector<cudapool::stream_ref> more;
  for (int i = 0; i < 8; ++i) more.push_back(d->create_stream());
  for (auto x : more) std::printf("stream handle %p bits4-6 %d\n", x.native(), (int)((reinterpret_cast<std::uintptr_t>(x.native()) >> 4) % 8));
  for (auto x : more) d->destroy_stream(x);
  return 0;
}
