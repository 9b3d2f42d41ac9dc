// cudapool/per_device.hpp - one pool per visible device, each created on first use.
//
//   cudapool::per_device<cudapool::tls_pool> pools;          // nothing allocated yet
//   void* p = pools.current().allocate(bytes, stream);        // the current device's pool
//   pools.get(1).deallocate(q, stream_on_device_1);
//
// A pool is bound to one device: its backend (make_cuda_backend(device)) makes that device current
// around every CUDA call and restores the caller's device after it (device_guard in
// lib/backend/cuda_backend.cpp), so a pool may be used from a thread whose current device is
// another one. Streams given to a device's pool must belong to that device: a pool takes each
// stream's device from its backend (backend::stream_device) once and refuses another device's
// stream (allocate throws std::invalid_argument; deallocate reports an invalid free,
// stream_of_another_device, and leaves the allocation live). A pointer of one device's pool freed
// through another's is a foreign pointer there: reported, nothing changed.
//
// The devices come from a per_device_source: by default the CUDA devices (cuda_device_count(),
// make_cuda_backend, cudaGetDevice); cuda_devices(true) also lets every device access the others'
// pool memory (peer access); sim_devices(n) gives n simulated devices, for CI and TSan.
//
// Thread-safety: get() and current() are thread-safe; after a device's first use they cost one
// acquire load. Pools live until the per_device is destroyed.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include <cudapool/backend.hpp>
#include <cudapool/errors.hpp>
#include <cudapool/options.hpp>

namespace cudapool {

// The current CUDA device of the calling thread (cudaGetDevice). Throws backend_error when the
// library was built without CUDA or the call fails.
[[nodiscard]] int cuda_current_device();

struct per_device_source {
  int device_count = 0;
  std::function<std::shared_ptr<backend>(int device)> make_backend;
  std::function<int()> current_device;
};

// The CUDA devices: cuda_device_count() of them (0 without CUDA or GPU). With peer_access, each
// device's backend is made with every other device as a peer (make_cuda_backend(d, peers)), so a
// kernel on any device may read and write any pool's blocks; its creation throws backend_error
// where a pair of devices cannot access each other.
[[nodiscard]] per_device_source cuda_devices(bool peer_access = false);

// `count` simulated devices: device d's backend is make_sim_backend(options) with device = d and
// seed = options.seed + d. The current device is the calling thread's sim_current_device().
[[nodiscard]] per_device_source sim_devices(int count, const sim_options& options = {});
// The calling thread's simulated current device (0 until set), the sim_devices() counterpart of
// cudaGetDevice / cudaSetDevice. Not range-checked: per_device::current() checks.
[[nodiscard]] int sim_current_device() noexcept;
void set_sim_current_device(int device) noexcept;

template <class Pool>
class per_device {
 public:
  // One pool per CUDA device, each built with `options`.
  explicit per_device(const pool_options& options = {}) : per_device(cuda_devices(), options) {}
  // One pool per device of `source`. Throws std::invalid_argument for a negative count or a
  // missing function.
  per_device(per_device_source source, const pool_options& options)
      : source_(std::move(source)), options_(options), slots_(make_slots(source_)) {}
  per_device(const per_device&) = delete;
  per_device& operator=(const per_device&) = delete;
  ~per_device() {
    for (int d = 0; d < source_.device_count; ++d) delete slots_[d].pool.load(std::memory_order_relaxed);
  }

  // Thread-safe. The pool of `device`, created on first use. Throws std::out_of_range for a device
  // outside [0, device_count()), and what the backend or the pool constructor throws (a failed
  // creation is retried by the next call).
  [[nodiscard]] Pool& get(int device) {
    if (device < 0 || device >= source_.device_count) {
      throw std::out_of_range("cudapool::per_device: device " + std::to_string(device) + " is not one of the " +
                              std::to_string(source_.device_count) + " visible devices");
    }
    slot& s = slots_[device];
    // Acquire pairs with the release store below: the pool is fully constructed when seen.
    if (Pool* p = s.pool.load(std::memory_order_acquire)) [[likely]] return *p;
    return create(device);
  }
  // Thread-safe. The pool of the calling thread's current device.
  [[nodiscard]] Pool& current() { return get(source_.current_device()); }

  [[nodiscard]] int device_count() const noexcept { return source_.device_count; }
  // Thread-safe. Whether device's pool exists yet (a snapshot).
  [[nodiscard]] bool created(int device) const noexcept {
    return device >= 0 && device < source_.device_count &&
           slots_[device].pool.load(std::memory_order_acquire) != nullptr;
  }

 private:
  struct slot {
    std::atomic<Pool*> pool{nullptr};  // written once under create_mutex_ (release), read by get()
  };

  static std::unique_ptr<slot[]> make_slots(const per_device_source& source) {
    if (source.device_count < 0) {
      throw std::invalid_argument("cudapool::per_device: negative device count " +
                                  std::to_string(source.device_count));
    }
    if (!source.make_backend || !source.current_device) {
      throw std::invalid_argument("cudapool::per_device: the device source needs make_backend and current_device");
    }
    return std::make_unique<slot[]>(static_cast<std::size_t>(source.device_count));
  }

  [[gnu::noinline]] Pool& create(int device) {
    std::lock_guard lock(create_mutex_);
    slot& s = slots_[device];
    if (Pool* p = s.pool.load(std::memory_order_relaxed)) return *p;  // another thread won
    std::shared_ptr<backend> b = source_.make_backend(device);
    if (!b) throw backend_error("cudapool::per_device: no backend made for device " + std::to_string(device));
    auto pool = std::make_unique<Pool>(std::move(b), options_);
    Pool* p = pool.release();
    s.pool.store(p, std::memory_order_release);
    return *p;
  }

  const per_device_source source_;
  const pool_options options_;
  std::unique_ptr<slot[]> slots_;
  std::mutex create_mutex_;  // serialises creation (rare: once per device)
};

}  // namespace cudapool
