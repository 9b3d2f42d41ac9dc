// per_device.cpp - the CUDA device source of per_device (cudapool/per_device.hpp).

#include <cudapool/per_device.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

per_device_source cuda_devices(bool peer_access) {
  const int count = cuda_device_count();
  return {count,
          [count, peer_access](int device) -> std::shared_ptr<backend> {
            std::vector<int> peers;
            for (int d = 0; peer_access && d < count; ++d) {
              if (d != device) peers.push_back(d);
            }
            return make_cuda_backend(device, std::move(peers));
          },
          [] { return cuda_current_device(); }};
}

namespace {
thread_local int sim_current = 0;
}  // namespace

int sim_current_device() noexcept { return sim_current; }
void set_sim_current_device(int device) noexcept { sim_current = device; }

per_device_source sim_devices(int count, const sim_options& options) {
  return {count,
          [options](int device) -> std::shared_ptr<backend> {
            sim_options o = options;
            o.device = device;
            o.seed = options.seed + static_cast<std::uint64_t>(device);
            return make_sim_backend(o);
          },
          [] { return sim_current_device(); }};
}

}  // namespace cudapool
