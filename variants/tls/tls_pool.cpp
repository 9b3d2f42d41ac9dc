#include <cudapool/tls_pool.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <new>
#include <optional>

#include <concurrentqueue/concurrentqueue.h>

#include <cudapool/detail/tls/batch_stack.hpp>

namespace cudapool {

namespace {
std::atomic<std::uint64_t> next_pool_id{1};
}  // namespace

// The calling thread's caches, one per pool it used. Flushes them into their pools when the thread
// exits, unless the pool went first.
struct tls_thread_registry {
  struct entry {
    std::uint64_t id;
    std::shared_ptr<tls_free_lists::shared_state> shared;
    tls_free_lists::thread_cache* cache;
  };
  std::vector<entry> entries;

  ~tls_thread_registry() {
    tls_free_lists::last_ = {0, nullptr, nullptr};
    for (entry& e : entries) forget(e);
  }
  static void forget(entry& e) noexcept {
    {
      std::lock_guard lock(e.shared->mutex);
      if (tls_free_lists* lists = e.shared->lists) {
        {
          std::lock_guard held(e.cache->mutex);  // the owner (this thread) is in no fast path
          lists->flush_locked(*e.cache);
          e.cache->tokens.reset();  // while the queues exist
          lists->fold_moved(*e.cache);
        }
        auto& v = e.shared->caches;
        v.erase(std::remove(v.begin(), v.end(), e.cache), v.end());
      }
    }
    delete e.cache;
  }
};

namespace {
thread_local tls_thread_registry tls_registry;
}  // namespace

// Batches of one class. With the mutex layer, `batches` under `mutex`; with the queue layer, a
// moodycamel::ConcurrentQueue (lock-free, per-producer sub-queues); with the stack layer, batch
// nodes on a tagged Treiber stack (and `batches` for what finds no node: nothing is lost).
struct alignas(64) tls_free_lists::transfer {
  mutable std::mutex mutex;
  std::vector<batch> batches;  // GUARDED_BY(mutex)
  std::atomic<std::size_t> batches_size{0};  // batches.size(), for the stack layer's empty check
  std::optional<moodycamel::ConcurrentQueue<batch>> queue;
  std::unique_ptr<batch_stack<batch>> stack;
  // Blocks moved in and out by threads without their own count (drainers, growth, reclaim), and
  // the counts of unregistered caches: with every cache's `moved`, the blocks held here.
  std::atomic<std::int64_t> blocks{0};
};

void tls_free_lists::count_moved(transfer& t, thread_cache* owner, core::size_class c, std::int64_t n) noexcept {
  if (owner != nullptr) {
    std::atomic<std::int64_t>& m = owner->moved[c];
    m.store(m.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);  // the owner alone writes
  } else {
    t.blocks.fetch_add(n, std::memory_order_relaxed);
  }
}

// A thread's tokens for one class's queue: its own sub-queue to enqueue into (no per-operation
// lookup of the thread's implicit producer) and a consumer position that rotates over the
// sub-queues (instead of scanning all of them on every dequeue).
struct tls_free_lists::queue_tokens {
  std::optional<moodycamel::ProducerToken> producer;
  std::optional<moodycamel::ConsumerToken> consumer;
};

tls_free_lists::tls_free_lists(core::pool_core& core)
    : blocks_(core.blocks()),
      class_count_(core.classes().count()),
      cache_budget_(core.options().cache_budget_bytes),
      backoff_(core.options().backoff),
      id_(next_pool_id.fetch_add(1, std::memory_order_relaxed)),
      transfer_(std::make_unique<transfer[]>(class_count_)),
      shared_(std::make_shared<shared_state>()) {
  if (core.options().tls_transfer == pool_options::transfer_layer::concurrent_queue) {
    // No preallocated queue blocks (6 of 32 batches by default, 200 KiB per class): a class's
    // queue takes memory when batches of it first move.
    for (core::size_class c = 0; c < class_count_; ++c) transfer_[c].queue.emplace(0);
  }
  if (core.options().tls_transfer == pool_options::transfer_layer::lockfree_stack) {
    for (core::size_class c = 0; c < class_count_; ++c) transfer_[c].stack = std::make_unique<batch_stack<batch>>();
  }
  for (core::size_class c = 0; c < class_count_; ++c) {
    const std::size_t bytes = core.classes().bytes(c);
    block_bytes_.push_back(bytes);
    batch_.push_back(static_cast<std::uint32_t>(std::clamp<std::size_t>(core.options().tls_batch_bytes / bytes, 2, max_batch)));
  }
  shared_->lists = this;
}

tls_free_lists::~tls_free_lists() {
  // Threads that used the pool keep their (now detached) caches until they exit; the blocks in them
  // belong to memory the core is about to release.
  std::lock_guard lock(shared_->mutex);
  shared_->lists = nullptr;
  for (thread_cache* tc : shared_->caches) tc->tokens.reset();  // before the queues go
  shared_->caches.clear();
}

tls_free_lists::thread_cache* tls_free_lists::new_cache() const {
  auto tc = std::make_unique<thread_cache>();
  tc->bins = std::make_unique<bin[]>(class_count_);
  tc->moved = std::make_unique<std::atomic<std::int64_t>[]>(class_count_);
  std::size_t slots = 0;
  for (core::size_class c = 0; c < class_count_; ++c) slots += max_capacity_batches * batch_[c];
  tc->storage = std::make_unique<core::free_block[]>(slots);
  core::free_block* next = tc->storage.get();
  for (core::size_class c = 0; c < class_count_; ++c) {
    tc->bins[c].slots = next;
    next += max_capacity_batches * batch_[c];
  }
  return tc.release();
}

tls_free_lists::thread_cache* tls_free_lists::register_thread() noexcept {
  tls_thread_registry& r = tls_registry;
  for (auto& e : r.entries) {
    if (e.id == id_) {
      last_ = {id_, e.cache, e.cache->bins.get()};
      return e.cache;
    }
  }
  try {
    // Entries of pools destroyed since go first.
    std::erase_if(r.entries, [](tls_thread_registry::entry& e) {
      std::unique_lock lock(e.shared->mutex);
      if (e.shared->lists != nullptr) return false;
      lock.unlock();
      delete e.cache;
      return true;
    });
    std::unique_ptr<thread_cache> tc(new_cache());
    r.entries.push_back({id_, shared_, tc.get()});
    {
      std::lock_guard lock(shared_->mutex);
      shared_->caches.push_back(tc.get());
    }
    last_ = {id_, tc.get(), tc->bins.get()};
    return tc.release();
  } catch (const std::bad_alloc&) {
    return nullptr;  // the transfer layer serves this thread directly
  }
}

// ---- slow paths of the owner ------------------------------------------------------------------

core::free_block tls_free_lists::refill_in_op(thread_cache& tc, core::size_class c) noexcept {
  const core::free_block b = refill_locked(tc, c);
  end_op(tc);
  return b;  // an empty transfer layer: the pool's slow path reclaims, then asks before_growth
}

void tls_free_lists::overflow_in_op(thread_cache& tc, core::size_class c, core::free_block blk) noexcept {
  overflow_locked(tc, c, blk);
  end_op(tc);
}

core::free_block tls_free_lists::pop_first(core::size_class c) noexcept {
  thread_cache* tc = my_cache();
  return tc != nullptr ? pop_guarded(*tc, c) : pop_transfer(c);
}

void tls_free_lists::push_first(core::size_class c, core::free_block blk) noexcept {
  thread_cache* tc = my_cache();
  if (tc != nullptr) return push_guarded(*tc, c, blk);
  push_transfer(c, blk);
}

bool tls_free_lists::before_growth() noexcept {
  // At most one pass per idle_pass_interval: a pass costs a membarrier, and a cache counts as idle
  // when it saw no operation since the previous pass.
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  auto last = last_idle_pass_.load(std::memory_order_relaxed);
  if (now - last < idle_pass_interval_ticks ||
      !last_idle_pass_.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
    return false;
  }
  return drain_idle_caches() > 0;
}

core::free_block tls_free_lists::pop_guarded(thread_cache& tc, core::size_class c) noexcept {
  std::lock_guard lock(tc.mutex);
  ++tc.ops;
  return refill_locked(tc, c);  // the bin's top block, else a batch from the transfer layer
}

void tls_free_lists::push_guarded(thread_cache& tc, core::size_class c, core::free_block blk) noexcept {
  std::lock_guard lock(tc.mutex);
  bin& b = tc.bins[c];
  ++tc.ops;
  if (const std::uint32_t n = b.count.load(std::memory_order_relaxed); n < b.capacity) {
    b.slots[n] = blk;
    b.count.store(n + 1, std::memory_order_relaxed);
    return;
  }
  overflow_locked(tc, c, blk);
}

core::free_block tls_free_lists::refill_locked(thread_cache& tc, core::size_class c) noexcept {
  bin& b = tc.bins[c];
  if (b.count.load(std::memory_order_relaxed) > 0) {  // the guarded pop's hit (pop_guarded)
    const std::uint32_t n = b.count.load(std::memory_order_relaxed) - 1;
    b.count.store(n, std::memory_order_relaxed);
    return b.slots[n];
  }
  b.underflowed = true;
  const std::uint32_t size = batch_[c];
  if (b.capacity == 0) {  // slow start: a first batch of room, within the budget
    const std::size_t room = std::size_t{size} * block_bytes_[c];
    if (cache_capacity_bytes_.fetch_add(room, std::memory_order_relaxed) + room <= cache_budget_) {
      b.capacity = size;
    } else {
      cache_capacity_bytes_.fetch_sub(room, std::memory_order_relaxed);
      return pop_transfer(c);
    }
  }
  batch got;
  if (!take_batch(c, got, &tc)) return {};
  // A batch holds at most batch_[c] <= capacity blocks: all but the one returned fit.
  const std::uint32_t n = got.count - 1;
  std::copy_n(got.blocks, n, b.slots);
  b.count.store(n, std::memory_order_relaxed);
  return got.blocks[n];
}

void tls_free_lists::overflow_locked(thread_cache& tc, core::size_class c, core::free_block blk) noexcept {
  bin& b = tc.bins[c];
  const std::uint32_t size = batch_[c];
  const std::size_t room = std::size_t{size} * block_bytes_[c];
  const bool over_budget = cache_capacity_bytes_.load(std::memory_order_relaxed) > cache_budget_;
  // A first free into this class (slow start, as a first miss), or an overflow right after an
  // underflow (the thread's working set is bigger than the cache): one batch more room. Without
  // the first case a thread that only frees (a consumer) would send every block to the transfer
  // layer alone, and its producers would refill one block at a time.
  const bool grow = b.capacity == 0 || b.underflowed;
  if (grow && !over_budget && b.capacity + size <= max_capacity_batches * size &&
      cache_capacity_bytes_.fetch_add(room, std::memory_order_relaxed) + room <= cache_budget_) {
    b.capacity += size;
  } else {
    if (grow && !over_budget && b.capacity + size <= max_capacity_batches * size) {
      cache_capacity_bytes_.fetch_sub(room, std::memory_order_relaxed);  // the add above overshot
    }
    // About half, in whole batches: at least one batch (or all there is), so that the transfer
    // layer moves full batches and a refill takes one.
    const std::uint32_t n = b.count.load(std::memory_order_relaxed);
    const std::uint32_t half = (n / 2 + size - 1) / size * size;
    const std::uint32_t give = over_budget ? n : std::min(n, std::max(half, size));
    give_from_bin(c, b, give, &tc);
  }
  b.underflowed = false;
  const std::uint32_t n = b.count.load(std::memory_order_relaxed);
  if (n < b.capacity) {
    b.slots[n] = blk;
    b.count.store(n + 1, std::memory_order_relaxed);
  } else {
    push_transfer(c, blk);  // capacity 0: no cache for this class (budget)
  }
}

void tls_free_lists::give_from_bin(core::size_class c, bin& b, std::uint32_t n, thread_cache* owner) noexcept {
  const std::uint32_t count = b.count.load(std::memory_order_relaxed);
  n = std::min(n, count);
  put_blocks(c, b.slots + (count - n), n, owner);
  b.count.store(count - n, std::memory_order_relaxed);
}

void tls_free_lists::fold_moved(thread_cache& tc) noexcept {
  for (core::size_class c = 0; c < class_count_; ++c) {
    transfer_[c].blocks.fetch_add(tc.moved[c].exchange(0, std::memory_order_relaxed), std::memory_order_relaxed);
  }
}

void tls_free_lists::flush_locked(thread_cache& tc) noexcept {
  for (core::size_class c = 0; c < class_count_; ++c) {
    bin& b = tc.bins[c];
    give_from_bin(c, b, b.count.load(std::memory_order_relaxed));
    cache_capacity_bytes_.fetch_sub(std::size_t{b.capacity} * block_bytes_[c], std::memory_order_relaxed);
    b.capacity = 0;  // an idle or exiting thread's cache shrinks to nothing
    b.underflowed = false;
  }
}

// ---- the transfer layer -------------------------------------------------------------------------

tls_free_lists::queue_tokens* tls_free_lists::tokens_of(thread_cache* owner, core::size_class c) noexcept {
  if (owner == nullptr) return nullptr;
  if (!owner->tokens) {
    owner->tokens.reset(new (std::nothrow) queue_tokens[class_count_]);
    if (!owner->tokens) return nullptr;
  }
  return &owner->tokens[c];
}

bool tls_free_lists::take_batch(core::size_class c, batch& out, thread_cache* owner) noexcept {
  transfer& t = transfer_[c];
  if (t.queue) {
    queue_tokens* tok = tokens_of(owner, c);
    if (tok != nullptr && !tok->consumer) tok->consumer.emplace(*t.queue);  // allocates nothing
    if (!(tok != nullptr ? t.queue->try_dequeue(*tok->consumer, out) : t.queue->try_dequeue(out))) return false;
  } else if (!(t.stack && t.stack->take(out, backoff_))) {
    if (t.stack && t.batches_size.load(std::memory_order_relaxed) == 0) return false;
    std::lock_guard lock(t.mutex);
    if (t.batches.empty()) return false;
    out = t.batches.back();
    t.batches.pop_back();
    t.batches_size.store(t.batches.size(), std::memory_order_relaxed);
  }
  count_moved(t, owner, c, -static_cast<std::int64_t>(out.count));
  return true;
}

core::free_block tls_free_lists::pop_transfer(core::size_class c) noexcept {
  batch got;
  if (!take_batch(c, got)) return {};
  put_blocks(c, got.blocks, got.count - 1);
  return got.blocks[got.count - 1];
}

void tls_free_lists::push_transfer(core::size_class c, core::free_block blk) noexcept { put_blocks(c, &blk, 1); }

void tls_free_lists::put_blocks(core::size_class c, const core::free_block* blocks, std::size_t n,
                                thread_cache* owner) noexcept {
  const std::uint32_t size = batch_[c];
  transfer& t = transfer_[c];
  // Pieces of at most one batch, in order, from blocks[i].
  auto piece_at = [&](std::size_t i) {
    batch piece;
    piece.count = static_cast<std::uint32_t>(std::min<std::size_t>(size, n - i));
    std::copy_n(blocks + i, piece.count, piece.blocks);
    return piece;
  };
  std::size_t i = 0;  // blocks before i are in the layer
  if (t.queue) {
    queue_tokens* tok = tokens_of(owner, c);
    if (tok != nullptr && !tok->producer) {
      tok->producer.emplace(*t.queue);
      if (!tok->producer->valid()) tok->producer.reset();  // out of host memory: no token
    }
    const bool with_token = tok != nullptr && tok->producer;
    for (; i < n; i += size) {
      const batch piece = piece_at(i);
      if (!(with_token ? t.queue->enqueue(*tok->producer, piece) : t.queue->enqueue(piece))) break;
      count_moved(t, owner, c, piece.count);
    }
    if (i >= n) return;
    // Host memory exhausted: these blocks are not reachable again.
    std::fprintf(stderr, "cudapool: tls transfer layer out of host memory; %zu blocks lost\n", n - i);
    return;
  }
  if (t.stack) {
    for (; i < n; i += size) {
      if (!t.stack->put(piece_at(i), backoff_)) break;  // no node to be had: the rest goes to the vector
      count_moved(t, owner, c, std::min<std::size_t>(size, n - i));
    }
    if (i >= n) return;
  }
  std::lock_guard lock(t.mutex);
  try {
    t.batches.reserve(t.batches.size() + (n - i + size - 1) / size);
    for (std::size_t j = i; j < n; j += size) t.batches.push_back(piece_at(j));
    count_moved(t, owner, c, static_cast<std::int64_t>(n - i));
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "cudapool: tls transfer layer out of host memory; %zu blocks lost\n", n - i);
  }
  t.batches_size.store(t.batches.size(), std::memory_order_relaxed);
}

