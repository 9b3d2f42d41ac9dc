// cudapool_torch.cpp - libcudapool_torch.so: cudapool as a PyTorch pluggable CUDA allocator
// (torch.cuda.memory.CUDAPluggableAllocator), and the statistics, trim and byte limit for the
// Python package (python/cudapool/torch.py). Users: docs/pytorch.md.
//
// Contract with PyTorch (torch/csrc/cuda/CUDAPluggableAllocator.cpp):
//   - malloc(size, device, stream): `stream` is the current stream of `device` when the tensor is
//     made; PyTorch remembers (size, device, stream) per pointer and hands the same three back to
//     free. So a free is stream-ordered on the allocation's stream.
//   - size 0 happens (empty tensors): we return nullptr, and free(nullptr) does nothing.
//   - PyTorch does not check malloc's result: measured with torch 2.11 on the H200, a NULL for a
//     1 PiB request became a tensor at address 0, and the fill that deterministic mode gives
//     torch.empty faulted (cudaErrorIllegalAddress, which poisons the CUDA context). PyTorch's own
//     caching allocator throws instead, and PyTorch turns a C++ exception from a pluggable
//     allocator into a Python RuntimeError (as it does for RMM's). So a failed allocation throws:
//     cudapool::out_of_memory (a std::bad_alloc) with the pool's account of what is held where,
//     or the backend's error. free never throws.
//   - Tensor.record_stream() does not reach a pluggable allocator loaded from Python (only a C++
//     caller can set a record-stream hook): a tensor used on a second stream must be kept alive,
//     or that stream synchronised with its allocation stream, until the second stream's work is
//     done. docs/pytorch.md says it for users.
//
// Lifetime: the pools are never destroyed. At exit an atexit handler, registered after the first
// pool (and so after the CUDA runtime it initialised), writes the CUDAPOOL_STATS file and then
// turns both entry points into no-ops: frees that arrive later (static destructors of other
// libraries) must not reach the CUDA runtime, which tears itself down after that handler. The
// device memory still held goes back with the process.
#ifdef CUDAPOOL_TORCH_CUDA_HEADERS
#include <cuda_runtime_api.h>  // checks that cudapool_torch.h declares cudaStream_t as CUDA does
#endif

#include <cudapool/cudapool_torch.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <cudapool/detail/core/json.hpp>
#include <cudapool/any_pool.hpp>
#include <cudapool/backend.hpp>
#include <cudapool/errors.hpp>
#include <cudapool/options.hpp>
#include <bit>
#include <cudapool/stats.hpp>
#include <cudapool/registry.hpp>

