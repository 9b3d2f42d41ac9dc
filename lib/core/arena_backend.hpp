// arena_backend.hpp - the device behind one arena of a stream_arenas pool (stream_arenas.hpp):
// which arena owns an address, the arenas' shared byte limit, and the fence that keeps an arena
// from unmapping pages its stream may still use.
//
// Glossary
//   arena      one pool of a stream_arenas front. Arena 0 is shared (the default stream, streams
//              beyond the arenas, every stream-ordered free as in any pool); arenas 1..n each
//              belong to at most one stream at a time, its owner, and only it allocates there.
//   owner      the stream an arena belongs to. Its frees of its own arena's memory are handed to
//              the arena's pool as immediate frees: only the owner allocates there, so stream order
//              makes the reuse safe without an epoch or an event.
//   fence      the catch: such memory may still be in use by the device when the pool believes it
//              free. Before the arena's heap unmaps a page or frees a chunk (trim, remap, release
//              threshold, destruction) its owner stream is synchronized, or, once the owner has
//              let the arena go (release), the event recorded on it then is waited for.
//
// arena_directory maps every mapped page (64 KiB granularity, core::page_map) to the arena that
// mapped it, so that a free finds its arena in two loads. Entries are written by map() and never
// cleared: a page stays in its arena's reservation until the pools are destroyed, and a page that
// is mapped again (another reservation at the same address) is written again before any
// allocation can lie in it.
//
// Thread-safety: every member function is thread-safe. find() is lock-free.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include <cudapool/detail/core/page_map.hpp>
#include <cudapool/backend.hpp>

namespace cudapool::core {

class arena_directory {
 public:
  // byte_limit: the bound on the bytes all arenas map together (0: none).
  explicit arena_directory(std::size_t byte_limit) noexcept : limit_(byte_limit) {}

  // The arena (1-based id as given to the backend) whose pages hold p, or 0: none.
  [[nodiscard]] std::uint32_t find(const void* p) const noexcept { return static_cast<std::uint32_t>(pages_.find(p)); }

  // Counts `bytes` against the limit; false (nothing counted) when they do not fit.
  [[nodiscard]] bool charge(std::size_t bytes) noexcept;
  void refund(std::size_t bytes) noexcept { mapped_.fetch_sub(bytes, std::memory_order_relaxed); }
  // Writes [p, p + bytes), just mapped (and charged), as arena id's (rounded out to 64 KiB), and
  // raises the peak to the mapped bytes now.
  void claim(const void* p, std::size_t bytes, std::uint32_t id);