// The pool calls this from its slow paths (reclaim), never within one of the calling thread's
// operations: like push_guarded, the owner takes its cache's mutex. Through the transfer layer
// alone, every block of a one-thread stream-ordered replay's reclaimed epochs went queue -> batch
// -> the same thread's bin on its next miss: an enqueue, a dequeue, two counts and two copies per
// batch (take_batch, put_blocks, count_moved and the queue's enqueue were a fifth of tls's elided
// replay of cnn_varbatch on the sim). Growth's chains still go to the transfer layer whole.
void tls_free_lists::push_released(core::size_class c, core::block_chain chain) noexcept {
  if (last_.pool == id_ && chain.count > 0) {  // the calling thread's registered cache, if any
    thread_cache& tc = *last_.cache;
    std::lock_guard lock(tc.mutex);
    bin& b = tc.bins[c];
    if (b.underflowed && b.count.load(std::memory_order_relaxed) == 0) {
      std::uint32_t n = 0;
      const std::uint32_t take = std::min(b.capacity, batch_[c]);
      // The walk counts: the chain's tail link is not necessarily terminated.
      for (; n < take && chain.count > 0; --chain.count) {
        b.slots[n++] = {blocks_[chain.head].address(), chain.head};
        if (chain.count > 1) chain.head = blocks_[chain.head].next.load(std::memory_order_relaxed);
      }
      b.count.store(n, std::memory_order_relaxed);
    }
  }
  if (chain.count > 0) push_chain_transfer(c, chain);
}

