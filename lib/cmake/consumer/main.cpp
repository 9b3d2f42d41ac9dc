// Uses the installed package: a tls and a stream pool on the simulated device, blocks allocated,
// written and checked by the device, freed immediately and stream-ordered; the stats must balance.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cudapool/backend.hpp"
#include "stream/stream_pool.hpp"
#include "tls/tls_pool.hpp"

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "consumer: FAILED: %s\n", what);
    ++failures;
  }
}

template <class Pool>
void exercise(Pool& pool, cudapool::backend& device, cudapool::stream_ref s) {
  std::vector<void*> blocks;
  for (std::size_t i = 0; i < 64; ++i) {
    void* p = pool.allocate(256 * (i + 1), s);
    device.fill(s, p, 256 * (i + 1), static_cast<std::uint32_t>(i));
    device.verify(s, p, 256 * (i + 1), static_cast<std::uint32_t>(i));
    blocks.push_back(p);
  }
  check(pool.stats().allocs == 64, "64 allocations counted");
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (i % 2 == 0) {
      pool.deallocate(blocks[i], s);  // stream-ordered
    } else {
      device.synchronize(s);
      pool.deallocate(blocks[i]);  // immediate: nothing pending on it
    }
  }
  pool.flush_stream(s);
  device.synchronize(s);
  const cudapool::pool_stats st = pool.stats();
  check(st.frees == 64, "64 frees counted");
  check(st.in_use_bytes == 0, "nothing in use");
}

}  // namespace

int main() {
  std::shared_ptr<cudapool::sim_backend> device = cudapool::make_sim_backend();
  const cudapool::stream_ref s = device->create_stream();
  {
    cudapool::tls_pool tls(device);
    cudapool::stream_pool streams(device);
    exercise(tls, *device, s);
    exercise(streams, *device, s);
    streams.retire_stream(s);
    device->synchronize_device();
    check(device->verification_report().mismatched_ranges == 0, "the device saw what it wrote");
  }
  device->destroy_stream(s);
  if (failures == 0) std::printf("consumer: ok (%s and %s pools from the installed package)\n",
                                 std::string(cudapool::tls_pool::variant()).c_str(),
                                 std::string(cudapool::stream_pool::variant()).c_str());
  return failures == 0 ? 0 : 1;
}