  [[nodiscard]] std::size_t mapped_bytes() const noexcept { return mapped_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::size_t peak_mapped_bytes() const noexcept { return peak_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::size_t byte_limit() const noexcept { return limit_; }

 private:
  const std::size_t limit_;
  std::atomic<std::size_t> mapped_{0};
  std::atomic<std::size_t> peak_{0};
  std::mutex writer_;  // page_map::set's writers are serialised
  page_map pages_;
};

// Forwards everything to the device; map() charges the directory and claims the pages for the
// arena; unmap() and free_chunk() first fence (above).
class arena_backend final : public backend {
 public:
  arena_backend(std::shared_ptr<backend> device, std::shared_ptr<arena_directory> directory, std::uint32_t id)
      : device_(std::move(device)), directory_(std::move(directory)), id_(id) {}
  ~arena_backend() override;

  // The stream whose frees the arena takes as immediate. Only on an arena with no owner whose
  // release has completed (reusable()).
  void set_owner(void* stream) noexcept { owner_.store(stream, std::memory_order_release); }
  [[nodiscard]] void* owner() const noexcept { return owner_.load(std::memory_order_acquire); }
  // The owner lets the arena go: one event recorded on it now covers the work that may still use
  // what the arena holds free (no wait). When the event cannot be recorded, synchronizes the owner.
  void release_owner();
  // No owner, and the last owner's work has completed (queries its event; no wait): a new stream
  // may own the arena.
  [[nodiscard]] bool reusable();
  [[nodiscard]] std::uint64_t fences() const noexcept { return fences_.load(std::memory_order_relaxed); }

  [[nodiscard]] std::string_view name() const noexcept override { return device_->name(); }
  [[nodiscard]] int device() const noexcept override { return device_->device(); }
  [[nodiscard]] void* allocate_chunk(std::size_t bytes) override;
  void free_chunk(void* chunk, std::size_t bytes) noexcept override;
  [[nodiscard]] std::size_t chunk_bytes() const noexcept override { return device_->chunk_bytes(); }
  [[nodiscard]] std::size_t memory_bytes() const noexcept override { return device_->memory_bytes(); }
  [[nodiscard]] std::size_t page_bytes() const noexcept override { return device_->page_bytes(); }
  [[nodiscard]] void* reserve_address(std::size_t bytes, std::size_t alignment) override;
  void release_address(void* base, std::size_t bytes) noexcept override { device_->release_address(base, bytes); }
  [[nodiscard]] bool map(void* p, std::size_t bytes) override;
  void unmap(void* p, std::size_t bytes) noexcept override;

  [[nodiscard]] stream_ref create_stream() override { return device_->create_stream(); }
  void destroy_stream(stream_ref s) override { device_->destroy_stream(s); }
  [[nodiscard]] std::uint64_t stream_id(stream_ref s) override { return device_->stream_id(s); }
  [[nodiscard]] int stream_device(stream_ref s) override { return device_->stream_device(s); }
  void synchronize(stream_ref s) override { device_->synchronize(s); }
  void synchronize_device() override { device_->synchronize_device(); }
  [[nodiscard]] bool query_stream(stream_ref s) override { return device_->query_stream(s); }
  [[nodiscard]] event_handle acquire_event() override { return device_->acquire_event(); }
  void release_event(event_handle e) noexcept override { device_->release_event(e); }
  void record(event_handle e, stream_ref s) override { device_->record(e, s); }
  [[nodiscard]] bool query(event_handle e) override { return device_->query(e); }
  void wait(event_handle e) override { device_->wait(e); }
  void stream_wait(stream_ref waiter, event_handle e) override { device_->stream_wait(waiter, e); }
  void fill(stream_ref s, void* p, std::size_t bytes, std::uint32_t pattern) override { device_->fill(s, p, bytes, pattern); }
  void verify(stream_ref s, const void* p, std::size_t bytes, std::uint32_t pattern) override {
    device_->verify(s, p, bytes, pattern);
  }
  void spin(stream_ref s, std::chrono::nanoseconds duration) override { device_->spin(s, duration); }
  [[nodiscard]] verify_report verification_report() override { return device_->verification_report(); }
  void fill_guard(stream_ref s, void* p, std::size_t bytes, std::uint8_t pattern) override {
    device_->fill_guard(s, p, bytes, pattern);
  }
  void check_guard(stream_ref s, const void* p, std::size_t bytes, std::uint8_t pattern, std::uint64_t tag) override {
    device_->check_guard(s, p, bytes, pattern, tag);
  }
  [[nodiscard]] std::vector<guard_failure> take_guard_failures() override { return device_->take_guard_failures(); }
  void* register_heap(void* base, std::size_t bytes) override { return device_->register_heap(base, bytes); }
  void unregister_heap(void* heap) noexcept override { device_->unregister_heap(heap); }
  void register_region(void* heap, const void* p, std::size_t bytes) override {
    device_->register_region(heap, p, bytes);
  }
  void unregister_region(void* heap, const void* p) noexcept override { device_->unregister_region(heap, p); }

 private:
  // Before memory leaves the arena: its owner's work (which may use memory the pool holds free)
  // completes first. When the stream cannot be synchronized (destroyed against the contract), the
  // whole device is.
  void fence() noexcept;

  const std::shared_ptr<backend> device_;
  const std::shared_ptr<arena_directory> directory_;
  const std::uint32_t id_;
  std::atomic<void*> owner_{nullptr};
  std::atomic<std::uint64_t> fences_{0};
  std::mutex fence_mutex_;        // released_ and its use
  event_handle released_ = nullptr;  // GUARDED_BY(fence_mutex_); the last owner's release, pending
};

}  // namespace cudapool::core
