// cudapool/backend.hpp - layer 1: where device memory and stream order come from.
//
// A backend hands out chunks of device memory, records and queries events, and runs the few
// stream-ordered device operations that stress and the debug features need. The pools call it
// only on their slow paths (growth, epoch close/reclaim, trim), so the interface is virtual.
//
// Thread-safety: every member function is thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include <cudapool/types.hpp>

namespace cudapool {

// An event from the backend's event pool. Opaque; valid from acquire_event() to release_event().
using event_handle = void*;

// One mismatch seen by a verify() operation on the device.
struct verify_mismatch {
  std::uintptr_t block = 0;     // the pointer given to verify()
  std::size_t bytes = 0;        // the size given to verify()
  std::size_t word_offset = 0;  // a 32-bit word that differed (the first one on sim; some one on cuda)
  std::uint32_t expected = 0;
  std::uint32_t found = 0;
};

struct verify_report {
  std::uint64_t mismatched_ranges = 0;   // verify() calls that saw at least one wrong word
  std::vector<verify_mismatch> first;    // the first few of them, in the order the device saw them
};

// One damaged guard seen by a check_guard() operation on the device.
struct guard_failure {
  std::uint64_t tag = 0;          // the tag given to check_guard()
  std::size_t byte_offset = 0;    // the first byte that differed, from the checked pointer
  std::uint8_t found = 0;         // its value
};

class backend {
 public:
  virtual ~backend() = default;

  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  [[nodiscard]] virtual int device() const noexcept = 0;

  // Device memory. allocate_chunk returns nullptr when the device (or an injected limit) is out
  // of memory and throws backend_error for any other failure. Chunks are at least 256 B aligned.
  [[nodiscard]] virtual void* allocate_chunk(std::size_t bytes) = 0;
  virtual void free_chunk(void* chunk, std::size_t bytes) noexcept = 0;
  // Bytes of device memory currently held: in chunks (allocate_chunk minus free_chunk) plus mapped
  // pages (map minus unmap).
  [[nodiscard]] virtual std::size_t chunk_bytes() const noexcept = 0;
  // The device's memory in bytes (what a pool sizes its address reservation by).
  [[nodiscard]] virtual std::size_t memory_bytes() const noexcept = 0;

  // Virtual memory: address ranges reserved once, physical pages mapped and unmapped inside them
  // (the CUDA driver's cuMemAddressReserve / cuMemCreate / cuMemMap / cuMemSetAccess). page_bytes()
  // is the mapping granularity, 0 when the backend or device has no virtual memory support: then
  // the pool takes its segments from allocate_chunk and never calls the functions below.
  [[nodiscard]] virtual std::size_t page_bytes() const noexcept = 0;
  // Reserves `bytes` (a multiple of page_bytes()) of address space, aligned to `alignment` (a
  // power of two, at least page_bytes()), with no memory behind it. Throws backend_error when the
  // address space cannot be had.
  [[nodiscard]] virtual void* reserve_address(std::size_t bytes, std::size_t alignment) = 0;
  // Gives a reservation back. Every page of it must be unmapped.
  virtual void release_address(void* base, std::size_t bytes) noexcept = 0;
  // Backs [p, p + bytes) (page aligned, inside one reservation, not mapped) with device memory
  // that the device reads and writes, one physical allocation per page (so that any page can be
  // unmapped alone). false when the device (or an injected limit) is out of memory, with nothing
  // mapped; throws backend_error for any other failure, with nothing mapped.
  [[nodiscard]] virtual bool map(void* p, std::size_t bytes) = 0;
  // Unmaps [p, p + bytes) (whole mapped pages) and frees their memory. No device work may use them.
  virtual void unmap(void* p, std::size_t bytes) noexcept = 0;

  // Streams. stream_id is unique for the life of the process (cudaStreamGetId): a destroyed
  // stream's handle value may be reused, its id is not.
  [[nodiscard]] virtual stream_ref create_stream() = 0;
  virtual void destroy_stream(stream_ref s) = 0;
  [[nodiscard]] virtual std::uint64_t stream_id(stream_ref s) = 0;
  // The device s belongs to (the default stream: device()). cuda: cudaStreamGetDevice (CUDA 12.8
  // and later; before it, device() unchecked); sim: the device of the sim backend that made s. A
  // pool asks once per stream it is given (stream_admission), not per call. Throws backend_error
  // when the driver cannot say.
  [[nodiscard]] virtual int stream_device(stream_ref s) = 0;
  virtual void synchronize(stream_ref s) = 0;
  virtual void synchronize_device() = 0;
  // True once all work enqueued on s so far has completed (no wait; cudaStreamQuery). The host is
  // then ordered after that work, as after synchronize(s).
  [[nodiscard]] virtual bool query_stream(stream_ref s) = 0;

  // Events come from a pool: acquire/release never create or destroy a native event per use.
  [[nodiscard]] virtual event_handle acquire_event() = 0;
  virtual void release_event(event_handle e) noexcept = 0;
  virtual void record(event_handle e, stream_ref s) = 0;
  [[nodiscard]] virtual bool query(event_handle e) = 0;  // true once the recorded work is done
  virtual void wait(event_handle e) = 0;                 // host blocks until query() is true
  virtual void stream_wait(stream_ref waiter, event_handle e) = 0;  // device-side dependency

