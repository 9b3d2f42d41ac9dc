// workloads.hpp - the bench workloads, written once against bench_allocator, and their
// registration with Google Benchmark. Names are <workload>/<allocator>[/<parameter>]; Google
// Benchmark appends /real_time and /threads:N. items_per_second counts alloc+free pairs (replay:
// trace operations), aggregated over all threads.
//
//   pair/<a>/<bytes>         allocate + free one block of 256 B, 4 KiB or 1 MiB; threads 1..64
//   batch/<a>/<order>        allocate 64 blocks of 4 KiB, then free them in lifo, fifo or random
//                            order; threads 1, 4, 16, 64; an item is one block (alloc + free)
//   mix/<a>                  allocate + free one block of a size drawn log-uniformly in
//                            256 B .. 1 MiB (a per-thread table of 4096 sizes); threads 1, 4,
//                            16, 64
//   prodcons/<a>             threads in pairs: a producer allocates 4 KiB blocks and hands them
//                            through an SPSC ring (1024 slots, handed over in batches of 32) to
//                            its consumer, which frees them
//                            (cross-thread frees); threads 2..64; an item is one block
//   larson/<a>               each thread is a lineage of short-lived threads: every benchmark
//                            iteration starts a thread that inherits the lineage's window of 128
//                            live blocks (256 B .. 64 KiB, log-uniform), replaces a random one
//                            4096 times (free + allocate) and exits; the next generation inherits
//                            the window. Thread creation and exit are in the timing. threads 1, 4,
//                            16, 64; an item is one free + allocate
//   streams/<a>/same|cross   16 streams made on the backend; thread t allocates 4 KiB on stream
//                            t % 16 and frees it stream-ordered on the same stream (same) or on
//                            stream (t + 1) % 16 (cross); threads 1..16. Pools report
//                            events_per_free = stats().events_recorded / frees (after the final
//                            flush_stream of every stream)
//   replay/<a>/<trace>       one thread replays a trace operation by operation (an iteration is
//                            one operation, looping over the trace; allocations never freed in the
//                            file are freed at its end): time = ns per operation. Frees are
//                            stream-ordered on the trace's stream (as PyTorch's frees are); one
//                            backend stream per trace stream index. Counters: peak_live_MiB (from
//                            the trace, requested bytes, over the operations replayed),
//                            peak_reserved_MiB and reserved_over_live (pools:
//                            stats().peak_reserved_bytes; cudaMallocAsync: the pool's
//                            ReservedMemHigh; cub: its cached + live bytes sampled after each
//                            allocation; cudaMalloc: omitted)
//   replay/<a>/<trace>/immediate  pools only: the same with immediate frees (deallocate(p)), which
//                            separates the cost of deferred (stream-ordered) frees from the rest
//
// Streams of the peers: in the workloads without streams a peer allocates on a stream of its own
// per benchmark thread (non-blocking, made on the backend in set-up) and frees on that stream
// (cudaFreeAsync(p, s); a consumer/successor frees on the allocating thread's stream); the pools
// get stream_ref{} and free immediately (deallocate(p)): in both cases the block is reusable at
// once in the order of the allocating stream.
//
// Every run makes its allocator (and streams) in set-up and destroys them at tear-down, after
// every thread is done: streams are flushed (flush_stream), the allocator is destroyed, and only
// then the streams (so no pool ever sees a destroyed stream: no retire_stream is needed).
#pragma once

#include <memory>
#include <vector>

#include "bench_allocator.hpp"
#include "cudapool/backend.hpp"
#include "trace.hpp"

namespace bench {

void register_benchmarks(const std::vector<allocator_config>& allocators,
                         const std::vector<std::shared_ptr<const trace>>& traces,
                         std::shared_ptr<cudapool::backend> device);

// Drops the workloads' reference to the backend (after RunSpecifiedBenchmarks).
void release_backend() noexcept;

}  // namespace bench
