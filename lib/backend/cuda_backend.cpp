// cuda_backend.cpp - the cudart backend: cudaMalloc'd chunks, virtual memory (the driver's
// cuMem* calls), pooled events, kernels for the stream-ordered device operations.
//
// Virtual memory: the driver's entry points come from cudaGetDriverEntryPointByVersion, so the
// library links no libcuda (the driver is loaded by cudart anyway). One physical allocation per
// page (cuMemCreate, cuMemMap), its handle released at once (the memory lives until its page is
// unmapped), then one cuMemSetAccess over the run. page_bytes() is 0 when the device lacks
// cudaDevAttrVirtualMemoryManagementSupported or an entry point is missing.
//
// Every CUDA call runs with the backend's device current (device_guard) and its status checked:
// a failure throws backend_error naming the call, the error and the device, except in noexcept
// functions, which write that message to stderr. A failed call's error is cleared with
// cudaGetLastError so that it does not resurface at the next launch check.
//
// Debug support:
//   - Guard bytes: fill/check kernels (cuda_kernels.cu); a damaged guard becomes a record in a
//     ring in pinned host memory mapped into the device, which take_guard_failures() reads
//     without synchronizing the device (the host never dereferences device memory).
//   - compute-sanitizer: heaps and regions are announced through the NVTX memory API (header-only
//     NVTX3, nvtx3/nvToolsExtMem.h) in a "cudapool" domain. What the Compute Sanitizer NVTX guide
//     ("NVTX API for Compute Sanitizer") says and this code relies on:
//       * a heap of usage NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR over a cudaMalloc'd range makes
//         memcheck report any access to the heap outside a registered region (so an overrun past
//         a live block, or a use after its region was unregistered, is an invalid access);
//       * memcheck honours the API by default since CUDA 12.0 (`--nvtx yes` is the default; with
//         11.3 .. 11.8 it had to be given);
//       * NVTX memory calls must come after the CUDA runtime is initialized: the domain is created
//         by the first register_heap, after the constructor's cudaMemGetInfo;
//       * unregistering a heap releases the regions still in it.
//     Without a tool attached, nvtxMemHeapRegister returns nullptr and the other calls do nothing,
//     so register_heap() returns nullptr and a pool skips the region calls.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExtMem.h>

#include <cudapool/detail/backend/cuda_kernels.hpp>
#include <cudapool/backend.hpp>
#include <cudapool/errors.hpp>

namespace cudapool {
namespace {

std::string describe_cuda_error(const char* call, cudaError_t status, int device) {
  return std::string(call) + " failed: " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status) +
         " (device " + std::to_string(device) + ")";
}

[[noreturn]] void throw_cuda_error(const char* call, cudaError_t status, int device) {
  (void)cudaGetLastError();
  throw backend_error(describe_cuda_error(call, status, device));
}

void check(cudaError_t status, const char* call, int device) {
  if (status != cudaSuccess) throw_cuda_error(call, status, device);
}

void report(const char* message) noexcept { std::fprintf(stderr, "cudapool: cuda backend: %s\n", message); }

// For noexcept paths. At process exit the runtime may already be unloading, and then there is
// nothing left to release, so that status is not reported.
void report_failure(cudaError_t status, const char* call, int device) noexcept {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();
  if (status == cudaErrorCudartUnloading) return;
  try {
    report(describe_cuda_error(call, status, device).c_str());
  } catch (const std::exception&) {
    report(call);
  }
}

// Makes `device` current for the guard's scope and gives the calling thread its previous device
// back afterwards, so the backend never changes which device a caller's own CUDA calls use.
class device_guard {
 public:
  explicit device_guard(int device) : device_(device) {
    check(cudaGetDevice(&previous_), "cudaGetDevice", device);
    if (previous_ != device_) check(cudaSetDevice(device_), "cudaSetDevice", device_);
  }
  ~device_guard() {
    if (previous_ != device_) report_failure(cudaSetDevice(previous_), "cudaSetDevice (restoring the caller's device)", previous_);
  }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int device_;
  int previous_ = 0;
};

// stream_ref{} is the legacy default stream, whichever default-stream mode this file is built in.
cudaStream_t to_cuda(stream_ref s) noexcept {
  return s.native() != nullptr ? static_cast<cudaStream_t>(s.native()) : cudaStreamLegacy;
}

cudaEvent_t to_cuda(event_handle e) noexcept { return static_cast<cudaEvent_t>(e); }

void check_range(const char* what, const void* p, std::size_t bytes) {
  if (bytes % sizeof(std::uint32_t) != 0 || reinterpret_cast<std::uintptr_t>(p) % alignof(std::uint32_t) != 0) {
    throw std::invalid_argument(std::string("cuda backend: ") + what +
                                ": the range must be 4-byte aligned and a multiple of 4 bytes, got " +
                                std::to_string(bytes) + " bytes");
  }
}

// The driver's virtual memory entry points (null when the driver lacks one).
struct driver_vm {
  CUresult (*address_reserve)(CUdeviceptr*, std::size_t, std::size_t, CUdeviceptr, unsigned long long) = nullptr;
  CUresult (*address_free)(CUdeviceptr, std::size_t) = nullptr;
  CUresult (*create)(CUmemGenericAllocationHandle*, std::size_t, const CUmemAllocationProp*, unsigned long long) = nullptr;
  CUresult (*release)(CUmemGenericAllocationHandle) = nullptr;
  CUresult (*map)(CUdeviceptr, std::size_t, std::size_t, CUmemGenericAllocationHandle, unsigned long long) = nullptr;
  CUresult (*unmap)(CUdeviceptr, std::size_t) = nullptr;
  CUresult (*set_access)(CUdeviceptr, std::size_t, const CUmemAccessDesc*, std::size_t) = nullptr;
  CUresult (*granularity)(std::size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags) = nullptr;
  CUresult (*error_name)(CUresult, const char**) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;

