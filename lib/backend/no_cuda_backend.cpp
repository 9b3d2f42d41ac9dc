// no_cuda_backend.cpp - the CUDA entry points of a build made without the CUDA toolkit.

#include <cudapool/backend.hpp>
#include <cudapool/errors.hpp>

namespace cudapool {

bool cuda_backend_built() noexcept { return false; }

int cuda_device_count() noexcept { return 0; }

std::unique_ptr<backend> make_cuda_backend(int device) { return make_cuda_backend(device, {}); }

std::unique_ptr<backend> make_cuda_backend(int /*device*/, std::vector<int> /*peers*/) {
  throw backend_error("cudapool was built without the CUDA backend (CUDA toolkit not found at configure time)");
}

}  // namespace cudapool
