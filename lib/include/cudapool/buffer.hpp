// cudapool/buffer.hpp - RAII ownership of pool blocks: an untyped buffer and a typed unique_ptr.
//
// A host container cannot hold device elements: std::vector<T> value-initialises, copies and
// destroys its elements on the host, so with device memory behind it the host would write device
// memory (a crash, or silent corruption with unified addressing). Use thrust::device_vector<T,
// cudapool::thrust_allocator<T>> (cudapool/thrust_allocator.hpp) for a device container, or the
// types here for raw storage that only device code and cudaMemcpy* touch.
//
// Both hold a pool_ref (cudapool/pool_ref.hpp): the pool must outlive them.
//
// Release rule. An owner made with a stream frees its block stream-ordered on that stream
// (deallocate(p, s): reusable once the work enqueued on s so far has completed); one made without
// a stream frees it immediately (deallocate(p): the caller guarantees no device work on the block
// is pending when the owner lets go).
//
// Thread-safety: as for std::unique_ptr: one owner object is not thread-safe; distinct owners are.
#pragma once

#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <cudapool/pool_ref.hpp>
#include <cudapool/types.hpp>

namespace cudapool {

// Owns one block of a pool. Move-only.
class buffer {
 public:
  // Owns nothing.
  buffer() noexcept = default;
  // A block of at least `bytes` bytes (256 B aligned), freed immediately when released. Throws
  // what the pool throws (out_of_memory, ...). bytes = 0: owns nothing (data() is nullptr).
  buffer(pool_ref pool, std::size_t bytes) : pool_(pool), data_(pool.allocate(bytes, stream_ref{})), size_(bytes) {}
  // A block allocated on s and freed stream-ordered on s.
  buffer(pool_ref pool, std::size_t bytes, stream_ref s)
      : pool_(pool), data_(pool.allocate(bytes, s)), size_(bytes), stream_(s) {}

  buffer(buffer&& other) noexcept
      : pool_(other.pool_),
        data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        stream_(other.stream_) {}
  buffer& operator=(buffer&& other) noexcept {
    if (this != &other) {
      reset();
      pool_ = other.pool_;
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      stream_ = other.stream_;
    }
    return *this;
  }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  ~buffer() { reset(); }

  // Device pointer: for kernels and cudaMemcpy*, never for host dereference.
  [[nodiscard]] void* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return data_ == nullptr; }
  [[nodiscard]] pool_ref pool() const noexcept { return pool_; }

  // The stream the block will be freed on; nullopt: freed immediately.
  [[nodiscard]] std::optional<stream_ref> stream() const noexcept { return stream_; }
  // From now on the block is freed stream-ordered on s. The caller orders every earlier use of the
  // block on other streams before the work enqueued on s (e.g. with an event s waits on).
  void set_stream(stream_ref s) noexcept { stream_ = s; }

  // Frees the block now (by the release rule) and owns nothing.
  void reset() noexcept {
    if (data_ == nullptr) return;
    void* p = std::exchange(data_, nullptr);
    size_ = 0;
    if (stream_) {
      pool_.deallocate(p, *stream_);
    } else {
      pool_.deallocate(p);
    }
  }
  // Gives up ownership without freeing: the caller frees the returned pointer through pool().
  [[nodiscard]] void* release() noexcept {
    size_ = 0;
    return std::exchange(data_, nullptr);
  }

 private:
  pool_ref pool_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
  std::optional<stream_ref> stream_;
};

// The deleter of cudapool::unique_ptr: frees through a pool_ref by the release rule.
class device_deleter {
 public:
  device_deleter() noexcept = default;
  explicit device_deleter(pool_ref pool, std::optional<stream_ref> s = std::nullopt) noexcept
      : pool_(pool), stream_(s) {}

  template <class T>
  void operator()(T* p) const noexcept {
    if (p == nullptr) return;
    void* block = const_cast<void*>(static_cast<const void*>(p));
    if (stream_) {
      pool_.deallocate(block, *stream_);
    } else {
      pool_.deallocate(block);
    }
  }

  [[nodiscard]] pool_ref pool() const noexcept { return pool_; }
  [[nodiscard]] std::optional<stream_ref> stream() const noexcept { return stream_; }
  // As buffer::set_stream.
  void set_stream(stream_ref s) noexcept { stream_ = s; }

 private:
  pool_ref pool_;
  std::optional<stream_ref> stream_;
};

// A typed owner of device elements, e.g. cudapool::unique_ptr<float[]>. get() is a device
// pointer: operator[] and operator* must not be used on the host.
template <class T>
using unique_ptr = std::unique_ptr<T, device_deleter>;

namespace detail {
template <class T>
std::size_t array_bytes(std::size_t n) {
  if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) {
    throw std::length_error("cudapool::make_unique_device: " + std::to_string(n) + " elements of " +
                            std::to_string(sizeof(T)) + " bytes overflow size_t");
  }
  return n * sizeof(T);
}
}  // namespace detail

// Storage for n elements of type U = remove_extent_t<T> on the device, uninitialised (no
// constructor runs: the host never touches device memory, hence U must be trivially copyable).
// Without s the block is freed immediately when released; with s, stream-ordered on s. Throws
// std::length_error when n * sizeof(U) overflows, and what the pool throws. n = 0: an empty pointer.
template <class T>
  requires std::is_unbounded_array_v<T> && std::is_trivially_copyable_v<std::remove_extent_t<T>>
[[nodiscard]] unique_ptr<T> make_unique_device(pool_ref pool, std::size_t n) {
  using U = std::remove_extent_t<T>;
  static_assert(alignof(U) <= min_alignment, "cudapool blocks are 256 B aligned");
  return unique_ptr<T>(static_cast<U*>(pool.allocate(detail::array_bytes<U>(n), stream_ref{})),
                       device_deleter(pool));
}
template <class T>
  requires std::is_unbounded_array_v<T> && std::is_trivially_copyable_v<std::remove_extent_t<T>>
[[nodiscard]] unique_ptr<T> make_unique_device(pool_ref pool, std::size_t n, stream_ref s) {
  using U = std::remove_extent_t<T>;
  static_assert(alignof(U) <= min_alignment, "cudapool blocks are 256 B aligned");
  return unique_ptr<T>(static_cast<U*>(pool.allocate(detail::array_bytes<U>(n), s)), device_deleter(pool, s));
}

}  // namespace cudapool
