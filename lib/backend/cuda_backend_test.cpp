// cuda_backend_test.cpp - the cudart backend's contract, on GPU 0. Every test that needs a GPU
// skips without one, so this file builds and passes with or without the CUDA backend.

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <cudapool/detail/backend/backend_checks.hpp>
#include <cudapool/backend.hpp>
#include <cudapool/errors.hpp>

namespace cudapool {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

#define CUDAPOOL_REQUIRE_GPU()                                                                   \
  if (cudapool::cuda_device_count() == 0)                                                        \
  GTEST_SKIP() << "no CUDA GPU on this machine (cuda backend built: " << cuda_backend_built() \
               << ")"

void* offset(void* p, std::size_t bytes) { return static_cast<char*>(p) + bytes; }

TEST(CudaBackend, WithoutAGpuConstructionFailsClearly) {
  if (cuda_device_count() != 0) GTEST_SKIP() << "this machine has a CUDA GPU";
  try {
    (void)make_cuda_backend(0);
    FAIL() << "make_cuda_backend(0) succeeded without a GPU";
  } catch (const backend_error& e) {
    EXPECT_FALSE(std::string(e.what()).empty());
  }
}

TEST(CudaBackend, RejectsABadOrdinal) {
  EXPECT_THROW((void)make_cuda_backend(-1), backend_error);
  EXPECT_THROW((void)make_cuda_backend(cuda_device_count()), backend_error);
}

TEST(CudaBackend, NameAndDevice) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  EXPECT_EQ(b->name(), "cuda");
  EXPECT_EQ(b->device(), 0);
}

TEST(CudaBackend, FillThenVerifyPasses) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  const std::size_t bytes = std::size_t{4} << 20;
  void* p = b->allocate_chunk(bytes);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 256, 0u);
  b->fill({}, p, bytes, 0xA5A5A5A5u);
  b->verify({}, p, bytes, 0xA5A5A5A5u);
  const verify_report report = b->verification_report();
  EXPECT_EQ(report.mismatched_ranges, 0u);
  EXPECT_TRUE(report.first.empty());
  b->free_chunk(p, bytes);
}

TEST(CudaBackend, VerifyCountsAMismatchOnceAndRecordsIt) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  const stream_ref s = b->create_stream();
  const std::size_t bytes = std::size_t{4} << 20;  // many blocks find wrong words: counted once
  void* p = b->allocate_chunk(bytes);
  ASSERT_NE(p, nullptr);
  b->fill(s, p, bytes, 0x11111111u);
  b->fill(s, offset(p, bytes / 2), bytes / 2, 0x22222222u);
  b->verify(s, p, bytes, 0x11111111u);
  const verify_report report = b->verification_report();
  ASSERT_EQ(report.mismatched_ranges, 1u);
  ASSERT_EQ(report.first.size(), 1u);
  const verify_mismatch& m = report.first[0];
  EXPECT_EQ(m.block, reinterpret_cast<std::uintptr_t>(p));
  EXPECT_EQ(m.bytes, bytes);
  // Some wrong word, not necessarily the first one.
  EXPECT_GE(m.word_offset, bytes / 2 / 4);
  EXPECT_LT(m.word_offset, bytes / 4);
  EXPECT_EQ(m.expected, 0x11111111u);
  EXPECT_EQ(m.found, 0x22222222u);
  b->free_chunk(p, bytes);
  b->destroy_stream(s);
}

TEST(CudaBackend, VerifyKeepsSixteenRecordsAndCountsAll) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  void* p = b->allocate_chunk(1 << 20);
  ASSERT_NE(p, nullptr);
  b->fill({}, p, 1 << 20, 1);
  for (int i = 0; i < 20; ++i) b->verify({}, p, 1 << 20, 2);
  const verify_report report = b->verification_report();
  EXPECT_EQ(report.mismatched_ranges, 20u);
  EXPECT_EQ(report.first.size(), 16u);
  b->free_chunk(p, 1 << 20);
}

TEST(CudaBackend, RangesMustBeWholeWords) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  void* p = b->allocate_chunk(4096);
  ASSERT_NE(p, nullptr);
  EXPECT_THROW(b->fill({}, p, 6, 0), std::invalid_argument);
  EXPECT_THROW(b->verify({}, p, 3, 0), std::invalid_argument);
  b->free_chunk(p, 4096);
}