  // Stream-ordered device operations on [p, p + bytes); bytes is a multiple of 4.
  virtual void fill(stream_ref s, void* p, std::size_t bytes, std::uint32_t pattern) = 0;
  // Counts the range as mismatched if any 32-bit word differs from pattern.
  virtual void verify(stream_ref s, const void* p, std::size_t bytes, std::uint32_t pattern) = 0;
  virtual void spin(stream_ref s, std::chrono::nanoseconds duration) = 0;
  // Synchronizes the device, then returns every mismatch recorded so far.
  [[nodiscard]] virtual verify_report verification_report() = 0;

  // Debug: guard bytes. fill_guard writes `pattern` to every byte of [p, p + bytes) in stream
  // order; check_guard checks them in stream order and records a failure carrying `tag` when any
  // byte differs (one failure per check). Any alignment and any size (0 .. a few KiB).
  // take_guard_failures() returns the failures recorded since its last call, without
  // synchronizing: failures of checks still queued appear in a later call. The cuda backend keeps
  // a bounded ring of failures and reports how many it dropped on stderr.
  virtual void fill_guard(stream_ref s, void* p, std::size_t bytes, std::uint8_t pattern) = 0;
  virtual void check_guard(stream_ref s, const void* p, std::size_t bytes, std::uint8_t pattern,
                           std::uint64_t tag) = 0;
  [[nodiscard]] virtual std::vector<guard_failure> take_guard_failures() = 0;

  // Debug: make pool memory visible to compute-sanitizer (NVTX memory heaps). register_heap
  // returns a handle (nullptr when the backend has no such tool support, or on cuda when no NVTX
  // tool is attached, so that a pool can skip the region calls); regions are the live blocks
  // inside a heap. Unregistering a heap unregisters the regions still in it.
  virtual void* register_heap(void* base, std::size_t bytes) = 0;
  virtual void unregister_heap(void* heap) noexcept = 0;
  virtual void register_region(void* heap, const void* p, std::size_t bytes) = 0;
  virtual void unregister_region(void* heap, const void* p) noexcept = 0;
};

// ---- the simulated device --------------------------------------------------------------------

struct sim_options {
  std::uint64_t seed = 1;
  // What device() and stream_device() report: simulated devices of one program are sim backends
  // with different ids (sim_devices() in per_device.hpp). The backend refuses stream operations
  // (fill, verify, spin, guards, record) on a stream of another device, as CUDA refuses to launch
  // or record on another device's stream: std::invalid_argument.
  int device = 0;
  // Each stream operation first sleeps a random time in [0, max_latency]; 0 disables.
  std::chrono::nanoseconds max_latency{0};
  // Chunk allocation fails with this probability (0..1), or when chunk_bytes() would exceed
  // chunk_byte_limit (0 = unlimited).
  // Both apply to map() too: a failed map maps nothing.
  double chunk_failure_probability = 0.0;
  std::size_t chunk_byte_limit = 0;
  // Virtual memory: the page size of map() (a multiple of 64 KiB; tests set it small), or 0 for a
  // device without virtual memory support (pools then use chunks). Address reservations are host
  // address space (PROT_NONE until mapped), so touching an unmapped page faults, as on a GPU.
  std::size_t page_bytes = std::size_t{2} << 20;
  // What memory_bytes() reports.
  std::size_t memory_bytes = std::size_t{16} << 30;
};

// Device memory is host memory that only stream workers touch; each stream is a worker thread
// that runs its queue in order; an event completes when its stream reaches it. Stream workers
// share no lock, so ThreadSanitizer reports two streams' operations on one block that are not
// ordered by an event: a pool that reuses a block too early shows up as a data race.
class sim_backend : public backend {
 public:
  // Test hooks: a paused stream finishes the operation it is running and then runs nothing more
  // (its events stay incomplete) until resumed.
  virtual void pause(stream_ref s) = 0;
  virtual void resume(stream_ref s) = 0;
  virtual void set_chunk_failure_probability(double p) = 0;
  virtual void set_chunk_byte_limit(std::size_t bytes) = 0;
  // Bytes currently mapped (a part of chunk_bytes()) and reserved as address space.
  [[nodiscard]] virtual std::size_t mapped_bytes() const = 0;
  [[nodiscard]] virtual std::size_t reserved_address_bytes() const = 0;

  // Test accessors for the NVTX-heap calls, which the sim backend checks: a region outside its
  // heap, a region registered twice or in an unknown heap throws std::logic_error; unregistering
  // an unknown heap or region (noexcept) is counted in registration_errors() and reported on
  // stderr.
  [[nodiscard]] virtual std::size_t registered_heaps() const = 0;
  [[nodiscard]] virtual std::size_t registered_regions() const = 0;
  [[nodiscard]] virtual std::size_t registration_errors() const = 0;
};

[[nodiscard]] std::unique_ptr<sim_backend> make_sim_backend(const sim_options& options = {});

// ---- CUDA ------------------------------------------------------------------------------------

// True when the library was built with the CUDA backend.
[[nodiscard]] bool cuda_backend_built() noexcept;
// Number of usable GPUs (0 when not built, no driver or no device).
[[nodiscard]] int cuda_device_count() noexcept;
// A cudart backend bound to `device`; throws backend_error when not built or no such device.
[[nodiscard]] std::unique_ptr<backend> make_cuda_backend(int device = 0);
// As make_cuda_backend(device), and the devices in `peers` may read and write its memory: each
// peer's cudaDeviceEnablePeerAccess for cudaMalloc'd chunks, and every page the backend maps made
// accessible to them too (cuMemSetAccess: the virtual memory API ignores peer enablement). Throws
// backend_error when a peer cannot access the device (cudaDeviceCanAccessPeer).
[[nodiscard]] std::unique_ptr<backend> make_cuda_backend(int device, std::vector<int> peers);

}  // namespace cudapool
