// Uses the installed package: for each component the build links (CUDAPOOL_CONSUMER_<component>),
// pools on the simulated device, blocks allocated, written and checked by the device, freed
// immediately and stream-ordered; the stats must balance.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <cudapool/backend.hpp>
#include <cudapool/stats.hpp>
#if CUDAPOOL_CONSUMER_mutex
#include <cudapool/mutex_pool.hpp>
#endif
#if CUDAPOOL_CONSUMER_lockfree
#include <cudapool/lockfree_pool.hpp>
#endif
#if CUDAPOOL_CONSUMER_tls
#include <cudapool/tls_pool.hpp>
#endif
#if CUDAPOOL_CONSUMER_stream
#include <cudapool/stream_pool.hpp>
#endif
#if CUDAPOOL_CONSUMER_registry
#include <cudapool/registry.hpp>
#endif
#if CUDAPOOL_CONSUMER_adapters
#include <cudapool/buffer.hpp>
#include <cudapool/per_device.hpp>
#endif

namespace {

int failures = 0;
std::string exercised = "core";  // the components main() used, for the test to compare

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
  std::printf("consumer: %s pool ok\n", st.variant.c_str());
}

}  // namespace

int main() {
  std::shared_ptr<cudapool::sim_backend> device = cudapool::make_sim_backend();
  const cudapool::stream_ref s = device->create_stream();
  {
    // core: the backend alone.
    constexpr std::size_t chunk_bytes = std::size_t{2} << 20;
    void* chunk = device->allocate_chunk(chunk_bytes);
    device->fill(s, chunk, 4096, 7);
    device->verify(s, chunk, 4096, 7);
    device->synchronize(s);
    device->free_chunk(chunk, chunk_bytes);
    check(cudapool::to_json(cudapool::pool_stats{}).front() == '{', "stats as JSON");
#if CUDAPOOL_CONSUMER_mutex
    exercised += " mutex";
    cudapool::mutex_pool mutex(device);
    exercise(mutex, *device, s);
#endif
#if CUDAPOOL_CONSUMER_lockfree
    exercised += " lockfree";
    cudapool::lockfree_pool lockfree(device);
    exercise(lockfree, *device, s);
#endif
#if CUDAPOOL_CONSUMER_tls
    exercised += " tls";
    cudapool::tls_pool tls(device);
    exercise(tls, *device, s);
#endif
#if CUDAPOOL_CONSUMER_stream
    exercised += " stream";
    cudapool::stream_pool streams(device);
    exercise(streams, *device, s);
    streams.retire_stream(s);
#endif
#if CUDAPOOL_CONSUMER_registry
    exercised += " registry";
    for (const std::string& name : cudapool::available_variants()) {
      std::unique_ptr<cudapool::any_pool> pool = cudapool::make_pool(name, device);
      exercise(*pool, *device, s);
      pool->retire_stream(s);
    }
#endif
#if CUDAPOOL_CONSUMER_adapters
    exercised += " adapters";
    // Without a variant: what the adapters library itself defines, and an empty buffer.
    check(cudapool::cuda_devices().device_count == cudapool::cuda_device_count(), "cuda_devices()");
    check(cudapool::buffer().size() == 0, "an empty buffer");
#if CUDAPOOL_CONSUMER_tls
    {
      cudapool::buffer b(tls, 4096);
      check(b.size() == 4096 && b.data() != nullptr, "a buffer from the tls pool");
    }
#endif
#endif
    device->synchronize_device();
    check(device->verification_report().mismatched_ranges == 0, "the device saw what it wrote");
  }
  device->destroy_stream(s);
  if (failures == 0) std::printf("consumer: ok (%s)\n", exercised.c_str());
  return failures == 0 ? 0 : 1;
}
