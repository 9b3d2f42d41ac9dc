// stress_harness.hpp - the `stress` soak: many host threads x many streams against one pool, every
// allocation stamped and verified on the device, a host shadow map of live ranges, and end-of-run
// accounting. run_stress() is the whole tool except its command line, so tests run it in-process.
// With stress_config::allocator naming a peer (cudaMallocAsync, cub; CUDA backend) the same
// workload and verification run over it, without the pool-only checks.
//
// Glossary
//   step        one decision of a host thread: allocate a block, or retire one it holds.
//   tag         the 32-bit pattern a block is stamped with on the device: (thread + 1) << 20 | the
//               thread's allocation counter, so a wrong word read back names the thread that wrote
//               it. Never 0 (fresh memory is often 0).
//   retire      verify the tag on the device, then free the block stream-ordered; or hand it to
//               another thread, which does so on its own stream.
//   hand-off    a block given to another host thread through a queue, with an event recorded on
//               the producer's stream that the consumer's stream waits on.
//   cross-stream free
//               a block used on stream A and freed on stream B; the use on A is declared to B with
//               an event + stream wait before deallocate(p, B), as the core stream contract needs.
//   immediate free
//               1 retire in 32: the host waits for the block's stream to pass the verify, then
//               calls deallocate(p) without a stream, which the contract allows once no work on p
//               is pending. Rare, because it stalls the thread; there so that clean runs use the
//               immediate path of every variant too.
//   shadow map  host map of live [start, end) ranges; an overlap at allocation is a violation.
//   violation   anything that proves the pool broke its contract: an overlapping hand-out, a
//               mismatch seen by a device verify, an invalid free reported by the pool, a block
//               that is not 256 B aligned, stats that do not balance after the run, device memory
//               still held after the pool is gone, or an exception escaping a pool call. For a peer:
//               the same but for the pool's own stats, invalid-free reports and chunks.
//
// This is not a benchmark: the shadow map is one mutex, every byte of every block is written and
// read on the device, and host threads throttle themselves to the device's pace. ops/s is printed
// to see that the run made progress.
//
// Where things are: config.hpp (what a run is asked to do, the parsers), report.hpp (what it found,
// the summary and JSON), and, internal to the harness, random.hpp, checkers.hpp (tags, violation
// log, shadow map, end-of-run checks), faults.hpp (--inject), sizes.hpp (--sizes), workers.hpp (the
// host threads), allocator_under_test.hpp (a pool or a peer). This file and stress_harness.cpp are
// the run itself.
#pragma once

#include <iosfwd>

#include "config.hpp"
#include "report.hpp"

namespace cudapool::stress {

// Runs the soak. A header line (variant, backend and how --backend=auto chose it, seed, ...) and,
// when config.progress, a progress line about every second go to `progress`. Throws config_error for a bad configuration or a backend that cannot be
// had (--backend=cuda without a GPU); everything the pool does wrong ends up in the result.
[[nodiscard]] stress_result run_stress(const stress_config& config, std::ostream& progress);

}  // namespace cudapool::stress
