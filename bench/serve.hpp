// serve.hpp - serve/<allocator>/<small|mixed>: a multi-threaded server on the device, the
// whole-program workload behind issue 15 (serve_devices.hpp: the same over several devices; the
// request and the loop are in serve_request.hpp). Every host thread has a stream of its own and
// serves requests in a loop; per request:
//   1. allocate a keys buffer and an output buffer (n 32-bit keys each) and, on the GPU, the
//      temporary storage of CUB's radix sort, from the allocator under test on the thread's stream;
//   2. enqueue the device work on that stream and check its result on the device:
//      - cuda backend: a kernel fills the keys with the request's permutation (serve_kernels.hpp),
//        cub::DeviceRadixSort::SortKeys sorts them into the output, a kernel checks that the
//        output is exactly the sorted sequence (order and contents) and counts the request in a
//        per-thread device counter when it is not;
//      - sim backend (CI): the backend's own fill of both buffers (the request's pattern, its
//        complement for the output), spin (1 ns per key) and verify of both. Its figures say
//        nothing about a GPU: a stream worker's spin sleeps at least the OS timer's slack (60 us or
//        more on the development VM), so even small requests are bound by the simulated device;
//   3. free all of them stream-ordered on the thread's stream.
// A thread keeps at most 16 requests in flight (an event every 8 requests; the host waits for the
// one recorded 16 requests before), as a server bounds its queue; its last request waits for its
// stream, so the time covers the device work.
//
//   small   n log-uniform in 256 .. 8192 keys (host-bound on a GPU: allocation and launches)
//   mixed   n log-uniform in 1024 .. 1048576 keys (GPU-bound)
// n from a table of 4096 sizes drawn per thread with a seeded generator; threads 1, 4, 16, 64.
//
// Counters: items_per_second = requests/s over all threads; failures = results the device saw
// wrong (cuda: requests; sim: verify ranges, two per request), read once after the run; pools:
// stream_waits_per_1k_allocs = 1000 x stats().stream_waits / allocs, pool_activity_counters,
// closed_<full|bytes|slow_path|other>_per_1k_allocs (why the epochs closed: close_reason_counters),
// device_records|queries|waits_per_1k_allocs (the pool's own calls to the device, through a
// counting_backend: the request's work is not counted), reserved_MiB.
// A cudapool variant with failures is a bug (a block handed out while the device still used it):
// its benchmark ends with an error and bench exits with status 1; so does serve/none. A peer's
// failures are a result, reported as measured.
//
// Allocators: the four variants as they are and the peers cudaMallocAsync and cub (cudaMalloc is
// left out: its cudaFree waits for the whole device, no server would free that way); with the
// CUDA toolkit also tls-mr, the tls variant through cudapool::resource and a
// cuda::mr::async_resource_ref (allocate_async / deallocate_async), as a CCCL user holds a pool;
// and none, the ceiling: no allocator (serve only). Each thread serves every request from a ring of
// 32 slots of memory of its own (allocate_chunk in set-up: cudaMalloc on cuda; freed after the
// run), a slot as large as the mode's largest request; a free does nothing. More slots than a
// thread can have requests in flight (up to 23 between its waits: serve_request.hpp's
// max_in_flight), so no slot is reused early; the device check still runs. What is left is the
// host's launch rate and the device work.
#pragma once

#include <vector>

#include "bench_allocator.hpp"

namespace bench {

// After register_benchmarks (which sets the backend).
void register_serve_benchmarks(const std::vector<allocator_config>& allocators);

// The allocators serve runs (and serve_devices, the cudapool variants and peers of them): the four
// variants as they are (no option variations) and the stream-ordered peers; serve/none is added by
// register_serve_benchmarks.
[[nodiscard]] bool serves(const allocator_config& a);

// True once a cudapool variant's (or serve/none's) run of serve or serve_devices saw a failed
// device check.
[[nodiscard]] bool serve_pool_failures_seen() noexcept;

// The test of the check (bench --serve-check-fault=N, before the benchmarks run): every request
// whose number on its thread is a multiple of N gets a result its check does not expect (sim: the
// output filled with another pattern than the verify's; cuda: the check kernel given another base
// than the keys'), so that serve and serve_devices must count it in `failures` and, for a cudapool
// variant, end with an error and bench with exit status 1. 0 (the default): none.
void set_serve_check_fault(std::uint64_t every) noexcept;

}  // namespace bench
