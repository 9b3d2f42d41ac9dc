// peers.hpp - the allocators a user would otherwise use, behind one small interface, so that bench
// and stress run them exactly as they run the pools (bench's bench_allocator.hpp and stress's
// allocator_under_test put both behind one handle). Target cudapool_peers (a static library for the
// tools, not installed). With the CUDA toolkit at build time only; without it there are no peers.
//
//   cudaMalloc       cudaMalloc / cudaFree.
//   cudaMallocAsync  the default memory pool of the device, with cudaMemPoolAttrReleaseThreshold
//                    raised to UINT64_MAX so that it keeps what it has (as RMM does);
//                    cudaMallocAsync(p, n, s) / cudaFreeAsync(p, s).
//   cub              cub::CachingDeviceAllocator with the default bins (bin_growth 8, bins 8^3 =
//                    512 B .. 8^7 = 2 MiB; larger requests are cudaMalloc'd exactly and never
//                    cached), and its cache limit lifted (max_cached_bytes unlimited instead of the
//                    default 6 MiB) so that it, too, keeps what it has. DeviceAllocate(&p, n, s) /
//                    DeviceFree(p).
//
// Every CUDA status is checked. A failing call makes allocate() return nullptr (deallocate()
// false) and leaves a message naming the call, the CUDA error and the size in last_error() of the
// calling thread; bench's workloads turn that into state.SkipWithError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <cudapool/types.hpp>

namespace cudapool::peers {

// The message of the last failed peer (or pool) call on this thread.
[[nodiscard]] const std::string& last_error() noexcept;
void set_last_error(std::string message) noexcept;

class peer {
 public:
  virtual ~peer() = default;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;

  // Every thread calls attach_thread() before its first call and detach_thread() after its last
  // (the device is made current; per-thread CUDA objects are released).
  [[nodiscard]] virtual bool attach_thread() noexcept = 0;
  virtual void detach_thread() noexcept {}

  // nullptr on failure (see last_error()). `s` is the stream the block will be used on.
  [[nodiscard]] virtual void* allocate(std::size_t bytes, cudapool::stream_ref s) noexcept = 0;
  // Immediate free: no device work on p is pending. `alloc_stream`: the stream p was allocated on.
  [[nodiscard]] virtual bool deallocate(void* p, cudapool::stream_ref alloc_stream) noexcept = 0;
  // Stream-ordered free: p may be reused once the work enqueued on `free_stream` so far is done.
  [[nodiscard]] virtual bool deallocate(void* p, cudapool::stream_ref alloc_stream,
                                        cudapool::stream_ref free_stream) noexcept = 0;

  // Peak bytes reserved from the driver since construction, where the peer can tell. Tracking may
  // cost time on the hot path (cub): it is done only after track_reserved(true).
  virtual void track_reserved(bool on) noexcept { (void)on; }
  [[nodiscard]] virtual std::optional<std::size_t> peak_reserved_bytes() noexcept { return std::nullopt; }
};

// The peers built into this binary ({} without CUDA), in the order they are reported.
[[nodiscard]] std::vector<std::string> peer_names();

// Throws std::runtime_error (with the failing CUDA call) when the peer cannot be set up.
[[nodiscard]] std::unique_ptr<peer> make_peer(std::string_view name, int device);

}  // namespace cudapool::peers
