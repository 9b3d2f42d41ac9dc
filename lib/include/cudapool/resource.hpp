// cudapool/resource.hpp - a pool as a cuda::mr memory resource (CCCL's <cuda/memory_resource>).
//
//   cudapool::tls_pool pool(cudapool::make_cuda_backend(0));
//   cudapool::resource res(pool);                        // non-owning: pool outlives res
//   cuda::mr::async_resource_ref<cuda::mr::device_accessible> ref(res);
//   void* p = ref.allocate_async(bytes, 256, stream);   // cuda::stream_ref
//   ref.deallocate_async(p, bytes, 256, stream);         // stream-ordered free
//
// resource<Pool> models cuda::mr::async_resource_with<resource<Pool>, cuda::mr::device_accessible>
// for every variant (each is checked by a static_assert in lib/adapters/resource_test.cpp).
// It is a thin adaptor, not a member of basic_pool, so that the core headers do not need the CUDA
// toolkit. Members, as CCCL 3.0 (CUDA 13.0) names them:
//   allocate(bytes, alignment)                  -> pool.allocate(bytes, alignment)
//   deallocate(p, bytes, alignment)             -> pool.deallocate(p): immediate, no device work on p
//                                                  may be pending
//   allocate_async(bytes, alignment, stream)    -> pool.allocate(bytes, alignment, stream)
//   deallocate_async(p, bytes, alignment, stream) -> pool.deallocate(p, stream): stream-ordered
// A cuda::stream_ref's cudaStream_t is passed to the pool as its native stream (stream_ref's
// native() for the cuda backend is a cudaStream_t; cuda::stream_ref{} is the legacy default
// stream, as cudapool::stream_ref{}). Two resources are equal when they adapt the same pool.
//
// CCCL hides the memory-resource API behind LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE; this
// header defines it (and so does the cudapool::adapters target) before including CCCL.
// Needs the CUDA toolkit's include directories (and include/cccl for a host compiler).
#pragma once

#if defined(_CUDA_MEMORY_RESOURCE) && !defined(LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE)
#error "cudapool/resource.hpp: <cuda/memory_resource> was included before without LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE; define it project-wide (link cudapool::adapters) or include cudapool/resource.hpp first"
#endif
#ifndef LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE
#define LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE
#endif

#include <cuda/memory_resource>
#include <cuda/stream_ref>
#include <cuda_runtime_api.h>

#include <concepts>
#include <cstddef>
#include <memory>

#include <cudapool/types.hpp>

namespace cudapool {

// A cudapool stream for a cuda::stream_ref, and back.
[[nodiscard]] inline stream_ref from_cuda_stream(::cuda::stream_ref s) noexcept {
  return stream_ref{static_cast<void*>(s.get())};
}
[[nodiscard]] inline ::cuda::stream_ref to_cuda_stream(stream_ref s) noexcept {
  return ::cuda::stream_ref{static_cast<cudaStream_t>(s.native())};
}

// What resource<Pool> needs: every basic_pool<FreeLists>.
template <class P>
concept aligned_device_pool = requires(P& pool, void* p, std::size_t n, stream_ref s) {
  { pool.allocate(n, n, s) } -> std::same_as<void*>;
  { pool.deallocate(p) } noexcept;
  { pool.deallocate(p, s) } noexcept;
};

// Thread-safe as the pool is. Copyable; refers to the pool, which must outlive it.
template <aligned_device_pool Pool>
class resource {
 public:
  explicit resource(Pool& pool) noexcept : pool_(std::addressof(pool)) {}

  // Throws out_of_memory when exhausted, std::invalid_argument for an alignment that is not a
  // power of two. Blocks are at least 256 B aligned whatever alignment asks.
  [[nodiscard]] void* allocate(std::size_t bytes,
                               std::size_t alignment = ::cuda::mr::default_cuda_malloc_alignment) {
    return pool_->allocate(bytes, alignment, stream_ref{});
  }
  void deallocate(void* p, std::size_t /*bytes*/,
                  std::size_t /*alignment*/ = ::cuda::mr::default_cuda_malloc_alignment) noexcept {
    pool_->deallocate(p);
  }
  [[nodiscard]] void* allocate_async(std::size_t bytes, std::size_t alignment, ::cuda::stream_ref s) {
    return pool_->allocate(bytes, alignment, from_cuda_stream(s));
  }
  [[nodiscard]] void* allocate_async(std::size_t bytes, ::cuda::stream_ref s) {
    return allocate_async(bytes, ::cuda::mr::default_cuda_malloc_alignment, s);
  }
  void deallocate_async(void* p, std::size_t /*bytes*/, std::size_t /*alignment*/, ::cuda::stream_ref s) noexcept {
    pool_->deallocate(p, from_cuda_stream(s));
  }
  void deallocate_async(void* p, std::size_t bytes, ::cuda::stream_ref s) noexcept {
    deallocate_async(p, bytes, ::cuda::mr::default_cuda_malloc_alignment, s);
  }

  [[nodiscard]] Pool& pool() const noexcept { return *pool_; }

  friend bool operator==(const resource& a, const resource& b) noexcept { return a.pool_ == b.pool_; }
  friend bool operator!=(const resource& a, const resource& b) noexcept { return a.pool_ != b.pool_; }
  // Blocks are device memory: kernels may touch them, the host may not.
  friend void get_property(const resource&, ::cuda::mr::device_accessible) noexcept {}

 private:
  Pool* pool_;
};

}  // namespace cudapool