void tls_free_lists::push_chain_transfer(core::size_class c, core::block_chain chain) noexcept {
  // The walk counts: the chain's tail link is not necessarily terminated.
  batch buffer;  // its slots uninitialized (batch says why)
  std::size_t n = 0;
  block_index x = chain.head;
  for (std::size_t left = chain.count; left > 0; --left) {
    buffer.blocks[n++] = {blocks_[x].address(), x};
    if (left > 1) x = blocks_[x].next.load(std::memory_order_relaxed);
    if (n == batch_[c] || left == 1) {
      put_blocks(c, buffer.blocks, n);
      n = 0;
    }
  }
}

void tls_free_lists::link(core::block_chain& chain, const core::free_block* blocks, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const block_index x = blocks[i].index;
    blocks_[x].next.store(chain.head, std::memory_order_relaxed);
    if (chain.empty()) chain.tail = x;
    chain.head = x;
    ++chain.count;
  }
}

// ---- drains -------------------------------------------------------------------------------------

void tls_free_lists::flush_thread_cache() noexcept {
  if (thread_cache* tc = my_cache()) {
    std::lock_guard lock(tc->mutex);
    flush_locked(*tc);
  }
}

void tls_free_lists::claim(thread_cache* const* caches, std::size_t n) noexcept {
  core::claim_handshakes(core::asymmetric_fences{asymmetric_}, n,
                         [caches](std::size_t i) -> core::owner_handshake& { return caches[i]->handshake; });
}

