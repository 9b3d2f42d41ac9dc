// cudapool/pool_ref.hpp - a non-owning, type-erased reference to a pool of any variant.
//
// The adapters that hold "some pool" without being templates on its type (buffer, the unique_ptr
// deleter, thrust_allocator) hold a pool_ref: the pool's address and a table of three functions.
// A pool_ref never owns its pool: the pool must outlive every pool_ref to it, and every block a
// pool_ref handed out must be freed before the pool is destroyed (the pool reports it as a leak).
//
// Thread-safety: a pool_ref is a value; calling through it is as thread-safe as the pool (every
// variant is thread-safe).
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <type_traits>

#include <cudapool/types.hpp>

namespace cudapool {

// What the adapters need from a pool: every variant (basic_pool<...>) and any_pool model it.
template <class P>
concept device_pool = requires(P& pool, void* p, std::size_t bytes, stream_ref s) {
  { pool.allocate(bytes, s) } -> std::same_as<void*>;
  { pool.deallocate(p) } noexcept;
  { pool.deallocate(p, s) } noexcept;
};

class pool_ref {
 public:
  // An empty reference: only for default-constructed holders (an empty buffer or deleter).
  constexpr pool_ref() noexcept = default;
  template <device_pool Pool>
    requires(!std::same_as<std::remove_cv_t<Pool>, pool_ref>)
  pool_ref(Pool& pool) noexcept  // NOLINT(google-explicit-constructor): a reference converts freely
      : pool_(std::addressof(pool)), ops_(&ops_for<Pool>) {}

  // Precondition for the three calls: the reference is not empty.
  // Throws what the pool throws (out_of_memory, backend_error). allocate(0, s) returns nullptr.
  [[nodiscard]] void* allocate(std::size_t bytes, stream_ref s) const { return ops_->allocate(pool_, bytes, s); }
  // Immediate free: no device work on p may be pending.
  void deallocate(void* p) const noexcept { ops_->deallocate(pool_, p); }
  // Stream-ordered free: reusable once the work enqueued on s so far has completed.
  void deallocate(void* p, stream_ref s) const noexcept { ops_->deallocate_on(pool_, p, s); }

  [[nodiscard]] explicit operator bool() const noexcept { return pool_ != nullptr; }
  // The address of the pool referred to (nullptr when empty).
  [[nodiscard]] void* address() const noexcept { return pool_; }
  // Two references are equal when they name the same pool: either can free the other's blocks.
  friend bool operator==(const pool_ref& a, const pool_ref& b) noexcept { return a.pool_ == b.pool_; }

 private:
  struct operations {
    void* (*allocate)(void* pool, std::size_t bytes, stream_ref s);
    void (*deallocate)(void* pool, void* p) noexcept;
    void (*deallocate_on)(void* pool, void* p, stream_ref s) noexcept;
  };
  template <class Pool>
  static constexpr operations ops_for{
      [](void* pool, std::size_t bytes, stream_ref s) -> void* { return static_cast<Pool*>(pool)->allocate(bytes, s); },
      [](void* pool, void* p) noexcept { static_cast<Pool*>(pool)->deallocate(p); },
      [](void* pool, void* p, stream_ref s) noexcept { static_cast<Pool*>(pool)->deallocate(p, s); },
  };

  void* pool_ = nullptr;
  const operations* ops_ = nullptr;
};

}  // namespace cudapool
