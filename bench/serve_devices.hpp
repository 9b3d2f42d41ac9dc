// serve_devices.hpp - serve (serve.hpp) with one allocator per device: a server whose host threads
// are split over the devices.
//
//   serve_devices/<a>/<small|mixed>/devices:<N>   N devices, thread t on device t % N: its current
//                                                 device set to it (cudaSetDevice; sim:
//                                                 set_sim_current_device), its own stream made on
//                                                 that device, its requests (the same as serve's
//                                                 thread t: serve_request.hpp) allocated from and
//                                                 freed to that device's allocator, their work
//                                                 and its check run on that device (cuda: the keys
//                                                 kernel, CUB's radix sort and the check kernel)
//
// Allocators: the four cudapool variants through cudapool::per_device<Pool> (per_device.hpp) over
// the run's devices, as a program writes it: the pools made in set-up (get(d) for every device,
// as serve makes its pool before the loop), and each thread takes `pools.current()` once, after
// making its device current; and with the CUDA toolkit the peers cudaMallocAsync (each device's
// default memory pool) and cub (a CachingDeviceAllocator per device), one per device.
// Threads 1, 2, 4, 8, 16, 32, 64 where N divides them (an even split). For N = 2, 16 threads are 8
// per device: devices:2/threads:16 against devices:1/threads:16 is the same host threads over two
// devices, against devices:1/threads:8 the same load per device (2x is perfect scaling).
// Registered for N = 1 and every count up to the devices bench was given (--devices; sim: 2
// simulated devices by default; cuda: every GPU): on a one-GPU host devices:1 alone.
//
// Counters:
//   items_per_second              requests/s over all threads and devices (Google Benchmark's: the
//                                 requests over the mean of the threads' loop times)
//   device<d>_requests_per_second the requests of device d's threads over the mean of their loop
//                                 times (first request to the last one's end), so that the
//                                 devices' figures add up to about items_per_second. Google
//                                 Benchmark gives every thread the same number of requests, so the
//                                 devices' counts are equal: a slower device shows as a lower rate
//   failures                      results the devices saw wrong, summed over the devices (cuda:
//                                 requests; sim: verify ranges, up to two per request), read once
//                                 after the run: for a cudapool variant an error of the benchmark
//                                 and bench's exit status 1, as in serve
//   stream_waits_per_1k_allocs    pools: 1000 x the devices' stats().stream_waits / their allocs
//   reserved_MiB                  pools: the devices' reserved bytes at the end
#pragma once

#include <vector>

#include "bench_allocator.hpp"

namespace bench {

// After register_multi_device_benchmarks (whose backends it runs on: multi_device_backends()).
void register_serve_devices_benchmarks(const std::vector<allocator_config>& allocators);

}  // namespace bench
