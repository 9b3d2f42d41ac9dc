/* cudapool_torch.h - the C ABI of libcudapool_torch.so, a PyTorch pluggable CUDA allocator.
 *
 *   import torch
 *   alloc = torch.cuda.memory.CUDAPluggableAllocator(
 *       "libcudapool_torch.so", "cudapool_torch_malloc", "cudapool_torch_free")
 *   torch.cuda.memory.change_current_allocator(alloc)   # before any CUDA allocation
 *
 * One cudapool pool per device, created at the device's first allocation. Environment, read once
 * at the first allocation (docs/pytorch.md): CUDAPOOL_VARIANT, CUDAPOOL_BYTE_LIMIT,
 * CUDAPOOL_STATS, CUDAPOOL_BACKEND (test-only). Besides malloc and free, three calls for the
 * Python package (python/cudapool/torch.py, through ctypes): the statistics, trim, the byte limit.
 *
 * Thread-safety: every function is thread-safe. */
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

/* The statistics of every device pool as one JSON document, the CUDAPOOL_STATS file's:
 * {"library", "variant", "backend", "byte_limit", "failed_allocations", "devices": [{"device",
 * "stats"}]} (stats: cudapool::to_json). Returns the size it needs, the document's length plus its
 * terminating NUL; when that is at most `size`, the document is in `buf`, NUL-terminated, else
 * `buf` (when `size` > 0) holds an empty string: call again with a larger buffer. `buf` may be
 * NULL when `size` is 0. Returns 0 when the document could not be made (the reason on stderr). */
CUDAPOOL_TORCH_API size_t cudapool_torch_stats_json(char* buf, size_t size) CUDAPOOL_TORCH_NOEXCEPT;

/* Trims every device pool (cudapool's trim(): wholly free slabs back to the heap, wholly free pages
 * unmapped); returns the bytes given back to the devices. What PyTorch's empty_cache() would do. */
CUDAPOOL_TORCH_API size_t cudapool_torch_trim(void) CUDAPOOL_TORCH_NOEXCEPT;

/* The bytes each device's pool may reserve (0: no limit), replacing CUDAPOOL_BYTE_LIMIT. Takes
 * effect only before the first allocation (pools keep the limit they were made with): returns 0
 * then, -1 (and changes nothing) once a device has a pool. */
CUDAPOOL_TORCH_API int cudapool_torch_set_byte_limit(size_t bytes) CUDAPOOL_TORCH_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* CUDAPOOL_TORCH_H */