void tls_free_lists::unclaim(thread_cache& tc) noexcept {
  tc.handshake.unclaim();
  tc.mutex.unlock();
}

// Drainers hold at most this many cache mutexes at once (one heavy fence per group): bounded lock
// sets keep ThreadSanitizer's deadlock detector (64 locks per thread) and lock holds short.
constexpr std::size_t claim_group = 32;

std::size_t tls_free_lists::drain_idle_caches() noexcept {
  std::size_t drained = 0;
  std::lock_guard lock(shared_->mutex);
  const std::vector<thread_cache*>& caches = shared_->caches;
  for (std::size_t first = 0; first < caches.size(); first += claim_group) {
    thread_cache* held[claim_group];
    std::size_t n = 0;
    for (std::size_t i = first; i < std::min(caches.size(), first + claim_group); ++i) {
      if (caches[i]->mutex.try_lock()) held[n++] = caches[i];  // in its owner's slow path: not idle
    }
    claim(held, n);
    for (std::size_t i = 0; i < n; ++i) {
      thread_cache& tc = *held[i];
      if (tc.ops == tc.ops_seen) {
        for (core::size_class c = 0; c < class_count_; ++c) drained += tc.bins[c].count.load(std::memory_order_relaxed);
        flush_locked(tc);
      }
      tc.ops_seen = tc.ops;
      unclaim(tc);
    }
  }
  return drained;
}