TEST(CudaBackend, EventBehindSpinCompletesOnlyAfterIt) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  const stream_ref s = b->create_stream();
  event_handle e = b->acquire_event();
  const auto start = clock_type::now();
  b->spin(s, 200ms);
  b->record(e, s);
  const bool early = b->query(e);
  if (clock_type::now() - start < 200ms) {
    EXPECT_FALSE(early);
  }
  b->wait(e);
  EXPECT_GE(clock_type::now() - start, 190ms);  // the GPU timer and the host clock may differ a little
  EXPECT_TRUE(b->query(e));
  b->release_event(e);
  b->destroy_stream(s);
}

TEST(CudaBackend, NeverRecordedEventIsComplete) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  event_handle e = b->acquire_event();
  EXPECT_TRUE(b->query(e));
  b->wait(e);
  b->release_event(e);
}

TEST(CudaBackend, StreamWaitOrdersTheWaiterAfterTheRecordedWork) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  const stream_ref a = b->create_stream();
  const stream_ref w = b->create_stream();
  const std::size_t bytes = std::size_t{1} << 20;
  void* p = b->allocate_chunk(bytes);
  ASSERT_NE(p, nullptr);
  event_handle e = b->acquire_event();
  b->spin(a, 50ms);
  b->fill(a, p, bytes, 0xC0FFEEu);
  b->record(e, a);
  b->stream_wait(w, e);
  b->verify(w, p, bytes, 0xC0FFEEu);
  EXPECT_EQ(b->verification_report().mismatched_ranges, 0u);
  b->release_event(e);
  b->free_chunk(p, bytes);
  b->destroy_stream(a);
  b->destroy_stream(w);
}

TEST(CudaBackend, SynchronizeWaitsForTheStream) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  const stream_ref s = b->create_stream();
  const auto start = clock_type::now();
  b->spin(s, 30ms);
  b->synchronize(s);
  EXPECT_GE(clock_type::now() - start, 25ms);
  b->spin(s, 30ms);
  b->synchronize_device();
  EXPECT_GE(clock_type::now() - start, 55ms);
  b->destroy_stream(s);
}

TEST(CudaBackend, ChunkBytesAccounting) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  EXPECT_EQ(b->chunk_bytes(), 0u);
  void* p = b->allocate_chunk(1 << 20);
  void* q = b->allocate_chunk(4096);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(b->chunk_bytes(), (1u << 20) + 4096u);
  b->free_chunk(p, 1 << 20);
  b->free_chunk(q, 4096);
  EXPECT_EQ(b->chunk_bytes(), 0u);
}

TEST(CudaBackend, ExhaustionReturnsNullptr) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  EXPECT_EQ(b->allocate_chunk(std::size_t{1} << 50), nullptr);  // a petabyte
  EXPECT_EQ(b->chunk_bytes(), 0u);
  void* p = b->allocate_chunk(4096);  // the failure left no error behind
  EXPECT_NE(p, nullptr);
  b->fill({}, p, 4096, 0);
  b->synchronize({});
  b->free_chunk(p, 4096);
}

TEST(CudaBackend, StreamIdsAreUniqueAndNeverReused) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  std::set<std::uint64_t> seen{b->stream_id({})};
  for (int i = 0; i < 8; ++i) {
    const stream_ref s = b->create_stream();
    EXPECT_TRUE(seen.insert(b->stream_id(s)).second);
    b->destroy_stream(s);
  }
  EXPECT_THROW(b->destroy_stream({}), std::invalid_argument);
}

TEST(CudaBackend, EventsComeBackFromThePool) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  event_handle e = b->acquire_event();
  b->record(e, {});
  b->wait(e);
  b->release_event(e);
  event_handle again = b->acquire_event();
  EXPECT_EQ(again, e);
  event_handle second = b->acquire_event();
  EXPECT_NE(second, e);
  b->release_event(again);
  b->release_event(second);
}

// ---- debug: guard bytes ----