namespace {

// Device indices PyTorch can pass (c10::DeviceIndex is an int8_t).
constexpr int max_devices = 128;
// The plug-in's defaults put memory first, as a user tight on memory picks PyTorch's
// expandable_segments:True (docs/pytorch.md), without costing step time: the lockfree variant, size
// classes up to 64 KiB (larger requests are best-fit heap extents), no remap. H200, lm_train alone,
// three rounds of processes (docs/results/2026-12-02-h200-s12, call a): 2836-2866 MiB over the
// baseline against expandable segments' 2840, step time 0.99x PyTorch's allocator. lockfree, not
// tls (the default until s16): after lm_train lockfree held expandable segments' memory or less in
// every process measured (s13 calls c and d, s16's GPU-suite run), tls up to 1.034x in some
// (s15 call c round 3, s16's run: 2964 MiB over the baseline against 2840), at the same step time. With
// CUDAPOOL_REMAP_RATIO=1.01 (remap, which waits for its own stream's pending ranges) every
// process held less than expandable segments (2776-2808 MiB) at 1.15-1.23x the step time: the
// heap moved some 200 free ranges' pages over 40 steps.
constexpr std::string_view default_variant = "lockfree";
constexpr double default_remap_ratio = 0.0;
constexpr std::size_t default_max_class_bytes = std::size_t{64} << 10;

enum class backend_kind { cuda, sim };

struct settings {
  std::string variant;
  backend_kind backend = backend_kind::cuda;
  std::string stats_path;     // empty: no stats file
  std::size_t byte_limit = 0;  // per device pool; 0 = unlimited
  double remap_ratio = default_remap_ratio;               // pool_options::remap_ratio
  std::size_t max_class_bytes = default_max_class_bytes;  // pool_options::max_class_bytes
  std::size_t tls_cache_bytes = cudapool::pool_options{}.cache_budget_bytes;  // pool_options::cache_budget_bytes
  std::size_t epoch_batch = cudapool::pool_options{}.epoch_batch;            // pool_options::epoch_batch
  std::size_t stream_arenas = 0;                                               // pool_options::stream_arenas
};

void report(const std::string& message) noexcept {
  std::fprintf(stderr, "cudapool_torch: %s\n", message.c_str());
  std::fflush(stderr);
}

// Misconfiguration is fatal: silently falling back to another allocator than the one asked for
// would make every measurement taken with it wrong, and nullptr would read as out-of-memory.
[[noreturn]] void fatal(const std::string& message) noexcept {
  report(message + " (aborting)");
  std::abort();
}

std::string join(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  return list;
}

// "0", "4096", "512k", "8G" (binary multiples, case-insensitive).
std::size_t parse_bytes(const char* name, const char* text) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text || errno != 0 || text[0] == '-') fatal(std::string(name) + "='" + text + "' is not a byte count");
  unsigned shift = 0;
  switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; ++end; break;
    case 'm': case 'M': shift = 20; ++end; break;
    case 'g': case 'G': shift = 30; ++end; break;
    case 't': case 'T': shift = 40; ++end; break;
    default: end = nullptr;
  }
  if (end == nullptr || *end != '\0' || (shift != 0 && value > (~0ULL >> shift))) {
    fatal(std::string(name) + "='" + text + "' is not a byte count (digits, then optionally k, m, g or t)");
  }
  return static_cast<std::size_t>(value << shift);
}

// The pool options the settings ask for (byte_limit aside: the registry sets it per device).
cudapool::pool_options options_of(const settings& s) {
  cudapool::pool_options options;
  options.remap_ratio = s.remap_ratio;
  options.max_class_bytes = s.max_class_bytes;
  options.cache_budget_bytes = s.tls_cache_bytes;
  options.epoch_batch = s.epoch_batch;
  options.stream_arenas = s.stream_arenas;
  return options;
}

// A whole number (digits only); aborts naming the variable otherwise.
std::size_t parse_count(const char* name, const char* text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || text[0] == '-') {
    fatal(std::string(name) + "='" + text + "' is not a whole number");
  }
  return static_cast<std::size_t>(n);
}

// Aborts, naming the variable, when the options with what it set are refused: cudapool::validate
// holds the rules (a refused option would otherwise fail every allocation, no pool being made).
void check_options(const settings& s, const char* name, const char* text) {
  try {
    cudapool::validate(options_of(s));
  } catch (const std::invalid_argument& e) {
    fatal(std::string(name) + "='" + text + "': " + e.what());
  }
}

