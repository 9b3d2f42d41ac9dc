// cudapool/cudapool.hpp - every public header of the library at once.
//
//   #include <cudapool/cudapool.hpp>       // target_link_libraries(app PRIVATE cudapool::tls ...)
//   cudapool::tls_pool pool(cudapool::make_cuda_backend(0));
//
// One header per concept, each usable alone (link the component it names):
//   <cudapool/backend.hpp>          backends: make_cuda_backend, make_sim_backend     (core)
//   <cudapool/options.hpp>, <cudapool/stats.hpp>, <cudapool/errors.hpp>,
//   <cudapool/diagnostics.hpp>, <cudapool/types.hpp>   the vocabulary every pool shares (core)
//   <cudapool/mutex_pool.hpp>, <cudapool/lockfree_pool.hpp>, <cudapool/tls_pool.hpp>,
//   <cudapool/stream_pool.hpp>      the variants             (mutex, lockfree, tls, stream)
//   <cudapool/any_pool.hpp>, <cudapool/registry.hpp>   a pool of any variant by name (registry)
//   <cudapool/pool_ref.hpp>, <cudapool/buffer.hpp>, <cudapool/per_device.hpp>,
//   <cudapool/resource.hpp> (cuda::mr), <cudapool/thrust_allocator.hpp>   (adapters)
// What lives under <cudapool/detail/...> is the implementation: it changes without notice.
//
// resource.hpp needs CCCL's <cuda/memory_resource> (on the path of cudapool::adapters when the
// library was built with the CUDA toolkit) and thrust_allocator.hpp needs nvcc (Thrust's device
// system is CUDA): each is included here only where it can compile.
#pragma once

#include <cudapool/any_pool.hpp>
#include <cudapool/backend.hpp>
#include <cudapool/buffer.hpp>
#include <cudapool/diagnostics.hpp>
#include <cudapool/errors.hpp>
#include <cudapool/lockfree_pool.hpp>
#include <cudapool/mutex_pool.hpp>
#include <cudapool/options.hpp>
#include <cudapool/per_device.hpp>
#include <cudapool/pool_ref.hpp>
#include <cudapool/registry.hpp>
#include <cudapool/stats.hpp>
#include <cudapool/stream_pool.hpp>
#include <cudapool/tls_pool.hpp>
#include <cudapool/types.hpp>

#if __has_include(<cuda/memory_resource>) && __has_include(<cuda_runtime_api.h>)
#include <cudapool/resource.hpp>
#endif
#if defined(__CUDACC__) && __has_include(<thrust/device_ptr.h>)
#include <cudapool/thrust_allocator.hpp>
#endif
