// per_device.cpp - the CUDA device source of per_device (cudapool/per_device.hpp).

#include <cudapool/per_device.hpp>

#include <string>

#include <cudapool/errors.hpp>

#if CUDAPOOL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace cudapool {

int cuda_current_device() {
#if CUDAPOOL_HAS_CUDA
  int device = -1;
  if (const cudaError_t status = cudaGetDevice(&device); status != cudaSuccess) {
    throw backend_error(std::string("cudapool: cudaGetDevice failed: ") + cudaGetErrorName(status) + ": " +
                        cudaGetErrorString(status));
  }
  return device;
#else
  throw backend_error("cudapool: no current CUDA device: cudapool was built without the CUDA backend");
#endif
}

per_device_source cuda_devices() {
  return {cuda_device_count(), [](int device) -> std::shared_ptr<backend> { return make_cuda_backend(device); },
          [] { return cuda_current_device(); }};
}

}  // namespace cudapool