settings read_settings() {
  settings s;
  const char* variant = std::getenv("CUDAPOOL_VARIANT");
  s.variant = (variant != nullptr && variant[0] != '\0') ? variant : std::string(default_variant);
  const std::vector<std::string> variants = cudapool::available_variants();
  bool known = false;
  for (const std::string& v : variants) known = known || v == s.variant;
  if (!known) fatal("CUDAPOOL_VARIANT='" + s.variant + "' is not a variant of this build; valid: " + join(variants));

  if (const char* b = std::getenv("CUDAPOOL_BACKEND"); b != nullptr && b[0] != '\0') {
    const std::string_view name(b);
    if (name == "sim") {
      s.backend = backend_kind::sim;
    } else if (name != "cuda") {
      fatal("CUDAPOOL_BACKEND='" + std::string(name) + "' is not a backend; valid: cuda (default), sim (tests only)");
    }
  }
  if (const char* path = std::getenv("CUDAPOOL_STATS"); path != nullptr) s.stats_path = path;
  if (const char* limit = std::getenv("CUDAPOOL_BYTE_LIMIT"); limit != nullptr && limit[0] != '\0') {
    s.byte_limit = parse_bytes("CUDAPOOL_BYTE_LIMIT", limit);
  }
  if (const char* m = std::getenv("CUDAPOOL_MAX_CLASS_BYTES"); m != nullptr && m[0] != '\0') {
    s.max_class_bytes = parse_bytes("CUDAPOOL_MAX_CLASS_BYTES", m);
    check_options(s, "CUDAPOOL_MAX_CLASS_BYTES", m);  // a power of two from 256 to the 2 MiB slab
  }
  if (const char* c = std::getenv("CUDAPOOL_TLS_CACHE_BYTES"); c != nullptr && c[0] != '\0') {
    s.tls_cache_bytes = parse_bytes("CUDAPOOL_TLS_CACHE_BYTES", c);
  }
  if (const char* b = std::getenv("CUDAPOOL_EPOCH_BATCH"); b != nullptr && b[0] != '\0') {
    s.epoch_batch = parse_count("CUDAPOOL_EPOCH_BATCH", b);
    check_options(s, "CUDAPOOL_EPOCH_BATCH", b);  // 1 .. 2^23 - 1
  }
  if (const char* a = std::getenv("CUDAPOOL_STREAM_ARENAS"); a != nullptr && a[0] != '\0') {
    s.stream_arenas = parse_count("CUDAPOOL_STREAM_ARENAS", a);
    check_options(s, "CUDAPOOL_STREAM_ARENAS", a);  // 0 .. 64
  }
  if (const char* r = std::getenv("CUDAPOOL_REMAP_RATIO"); r != nullptr && r[0] != '\0') {
    char* end = nullptr;
    errno = 0;
    s.remap_ratio = std::strtod(r, &end);
    if (end == r || *end != '\0' || errno != 0) fatal(std::string("CUDAPOOL_REMAP_RATIO='") + r + "' is not a number");
    check_options(s, "CUDAPOOL_REMAP_RATIO", r);  // 0 (off) or finite and >= 1
  }
  return s;
}

// Thread-safe (static initialisation); aborts on a bad environment.
const settings& config() {
  static const settings s = read_settings();
  return s;
}

struct device_slot {
  // Written once, under registry::mutex (release); read lock-free by every call (acquire).
  std::atomic<cudapool::any_pool*> pool{nullptr};
  std::string failure;  // GUARDED_BY(registry::mutex): why creating the pool failed (then no retry)
};

struct registry {
  std::mutex mutex;  // pool creation, failure flags, the exit handler
  std::array<device_slot, max_devices> slots;
  // Set (release) by the exit handler; every call checks it (acquire) before touching a pool.
  std::atomic<bool> exited{false};
  bool exit_handler_registered = false;  // GUARDED_BY(mutex)
  // cudapool_torch_set_byte_limit, before the first pool: replaces settings::byte_limit.
  std::optional<std::size_t> byte_limit;  // GUARDED_BY(mutex)
  // Allocations that threw (written to the stats file).
  std::atomic<std::uint64_t> failed_allocations{0};
};

// Never destroyed (see the file comment); reachable from this pointer, so leak checkers do not
// count the pools as leaked.
registry& state() {
  static registry* const r = new registry;
  return *r;
}

// What each device's pool may reserve. REQUIRES(r.mutex)
std::size_t byte_limit(const registry& r, const settings& s) { return r.byte_limit.value_or(s.byte_limit); }

