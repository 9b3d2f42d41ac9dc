/* cudapool_torch.h - the C ABI of libcudapool_torch.so, a PyTorch pluggable CUDA allocator.
 *
 *   import torch
 *   alloc = torch.cuda.memory.CUDAPluggableAllocator(
 *       "libcudapool_torch.so", "cudapool_torch_malloc", "cudapool_torch_free")
 *   torch.cuda.memory.change_current_allocator(alloc)   # before any CUDA allocation
 *
 * One cudapool pool per device, created at the device's first allocation. Environment, read once
 * at the first allocation (docs/pytorch.md): CUDAPOOL_VARIANT, CUDAPOOL_BYTE_LIMIT,
 * CUDAPOOL_STATS, CUDAPOOL_BACKEND (test-only).
 *
 * Thread-safety: both functions are thread-safe. */
#ifndef CUDAPOOL_TORCH_H
#define CUDAPOOL_TORCH_H

#include <stddef.h>

/* The same declaration as CUDA's driver_types.h: an opaque stream handle. Declared here so that
 * the library (and its simulated-device test) builds without the CUDA toolkit. */
typedef struct CUstream_st* cudaStream_t;

#if defined(__GNUC__)
#define CUDAPOOL_TORCH_API __attribute__((visibility("default")))
#else
#define CUDAPOOL_TORCH_API
#endif
#ifdef __cplusplus
#define CUDAPOOL_TORCH_NOEXCEPT noexcept
extern "C" {
#else
#define CUDAPOOL_TORCH_NOEXCEPT
#endif

/* `size` bytes on `device`, usable by work on `stream` at once; NULL for size 0.
 * Failure is a C++ exception, as from PyTorch's own allocator (PyTorch does not check the pointer
 * a pluggable allocator returns, and shows the exception as a Python RuntimeError):
 * cudapool::out_of_memory, a std::bad_alloc, when the pool cannot get the memory; a
 * std::exception for a device out of range or one whose pool could not be made. Aborts, with the
 * reason on stderr, when the environment names an unknown variant or backend or has an unreadable
 * byte limit. After the process's exit handlers have run it returns NULL. */
CUDAPOOL_TORCH_API void* cudapool_torch_malloc(size_t size, int device, cudaStream_t stream);

/* Frees `ptr` stream-ordered on `stream` (the stream it was allocated on, as PyTorch passes it):
 * reusable once the work enqueued on `stream` so far has completed. NULL does nothing. `size` is
 * not needed. Pointers the pool did not hand out are reported on stderr and ignored. */
CUDAPOOL_TORCH_API void cudapool_torch_free(void* ptr, size_t size, int device, cudaStream_t stream) CUDAPOOL_TORCH_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* CUDAPOOL_TORCH_H */
