// cudapool/thrust_allocator.hpp - a Thrust allocator over a cudapool pool.
//
//   cudapool::tls_pool pool(cudapool::make_cuda_backend(0));
//   cudapool::thrust_allocator<float> alloc(pool);
//   thrust::device_vector<float, cudapool::thrust_allocator<float>> v(n, 1.0f, alloc);
//
// Decisions:
//   - It holds a pool_ref (non-owning, any variant or any_pool): the pool must outlive every
//     container that uses the allocator. There is no default constructor (there is no global
//     pool): pass the allocator to the container's constructor.
//   - Blocks are freed stream-ordered on the allocator's stream (deallocate(p, s)), default
//     stream_ref{}: the legacy default stream, which is ordered with thrust's default execution
//     policy (legacy or per-thread default stream) and with every blocking stream. Give another
//     stream only when every operation on the container runs on it (thrust::cuda::par.on(s)):
//     device_vector's constructors, resize and copies run on thrust's default stream.
//   - Two allocators are equal when they share pool and stream; the propagate_on_container_*
//     traits are true, so a container's storage never moves to a container that would free it
//     on another stream.
//   - Elements live on the device: the host never reads or writes them; thrust copies them with
//     cudaMemcpy and constructs them with kernels.
// Include it from CUDA sources (nvcc): Thrust's device system is CUDA.
#pragma once

#include <cstddef>
#include <limits>
#include <new>
#include <type_traits>

#include <thrust/device_ptr.h>
#include <thrust/device_reference.h>

#include <cudapool/pool_ref.hpp>
#include <cudapool/types.hpp>

namespace cudapool {

template <class T>
class thrust_allocator {
 public:
  using value_type = T;
  using pointer = thrust::device_ptr<T>;
  using const_pointer = thrust::device_ptr<const T>;
  using reference = thrust::device_reference<T>;
  using const_reference = thrust::device_reference<const T>;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  template <class U>
  struct rebind {
    using other = thrust_allocator<U>;
  };

  explicit thrust_allocator(pool_ref pool, stream_ref s = {}) noexcept : pool_(pool), stream_(s) {}
  template <class U>
  thrust_allocator(const thrust_allocator<U>& other) noexcept  // NOLINT(google-explicit-constructor): rebind
      : pool_(other.pool()), stream_(other.stream()) {}

  // Storage for n elements (uninitialised). Throws std::bad_array_new_length when n * sizeof(T)
  // overflows, and what the pool throws (out_of_memory, a std::bad_alloc). n = 0: a null pointer.
  [[nodiscard]] pointer allocate(size_type n) {
    if (n > std::numeric_limits<size_type>::max() / sizeof(T)) throw std::bad_array_new_length();
    return pointer(static_cast<T*>(pool_.allocate(n * sizeof(T), stream_)));
  }
  void deallocate(pointer p, size_type /*n*/) noexcept { pool_.deallocate(thrust::raw_pointer_cast(p), stream_); }

  [[nodiscard]] pool_ref pool() const noexcept { return pool_; }
  [[nodiscard]] stream_ref stream() const noexcept { return stream_; }

  template <class U>
  friend bool operator==(const thrust_allocator& a, const thrust_allocator<U>& b) noexcept {
    return a.pool() == b.pool() && a.stream() == b.stream();
  }

 private:
  pool_ref pool_;
  stream_ref stream_;
};

}  // namespace cudapool
