// peers.cpp - cudaMalloc, cudaMallocAsync and CUB's CachingDeviceAllocator behind peers::peer.
// Plain C++ (g++): CUB's allocator is host code; its header only needs the toolkit's include
// directories (lib/peers/CMakeLists.txt adds include/cccl, where CUDA 13 keeps cub/).
#include <cudapool/detail/peers/peers.hpp>

#include <stdexcept>
#include <utility>

#if CUDAPOOL_HAS_CUDA
#include <limits>
#include <mutex>

#include <cub/util_allocator.cuh>
#include <cuda_runtime_api.h>

#include <cudapool/detail/peers/cuda_status.hpp>
#endif

namespace cudapool::peers {

namespace {
thread_local std::string t_last_error;
}  // namespace

const std::string& last_error() noexcept { return t_last_error; }

void set_last_error(std::string message) noexcept {
  try {
    t_last_error = std::move(message);
  } catch (...) {
    t_last_error.clear();
  }
}

#if CUDAPOOL_HAS_CUDA
namespace {

using cuda_status::check;
using cuda_status::ok;
using cuda_status::report;

class peer_base : public peer {
 public:
  explicit peer_base(int device) : device_(device) { check(cudaSetDevice(device_), "cudaSetDevice"); }
  bool attach_thread() noexcept override { return ok(cudaSetDevice(device_), "cudaSetDevice"); }

 protected:
  int device_;
};

// ---- cudaMalloc / cudaFree -------------------------------------------------------------------

class cuda_malloc_peer final : public peer_base {
 public:
  using peer_base::peer_base;
  std::string_view name() const noexcept override { return "cudaMalloc"; }
  void* allocate(std::size_t bytes, cudapool::stream_ref) noexcept override {
    void* p = nullptr;
    return ok(cudaMalloc(&p, bytes), "cudaMalloc", bytes) ? p : nullptr;
  }
  bool deallocate(void* p, cudapool::stream_ref) noexcept override { return ok(cudaFree(p), "cudaFree", 0, p); }
  // cudaFree waits for the device to finish the work in flight, so stream order holds.
  bool deallocate(void* p, cudapool::stream_ref, cudapool::stream_ref) noexcept override {
    return ok(cudaFree(p), "cudaFree", 0, p);
  }
};

// ---- cudaMallocAsync on the device's default pool ----------------------------------------------

class cuda_malloc_async_peer final : public peer_base {
 public:
  explicit cuda_malloc_async_peer(int device) : peer_base(device) {
    check(cudaDeviceGetDefaultMemPool(&pool_, device_), "cudaDeviceGetDefaultMemPool");
    check(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &old_threshold_),
          "cudaMemPoolGetAttribute(ReleaseThreshold)");
    std::uint64_t keep_all = std::numeric_limits<std::uint64_t>::max();
    check(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep_all),
          "cudaMemPoolSetAttribute(ReleaseThreshold = UINT64_MAX)");
    // Start empty (a previous benchmark may have left memory in the pool) and measure from here.
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    check(cudaMemPoolTrimTo(pool_, 0), "cudaMemPoolTrimTo(0)");
    std::uint64_t zero = 0;
    check(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReservedMemHigh, &zero),
          "cudaMemPoolSetAttribute(ReservedMemHigh = 0)");
  }
  ~cuda_malloc_async_peer() override {
    report(cudaSetDevice(device_), "cudaSetDevice");
    report(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    report(cudaMemPoolTrimTo(pool_, 0), "cudaMemPoolTrimTo(0)");
    report(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &old_threshold_),
           "cudaMemPoolSetAttribute(ReleaseThreshold, restore)");
  }
  std::string_view name() const noexcept override { return "cudaMallocAsync"; }
  void* allocate(std::size_t bytes, cudapool::stream_ref s) noexcept override {
    void* p = nullptr;
    return ok(cudaMallocAsync(&p, bytes, to_cuda(s)), "cudaMallocAsync", bytes) ? p : nullptr;
  }
  bool deallocate(void* p, cudapool::stream_ref alloc_stream) noexcept override {
    return ok(cudaFreeAsync(p, to_cuda(alloc_stream)), "cudaFreeAsync", 0, p);
  }
  bool deallocate(void* p, cudapool::stream_ref, cudapool::stream_ref free_stream) noexcept override {
    return ok(cudaFreeAsync(p, to_cuda(free_stream)), "cudaFreeAsync", 0, p);
  }
  std::optional<std::size_t> peak_reserved_bytes() noexcept override {
    std::uint64_t high = 0;
    if (!ok(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemHigh, &high),
            "cudaMemPoolGetAttribute(ReservedMemHigh)")) {
      return std::nullopt;
    }
    return static_cast<std::size_t>(high);
  }

 private:
  cudaMemPool_t pool_ = nullptr;
  std::uint64_t old_threshold_ = 0;
};