  [[nodiscard]] bool complete() const noexcept {
    return address_reserve && address_free && create && release && map && unmap && set_access && granularity &&
           error_name && device_get && device_attribute;
  }
};

template <class F>
void load_entry(const char* symbol, F& fn) noexcept {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &found) == cudaSuccess &&
      found == cudaDriverEntryPointSuccess) {
    fn = reinterpret_cast<F>(p);
  } else {
    (void)cudaGetLastError();
  }
}

driver_vm load_driver_vm() noexcept {
  driver_vm d;
  load_entry("cuMemAddressReserve", d.address_reserve);
  load_entry("cuMemAddressFree", d.address_free);
  load_entry("cuMemCreate", d.create);
  load_entry("cuMemRelease", d.release);
  load_entry("cuMemMap", d.map);
  load_entry("cuMemUnmap", d.unmap);
  load_entry("cuMemSetAccess", d.set_access);
  load_entry("cuMemGetAllocationGranularity", d.granularity);
  load_entry("cuGetErrorName", d.error_name);
  load_entry("cuDeviceGet", d.device_get);
  load_entry("cuDeviceGetAttribute", d.device_attribute);
  return d;
}

class cuda_backend final : public backend {
 public:
  cuda_backend(int device, std::vector<int> peers) : device_(device), peers_(std::move(peers)) {
    enable_peers();
    device_guard guard(device_);
    std::size_t free_bytes = 0;
    check(cudaMemGetInfo(&free_bytes, &memory_bytes_), "cudaMemGetInfo", device_);
    vm_ = load_driver_vm();
    int vmm = 0;
    if (vm_.complete()) {
      CUdevice dev = 0;
      check_cu(vm_.device_get(&dev, device_), "cuDeviceGet");
      check_cu(vm_.device_attribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev),
               "cuDeviceGetAttribute (virtual memory management)");
    }
    if (vmm != 0) {
      const CUmemAllocationProp prop = page_prop();
      std::size_t granularity = 0;
      check_cu(vm_.granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "cuMemGetAllocationGranularity");
      page_bytes_ = granularity;
    }
    // The verify state, the guard ring and the NVTX domain are made on first use
    // (ensure_verify_state, ensure_guard_state, register_heap).
  }

  ~cuda_backend() override {
    try {
      device_guard guard(device_);
      // Work still queued may record these events or write the verify state and the guard ring.
      report_failure(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device_);
      if (guard_ready_.load(std::memory_order_acquire)) report_dropped_guard_failures();
      for (cudaEvent_t e : events_) report_failure(cudaEventDestroy(e), "cudaEventDestroy", device_);
      release_device_state();
    } catch (const backend_error& e) {
      report(e.what());
    }
    if (nvtx_domain_ != nullptr) nvtxDomainDestroy(nvtx_domain_);
  }

  cuda_backend(const cuda_backend&) = delete;
  cuda_backend& operator=(const cuda_backend&) = delete;

  [[nodiscard]] std::string_view name() const noexcept override { return "cuda"; }
  [[nodiscard]] int device() const noexcept override { return device_; }

  // ---- chunks ----

  [[nodiscard]] void* allocate_chunk(std::size_t bytes) override {
    if (bytes == 0) throw std::invalid_argument("cuda backend: allocate_chunk(0)");
    device_guard guard(device_);
    void* chunk = nullptr;
    const cudaError_t status = cudaMalloc(&chunk, bytes);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return nullptr;
    }
    check(status, "cudaMalloc", device_);
    chunk_bytes_.fetch_add(bytes, std::memory_order_relaxed);
    return chunk;
  }

  void free_chunk(void* chunk, std::size_t bytes) noexcept override {
    if (chunk == nullptr) return;
    // The pool has forgotten the chunk whatever cudaFree says.
    chunk_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    try {
      device_guard guard(device_);
      report_failure(cudaFree(chunk), "cudaFree", device_);
    } catch (const backend_error& e) {
      report(e.what());
    }
  }

  [[nodiscard]] std::size_t chunk_bytes() const noexcept override {
    return chunk_bytes_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::size_t memory_bytes() const noexcept override { return memory_bytes_; }

  // ---- virtual memory ----

  [[nodiscard]] std::size_t page_bytes() const noexcept override { return page_bytes_; }

  [[nodiscard]] void* reserve_address(std::size_t bytes, std::size_t alignment) override {
    if (page_bytes_ == 0) throw backend_error("cuda backend: reserve_address: no virtual memory support");
    device_guard guard(device_);
    CUdeviceptr base = 0;
    check_cu(vm_.address_reserve(&base, bytes, alignment, 0, 0), "cuMemAddressReserve");
    return reinterpret_cast<void*>(base);
  }

  void release_address(void* base, std::size_t bytes) noexcept override {
    try {
      device_guard guard(device_);
      report_cu(vm_.address_free(reinterpret_cast<CUdeviceptr>(base), bytes), "cuMemAddressFree");
    } catch (const backend_error& e) {
      report(e.what());
    }
  }

  [[nodiscard]] bool map(void* p, std::size_t bytes) override {
    device_guard guard(device_);
    check(cudaSetDevice(device_), "cudaSetDevice", device_);  // the primary context current for the driver
    const auto base = reinterpret_cast<CUdeviceptr>(p);
    const CUmemAllocationProp prop = page_prop();
    std::size_t done = 0;
    auto undo = [&] {
      for (std::size_t off = 0; off < done; off += page_bytes_) report_cu(vm_.unmap(base + off, page_bytes_), "cuMemUnmap");
    };
    auto failed = [&](CUresult r, const char* call) {
      undo();
      if (r == CUDA_ERROR_OUT_OF_MEMORY) return false;
      throw_cu(r, call);
    };
    for (; done < bytes; done += page_bytes_) {
      CUmemGenericAllocationHandle h{};
      if (const CUresult r = vm_.create(&h, page_bytes_, &prop, 0); r != CUDA_SUCCESS) return failed(r, "cuMemCreate");
      const CUresult mapped = vm_.map(base + done, page_bytes_, 0, h, 0);
      // After a successful map the memory lives until its page is unmapped.
      report_cu(vm_.release(h), "cuMemRelease");
      if (mapped != CUDA_SUCCESS) return failed(mapped, "cuMemMap");
    }
    // The device and its peers: mapped memory ignores cudaDeviceEnablePeerAccess.
    std::vector<CUmemAccessDesc> access(1 + peers_.size());
    for (std::size_t i = 0; i < access.size(); ++i) {
      access[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      access[i].location.id = i == 0 ? device_ : peers_[i - 1];
      access[i].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
    if (const CUresult r = vm_.set_access(base, bytes, access.data(), access.size()); r != CUDA_SUCCESS) {
      return failed(r, "cuMemSetAccess");
    }
    chunk_bytes_.fetch_add(bytes, std::memory_order_relaxed);
    return true;
  }

  void unmap(void* p, std::size_t bytes) noexcept override {
    chunk_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    try {
      device_guard guard(device_);
      const auto base = reinterpret_cast<CUdeviceptr>(p);
      for (std::size_t off = 0; off < bytes; off += page_bytes_) report_cu(vm_.unmap(base + off, page_bytes_), "cuMemUnmap");
    } catch (const backend_error& e) {
      report(e.what());
    }
  }

  // ---- streams ----

  [[nodiscard]] stream_ref create_stream() override {
    device_guard guard(device_);
    cudaStream_t stream = nullptr;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", device_);
    return stream_ref(stream);
  }

  void destroy_stream(stream_ref s) override {
    if (s == stream_ref{}) throw std::invalid_argument("cuda backend: the default stream cannot be destroyed");
    device_guard guard(device_);
    check(cudaStreamDestroy(to_cuda(s)), "cudaStreamDestroy", device_);
  }

  [[nodiscard]] std::uint64_t stream_id(stream_ref s) override {
    device_guard guard(device_);
    unsigned long long id = 0;
    check(cudaStreamGetId(to_cuda(s), &id), "cudaStreamGetId", device_);
    return id;
  }

  // Under the guard: the special handles (the default stream, cudaStreamPerThread) name the
  // current device's, which is then this backend's.
  [[nodiscard]] int stream_device(stream_ref s) override {
    if (s == stream_ref{}) return device_;
#if CUDART_VERSION >= 12080
    device_guard guard(device_);
    int device = -1;
    check(cudaStreamGetDevice(to_cuda(s), &device), "cudaStreamGetDevice", device_);
    return device;
#else
    return device_;  // no cudaStreamGetDevice before CUDA 12.8: streams are taken unchecked
#endif
  }

  void synchronize(stream_ref s) override {
    device_guard guard(device_);
    check(cudaStreamSynchronize(to_cuda(s)), "cudaStreamSynchronize", device_);
  }

  void synchronize_device() override {
    device_guard guard(device_);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device_);
  }

  [[nodiscard]] bool query_stream(stream_ref s) override {
    device_guard guard(device_);
    return not_ready_or_throw(cudaStreamQuery(to_cuda(s)), "cudaStreamQuery");
  }

  // ---- events ----

  [[nodiscard]] event_handle acquire_event() override {
    {
      std::lock_guard lock(events_mutex_);
      if (!free_events_.empty()) {
        cudaEvent_t e = free_events_.back();
        free_events_.pop_back();
        return e;
      }
    }
    device_guard guard(device_);
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags", device_);
    try {
      std::lock_guard lock(events_mutex_);
      // release_event is noexcept: keep room for every event on the free list.
      free_events_.reserve(events_.size() + 1);
      events_.push_back(e);
    } catch (...) {
      report_failure(cudaEventDestroy(e), "cudaEventDestroy", device_);
      throw;
    }
    return e;
  }

  void release_event(event_handle e) noexcept override {
    std::lock_guard lock(events_mutex_);
    free_events_.push_back(to_cuda(e));
  }

  void record(event_handle e, stream_ref s) override {
    device_guard guard(device_);
    check(cudaEventRecord(to_cuda(e), to_cuda(s)), "cudaEventRecord", device_);
  }

  [[nodiscard]] bool query(event_handle e) override {
    device_guard guard(device_);
    return not_ready_or_throw(cudaEventQuery(to_cuda(e)), "cudaEventQuery");
  }

  // A query's status: true for cudaSuccess, false for cudaErrorNotReady; throws for any other.
  bool not_ready_or_throw(cudaError_t status, const char* call) const {
    if (status == cudaSuccess) return true;
    if (status != cudaErrorNotReady) throw_cuda_error(call, status, device_);
    // Not an error, but clear it if the runtime kept it as one; leave any other error in place.
    if (cudaPeekAtLastError() == cudaErrorNotReady) (void)cudaGetLastError();
    return false;
  }

  void wait(event_handle e) override {
    device_guard guard(device_);
    check(cudaEventSynchronize(to_cuda(e)), "cudaEventSynchronize", device_);
  }

  void stream_wait(stream_ref waiter, event_handle e) override {
    device_guard guard(device_);
    check(cudaStreamWaitEvent(to_cuda(waiter), to_cuda(e), cudaEventWaitDefault), "cudaStreamWaitEvent", device_);
  }

  // ---- device operations ----

  void fill(stream_ref s, void* p, std::size_t bytes, std::uint32_t pattern) override {
    check_range("fill", p, bytes);
    device_guard guard(device_);
    check(detail::launch_fill(to_cuda(s), p, bytes / sizeof(std::uint32_t), pattern), "fill kernel launch", device_);
  }

  void verify(stream_ref s, const void* p, std::size_t bytes, std::uint32_t pattern) override {
    check_range("verify", p, bytes);
    device_guard guard(device_);
    ensure_verify_state();
    const unsigned long long launch = next_verify_launch_.fetch_add(1, std::memory_order_relaxed);
    check(detail::launch_verify(to_cuda(s), p, bytes / sizeof(std::uint32_t), pattern, launch, verify_state_),
          "verify kernel launch", device_);
  }

  void spin(stream_ref s, std::chrono::nanoseconds duration) override {
    device_guard guard(device_);
    const auto nanoseconds = static_cast<std::uint64_t>(std::max<std::int64_t>(duration.count(), 0));
    check(detail::launch_spin(to_cuda(s), nanoseconds), "spin kernel launch", device_);
  }

  // The only device-to-host read of the backend.
  [[nodiscard]] verify_report verification_report() override {
    device_guard guard(device_);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device_);
    if (!verify_ready_.load(std::memory_order_acquire)) return {};  // nothing verified yet
    detail::verify_summary summary{};
    check(cudaMemcpy(&summary, &verify_state_->summary, sizeof(summary), cudaMemcpyDeviceToHost),
          "cudaMemcpy (verify state)", device_);
    verify_report report{.mismatched_ranges = summary.mismatched_ranges, .first = {}};
    const unsigned kept = std::min(summary.records_claimed, detail::max_mismatch_records);
    for (unsigned i = 0; i < kept; ++i) {
      const detail::device_mismatch& m = summary.records[i];
      report.first.push_back({.block = static_cast<std::uintptr_t>(m.block),
                              .bytes = static_cast<std::size_t>(m.bytes),
                              .word_offset = static_cast<std::size_t>(m.word_offset),
                              .expected = m.expected,
                              .found = m.found});
    }
    return report;
  }

  // ---- debug: guard bytes ----

  void fill_guard(stream_ref s, void* p, std::size_t bytes, std::uint8_t pattern) override {
    check_guard_range("fill_guard", p, bytes);
    device_guard guard(device_);
    check(detail::launch_fill_guard(to_cuda(s), p, bytes, pattern), "fill_guard kernel launch", device_);
  }

  void check_guard(stream_ref s, const void* p, std::size_t bytes, std::uint8_t pattern, std::uint64_t tag) override {
    check_guard_range("check_guard", p, bytes);
    device_guard guard(device_);
    ensure_guard_state();
    check(detail::launch_check_guard(to_cuda(s), p, bytes, pattern, tag, guard_counters_, guard_ring_device_),
          "check_guard kernel launch", device_);
  }

  // Takes the completed records in claim order; a claimed record still being written stops the
  // walk, and it and the ones after it come in a later call.
  [[nodiscard]] std::vector<guard_failure> take_guard_failures() override {
    if (!guard_ready_.load(std::memory_order_acquire)) return {};  // no guard checked yet
    std::lock_guard lock(guard_mutex_);
    std::vector<guard_failure> failures;
    std::uint64_t dropped_seen = guard_dropped_reported_;
    for (;; ++guard_consumed_) {
      detail::guard_record& record = guard_ring_host_->records[guard_consumed_ % detail::guard_ring_capacity];
      // Acquire: the record's fields were written before its sequence (__threadfence_system).
      if (std::atomic_ref(record.sequence).load(std::memory_order_acquire) != guard_consumed_ + 1) break;
      failures.push_back({.tag = record.tag,
                          .byte_offset = static_cast<std::size_t>(record.byte_offset),
                          .found = static_cast<std::uint8_t>(record.found)});
      dropped_seen = std::max<std::uint64_t>(dropped_seen, record.dropped_before);
    }
    // Release: the records are copied before the device may reuse their slots.
    std::atomic_ref(guard_ring_host_->consumed).store(guard_consumed_, std::memory_order_release);
    if (dropped_seen > guard_dropped_reported_) {
      std::fprintf(stderr, "cudapool: cuda backend: %llu guard failures dropped (a ring of %u records was full)\n",
                   static_cast<unsigned long long>(dropped_seen - guard_dropped_reported_),
                   detail::guard_ring_capacity);
      guard_dropped_reported_ = dropped_seen;
    }
    return failures;
  }

  // ---- debug: NVTX memory heaps for compute-sanitizer ----

  void* register_heap(void* base, std::size_t bytes) override {
    if (base == nullptr || bytes == 0) {
      throw std::invalid_argument("cuda backend: register_heap needs a non-null base and a non-zero size");
    }
    const nvtxMemVirtualRangeDesc_t range{.size = bytes, .ptr = base};
    nvtxMemHeapDesc_t desc{};
    desc.extCompatID = NVTX_EXT_COMPATID_MEM;
    desc.structSize = sizeof(desc);
    desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    desc.typeSpecificDescSize = sizeof(range);
    desc.typeSpecificDesc = &range;
    // The domain is made on first use (the runtime is initialized by then, as the sanitizer's NVTX
    // guide asks: the constructor's cudaMemGetInfo).
    std::call_once(nvtx_once_, [&] { nvtx_domain_ = nvtxDomainCreateA("cudapool"); });
    return nvtxMemHeapRegister(nvtx_domain_, &desc);
  }

  void unregister_heap(void* heap) noexcept override {
    if (heap != nullptr) nvtxMemHeapUnregister(nvtx_domain_, static_cast<nvtxMemHeapHandle_t>(heap));
  }

  // A nullptr heap is the "no tool attached" handle: nothing to tell (and nullptr would mean
  // NVTX's process-wide heap).
  void register_region(void* heap, const void* p, std::size_t bytes) override {
    if (heap == nullptr) return;
    const nvtxMemVirtualRangeDesc_t range{.size = bytes, .ptr = p};
    nvtxMemRegionsRegisterBatch_t batch{};
    batch.extCompatID = NVTX_EXT_COMPATID_MEM;
    batch.structSize = sizeof(batch);
    batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    batch.heap = static_cast<nvtxMemHeapHandle_t>(heap);
    batch.regionCount = 1;
    batch.regionDescElementSize = sizeof(range);
    batch.regionDescElements = &range;
    batch.regionHandleElementsOut = nullptr;  // virtual-address regions are named by their pointer
    nvtxMemRegionsRegister(nvtx_domain_, &batch);
  }

  void unregister_region(void* heap, const void* p) noexcept override {
    if (heap == nullptr) return;
    nvtxMemRegionRef_t ref;
    ref.pointer = p;
    nvtxMemRegionsUnregisterBatch_t batch{};
    batch.extCompatID = NVTX_EXT_COMPATID_MEM;
    batch.structSize = sizeof(batch);
    batch.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    batch.refCount = 1;
    batch.refElementSize = sizeof(ref);
    batch.refElements = &ref;
    nvtxMemRegionsUnregister(nvtx_domain_, &batch);
  }

 private:
  // Each peer may read and write this device's memory: cudaMalloc'd memory through the peer's
  // cudaDeviceEnablePeerAccess (once per pair for the process; already enabled is fine), mapped
  // pages through map()'s access descriptors.
  void enable_peers() const {
    for (const int peer : peers_) {
      if (peer == device_) throw backend_error("cuda backend: device " + std::to_string(device_) + " is not its own peer");
      int can = 0;
      check(cudaDeviceCanAccessPeer(&can, peer, device_), "cudaDeviceCanAccessPeer", device_);
      if (can == 0) {
        throw backend_error("cuda backend: device " + std::to_string(peer) + " cannot access the memory of device " +
                            std::to_string(device_) + " (cudaDeviceCanAccessPeer)");
      }
      device_guard guard(peer);
      const cudaError_t status = cudaDeviceEnablePeerAccess(device_, 0);
      if (status == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();
      } else {
        check(status, "cudaDeviceEnablePeerAccess", peer);
      }
    }
  }

  [[nodiscard]] CUmemAllocationProp page_prop() const noexcept {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device_;
    return prop;
  }
  [[nodiscard]] std::string describe_cu(CUresult r, const char* call) const {
    const char* name = nullptr;
    if (vm_.error_name == nullptr || vm_.error_name(r, &name) != CUDA_SUCCESS || name == nullptr) name = "unknown CUresult";
    return std::string(call) + " failed: " + name + " (" + std::to_string(static_cast<int>(r)) + ", device " +
           std::to_string(device_) + ")";
  }
  [[noreturn]] void throw_cu(CUresult r, const char* call) const { throw backend_error(describe_cu(r, call)); }
  void check_cu(CUresult r, const char* call) const {
    if (r != CUDA_SUCCESS) throw_cu(r, call);
  }
  void report_cu(CUresult r, const char* call) const noexcept {
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_DEINITIALIZED) return;
    try {
      report(describe_cu(r, call).c_str());
    } catch (const std::exception&) {
      report(call);
    }
  }
  static void check_guard_range(const char* what, const void* p, std::size_t bytes) {
    if (p == nullptr && bytes != 0) {
      throw std::invalid_argument(std::string("cuda backend: ") + what + ": null pointer with " +
                                  std::to_string(bytes) + " bytes");
    }
  }

  // Zeroes `bytes` of device memory and returns once done: cudaMemsetAsync on a non-blocking stream
  // made for it, which is synchronized and destroyed. Under the device guard.
  void zero_device(void* p, std::size_t bytes, const char* what) const {
    cudaStream_t z = nullptr;
    check(cudaStreamCreateWithFlags(&z, cudaStreamNonBlocking), "cudaStreamCreateWithFlags (zeroing)", device_);
    cudaError_t status = cudaMemsetAsync(p, 0, bytes, z);
    const char* call = "cudaMemsetAsync";
    if (status == cudaSuccess) {
      status = cudaStreamSynchronize(z);
      call = "cudaStreamSynchronize";
    }
    report_failure(cudaStreamDestroy(z), "cudaStreamDestroy (zeroing)", device_);
    check(status, (std::string(call) + " (" + what + ")").c_str(), device_);
  }

  // *slot: a zeroed T in device memory, allocated unless a failed earlier attempt left one.
  template <class T>
  void make_zeroed(T*& slot, const char* what) {
    if (slot == nullptr) {
      void* p = nullptr;
      check(cudaMalloc(&p, sizeof(T)), (std::string("cudaMalloc (") + what + ")").c_str(), device_);
      slot = static_cast<T*>(p);
    }
    zero_device(slot, sizeof(T), what);
  }

  // The verify kernels' state and the guard kernels' counters and ring, made on first use (a
  // verify launch, a guard check): what only the stress harness and the debug options use costs a
  // pool that uses neither nothing. The device memory is zeroed by zero_device (a stream of its
  // own, synchronized), not by a cudaMemset left running on the legacy default stream: the kernel
  // that first uses the state may run on any stream (a non-blocking one does not wait for the
  // legacy stream), and s32 found that such a memset, never synchronized, made every
  // cudaEventRecord + cudaEventQuery of the process 3-5x slower (docs/results/2026-12-06-s32: the
  // bare ring 1,677-2,001 ns after a cudaMalloc + cudaMemset, 360 once cudaDeviceSynchronize ran;
  // the constructor did that, so every pool's epochs paid it). No device-wide synchronize: a first
  // guard check does not wait for other streams' work (GuardFailuresArriveWithoutSynchronizing).
  // std::call_once: a failure throws to the caller and leaves them to be made by a later call.
  void ensure_verify_state() {
    std::call_once(verify_once_, [&] {
      make_zeroed(verify_state_, "verify state");
      verify_ready_.store(true, std::memory_order_release);
    });
  }

  void ensure_guard_state() {
    std::call_once(guard_once_, [&] {
      make_zeroed(guard_counters_, "guard counters");
      if (guard_ring_host_ == nullptr) {
        void* ring = nullptr;
        check(cudaHostAlloc(&ring, sizeof(detail::guard_ring), cudaHostAllocMapped), "cudaHostAlloc (guard ring)",
              device_);
        guard_ring_host_ = static_cast<detail::guard_ring*>(ring);
      }
      std::memset(guard_ring_host_, 0, sizeof(detail::guard_ring));  // host memory: before any launch
      void* device_ring = nullptr;
      check(cudaHostGetDevicePointer(&device_ring, guard_ring_host_, 0), "cudaHostGetDevicePointer (guard ring)",
            device_);
      guard_ring_device_ = static_cast<detail::guard_ring*>(device_ring);
      guard_ready_.store(true, std::memory_order_release);
    });
  }

  // Frees what ensure_verify_state and ensure_guard_state made (any part of it); only reports.
  void release_device_state() noexcept {
    if (guard_ring_host_ != nullptr) report_failure(cudaFreeHost(guard_ring_host_), "cudaFreeHost (guard ring)", device_);
    if (guard_counters_ != nullptr) report_failure(cudaFree(guard_counters_), "cudaFree (guard counters)", device_);
    if (verify_state_ != nullptr) report_failure(cudaFree(verify_state_), "cudaFree (verify state)", device_);
    guard_ring_host_ = nullptr;
    guard_ring_device_ = nullptr;
    guard_counters_ = nullptr;
    verify_state_ = nullptr;
  }

  // At destruction, after the device is idle: the exact count of failures the full ring dropped
  // that no later record has reported.
  void report_dropped_guard_failures() noexcept {
    detail::guard_counters counters{};
    const cudaError_t status = cudaMemcpy(&counters, guard_counters_, sizeof(counters), cudaMemcpyDeviceToHost);
    if (status != cudaSuccess) {
      report_failure(status, "cudaMemcpy (guard counters)", device_);
      return;
    }
    std::lock_guard lock(guard_mutex_);
    if (counters.dropped > guard_dropped_reported_) {
      std::fprintf(stderr, "cudapool: cuda backend: %llu guard failures dropped (a ring of %u records was full)\n",
                   static_cast<unsigned long long>(counters.dropped - guard_dropped_reported_),
                   detail::guard_ring_capacity);
    }
  }

  const int device_;
  const std::vector<int> peers_;  // devices that may access this one's memory (map(), enable_peers())
  detail::verify_state* verify_state_ = nullptr;  // device memory, written only by verify kernels
  detail::guard_counters* guard_counters_ = nullptr;  // device memory, written only by check-guard kernels
  detail::guard_ring* guard_ring_host_ = nullptr;     // pinned host memory; the host's view of the ring
  detail::guard_ring* guard_ring_device_ = nullptr;   // the same memory, as kernels address it
  nvtxDomainHandle_t nvtx_domain_ = nullptr;          // set once, by the first register_heap
  std::once_flag verify_once_;
  std::once_flag guard_once_;
  std::once_flag nvtx_once_;
  std::atomic<bool> verify_ready_{false};  // verify_state_ made (release; read with acquire)
  std::atomic<bool> guard_ready_{false};   // guard_counters_ and the ring made (release; acquire)
  // Set once, at construction.
  std::size_t memory_bytes_ = 0;  // the device's total memory
  std::size_t page_bytes_ = 0;    // the virtual memory granularity; 0: no support
  driver_vm vm_;

  // Taken by take_guard_failures (and the destructor) only.
  std::mutex guard_mutex_;
  std::uint64_t guard_consumed_ = 0;          // GUARDED_BY(guard_mutex_); records taken, published in the ring
  std::uint64_t guard_dropped_reported_ = 0;  // GUARDED_BY(guard_mutex_)
  // allocate_chunk minus free_chunk plus map minus unmap; any thread, relaxed: a statistic that
  // orders nothing.
  std::atomic<std::size_t> chunk_bytes_{0};
  // Numbers verify launches; any thread, relaxed: only uniqueness matters. Starts at 1 because 0
  // is the claim slots' initial value.
  std::atomic<unsigned long long> next_verify_launch_{1};

  // Taken by acquire_event and release_event only.
  std::mutex events_mutex_;
  std::vector<cudaEvent_t> events_;       // GUARDED_BY(events_mutex_); every event made, destroyed at the end
  std::vector<cudaEvent_t> free_events_;  // GUARDED_BY(events_mutex_)
};

}  // namespace

bool cuda_backend_built() noexcept { return true; }

int cuda_device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

std::unique_ptr<backend> make_cuda_backend(int device) { return make_cuda_backend(device, {}); }

std::unique_ptr<backend> make_cuda_backend(int device, std::vector<int> peers) {
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount", device);
  for (const int d : peers) {
    if (d < 0 || d >= count) {
      throw backend_error("cuda backend: no CUDA device " + std::to_string(d) + " to be a peer of device " +
                          std::to_string(device) + " (this machine has " + std::to_string(count) + ")");
    }
  }
  if (device < 0 || device >= count) {
    throw backend_error("cuda backend: no CUDA device " + std::to_string(device) + " (this machine has " +
                        std::to_string(count) + ")");
  }
  return std::make_unique<cuda_backend>(device, std::move(peers));
}

}  // namespace cudapool
