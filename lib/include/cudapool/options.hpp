// cudapool/options.hpp - how a pool is configured. Every variant takes the same options.
#pragma once

#include <chrono>
#include <cstddef>
#include <limits>

#include <cudapool/diagnostics.hpp>
#include <cudapool/errors.hpp>

namespace cudapool {

// Bounded exponential backoff after a failed CAS in the lock-free stacks: spin min_spins pause
// instructions, doubling up to max_spins. max_spins = 0 disables it. The default is the best of
// the sweep measured on the H200 host (16 threads on one class: 35.9 M pairs/s against 21.2 M with
// {4, 256} and 1.9 M without backoff; docs/results/archive/results-2026-12-01-handwritten.md).
struct backoff_options {
  unsigned min_spins = 64;
  unsigned max_spins = 4096;
};

struct pool_options {
  // Size classes: 256 B, then geometric spacing with `classes_per_doubling` classes per power of
  // two (a power of two, 1..8), every class a multiple of 256 B, up to `max_class_bytes`.
  // Larger requests take the large path: extents of the pool's segment heap, best fit, split and
  // coalesced (the slabs of the classes are extents of the same heap).
  std::size_t max_class_bytes = std::size_t{1} << 20;
  unsigned classes_per_doubling = 4;
  // Nonzero: a single class of this size (a multiple of 256 B): the classic fixed-block pool.
  std::size_t fixed_block_bytes = 0;

  // Every slab is an extent of this size from the heap, cut into equal blocks of one class. Must be
  // at least the largest class and a multiple of 64 KiB. Without virtual memory it is also the
  // granularity of the backend chunks the heap takes.
  std::size_t slab_bytes = std::size_t{2} << 20;
  // The first slab of a class is this size (rounded up to hold one block), each new slab of the
  // class twice the class's last one, up to slab_bytes: a class used by a few blocks holds 64 KiB,
  // not 2 MiB, and a busy class reaches full slabs after a few growths. A multiple of 64 KiB,
  // <= slab_bytes; = slab_bytes: every slab slab_bytes.
  std::size_t first_slab_bytes = std::size_t{64} << 10;

  // The heap's device memory: virtual memory where the backend has it (one address reservation,
  // pages mapped on demand and unmapped by trim, like PyTorch's expandable segments), else backend
  // chunks (cudaMalloc). false: chunks always.
  bool virtual_memory = true;
  // Address space per reservation (a multiple of the page size); 0: twice the device's memory, or
  // twice byte_limit when one is set. More reservations follow when it is used up.
  std::size_t address_reservation = 0;
  // Virtual memory only. When a request fits no free range and mapping pages for it would make the
  // mapped bytes exceed remap_ratio x the bytes in use, the heap first unmaps as many whole free
  // pages elsewhere (holes too small for the request), so fragmentation does not raise the memory
  // held; where more pages could move once the allocating stream's own pending frees complete, it
  // waits for that stream first (never for another). 0 (the default): never. Each moved page costs
  // an unmap and a map (tens of microseconds on the H200): 1.01 held less than PyTorch's
  // expandable segments in every PyTorch workload at 1.16-1.19x lm_train's step time
  // (docs/results/2026-12-02-h200-s12).
  double remap_ratio = 0.0;
  // Streams that keep to their own memory (cudapool/stream_arenas.hpp): up to this many streams
  // (at most 64) each get an arena, a pool of the variant whose memory only that stream allocates
  // from, so that a free on the allocating stream is reused at once with no epoch and no event.
  // Memory moves between arenas under pressure (an out-of-memory arena trims the others). 0 (the
  // default): one shared pool. Applied by make_pool and stream_arenas<Pool>; a variant's pool type
  // constructed directly with it throws std::invalid_argument. Needs virtual memory and growth,
  // and stays off with any debug option on.
  std::size_t stream_arenas = 0;
  // With stream arenas on, every arena's largest size class is the smaller of max_class_bytes and
  // this (a power of two >= 256): each arena keeps its own slabs of every class it has used, and a
  // 2 MiB slab of a class above 256 KiB holds a few blocks, so requests above it take the heap's
  // best fit instead. mlp_4stream's replay with 16 arenas: 1.070x its live peak with 256 KiB
  // against 1.184x with 1 MiB classes, at 35.5 against 30.4 ns per operation (lockfree, sim;
  // docs/results/2026-12-07-s46). Ignored without arenas and with fixed_block_bytes.
  std::size_t arena_max_class_bytes = std::size_t{256} << 10;