// ---- CUB CachingDeviceAllocator ----------------------------------------------------------------

// A stream-ordered free on another stream than the block's: CUB has no such call (DeviceFree
// records the block's ready event on the stream it was allocated on), so, as a CUB user must, we
// make the allocation stream wait for the free stream first. One event per thread, made on first
// use and destroyed by detach_thread().
thread_local cudaEvent_t t_cross_event = nullptr;

class cub_peer final : public peer_base {
 public:
  // Default bins (bin_growth 8, min_bin 3, max_bin 7), cleanup on destruction, no cache limit.
  explicit cub_peer(int device) : peer_base(device) {
    check(cub_.SetMaxCachedBytes(cub::CachingDeviceAllocator::INVALID_SIZE),
          "cub::CachingDeviceAllocator::SetMaxCachedBytes(unlimited)");
  }
  ~cub_peer() override {
    report(cudaSetDevice(device_), "cudaSetDevice");
    report(cub_.FreeAllCached(), "cub::CachingDeviceAllocator::FreeAllCached");
  }
  std::string_view name() const noexcept override { return "cub"; }
  void detach_thread() noexcept override {
    if (t_cross_event != nullptr) {
      report(cudaEventDestroy(t_cross_event), "cudaEventDestroy");
      t_cross_event = nullptr;
    }
  }
  void* allocate(std::size_t bytes, cudapool::stream_ref s) noexcept override {
    void* p = nullptr;
    if (!ok(cub_.DeviceAllocate(&p, bytes, to_cuda(s)), "cub::CachingDeviceAllocator::DeviceAllocate", bytes)) {
      return nullptr;
    }
    if (track_) [[unlikely]] sample_reserved();
    return p;
  }
  bool deallocate(void* p, cudapool::stream_ref) noexcept override {
    return ok(cub_.DeviceFree(p), "cub::CachingDeviceAllocator::DeviceFree", 0, p);
  }
  bool deallocate(void* p, cudapool::stream_ref alloc_stream, cudapool::stream_ref free_stream) noexcept override {
    if (free_stream != alloc_stream) {
      if (t_cross_event == nullptr &&
          !ok(cudaEventCreateWithFlags(&t_cross_event, cudaEventDisableTiming), "cudaEventCreateWithFlags")) {
        return false;
      }
      if (!ok(cudaEventRecord(t_cross_event, to_cuda(free_stream)), "cudaEventRecord") ||
          !ok(cudaStreamWaitEvent(to_cuda(alloc_stream), t_cross_event, 0), "cudaStreamWaitEvent")) {
        return false;
      }
    }
    return ok(cub_.DeviceFree(p), "cub::CachingDeviceAllocator::DeviceFree", 0, p);
  }
  void track_reserved(bool on) noexcept override { track_ = on; }
  std::optional<std::size_t> peak_reserved_bytes() noexcept override {
    if (!track_) return std::nullopt;
    sample_reserved();
    return peak_;
  }

 private:
  // Bytes CUB holds from cudaMalloc: its cached (free) plus live blocks, read under its own lock.
  void sample_reserved() noexcept {
    std::lock_guard lock(cub_.mutex);
    const auto it = cub_.cached_bytes.find(device_);
    if (it == cub_.cached_bytes.end()) return;
    const std::size_t held = it->second.free + it->second.live;
    if (held > peak_) peak_ = held;
  }

  cub::CachingDeviceAllocator cub_;
  bool track_ = false;
  std::size_t peak_ = 0;  // written under cub_.mutex
};

}  // namespace

std::vector<std::string> peer_names() { return {"cudaMalloc", "cudaMallocAsync", "cub"}; }

std::unique_ptr<peer> make_peer(std::string_view name, int device) {
  if (name == "cudaMalloc") return std::make_unique<cuda_malloc_peer>(device);
  if (name == "cudaMallocAsync") return std::make_unique<cuda_malloc_async_peer>(device);
  if (name == "cub") return std::make_unique<cub_peer>(device);
  throw std::invalid_argument("no peer named '" + std::string(name) + "'");
}

#else  // !CUDAPOOL_HAS_CUDA

std::vector<std::string> peer_names() { return {}; }

std::unique_ptr<peer> make_peer(std::string_view name, int) {
  throw std::invalid_argument("peer '" + std::string(name) + "' needs the CUDA toolkit at build time");
}

#endif

}  // namespace cudapool::peers
