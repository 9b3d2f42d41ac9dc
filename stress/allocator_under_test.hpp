// allocator_under_test.hpp - what a stress run allocates from, behind the calls the host threads
// make: a cudapool pool of any variant (possibly wrapped by a fault decorator), or a peer
// (--allocator: cudaMallocAsync, CUB's CachingDeviceAllocator, cudaMalloc; lib/peers). The
// workers and the device verification are the same for both; the pool-only checks (stats
// accounting, invalid-free reports, device memory left after the pool) stay in the run, which
// knows the pool. Internal to the harness.
//
// Thread-safety: every member function is thread-safe, as the pools and peers are.
#pragma once

#include <cstddef>

#include <cudapool/any_pool.hpp>
#include <cudapool/types.hpp>
#include <cudapool/detail/peers/peers.hpp>

namespace cudapool::stress {

class allocator_under_test {
 public:
  virtual ~allocator_under_test() = default;

  // Every host thread that calls the allocator (the main thread too) attaches first and detaches
  // after its last call. Throws std::runtime_error when the thread cannot be set up.
  virtual void attach_thread() = 0;
  virtual void detach_thread() noexcept = 0;

  // A block of at least `bytes`, used on `s`. Throws (out_of_memory, or std::runtime_error naming
  // the failed call).
  [[nodiscard]] virtual void* allocate(std::size_t bytes, stream_ref s) = 0;
  // Stream-ordered free: p, allocated and used on alloc_stream, is reusable once the work enqueued
  // on free_stream so far is done (the caller made free_stream wait for alloc_stream's use).
  // Throws std::runtime_error when a peer's call fails.
  virtual void deallocate(void* p, stream_ref alloc_stream, stream_ref free_stream) = 0;
  // Immediate free: no device work on p is pending.
  virtual void deallocate_now(void* p, stream_ref alloc_stream) = 0;
  // Before s is destroyed (the pools' stream contract).
  virtual void retire_stream(stream_ref s) = 0;
};

class pool_under_test final : public allocator_under_test {
 public:
  explicit pool_under_test(any_pool& pool) noexcept : pool_(pool) {}
  void attach_thread() override {}
  void detach_thread() noexcept override {}
  [[nodiscard]] void* allocate(std::size_t bytes, stream_ref s) override { return pool_.allocate(bytes, s); }
  void deallocate(void* p, stream_ref, stream_ref free_stream) override { pool_.deallocate(p, free_stream); }
  void deallocate_now(void* p, stream_ref) override { pool_.deallocate(p); }
  void retire_stream(stream_ref s) override { pool_.retire_stream(s); }

 private:
  any_pool& pool_;
};

// A failed peer call becomes a std::runtime_error with the peer's message (peers::last_error()).
class peer_under_test final : public allocator_under_test {
 public:
  explicit peer_under_test(peers::peer& peer) noexcept : peer_(peer) {}
  void attach_thread() override;
  void detach_thread() noexcept override { peer_.detach_thread(); }
  [[nodiscard]] void* allocate(std::size_t bytes, stream_ref s) override;
  void deallocate(void* p, stream_ref alloc_stream, stream_ref free_stream) override;
  void deallocate_now(void* p, stream_ref alloc_stream) override;
  // Nothing to do: a peer's stream-ordered frees need no flush before the stream goes.
  void retire_stream(stream_ref) override {}

 private:
  peers::peer& peer_;
};

}  // namespace cudapool::stress