  // Bytes mapped at construction (rounded up to whole slabs); trim keeps them. With allow_growth =
  // false this is a fixed pool that never calls the backend for memory after start-up: slabs and
  // large requests share these bytes.
  std::size_t initial_reservation = 0;
  bool allow_growth = true;
  // Upper bound on device memory held (mapped bytes: slabs, large extents and free heap ranges);
  // 0 = no limit. A limit below the device's smallest mapping (a 2 MiB page; a slab_bytes chunk
  // without virtual memory) could never be met: the pool's constructor refuses it.
  std::size_t byte_limit = 0;
  // When memory that is reserved but not in use exceeds this, the slow paths give wholly free slabs
  // to the heap and unmap its wholly free pages (as cudaMemPoolAttrReleaseThreshold).
  std::size_t release_threshold = std::numeric_limits<std::size_t>::max();

  // Stream-ordered frees are batched: one event covers up to this many frees on one stream
  // (1 .. 2^23 - 1), small and large alike.
  std::size_t epoch_batch = 64;
  // Before the slow path maps new memory while stream-ordered frees wait behind closed epochs, it
  // polls those epochs (queries, no wait) for up to this long: a miss that has just closed the
  // epochs of other streams finds their events pending for the few microseconds the device takes to
  // reach them, and growing instead maps memory for good (cuMemCreate, cuMemMap and cuMemSetAccess
  // cost about 46 us per 2 MiB page on an H200). Only misses that would grow poll. 0: never.
  std::chrono::nanoseconds poll_before_growth{std::chrono::microseconds(20)};

  // The lock-free stacks' backoff (variants lockfree and stream).
  backoff_options backoff;

  // The tls variant: what all per-thread caches together may hold (capacity x block size).
  std::size_t cache_budget_bytes = std::size_t{256} << 20;
  // The tls variant's batch, the unit the transfer layer moves and a cache refills: about this many
  // bytes of blocks, clamp(tls_batch_bytes / block bytes, 2, 64) blocks. A thread's cache holds up
  // to 4 batches per class. Measured on the H200 host
  // (docs/results/archive/results-2026-12-01-handwritten.md, "Fifth H200 run"):
  // producer -> consumer at 16 threads 64 KiB 78-89, 128 KiB 93-104, 256 KiB 114 M pairs/s (4 KiB
  // blocks: batches of 16, 32, 64); larson and pair the same within noise.
  std::size_t tls_batch_bytes = std::size_t{256} << 10;
  // The tls variant's transfer layer, which moves whole batches between thread caches: a lock-free
  // moodycamel::ConcurrentQueue of batches per class, or a mutex per class over a vector of
  // batches (tcmalloc's transfer cache). Measured side by side on the H200 host (bench labels
  // tls and tls-mutex, docs/results/archive/results-2026-12-01-handwritten.md): producer ->
  // consumer at 16 threads 22-25 against 5.7-5.9 M pairs/s; larson within 3-7%; pair at 64
  // threads 3-6% faster, at 16 threads 16-18% slower.
  // The queue is the default: it serves blocks that move between threads, which is what the
  // layer is for.
  // A third layer, a lock-free stack of batch heads (tagged Treiber stacks of batch nodes, with a
  // second stack recycling empty nodes), is measured beside them (bench label tls-stack).
  enum class transfer_layer { concurrent_queue, mutex_batches, lockfree_stack };
  transfer_layer tls_transfer = transfer_layer::concurrent_queue;

  // Double-free detection by one atomic compare-and-swap per free. Off: a plain load and store,
  // which still catches sequential double frees but not two threads freeing one block at once.
  bool atomic_free_check = true;

  // Rejected frees (foreign, interior, double) are reported here; the pool is left unchanged.
  invalid_free_handler on_invalid_free = default_invalid_free_handler;
  void* invalid_free_context = nullptr;
  // Print a leak report to stderr when a pool is destroyed with live blocks.
  bool report_leaks = true;

  // Debugging aids, all off by default (cudapool/diagnostics.hpp, docs/debugging.md).
  debug_options debug;
};

// Throws std::invalid_argument naming the first option out of its range: what a pool's constructor
// throws for it. Tools and adapters that build options from their own input (stress's command
// line, the PyTorch plug-in's environment) call it to refuse bad input before any pool exists,
// rather than keep copies of the rules. One rule needs the backend and only a pool checks it: a
// nonzero byte_limit below the smallest mapping (the backend's page, or slab_bytes without virtual
// memory).
void validate(const pool_options& options);

}  // namespace cudapool