core::block_chain tls_free_lists::take_all(core::size_class c) noexcept {
  core::block_chain all;
  {
    std::lock_guard lock(shared_->mutex);  // serialises drainers
    const std::vector<thread_cache*>& caches = shared_->caches;
    for (std::size_t first = 0; first < caches.size(); first += claim_group) {
      const std::size_t n = std::min(caches.size() - first, claim_group);
      for (std::size_t i = 0; i < n; ++i) caches[first + i]->mutex.lock();
      claim(&caches[first], n);
      for (std::size_t i = 0; i < n; ++i) {
        bin& b = caches[first + i]->bins[c];
        link(all, b.slots, b.count.load(std::memory_order_relaxed));
        b.count.store(0, std::memory_order_relaxed);
        unclaim(*caches[first + i]);
      }
    }
  }
  for (batch got; take_batch(c, got);) link(all, got.blocks, got.count);
  return all;
}

std::size_t tls_free_lists::free_blocks(core::size_class c) const noexcept {
  std::int64_t n = transfer_[c].blocks.load(std::memory_order_relaxed);
  {
    std::lock_guard lock(shared_->mutex);
    for (const thread_cache* tc : shared_->caches) n += tc->moved[c].load(std::memory_order_relaxed);
  }
  return n > 0 ? static_cast<std::size_t>(n) : 0;
}

std::size_t tls_free_lists::cached_blocks(core::size_class c) const noexcept {
  std::lock_guard lock(shared_->mutex);
  std::size_t n = 0;
  for (const thread_cache* tc : shared_->caches) n += tc->bins[c].count.load(std::memory_order_relaxed);
  return n;
}

void tls_free_lists::holdings(oom_report& report) const {
  std::lock_guard lock(shared_->mutex);
  std::uint64_t number = 0;
  for (const thread_cache* tc : shared_->caches) {
    ++number;
    oom_report::thread_cache_holding h{number, 0, 0};
    for (core::size_class c = 0; c < class_count_; ++c) {
      const std::size_t n = tc->bins[c].count.load(std::memory_order_relaxed);
      h.blocks += n;
      h.bytes += n * block_bytes_[c];
    }
    report.thread_caches.push_back(h);
  }
}

}  // namespace cudapool
