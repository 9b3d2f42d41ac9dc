// cuda_kernels.hpp - private to the cuda backend: the device operations' kernels and the
// device-side verify state they report into. Host code calls the launch_* functions only.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace cudapool::detail {

// How many mismatches verification keeps (verify_report::first).
inline constexpr unsigned max_mismatch_records = 16;
// Ring of per-launch claim words that let one verify() count at most once; see verify_state.
inline constexpr unsigned verify_claim_slots = 4096;

struct device_mismatch {
  unsigned long long block;
  unsigned long long bytes;
  unsigned long long word_offset;
  std::uint32_t expected;
  std::uint32_t found;
};

// What verification_report copies back to the host.
struct verify_summary {
  unsigned long long mismatched_ranges;  // verify launches that counted a mismatch
  unsigned int records_claimed;          // records[] slots handed out, may exceed the array
  device_mismatch records[max_mismatch_records];
};

// Lives in device memory, zeroed at backend construction; only kernels write it.
//
// Each verify launch carries a launch number (from 1, unique per backend). A block that finds a
// wrong word does atomicMax(claimed[launch % slots], launch): the block that raises the slot to
// its launch number counts the range once and writes the record. A launch can go uncounted only
// if launch + k * slots also mismatched and claimed the slot first, in which case the report
// already shows a mismatch.
struct verify_state {
  verify_summary summary;
  unsigned long long claimed[verify_claim_slots];
};

// Guard failures: a bounded ring in pinned, mapped host memory that check-guard kernels write and
// the host reads without synchronizing the device; the claim and drop counters stay in device
// memory, since a GPU atomic on host memory needs PCIe atomics the link may not have.
inline constexpr unsigned guard_ring_capacity = 256;

// Written by one check-guard thread: every field, then __threadfence_system(), then `sequence`
// (volatile). The host reads `sequence` first and the other fields only when it matches.
struct guard_record {
  unsigned long long tag;
  unsigned long long byte_offset;
  unsigned long long dropped_before;  // guard_counters::dropped when the record was claimed
  unsigned long long sequence;        // claim number + 1 once the record is complete; 0 before
  unsigned int found;
};

// Pinned host memory, mapped into the device's address space, zeroed at backend construction.
struct guard_ring {
  // Records the host has taken (a claim number). Written by the host only (release store after
  // it has copied the records); read by check-guard kernels, which claim a slot only while
  // claimed - consumed < capacity. A stale read there only drops a record early.
  unsigned long long consumed;
  guard_record records[guard_ring_capacity];
};

// Device memory, zeroed at backend construction; only check-guard kernels write it.
struct guard_counters {
  unsigned long long claimed;  // ring records handed out (claim numbers 0, 1, ...)
  unsigned long long dropped;  // failures not recorded because the ring was full
};

// Each returns cudaGetLastError() after the launch (cudaSuccess when nothing was launched).
cudaError_t launch_fill(cudaStream_t stream, void* p, std::size_t words, std::uint32_t pattern) noexcept;
cudaError_t launch_verify(cudaStream_t stream, const void* p, std::size_t words, std::uint32_t pattern,
                          unsigned long long launch, verify_state* state) noexcept;
cudaError_t launch_spin(cudaStream_t stream, std::uint64_t nanoseconds) noexcept;
cudaError_t launch_fill_guard(cudaStream_t stream, void* p, std::size_t bytes, std::uint8_t pattern) noexcept;
// `ring` is the device pointer of the mapped guard_ring.
cudaError_t launch_check_guard(cudaStream_t stream, const void* p, std::size_t bytes, std::uint8_t pattern,
                               std::uint64_t tag, guard_counters* counters, guard_ring* ring) noexcept;

}  // namespace cudapool::detail
