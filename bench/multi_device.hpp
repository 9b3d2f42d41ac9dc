// multi_device.hpp - pair_devices: the pair workload with one pool per device.
//
//   pair_devices/<a>/<bytes>/devices:<N>   allocate + free one block of <bytes> per iteration, one
//                                          pool of <a> per device, thread t on device t % N (its
//                                          own device's pool); threads 1..16. Aggregate
//                                          items_per_second with N devices against 1 shows whether
//                                          pools of different devices share anything.
//
// Registered for N = 1 and every count up to the devices given (sim: simulated devices; cuda: the
// GPUs). Pools only (a peer is one allocator per process).
#pragma once

#include <memory>
#include <vector>

#include "bench_allocator.hpp"
#include <cudapool/backend.hpp>

namespace bench {

// `devices[d]` is device d's backend; kept until release_multi_device_backends().
void register_multi_device_benchmarks(const std::vector<allocator_config>& allocators,
                                      std::vector<std::shared_ptr<cudapool::backend>> devices);
void release_multi_device_backends() noexcept;
// The backends given to register_multi_device_benchmarks (device d at [d]); serve_devices runs on
// them too (serve_devices.hpp).
[[nodiscard]] const std::vector<std::shared_ptr<cudapool::backend>>& multi_device_backends() noexcept;

}  // namespace bench