TEST(CudaBackend, GuardCleanThenDamagedIsReportedOnceWithTagAndOffset) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  const stream_ref s = b->create_stream();
  void* p = b->allocate_chunk(1 << 16);
  ASSERT_NE(p, nullptr);
  // Unaligned pointers and sizes, and an empty guard.
  for (const auto& [at, bytes] : {std::pair<std::size_t, std::size_t>{3, 37}, {1, 1}, {64, 256}, {7, 4001}, {9, 0}}) {
    b->fill_guard(s, offset(p, at), bytes, 0xCD);
    b->check_guard(s, offset(p, at), bytes, 0xCD, 1000 + at);
  }
  b->synchronize(s);
  EXPECT_TRUE(b->take_guard_failures().empty());

  void* guard = offset(p, 5);
  b->fill_guard(s, guard, 100, 0xCD);
  b->fill(s, offset(p, 8), 4, 0x11223344u);  // guard bytes 3..6
  b->check_guard(s, guard, 100, 0xCD, 77);
  b->fill_guard(s, offset(guard, 60), 10, 0xEE);
  b->fill_guard(s, offset(guard, 3), 4, 0xCD);  // repaired below 60
  b->check_guard(s, guard, 100, 0xCD, 78);
  b->synchronize(s);
  const std::vector<guard_failure> failures = b->take_guard_failures();
  ASSERT_EQ(failures.size(), 2u);
  checks::expect_failure(failures[0], 77u, 3u, 0x44);
  checks::expect_failure(failures[1], 78u, 60u, 0xEE);
  EXPECT_TRUE(b->take_guard_failures().empty()) << "reported twice";
  b->free_chunk(p, 1 << 16);
  b->destroy_stream(s);
}

TEST(CudaBackend, GuardFailuresArriveWithoutSynchronizing) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  const stream_ref s = b->create_stream();
  void* p = b->allocate_chunk(4096);
  ASSERT_NE(p, nullptr);
  b->fill_guard(s, p, 64, 0x5A);
  b->fill_guard(s, offset(p, 10), 1, 0x00);
  b->spin(s, 200ms);
  b->check_guard(s, p, 64, 0x5A, 9);
  EXPECT_TRUE(b->take_guard_failures().empty()) << "the check ran before the spin ended";
  // Poll the mapped ring only; the stream is never synchronized before the failure shows up.
  std::vector<guard_failure> failures;
  const auto deadline = clock_type::now() + 10s;
  while (failures.empty() && clock_type::now() < deadline) {
    failures = b->take_guard_failures();
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_EQ(failures.size(), 1u);
  checks::expect_failure(failures[0], 9u, 10u, 0x00);
  b->synchronize(s);
  b->free_chunk(p, 4096);
  b->destroy_stream(s);
}

TEST(CudaBackend, AFullGuardRingDropsAndSaysSo) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  void* p = b->allocate_chunk(4096);
  ASSERT_NE(p, nullptr);
  b->fill_guard({}, p, 32, 0x00);
  constexpr std::uint64_t checks = 300;  // the ring holds 256
  for (std::uint64_t i = 0; i < checks; ++i) b->check_guard({}, p, 32, 0xFF, i);
  b->synchronize({});
  std::vector<guard_failure> failures = b->take_guard_failures();
  ASSERT_EQ(failures.size(), 256u);
  for (std::uint64_t i = 0; i < failures.size(); ++i) EXPECT_EQ(failures[i].tag, i);  // one stream: in order
  b->check_guard({}, p, 32, 0xFF, 1000);
  b->synchronize({});
  testing::internal::CaptureStderr();
  failures = b->take_guard_failures();
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].tag, 1000u);
  EXPECT_NE(err.find("44 guard failures dropped"), std::string::npos) << err;
  b->free_chunk(p, 4096);
}

TEST(CudaBackend, GuardRangesMayNotBeNull) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  checks::expect_null_guard_ranges_rejected(*b);
}

// ---- debug: NVTX heaps ----

// Without an NVTX tool (compute-sanitizer, Nsight) attached there is nobody to tell: the heap
// handle is nullptr and the region calls do nothing. The sanitizer side is sanitizer_demo's.
TEST(CudaBackend, WithoutAnNvtxToolHeapsAreNullAndRegionsAreNoOps) {
  CUDAPOOL_REQUIRE_GPU();
  auto b = make_cuda_backend(0);
  void* p = b->allocate_chunk(1 << 16);
  ASSERT_NE(p, nullptr);
  EXPECT_THROW((void)b->register_heap(nullptr, 64), std::invalid_argument);
  EXPECT_THROW((void)b->register_heap(p, 0), std::invalid_argument);
  void* heap = b->register_heap(p, 1 << 16);
  if (std::getenv("NVTX_INJECTION64_PATH") == nullptr) EXPECT_EQ(heap, nullptr);
  b->register_region(heap, p, 1024);
  b->unregister_region(heap, p);
  b->unregister_heap(heap);
  b->free_chunk(p, 1 << 16);
}

}  // namespace
}  // namespace cudapool
