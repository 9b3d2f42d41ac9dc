// sanitizer_demo.cu - shows what the NVTX heap registration buys under compute-sanitizer.
//
// Takes a chunk from the cuda backend, registers it as an NVTX heap with one 1 KiB region at its
// start (as a pool does for a live 1 KiB block), and launches a kernel that writes the int just
// past that region: still inside the cudaMalloc'd chunk, so without the registration nothing is
// wrong as far as the tools know. Run it as
//
//   compute-sanitizer --tool memcheck sanitizer_demo            # reports the write (NVTX heap)
//   compute-sanitizer --tool memcheck sanitizer_demo --no-nvtx  # reports nothing
//
// (`--nvtx yes` is memcheck's default since CUDA 12.0.) The demo exits 0 when the write goes
// through; memcheck stops the kernel at the access it reports, so in the NVTX run the synchronize
// fails with cudaErrorLaunchFailure and the demo exits 1 (compute-sanitizer's --error-exitcode
// tells the two runs apart; .ci/gpu-suite sanitizer). Seen on the H200 (compute-sanitizer
// 2025.3.1): "Invalid __global__ write of size 4 bytes ... is 1 bytes after the nearest allocation
// at <chunk> of size 1,024 bytes" with the heap, "ERROR SUMMARY: 0 errors" without.

#include <cstdio>
#include <cstring>
#include <exception>

#include <cuda_runtime_api.h>

#include <cudapool/backend.hpp>

namespace {

constexpr std::size_t chunk_bytes = std::size_t{64} << 10;
constexpr std::size_t region_bytes = 1024;

__global__ void write_one(int* p, int value) { *p = value; }

int run(bool use_nvtx) {
  const auto backend = cudapool::make_cuda_backend(0);
  void* chunk = backend->allocate_chunk(chunk_bytes);
  if (chunk == nullptr) {
    std::fprintf(stderr, "sanitizer_demo: out of device memory\n");
    return 1;
  }
  void* heap = nullptr;
  if (use_nvtx) {
    heap = backend->register_heap(chunk, chunk_bytes);
    backend->register_region(heap, chunk, region_bytes);
    std::printf("sanitizer_demo: heap %p (%zu B) with a region of %zu B at its start%s\n", chunk, chunk_bytes,
                region_bytes, heap == nullptr ? ": no NVTX tool attached" : "");
  } else {
    std::printf("sanitizer_demo: chunk %p (%zu B), no NVTX registration\n", chunk, chunk_bytes);
  }
  int* past_region = static_cast<int*>(chunk) + region_bytes / sizeof(int);
  write_one<<<1, 1>>>(past_region, 42);
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess) {
    std::fprintf(stderr, "sanitizer_demo: kernel launch failed: %s\n", cudaGetErrorString(launch));
    return 1;
  }
  backend->synchronize_device();
  std::printf("sanitizer_demo: wrote one int at offset %zu of the chunk (just past the region)\n", region_bytes);
  if (use_nvtx) {
    backend->unregister_region(heap, chunk);
    backend->unregister_heap(heap);
  }
  backend->free_chunk(chunk, chunk_bytes);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool use_nvtx = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-nvtx") == 0) {
      use_nvtx = false;
    } else {
      std::fprintf(stderr, "usage: sanitizer_demo [--no-nvtx]\n");
      return 2;
    }
  }
  try {
    return run(use_nvtx);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sanitizer_demo: %s\n", e.what());
    return 1;
  }
}