// The CUDAPOOL_STATS document. REQUIRES(r.mutex)
std::string stats_document(const registry& r, const settings& s) {
  cudapool::detail::json doc;
  doc["library"] = "cudapool_torch";
  doc["variant"] = s.variant;
  doc["backend"] = s.backend == backend_kind::sim ? "sim" : "cuda";
  doc["byte_limit"] = byte_limit(r, s);
  doc["remap_ratio"] = s.remap_ratio;
  doc["max_class_bytes"] = s.max_class_bytes;
  doc["tls_cache_bytes"] = s.tls_cache_bytes;
  doc["epoch_batch"] = s.epoch_batch;
  doc["stream_arenas"] = s.stream_arenas;
  doc["failed_allocations"] = r.failed_allocations.load(std::memory_order_relaxed);
  cudapool::detail::json devices = cudapool::detail::json::array();
  for (int d = 0; d < max_devices; ++d) {
    const cudapool::any_pool* pool = r.slots[static_cast<std::size_t>(d)].pool.load(std::memory_order_acquire);
    if (pool == nullptr) continue;
    devices.push_back({{"device", d}, {"stats", cudapool::detail::to_json_value(pool->stats())}});
  }
  doc["devices"] = std::move(devices);
  return cudapool::detail::to_text(doc);
}

void write_stats(const registry& r, const settings& s) {
  const std::string json = stats_document(r, s) + "\n";
  std::FILE* f = std::fopen(s.stats_path.c_str(), "w");
  if (f == nullptr) {
    report("cannot write CUDAPOOL_STATS='" + s.stats_path + "': " + std::strerror(errno));
    return;
  }
  const bool written = std::fwrite(json.data(), 1, json.size(), f) == json.size();
  if (std::fclose(f) != 0 || !written) report("writing CUDAPOOL_STATS='" + s.stats_path + "' failed");
}

void at_exit() noexcept {
  registry& r = state();
  std::lock_guard lock(r.mutex);
  r.exited.store(true, std::memory_order_release);
  const settings& s = config();  // initialised: a pool exists
  if (s.stats_path.empty()) return;
  try {
    write_stats(r, s);
  } catch (const std::exception& e) {
    report(std::string("CUDAPOOL_STATS not written: ") + e.what());
  }
}

std::unique_ptr<cudapool::any_pool> make_device_pool(int device, const settings& s, std::size_t limit) {
  std::shared_ptr<cudapool::backend> backend;
  if (s.backend == backend_kind::sim) {
    backend = cudapool::make_sim_backend();
  } else {
    backend = cudapool::make_cuda_backend(device);
  }
  cudapool::pool_options options = options_of(s);
  options.byte_limit = limit;
  return cudapool::make_pool(s.variant, std::move(backend), options);
}

// Throws when the device has no pool and cannot get one (the same reason every time).
[[gnu::noinline]] cudapool::any_pool& create_pool(registry& r, int device) {
  const settings& s = config();  // outside the lock: a bad environment aborts here
  device_slot& slot = r.slots[static_cast<std::size_t>(device)];
  std::lock_guard lock(r.mutex);
  if (cudapool::any_pool* pool = slot.pool.load(std::memory_order_acquire)) return *pool;
  if (!slot.failure.empty()) throw cudapool::backend_error(slot.failure);
  try {
    cudapool::any_pool* pool = make_device_pool(device, s, byte_limit(r, s)).release();
    slot.pool.store(pool, std::memory_order_release);
    if (!r.exit_handler_registered) {
      if (std::atexit(at_exit) != 0) report("cannot register the exit handler: CUDAPOOL_STATS will not be written");
      r.exit_handler_registered = true;
    }
    return *pool;
  } catch (const std::exception& e) {
    slot.failure = "cudapool_torch: no pool for device " + std::to_string(device) + ": " + e.what();
    report(slot.failure);
    throw cudapool::backend_error(slot.failure);
  }
}

cudapool::any_pool& pool_for(registry& r, int device) {
  if (device < 0 || device >= max_devices) [[unlikely]] {
    throw std::out_of_range("cudapool_torch: device " + std::to_string(device) + " is out of range [0, " +
                            std::to_string(max_devices) + ")");
  }
  if (cudapool::any_pool* pool = r.slots[static_cast<std::size_t>(device)].pool.load(std::memory_order_acquire))
      [[likely]] {
    return *pool;
  }
  return create_pool(r, device);
}

}  // namespace

extern "C" {

CUDAPOOL_TORCH_API void* cudapool_torch_malloc(size_t size, int device, cudaStream_t stream) {
  registry& r = state();
  // After the exit handler the CUDA runtime may be gone: nothing more is handed out.
  if (r.exited.load(std::memory_order_acquire)) [[unlikely]] return nullptr;
  try {
    return pool_for(r, device).allocate(size, cudapool::stream_ref(stream));  // nullptr for size 0
  } catch (...) {
    r.failed_allocations.fetch_add(1, std::memory_order_relaxed);
    throw;
  }
}

CUDAPOOL_TORCH_API void cudapool_torch_free(void* ptr, size_t /*size*/, int device,
                                            cudaStream_t stream) CUDAPOOL_TORCH_NOEXCEPT {
  if (ptr == nullptr) return;
  registry& r = state();
  if (r.exited.load(std::memory_order_acquire)) [[unlikely]] return;
  cudapool::any_pool* pool =
      (device >= 0 && device < max_devices) ? r.slots[static_cast<std::size_t>(device)].pool.load(std::memory_order_acquire)
                                            : nullptr;
  if (pool == nullptr) [[unlikely]] {
    char text[64];
    std::snprintf(text, sizeof text, "%p", ptr);
    report(std::string("free of ") + text + " on device " + std::to_string(device) +
           ", which has no pool: not allocated here; ignored");
    return;
  }
  pool->deallocate(ptr, cudapool::stream_ref(stream));
}

CUDAPOOL_TORCH_API size_t cudapool_torch_stats_json(char* buf, size_t size) CUDAPOOL_TORCH_NOEXCEPT {
  registry& r = state();
  std::string doc;
  try {
    const settings& s = config();  // outside the lock, as in create_pool
    std::lock_guard lock(r.mutex);
    if (r.exited.load(std::memory_order_acquire)) {
      report("cudapool_torch_stats_json after exit: no statistics");
      return 0;
    }
    doc = stats_document(r, s);
  } catch (const std::exception& e) {
    report(std::string("cudapool_torch_stats_json: ") + e.what());
    return 0;
  }
  const std::size_t needed = doc.size() + 1;
  if (needed <= size) {
    std::memcpy(buf, doc.c_str(), needed);
  } else if (size > 0) {
    buf[0] = '\0';
  }
  return needed;
}

CUDAPOOL_TORCH_API size_t cudapool_torch_trim(void) CUDAPOOL_TORCH_NOEXCEPT {
  registry& r = state();
  std::size_t released = 0;
  for (int d = 0; d < max_devices; ++d) {
    if (r.exited.load(std::memory_order_acquire)) break;
    cudapool::any_pool* pool = r.slots[static_cast<std::size_t>(d)].pool.load(std::memory_order_acquire);
    if (pool == nullptr) continue;
    try {
      released += pool->trim();
    } catch (const std::exception& e) {
      report("trim of device " + std::to_string(d) + "'s pool failed: " + e.what());
    }
  }
  return released;
}

CUDAPOOL_TORCH_API int cudapool_torch_set_byte_limit(size_t bytes) CUDAPOOL_TORCH_NOEXCEPT {
  registry& r = state();
  std::lock_guard lock(r.mutex);
  for (const device_slot& slot : r.slots) {
    if (slot.pool.load(std::memory_order_acquire) != nullptr) return -1;  // made with the old limit
  }
  r.byte_limit = bytes;
  return 0;
}

}  // extern "C"
